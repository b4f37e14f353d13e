//! Frontend message decoding must never panic: any bytes in, a message or
//! an error out.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((&tag, body)) = data.split_first() {
        let _ = wire::codec::decode_message(tag, body);
    }
    let _ = wire::codec::decode_startup(data);
});
