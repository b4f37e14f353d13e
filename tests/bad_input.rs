//! Hostile and malformed input: every case gets an error or a closed
//! connection, never a crash, and the server keeps serving others.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use testkit::{RawClient, TestServer};

fn connect(s: &TestServer) -> TcpStream {
    let c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    c
}

/// Reads whatever the server sends until it closes or goes quiet.
fn drain(c: &mut TcpStream) -> Vec<u8> {
    c.set_read_timeout(Some(Duration::from_secs(3))).expect("timeout");
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = c.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        if out.len() > 1 << 20 {
            break;
        }
    }
    out
}

fn alive(s: &TestServer) {
    assert_eq!(s.query("select 41 + 1"), "42", "server stopped serving; log:\n{}", s.log_text());
}

#[test]
fn malformed_startup_packets() {
    let s = TestServer::start();
    for packet in [
        vec![0x7f, 0xff, 0xff, 0xff],              // absurd length
        vec![0, 0, 0, 4],                          // too short
        vec![0, 0, 0, 8, 0, 2, 0, 0],              // protocol 2.0
        vec![0, 0, 0, 16, 0, 3, 0, 0, b'u', b's'], // truncated, then close
        vec![0, 0, 0, 9, 0, 3, 0, 0, 0],           // no user
    ] {
        let mut c = connect(&s);
        c.write_all(&packet).expect("write");
        let _ = c.shutdown(std::net::Shutdown::Write);
        let _ = drain(&mut c);
        alive(&s);
    }
}

#[test]
fn malformed_messages_after_login() {
    let s = TestServer::start();
    // Unknown message type: error and close.
    let mut c = RawClient::connect(s.port);
    c.send(b'?', b"");
    let got = drain(&mut c.stream);
    assert!(got.first() == Some(&b'E'), "expected an ErrorResponse, got {got:?}");
    assert!(String::from_utf8_lossy(&got).contains("08P01"));
    alive(&s);

    // Invalid UTF-8 in a query: ErrorResponse 22021, connection stays usable.
    let mut c = RawClient::connect(s.port);
    c.send(b'Q', b"select '\xff\xfe'\0");
    let got = drain(&mut c.stream);
    assert!(String::from_utf8_lossy(&got).contains("22021"), "{got:?}");
    alive(&s);

    // Absurd length: closed.
    let mut c = RawClient::connect(s.port);
    let _ = c.stream.write_all(&[b'Q', 0x7f, 0xff, 0xff, 0xff]);
    let _ = drain(&mut c.stream);
    alive(&s);

    // Truncated message, then the client vanishes.
    let mut c = RawClient::connect(s.port);
    let _ = c.stream.write_all(&[b'Q', 0, 0, 0, 100, b's', b'e']);
    drop(c);
    alive(&s);

    // Bind with a parameter length beyond the message.
    let mut c = RawClient::connect(s.port);
    c.send(b'P', b"\0select $1::int\0\0\0");
    let mut bind = b"\0\0\0\0\0\x01".to_vec();
    bind.extend_from_slice(&i32::MAX.to_be_bytes());
    bind.extend_from_slice(b"12");
    c.send(b'B', &bind);
    c.send(b'S', b"");
    let got = drain(&mut c.stream);
    assert!(String::from_utf8_lossy(&got).contains("08P01"), "{got:?}");
    alive(&s);
}

#[test]
fn hostile_sql() {
    let s = TestServer::start();
    let deep = format!("select {}1{}", "(".repeat(10_000), ")".repeat(10_000));
    let out = s.psql_stdin(&deep);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stack depth") || err.contains("syntax"), "{err}");
    alive(&s);

    let long_in = format!("select {}", vec!["1"; 20_000].join(" + "));
    let out = s.psql_stdin(&long_in);
    assert!(out.status.success() || !String::from_utf8_lossy(&out.stderr).is_empty());
    alive(&s);

    let big = "x".repeat(10 << 20);
    let out = s.psql_stdin(&format!("select length('{big}');"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        (10 << 20).to_string(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    alive(&s);

    let out = s.psql(&["-Atc", "select * from generate_series(1, 100000000000)"]);
    assert!(!out.status.success(), "an enormous series must be refused, not exhaust memory");
    alive(&s);
}
