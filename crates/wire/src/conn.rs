//! One client connection: startup, authentication, and the message loop.
//!
//! The loop follows PostgreSQL's postgres.c: a simple Query runs each of its
//! statements and then behaves like Sync; extended-protocol messages act on
//! named statements and portals; after an error, messages are skipped until
//! Sync. Output is buffered and flushed at ReadyForQuery (after the session
//! has ended any implicit transaction), at Flush, and when it grows large.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::{Buf, BytesMut};
use sqlstate::{ErrorReport, Severity, SqlState};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

use crate::backend::{
    AuthMethod, Backend, ExecOutcome, Format, Portal as _, Session, StartupInfo, Statement as _,
};
use crate::codec::{self, Frontend, Startup, MAX_MESSAGE, MAX_STARTUP};
use crate::messages as msg;
use crate::output::Output;
use crate::scram::ScramServer;
use crate::server::CancelRegistry;

/// Flush mid-statement once this much output is pending.
const FLUSH_AT: usize = 1 << 20;

/// Why a connection ends.
enum Close {
    /// The client said Terminate or closed the socket.
    Normal,
    /// A fatal error was already sent.
    Fatal,
    /// The socket failed.
    Io,
}

struct Conn<S, IO> {
    io: IO,
    rbuf: BytesMut,
    out: Output,
    session: S,
}

async fn read_exact_buf<IO: AsyncRead + Unpin>(
    io: &mut IO,
    buf: &mut BytesMut,
    n: usize,
) -> Result<bool, Close> {
    while buf.len() < n {
        match io.read_buf(buf).await {
            Ok(0) => return Ok(false),
            Ok(_) => {}
            Err(_) => return Err(Close::Io),
        }
    }
    Ok(true)
}

async fn write_all<IO: AsyncWrite + Unpin>(io: &mut IO, buf: &mut BytesMut) -> Result<(), Close> {
    if buf.is_empty() {
        return Ok(());
    }
    io.write_all(buf).await.map_err(|_| Close::Io)?;
    buf.clear();
    Ok(())
}

async fn send_fatal<IO: AsyncWrite + Unpin>(io: &mut IO, e: &ErrorReport) {
    let mut b = BytesMut::new();
    let e = ErrorReport { severity: Severity::Fatal, ..e.clone() };
    msg::error(&mut b, &e);
    let _ = io.write_all(&b).await;
    let _ = io.flush().await;
}

/// Reads one startup-phase packet body.
async fn read_startup<IO: AsyncRead + AsyncWrite + Unpin>(
    io: &mut IO,
    buf: &mut BytesMut,
) -> Result<Option<Vec<u8>>, Close> {
    if !read_exact_buf(io, buf, 4).await? {
        return Ok(None);
    }
    let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    if !(8..=MAX_STARTUP).contains(&len) {
        send_fatal(
            io,
            &ErrorReport::fatal(SqlState::ProtocolViolation, "invalid length of startup packet"),
        )
        .await;
        return Err(Close::Fatal);
    }
    if !read_exact_buf(io, buf, len).await? {
        return Ok(None);
    }
    let body = buf[4..len].to_vec();
    buf.advance(len);
    Ok(Some(body))
}

/// Reads one regular message: (type, body).
async fn read_message<IO: AsyncRead + AsyncWrite + Unpin>(
    io: &mut IO,
    buf: &mut BytesMut,
) -> Result<Option<(u8, Vec<u8>)>, Close> {
    if !read_exact_buf(io, buf, 5).await? {
        return Ok(None);
    }
    let tag = buf[0];
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if !(4..=MAX_MESSAGE).contains(&len) {
        send_fatal(
            io,
            &ErrorReport::fatal(
                SqlState::ProtocolViolation,
                format!("invalid message length {len}"),
            ),
        )
        .await;
        return Err(Close::Fatal);
    }
    // Grow the buffer as bytes arrive, never to the claimed size up front.
    if !read_exact_buf(io, buf, len + 1).await? {
        return Ok(None);
    }
    let body = buf[5..len + 1].to_vec();
    buf.advance(len + 1);
    Ok(Some((tag, body)))
}

