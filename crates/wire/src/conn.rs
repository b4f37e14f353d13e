//! One client connection after startup: the message loop.
//!
//! The loop follows PostgreSQL's postgres.c. A simple Query runs each of its
//! statements and then behaves like Sync. Extended-protocol messages act on
//! named statements and portals that this module stores (the session only
//! creates them). After an error in an extended-protocol message, every
//! message up to the next Sync is discarded, and the error is flushed at
//! once so a client waiting on Flush hears of it.
//!
//! Output is buffered in one [`Output`] and written to the socket:
//! - at ReadyForQuery, i.e. after [`Session::sync`] has ended any implicit
//!   transaction, so a client never hears CommandComplete for a commit that
//!   could still fail before it hears the outcome of that commit;
//! - at Flush, and after an extended-protocol error (as PostgreSQL does);
//! - between statements once more than [`FLUSH_AT`](crate::conn::FLUSH_AT)
//!   bytes are pending. Those bytes precede the transaction's end, exactly as
//!   PostgreSQL streams large results; the outcome is still only known at
//!   ReadyForQuery.
//!
//! A statement runs as a future raced against the connection's cancel
//! signal and against the socket: on a CancelRequest the future is dropped
//! and the client gets 57014; if the client disconnects, the future is
//! dropped and the connection ends. Either way [`Session::cancelled`] undoes
//! the statement's partial effects. A terminate signal
//! (pg_terminate_backend) ends a running statement the same way and then
//! the connection, with FATAL 57P01; an idle connection ends at once.
//!
//! The session's [`Timeouts`] are enforced here too: a statement that runs
//! longer than statement_timeout is cancelled like a CancelRequest (57014),
//! and a connection that waits for the client after ReadyForQuery longer
//! than its idle timeout is closed with FATAL 25P03 (inside a transaction)
//! or 57P05 (outside one).
//!
//! Asynchronous notifications (LISTEN/NOTIFY) are written before each
//! ReadyForQuery and, while the connection waits for the client, as soon as
//! the session says some arrived.
//!
//! While an order to move sessions holds ([`crate::migrate`]), a
//! connection waiting for the client after ReadyForQuery outside a
//! transaction hands itself to the order's target, once per wait; it then
//! ends without a word to the client. `resume` is the other end: it
//! rebuilds a moved session and goes on with the message loop.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use sqlstate::{ErrorReport, Severity, SqlState};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use crate::backend::{
    Backend, Deallocate, ExecOutcome, Format, Portal as _, PortalFetch, Session, StartupInfo,
    Statement as _, Timeouts, TxnStatus,
};
use crate::cancel::{CancelRegistry, ConnControl, Registration};
use crate::codec::{self, Frontend};
use crate::handoff::Socket;
use crate::messages as msg;
use crate::migrate::{CarriedStatement, Envelope, Order};
use crate::output::Output;
use crate::startup;
use crate::transport::{Closed, Transport};

/// What a connection hears from its server besides the client: shutdown
/// (true, or its sender gone) and orders to move.
pub struct Signals {
    /// Server shutdown.
    pub shutdown: watch::Receiver<bool>,
    /// The order to move sessions, while one holds.
    pub orders: watch::Receiver<Option<Arc<Order>>>,
}

/// Pending output above which it is written out between statements.
pub const FLUSH_AT: usize = 1 << 20;

/// Consecutive CopyData messages already buffered are handed to the session
/// as one chunk of up to this many bytes (pgbench -i sends one per row).
const COPY_BATCH: usize = 256 << 10;

/// A SQL MOVE on a protocol-level portal skips its rows this many at a time.
const MOVE_CHUNK: u64 = 1024;

/// How long a client may take from connecting to being authenticated
/// (PostgreSQL's authentication_timeout default).
const STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Who a connection's client is, as the server accepted it.
#[derive(Debug, Clone, Default)]
pub struct Peer {
    /// The client's and the server's address of a TCP connection.
    pub addrs: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
    /// Trusted as local (loopback or unix socket).
    pub local: bool,
    /// The channel-binding data of the TLS the client came over (the
    /// proxy's; see [`crate::proxy_header`]).
    pub tls_binding: Option<Vec<u8>>,
}

