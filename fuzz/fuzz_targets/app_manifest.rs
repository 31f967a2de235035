#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svc_fuzzing::app_manifest(data));