/// Runs a connection to completion.
pub async fn run<B: Backend, IO: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    backend: Arc<B>,
    registry: Arc<CancelRegistry>,
    mut io: IO,
    local: bool,
) {
    let mut rbuf = BytesMut::with_capacity(8192);
    let startup = match startup(&mut io, &mut rbuf, &registry).await {
        Ok(Some(s)) => s,
        _ => return,
    };
    let method = match backend.auth_method(&startup, local) {
        Ok(m) => m,
        Err(e) => return send_fatal(&mut io, &e).await,
    };
    let mut out = BytesMut::new();
    if let AuthMethod::ScramSha256(v) = method {
        if authenticate(&mut io, &mut rbuf, v, &startup.user).await.is_err() {
            return;
        }
    }
    msg::auth_ok(&mut out);
    let session = match backend.open(&startup).await {
        Ok(s) => s,
        Err(e) => {
            let _ = io.write_all(&out).await;
            return send_fatal(&mut io, &e).await;
        }
    };
    for (k, v) in session.parameter_status() {
        msg::parameter_status(&mut out, &k, &v);
    }
    let (pid, secret, cancel) = registry.register();
    msg::backend_key(&mut out, pid, secret);
    msg::ready(&mut out, session.txn_status());
    if write_all(&mut io, &mut out).await.is_err() {
        registry.unregister(pid);
        return;
    }
    let mut conn = Conn { io, rbuf, out: Output::new(), session };
    let _ = conn.message_loop(&cancel).await;
    registry.unregister(pid);
}

/// Handles SSL/GSS requests and CancelRequest; returns the StartupMessage.
async fn startup<IO: AsyncRead + AsyncWrite + Unpin>(
    io: &mut IO,
    buf: &mut BytesMut,
    registry: &CancelRegistry,
) -> Result<Option<StartupInfo>, Close> {
    loop {
        let Some(body) = read_startup(io, buf).await? else { return Ok(None) };
        match codec::decode_startup(&body) {
            Ok(Startup::Ssl) | Ok(Startup::Gss) => {
                io.write_all(b"N").await.map_err(|_| Close::Io)?;
            }
            Ok(Startup::Cancel(pid, secret)) => {
                registry.cancel(pid, secret);
                return Ok(None);
            }
            Ok(Startup::Start(params)) => {
                let mut info = StartupInfo::default();
                for (k, v) in params {
                    match k.as_str() {
                        "user" => info.user = v,
                        "database" => info.database = v,
                        _ => info.params.push((k, v)),
                    }
                }
                if info.user.is_empty() {
                    send_fatal(
                        io,
                        &ErrorReport::fatal(
                            SqlState::InvalidAuthorizationSpecification,
                            "no PostgreSQL user name specified in startup packet",
                        ),
                    )
                    .await;
                    return Err(Close::Fatal);
                }
                if info.database.is_empty() {
                    info.database = info.user.clone();
                }
                return Ok(Some(info));
            }
            Err(e) => {
                send_fatal(io, &e).await;
                return Err(Close::Fatal);
            }
        }
    }
}

/// Runs the SCRAM-SHA-256 exchange.
async fn authenticate<IO: AsyncRead + AsyncWrite + Unpin>(
    io: &mut IO,
    buf: &mut BytesMut,
    verifier: crate::backend::ScramVerifier,
    user: &str,
) -> Result<(), Close> {
    let mut out = BytesMut::new();
    msg::auth_sasl(&mut out);
    write_all(io, &mut out).await?;
    let Some((b'p', body)) = read_message(io, buf).await? else { return Err(Close::Normal) };
    // SASLInitialResponse: mechanism, then int32 length and data.
    let Some(nul) = body.iter().position(|&c| c == 0) else {
        send_fatal(io, &ErrorReport::fatal(SqlState::ProtocolViolation, "malformed SASL message"))
            .await;
        return Err(Close::Fatal);
    };
    if &body[..nul] != b"SCRAM-SHA-256" || body.len() < nul + 5 {
        send_fatal(
            io,
            &ErrorReport::fatal(
                SqlState::ProtocolViolation,
                "client selected an invalid SASL authentication mechanism",
            ),
        )
        .await;
        return Err(Close::Fatal);
    }
    let data = &body[nul + 5..];
    let server_nonce: String = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(rand::random::<[u8; 18]>())
    };
    let (server, first) = match ScramServer::start(verifier, user, data, &server_nonce) {
        Ok(x) => x,
        Err(e) => {
            send_fatal(io, &e).await;
            return Err(Close::Fatal);
        }
    };
    msg::auth_sasl_data(&mut out, 11, first.as_bytes());
    write_all(io, &mut out).await?;
    let Some((b'p', final_msg)) = read_message(io, buf).await? else { return Err(Close::Normal) };
    match server.finish(&final_msg) {
        Ok(fin) => {
            msg::auth_sasl_data(&mut out, 12, fin.as_bytes());
            write_all(io, &mut out).await
        }
        Err(e) => {
            send_fatal(io, &e).await;
            Err(Close::Fatal)
        }
    }
}

