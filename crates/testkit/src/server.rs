//! One database server owned by one test.
//!
//! The same [`TestServer`] API drives two targets ([`Target`]):
//!
//! - **Strata**: the `strata start` binary (found by [`strata_bin`]; building
//!   it is `scripts/test`'s job, not ours), one process.
//! - **PostgreSQL**: `initdb` (trust auth, UTF8 with the C.UTF-8 locale:
//!   code-point collation and Unicode case mapping; fsync on while serving) and the
//!   `postgres` postmaster from Debian's PostgreSQL 15. PostgreSQL refuses to
//!   run as root, so when the tests run as root the data directory is handed
//!   to the `postgres` OS user and the processes run under its uid. The
//!   postmaster gets its own process group, so [`TestServer::kill9`] kills it
//!   and all its backends at once, like a power cut. `initdb` runs once into
//!   a template under the temp directory that each server copies.
//!
//! Both listen on 127.0.0.1 with a port picked by binding 127.0.0.1:0, and on
//! a unix socket in a temporary directory. "Ready" means a real startup
//! handshake reaches ReadyForQuery (PostgreSQL accepts TCP connections while
//! still recovering and only then refuses logins).

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::raw::{read_message, startup_message};
use crate::split::pid_alive;
use crate::CLIENT_TIMEOUT;

/// How long a server may take to start accepting logins (including crash
/// recovery after `kill -9`).
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a graceful stop may take before the server is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long PostgreSQL's immediate shutdown may take when a test drops its
/// server before the server is killed.
const QUIT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where Debian keeps PostgreSQL 15's server programs.
const PG_BIN_DIR: &str = "/usr/lib/postgresql/15/bin";

/// Which server the end-to-end tests run against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The `strata` binary (the default).
    Strata,
    /// A real PostgreSQL 15: the oracle every expectation is checked against.
    Postgres,
}

impl Target {
    /// Reads `STRATA_TEST_TARGET` (`strata`, the default, or `postgres`).
    pub fn from_env() -> Target {
        match std::env::var("STRATA_TEST_TARGET").as_deref() {
            Ok("postgres") | Ok("pg") => Target::Postgres,
            Ok("strata") | Ok("") | Err(_) => Target::Strata,
            Ok(other) => panic!("STRATA_TEST_TARGET={other:?}: expected strata or postgres"),
        }
    }
}