/// Runs a connection to completion: startup, authentication, then messages
/// until Terminate, EOF, a FATAL error, server shutdown or a move. Shutdown
/// turning true (or its sender going away) ends the connection the next
/// time it waits for a message.
pub async fn run<B, IO>(
    backend: Arc<B>,
    registry: Arc<CancelRegistry>,
    signals: Signals,
    io: IO,
    peer: Peer,
) where
    B: Backend,
    IO: Socket,
{
    let mut t = Transport::new(io);
    let mut out = BytesMut::new();
    let client = peer.addrs.map(|p| p.0.ip());
    let binding = peer.tls_binding.as_deref();
    let login =
        startup::login(&*backend, &registry, &mut t, (peer.local, client), binding, &mut out);
    let Ok(Ok(mut info)) = tokio::time::timeout(STARTUP_TIMEOUT, login).await else { return };
    msg::auth_ok(&mut out);
    let registration = registry.register();
    info.pid = registration.key().pid;
    info.client_addr = peer.addrs.map(|p| p.0);
    info.server_addr = peer.addrs.map(|p| p.1);
    info.control = registration.control().clone();
    let session = match backend.open(&info).await {
        Ok(s) => s,
        Err(e) => {
            t.fatal_after(&mut out, &e).await;
            return;
        }
    };
    for (k, v) in session.parameter_status() {
        msg::parameter_status(&mut out, &k, &v);
    }
    let key = registration.key();
    msg::backend_key(&mut out, key.pid, key.secret);
    msg::ready(&mut out, session.txn_status());
    if t.send(&mut out).await.is_err() {
        return;
    }
    let conn = Conn::new(t, session, registration, signals, info, HashMap::new());
    conn.serve().await;
}

/// Serves a session another process moved here (see the module docs):
/// rebuilds it from `env`, tells the sender over `sender` whether it took
/// the client (and closes that), and if it did, serves it, starting with
/// the client bytes the sender had read (`pending`).
pub(crate) async fn resume<B, IO>(
    backend: Arc<B>,
    registry: Arc<CancelRegistry>,
    signals: Signals,
    io: IO,
    env: Envelope,
    pending: Vec<u8>,
    mut sender: tokio::net::UnixStream,
) where
    B: Backend,
    IO: Socket,
{
    let Some(registration) = registry.register_key(env.key()) else {
        let why = "its cancel key is in use in the receiving process".to_string();
        return crate::migrate::answer(&mut sender, Err(why)).await;
    };
    let info = env.startup(registration.control().clone());
    let mut session = match backend.resume(&info, &env.session).await {
        Ok(s) => s,
        Err(e) => return crate::migrate::answer(&mut sender, Err(e.message)).await,
    };
    let mut statements = HashMap::new();
    for st in env.statements {
        match session.prepare(&st.sql, &st.types).await {
            Ok(mut v) if v.len() == 1 => {
                statements.insert(st.name, v.remove(0));
            }
            Ok(_) => {
                session.close().await;
                let why = format!("statement \"{}\" did not prepare as one", st.name);
                return crate::migrate::answer(&mut sender, Err(why)).await;
            }
            Err(e) => {
                session.close().await;
                let why = format!("statement \"{}\": {}", st.name, e.message);
                return crate::migrate::answer(&mut sender, Err(why)).await;
            }
        }
    }
    // The client knows every setting's value already.
    session.changed_parameters();
    crate::migrate::answer(&mut sender, Ok(())).await;
    drop(sender);
    let mut t = Transport::new(io);
    t.rbuf.extend_from_slice(&pending);
    tracing::debug!(pid = info.pid, "a session moved here");
    Conn::new(t, session, registration, signals, info, statements).serve().await;
}

/// The state of one connection after startup.
struct Conn<S: Session, IO> {
    t: Transport<IO>,
    out: Output,
    session: S,
    registration: Registration,
    shutdown: watch::Receiver<bool>,
    orders: watch::Receiver<Option<Arc<Order>>>,
    /// Who the client logged in as (a move takes it along).
    info: StartupInfo,
    /// A move was tried in this wait for the client (and failed).
    move_tried: bool,
    /// Prepared statements by protocol name ("" is the unnamed one).
    statements: HashMap<String, Arc<S::Statement>>,
    /// Portals by protocol name ("" is the unnamed one).
    portals: HashMap<String, S::Portal>,
    /// An extended-protocol message failed: discard until Sync.
    skip_to_sync: bool,
    /// A FATAL error was queued: close after sending it.
    fatal: bool,
    /// ReadyForQuery was the last thing sent: the connection is idle, and
    /// the idle timeouts run.
    ready: bool,
    /// The connection's cancel count when the client's current request
    /// began (its first message after ReadyForQuery): a cancel that came
    /// while no statement ran yet (parsing, between the statements of one
    /// query string) still cancels the next one, as PostgreSQL's pending
    /// cancel does.
    cancel_mark: u64,
}

