//! The Strata proxy: the front door every PostgreSQL client connects to.
//!
//! For each client connection it reads the startup packets (SSLRequest is
//! answered 'S' and TLS set up when [`Config::tls`] is set, else 'N';
//! GSSENCRequest 'N'), finds the tenant the client asks for ([`route`];
//! over TLS the host name can name it), checks with the KV server that the
//! tenant exists, finds or starts a SQL process of that tenant, and hands
//! the client's socket to it ([`wire::handoff`], SCM_RIGHTS) or, with
//! [`Config::handoff`] off, copies bytes both ways for the session (always
//! for a TLS client: its session keys stay in the proxy). Authentication is
//! the SQL process's job: it sees the client's real address in the PROXY
//! header the proxy writes first ([`wire::proxy_header`]), on a unix socket
//! in a directory only the proxy (and the supervisor) can reach, so trust
//! and SCRAM work as if the client had connected directly.
//!
//! SQL processes are started by the proxy (forked by its fork server,
//! [`fork`], or exec'd), each listening on
//! `RUN_DIR/sql-<tenant id>-<pid>.sock` and on a control socket
//! `sql-<tenant id>-<pid>.ctl` ([`control`]). A tenant has one process, or
//! up to its `max_sql_processes` (`strata tenant set`): a new connection
//! goes to the least loaded (connections open or on their way, asked on
//! the control socket), or to one more process while every one is busy and
//! there may be more. At most [`Config::max_sql_processes`] run in all;
//! a first connection that finds them all running waits up to
//! [`Config::process_wait`] for one to exit, then gets FATAL 53300.
//!
//! The proxy keeps a warm pool of [`Config::warm_pool`] processes started
//! with no tenant; a tenant with no process gets one from the pool (bound
//! to it: its KV token handed over, its catalog loaded), or a freshly
//! launched one when the pool is empty, and the pool refills in the
//! background. A process that has had no
//! connection for [`Config::idle_timeout`] is retired and exits (scale to
//! zero); nothing runs for a suspended tenant until a client asks for it.
//!
//! A tenant named in [`Config::remote`] is served by a SQL process on
//! another machine instead (`strata sql --proxy-listen`): the proxy starts
//! nothing for it and forwards its clients over TCP (TLS, the process's
//! certificate verified, when the address says `tls:`), each connection
//! opened with the tenant's proxy token ([`kvrpc::Secret::proxy_token`])
//! before the PROXY header, which the token makes believable.
//!
//! SQL processes report each password login to the proxy's datagram
//! socket `RUN_DIR/events.sock`; after a wrong password the proxy refuses
//! that client address's next attempts to that tenant for a while, at
//! once and before any SQL process sees them ([`throttle`]).
//!
//! Each tenant has a routing lock, held while its process is found or
//! started and while a client is handed to it, and while the proxy asks
//! the process to retire: simultaneous first connections share one process,
//! and no client is ever handed to a process on its way out. A process that
//! died is noticed when its socket refuses a connection, and replaced.
//! SQL processes outlive the proxy: a restarted proxy finds them by their
//! control sockets and takes them over. A CancelRequest names no tenant, so
//! it goes to every SQL process; only the one that handed out the key (pid
//! and secret) acts on it.
//!
//! This crate depends on the wire protocol's framing and on the KV RPC's
//! admin client (for tenant lookups), never on the SQL layer or KV internals.

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use kvrpc::{AdminClient, KvAddr, Secret, TenantInfo};
use parking_lot::Mutex;
use sqlstate::{ErrorReport, SqlState};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::{Notify, OwnedMutexGuard, Semaphore};
use wire::codec::{self, Startup};
use wire::proxy_header::{self, Origin};
use wire::transport::Transport;

/// The line protocols between the proxy and its SQL processes.
pub mod control;
pub mod drain;
pub mod fork;
mod password;
/// Tenant routing rules.
pub mod route;
pub mod throttle;
pub mod tls;

use control::{AuthEvent, Bind, Control};
use throttle::Throttle;

/// How long a starting SQL process may take to say it is ready, and a
/// pooled one to bind to a tenant.
const SQL_START_TIMEOUT: Duration = Duration::from_secs(30);

/// How many SQL processes may be launching at once: on two cores a storm
/// of launches only slows every one of them down.
const LAUNCH_PERMITS: usize = 4;

/// How long a client may take to send its startup packet.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How the proxy starts pooled, tenant-less SQL processes. Each must print
/// `ready` when it waits for a [`Bind`] on its standard input, and `ready`
/// again once it serves the tenant ([`control`]).
pub struct Launcher {
    /// The command that runs one (the binary supplies `strata sql --pool
    /// ...`).
    pub exec: fork::CommandFactory,
    /// The command that runs a fork server (`strata sql --fork-server
    /// ...`, [`fork`]); None: every process is exec'd.
    pub fork_server: Option<fork::CommandFactory>,
}

