//! The KV server: the node's transactions served over the KV RPC
//! (`kvrpc::proto`) on TCP and unix sockets. With a TLS configuration
//! (`strata kv --tls`) every TCP connection is TLS first (for SQL processes
//! on other machines); the unix socket stays plain (same machine, private
//! directory).
//!
//! This is the last line of defence between tenants. A connection must say
//! Hello with a tenant's token first (or with the pool token, and then Bind
//! with a tenant's token: a pooled SQL process); the server binds the
//! connection to that tenant, and every transaction it opens is an [`EmbeddedTxn`] of the
//! bound tenant, whose calls check every key and range against it. Nothing
//! a request says about tenants is trusted: keys are decoded and checked
//! again here. A malformed frame, an absurd length or an unknown message
//! closes that one connection; the server goes on serving the others.
//!
//! Each remote transaction runs as its own task fed by a channel, so its
//! requests are applied in the order the client sent them while a lock wait
//! in one transaction holds up no other. A Cancel (the client stopped
//! waiting) abandons the request in progress, as dropping the future does
//! in the embedded client; End aborts the transaction.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use kvapi::{Error, Key, KeyRange, LockMode, Result, TenantId, Txn};
use kvrpc::proto::{
    self, AdminCall, AdminReply, Call, LockedKey, Op, Reply, ScanOrder, TenantInfo, ToClient,
    ToServer, WireError,
};
use kvrpc::Secret;
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch, Notify};
use tokio_util::codec::Framed;

use crate::node::{KvNode, Shared};
use crate::tenants;
use crate::txn::EmbeddedTxn;

/// How long a new connection may take to say Hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// A KV server over one node.
pub struct KvServer {
    shared: Arc<Shared>,
    secret: Secret,
    conns: Mutex<HashMap<u32, ConnInfo>>,
    next_conn: AtomicU32,
    /// Admin calls run one at a time (create and drop are rare).
    admin: tokio::sync::Mutex<()>,
    /// When each tenant last had a client session (microseconds), as far
    /// as this server has seen or read back.
    active: Mutex<HashMap<u64, i64>>,
}

/// What the server knows of one connection (for `tenant list` and drop).
struct ConnInfo {
    tenant: TenantId,
    pid: u32,
    admin: bool,
    sessions: u32,
    /// Closes the connection (its tenant was dropped).
    kick: Arc<Notify>,
}

impl KvNode {
    /// A server for this node that accepts tokens made from `secret`. Makes
    /// the `default` tenant if the registry has none.
    pub async fn server(&self, secret: Secret) -> Result<Arc<KvServer>> {
        tenants::ensure_default(&self.shared).await?;
        Ok(Arc::new(KvServer {
            shared: self.shared.clone(),
            secret,
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU32::new(1),
            admin: tokio::sync::Mutex::new(()),
            active: Mutex::new(HashMap::new()),
        }))
    }

    /// Looks tenant `name` up in the registry (making `default` first if
    /// needed): the single-process server uses it to find its tenant.
    pub async fn tenant_id(&self, name: &str) -> Result<Option<TenantId>> {
        tenants::ensure_default(&self.shared).await?;
        Ok(tenants::lookup(&self.shared, name).await?.map(|r| TenantId(r.id)))
    }
}

/// What a connection's Hello made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A tenant's SQL process.
    Tenant,
    /// Tenant management (the proxy, `strata tenant`).
    Admin,
    /// A pooled SQL process: nothing until its Bind.
    Pool,
}

/// The requests of one remote transaction, in order.
type TxnQueue = mpsc::UnboundedSender<(u64, Vec<Op>, Call)>;

/// Which remote transaction a request belongs to.
struct Remote {
    tenant: TenantId,
    conn_no: u32,
    handle: u64,
}

/// A remote transaction as its connection holds it.
enum Slot {
    /// No request of it is running: the reader runs calls that cannot wait
    /// (reads, sizes, try-locks) inline, with no task hop.
    Idle(Box<TxnState>),
    /// A task runs a call that may wait (a lock, a commit); later requests
    /// queue behind it, and the task puts the state back when it is done.
    Busy {
        queue: TxnQueue,
        /// Requests with ids up to this value are abandoned.
        cancel: watch::Sender<u64>,
    },
}

