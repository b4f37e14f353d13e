//! The wire protocol over a real TCP socket, driven by hand-written frontend
//! messages against the echo backend in `support`. Each test starts its own
//! server on 127.0.0.1:0.

mod support;

use std::io::Write;
use std::sync::atomic::Ordering;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use support::{cstr, startup_body, summary, Client, TestServer, PASSWORD};

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn ssl_and_gss_requests_are_refused_and_startup_continues() {
    let s = TestServer::start();
    let mut c = Client::raw(s.port);
    for code in [80_877_103u32, 80_877_104] {
        c.send_startup(&code.to_be_bytes());
        let mut answer = [0u8; 1];
        std::io::Read::read_exact(&mut c.s, &mut answer).expect("answer");
        assert_eq!(&answer, b"N");
    }
    let got = c.login(&[("user", "postgres"), ("application_name", "t")]);
    assert_eq!(got[0], "R 0");
    assert!(got.contains(&"S server_version=16.0".to_string()), "{got:?}");
    assert!(got.contains(&"K".to_string()));
    assert_eq!(got.last().map(String::as_str), Some("Z I"));
}

#[test]
fn login_errors_are_fatal() {
    let s = TestServer::start();
    let got = Client::raw(s.port).login(&[("database", "x")]);
    assert_eq!(got, strs(&["FATAL 28000 no PostgreSQL user name specified in startup packet"]));
    let got = Client::raw(s.port).login(&[("user", "nobody")]);
    assert_eq!(got, strs(&["FATAL 28000 role \"nobody\" does not exist"]));
    let got = Client::raw(s.port).login(&[("user", "u"), ("database", "nodb")]);
    assert_eq!(got, strs(&["R 0", "FATAL 3D000 database \"nodb\" does not exist"]));
    let mut c = Client::raw(s.port);
    c.send_startup(&startup_body(2 << 16, &[("user", "u")]));
    let got = c.until_ready();
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with("FATAL 0A000 unsupported frontend protocol 2.0"), "{got:?}");
}

#[test]
fn newer_minor_version_gets_negotiate_protocol_version() {
    let s = TestServer::start();
    let mut c = Client::raw(s.port);
    c.send_startup(&startup_body(3 << 16 | 2, &[("user", "u"), ("_pq_.feature", "on")]));
    let (tag, body) = c.recv().expect("NegotiateProtocolVersion");
    assert_eq!(tag, b'v');
    assert_eq!(&body[..8], &[0, 3, 0, 0, 0, 0, 0, 1]);
    assert_eq!(&body[8..], b"_pq_.feature\0");
    assert_eq!(c.until_ready().last().map(String::as_str), Some("Z I"));
}

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = <HmacSha256 as Mac>::new_from_slice(key).expect("any key length");
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// Runs a client-side SCRAM-SHA-256 exchange; returns the server's messages
/// after the client-final message, and whether the server signature checked.
fn scram_login(port: u16, password: &str) -> (Vec<String>, bool) {
    let mut c = Client::raw(port);
    c.send_startup(&startup_body(196_608, &[("user", "scram")]));
    let (tag, body) = c.recv().expect("AuthenticationSASL");
    assert_eq!((tag, &body[..4]), (b'R', &10i32.to_be_bytes()[..]));
    assert_eq!(&body[4..], b"SCRAM-SHA-256\0\0");

    let bare = "n=,r=rOprNGfwEbeRWgbNEkqO";
    let first = format!("n,,{bare}");
    let mut b = Vec::new();
    cstr(&mut b, "SCRAM-SHA-256");
    b.extend_from_slice(&(first.len() as i32).to_be_bytes());
    b.extend_from_slice(first.as_bytes());
    c.send(b'p', &b);

    let (tag, body) = c.recv().expect("SASLContinue");
    assert_eq!((tag, &body[..4]), (b'R', &11i32.to_be_bytes()[..]));
    let server_first = String::from_utf8(body[4..].to_vec()).expect("utf8");
    let attr = |k: &str| {
        server_first.split(',').find_map(|p| p.strip_prefix(k)).expect("attribute").to_string()
    };
    let (nonce, salt, iters) = (attr("r="), attr("s="), attr("i="));
    assert!(nonce.starts_with("rOprNGfwEbeRWgbNEkqO") && nonce.len() > 20);
    let mut salted = [0u8; 32];
    let salt = B64.decode(salt).expect("salt");
    let iters = iters.parse().expect("iterations");
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), &salt, iters, &mut salted);
    let client_key = hmac(&salted, b"Client Key");
    let stored_key = Sha256::digest(&client_key);
    let without_proof = format!("c=biws,r={nonce}");
    let auth_message = format!("{bare},{server_first},{without_proof}");
    let sig = hmac(&stored_key, auth_message.as_bytes());
    let proof: Vec<u8> = client_key.iter().zip(&sig).map(|(a, b)| a ^ b).collect();
    c.send(b'p', format!("{without_proof},p={}", B64.encode(proof)).as_bytes());

    let Some((tag, body)) = c.recv() else { return (vec!["EOF".into()], false) };
    if tag != b'R' {
        return (vec![summary(tag, &body)], false);
    }
    assert_eq!(&body[..4], &12i32.to_be_bytes());
    let expected = hmac(&hmac(&salted, b"Server Key"), auth_message.as_bytes());
    let verified = body[4..] == *format!("v={}", B64.encode(expected)).as_bytes();
    (c.until_ready(), verified)
}

