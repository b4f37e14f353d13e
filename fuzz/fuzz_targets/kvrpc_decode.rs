//! KV RPC frame decoding must never panic: any bytes in, a message or an
//! error out (the KV server then closes that one connection). Covers both
//! directions, the PROXY header the SQL process reads, and framing of a
//! byte stream with absurd length prefixes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokio_util::codec::Decoder;

fuzz_target!(|data: &[u8]| {
    let _ = kvrpc::proto::decode::<kvrpc::proto::ToServer>(data);
    let _ = kvrpc::proto::decode::<kvrpc::proto::ToClient>(data);
    let _ = wire::proxy_header::decode(data);
    let mut codec = kvrpc::proto::codec();
    let mut buf = bytes::BytesMut::from(data);
    while let Ok(Some(frame)) = codec.decode(&mut buf) {
        let _ = kvrpc::proto::decode::<kvrpc::proto::ToServer>(&frame);
    }
});