/// A remote transaction's state between requests.
struct TxnState {
    /// None once it committed.
    txn: Option<EmbeddedTxn>,
    /// The first write the transaction refused: every later call fails
    /// too, since the client's mirror of its writes no longer matches.
    broken: Option<WireError>,
}

type Txns = Arc<Mutex<HashMap<u64, Slot>>>;
type Out = mpsc::UnboundedSender<ToClient>;

impl KvServer {
    /// Accepts connections on `tcp` (over TLS with `tls`) and `unix` until
    /// the future is dropped.
    pub async fn serve(
        self: Arc<Self>,
        tcp: Option<tokio::net::TcpListener>,
        unix: Option<tokio::net::UnixListener>,
        tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
    ) {
        let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
        loop {
            let tcp_accept = async {
                match &tcp {
                    Some(l) => l.accept().await.map(|(s, _)| s),
                    None => std::future::pending().await,
                }
            };
            let unix_accept = async {
                match &unix {
                    Some(l) => l.accept().await.map(|(s, _)| s),
                    None => std::future::pending().await,
                }
            };
            let failed = tokio::select! {
                r = tcp_accept => r.map(|s| self.clone().start_tcp(s, acceptor.clone())),
                r = unix_accept => r.map(|s| {
                    tokio::spawn(self.clone().serve_conn(s));
                }),
            };
            if let Err(e) = failed {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }

    /// Serves a TCP connection, after a TLS handshake (bounded by
    /// [`HELLO_TIMEOUT`]) if `tls`, in a task of its own.
    fn start_tcp(
        self: Arc<Self>,
        s: tokio::net::TcpStream,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) {
        let _ = s.set_nodelay(true);
        tokio::spawn(async move {
            let Some(acceptor) = tls else { return self.serve_conn(s).await };
            match tokio::time::timeout(HELLO_TIMEOUT, acceptor.accept(s)).await {
                Ok(Ok(t)) => self.serve_conn(t).await,
                Ok(Err(e)) => tracing::debug!(error = %e, "a TLS handshake failed"),
                Err(_) => tracing::debug!("a TLS handshake timed out"),
            }
        });
    }

    /// Serves one connection until it closes.
    pub async fn serve_conn<IO: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
        self: Arc<Self>,
        io: IO,
    ) {
        let mut framed = Framed::new(io, proto::codec());
        let hello = tokio::time::timeout(HELLO_TIMEOUT, framed.next()).await;
        let Ok(Some(Ok(frame))) = hello else { return };
        let mut bound = self.authenticate(&frame, None).await;
        if let Ok((_, Role::Pool, pid)) = bound {
            // A pooled SQL process: it waits, however long, for a tenant.
            let welcome = ToClient::Welcome { tenant: 0, conn: 0 };
            if framed.send(proto::encode(&welcome)).await.is_err() {
                return;
            }
            let Some(Ok(frame)) = framed.next().await else { return };
            bound = self.authenticate(&frame, Some(pid)).await;
        }
        let (tenant, admin, pid) = match bound {
            Ok((tenant, role, pid)) => (tenant, role == Role::Admin, pid),
            Err(e) => {
                tracing::warn!(error = %e, "refused a KV connection");
                let _ = framed.send(proto::encode(&ToClient::Goodbye(e))).await;
                return;
            }
        };
        let conn_no = self.next_conn.fetch_add(1, Ordering::Relaxed) & 0x7f_ffff;
        let kick = Arc::new(Notify::new());
        let info = ConnInfo { tenant, pid, admin, sessions: 0, kick: kick.clone() };
        self.conns.lock().insert(conn_no, info);
        let welcome = ToClient::Welcome { tenant: tenant.0, conn: conn_no };
        if framed.send(proto::encode(&welcome)).await.is_ok() {
            self.run_conn(framed, tenant, admin, conn_no, kick).await;
        }
        let gone = self.conns.lock().remove(&conn_no);
        if let Some(c) = gone.filter(|c| !c.admin) {
            self.process_gone(c).await;
        }
    }

    /// Checks the Hello frame (or, on a pool connection that said hello as
    /// process `pooled`, the Bind frame): which tenant the connection is
    /// bound to, in what role, and the caller's pid. A Bind may name only a
    /// tenant.
    async fn authenticate(
        &self,
        frame: &[u8],
        pooled: Option<u32>,
    ) -> std::result::Result<(TenantId, Role, u32), WireError> {
        let refused = |m: &str| WireError::Unauthorized(m.to_string());
        let (tenant, token, pid) = match (proto::decode::<ToServer>(frame), pooled) {
            (Ok(ToServer::Hello { tenant, token, pid }), None) => (tenant, token, pid),
            (Ok(ToServer::Bind { tenant, token }), Some(pid))
                if tenant != proto::ADMIN && tenant != proto::POOL =>
            {
                (tenant, token, pid)
            }
            (_, None) => return Err(refused("the first message must be Hello")),
            (_, Some(_)) => return Err(refused("a pool connection must first bind to a tenant")),
        };
        if tenant == proto::ADMIN {
            if !self.secret.verify_admin(&token) {
                return Err(refused("bad admin token"));
            }
            return Ok((TenantId::SYSTEM, Role::Admin, pid));
        }
        if tenant == proto::POOL {
            if !self.secret.verify_pool(&token) {
                return Err(refused("bad pool token"));
            }
            return Ok((TenantId(0), Role::Pool, pid));
        }
        let record = tenants::lookup(&self.shared, &tenant).await.map_err(WireError::from)?;
        match record {
            Some(r) if self.secret.verify_tenant(r.id, &token) => {
                Ok((TenantId(r.id), Role::Tenant, pid))
            }
            _ => Err(WireError::Unauthorized(format!(
                "authentication failed for tenant \"{tenant}\""
            ))),
        }
    }

    async fn run_conn<IO: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
        self: &Arc<Self>,
        framed: Framed<IO, tokio_util::codec::LengthDelimitedCodec>,
        tenant: TenantId,
        admin: bool,
        conn_no: u32,
        kick: Arc<Notify>,
    ) {
        let (sink, mut stream) = framed.split();
        let (out, rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_loop(sink, rx));
        let txns: Txns = Arc::default();
        loop {
            let frame = tokio::select! {
                f = stream.next() => f,
                _ = kick.notified() => {
                    let _ = out.send(ToClient::Goodbye(WireError::Unavailable("the tenant was dropped".into())));
                    break;
                }
            };
            let Some(Ok(frame)) = frame else { break };
            let msg = match proto::decode::<ToServer>(&frame) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(error = %e, "closing a KV connection");
                    let _ = out.send(ToClient::Goodbye(WireError::InvalidInput(e)));
                    break;
                }
            };
            if let Err(e) = self.dispatch(msg, tenant, admin, conn_no, &txns, &out) {
                let _ = out.send(ToClient::Goodbye(e));
                break;
            }
        }
        // Abandon whatever the connection's transactions were doing; their
        // tasks abort them.
        for (_, slot) in txns.lock().drain() {
            if let Slot::Busy { cancel, .. } = slot {
                let _ = cancel.send(u64::MAX);
            }
        }
        drop(out);
        let _ = writer.await;
    }

    /// Handles one frame; an error closes the connection.
    fn dispatch(
        self: &Arc<Self>,
        msg: ToServer,
        tenant: TenantId,
        admin: bool,
        conn_no: u32,
        txns: &Txns,
        out: &Out,
    ) -> std::result::Result<(), WireError> {
        match msg {
            ToServer::Hello { .. } | ToServer::Bind { .. } => {
                return Err(WireError::InvalidInput("the connection is bound already".into()))
            }
            ToServer::Request { id, txn, ops, call } => {
                self.request(Remote { tenant, conn_no, handle: txn }, id, ops, call, txns, out)
            }
            ToServer::Cancel { txn, id } => {
                if let Some(Slot::Busy { cancel, .. }) = txns.lock().get(&txn) {
                    cancel.send_if_modified(|c| std::mem::replace(c, (*c).max(id)) < id);
                }
            }
            ToServer::End { txn } => {
                if let Some(Slot::Busy { cancel, .. }) = txns.lock().remove(&txn) {
                    let _ = cancel.send(u64::MAX);
                }
            }
            ToServer::Sessions { count } => {
                if let Some(c) = self.conns.lock().get_mut(&conn_no) {
                    c.sessions = count;
                }
                // A session opened or closed: either way one was open now.
                self.active.lock().insert(tenant.0, tenants::now_micros());
            }
            ToServer::Admin { id, call } => {
                if !admin {
                    return Err(WireError::Unauthorized("admin calls need the admin token".into()));
                }
                let (server, out) = (self.clone(), out.clone());
                tokio::spawn(async move {
                    let result = server.admin(call).await.map_err(WireError::from);
                    let _ = out.send(ToClient::AdminResponse { id, result });
                });
            }
        }
        Ok(())
    }

    /// Runs a request inline if its transaction is idle and the call
    /// cannot wait; otherwise queues it on the transaction's task (starting
    /// one). A request for an unknown transaction must begin with
    /// [`Op::Begin`].
    fn request(&self, r: Remote, id: u64, ops: Vec<Op>, call: Call, txns: &Txns, out: &Out) {
        let mut map = txns.lock();
        let slot = match map.entry(r.handle) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(v) => {
                let Some(Op::Begin { isolation }) = ops.first() else {
                    let result = Err(WireError::Unavailable("unknown transaction".into()));
                    let _ = out.send(ToClient::Response { id, snapshot: 0, result });
                    return;
                };
                let txn_id = proto::remote_txn_id(r.conn_no, r.handle);
                let shared = self.shared.clone();
                let txn = EmbeddedTxn::with_id(shared, r.tenant, (*isolation).into(), txn_id);
                v.insert(Slot::Idle(Box::new(TxnState { txn: Some(txn), broken: None })))
            }
        };
        match slot {
            Slot::Idle(state) if !may_wait(&call, &ops) => {
                let (snapshot, result) = state.run_now(ops, call);
                let _ = out.send(ToClient::Response { id, snapshot, result });
            }
            Slot::Idle(_) => {
                let (queue, rx) = mpsc::unbounded_channel();
                let (cancel, cancelled) = watch::channel(0);
                let Slot::Idle(state) = std::mem::replace(slot, Slot::Busy { queue, cancel })
                else {
                    return;
                };
                let task = txn_task(*state, rx, cancelled, out.clone(), txns.clone(), r.handle);
                tokio::spawn(task);
                if let Slot::Busy { queue, .. } = slot {
                    let _ = queue.send((id, ops, call));
                }
            }
            Slot::Busy { queue, .. } => {
                let _ = queue.send((id, ops, call));
            }
        }
    }

    /// What the server knows of tenant `id`'s SQL processes: pids, sessions.
    fn processes(&self, id: u64) -> (Vec<u32>, u32) {
        let conns = self.conns.lock();
        let mine = conns.values().filter(|c| !c.admin && c.tenant.0 == id);
        let (mut pids, mut sessions) = (Vec::new(), 0);
        for c in mine {
            if !pids.contains(&c.pid) {
                pids.push(c.pid);
            }
            sessions += c.sessions;
        }
        pids.sort_unstable();
        (pids, sessions)
    }

    /// A SQL process's connection ended: its tenant's last activity is
    /// now if it still had sessions, and is stored either way.
    async fn process_gone(&self, c: ConnInfo) {
        let now = tenants::now_micros();
        let micros = {
            let mut active = self.active.lock();
            if c.sessions > 0 {
                active.insert(c.tenant.0, now);
            }
            active.get(&c.tenant.0).copied()
        };
        if let Some(m) = micros {
            if let Err(e) = tenants::set_last_active(&self.shared, c.tenant.0, m).await {
                tracing::warn!(error = %e, "could not store a tenant's last activity");
            }
        }
    }

    /// When tenant `id` last had a session: now if it has one, else what
    /// this server saw or the stored time (read once).
    async fn last_active(&self, id: u64, sessions: u32) -> Result<i64> {
        if sessions > 0 {
            return Ok(tenants::now_micros());
        }
        if let Some(&m) = self.active.lock().get(&id) {
            return Ok(m);
        }
        let stored = tenants::last_active(&self.shared, id).await?;
        Ok(*self.active.lock().entry(id).or_insert(stored))
    }

    /// What `tenant list` shows of a tenant. Measuring `stored_bytes` reads
    /// the tenant's whole key range, so only `list` asks for it (the proxy's
    /// per-connection lookup must stay cheap), and with it the last
    /// activity; otherwise they are 0.
    async fn info(&self, name: String, r: tenants::Record, measure: bool) -> Result<TenantInfo> {
        let (sql_pids, sessions) = self.processes(r.id);
        let stored_bytes = if measure { tenants::stored_bytes(&self.shared, r.id)? } else { 0 };
        let last_active_micros = if measure { self.last_active(r.id, sessions).await? } else { 0 };
        Ok(TenantInfo {
            last_active_micros,
            name,
            id: r.id,
            created_micros: r.created_micros,
            max_sql_processes: r.max_sql_processes,
            sql_pids,
            sessions,
            stored_bytes,
        })
    }

    async fn admin(&self, call: AdminCall) -> Result<AdminReply> {
        let _one = self.admin.lock().await;
        match call {
            AdminCall::Create { name } => {
                let r = tenants::create(&self.shared, &name).await?;
                Ok(AdminReply::Tenant(Some(self.info(name, r, false).await?)))
            }
            AdminCall::Lookup { name } => match tenants::lookup(&self.shared, &name).await? {
                Some(r) => Ok(AdminReply::Tenant(Some(self.info(name, r, false).await?))),
                None => Ok(AdminReply::Tenant(None)),
            },
            AdminCall::List => {
                let all = tenants::list(&self.shared).await?;
                let mut infos = Vec::with_capacity(all.len());
                for (n, r) in all {
                    infos.push(self.info(n, r, true).await?);
                }
                Ok(AdminReply::Tenants(infos))
            }
            AdminCall::Set { name, max_sql_processes } => {
                let r = tenants::set(&self.shared, &name, tenants::Settings { max_sql_processes })
                    .await?;
                Ok(AdminReply::Tenant(Some(self.info(name, r, false).await?)))
            }
            AdminCall::Drop { name, force } => {
                if let Some(r) = tenants::lookup(&self.shared, &name).await? {
                    let (_, sessions) = self.processes(r.id);
                    if sessions > 0 && !force {
                        return Err(Error::InvalidInput(format!(
                            "tenant \"{name}\" has {sessions} open connection(s); use --force to drop it anyway"
                        )));
                    }
                }
                let r = tenants::drop(&self.shared, &name).await?;
                for c in self.conns.lock().values().filter(|c| !c.admin && c.tenant.0 == r.id) {
                    c.kick.notify_one();
                }
                Ok(AdminReply::Dropped)
            }
        }
    }
}

