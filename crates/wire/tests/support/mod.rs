//! Test support shared by the integration tests: a tiny in-test [`Backend`]
//! and a raw frontend that writes protocol messages by hand.
//!
//! The echo backend answers every statement of a query string with one row
//! holding the statement's text, except for a few command words:
//!
//! | statement   | effect                                                     |
//! |-------------|------------------------------------------------------------|
//! | `rows N`    | N rows `1`..`N` (for row limits and PortalSuspended)        |
//! | `echo $1..` | one row with the bound parameters                          |
//! | `sleep`     | waits 30 s (to be cancelled)                               |
//! | `fail`      | ERROR 22012                                                |
//! | `fatal`     | FATAL XX000                                                |
//! | `copy`      | COPY FROM STDIN of one text column; data "bad" fails 22P04  |
//! | `notice`    | a WARNING notice, then `NOTICE`                            |
//! | `set`       | ParameterStatus `x=on` before ReadyForQuery                |
//! | `begin`/`commit` | transaction block status T / I                        |
//! | `` (empty)  | EmptyQueryResponse                                         |
//!
//! User `scram` must log in with password `pencil`; user `nobody` is
//! rejected with 28000; database `nodb` fails to open with 3D000.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlstate::{ErrorReport, SqlState};
use wire::{
    AuthMethod, Backend, ExecOutcome, FieldDesc, Format, Oid, Output, Portal, ScramVerifier,
    Session, StartupInfo, Statement, TxnStatus,
};

/// Counters the tests read to see what the server did.
#[derive(Default)]
pub struct Stats {
    /// Calls to `Session::cancelled`.
    pub cancelled: AtomicUsize,
    /// Sessions dropped.
    pub dropped: AtomicUsize,
}

/// The echo backend.
pub struct Echo {
    pub stats: Arc<Stats>,
    verifier: ScramVerifier,
}

impl Backend for Echo {
    type Session = EchoSession;

    fn auth_method(&self, s: &StartupInfo, _local: bool) -> Result<AuthMethod, ErrorReport> {
        match s.user.as_str() {
            "scram" => Ok(AuthMethod::ScramSha256(self.verifier.clone())),
            "nobody" => Err(ErrorReport::fatal(
                SqlState::InvalidAuthorizationSpecification,
                "role \"nobody\" does not exist",
            )),
            _ => Ok(AuthMethod::Trust),
        }
    }

    async fn open(&self, s: &StartupInfo) -> Result<EchoSession, ErrorReport> {
        if s.database == "nodb" {
            return Err(ErrorReport::fatal(
                SqlState::InvalidCatalogName,
                "database \"nodb\" does not exist",
            ));
        }
        Ok(EchoSession {
            stats: self.stats.clone(),
            status: TxnStatus::Idle,
            copied: Vec::new(),
            notices: Vec::new(),
            changed: Vec::new(),
        })
    }
}

pub struct EchoSession {
    stats: Arc<Stats>,
    status: TxnStatus,
    copied: Vec<u8>,
    notices: Vec<ErrorReport>,
    changed: Vec<(String, String)>,
}