/// How a running statement's race ended.
enum Raced<T> {
    Done(T),
    Cancelled,
    TimedOut,
    Terminated,
    ClientGone,
}

type Step<T = ()> = Result<Result<T, ErrorReport>, Closed>;

impl<S: Session, IO: Socket> Conn<S, IO> {
    fn new(
        t: Transport<IO>,
        session: S,
        registration: Registration,
        signals: Signals,
        info: StartupInfo,
        statements: HashMap<String, Arc<S::Statement>>,
    ) -> Conn<S, IO> {
        Conn {
            t,
            out: Output::new(),
            session,
            registration,
            shutdown: signals.shutdown,
            orders: signals.orders,
            info,
            move_tried: false,
            statements,
            portals: HashMap::new(),
            skip_to_sync: false,
            fatal: false,
            ready: true,
            cancel_mark: 0,
        }
    }

    /// The message loop, then the session's end.
    async fn serve(mut self) {
        let end = self.message_loop().await;
        self.session.close().await;
        tracing::debug!(pid = self.info.pid, ?end, "connection closed");
    }

    /// Hands the connection to the order's target if it is at a safe point
    /// (see the module docs): true once the target serves the client.
    async fn try_move(&mut self) -> Result<bool, Closed> {
        if !self.ready || self.move_tried || self.session.txn_status() != TxnStatus::Idle {
            return Ok(false);
        }
        let Some(order) = self.orders.borrow().clone().filter(|o| o.live()) else {
            return Ok(false);
        };
        self.move_tried = true;
        // What has arrived for the client goes out before it moves.
        if self.write_notifications() {
            self.flush().await?;
        }
        let state = match self.session.export() {
            Ok(s) => s,
            Err(why) => {
                tracing::debug!(pid = self.info.pid, why, "a session stays");
                return Ok(false);
            }
        };
        let mut env = Envelope::new(&self.info, self.registration.key(), state);
        for (name, st) in &self.statements {
            let Some(sql) = st.source() else { return Ok(false) };
            let (name, sql, types) = (name.clone(), sql.to_string(), st.param_types());
            env.statements.push(CarriedStatement { name, sql, types });
        }
        let Some((fd, unread)) = self.t.io.handle() else { return Ok(false) };
        let mut pending = self.t.rbuf.to_vec();
        pending.extend_from_slice(unread);
        match crate::migrate::send(&order.target, fd, &env.encode(&pending)).await {
            Ok(true) => {
                order.moved_one();
                tracing::debug!(pid = self.info.pid, "a session moved away");
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) => {
                tracing::info!(error = %e, "could not reach the process to move a session to");
                Ok(false)
            }
        }
    }

    async fn message_loop(&mut self) -> Result<(), Closed> {
        loop {
            let Some((tag, body)) = self.next_message().await? else { return Ok(()) };
            let m = match codec::decode_message(tag, &body) {
                Ok(m) => m,
                Err(e) if e.severity == Severity::Fatal => return Err(self.close_fatal(&e).await),
                Err(_) if self.skip_to_sync && tag != b'S' => continue,
                Err(e) if tag == b'Q' || tag == b'S' => {
                    self.write_error(&e);
                    self.sync().await?;
                    continue;
                }
                Err(e) => {
                    self.extended_error(&e).await?;
                    continue;
                }
            };
            if self.skip_to_sync && !matches!(m, Frontend::Sync | Frontend::Terminate) {
                continue;
            }
            if let Frontend::Terminate = m {
                return Ok(());
            }
            self.dispatch(m).await?;
            if self.fatal {
                let _ = self.flush().await;
                return Err(Closed::Fatal);
            }
        }
    }