type Sink<IO> = futures_util::stream::SplitSink<
    Framed<IO, tokio_util::codec::LengthDelimitedCodec>,
    bytes::Bytes,
>;

async fn write_loop<IO: AsyncRead + AsyncWrite + Unpin>(
    mut sink: Sink<IO>,
    mut rx: mpsc::UnboundedReceiver<ToClient>,
) {
    while let Some(first) = rx.recv().await {
        let goodbye = matches!(first, ToClient::Goodbye(_));
        let mut ok = sink.feed(proto::encode(&first)).await.is_ok();
        while ok && !goodbye {
            match rx.try_recv() {
                Ok(m) => ok = sink.feed(proto::encode(&m)).await.is_ok(),
                Err(_) => break,
            }
        }
        if !ok || sink.flush().await.is_err() || goodbye {
            break;
        }
    }
    let _ = sink.close().await;
}

/// Requests that may wait (for a lock or the log) run on a task; the
/// others never await and run inline.
fn may_wait(call: &Call, ops: &[Op]) -> bool {
    matches!(call, Call::Lock { .. } | Call::LockShared(_) | Call::GetForUpdate(_) | Call::Commit)
        || ops.iter().any(|op| matches!(op, Op::LockShared(_)))
}

const CANCELLED: &str = "request cancelled";