impl Drop for EchoSession {
    fn drop(&mut self) {
        self.stats.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

pub struct EchoStatement {
    text: String,
    params: usize,
}

pub struct EchoPortal {
    text: String,
    rows: std::collections::VecDeque<Vec<Option<Vec<u8>>>>,
    formats: Vec<Format>,
}

fn echo_field(format: Format) -> FieldDesc {
    FieldDesc {
        name: "echo".into(),
        table_oid: 0,
        column_id: 0,
        type_oid: 25,
        type_size: -1,
        type_modifier: -1,
        format,
    }
}

fn returns_rows(text: &str) -> bool {
    !(text.is_empty() || ["copy", "begin", "commit", "notice", "set"].contains(&text))
}

impl Statement for EchoStatement {
    fn param_types(&self) -> Vec<Oid> {
        vec![25; self.params]
    }

    fn fields(&self) -> Option<Vec<FieldDesc>> {
        returns_rows(&self.text).then(|| vec![echo_field(Format::Text)])
    }
}

impl Portal for EchoPortal {
    fn fields(&self) -> Option<Vec<FieldDesc>> {
        let format = self.formats.first().copied().unwrap_or_default();
        returns_rows(&self.text).then(|| vec![echo_field(format)])
    }
}

impl Session for EchoSession {
    type Statement = EchoStatement;
    type Portal = EchoPortal;

    fn parameter_status(&self) -> Vec<(String, String)> {
        vec![("server_version".into(), "16.0".into()), ("client_encoding".into(), "UTF8".into())]
    }

    fn changed_parameters(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.changed)
    }

    fn txn_status(&self) -> TxnStatus {
        self.status
    }

    async fn prepare(
        &mut self,
        sql: &str,
        _param_types: &[Oid],
    ) -> Result<Vec<Arc<EchoStatement>>, ErrorReport> {
        if sql.contains("syntax error") {
            return Err(ErrorReport::new(SqlState::SyntaxError, "syntax error at or near \"x\""));
        }
        let mut out: Vec<_> = sql
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                let params = s.matches('$').count();
                Arc::new(EchoStatement { text: s.to_string(), params })
            })
            .collect();
        if out.is_empty() {
            out.push(Arc::new(EchoStatement { text: String::new(), params: 0 }));
        }
        Ok(out)
    }

    fn bind(
        &mut self,
        stmt: &Arc<EchoStatement>,
        params: &[Option<&[u8]>],
        _param_formats: &[Format],
        result_formats: &[Format],
    ) -> Result<EchoPortal, ErrorReport> {
        let text = stmt.text.clone();
        let mut rows = std::collections::VecDeque::new();
        if let Some(n) = text.strip_prefix("rows ") {
            let n: usize = n.parse().map_err(|_| ErrorReport::new(SqlState::SyntaxError, "n"))?;
            rows.extend((1..=n).map(|i| vec![Some(i.to_string().into_bytes())]));
        } else if text.starts_with("echo $") {
            rows.push_back(params.iter().map(|p| p.map(<[u8]>::to_vec)).collect());
        } else if returns_rows(&text) {
            rows.push_back(vec![Some(text.clone().into_bytes())]);
        }
        Ok(EchoPortal { text, rows, formats: result_formats.to_vec() })
    }

    async fn execute<'a>(
        &'a mut self,
        portal: &'a mut EchoPortal,
        max_rows: usize,
        out: &'a mut Output,
    ) -> Result<ExecOutcome, ErrorReport> {
        if self.status == TxnStatus::Failed && portal.text != "commit" {
            return Err(ErrorReport::new(
                SqlState::InFailedSqlTransaction,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let r = self.run(portal, max_rows, out).await;
        if r.is_err() && self.status == TxnStatus::InBlock {
            self.status = TxnStatus::Failed;
        }
        r
    }

    fn cancelled(&mut self) {
        self.stats.cancelled.fetch_add(1, Ordering::SeqCst);
        if self.status == TxnStatus::InBlock {
            self.status = TxnStatus::Failed;
        }
    }

    async fn sync(&mut self) -> Result<(), ErrorReport> {
        Ok(())
    }

    async fn copy_in_data<'a>(&'a mut self, data: &'a [u8]) -> Result<(), ErrorReport> {
        self.copied.extend_from_slice(data);
        if self.copied.windows(3).any(|w| w == b"bad") {
            self.copied.clear();
            return Err(ErrorReport::new(SqlState::BadCopyFileFormat, "bad copy data"));
        }
        Ok(())
    }

    async fn copy_in_done(&mut self) -> Result<String, ErrorReport> {
        let lines = self.copied.iter().filter(|&&b| b == b'\n').count();
        self.copied.clear();
        Ok(format!("COPY {lines}"))
    }

    fn copy_in_fail(&mut self, message: &str) -> ErrorReport {
        self.copied.clear();
        ErrorReport::new(SqlState::QueryCanceled, format!("COPY from stdin failed: {message}"))
    }

    fn take_notices(&mut self) -> Vec<ErrorReport> {
        std::mem::take(&mut self.notices)
    }
}

impl EchoSession {
    async fn run(
        &mut self,
        portal: &mut EchoPortal,
        max_rows: usize,
        out: &mut Output,
    ) -> Result<ExecOutcome, ErrorReport> {
        match portal.text.as_str() {
            "" => return Ok(ExecOutcome::Empty),
            "sleep" => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                return Ok(ExecOutcome::Complete("SLEEP".into()));
            }
            "fail" => return Err(ErrorReport::new(SqlState::DivisionByZero, "division by zero")),
            "fatal" => return Err(ErrorReport::fatal(SqlState::InternalError, "fatal error")),
            "copy" => return Ok(ExecOutcome::CopyIn { format: Format::Text, columns: 1 }),
            "begin" => {
                self.status = TxnStatus::InBlock;
                return Ok(ExecOutcome::Complete("BEGIN".into()));
            }
            "commit" => {
                self.status = TxnStatus::Idle;
                return Ok(ExecOutcome::Complete("COMMIT".into()));
            }
            "notice" => {
                self.notices.push(ErrorReport::warning(SqlState::Warning, "careful"));
                return Ok(ExecOutcome::Complete("NOTICE".into()));
            }
            "set" => {
                self.changed.push(("x".into(), "on".into()));
                return Ok(ExecOutcome::Complete("SET".into()));
            }
            _ => {}
        }
        let mut n = 0;
        while max_rows == 0 || n < max_rows {
            let Some(row) = portal.rows.pop_front() else { break };
            out.begin_row(row.len());
            for f in &row {
                match f {
                    Some(v) => out.field(v),
                    None => out.null_field(),
                }
            }
            out.end_row();
            n += 1;
        }
        if !portal.rows.is_empty() {
            return Ok(ExecOutcome::Suspended);
        }
        Ok(ExecOutcome::Complete(format!("SELECT {n}")))
    }
}