    async fn dispatch(&mut self, m: Frontend) -> Result<(), Closed> {
        let r = match m {
            Frontend::Query(sql) => return self.simple_query(&sql).await,
            Frontend::Sync => return self.sync().await,
            Frontend::Flush => return self.flush().await,
            Frontend::Parse(name, sql, types) => self.parse(name, &sql, &types).await,
            Frontend::Bind(b) => self.bind(b),
            Frontend::Describe(is_stmt, name) => self.describe(is_stmt, &name),
            Frontend::Execute(name, max) => self.execute_portal(name, max).await?,
            Frontend::Close(is_stmt, name) => {
                self.close(is_stmt, &name);
                Ok(())
            }
            // Outside COPY these are ignored, as the protocol specifies.
            Frontend::CopyData(_) | Frontend::CopyDone | Frontend::CopyFail(_) => Ok(()),
            Frontend::Password(_) => {
                let e = ErrorReport::fatal(
                    SqlState::ProtocolViolation,
                    "invalid frontend message type 112",
                );
                return Err(self.close_fatal(&e).await);
            }
            Frontend::Terminate => Ok(()),
        };
        match r {
            Ok(()) => Ok(()),
            Err(e) => self.extended_error(&e).await,
        }
    }

    /// The next message, or None at EOF. While idle the connection also
    /// watches for server shutdown and pg_terminate_backend, which end it
    /// with FATAL 57P01, delivers notifications as they arrive, and after
    /// ReadyForQuery closes it once an idle timeout runs out.
    async fn next_message(&mut self) -> Result<Option<(u8, Bytes)>, Closed> {
        let idle = self.idle_limit();
        let deadline = idle.map(|(limit, _)| tokio::time::Instant::now() + limit);
        loop {
            if let Some(f) = self.t.buffered_frame().await? {
                if self.ready {
                    self.cancel_mark = self.registration.control().cancels();
                }
                self.ready = false;
                self.move_tried = false;
                return Ok(Some(f));
            }
            if self.try_move().await? {
                return Err(Closed::Moved);
            }
            let woke = {
                let Conn { t, session, shutdown, registration, orders, .. } = &mut *self;
                let ordered = async {
                    if orders.changed().await.is_err() {
                        std::future::pending::<()>().await;
                    }
                };
                let control = registration.control();
                let terminate = control.terminate_signal().notified();
                tokio::pin!(terminate);
                terminate.as_mut().enable();
                if control.is_terminated() {
                    Woke::Down
                } else {
                    tokio::select! {
                        r = t.fill() => Woke::Filled(r),
                        _ = shutdown.wait_for(|down| *down) => Woke::Down,
                        _ = &mut terminate => Woke::Down,
                        _ = session.notified() => Woke::Notified,
                        _ = until(deadline) => Woke::Idle,
                        _ = ordered => Woke::Ordered,
                    }
                }
            };
            match woke {
                Woke::Down => return Err(self.close_fatal(&terminating()).await),
                Woke::Idle => {
                    let in_transaction = idle.is_some_and(|(_, t)| t);
                    return Err(self.close_fatal(&idle_timeout(in_transaction)).await);
                }
                Woke::Notified => {
                    if self.write_notifications() {
                        self.flush().await?;
                    }
                }
                Woke::Ordered => self.move_tried = false,
                Woke::Filled(Ok(())) => {}
                Woke::Filled(Err(Closed::Eof)) => return Ok(None),
                Woke::Filled(Err(c)) => return Err(c),
            }
        }
    }

    /// How long the connection may now wait for the client, and whether a
    /// transaction is open (which timeout ends the wait): only after
    /// ReadyForQuery.
    fn idle_limit(&self) -> Option<(std::time::Duration, bool)> {
        if !self.ready {
            return None;
        }
        let Timeouts { idle_in_transaction, idle_session, .. } = self.session.timeouts();
        match self.session.txn_status() {
            TxnStatus::Idle => idle_session.map(|d| (d, false)),
            TxnStatus::InBlock | TxnStatus::Failed => idle_in_transaction.map(|d| (d, true)),
        }
    }

    /// Queues the session's pending notifications; true if there were any.
    fn write_notifications(&mut self) -> bool {
        let notes = self.session.take_notifications();
        for n in &notes {
            msg::notification(self.out.buffer(), n);
        }
        !notes.is_empty()
    }

    async fn flush(&mut self) -> Result<(), Closed> {
        self.t.send(self.out.buffer()).await
    }

    /// Queues an ErrorResponse; a FATAL one closes the connection after the
    /// current message.
    fn write_error(&mut self, e: &ErrorReport) {
        self.fatal |= e.severity == Severity::Fatal;
        msg::error(self.out.buffer(), e);
    }

    /// An extended-protocol message failed: report it now and skip to Sync.
    async fn extended_error(&mut self, e: &ErrorReport) -> Result<(), Closed> {
        self.write_error(e);
        self.skip_to_sync = true;
        self.flush().await
    }

