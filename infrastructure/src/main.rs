fn main() -> std::process::ExitCode {
    svc::cli::run()
}