/// The proxy's configuration.
pub struct Config {
    /// The KV server.
    pub kv: KvAddr,
    /// The KV server's secret (to mint tenant tokens and the admin token).
    pub secret: Secret,
    /// Where SQL processes' sockets live (a directory only we can reach).
    pub run_dir: PathBuf,
    /// Starts SQL processes.
    pub launcher: Launcher,
    /// Hand each client's socket to its SQL process (SCM_RIGHTS, same
    /// machine only) instead of forwarding its bytes for the session.
    pub handoff: bool,
    /// How many pre-started, tenant-less SQL processes to keep ready.
    pub warm_pool: usize,
    /// A tenant's SQL process that has had no client connection for this
    /// long exits.
    pub idle_timeout: Duration,
    /// TLS for clients that ask for it (None: they are told 'N').
    pub tls: Option<tls::Tls>,
    /// Over TLS, a host name `NAME.<tenant_domain>` names tenant NAME.
    pub tenant_domain: String,
    /// At most this many SQL processes run at once, pooled ones included.
    pub max_sql_processes: usize,
    /// How long a client waits for a SQL process for its tenant (all of
    /// them busy, launches queued) before it gets FATAL 53300.
    pub process_wait: Duration,
    /// A client that names no tenant is asked for its password, which may
    /// name one ([`route::password_tenant`]); the proxy then logs in for
    /// it (`password` module).
    pub password_routing: bool,
    /// Tenants served by a SQL process on another machine, by tenant name
    /// (`strata proxy --remote-sql NAME=ADDR`): their clients are
    /// forwarded to it, and nothing is started for them here.
    pub remote: HashMap<String, KvAddr>,
}

/// The proxy (see the module documentation).
pub struct Proxy {
    cfg: Config,
    admin: tokio::sync::Mutex<Option<AdminClient>>,
    /// Each tenant's routing lock and what runs for it, by tenant id.
    tenants: Mutex<HashMap<u64, Arc<tokio::sync::Mutex<Slot>>>>,
    /// OS pids of the SQL processes this proxy started and that still run.
    children: Arc<Mutex<Vec<u32>>>,
    /// Ready, unbound SQL processes.
    pool: Mutex<Vec<Pooled>>,
    /// Wakes the refill task (a pooled process was taken).
    pool_taken: Notify,
    /// Bounds the launches in flight ([`LAUNCH_PERMITS`]).
    launches: Semaphore,
    /// Forks pooled processes, if [`Launcher::fork_server`] is set.
    fork: Option<fork::ForkServer>,
    /// One permit per SQL process that may run ([`Config::max_sql_processes`]).
    places: Arc<Semaphore>,
    /// Wakes the refill task (a place was freed).
    place_freed: Arc<Notify>,
    /// Wakes clients waiting for a process (one joined the pool).
    pool_filled: Notify,
    /// Numbers the processes the registry records, so a watcher knows
    /// whether the slot still holds its process.
    generation: AtomicU64,
    /// Failed logins by (client address, tenant).
    throttle: Mutex<Throttle>,
    /// Where SQL processes report logins ([`control::AuthEvent`]); bound
    /// when serving starts.
    events: std::sync::OnceLock<Arc<tokio::net::UnixDatagram>>,
    /// The remote SQL processes clients were sent to, by tenant id (a
    /// CancelRequest goes to them too).
    remote_used: Mutex<HashMap<u64, KvAddr>>,
}

/// A connection to a SQL process of a client's tenant.
enum Sql {
    /// The proxy socket of one this proxy runs (a client may be handed
    /// over on it).
    Local(UnixStream),
    /// The socket for proxies of one on another machine, its token sent
    /// ([`Config::remote`]); only bytes can be forwarded on it.
    Remote(Box<dyn kvrpc::conn::Io>),
}

impl Sql {
    fn into_io(self) -> Box<dyn kvrpc::conn::Io> {
        match self {
            Sql::Local(s) => Box::new(s),
            Sql::Remote(s) => s,
        }
    }
}

/// How long connecting to a SQL process on another machine may take.
const REMOTE_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A tenant's entry: the SQL processes that serve it.
#[derive(Default)]
struct Slot {
    running: Vec<Running>,
}

/// A SQL process serving a tenant.
struct Running {
    /// Its proxy socket (its control socket is the same path with `.ctl`).
    socket: PathBuf,
    /// Being drained ([`Proxy::drain`]): no new client goes to it, and it
    /// retires once its last session has moved or ended.
    draining: bool,
    /// Connections this proxy made to that socket (compared with what the
    /// process took in before it may retire).
    handed: u64,
    generation: u64,
    /// A control connection for asking its load (the watch holds another,
    /// busy waiting for idleness); made when first needed.
    probe: Option<Control>,
}

impl Slot {
    /// The index and load (connections open or on their way) of the least
    /// loaded process, asking each process only if `measure` (else the
    /// first, load unknown: 0). A process that does not answer is dropped
    /// from the slot (it died; its watch notices too).
    async fn least_loaded(&mut self, measure: bool) -> Option<(usize, u64)> {
        if !measure {
            return self.running.iter().position(|r| !r.draining).map(|i| (i, 0));
        }
        let mut best: Option<(usize, u64)> = None;
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].draining {
                i += 1;
                continue;
            }
            match self.running[i].load().await {
                Ok(load) => {
                    if best.is_none_or(|(_, b)| load < b) {
                        best = Some((i, load));
                    }
                    i += 1;
                }
                Err(_) => {
                    self.running.remove(i);
                }
            }
        }
        best
    }
}