#[test]
fn scram_login_with_right_and_wrong_password() {
    let s = TestServer::start();
    let (got, verified) = scram_login(s.port, PASSWORD);
    assert!(verified, "server signature");
    assert_eq!(got[0], "R 0");
    assert_eq!(got.last().map(String::as_str), Some("Z I"));

    let (got, _) = scram_login(s.port, "wrong");
    assert_eq!(got, strs(&["FATAL 28P01 password authentication failed for user \"scram\""]));
}

#[test]
fn simple_query_with_several_statements() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    assert_eq!(
        c.query("select 1; rows 2"),
        strs(&["T echo", "D select 1", "C SELECT 1", "T echo", "D 1", "D 2", "C SELECT 2", "Z I"])
    );
    // An error stops the query string; the rest is not run.
    assert_eq!(
        c.query("select 1; fail; select 2"),
        strs(&["T echo", "D select 1", "C SELECT 1", "T echo", "ERROR 22012", "Z I"])
    );
    assert_eq!(c.query(""), strs(&["I", "Z I"]));
    assert_eq!(c.query("syntax error x"), strs(&["ERROR 42601", "Z I"]));
    assert_eq!(c.query("begin"), strs(&["C BEGIN", "Z T"]));
    assert_eq!(c.query("fail"), strs(&["T echo", "ERROR 22012", "Z E"]));
    assert_eq!(c.query("select 1"), strs(&["T echo", "ERROR 25P02", "Z E"]));
    assert_eq!(c.query("commit"), strs(&["C COMMIT", "Z I"]));
    assert_eq!(c.query("notice"), strs(&["N 01000", "C NOTICE", "Z I"]));
    assert_eq!(c.query("set"), strs(&["C SET", "S x=on", "Z I"]));
}

