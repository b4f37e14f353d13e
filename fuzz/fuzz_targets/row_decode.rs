//! Stored-row and key decoding must reject corrupt bytes, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sqltypes::DataType;

fuzz_target!(|data: &[u8]| {
    let types = [DataType::Int4, DataType::Text, DataType::Numeric(None), DataType::Float8, DataType::Bytea];
    let _ = sqltypes::rowcodec::decode_row(data, &types);
    let _ = sqltypes::keycode::decode_key(&mut &data[..], &types);
});