impl Slot {
    /// The processes new clients may go to.
    fn serving(&self) -> usize {
        self.running.iter().filter(|r| !r.draining).count()
    }
}

impl Running {
    /// Connections open in the process plus those handed to it that it
    /// has not taken in yet.
    async fn load(&mut self) -> std::io::Result<u64> {
        if self.probe.is_none() {
            self.probe = Some(Control::connect(&self.socket.with_extension("ctl")).await?);
        }
        let probe = self.probe.as_mut().expect("connected above");
        match probe.status().await {
            Ok(st) => Ok(st.open as u64 + self.handed.saturating_sub(st.accepted)),
            Err(e) => {
                self.probe = None;
                Err(e)
            }
        }
    }
}

/// A pre-started SQL process waiting for a tenant.
struct Pooled {
    process: fork::Process,
    place: Place,
}

/// A SQL process's share of [`Config::max_sql_processes`], held for as
/// long as it runs.
struct Place {
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
    freed: Arc<Notify>,
}

impl Drop for Place {
    fn drop(&mut self) {
        // Give the permit back before waking the refill task that wants it.
        if self.permit.take().is_some() {
            self.freed.notify_one();
        }
    }
}

/// A stream the proxy accepts clients on.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

/// Usually out of file descriptors: back off instead of spinning.
async fn accept_failed(e: std::io::Error) {
    tracing::warn!(error = %e, "accept failed");
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// A connection to a SQL process on another machine at `addr`, with
/// `token` (its tenant's proxy token) sent.
async fn connect_remote(addr: &KvAddr, token: &str) -> std::io::Result<Box<dyn kvrpc::conn::Io>> {
    let connect = async {
        let mut s = addr.connect().await?;
        s.write_all(proxy_header::encode_token(token).as_bytes()).await?;
        Ok(s)
    };
    let timed_out = || std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out");
    tokio::time::timeout(REMOTE_CONNECT_TIMEOUT, connect).await.map_err(|_| timed_out())?
}

/// The error a client gets when no SQL process could serve it.
fn no_process(tenant: &str, why: impl std::fmt::Display) -> ErrorReport {
    ErrorReport::fatal(
        SqlState::TooManyConnections,
        format!("no SQL process is available for tenant \"{tenant}\": {why}"),
    )
}

impl Proxy {
    /// A proxy with `cfg`.
    pub fn new(cfg: Config) -> Arc<Proxy> {
        Arc::new(Proxy {
            places: Arc::new(Semaphore::new(cfg.max_sql_processes.max(1))),
            fork: cfg.launcher.fork_server.clone().map(fork::ForkServer::new),
            place_freed: Arc::new(Notify::new()),
            pool_filled: Notify::new(),
            cfg,
            admin: tokio::sync::Mutex::new(None),
            tenants: Mutex::new(HashMap::new()),
            children: Arc::default(),
            pool: Mutex::new(Vec::new()),
            pool_taken: Notify::new(),
            launches: Semaphore::new(LAUNCH_PERMITS),
            generation: AtomicU64::new(1),
            throttle: Mutex::new(Throttle::new(throttle::DEFAULT_CAPACITY)),
            events: std::sync::OnceLock::new(),
            remote_used: Mutex::default(),
        })
    }

    /// Checks that the KV server answers (before announcing readiness).
    pub async fn check_kv(&self) -> Result<(), ErrorReport> {
        self.lookup(route::DEFAULT_TENANT).await.map(|_| ())
    }

    /// The pids of the SQL processes this proxy started and that still run
    /// (pooled ones included).
    pub fn child_pids(&self) -> Vec<u32> {
        self.children.lock().clone()
    }

    /// Takes over the SQL processes a previous proxy left running, keeps
    /// the warm pool full, and accepts clients on `tcp` and `unix`, until
    /// the future is dropped.
    pub async fn serve(
        self: Arc<Self>,
        tcp: tokio::net::TcpListener,
        unix: Option<tokio::net::UnixListener>,
    ) {
        self.listen_for_events();
        self.serve_admin();
        self.adopt_all().await;
        tokio::spawn(self.clone().refill());
        loop {
            let unix_accept = async {
                match &unix {
                    Some(l) => l.accept().await.map(|(s, _)| s),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = tcp.accept() => match r {
                    Ok((s, peer)) => {
                        let _ = s.set_nodelay(true);
                        let origin = match s.local_addr() {
                            Ok(local) => Origin::Tcp { client: peer, proxy: local },
                            Err(_) => Origin::Unknown,
                        };
                        tokio::spawn(self.clone().handle(s, origin));
                    }
                    Err(e) => accept_failed(e).await,
                },
                r = unix_accept => match r {
                    Ok(s) => {
                        tokio::spawn(self.clone().handle(s, Origin::Unknown));
                    }
                    Err(e) => accept_failed(e).await,
                },
            }
        }
    }

    fn events_path(&self) -> PathBuf {
        self.cfg.run_dir.join("events.sock")
    }

    /// Binds the events socket and applies what arrives on it, for as long
    /// as the proxy runs (without it logins are simply not throttled).
    fn listen_for_events(self: &Arc<Self>) {
        let path = self.events_path();
        let _ = std::fs::remove_file(&path);
        let sock = match tokio::net::UnixDatagram::bind(&path) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                tracing::warn!(error = %e, path = %path.display(), "no login throttling: cannot bind");
                return;
            }
        };
        let _ = self.events.set(sock.clone());
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            while sock.readable().await.is_ok() {
                let Some(p) = me.upgrade() else { return };
                p.take_events();
            }
        });
    }

    /// Applies every login report waiting on the events socket.
    fn take_events(&self) {
        let Some(sock) = self.events.get() else { return };
        let mut buf = [0u8; 256];
        while let Ok(n) = sock.try_recv(&mut buf) {
            let Some(e) = std::str::from_utf8(&buf[..n]).ok().and_then(AuthEvent::parse) else {
                continue;
            };
            self.throttle.lock().record((e.client, e.tenant_id), e.ok, Instant::now());
        }
    }

    /// FATAL 08004 if `client` must still wait after failed logins to
    /// tenant `info`. Reports already sent are read first: a SQL process
    /// reports a failure before its client hears of it.
    fn check_throttle(
        &self,
        client: Option<std::net::IpAddr>,
        info: &TenantInfo,
    ) -> Result<(), ErrorReport> {
        self.take_events();
        let Some(wait) = self.throttle.lock().wait((client, info.id), Instant::now()) else {
            return Ok(());
        };
        let from = client.map_or_else(|| "a local client".to_string(), |ip| ip.to_string());
        Err(ErrorReport::fatal(
            SqlState::SqlserverRejectedEstablishmentOfSqlconnection,
            format!(
                "too many failed authentication attempts to tenant \"{}\" from {from}; try again in {:.1} s",
                info.name,
                wait.as_secs_f64()
            ),
        ))
    }

    /// Serves one client: startup, routing, then the hand-off or forwarding.
    async fn handle<IO: Io + AsFd>(self: Arc<Self>, io: IO, origin: Origin) {
        let mut t = Transport::new(io);
        let tls = self.cfg.tls.clone();
        let startup =
            tokio::time::timeout(STARTUP_TIMEOUT, read_startup(&mut t, tls.is_some())).await;
        let Ok(Some(first)) = startup else { return };
        let (minor, params) = match first {
            First::Cancel(packet) => return self.cancel(packet).await,
            First::Start(minor, params) => (minor, params),
            First::Tls => {
                let Some(tls) = tls else { return };
                return self.handle_tls(t, tls, origin).await;
            }
        };
        if self.by_password(&params, None) {
            return self.password_login(t, origin, minor, params).await;
        }
        let Some((routing, sql, head)) =
            self.connect_client(&mut t, &origin, minor, params, None, None).await
        else {
            return;
        };
        let mut sql = match sql {
            Sql::Local(s) if self.cfg.handoff => s,
            other => return Self::forward(t, routing, other, head).await,
        };
        // The SQL process holds the client's socket from here on; ours
        // closes when `t` drops.
        let sent = wire::handoff::send(&mut sql, t.io.as_fd(), &head).await;
        drop(routing);
        if sent.is_err() {
            sql_process_closed(&mut t).await;
        }
    }

    /// Sends a routed client's first bytes to its SQL process, releases
    /// the routing lock, and copies bytes both ways until either side
    /// closes.
    async fn forward<IO: Io>(
        mut t: Transport<IO>,
        routing: OwnedMutexGuard<Slot>,
        sql: Sql,
        head: BytesMut,
    ) {
        let mut sql = sql.into_io();
        let sent = sql.write_all(&head).await;
        drop(routing);
        if sent.is_err() {
            return sql_process_closed(&mut t).await;
        }
        let _ = tokio::io::copy_bidirectional(&mut t.io, &mut sql).await;
    }

    /// A client that asked for TLS (and was told 'S'): the handshake, its
    /// startup inside TLS, and then its bytes forwarded for the session
    /// (a TLS session cannot be handed to another process).
    async fn handle_tls<IO: Io>(self: Arc<Self>, t: Transport<IO>, tls: tls::Tls, origin: Origin) {
        if !t.rbuf.is_empty() {
            // Bytes sent after SSLRequest before the handshake would be
            // read as if they came encrypted (CVE-2021-23214): refuse.
            return;
        }
        let accept = tokio_rustls::TlsAcceptor::from(tls.config).accept(t.io);
        let Ok(Ok(stream)) = tokio::time::timeout(STARTUP_TIMEOUT, accept).await else { return };
        let sni = stream.get_ref().1.server_name().map(str::to_string);
        let mut t = Transport::new(stream);
        let startup = tokio::time::timeout(STARTUP_TIMEOUT, read_startup(&mut t, false)).await;
        let (minor, params) = match startup {
            Ok(Some(First::Start(minor, params))) => (minor, params),
            Ok(Some(First::Cancel(packet))) => return self.cancel(packet).await,
            _ => return,
        };
        let tenant = sni.and_then(|h| route::sni_tenant(&h, &self.cfg.tenant_domain));
        if self.by_password(&params, tenant.clone()) {
            return self.password_login(t, origin, minor, params).await;
        }
        let binding = Some(&*tls.end_point);
        if let Some((routing, sql, head)) =
            self.connect_client(&mut t, &origin, minor, params, tenant, binding).await
        {
            Self::forward(t, routing, sql, head).await;
        }
    }

    /// Whether a client with these startup `params` (and SNI tenant) is
    /// routed by its password: it names no tenant otherwise.
    fn by_password(&self, params: &[(String, String)], sni_tenant: Option<String>) -> bool {
        self.cfg.password_routing && !route::route(params.to_vec(), sni_tenant).named
    }

    /// Routes a client's StartupMessage: a connection to a SQL process of
    /// its tenant with the routing lock still held (until the client is
    /// handed over or its first bytes sent, so the process cannot retire
    /// with the client on its way), and the bytes to send it first (the
    /// PROXY header carries a TLS client's `tls_binding`, for
    /// SCRAM-SHA-256-PLUS). None once the client was told why not.
    async fn connect_client<IO: Io>(
        self: &Arc<Self>,
        t: &mut Transport<IO>,
        origin: &Origin,
        minor: u16,
        params: Vec<(String, String)>,
        sni_tenant: Option<String>,
        tls_binding: Option<&[u8]>,
    ) -> Option<(OwnedMutexGuard<Slot>, Sql, BytesMut)> {
        let r = route::route(params, sni_tenant);
        let client = match origin {
            Origin::Tcp { client, .. } => Some(client.ip()),
            _ => None,
        };
        let (routing, sql) = match self.clone().connect_tenant(&r.tenant, client).await {
            Ok(s) => s,
            Err(e) => {
                t.fatal(&e).await;
                return None;
            }
        };
        let mut head = BytesMut::new();
        let header = match tls_binding {
            Some(b) => proxy_header::encode_tls(origin, b),
            None => proxy_header::encode(origin),
        };
        head.put_slice(header.as_bytes());
        codec::encode_startup(&mut head, minor, &r.params);
        head.put_slice(&t.rbuf);
        Some((routing, sql, head))
    }

    /// The routing lock of tenant `id` (made on first use).
    fn slot(&self, id: u64) -> Arc<tokio::sync::Mutex<Slot>> {
        self.tenants.lock().entry(id).or_default().clone()
    }

    /// The proxy socket and the control socket of tenant `id`'s SQL
    /// process `pid`.
    fn sockets(&self, id: u64, pid: u32) -> (PathBuf, PathBuf) {
        let base = self.cfg.run_dir.join(format!("sql-{id}-{pid}"));
        (base.with_extension("sock"), base.with_extension("ctl"))
    }

    /// A fresh connection to a SQL process of tenant `name`, with the
    /// tenant's routing lock still held: the least loaded of those that
    /// run, or a new one when none runs or all are busy and the tenant may
    /// have more ([`TenantInfo::max_sql_processes`]); or the tenant's SQL
    /// process on another machine ([`Config::remote`]). FATAL 3D000 for an
    /// unknown tenant (nothing is started).
    async fn connect_tenant(
        self: Arc<Self>,
        name: &str,
        client: Option<std::net::IpAddr>,
    ) -> Result<(OwnedMutexGuard<Slot>, Sql), ErrorReport> {
        let Some(info) = self.lookup(name).await? else {
            return Err(ErrorReport::fatal(
                SqlState::InvalidCatalogName,
                format!("tenant \"{name}\" does not exist"),
            ));
        };
        self.check_throttle(client, &info)?;
        if let Some(addr) = self.cfg.remote.get(name) {
            // Nothing to start or retire here: no routing lock to share
            // (clients connect in parallel), only one to hand back.
            self.remote_used.lock().entry(info.id).or_insert_with(|| addr.clone());
            let token = self.cfg.secret.proxy_token(info.id);
            let s = connect_remote(addr, &token).await.map_err(|e| {
                ErrorReport::fatal(
                    SqlState::CannotConnectNow,
                    format!("could not reach the SQL process of tenant \"{name}\" at {addr}: {e}"),
                )
            })?;
            let unshared = Arc::new(tokio::sync::Mutex::new(Slot::default())).lock_owned().await;
            return Ok((unshared, Sql::Remote(s)));
        }
        // One bound on the whole wait: for the routing lock (another client
        // may be starting the tenant's process) and for a process.
        let deadline = Instant::now() + self.cfg.process_wait;
        let slot = self.slot(info.id);
        let locked = tokio::time::timeout_at(deadline.into(), slot.clone().lock_owned()).await;
        let mut g = locked.map_err(|_| no_process(name, "timed out waiting for one to start"))?;
        let max = info.max_sql_processes.max(1) as usize;
        let mut last_error = None;
        for _ in 0..3 {
            let best = g.least_loaded(max > 1).await;
            let grow = g.serving() < max && best.is_none_or(|(_, load)| load > 0);
            let i = match best {
                Some((i, _)) if !grow => i,
                // A first process is waited for; another only if it is
                // to be had now (else the busy ones share the client).
                _ => match self.clone().start(&info, &slot, &mut g, deadline, best.is_none()).await
                {
                    Ok(()) => g.running.len() - 1,
                    Err(e) => match best {
                        Some((i, _)) => i,
                        None => return Err(e),
                    },
                },
            };
            let r = &mut g.running[i];
            match UnixStream::connect(&r.socket).await {
                Ok(s) => {
                    r.handed += 1;
                    return Ok((g, Sql::Local(s)));
                }
                // It died since; use or start another.
                Err(e) => {
                    last_error = Some(e);
                    g.running.remove(i);
                }
            }
        }
        let e = last_error.map(|e| e.to_string()).unwrap_or_default();
        Err(ErrorReport::fatal(
            SqlState::CannotConnectNow,
            format!("could not reach a SQL process of tenant \"{name}\": {e}"),
        ))
    }

    /// Records in the slot that a process serves tenant `id` on `socket`,
    /// after the `handed` connections the proxy made to it so far, and
    /// watches it through `ctl` (retiring it when idle). `place` is held
    /// until the watch ends, for a process this proxy did not start (its
    /// own hold theirs until they exit).
    fn install(
        self: Arc<Self>,
        socket: PathBuf,
        handed: u64,
        slot: &Arc<tokio::sync::Mutex<Slot>>,
        g: &mut Slot,
        ctl: Control,
        place: Option<Place>,
    ) {
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        g.running.push(Running { socket, draining: false, handed, generation, probe: None });
        let watch = self.watch(slot.clone(), generation, ctl);
        tokio::spawn(async move {
            watch.await;
            drop(place);
        });
    }

    fn place(&self, permit: Option<tokio::sync::OwnedSemaphorePermit>) -> Place {
        Place { permit, freed: self.place_freed.clone() }
    }

    /// Takes over every SQL process left running by a previous proxy: each
    /// control socket `sql-<tenant id>-<pid>.ctl` that answers (and
    /// `sql-<tenant id>.ctl`, as proxies before multi-process tenants named
    /// them); the files of those that do not are removed.
    async fn adopt_all(self: &Arc<Self>) {
        let Ok(entries) = std::fs::read_dir(&self.cfg.run_dir) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_prefix("sql-").and_then(|n| n.strip_suffix(".ctl"));
            let id = stem.map(|n| n.split_once('-').map_or(n, |(id, _pid)| id));
            let Some(id) = id.and_then(|n| n.parse::<u64>().ok()) else { continue };
            let (control, socket) = (e.path(), e.path().with_extension("sock"));
            let status = match Control::connect(&control).await {
                Ok(mut ctl) => ctl.status().await.map(|st| (ctl, st)),
                Err(e) => Err(e),
            };
            let Ok((ctl, status)) = status else {
                // Left by a process that is gone.
                let _ = std::fs::remove_file(&control);
                let _ = std::fs::remove_file(&socket);
                continue;
            };
            tracing::info!(tenant = id, pid = status.pid, "took over a running SQL process");
            let slot = self.slot(id);
            let mut g = slot.lock().await;
            // It counts against the limit if there is room (it runs either way).
            let place = self.place(self.places.clone().try_acquire_owned().ok());
            self.clone().install(socket, status.accepted, &slot, &mut g, ctl, Some(place));
        }
    }

    /// Gives tenant `info` one more SQL process by `deadline`: a pooled one
    /// bound to it, or a fresh one when the pool is empty and the process
    /// limit allows, else (if `wait`) the first that joins the pool or fits
    /// under the limit.
    async fn start(
        self: Arc<Self>,
        info: &TenantInfo,
        slot: &Arc<tokio::sync::Mutex<Slot>>,
        g: &mut Slot,
        deadline: Instant,
        wait: bool,
    ) -> Result<(), ErrorReport> {
        let busy = || {
            let max = self.cfg.max_sql_processes;
            no_process(
                &info.name,
                format!("all {max} allowed are running (--max-sql-processes); try again later"),
            )
        };
        let (pid, socket, control) = loop {
            // Made before looking, so a process pooled after the look wakes us.
            let filled = self.pool_filled.notified();
            let pooled = self.pool.lock().pop();
            let p = match pooled {
                // Started before the binary was replaced (an upgrade): not
                // for a new tenant's process.
                Some(p) if p.process.binary != self.binary_now() => {
                    self.pool_taken.notify_one();
                    self.discard(p);
                    continue;
                }
                Some(p) => {
                    self.pool_taken.notify_one();
                    p
                }
                None if !wait => match self.places.clone().try_acquire_owned() {
                    Ok(permit) => self.launch_by(deadline, permit, info).await?,
                    Err(_) => return Err(busy()),
                },
                None => {
                    let for_place = async {
                        tokio::select! {
                            permit = self.places.clone().acquire_owned() => permit.ok(),
                            () = filled => None,
                        }
                    };
                    match tokio::time::timeout_at(deadline.into(), for_place).await {
                        Err(_) => return Err(busy()),
                        Ok(None) => continue, // one joined the pool
                        Ok(Some(permit)) => self.launch_by(deadline, permit, info).await?,
                    }
                }
            };
            let (socket, control) = self.sockets(info.id, p.process.pid);
            let bind = Bind {
                tenant: info.name.clone(),
                tenant_id: info.id,
                token: self.cfg.secret.tenant_token(info.id),
                socket: socket.clone(),
                control: control.clone(),
                events: self.events.get().map(|_| self.events_path()),
            };
            match p.bind(&bind, &self.children).await {
                Ok(pid) => break (pid, socket, control),
                Err(e) if Instant::now() >= deadline => return Err(no_process(&info.name, e)),
                // A pooled process that died while it waited: take another.
                Err(e) => {
                    tracing::warn!(tenant = %info.name, error = %e, "binding a SQL process failed")
                }
            }
        };
        let ctl = Control::connect(&control).await.map_err(|e| no_process(&info.name, e))?;
        tracing::info!(tenant = %info.name, pid, "a SQL process serves the tenant");
        self.install(socket, 0, slot, g, ctl, None);
        Ok(())
    }

    /// The binary a process launched now would run.
    fn binary_now(&self) -> Option<fork::BinaryId> {
        fork::BinaryId::of(&(self.cfg.launcher.exec)())
    }

    /// Ends a pooled process (in the background).
    fn discard(&self, mut p: Pooled) {
        let children = self.children.clone();
        tokio::spawn(async move {
            p.process.kill().await;
            children.lock().retain(|pid| *pid != p.process.pid);
        });
    }

    /// Launches a process in the place `permit` holds, by `deadline`.
    async fn launch_by(
        &self,
        deadline: Instant,
        permit: tokio::sync::OwnedSemaphorePermit,
        info: &TenantInfo,
    ) -> Result<Pooled, ErrorReport> {
        let launch = self.launch(self.place(Some(permit)));
        match tokio::time::timeout_at(deadline.into(), launch).await {
            Ok(Ok(p)) => Ok(p),
            Ok(Err(e)) => Err(no_process(&info.name, e)),
            Err(_) => Err(no_process(&info.name, "timed out waiting for one")),
        }
    }

    /// Retires the process `generation` of a slot once it has been idle for
    /// the idle timeout; clears the slot when the process goes.
    async fn watch(
        self: Arc<Self>,
        slot: Arc<tokio::sync::Mutex<Slot>>,
        generation: u64,
        mut ctl: Control,
    ) {
        let mine = |g: &Slot| g.running.iter().position(|r| r.generation == generation);
        loop {
            if ctl.wait_idle(self.cfg.idle_timeout).await.is_err() {
                break;
            }
            let mut g = slot.lock().await;
            let Some(i) = mine(&g) else { return };
            match ctl.retire(g.running[i].handed).await {
                Ok(true) => {
                    g.running.remove(i);
                    match g.running.is_empty() {
                        true => tracing::info!("suspended a tenant: its SQL process was idle"),
                        false => {
                            tracing::info!("retired one of a tenant's SQL processes: it was idle")
                        }
                    }
                    return;
                }
                Ok(false) => continue,
                Err(_) => break,
            }
        }
        // The process is gone.
        let mut g = slot.lock().await;
        if let Some(i) = mine(&g) {
            g.running.remove(i);
        }
    }

    /// Keeps [`Config::warm_pool`] processes ready, forever, within the
    /// process limit: a free place goes to a waiting client first.
    async fn refill(self: Arc<Self>) {
        loop {
            while self.pool.lock().len() < self.cfg.warm_pool {
                let Ok(permit) = self.places.clone().try_acquire_owned() else {
                    self.place_freed.notified().await;
                    continue;
                };
                match self.launch(self.place(Some(permit))).await {
                    Ok(p) => {
                        self.pool.lock().push(p);
                        self.pool_filled.notify_waiters();
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "could not start a pooled SQL process");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
            }
            self.pool_taken.notified().await;
        }
    }

    /// Starts a tenant-less SQL process in `place` (forked by the fork
    /// server if there is one and it works, else exec'd) and waits until
    /// it is ready.
    async fn launch(&self, place: Place) -> Result<Pooled, String> {
        let _permit = self.launches.acquire().await.map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let forked = match &self.fork {
            Some(f) => match f.fork().await {
                Ok(p) => Some(p),
                Err(e) => {
                    tracing::warn!(error = %e, "forking a SQL process failed; exec'ing one");
                    None
                }
            },
            None => None,
        };
        let process = match forked {
            Some(p) => p,
            None => fork::Process::exec((self.cfg.launcher.exec)()).map_err(|e| e.to_string())?,
        };
        let mut p = Pooled { process, place };
        if let Err(e) = p.read_ready().await {
            p.process.kill().await;
            return Err(e);
        }
        self.children.lock().push(p.process.pid);
        tracing::debug!(
            pid = p.process.pid,
            ms = t0.elapsed().as_secs_f64() * 1e3,
            "launched a pooled SQL process"
        );
        Ok(p)
    }

    /// Hands a CancelRequest to every SQL process (see the module docs).
    async fn cancel(&self, packet: Vec<u8>) {
        let slots: Vec<_> = self.tenants.lock().values().cloned().collect();
        let mut buf = BytesMut::new();
        buf.put_slice(proxy_header::encode(&Origin::Unknown).as_bytes());
        buf.put_u32(packet.len() as u32 + 4);
        buf.put_slice(&packet);
        let remote: Vec<_> = self.remote_used.lock().clone().into_iter().collect();
        for (id, addr) in remote {
            let (buf, token) = (buf.clone(), self.cfg.secret.proxy_token(id));
            tokio::spawn(async move {
                if let Ok(mut s) = connect_remote(&addr, &token).await {
                    let _ = s.write_all(&buf).await;
                    let _ = s.shutdown().await;
                }
            });
        }
        for slot in slots {
            let buf = buf.clone();
            // Each under its routing lock (the handed count); one tenant
            // that is starting a process does not hold up the others.
            tokio::spawn(async move {
                let mut g = slot.lock().await;
                let mut sent = Vec::new();
                for r in &mut g.running {
                    if let Ok(s) = UnixStream::connect(&r.socket).await {
                        r.handed += 1;
                        sent.push(s);
                    }
                }
                drop(g);
                for mut s in sent {
                    let _ = s.write_all(&buf).await;
                    let _ = s.shutdown().await;
                }
            });
        }
    }

    /// Looks a tenant up on the KV server (reconnecting the admin client if
    /// its connection broke).
    async fn lookup(&self, name: &str) -> Result<Option<TenantInfo>, ErrorReport> {
        let unavailable = |e: kvrpc::proto::WireError| {
            ErrorReport::fatal(SqlState::CannotConnectNow, format!("storage is unavailable: {e}"))
        };
        let mut admin = self.admin.lock().await;
        if !admin.as_ref().is_some_and(AdminClient::is_alive) {
            let token = self.cfg.secret.admin_token();
            let client = AdminClient::connect(&self.cfg.kv, &token)
                .await
                .map_err(|e| unavailable(e.into()))?;
            *admin = Some(client);
        }
        let client = admin.as_ref().expect("connected above");
        client.lookup(name).await.map_err(|e| unavailable(e.into()))
    }
}