#[test]
fn extended_protocol_with_row_limit_and_portal_suspended() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    c.parse("five", "rows 5");
    c.describe(b'S', "five");
    c.bind("p", "five", &[]);
    c.describe(b'P', "p");
    c.execute("p", 2);
    c.execute("p", 2);
    c.execute("p", 2);
    assert_eq!(
        c.sync(),
        strs(&[
            "1",
            "t",
            "T echo",
            "2",
            "T echo",
            "D 1",
            "D 2",
            "s",
            "D 3",
            "D 4",
            "s",
            "D 5",
            "C SELECT 1",
            "Z I"
        ])
    );
    // Parameters, the unnamed statement and portal, and NoData.
    c.parse("", "echo $1 $2");
    c.bind("", "", &["a", "b"]);
    c.execute("", 0);
    c.parse("", "begin");
    c.describe(b'S', "");
    c.bind("", "", &[]);
    c.execute("", 0);
    assert_eq!(
        c.sync(),
        strs(&["1", "2", "D a,b", "C SELECT 1", "1", "t", "n", "2", "C BEGIN", "Z T"])
    );
    // A named portal outlives Sync inside a transaction block.
    c.bind("kept", "five", &[]);
    c.execute("kept", 4);
    assert_eq!(c.sync(), strs(&["2", "D 1", "D 2", "D 3", "D 4", "s", "Z T"]));
    c.execute("kept", 0);
    assert_eq!(c.sync(), strs(&["D 5", "C SELECT 1", "Z T"]));
    // Close, then using the closed names fails.
    let mut b = vec![b'S'];
    cstr(&mut b, "five");
    c.send(b'C', &b);
    assert_eq!(c.sync(), strs(&["3", "Z T"]));
    c.bind("", "five", &[]);
    assert_eq!(c.sync(), strs(&["ERROR 26000", "Z T"]));
}

#[test]
fn after_an_error_messages_are_skipped_until_sync() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    c.parse("s", "echo $1");
    c.bind("", "s", &[]); // wrong parameter count: 08P01
    c.execute("", 0); // skipped
    c.parse("t", "select 1"); // skipped
    assert_eq!(c.sync(), strs(&["1", "ERROR 08P01", "Z I"]));
    c.bind("", "t", &[]); // "t" was never parsed
    assert_eq!(c.sync(), strs(&["ERROR 26000", "Z I"]));
    c.execute("nope", 0);
    assert_eq!(c.sync(), strs(&["ERROR 34000", "Z I"]));
    c.parse("s", "select 2");
    assert_eq!(c.sync(), strs(&["ERROR 42P05", "Z I"]));
    c.parse("", "select 1; select 2");
    assert_eq!(c.sync(), strs(&["ERROR 42601", "Z I"]));
    c.parse("", "fail");
    c.bind("", "", &[]);
    c.execute("", 0);
    assert_eq!(c.sync(), strs(&["1", "2", "ERROR 22012", "Z I"]));
}

#[test]
fn an_extended_error_is_flushed_without_waiting_for_sync() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    c.parse("", "syntax error x");
    c.send(b'H', &[]);
    let (tag, body) = c.recv().expect("error before Sync");
    assert_eq!(summary(tag, &body), "ERROR 42601");
    // Flush is skipped while in error: nothing more until Sync.
    assert_eq!(c.sync(), strs(&["Z I"]));
}

#[test]
fn bind_format_codes_follow_the_0_1_n_rule() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    c.parse("s", "echo $1 $2");
    // Three parameter formats for two parameters.
    let mut b = Vec::new();
    cstr(&mut b, "");
    cstr(&mut b, "s");
    b.extend_from_slice(&3i16.to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&2i16.to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    c.send(b'B', &b);
    assert_eq!(c.sync(), strs(&["1", "ERROR 08P01", "Z I"]));
    // One format for both, NULLs, and one binary result format.
    let mut b = Vec::new();
    cstr(&mut b, "");
    cstr(&mut b, "s");
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&2i16.to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&1i32.to_be_bytes());
    b.push(b'x');
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    c.send(b'B', &b);
    c.describe(b'P', "");
    c.execute("", 0);
    c.send(b'S', &[]);
    let (tag, _) = c.recv().expect("BindComplete");
    assert_eq!(tag, b'2');
    let (tag, body) = c.recv().expect("RowDescription");
    assert_eq!(tag, b'T');
    assert_eq!(&body[body.len() - 2..], &[0, 1], "binary result format");
    assert_eq!(c.until_ready(), strs(&["D NULL,x", "C SELECT 1", "Z I"]));
}

