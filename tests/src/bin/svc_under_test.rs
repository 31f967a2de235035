//! The `svc` binary, built inside the test package so black-box tests can spawn it as a real
//! process (`CARGO_BIN_EXE_svc-under-test`) without a second build of anything.

fn main() -> std::process::ExitCode {
    svc::cli::run()
}