/// A server on 127.0.0.1:0 (and a unix socket) running the echo backend on
/// its own runtime; it stops when dropped.
pub struct TestServer {
    pub port: u16,
    pub socket_dir: PathBuf,
    pub stats: Arc<Stats>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::sync::oneshot::Receiver<()>>,
    rt: tokio::runtime::Runtime,
}

/// The RFC 7677 test password.
pub const PASSWORD: &str = "pencil";

impl TestServer {
    pub fn start() -> TestServer {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let socket_dir = std::env::temp_dir().join(format!(
            "wire-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&socket_dir).expect("socket dir");
        let unix = socket_dir.join(".s.PGSQL.5432");
        let listeners = rt
            .block_on(wire::Listeners::bind("127.0.0.1:0".parse().expect("addr"), Some(&unix)))
            .expect("bind");
        let port = listeners.local_addr().expect("addr").port();
        let stats = Arc::new(Stats::default());
        let backend =
            Arc::new(Echo { stats: stats.clone(), verifier: wire::scram_verifier(PASSWORD) });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (finished, done) = tokio::sync::oneshot::channel::<()>();
        rt.spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            let _ = wire::serve_until(backend, listeners, shutdown).await;
            let _ = finished.send(());
        });
        TestServer { port, socket_dir, stats, stop: Some(stop), done: Some(done), rt }
    }

    /// Starts a graceful shutdown and waits (bounded) until serving ended.
    pub fn shutdown(&mut self) -> bool {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(done) = self.done.take() else { return true };
        self.rt
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), done).await.is_ok() })
    }

    /// Waits (bounded) until `f` holds.
    pub fn eventually(&self, f: impl Fn(&Stats) -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if f(&self.stats) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.socket_dir);
    }
}

/// A frontend that writes messages by hand. Every read is bounded in time.
pub struct Client {
    pub s: TcpStream,
    /// BackendKeyData (pid, secret).
    pub key: (i32, i32),
}

/// Appends a NUL-terminated string.
pub fn cstr(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(s.as_bytes());
    b.push(0);
}

/// A StartupMessage body (after the length) for protocol `version`.
pub fn startup_body(version: u32, params: &[(&str, &str)]) -> Vec<u8> {
    let mut b = version.to_be_bytes().to_vec();
    for (k, v) in params {
        cstr(&mut b, k);
        cstr(&mut b, v);
    }
    b.push(0);
    b
}

impl Client {
    /// Opens a socket without sending anything.
    pub fn raw(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        s.set_nodelay(true).expect("nodelay");
        Client { s, key: (0, 0) }
    }

    /// Connects and logs in with trust as `user`; panics unless it gets ReadyForQuery.
    pub fn connect(port: u16) -> Client {
        let mut c = Client::raw(port);
        let got = c.login(&[("user", "postgres")]);
        assert_eq!(got.last().map(String::as_str), Some("Z I"), "login: {got:?}");
        c
    }

    /// Sends a StartupMessage and returns what came back up to ReadyForQuery,
    /// an error, or EOF.
    pub fn login(&mut self, params: &[(&str, &str)]) -> Vec<String> {
        self.send_startup(&startup_body(196_608, params));
        self.until_ready()
    }

    pub fn send_startup(&mut self, body: &[u8]) {
        let mut b = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        b.extend_from_slice(body);
        self.s.write_all(&b).expect("write startup");
    }