    async fn close_fatal(&mut self, e: &ErrorReport) -> Closed {
        self.t.fatal_after(self.out.buffer(), e).await
    }

    fn write_notices(&mut self) {
        for n in self.session.take_notices() {
            self.write_error(&n);
        }
    }

    /// Sync (and the end of a simple Query): end the implicit transaction,
    /// then report changed settings, notices and ReadyForQuery, and flush.
    async fn sync(&mut self) -> Result<(), Closed> {
        self.skip_to_sync = false;
        if let Err(e) = self.session.sync().await {
            self.write_error(&e);
        }
        let status = self.session.txn_status();
        if status == TxnStatus::Idle {
            // Portals do not outlive their transaction.
            self.portals.clear();
        }
        for (k, v) in self.session.changed_parameters() {
            msg::parameter_status(self.out.buffer(), &k, &v);
        }
        self.write_notices();
        self.write_notifications();
        msg::ready(self.out.buffer(), status);
        self.ready = true;
        self.flush().await
    }

    async fn simple_query(&mut self, sql: &str) -> Result<(), Closed> {
        // A simple Query destroys the unnamed statement and portal.
        self.statements.remove("");
        self.portals.remove("");
        if let Err(e) = self.simple_statements(sql).await? {
            self.write_error(&e);
        }
        if self.fatal {
            return Ok(());
        }
        self.sync().await
    }

