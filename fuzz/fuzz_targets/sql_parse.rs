//! The SQL entry point (splitting and parsing) must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = sql::parse::parse(s);
    }
});