impl TxnState {
    /// Applies `ops` (unless the transaction is broken) and says whether
    /// the call may run, and which shared locks it must take first.
    fn prepare(&mut self, ops: Vec<Op>) -> std::result::Result<Vec<Key>, WireError> {
        let mut applied = Applied { held: true, locks: Vec::new() };
        if self.broken.is_none() {
            if let Some(t) = self.txn.as_mut() {
                match apply(t, ops) {
                    Ok(a) => applied = a,
                    Err(e) => self.broken = Some(e.into()),
                }
            }
        }
        match &self.broken {
            Some(e) => Err(e.clone()),
            None if !applied.held => Err(WireError::AssumptionFailed),
            None => Ok(applied.locks),
        }
    }

    /// The snapshot to report with `result`.
    fn snapshot(&self, result: &std::result::Result<Reply, WireError>) -> u64 {
        match (result, &self.txn) {
            (Ok(Reply::Committed(ts)), _) => *ts,
            (_, Some(t)) => t.snapshot().0,
            (_, None) => 0,
        }
    }

    /// Runs a call that cannot wait, at once.
    fn run_now(
        &mut self,
        ops: Vec<Op>,
        call: Call,
    ) -> (u64, std::result::Result<Reply, WireError>) {
        use futures_util::FutureExt;
        // may_wait sent requests with locks to take to the task.
        let result = self.prepare(ops).and_then(|_| {
            // These calls never await, so their futures are ready at once.
            run(&mut self.txn, call)
                .now_or_never()
                .unwrap_or_else(|| {
                    Err(Error::Unavailable("a call that cannot wait was not ready".into()))
                })
                .map_err(WireError::from)
        });
        (self.snapshot(&result), result)
    }
}