impl<S: Session, IO: AsyncRead + AsyncWrite + Unpin + Send> Conn<S, IO> {
    async fn flush(&mut self) -> Result<(), Close> {
        write_all(&mut self.io, self.out.buffer()).await
    }

    fn error(&mut self, e: &ErrorReport) {
        msg::error(self.out.buffer(), e);
    }

    fn notices(&mut self) {
        for n in self.session.take_notices() {
            msg::error(self.out.buffer(), &n);
        }
    }

    async fn ready(&mut self) -> Result<(), Close> {
        for (k, v) in self.session.changed_parameters() {
            msg::parameter_status(self.out.buffer(), &k, &v);
        }
        self.notices();
        let status = self.session.txn_status();
        msg::ready(self.out.buffer(), status);
        self.flush().await
    }

    async fn message_loop(&mut self, cancel: &Notify) -> Result<(), Close> {
        let mut statements: HashMap<String, Arc<S::Statement>> = HashMap::new();
        let mut portals: HashMap<String, S::Portal> = HashMap::new();
        let mut skip_to_sync = false;
        loop {
            let Some((tag, body)) = read_message(&mut self.io, &mut self.rbuf).await? else {
                return Ok(());
            };
            let m = match codec::decode_message(tag, &body) {
                Ok(m) => m,
                Err(e) if e.severity == Severity::Fatal => {
                    self.error(&e);
                    let _ = self.flush().await;
                    return Err(Close::Fatal);
                }
                Err(e) => {
                    self.error(&e);
                    if tag == b'Q' {
                        self.ready().await?;
                    } else {
                        skip_to_sync = true;
                    }
                    continue;
                }
            };
            if skip_to_sync
                && !matches!(m, Frontend::Sync | Frontend::Terminate | Frontend::Query(_))
            {
                continue;
            }
            match m {
                Frontend::Query(sql) => {
                    skip_to_sync = false;
                    self.simple_query(&sql, cancel).await?;
                    portals.remove("");
                }
                Frontend::Parse(name, sql, types) => {
                    if let Err(e) = self.parse(&mut statements, name, &sql, &types) {
                        self.error(&e);
                        skip_to_sync = true;
                    }
                }
                Frontend::Bind(b) => match self.bind(&statements, b) {
                    Ok((name, p)) => {
                        portals.insert(name, p);
                        msg::empty(self.out.buffer(), b'2');
                    }
                    Err(e) => {
                        self.error(&e);
                        skip_to_sync = true;
                    }
                },
                Frontend::Describe(is_stmt, name) => {
                    if let Err(e) = self.describe(&statements, &portals, is_stmt, &name) {
                        self.error(&e);
                        skip_to_sync = true;
                    }
                }
                Frontend::Execute(name, max) => {
                    let Some(mut portal) = portals.remove(&name) else {
                        self.error(&ErrorReport::new(
                            SqlState::InvalidCursorName,
                            format!("portal \"{name}\" does not exist"),
                        ));
                        skip_to_sync = true;
                        continue;
                    };
                    let ok = self.execute(&mut portal, max, cancel).await?;
                    if ok {
                        portals.insert(name, portal);
                    } else {
                        skip_to_sync = true;
                    }
                }
                Frontend::Close(is_stmt, name) => {
                    if is_stmt {
                        statements.remove(&name);
                    } else {
                        portals.remove(&name);
                    }
                    msg::empty(self.out.buffer(), b'3');
                }
                Frontend::Flush => self.flush().await?,
                Frontend::Sync => {
                    skip_to_sync = false;
                    if let Err(e) = self.session.sync().await {
                        self.error(&e);
                    }
                    if self.session.txn_status() == crate::backend::TxnStatus::Idle {
                        portals.clear();
                    }
                    self.ready().await?;
                }
                Frontend::Terminate => return Ok(()),
                Frontend::CopyData(_) | Frontend::CopyDone | Frontend::CopyFail(_) => {}
                Frontend::Password(_) => {
                    self.error(&ErrorReport::new(
                        SqlState::ProtocolViolation,
                        "unexpected password message",
                    ));
                    skip_to_sync = true;
                }
            }
        }
    }