impl Pooled {
    /// Reads the process's next line, which must be `ready`.
    async fn read_ready(&mut self) -> Result<(), String> {
        let mut line = String::new();
        let stdout = &mut self.process.stdout;
        let read = tokio::time::timeout(SQL_START_TIMEOUT, stdout.read_line(&mut line)).await;
        match read {
            Err(_) => Err("it did not get ready in time".into()),
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(0)) => Err("it exited".into()),
            Ok(Ok(_)) if line.trim() == "ready" => Ok(()),
            Ok(Ok(_)) => Err(line.trim().strip_prefix("error ").unwrap_or(line.trim()).to_string()),
        }
    }

    /// Binds the process to a tenant; its pid once it serves. The process
    /// is reaped when it exits (and leaves `children` then).
    async fn bind(mut self, bind: &Bind, children: &Arc<Mutex<Vec<u32>>>) -> Result<u32, String> {
        let t0 = Instant::now();
        let sent = self.process.stdin.write_all(bind.to_line().as_bytes()).await;
        let ready = match sent {
            Ok(()) => self.read_ready().await,
            Err(e) => Err(format!("it is gone: {e}")),
        };
        let pid = self.process.pid;
        if let Err(e) = ready {
            self.process.kill().await;
            children.lock().retain(|p| *p != pid);
            return Err(e);
        }
        tracing::debug!(pid, ms = t0.elapsed().as_secs_f64() * 1e3, "bound a SQL process");
        let Pooled { mut process, place } = self;
        let (children, tenant) = (children.clone(), bind.tenant.clone());
        tokio::spawn(async move {
            process.wait().await;
            drop(place);
            children.lock().retain(|p| *p != pid);
            tracing::info!(%tenant, pid, "a SQL process exited");
        });
        Ok(pid)
    }
}