    /// Runs each statement of a simple Query; stops at the first error.
    async fn simple_statements(&mut self, sql: &str) -> Step {
        let stmts = match self.session.prepare(sql, &[]).await {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        if stmts.is_empty() {
            msg::empty(self.out.buffer(), b'I');
        }
        let last = stmts.len().saturating_sub(1);
        for (i, stmt) in stmts.into_iter().enumerate() {
            let on_portal = stmt.portal_fetch().filter(|f| {
                self.portals.contains_key(&f.portal)
                    && self.session.cursor_fields(&f.portal).is_none()
            });
            if let Some(f) = on_portal {
                if let Err(e) = self.fetch_portal(f, i == last).await? {
                    return Ok(Err(e));
                }
                continue;
            }
            match stmt.deallocates() {
                Some(Deallocate::Name(n)) if !n.is_empty() && self.statements.contains_key(&n) => {
                    self.statements.remove(&n);
                    if let Err(e) = self.complete_here("DEALLOCATE", i == last).await {
                        return Ok(Err(e));
                    }
                    continue;
                }
                // The session drops its own (SQL PREPARE) and says so.
                Some(Deallocate::All) => self.statements.retain(|name, _| name.is_empty()),
                _ => {}
            }
            let mut portal = match self.session.bind(&stmt, &[], &[], &[]) {
                Ok(p) => p,
                Err(e) => return Ok(Err(e)),
            };
            if let Some(f) = portal.fields() {
                msg::row_description(self.out.buffer(), &f);
            }
            // The last statement's implicit transaction commits before its
            // CommandComplete, as in PostgreSQL: a failing COMMIT (a deferred
            // constraint) is then the statement's only outcome.
            if let Err(e) = self.execute(&mut portal, 0, i == last).await? {
                return Ok(Err(e));
            }
            if self.out.len() > FLUSH_AT {
                self.flush().await?;
            }
        }
        Ok(Ok(()))
    }

    async fn parse(&mut self, name: String, sql: &str, types: &[u32]) -> Result<(), ErrorReport> {
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(ErrorReport::new(
                SqlState::DuplicatePreparedStatement,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let mut stmts = self.session.prepare(sql, types).await?;
        if stmts.len() > 1 {
            return Err(ErrorReport::new(
                SqlState::SyntaxError,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let Some(stmt) = stmts.pop() else {
            // The Session contract returns a statement for an empty string;
            // one that does not cannot be stored.
            return Err(ErrorReport::new(SqlState::SyntaxError, "empty query"));
        };
        self.statements.insert(name, stmt);
        msg::empty(self.out.buffer(), b'1');
        Ok(())
    }

    fn bind(&mut self, b: codec::Bind) -> Result<(), ErrorReport> {
        let stmt = self.must_get_statement(&b.statement)?.clone();
        let want = stmt.param_types().len();
        if b.params.len() != want {
            return Err(ErrorReport::new(
                SqlState::ProtocolViolation,
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{}\" requires {want}",
                    b.params.len(),
                    b.statement
                ),
            ));
        }
        let param_formats = codec::expand_param_formats(&b.param_formats, b.params.len())?;
        let result_formats = match stmt.fields() {
            Some(f) => codec::expand_result_formats(&b.result_formats, f.len())?,
            None => Vec::new(),
        };
        let params: Vec<Option<&[u8]>> = b.params.iter().map(|p| p.as_deref()).collect();
        // Binding replaces a portal of the same name (the unnamed one, usually).
        self.portals.remove(&b.portal);
        let portal = self.session.bind(&stmt, &params, &param_formats, &result_formats)?;
        self.portals.insert(b.portal, portal);
        msg::empty(self.out.buffer(), b'2');
        Ok(())
    }

    fn describe(&mut self, is_stmt: bool, name: &str) -> Result<(), ErrorReport> {
        let fields = if is_stmt {
            let stmt = self.must_get_statement(name)?;
            let (types, fields) = (stmt.param_types(), stmt.fields());
            msg::parameter_description(self.out.buffer(), &types);
            fields
        } else {
            match self.portals.get(name) {
                Some(p) => p.fields(),
                // A SQL cursor is a portal too (psycopg describes it by name).
                None => match self.session.cursor_fields(name) {
                    Some(f) => Some(f),
                    None => return Err(no_portal(name)),
                },
            }
        };
        match fields {
            Some(f) => msg::row_description(self.out.buffer(), &f),
            None => msg::empty(self.out.buffer(), b'n'),
        }
        Ok(())
    }

    fn close(&mut self, is_stmt: bool, name: &str) {
        // Closing a name that does not exist is not an error.
        if is_stmt {
            self.statements.remove(name);
        } else {
            self.portals.remove(name);
        }
        msg::empty(self.out.buffer(), b'3');
    }

    fn must_get_statement(&self, name: &str) -> Result<&Arc<S::Statement>, ErrorReport> {
        self.statements.get(name).ok_or_else(|| {
            ErrorReport::new(
                SqlState::InvalidSqlStatementName,
                format!("prepared statement \"{name}\" does not exist"),
            )
        })
    }

    /// Execute: runs a stored portal; a suspended or finished portal stays
    /// stored (a failed one is dropped, as its transaction failed).
    async fn execute_portal(&mut self, name: String, max: usize) -> Step {
        let Some(mut portal) = self.portals.remove(&name) else { return Ok(Err(no_portal(&name))) };
        let r = self.execute(&mut portal, max, false).await?;
        if r.is_ok() {
            self.portals.insert(name, portal);
        }
        Ok(r)
    }

    /// A SQL `FETCH`/`MOVE` of a protocol-level portal: its rows go out as
    /// the FETCH's (RowDescription, DataRows, `FETCH n`), or are skipped a
    /// chunk at a time for MOVE (`MOVE n`); the portal stays, further on.
    /// With `commit`, ends the implicit transaction first, as the last
    /// statement of a simple Query does.
    async fn fetch_portal(&mut self, f: PortalFetch, commit: bool) -> Step {
        let Some(want) = f.forward else {
            return Ok(Err(ErrorReport::new(
                SqlState::ObjectNotInPrerequisiteState,
                "cursor can only scan forward",
            )
            .with_hint("Declare it with SCROLL option to enable backward scan.")));
        };
        let Some(mut portal) = self.portals.remove(&f.portal) else {
            return Ok(Err(no_portal(&f.portal)));
        };
        if !f.moving {
            let fields = portal.fields();
            if fields.iter().flatten().any(|d| d.format != Format::Text) {
                // The rows would go out in the binary form chosen at Bind,
                // where PostgreSQL sends a simple Query's rows as text.
                let e = ErrorReport::new(
                    SqlState::FeatureNotSupported,
                    format!("FETCH of portal \"{}\", bound for binary results", f.portal),
                );
                self.portals.insert(f.portal, portal);
                return Ok(Err(e));
            }
            if let Some(fields) = fields {
                msg::row_description(self.out.buffer(), &fields);
            }
        }
        let mut done = 0u64;
        while done < want {
            // 0 asks for every row; a MOVE buffers at most a chunk.
            let left = want - done;
            let max = match (f.moving, want) {
                (true, _) => left.min(MOVE_CHUNK),
                (false, u64::MAX) => 0,
                (false, _) => left,
            };
            let max = usize::try_from(max).unwrap_or(0);
            let (mark, before) = (self.out.len(), self.out.rows_written());
            let outcome = self.run_portal(&mut portal, max).await?;
            done += self.out.rows_written() - before;
            if f.moving {
                self.out.buffer().truncate(mark);
            }
            match outcome {
                Ok(ExecOutcome::Suspended) => {}
                Ok(_) => break,
                Err(e) => return Ok(Err(e)),
            }
        }
        self.write_notices();
        self.portals.insert(f.portal, portal);
        let verb = if f.moving { "MOVE" } else { "FETCH" };
        Ok(self.complete_here(&format!("{verb} {done}"), commit).await)
    }

    /// CommandComplete with `tag` for a statement the wire layer ran
    /// itself; with `commit`, after ending the implicit transaction, as
    /// for the last statement of a simple Query.
    async fn complete_here(&mut self, tag: &str, commit: bool) -> Result<(), ErrorReport> {
        if commit {
            self.session.sync().await?;
        }
        msg::command_complete(self.out.buffer(), tag);
        Ok(())
    }

    /// Runs a portal and writes how it ended (CommandComplete,
    /// PortalSuspended, EmptyQueryResponse, or the whole COPY IN exchange);
    /// with `commit`, ends the implicit transaction before CommandComplete.
    async fn execute(&mut self, portal: &mut S::Portal, max: usize, commit: bool) -> Step {
        let outcome = self.run_portal(portal, max).await?;
        self.write_notices();
        let tag = match outcome {
            Ok(ExecOutcome::Complete(tag)) => tag,
            Ok(ExecOutcome::Suspended) => {
                msg::empty(self.out.buffer(), b's');
                return Ok(Ok(()));
            }
            Ok(ExecOutcome::Empty) => {
                msg::empty(self.out.buffer(), b'I');
                return Ok(Ok(()));
            }
            Ok(ExecOutcome::CopyIn { format, columns }) => {
                match self.copy_in(format, columns).await? {
                    Ok(tag) => tag,
                    Err(e) => return Ok(Err(e)),
                }
            }
            Err(e) => return Ok(Err(e)),
        };
        if commit {
            if let Err(e) = self.session.sync().await {
                return Ok(Err(e));
            }
        }
        msg::command_complete(self.out.buffer(), &tag);
        Ok(Ok(()))
    }

    /// Races the session's execute future against cancellation,
    /// statement_timeout and the client going away.
    async fn run_portal(&mut self, portal: &mut S::Portal, max: usize) -> Step<ExecOutcome> {
        if self.registration.control().cancels() != self.cancel_mark {
            // A cancel that came before the statement started: it fails
            // like one cancelled as it ran (an open block is aborted).
            self.session.cancelled();
            return Ok(Err(ErrorReport::cancelled_by_user()));
        }
        let limit = self.session.timeouts().statement;
        let deadline = limit.map(|d| tokio::time::Instant::now() + d);
        let Conn { t, out, session, registration, .. } = self;
        let fut = session.execute(portal, max, out);
        match race(fut, registration.control(), t, deadline).await {
            Raced::Done(r) => Ok(r),
            Raced::Cancelled => {
                self.session.cancelled();
                Ok(Err(ErrorReport::cancelled_by_user()))
            }
            Raced::TimedOut => {
                self.session.cancelled();
                Ok(Err(ErrorReport::statement_timeout()))
            }
            Raced::Terminated => {
                self.session.cancelled();
                Err(self.close_fatal(&terminating()).await)
            }
            Raced::ClientGone => {
                self.session.cancelled();
                Err(Closed::Eof)
            }
        }
    }

    /// The COPY FROM STDIN sub-protocol; returns the CommandComplete tag.
    /// A data error is remembered and reported when the client finishes
    /// (CopyDone or CopyFail), so the stream stays in step.
    async fn copy_in(&mut self, format: Format, columns: usize) -> Step<String> {
        msg::copy_in_response(self.out.buffer(), format, columns);
        self.flush().await?;
        let mut failed: Option<ErrorReport> = None;
        loop {
            let (tag, body) = self.t.frame().await?;
            match tag {
                b'd' => {
                    let data = self.coalesce_copy_data(body).await?;
                    if failed.is_none() {
                        failed = self.session.copy_in_data(&data).await.err();
                    }
                }
                b'c' => {
                    return Ok(match failed {
                        Some(e) => Err(e),
                        None => self.session.copy_in_done().await,
                    });
                }
                b'f' => {
                    let text = match codec::decode_message(tag, &body) {
                        Ok(Frontend::CopyFail(t)) => t,
                        _ => String::new(),
                    };
                    return Ok(Err(failed.unwrap_or_else(|| self.session.copy_in_fail(&text))));
                }
                // Flush and Sync are ignored during COPY, per protocol.
                b'H' | b'S' => {}
                other => {
                    let e = ErrorReport::new(
                        SqlState::ProtocolViolation,
                        format!("unexpected message type 0x{other:02X} during COPY from stdin"),
                    );
                    let _ = self.session.copy_in_fail(&e.message);
                    return Ok(Err(e));
                }
            }
        }
    }

    /// Appends the CopyData messages that are already buffered to `first`,
    /// so the session parses one large chunk instead of many small ones.
    async fn coalesce_copy_data(&mut self, first: Bytes) -> Result<Bytes, Closed> {
        if codec::peek_complete(&self.t.rbuf) != Some(b'd') {
            return Ok(first);
        }
        let mut batch = BytesMut::with_capacity(COPY_BATCH.min(first.len() * 64));
        batch.extend_from_slice(&first);
        while batch.len() < COPY_BATCH && codec::peek_complete(&self.t.rbuf) == Some(b'd') {
            let Some((_, more)) = self.t.buffered_frame().await? else { break };
            batch.extend_from_slice(&more);
        }
        Ok(batch.freeze())
    }
}

/// What woke a connection waiting for the client.
enum Woke {
    Filled(Result<(), Closed>),
    Down,
    Notified,
    Idle,
    Ordered,
}

/// Resolves at `deadline`; never without one.
async fn until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// FATAL 57P01, for server shutdown and pg_terminate_backend.
fn terminating() -> ErrorReport {
    ErrorReport::fatal(
        SqlState::AdminShutdown,
        "terminating connection due to administrator command",
    )
}

/// The FATAL error that ends a connection idle past its timeout: 25P03
/// inside a transaction block, 57P05 outside one.
fn idle_timeout(in_transaction: bool) -> ErrorReport {
    match in_transaction {
        true => ErrorReport::fatal(
            SqlState::IdleInTransactionSessionTimeout,
            "terminating connection due to idle-in-transaction timeout",
        ),
        false => ErrorReport::fatal(
            SqlState::IdleSessionTimeout,
            "terminating connection due to idle-session timeout",
        ),
    }
}

fn no_portal(name: &str) -> ErrorReport {
    ErrorReport::new(SqlState::InvalidCursorName, format!("portal \"{name}\" does not exist"))
}

/// Polls `fut` until it finishes, the cancel or terminate signal fires, or
/// the client closes its socket. Bytes the client sends meanwhile (a
/// pipelined next message) are kept in the read buffer, up to [`FLUSH_AT`]
/// of them. Both signals are listened for before `fut` first runs, so a
/// statement that signals its own connection is interrupted too. At
/// `deadline` (statement_timeout) the statement is cut off.
async fn race<F: Future, IO: AsyncRead + AsyncWrite + Unpin>(
    fut: F,
    control: &ConnControl,
    t: &mut Transport<IO>,
    deadline: Option<tokio::time::Instant>,
) -> Raced<F::Output> {
    let cancelled = control.cancel_signal().notified();
    let terminated = control.terminate_signal().notified();
    tokio::pin!(fut, cancelled, terminated);
    cancelled.as_mut().enable();
    terminated.as_mut().enable();
    if control.is_terminated() {
        return Raced::Terminated;
    }
    loop {
        let readable = t.rbuf.len() < FLUSH_AT;
        tokio::select! {
            r = &mut fut => {
                // A signal sent while the statement ran its last step (its
                // own pg_cancel_backend, say) still interrupts it.
                let (c, t) = std::future::poll_fn(|cx| {
                    let c = cancelled.as_mut().poll(cx).is_ready();
                    let t = terminated.as_mut().poll(cx).is_ready();
                    std::task::Poll::Ready((c, t))
                })
                .await;
                return match (c, t) {
                    (_, true) => Raced::Terminated,
                    (true, _) => Raced::Cancelled,
                    _ => Raced::Done(r),
                };
            }
            _ = &mut cancelled => return Raced::Cancelled,
            _ = &mut terminated => return Raced::Terminated,
            _ = until(deadline) => return Raced::TimedOut,
            r = t.fill(), if readable => {
                if r.is_err() {
                    return Raced::ClientGone;
                }
            }
        }
    }
}
