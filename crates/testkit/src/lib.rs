//! Test helpers shared by end-to-end suites (dev-only; never a normal
//! dependency).
//!
//! [`TestServer`] starts the real `strata` binary on 127.0.0.1 with a free
//! port, a temporary data directory and a temporary unix-socket directory,
//! waits until it accepts connections, and can `kill -9` and restart it on
//! the same data. [`TestServer::psql`] and [`TestServer::pgbench`] run the
//! real client programs against it. Every wait is bounded in time.

#![allow(clippy::print_stdout)]

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to start accepting connections.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Finds the `strata` binary: `$STRATA_BIN`, else next to the test
/// executable's target directory (`target/debug/strata`).
pub fn strata_bin() -> PathBuf {
    if let Ok(p) = std::env::var("STRATA_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    // target/debug/deps/<test> -> target/debug/strata
    let dir = exe.parent().and_then(|d| d.parent()).expect("target directory");
    let bin = dir.join("strata");
    assert!(
        bin.exists(),
        "strata binary not found at {} (run `cargo build --bins` first, or set STRATA_BIN)",
        bin.display()
    );
    bin
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A running strata server owned by a test.
pub struct TestServer {
    child: Option<Child>,
    /// TCP port on 127.0.0.1.
    pub port: u16,
    data: tempfile::TempDir,
    sockets: tempfile::TempDir,
    log: PathBuf,
}

impl TestServer {
    /// Starts a server on fresh, empty data.
    pub fn start() -> TestServer {
        let data = tempfile::tempdir().expect("temp data dir");
        let sockets = tempfile::tempdir().expect("temp socket dir");
        let log = data.path().join("strata.log");
        let mut s = TestServer { child: None, port: free_port(), data, sockets, log };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("log file");
        let child = Command::new(strata_bin())
            .args(["start", "--listen", &format!("127.0.0.1:{}", self.port)])
            .arg("--socket-dir")
            .arg(self.sockets.path())
            .arg("--data-dir")
            .arg(self.data.path().join("data"))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting strata");
        self.child = Some(child);
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    panic!("strata exited early ({status}); log:\n{}", self.log_text());
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("strata did not start within {START_TIMEOUT:?}; log:\n{}", self.log_text());
    }

    /// The server's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The unix socket directory (for `psql -h <dir>`).
    pub fn socket_dir(&self) -> PathBuf {
        self.sockets.path().to_path_buf()
    }

    /// Kills the server with SIGKILL and waits for it to die.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same data directory and port.
    pub fn restart(&mut self) {
        self.kill9();
        self.spawn();
    }

    /// Runs psql with `args` against the server over TCP (`-X`, no psqlrc).
    pub fn psql(&self, args: &[&str]) -> Output {
        Command::new("psql")
            .args([
                "-X",
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
            ])
            .args(args)
            .env("PGCONNECT_TIMEOUT", "10")
            .output()
            .expect("running psql")
    }

    /// Runs SQL fed through psql's standard input (for statements too large
    /// for a command line), with `-At`.
    pub fn psql_stdin(&self, sql: &str) -> Output {
        use std::io::Write;
        let mut child = Command::new("psql")
            .args([
                "-X",
                "-At",
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running psql");
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(sql.as_bytes());
        }
        child.wait_with_output().expect("psql output")
    }

    /// Runs one SQL string with `psql -Atc` and returns trimmed stdout,
    /// panicking with stderr if psql fails.
    pub fn query(&self, sql: &str) -> String {
        let out = self.psql(&["-v", "ON_ERROR_STOP=1", "-Atc", sql]);
        assert!(
            out.status.success(),
            "psql failed for {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs pgbench with `args` against the server.
    pub fn pgbench(&self, args: &[&str]) -> Output {
        Command::new("pgbench")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres"])
            .args(args)
            .arg("postgres")
            .output()
            .expect("running pgbench")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Checks pgbench's TPC-B invariants: sum(abalance) = sum(tbalance) =
/// sum(bbalance) = sum(delta of history). Returns the history row count.
pub fn check_tpcb_invariants(s: &TestServer) -> u64 {
    let a = s.query("select coalesce(sum(abalance), 0) from pgbench_accounts");
    let t = s.query("select coalesce(sum(tbalance), 0) from pgbench_tellers");
    let b = s.query("select coalesce(sum(bbalance), 0) from pgbench_branches");
    let h = s.query("select coalesce(sum(delta), 0) from pgbench_history");
    assert_eq!(a, t, "sum(abalance) != sum(tbalance)");
    assert_eq!(t, b, "sum(tbalance) != sum(bbalance)");
    assert_eq!(b, h, "sum(bbalance) != sum(delta)");
    s.query("select count(*) from pgbench_history").parse().expect("a count")
}

/// Extracts an integer after `label` in pgbench's output.
pub fn pgbench_number(output: &str, label: &str) -> Option<u64> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// A minimal raw protocol client for tests that need exact control of the
/// bytes on the wire (cancel requests, malformed messages).
pub struct RawClient {
    /// The socket.
    pub stream: TcpStream,
    /// BackendKeyData (pid, secret) received at startup.
    pub key: (i32, i32),
}

impl RawClient {
    /// Connects and completes startup as `postgres` (trust auth).
    pub fn connect(port: u16) -> RawClient {
        use std::io::Write;
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        let mut body = 196608u32.to_be_bytes().to_vec();
        for (k, v) in [("user", "postgres"), ("database", "postgres")] {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut msg = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        msg.extend_from_slice(&body);
        stream.write_all(&msg).expect("startup");
        let mut c = RawClient { stream, key: (0, 0) };
        loop {
            let (tag, body) = c.read_message();
            if tag == b'K' && body.len() == 8 {
                c.key = (
                    i32::from_be_bytes([body[0], body[1], body[2], body[3]]),
                    i32::from_be_bytes([body[4], body[5], body[6], body[7]]),
                );
            }
            if tag == b'Z' {
                return c;
            }
            assert_ne!(tag, b'E', "startup failed: {}", String::from_utf8_lossy(&body));
        }
    }

    /// Sends one message.
    pub fn send(&mut self, tag: u8, body: &[u8]) {
        use std::io::Write;
        let mut m = vec![tag];
        m.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        m.extend_from_slice(body);
        self.stream.write_all(&m).expect("send");
    }

    /// Sends a simple Query.
    pub fn query(&mut self, sql: &str) {
        let mut b = sql.as_bytes().to_vec();
        b.push(0);
        self.send(b'Q', &b);
    }

    /// Reads one message (type, body).
    pub fn read_message(&mut self) -> (u8, Vec<u8>) {
        use std::io::Read;
        let mut head = [0u8; 5];
        self.stream.read_exact(&mut head).expect("message header");
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let mut body = vec![0u8; len.saturating_sub(4)];
        self.stream.read_exact(&mut body).expect("message body");
        (head[0], body)
    }

    /// Reads until ReadyForQuery; returns the SQLSTATEs of any errors seen.
    pub fn until_ready(&mut self) -> Vec<String> {
        let mut codes = Vec::new();
        loop {
            let (tag, body) = self.read_message();
            if tag == b'E' {
                let mut fields = body.split(|&b| b == 0);
                if let Some(code) = fields.find(|f| f.first() == Some(&b'C')) {
                    codes.push(String::from_utf8_lossy(&code[1..]).into_owned());
                }
            }
            if tag == b'Z' {
                return codes;
            }
        }
    }

    /// Sends a CancelRequest for this client's session on a new connection.
    pub fn cancel(&self, port: u16) {
        use std::io::Write;
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let mut m = 16u32.to_be_bytes().to_vec();
        m.extend_from_slice(&80877102u32.to_be_bytes());
        m.extend_from_slice(&self.key.0.to_be_bytes());
        m.extend_from_slice(&self.key.1.to_be_bytes());
        c.write_all(&m).expect("cancel");
    }
}
