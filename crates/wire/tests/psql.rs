//! The real `psql` client against the echo backend in `support`: libpq's
//! startup, SCRAM, simple query and COPY code paths, over TCP and the unix
//! socket. Skipped (with a note on stderr) where psql is not installed.

mod support;

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{TestServer, PASSWORD};

/// Runs psql with `args` (plus -X -A -t) against `host`, feeding `stdin`,
/// killed after 20 seconds; None when psql is not installed.
fn psql(
    host: &str,
    port: u16,
    user: &str,
    password: &str,
    args: &[&str],
    stdin: &str,
) -> Option<Output> {
    let port = port.to_string();
    let mut child = match Command::new("psql")
        .args(["-X", "-A", "-t", "-h", host, "-p", &port, "-U", user, "-d", "postgres"])
        .args(args)
        .env("PGPASSWORD", password)
        .env("PGCONNECT_TIMEOUT", "10")
        .env_remove("PGSERVICE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("psql not installed; skipping");
            return None;
        }
        Err(e) => panic!("starting psql: {e}"),
    };
    let mut input = child.stdin.take().expect("piped stdin");
    input.write_all(stdin.as_bytes()).expect("psql stdin");
    drop(input);
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().expect("psql output"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn psql_select_over_tcp_and_unix_socket() {
    let s = TestServer::start();
    let Some(out) = psql("127.0.0.1", s.port, "postgres", "", &["-c", "select 1"], "") else {
        return;
    };
    assert!(out.status.success(), "psql failed: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "select 1\n");

    let dir = s.socket_dir.to_string_lossy().into_owned();
    let out = psql(&dir, 5432, "postgres", "", &["-c", "rows 3"], "").expect("psql");
    assert!(out.status.success(), "psql failed: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1\n2\n3\n");
}

#[test]
fn psql_scram_login() {
    let s = TestServer::start();
    let Some(out) = psql("127.0.0.1", s.port, "scram", PASSWORD, &["-c", "hello"], "") else {
        return;
    };
    assert!(out.status.success(), "psql failed: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello\n");

    let out = psql("127.0.0.1", s.port, "scram", "wrong", &["-c", "hello"], "").expect("psql");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("password authentication failed for user \"scram\""), "{err}");
}

#[test]
fn psql_errors_and_copy_from_stdin() {
    let s = TestServer::start();
    let Some(out) = psql("127.0.0.1", s.port, "postgres", "", &["-c", "fail"], "") else {
        return;
    };
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("ERROR:  division by zero"), "{}", text(&out.stderr));

    let data: String = (0..1000).map(|i| format!("{i}\tline\n")).collect();
    let out = psql("127.0.0.1", s.port, "postgres", "", &["-c", "copy"], &data).expect("psql");
    assert!(out.status.success(), "psql failed: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "COPY 1000\n");

    // A script through stdin: several queries on one connection.
    let script = "select 1;\nbegin;\nrows 2;\ncommit;\n";
    let out = psql("127.0.0.1", s.port, "postgres", "", &[], script).expect("psql");
    assert!(out.status.success(), "psql failed: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "select 1\nBEGIN\n1\n2\nCOMMIT\n");
}