/// Runs a remote transaction's requests in order while some may wait (see
/// [`Slot::Busy`]), then hands the state back to the connection.
async fn txn_task(
    mut state: TxnState,
    mut rx: mpsc::UnboundedReceiver<(u64, Vec<Op>, Call)>,
    mut cancel: watch::Receiver<u64>,
    out: Out,
    txns: Txns,
    handle: u64,
) {
    loop {
        let next = match rx.try_recv() {
            Ok(m) => Some(m),
            Err(mpsc::error::TryRecvError::Empty) => {
                // The reader queues under the map's lock, so nothing can
                // arrive between this check and the hand-back.
                let mut map = txns.lock();
                match rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(mpsc::error::TryRecvError::Empty) if state.txn.is_some() => {
                        map.insert(handle, Slot::Idle(Box::new(state)));
                        return;
                    }
                    Err(_) => None,
                }
            }
            Err(mpsc::error::TryRecvError::Disconnected) => None,
        };
        let Some((id, ops, call)) = next else { break };
        let result = match state.prepare(ops) {
            Err(e) => Err(e),
            Ok(_) if *cancel.borrow() >= id => Err(WireError::Unavailable(CANCELLED.into())),
            Ok(locks) => {
                let cancelled = async {
                    let _ = cancel.wait_for(|c| *c >= id).await;
                };
                tokio::select! {
                    biased;
                    _ = cancelled => Err(WireError::Unavailable(CANCELLED.into())),
                    r = run_after_locks(&mut state.txn, locks, call) => r,
                }
            }
        };
        let snapshot = state.snapshot(&result);
        let _ = out.send(ToClient::Response { id, snapshot, result });
        if state.txn.is_none() {
            break;
        }
    }
    // Committed, ended by the client, or its connection closed. Dropping
    // the transaction aborts it if it did not commit; handles are never
    // reused on a connection, so the entry is this task's.
    drop(state);
    txns.lock().remove(&handle);
}