/// Finds the `strata` binary: `$STRATA_BIN`, else `$CARGO_TARGET_DIR/debug/strata`,
/// else the `debug` directory holding this test executable, else the
/// workspace's `target/debug/strata`.
pub fn strata_bin() -> PathBuf {
    if let Ok(p) = std::env::var("STRATA_BIN") {
        return PathBuf::from(p);
    }
    let mut candidates = Vec::new();
    if let Ok(dir) = std::env::var("CARGO_TARGET_DIR") {
        candidates.push(Path::new(&dir).join("debug/strata"));
    }
    if let Ok(exe) = std::env::current_exe() {
        // target/debug/deps/<test> -> target/debug/strata
        if let Some(debug) = exe.parent().and_then(|d| d.parent()) {
            candidates.push(debug.join("strata"));
        }
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/debug/strata"));
    match candidates.iter().find(|p| p.exists()) {
        Some(p) => p.clone(),
        None => panic!(
            "strata binary not found (looked at {candidates:?}); run `cargo build -p strata` \
             first or set STRATA_BIN"
        ),
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// A PostgreSQL server program: Debian's directory first, else `$PATH`.
fn pg_program(name: &str) -> PathBuf {
    let p = Path::new(PG_BIN_DIR).join(name);
    if p.exists() {
        p
    } else {
        PathBuf::from(name)
    }
}

/// The uid/gid to run PostgreSQL under: `None` when we are not root (run as
/// ourselves), else the `postgres` OS user's ids from /etc/passwd.
fn pg_owner() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").expect("reading /etc/passwd");
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .expect("running as root needs the `postgres` OS user (install postgresql)");
    let f: Vec<&str> = line.split(':').collect();
    let uid = f.get(2).and_then(|s| s.parse().ok()).expect("uid in /etc/passwd");
    let gid = f.get(3).and_then(|s| s.parse().ok()).expect("gid in /etc/passwd");
    Some((uid, gid))
}

/// Hands `path` (recursively) to the PostgreSQL owner when running as root.
fn chown_to_pg(path: &Path) {
    if let Some((uid, gid)) = pg_owner() {
        let out = Command::new("chown")
            .arg("-R")
            .arg(format!("{uid}:{gid}"))
            .arg(path)
            .output()
            .expect("running chown");
        assert!(out.status.success(), "chown failed: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// Runs a PostgreSQL program under the PostgreSQL owner.
fn pg_command(name: &str) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(pg_program(name));
    if let Some((uid, gid)) = pg_owner() {
        c.uid(uid).gid(gid);
    }
    c.env("LC_ALL", "C.UTF-8");
    c
}

/// A freshly initdb'ed cluster that each PostgreSQL server copies (initdb
/// takes seconds; a copy takes milliseconds). It lives in a fixed place under
/// the temp directory, shared by test processes: it is built in a private
/// directory and renamed into place, so a half-built template is never used.
fn pg_template() -> &'static Path {
    static TEMPLATE: OnceLock<PathBuf> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let uid = pg_owner().map_or_else(|| "self".to_string(), |(u, _)| u.to_string());
            let path = std::env::temp_dir().join(format!("strata-pg15-utf8-template-{uid}"));
            if path.join("data/PG_VERSION").exists() {
                return path;
            }
            let build = tempfile::Builder::new()
                .prefix("strata-pg15-template-build")
                .tempdir()
                .expect("template dir");
            chown_to_pg(build.path());
            let mut initdb = pg_command("initdb");
            initdb.arg("-D").arg(build.path().join("data")).args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "-N",
            ]);
            let out = run_with_timeout(&mut initdb, None, CLIENT_TIMEOUT);
            assert!(
                out.status.success(),
                "initdb failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            // Losing the race to another process is fine: its template is as good.
            let _ = std::fs::rename(build.path(), &path);
            assert!(path.join("data/PG_VERSION").exists(), "no PostgreSQL template at {path:?}");
            path
        })
        .as_path()
}

/// Runs `cmd` to completion with optional standard input, collecting its
/// output; kills it and fails the test if it outlives `timeout`, so a hung
/// client can never hang the test suite.
pub fn run_with_timeout(cmd: &mut Command, stdin: Option<&[u8]>, timeout: Duration) -> Output {
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
    let input = stdin.map(|s| s.to_vec());
    let mut pipe = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let (Some(p), Some(data)) = (pipe.as_mut(), input) {
            let _ = p.write_all(&data);
        }
        // Dropping the pipe closes the child's stdin.
    });
    let reader = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(child.stdout.take().map(|s| Box::new(s) as _));
    let err = reader(child.stderr.take().map(|s| Box::new(s) as _));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for a client program") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// Whether a login on `port` reaches ReadyForQuery within a short time.
fn accepts_logins(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(2),
    ) else {
        return false;
    };
    if s.set_read_timeout(Some(Duration::from_secs(5))).is_err()
        || s.write_all(&startup_message()).is_err()
    {
        return false;
    }
    // Bounded: each read has a timeout, and a login sends a handful of messages.
    for _ in 0..64 {
        match read_message(&mut s) {
            Ok((b'Z', _)) => {
                let _ = s.write_all(&[b'X', 0, 0, 0, 4]);
                return true;
            }
            Ok((b'E', _)) | Err(_) => return false,
            // A proxy routing by password asks even for a trusted login.
            Ok((b'R', body)) if body == [0, 0, 0, 3] => {
                if s.write_all(&[b'p', 0, 0, 0, 5, 0]).is_err() {
                    return false;
                }
            }
            Ok(_) => {}
        }
    }
    false
}

/// Whether any live process (see [`crate::pid_alive`]) is left in process
/// group `pgid`.
fn group_alive(pgid: u32) -> bool {
    crate::split::all_pids().any(|pid| {
        crate::split::proc_stat(pid).is_some_and(|s| s.pgrp == pgid as i32) && pid_alive(pid)
    })
}

