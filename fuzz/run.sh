#!/usr/bin/env bash
# Bounded fuzzing (the CI step; docs/fuzzing.md): builds every cargo-fuzz target once with nightly,
# then runs each for FUZZ_SECONDS (default 20) from its committed corpus. Fails on a crash, a
# timeout (one input over 10 s) or an out-of-memory; the input is left in fuzz/artifacts/<target>/.
# New corpus entries go to a scratch directory, so the committed corpus stays as committed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-20}"
# No sanitizer: the workspace forbids `unsafe`, and AddressSanitizer doubles the build of oxc and
# jsonschema for what libFuzzer's own checks (panics, stack overflows, timeouts, RSS) already see.
# FUZZ_SANITIZER=address runs the same targets under ASan.
sanitizer="${FUZZ_SANITIZER:-none}"
flags=(--sanitizer "$sanitizer")

if ! cargo +nightly --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

started=$SECONDS
cargo +nightly fuzz build "${flags[@]}"
echo "fuzz build: $((SECONDS - started)) s"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in $(cargo +nightly fuzz list); do
    mkdir -p "$scratch/$target"
    started=$SECONDS
    # -max_len covers the largest committed seed (a 64 KB `$ref` chain) without truncating it.
    cargo +nightly fuzz run "${flags[@]}" "$target" "$scratch/$target" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        2>"$scratch/$target.log" || {
        tail -n 40 "$scratch/$target.log" >&2
        echo "fuzz target $target failed; its input is in fuzz/artifacts/$target/" >&2
        exit 1
    }
    grep -E '^stat::number_of_executed_units|^Done' "$scratch/$target.log" | tr '\n' ' '
    echo "$target: $((SECONDS - started)) s"
done