/// What a request's ops leave for its call.
struct Applied {
    /// Every [`Op::Assume`] held.
    held: bool,
    /// The keys of its [`Op::LockShared`] ops, to take before the call.
    locks: Vec<Key>,
}

/// Applies queued local calls in order, except the shared locks, which it
/// leaves to the call (taking them may wait; a lock is never undone by
/// the other ops, so they need not wait for it).
fn apply(txn: &mut EmbeddedTxn, ops: Vec<Op>) -> Result<Applied> {
    use futures_util::FutureExt;
    let mode = |private| if private { LockMode::Private } else { LockMode::Locked };
    let (mut held, mut locks) = (true, Vec::new());
    for op in ops {
        match op {
            Op::Begin { .. } => {}
            Op::Put { key, value, private } => txn.put(Key::decode(key)?, value, mode(private))?,
            Op::Delete { key, private } => txn.delete(Key::decode(key)?, mode(private))?,
            Op::DeleteRangeAfterCommit { start, end } => {
                txn.delete_range_after_commit(range(start, end)?)?
            }
            Op::RollbackTo(n) => txn.rollback_to(kvapi::Savepoint(n)),
            Op::LockTimeout(us) => txn.set_lock_timeout(us.map(Duration::from_micros)),
            Op::RefreshSnapshot => txn.refresh_snapshot(),
            Op::Assume { key, value } => {
                // An embedded read never awaits (see TxnState::run_now).
                let now = txn.get(&Key::decode(key)?).now_or_never().ok_or_else(|| {
                    Error::Unavailable("a read that cannot wait was not ready".into())
                })??;
                held &= now == value;
            }
            Op::LockShared(ks) => locks.extend(keys(ks)?),
        }
    }
    Ok(Applied { held, locks })
}