#[test]
fn cancel_request_on_a_second_connection_cancels_the_running_statement() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    let mut b = Vec::new();
    cstr(&mut b, "sleep");
    c.send(b'Q', &b);
    // The statement may not have started when the first request arrives (a
    // cancel reaches only a running statement), so retry until it lands.
    c.s.set_read_timeout(Some(std::time::Duration::from_millis(100))).expect("timeout");
    let mut first = None;
    for _ in 0..100 {
        let mut k = Client::raw(s.port);
        let mut body = 80_877_102u32.to_be_bytes().to_vec();
        body.extend_from_slice(&c.key.0.to_be_bytes());
        body.extend_from_slice(&c.key.1.to_be_bytes());
        k.send_startup(&body);
        assert!(k.closed(), "CancelRequest gets no answer");
        let mut head = [0u8; 1];
        if std::io::Read::read_exact(&mut c.s, &mut head).is_ok() {
            first = Some(head[0]);
            break;
        }
    }
    assert_eq!(first, Some(b'T'));
    c.s.set_read_timeout(Some(std::time::Duration::from_secs(10))).expect("timeout");
    let mut rest = [0u8; 4];
    std::io::Read::read_exact(&mut c.s, &mut rest).expect("length");
    let mut body = vec![0u8; u32::from_be_bytes(rest) as usize - 4];
    std::io::Read::read_exact(&mut c.s, &mut body).expect("RowDescription");
    assert_eq!(c.until_ready(), strs(&["ERROR 57014", "Z I"]));
    assert_eq!(s.stats.cancelled.load(Ordering::SeqCst), 1);
    // The connection still works.
    assert_eq!(c.query("select 1"), strs(&["T echo", "D select 1", "C SELECT 1", "Z I"]));
}

#[test]
fn a_client_that_disconnects_mid_statement_cancels_it() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    let mut b = Vec::new();
    cstr(&mut b, "sleep");
    c.send(b'Q', &b);
    drop(c);
    assert!(s.eventually(|st| st.cancelled.load(Ordering::SeqCst) == 1));
    assert!(s.eventually(|st| st.dropped.load(Ordering::SeqCst) == 1));
    Client::connect(s.port);
}

#[test]
fn copy_from_stdin() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    let mut b = Vec::new();
    cstr(&mut b, "copy; select after");
    c.send(b'Q', &b);
    let (tag, body) = c.recv().expect("CopyInResponse");
    assert_eq!((tag, body), (b'G', vec![0, 0, 1, 0, 0]));
    // Many small messages (pgbench -i sends one per row), a Flush and a Sync
    // (ignored during COPY), then CopyDone; the next statement still runs.
    let mut batch = Vec::new();
    for i in 0..10_000 {
        let line = format!("{i}\n");
        batch.push(b'd');
        batch.extend_from_slice(&((line.len() + 4) as u32).to_be_bytes());
        batch.extend_from_slice(line.as_bytes());
    }
    c.s.write_all(&batch).expect("copy data");
    c.send(b'H', &[]);
    c.send(b'S', &[]);
    c.send(b'c', &[]);
    assert_eq!(
        c.until_ready(),
        strs(&["C COPY 10000", "T echo", "D select after", "C SELECT 1", "Z I"])
    );

    // Bad data fails at CopyDone; CopyFail fails with the client's message.
    c.send(b'Q', b"copy\0");
    assert_eq!(c.recv().map(|m| m.0), Some(b'G'));
    c.send(b'd', b"bad\n");
    c.send(b'd', b"more\n");
    c.send(b'c', &[]);
    assert_eq!(c.until_ready(), strs(&["ERROR 22P04", "Z I"]));
    c.send(b'Q', b"copy\0");
    assert_eq!(c.recv().map(|m| m.0), Some(b'G'));
    c.send(b'f', b"stop\0");
    assert_eq!(c.until_ready(), strs(&["ERROR 57014", "Z I"]));
    // An unexpected message type during COPY is a protocol violation.
    c.send(b'Q', b"copy\0");
    assert_eq!(c.recv().map(|m| m.0), Some(b'G'));
    c.send(b'Q', b"select 1\0");
    assert_eq!(c.until_ready(), strs(&["ERROR 08P01", "Z I"]));
}

