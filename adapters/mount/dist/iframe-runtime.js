// placeholder: built by adapters/mount (npm run build)