/// Tells a client its SQL process went away before it was served.
async fn sql_process_closed<IO: AsyncRead + AsyncWrite + Unpin>(t: &mut Transport<IO>) {
    let e = ErrorReport::fatal(
        SqlState::CannotConnectNow,
        "the tenant's SQL process closed the connection",
    );
    t.fatal(&e).await;
}

/// The first real startup packet of a client.
enum First {
    /// An SSLRequest, answered 'S': the TLS handshake comes next.
    Tls,
    /// A CancelRequest's body (code, pid, secret).
    Cancel(Vec<u8>),
    /// A StartupMessage: the minor protocol version and the parameters.
    Start(u16, Vec<(String, String)>),
}

/// Reads startup packets until a StartupMessage or a CancelRequest, or an
/// SSLRequest when `tls` (answered 'S'); other encryption requests are
/// refused ('N'). None if the client left or sent garbage (answered FATAL).
async fn read_startup<IO: AsyncRead + AsyncWrite + Unpin>(
    t: &mut Transport<IO>,
    tls: bool,
) -> Option<First> {
    loop {
        let body = t.startup_frame().await.ok()?;
        match codec::decode_startup(&body) {
            Ok(Startup::Ssl) if tls => {
                t.send(&mut BytesMut::from(&b"S"[..])).await.ok()?;
                return Some(First::Tls);
            }
            Ok(Startup::Ssl) | Ok(Startup::Gss) => {
                t.send(&mut BytesMut::from(&b"N"[..])).await.ok()?;
            }
            Ok(Startup::Cancel(..)) => return Some(First::Cancel(body.to_vec())),
            Ok(Startup::Start { minor, params }) => return Some(First::Start(minor, params)),
            Err(e) => {
                t.fatal(&e).await;
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_round_trip() {
        let params = vec![("user".to_string(), "u".to_string()), ("database".into(), "d".into())];
        let mut buf = BytesMut::new();
        codec::encode_startup(&mut buf, 0, &params);
        let body = codec::decode_startup_frame(&mut buf).expect("valid").expect("complete");
        match codec::decode_startup(&body) {
            Ok(Startup::Start { minor: 0, params: p }) => assert_eq!(p, params),
            other => panic!("unexpected {other:?}"),
        }
    }
}