#[test]
fn terminate_and_fatal_session_errors_close_the_connection() {
    let s = TestServer::start();
    let mut c = Client::connect(s.port);
    c.send(b'X', &[]);
    assert!(c.closed());
    let mut c = Client::connect(s.port);
    assert_eq!(c.query("fatal"), strs(&["T echo", "FATAL XX000 fatal error"]));
    assert!(c.closed());
}

/// Each malformed input gets an error or a close, and never disturbs the
/// server: a fresh connection works after all of them.
#[test]
fn malformed_messages_get_an_error_or_close_and_the_server_keeps_serving() {
    let s = TestServer::start();
    let mut others = Client::connect(s.port);

    // Length below 4.
    let mut c = Client::connect(s.port);
    c.s.write_all(&[b'Q', 0, 0, 0, 2]).expect("write");
    assert_eq!(c.until_ready(), strs(&["FATAL 08P01 invalid message length 2"]));
    assert!(c.closed());
    // Length above 1 GiB: rejected from the header, nothing allocated.
    let mut c = Client::connect(s.port);
    c.s.write_all(&[b'Q', 0x7f, 0xff, 0xff, 0xff]).expect("write");
    assert_eq!(c.until_ready().len(), 1);
    assert!(c.closed());
    // Unknown message type.
    let mut c = Client::connect(s.port);
    c.send(b'!', &[]);
    assert_eq!(c.until_ready(), strs(&["FATAL 08P01 invalid frontend message type 33"]));
    assert!(c.closed());
    // Truncated message, then the client goes away.
    let mut c = Client::connect(s.port);
    c.s.write_all(&[b'Q', 0, 0, 0, 100, b's']).expect("write");
    c.s.shutdown(std::net::Shutdown::Write).expect("shutdown");
    assert!(c.closed());
    // Invalid UTF-8 in a query: an ERROR, and the connection goes on.
    let mut c = Client::connect(s.port);
    c.send(b'Q', b"\xff\xfe\0");
    assert_eq!(c.until_ready(), strs(&["ERROR 22021", "Z I"]));
    // A Bind whose parameter runs past the end of the message.
    let mut b = Vec::new();
    cstr(&mut b, "");
    cstr(&mut b, "");
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&i32::MAX.to_be_bytes());
    c.send(b'B', &b);
    assert_eq!(c.sync(), strs(&["ERROR 08P01", "Z I"]));
    // Startup packets: too long, too short, garbage.
    for len in [100_000u32, 3] {
        let mut c = Client::raw(s.port);
        c.s.write_all(&len.to_be_bytes()).expect("write");
        assert_eq!(c.until_ready(), strs(&["FATAL 08P01 invalid length of startup packet"]));
    }
    let mut c = Client::raw(s.port);
    c.send_startup(&[0, 3, 0, 0, b'u', b's']);
    assert_eq!(c.until_ready(), strs(&["FATAL 08P01 invalid string in message"]));
    // Password message after login.
    let mut c = Client::connect(s.port);
    c.send(b'p', b"secret\0");
    assert_eq!(c.until_ready().len(), 1);
    assert!(c.closed());

    assert_eq!(others.query("still here"), strs(&["T echo", "D still here", "C SELECT 1", "Z I"]));
    assert_eq!(Client::connect(s.port).query("x"), strs(&["T echo", "D x", "C SELECT 1", "Z I"]));
}

#[test]
fn graceful_shutdown_ends_idle_connections_with_57p01() {
    let mut s = TestServer::start();
    let mut c = Client::connect(s.port);
    assert!(s.shutdown(), "serve_until returned");
    assert_eq!(
        c.until_ready(),
        strs(&["FATAL 57P01 terminating connection due to administrator command"])
    );
    assert!(std::net::TcpStream::connect(("127.0.0.1", s.port)).is_err());
}