/// A running server owned by a test; dropping it kills the server.
pub struct TestServer {
    target: Target,
    child: Option<Child>,
    /// TCP port on 127.0.0.1 (stable across [`TestServer::restart`]).
    pub port: u16,
    /// Holds the data directory, the socket directory and the server log.
    root: tempfile::TempDir,
    /// More arguments for `strata start`.
    extra_args: Vec<String>,
    /// The binary `strata start` runs (default [`strata_bin`]).
    bin: Option<PathBuf>,
}

impl TestServer {
    /// Starts a server of the target chosen by `STRATA_TEST_TARGET` on fresh,
    /// empty data, and waits until it accepts logins.
    pub fn start() -> TestServer {
        TestServer::start_target(Target::from_env())
    }

    /// Starts Strata with more arguments for `strata start` (kept across
    /// [`TestServer::restart`]).
    pub fn start_with_args(args: &[&str]) -> TestServer {
        let mut s = TestServer::new(Target::Strata);
        s.extra_args = args.iter().map(|a| a.to_string()).collect();
        s.spawn();
        s
    }

    /// Starts Strata from the binary `bin` (a copy a test may replace, as
    /// an upgrade does) with more arguments for `strata start`.
    pub fn start_binary(bin: &Path, args: &[&str]) -> TestServer {
        let mut s = TestServer::new(Target::Strata);
        s.extra_args = args.iter().map(|a| a.to_string()).collect();
        s.bin = Some(bin.to_path_buf());
        s.spawn();
        s
    }

    /// Starts a server of the given target (see [`TestServer::start`]).
    pub fn start_target(target: Target) -> TestServer {
        let mut s = TestServer::new(target);
        s.spawn();
        s
    }

    fn new(target: Target) -> TestServer {
        let root = tempfile::Builder::new().prefix("strata-test").tempdir().expect("temp dir");
        std::fs::create_dir(root.path().join("sockets")).expect("socket dir");
        if target == Target::Postgres {
            let out = Command::new("cp")
                .arg("-a")
                .arg(pg_template().join("data"))
                .arg(root.path().join("data"))
                .output()
                .expect("copying the initdb template");
            assert!(out.status.success(), "cp: {}", String::from_utf8_lossy(&out.stderr));
            chown_to_pg(root.path());
        }
        TestServer {
            target,
            child: None,
            port: free_port(),
            root,
            extra_args: Vec::new(),
            bin: None,
        }
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("server log file");
        let mut cmd = match self.target {
            Target::Strata => self.strata_command(),
            Target::Postgres => self.postgres_command(),
        };
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        self.child = Some(child);
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if accepts_logins(self.port) {
                return;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                self.child = None;
                panic!(
                    "{:?} server exited early ({status}); log:\n{}",
                    self.target,
                    self.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server did not start within {START_TIMEOUT:?}; log:\n{}", self.log_text());
    }

    fn strata_command(&self) -> Command {
        use std::os::unix::process::CommandExt;
        let mut c = Command::new(self.bin.clone().unwrap_or_else(strata_bin));
        // Its own process group: the supervisor, the KV server, the proxy
        // and every SQL process, so kill9 takes the whole tree at once.
        c.process_group(0);
        c.args(["start", "--listen", &format!("127.0.0.1:{}", self.port)])
            .arg("--socket-dir")
            .arg(self.socket_dir())
            .arg("--data-dir")
            .arg(self.data_dir())
            .args(&self.extra_args)
            .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()));
        c
    }