    pub fn send(&mut self, tag: u8, body: &[u8]) {
        let mut b = vec![tag];
        b.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        b.extend_from_slice(body);
        self.s.write_all(&b).expect("write");
    }

    pub fn query(&mut self, sql: &str) -> Vec<String> {
        let mut b = Vec::new();
        cstr(&mut b, sql);
        self.send(b'Q', &b);
        self.until_ready()
    }

    pub fn parse(&mut self, name: &str, sql: &str) {
        let mut b = Vec::new();
        cstr(&mut b, name);
        cstr(&mut b, sql);
        b.extend_from_slice(&0i16.to_be_bytes());
        self.send(b'P', &b);
    }

    pub fn bind(&mut self, portal: &str, stmt: &str, params: &[&str]) {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        cstr(&mut b, stmt);
        b.extend_from_slice(&0i16.to_be_bytes());
        b.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for p in params {
            b.extend_from_slice(&(p.len() as i32).to_be_bytes());
            b.extend_from_slice(p.as_bytes());
        }
        b.extend_from_slice(&0i16.to_be_bytes());
        self.send(b'B', &b);
    }

    pub fn describe(&mut self, kind: u8, name: &str) {
        let mut b = vec![kind];
        cstr(&mut b, name);
        self.send(b'D', &b);
    }

    pub fn execute(&mut self, portal: &str, max_rows: i32) {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        b.extend_from_slice(&max_rows.to_be_bytes());
        self.send(b'E', &b);
    }

    pub fn sync(&mut self) -> Vec<String> {
        self.send(b'S', &[]);
        self.until_ready()
    }

    /// The next message, or None at EOF.
    pub fn recv(&mut self) -> Option<(u8, Vec<u8>)> {
        let mut head = [0u8; 5];
        if let Err(e) = self.s.read_exact(&mut head) {
            assert!(
                matches!(
                    e.kind(),
                    std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
                ),
                "read failed (timeout?): {e}"
            );
            return None;
        }
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let mut body = vec![0u8; len - 4];
        self.s.read_exact(&mut body).expect("message body");
        if head[0] == b'K' {
            self.key = (be_i32(&body[0..4]), be_i32(&body[4..8]));
        }
        Some((head[0], body))
    }

    /// Messages (summarised, see [`summary`]) up to and including
    /// ReadyForQuery, or up to a FATAL error, or EOF.
    pub fn until_ready(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some((tag, body)) = self.recv() {
            let s = summary(tag, &body);
            let end = tag == b'Z' || s.starts_with("FATAL");
            out.push(s);
            if end {
                break;
            }
        }
        out
    }

    /// True if the server closed the connection (EOF before any message).
    pub fn closed(&mut self) -> bool {
        self.recv().is_none()
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// One message as a short readable string: `D a,b` (DataRow), `C SELECT 1`,
/// `T echo`, `ERROR 42601`, `FATAL 28P01 message`, `Z I`, `S name=value`,
/// `R 0` (auth code), and the bare type letter for the rest.
pub fn summary(tag: u8, body: &[u8]) -> String {
    let strs = |b: &[u8]| -> Vec<String> {
        b.split(|&c| c == 0).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
    };
    match tag {
        b'D' => {
            let mut fields = Vec::new();
            let mut at = 2;
            while at + 4 <= body.len() {
                let len = be_i32(&body[at..at + 4]);
                at += 4;
                if len < 0 {
                    fields.push("NULL".to_string());
                } else {
                    let end = at + len as usize;
                    fields.push(String::from_utf8_lossy(&body[at..end]).into_owned());
                    at = end;
                }
            }
            format!("D {}", fields.join(","))
        }
        b'C' => format!("C {}", strs(body)[0]),
        b'Z' => format!("Z {}", body[0] as char),
        b'T' => {
            let name = strs(&body[2..])[0].clone();
            format!("T {name}")
        }
        b'S' => {
            let s = strs(body);
            format!("S {}={}", s[0], s[1])
        }
        b'R' => format!("R {}", be_i32(&body[0..4])),
        b'E' | b'N' => {
            let fields = strs(body);
            let field = |k: char| {
                fields.iter().find_map(|f| f.strip_prefix(k)).unwrap_or_default().to_string()
            };
            if tag == b'N' {
                return format!("N {}", field('C'));
            }
            match field('S').as_str() {
                "FATAL" => format!("FATAL {} {}", field('C'), field('M')),
                _ => format!("ERROR {}", field('C')),
            }
        }
        other => (other as char).to_string(),
    }
}
