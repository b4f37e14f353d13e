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
        vec![0, 0, 0, 7, 0, 3, 0],                 // shorter than 8
        vec![0x40, 0, 0, 1, 0, 3, 0, 0],           // 1 GiB + 1
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

    // A 1 GiB + 1 length: refused without allocating it, then closed.
    let mut c = RawClient::connect(s.port);
    let _ = c.stream.write_all(&[b'Q', 0x40, 0, 0, 1, b's']);
    let _ = drain(&mut c.stream);
    alive(&s);

    // A length below the 4 bytes of the length field itself.
    let mut c = RawClient::connect(s.port);
    let _ = c.stream.write_all(&[b'Q', 0, 0, 0, 2]);
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

/// Sends `sql` on a fresh raw connection: `Ok(codes)` of the errors before
/// ReadyForQuery, or `Err` if the server closed the connection.
fn raw_outcome(s: &TestServer, sql: &str) -> std::io::Result<Vec<String>> {
    let mut c = RawClient::connect(s.port);
    c.query(sql);
    c.try_until_ready()
}

#[test]
fn hostile_sql() {
    let s = TestServer::start();
    // Deep nesting: "statement too complex" (54001, stack depth), a syntax
    // error, PostgreSQL's parser "memory exhausted" (53200), or a clean close.
    let deep = format!("select {}1{}", "(".repeat(10_000), ")".repeat(10_000));
    match raw_outcome(&s, &deep) {
        Ok(codes) => assert!(
            codes.len() == 1 && ["54001", "42601", "53200"].contains(&codes[0].as_str()),
            "deep nesting: expected one error 54001/42601/53200, got {codes:?}"
        ),
        Err(e) => eprintln!("deep nesting closed the connection: {e}"),
    }
    alive(&s);
    let deep_not = format!("select {}true", "not ".repeat(50_000));
    if let Ok(codes) = raw_outcome(&s, &deep_not) {
        assert!(codes.len() <= 1, "{codes:?}");
    }
    alive(&s);

    let long_in = format!("select {}", vec!["1"; 20_000].join(" + "));
    let out = s.psql_stdin(&long_in);
    assert!(out.status.success() || !String::from_utf8_lossy(&out.stderr).is_empty());
    alive(&s);

    // A 10 MB literal works (or fails cleanly; PostgreSQL answers).
    let big = "x".repeat(10 << 20);
    let out = s.psql_stdin(&format!("select length('{big}');"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        (10 << 20).to_string(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    alive(&s);

    // An enormous result must fail, not exhaust memory or disk. Strata refuses
    // it outright; PostgreSQL would spill it to temp files, so there limits
    // make it fail the same way.
    let limits = if s.is_postgres() {
        "set statement_timeout = '5s'; set temp_file_limit = '100MB';"
    } else {
        ""
    };
    let out =
        s.psql_stdin(&format!("{limits}\nselect count(*) from generate_series(1, 100000000000);"));
    assert!(
        !String::from_utf8_lossy(&out.stderr).is_empty(),
        "an enormous series must be refused: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    alive(&s);
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Random frontend messages after login, with valid framing (so the server
/// must parse each body) and with each real message type. Every case ends
/// in an error, a ReadyForQuery or a close; the server must survive all.
#[test]
fn random_messages_after_login() {
    let s = TestServer::start();
    let mut noise = Noise(0x05ee_d0f5_747a);
    let types = [b'Q', b'P', b'B', b'D', b'E', b'C', b'H', b'S', b'F', b'd', b'c', b'f', b'p'];
    for round in 0..120 {
        let mut c = RawClient::connect(s.port);
        for _ in 0..3 {
            let tag = types[(noise.next() % types.len() as u64) as usize];
            let len = (noise.next() % 64) as usize;
            let mut body = noise.bytes(len);
            // Sometimes make it look more like a real message: NUL-terminated
            // strings and small counts.
            if round % 2 == 0 {
                body.iter_mut().step_by(5).for_each(|b| *b = 0);
            }
            let mut m = vec![tag];
            m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
            m.extend_from_slice(&body);
            // The server may already have closed the connection.
            let _ = c.stream.write_all(&m);
        }
        let _ = c.stream.write_all(&[b'S', 0, 0, 0, 4]);
        // Until ReadyForQuery, a close, or 5 s of silence.
        c.stream.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        let _ = c.try_until_ready();
    }
    alive(&s);
}

/// Random bytes as a startup packet with a plausible length.
#[test]
fn random_startup_packets() {
    let s = TestServer::start();
    let mut noise = Noise(0xdead_beef_cafe);
    for round in 0..120 {
        let len = 8 + (noise.next() % 200) as usize;
        let mut packet = (len as u32).to_be_bytes().to_vec();
        let mut body = noise.bytes(len - 4);
        if round % 3 == 0 {
            // Protocol 3.0 with garbage parameters.
            body[..4].copy_from_slice(&196608u32.to_be_bytes());
        }
        packet.extend_from_slice(&body);
        let mut c = connect(&s);
        let _ = c.write_all(&packet);
        let _ = drain(&mut c);
    }
    alive(&s);
}