    fn parse(
        &mut self,
        statements: &mut HashMap<String, Arc<S::Statement>>,
        name: String,
        sql: &str,
        types: &[u32],
    ) -> Result<(), ErrorReport> {
        if !name.is_empty() && statements.contains_key(&name) {
            return Err(ErrorReport::new(
                SqlState::DuplicatePreparedStatement,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let mut stmts = self.session.prepare(sql, types)?;
        if stmts.len() > 1 {
            return Err(ErrorReport::new(
                SqlState::SyntaxError,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let Some(stmt) = stmts.pop() else {
            return Err(ErrorReport::new(SqlState::SyntaxError, "empty statement"));
        };
        statements.insert(name, stmt);
        msg::empty(self.out.buffer(), b'1');
        Ok(())
    }

    fn bind(
        &mut self,
        statements: &HashMap<String, Arc<S::Statement>>,
        b: codec::Bind,
    ) -> Result<(String, S::Portal), ErrorReport> {
        let Some(stmt) = statements.get(&b.statement) else {
            return Err(ErrorReport::new(
                SqlState::InvalidSqlStatementName,
                format!("prepared statement \"{}\" does not exist", b.statement),
            ));
        };
        let want = stmt.param_types().len();
        if b.params.len() != want {
            return Err(ErrorReport::new(
                SqlState::ProtocolViolation,
                format!("bind message supplies {} parameters, but prepared statement \"{}\" requires {}", b.params.len(), b.statement, want),
            ));
        }
        let pf = codec::expand_formats(&b.param_formats, b.params.len())?;
        let ncols = stmt.fields().map(|f| f.len()).unwrap_or(0);
        let rf = result_formats(&b.result_formats, ncols);
        let params: Vec<Option<&[u8]>> = b.params.iter().map(|p| p.as_deref()).collect();
        let portal = self.session.bind(stmt, &params, &pf, &rf)?;
        Ok((b.portal, portal))
    }

    fn describe(
        &mut self,
        statements: &HashMap<String, Arc<S::Statement>>,
        portals: &HashMap<String, S::Portal>,
        is_stmt: bool,
        name: &str,
    ) -> Result<(), ErrorReport> {
        let fields = if is_stmt {
            let Some(s) = statements.get(name) else {
                return Err(ErrorReport::new(
                    SqlState::InvalidSqlStatementName,
                    format!("prepared statement \"{name}\" does not exist"),
                ));
            };
            msg::parameter_description(self.out.buffer(), &s.param_types());
            s.fields()
        } else {
            let Some(p) = portals.get(name) else {
                return Err(ErrorReport::new(
                    SqlState::InvalidCursorName,
                    format!("portal \"{name}\" does not exist"),
                ));
            };
            p.fields()
        };
        match fields {
            Some(f) => msg::row_description(self.out.buffer(), &f),
            None => msg::empty(self.out.buffer(), b'n'),
        }
        Ok(())
    }

    /// Runs Execute; returns false if it failed (the caller skips to Sync).
    async fn execute(
        &mut self,
        portal: &mut S::Portal,
        max: usize,
        cancel: &Notify,
    ) -> Result<bool, Close> {
        let notified = cancel.notified();
        tokio::pin!(notified);
        let mut client_gone = false;
        let res = {
            let Conn { io, rbuf, out, session } = self;
            let fut = session.execute(portal, max, out);
            tokio::pin!(fut);
            loop {
                // While the statement runs, keep reading what the client sends
                // (up to a bound), so a vanished client ends its statement
                // (and frees its locks) instead of waiting forever.
                let readable = rbuf.len() < FLUSH_AT;
                tokio::select! {
                    r = &mut fut => break Some(r),
                    _ = &mut notified => break None,
                    n = io.read_buf(rbuf), if readable => match n {
                        Ok(0) | Err(_) => {
                            client_gone = true;
                            break None;
                        }
                        Ok(_) => continue,
                    },
                }
            }
        };
        if client_gone {
            self.session.cancelled();
            return Err(Close::Normal);
        }
        let res = match res {
            Some(r) => r,
            None => {
                self.session.cancelled();
                Err(ErrorReport::new(
                    SqlState::QueryCanceled,
                    "canceling statement due to user request",
                ))
            }
        };
        self.notices();
        match res {
            Ok(ExecOutcome::Complete(tag)) => msg::command_complete(self.out.buffer(), &tag),
            Ok(ExecOutcome::Suspended) => msg::empty(self.out.buffer(), b's'),
            Ok(ExecOutcome::Empty) => msg::empty(self.out.buffer(), b'I'),
            Ok(ExecOutcome::CopyIn { columns, .. }) => return self.copy_in(columns).await,
            Err(e) => {
                self.error(&e);
                return Ok(false);
            }
        }
        if self.out.len() > FLUSH_AT {
            self.flush().await?;
        }
        Ok(true)
    }

    /// The COPY FROM STDIN sub-protocol.
    async fn copy_in(&mut self, columns: usize) -> Result<bool, Close> {
        msg::copy_in_response(self.out.buffer(), columns);
        self.flush().await?;
        let mut failed: Option<ErrorReport> = None;
        loop {
            let Some((tag, body)) = read_message(&mut self.io, &mut self.rbuf).await? else {
                return Err(Close::Normal);
            };
            match tag {
                b'd' => {
                    if failed.is_none() {
                        if let Err(e) = self.session.copy_in_data(&body).await {
                            failed = Some(e);
                        }
                    }
                }
                b'c' => {
                    if let Some(e) = failed {
                        self.error(&e);
                        return Ok(false);
                    }
                    return match self.session.copy_in_done().await {
                        Ok(tag) => {
                            msg::command_complete(self.out.buffer(), &tag);
                            Ok(true)
                        }
                        Err(e) => {
                            self.error(&e);
                            Ok(false)
                        }
                    };
                }
                b'f' => {
                    let m = codec::decode_message(tag, &body).ok();
                    let text = match m {
                        Some(Frontend::CopyFail(t)) => t,
                        _ => String::new(),
                    };
                    let e = failed.unwrap_or_else(|| self.session.copy_in_fail(&text));
                    self.error(&e);
                    return Ok(false);
                }
                b'H' | b'S' => {}
                other => {
                    // The session's own report is replaced by the protocol error.
                    self.session.copy_in_fail("unexpected message during COPY");
                    self.error(&ErrorReport::new(
                        SqlState::ProtocolViolation,
                        format!("unexpected message type 0x{other:02X} during COPY from stdin"),
                    ));
                    return Ok(false);
                }
            }
        }
    }

    async fn simple_query(&mut self, sql: &str, cancel: &Notify) -> Result<(), Close> {
        let stmts = match self.session.prepare(sql, &[]) {
            Ok(s) => s,
            Err(e) => {
                self.error(&e);
                let _ = self.session.sync().await;
                return self.ready().await;
            }
        };
        for stmt in stmts {
            let mut portal = match self.session.bind(&stmt, &[], &[], &[]) {
                Ok(p) => p,
                Err(e) => {
                    self.error(&e);
                    break;
                }
            };
            if let Some(f) = portal.fields() {
                msg::row_description(self.out.buffer(), &f);
            }
            if !self.execute(&mut portal, 0, cancel).await? {
                break;
            }
        }
        if let Err(e) = self.session.sync().await {
            self.error(&e);
        }
        self.ready().await
    }
}

/// Formats for Bind results as a vector (exposed for tests).
pub fn result_formats(codes: &[Format], columns: usize) -> Vec<Format> {
    match codes.len() {
        0 => vec![Format::Text; columns],
        1 => vec![codes[0]; columns],
        _ => codes.to_vec(),
    }
}