    fn postgres_command(&self) -> Command {
        use std::os::unix::process::CommandExt;
        let mut c = pg_command("postgres");
        c.arg("-D")
            .arg(self.data_dir())
            .args(["-p", &self.port.to_string()])
            .arg("-k")
            .arg(self.socket_dir())
            .args(["-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "fsync=on", "-c", "synchronous_commit=on"])
            .args(["-c", "shared_buffers=32MB", "-c", "max_connections=60"])
            // Notice vanished clients during a statement (Strata does too).
            .args(["-c", "client_connection_check_interval=100ms"])
            .process_group(0);
        c
    }

    /// Which server this is.
    pub fn target(&self) -> Target {
        self.target
    }

    /// True for the PostgreSQL oracle (for the rare Strata-only check).
    pub fn is_postgres(&self) -> bool {
        self.target == Target::Postgres
    }

    /// The TCP host the server listens on.
    pub fn host(&self) -> &'static str {
        "127.0.0.1"
    }

    /// The unix socket directory (for `psql -h <dir>`); the socket itself is
    /// `<dir>/.s.PGSQL.<port>`.
    pub fn socket_dir(&self) -> PathBuf {
        self.root.path().join("sockets")
    }

    /// The server's data directory (kept across restarts).
    pub fn data_dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    fn log_path(&self) -> PathBuf {
        self.root.path().join("server.log")
    }

    /// The server's log (its stderr) so far, for failure messages.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// A libpq connection string for this server.
    pub fn conninfo(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres connect_timeout=10",
            self.port
        )
    }