/// Takes a request's queued shared locks, then runs its call.
async fn run_after_locks(
    txn: &mut Option<EmbeddedTxn>,
    locks: Vec<Key>,
    call: Call,
) -> std::result::Result<Reply, WireError> {
    if let (false, Some(t)) = (locks.is_empty(), txn.as_mut()) {
        let failed = match t.lock_shared(&locks).await {
            Ok(changed) if changed.contains(&true) => Some(WireError::AssumptionFailed),
            Ok(_) => None,
            Err(e) => Some(WireError::from(e)),
        };
        if let Some(e) = failed {
            if matches!(call, Call::Commit) {
                // The client ends a transaction whose commit failed.
                drop(txn.take());
            }
            return Err(e);
        }
    }
    run(txn, call).await.map_err(WireError::from)
}

fn range(start: Vec<u8>, end: Vec<u8>) -> Result<KeyRange> {
    Ok(KeyRange { start: Key::decode(start)?, end: Key::decode(end)? })
}

fn keys(raw: Vec<Vec<u8>>) -> Result<Vec<Key>> {
    raw.into_iter().map(Key::decode).collect()
}

fn locked(l: kvapi::Locked) -> LockedKey {
    LockedKey { latest: l.latest, changed_since_snapshot: l.changed_since_snapshot }
}

/// Runs one call. `txn` is taken by Commit.
async fn run(txn: &mut Option<EmbeddedTxn>, call: Call) -> Result<Reply> {
    let finished = || Error::Unavailable("transaction already finished".into());
    if let Call::Commit = call {
        let t = txn.take().ok_or_else(finished)?;
        return Ok(Reply::Committed(t.commit().await?.0));
    }
    let t = txn.as_mut().ok_or_else(finished)?;
    Ok(match call {
        Call::Flush => Reply::Unit,
        Call::Get(k) => Reply::Value(t.get(&Key::decode(k)?).await?),
        Call::MultiGet(ks) => Reply::Values(t.multi_get(&keys(ks)?).await?),
        Call::Scan { start, end, limit, order } => {
            let r = range(start, end)?;
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            let rows = match order {
                ScanOrder::Forward => t.scan(&r, limit).await?,
                ScanOrder::Reverse => t.scan_reverse(&r, limit).await?,
                ScanOrder::Latest => t.scan_latest(&r, limit).await?,
            };
            Reply::Rows(rows.into_iter().map(|(k, v)| (k.into_bytes(), v)).collect())
        }
        Call::StoredSize { start, end } => Reply::Size(t.stored_size(&range(start, end)?).await?),
        Call::Lock { keys: ks, share } => {
            let ks = keys(ks)?;
            let l = if share { t.lock_for_share(&ks).await? } else { t.lock(&ks).await? };
            Reply::Locked(l.into_iter().map(locked).collect())
        }
        Call::TryLock { keys: ks, share } => {
            let l = t.try_lock(&keys(ks)?, share).await?;
            Reply::TryLocked(l.into_iter().map(|o| o.map(locked)).collect())
        }
        Call::LockShared(ks) => Reply::Changed(t.lock_shared(&keys(ks)?).await?),
        Call::GetForUpdate(k) => {
            let got = t.get_for_update(&Key::decode(k)?).await?;
            Reply::GotForUpdate(got.map(|(v, l)| (v, locked(l))))
        }
        Call::Commit => return Err(finished()),
    })
}