    /// Whether the server process is running and accepts a login now.
    pub fn is_alive(&mut self) -> bool {
        let running = matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)));
        running && accepts_logins(self.port)
    }

    /// Kills the server with SIGKILL (for PostgreSQL, the postmaster and every
    /// backend at once) and waits until it is gone. No shutdown code runs:
    /// this is the crash that durability tests simulate.
    pub fn kill9(&mut self) {
        let Some(mut c) = self.child.take() else { return };
        // SAFETY: kill(2) on the process group we created for this child
        // (Strata's supervisor and its children, or PostgreSQL's postmaster
        // and its backends).
        unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
        let _ = c.wait();
        let deadline = Instant::now() + STOP_TIMEOUT;
        while group_alive(c.id()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server gracefully (SIGTERM for Strata; fast shutdown, SIGINT,
    /// for PostgreSQL), killing it if it takes longer than 30 s.
    pub fn stop(&mut self) {
        let sig = match self.target {
            Target::Strata => libc::SIGTERM,
            Target::Postgres => libc::SIGINT,
        };
        self.signal_and_wait(sig, STOP_TIMEOUT);
        self.kill9();
    }

    /// Sends `sig` to the server's process and waits up to `timeout` for it
    /// to exit (then it is forgotten; otherwise it is left running).
    fn signal_and_wait(&mut self, sig: libc::c_int, timeout: Duration) {
        let Some(c) = self.child.as_mut() else { return };
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(c.id() as i32, sig) };
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if !matches!(c.try_wait(), Ok(None)) {
                self.child = None;
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the server again on the same data directory and port (stopping
    /// it gracefully first if it is still running; call [`TestServer::kill9`]
    /// first to simulate a crash).
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    fn psql_command(&self) -> Command {
        self.psql_command_as("postgres")
    }

    fn psql_command_as(&self, user: &str) -> Command {
        let mut c = Command::new("psql");
        c.args(["-X", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", user, "-d", "postgres"])
            .env("PGCONNECT_TIMEOUT", "10")
            .env_remove("PGPASSWORD")
            .env_remove("PGOPTIONS");
        c
    }

    /// Runs psql (`-X`, no psqlrc) with `args` over TCP and returns its output.
    pub fn psql(&self, args: &[&str]) -> Output {
        run_with_timeout(self.psql_command().args(args), None, CLIENT_TIMEOUT)
    }

    /// Runs `sql` with `psql -Atc` as `user` (who needs no password); its
    /// output, whether or not it failed.
    pub fn psql_as(&self, user: &str, sql: &str) -> Output {
        run_with_timeout(self.psql_command_as(user).args(["-Atc", sql]), None, CLIENT_TIMEOUT)
    }

    /// Feeds `sql` to psql's standard input with `-At` (unaligned, tuples
    /// only), continuing after errors; for statements too large for a
    /// command line.
    pub fn psql_stdin(&self, sql: &str) -> Output {
        run_with_timeout(self.psql_command().arg("-At"), Some(sql.as_bytes()), CLIENT_TIMEOUT)
    }

    /// Runs a script through psql's standard input with `-v ON_ERROR_STOP=1`,
    /// so the status is non-zero if any statement fails.
    pub fn psql_script(&self, sql: &str) -> Output {
        run_with_timeout(
            self.psql_command().args(["-q", "-v", "ON_ERROR_STOP=1", "-f", "-"]),
            Some(sql.as_bytes()),
            CLIENT_TIMEOUT,
        )
    }

    /// A new raw session that has sent `sql`, whose answer is read later
    /// (it may be waiting for a lock).
    pub fn send(&self, sql: &str) -> crate::RawClient {
        let mut c = crate::RawClient::connect(self.port);
        c.query(sql);
        c
    }

    /// A new raw session that has run `sql` without error (and stays open,
    /// holding whatever its open transaction holds).
    pub fn run(&self, sql: &str) -> crate::RawClient {
        let mut c = self.send(sql);
        assert!(c.until_ready().is_empty(), "{sql}");
        c
    }

    /// Runs one SQL string with `psql -Atc` (fields separated by `|`, rows by
    /// newlines) and returns trimmed stdout; panics with stderr if it fails.
    pub fn query(&self, sql: &str) -> String {
        let out = self.psql(&["-v", "ON_ERROR_STOP=1", "-Atc", sql]);
        assert!(
            out.status.success(),
            "psql failed for {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs pgbench with `args` against database `postgres`; callers bound
    /// runs with `-T`.
    pub fn pgbench(&self, args: &[&str]) -> Output {
        let mut c = Command::new("pgbench");
        c.args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres"])
            .args(args)
            .arg("postgres")
            .env("PGCONNECT_TIMEOUT", "10");
        run_with_timeout(&mut c, None, CLIENT_TIMEOUT)
    }

    /// Opens a `tokio-postgres` connection (see [`connect`]).
    pub async fn connect(&self) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        connect(self.port).await
    }
}

/// Opens a `tokio-postgres` connection (no TLS, user and database `postgres`,
/// 10 s connect timeout) to 127.0.0.1:`port`, and drives it on a task of the
/// current tokio runtime. A free function so that `'static` closures (a
/// sqllogictest connection factory) can call it with just the port.
pub async fn connect(port: u16) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    crate::split::connect_config(&crate::split::plain_config(port)).await
}

impl TestServer {
    /// The first line of the server log that reports a Rust panic, if any.
    /// A panic on client input is a bug even when the server survives it
    /// (a connection task unwound), so every test checks this on drop.
    pub fn logged_panic(&self) -> Option<String> {
        if self.target != Target::Strata {
            return None;
        }
        self.log_text().lines().find(|l| l.contains("panicked at")).map(str::to_string)
    }
}

impl Drop for TestServer {
    /// Kills the server (PostgreSQL first with an immediate shutdown, which
    /// removes its System V shared memory segment: a postmaster killed by
    /// SIGKILL leaves it behind, and a few thousand runs exhaust the
    /// kernel's segments, SHMMNI); then fails the test if Strata logged a
    /// panic (unless the test is already failing).
    fn drop(&mut self) {
        if self.target == Target::Postgres {
            self.signal_and_wait(libc::SIGQUIT, QUIT_TIMEOUT);
        }
        self.kill9();
        if std::thread::panicking() {
            return;
        }
        if let Some(line) = self.logged_panic() {
            panic!("the server panicked during this test: {line}\nlog:\n{}", self.log_text());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_defaults_to_strata() {
        // Only reads the variable; tests in this crate never set it.
        if std::env::var("STRATA_TEST_TARGET").is_err() {
            assert_eq!(Target::from_env(), Target::Strata);
        }
    }

    #[test]
    fn run_with_timeout_feeds_stdin_and_collects_output() {
        let out =
            run_with_timeout(Command::new("cat").arg("-"), Some(b"hello"), Duration::from_secs(10));
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hello");
    }

    #[test]
    fn nothing_listens_on_a_fresh_free_port() {
        assert!(!accepts_logins(free_port()));
    }
}
