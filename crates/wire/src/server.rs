//! Listeners and the accept loop.
//!
//! Each accepted connection runs as its own tokio task, so a failing or
//! misbehaving connection ends only that task. TCP sockets get TCP_NODELAY
//! (every flush is a complete response the client is waiting for). A
//! connection counts as `local` (for [`crate::Backend::auth_method`]) when it
//! comes over the unix socket or from a loopback address.
//!
//! Shutdown ([`serve_until`]): stop accepting, then tell every connection;
//! a connection waiting for its next message gets FATAL 57P01 and closes,
//! one running a statement finishes it first. The unix socket file is
//! removed.
//!
//! [`ConnStats`](crate::server::ConnStats) counts the connections the server holds and those the
//! proxy brought, so a SQL process can tell its proxy when it has been idle
//! and whether every connection the proxy made has been taken in; through
//! it the process's supervisor also orders every session moved to another
//! process ([`crate::migrate`]). A session moved here arrives on the
//! proxy's socket like a handed-over client, with an envelope instead of a
//! PROXY header, and is not counted as one the proxy brought.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, UnixListener};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::backend::Backend;
use crate::cancel::CancelRegistry;
use crate::conn::{self, Peer, Signals};
use crate::handoff::Socket;
use crate::migrate::Order;
use crate::tls::ServerTls;

/// The sockets a server accepts on.
pub struct Listeners {
    tcp: Option<TcpListener>,
    unix: Option<(UnixListener, PathBuf)>,
    /// A unix socket for the Strata proxy only: each connection starts
    /// with a PROXY header naming the real client ([`crate::proxy_header`]).
    proxied: Option<(UnixListener, PathBuf)>,
    /// A TCP socket for Strata proxies on other machines: each
    /// connection is TLS from its first byte when `tls` is
    /// set, and starts with a proxy token (checked by the function) and a
    /// PROXY header ([`crate::proxy_header::read_token`]).
    proxied_tcp: Option<(TcpListener, TokenCheck)>,
    /// TLS for TCP clients that ask for it ([`crate::tls`]), and for every
    /// connection on `proxied_tcp`.
    tls: Option<ServerTls>,
    stats: Arc<ConnStats>,
}

/// Whether a proxy's token is the one this server expects (in constant
/// time: the caller's job).
pub type TokenCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// What a server's connections are doing, for the process's supervisor.
pub struct ConnStats {
    /// Connections accepted on the proxy's socket since the start.
    proxied_accepted: AtomicU64,
    /// Connections open now, and since when none has been.
    open: watch::Sender<(usize, Instant)>,
    /// The order to move every session elsewhere, while one holds.
    orders: watch::Sender<Option<Arc<Order>>>,
}

impl Default for ConnStats {
    fn default() -> ConnStats {
        ConnStats {
            proxied_accepted: AtomicU64::new(0),
            open: watch::channel((0, Instant::now())).0,
            orders: watch::channel(None).0,
        }
    }
}

impl ConnStats {
    /// Connections accepted on the proxy's socket so far.
    pub fn proxied_accepted(&self) -> u64 {
        self.proxied_accepted.load(Ordering::SeqCst)
    }

    /// Connections open now (from accept until the connection ends).
    pub fn open(&self) -> usize {
        self.open.borrow().0
    }

    /// Returns once no connection has been open for `idle` (at once if that
    /// is already so).
    pub async fn wait_idle(&self, idle: Duration) {
        let mut rx = self.open.subscribe();
        loop {
            let (open, since) = *rx.borrow_and_update();
            if open == 0 {
                let left = idle.saturating_sub(since.elapsed());
                if left.is_zero() {
                    return;
                }
                // Either the time passes with nothing opened, or the count
                // changes and we look again.
                if tokio::time::timeout(left, rx.changed()).await.is_err() {
                    continue;
                }
            } else if rx.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }

    /// Moves every session, each at its next safe point, to the server on
    /// the proxy socket `target`, for up to `wait`: returns how many moved
    /// and how many connections are still open here when all are gone or
    /// the time is up.
    pub async fn migrate(&self, target: PathBuf, wait: Duration) -> (u64, usize) {
        let order = Arc::new(Order::new(target, wait));
        self.orders.send_replace(Some(order.clone()));
        let mut rx = self.open.subscribe();
        while rx.borrow_and_update().0 > 0 {
            let changed = tokio::time::timeout_at(order.until.into(), rx.changed());
            if !matches!(changed.await, Ok(Ok(()))) {
                break;
            }
        }
        self.orders.send_if_modified(|o| match o {
            Some(mine) if Arc::ptr_eq(mine, &order) => {
                *o = None;
                true
            }
            _ => false,
        });
        (order.moved(), self.open())
    }

    /// Counts a connection open until the guard drops.
    fn opened(self: &Arc<ConnStats>) -> OpenGuard {
        self.open.send_modify(|(n, _)| *n += 1);
        OpenGuard(self.clone())
    }
}

/// One open connection in [`ConnStats`].
struct OpenGuard(Arc<ConnStats>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.open.send_modify(|(n, since)| {
            *n -= 1;
            if *n == 0 {
                *since = Instant::now();
            }
        });
    }
}

/// Binds a unix socket, replacing a stale socket file left by a killed server.
fn bind_unix(p: &Path) -> io::Result<(UnixListener, PathBuf)> {
    if p.exists() {
        std::fs::remove_file(p)?;
    }
    Ok((UnixListener::bind(p)?, p.to_path_buf()))
}

impl Listeners {
    /// Binds TCP on `addr` and, if given, a unix socket at `unix` (a stale
    /// socket file left by a killed server is replaced).
    pub async fn bind(addr: SocketAddr, unix: Option<&Path>) -> io::Result<Listeners> {
        let tcp = TcpListener::bind(addr).await?;
        let unix = unix.map(bind_unix).transpose()?;
        let mut l = Listeners::none();
        (l.tcp, l.unix) = (Some(tcp), unix);
        Ok(l)
    }

    /// No sockets yet (add them with the `with_` methods).
    pub fn none() -> Listeners {
        Listeners {
            tcp: None,
            unix: None,
            proxied: None,
            proxied_tcp: None,
            tls: None,
            stats: Arc::default(),
        }
    }

    /// Offers TLS to TCP clients ([`crate::tls`]); the unix sockets stay
    /// plain.
    pub fn with_tls(mut self, tls: ServerTls) -> Listeners {
        self.tls = Some(tls);
        self
    }

    /// Also accepts on the proxy's unix socket at `path` (see the field).
    pub fn with_proxied(mut self, path: &Path) -> io::Result<Listeners> {
        self.proxied = Some(bind_unix(path)?);
        Ok(self)
    }

    /// Also accepts proxies on other machines on TCP `addr` (see the
    /// field), each connection's token checked by `check`.
    pub async fn with_proxied_tcp(
        mut self,
        addr: SocketAddr,
        check: TokenCheck,
    ) -> io::Result<Listeners> {
        self.proxied_tcp = Some((TcpListener::bind(addr).await?, check));
        Ok(self)
    }

    /// The address the socket for proxies is bound to (useful with port 0).
    pub fn proxied_tcp_addr(&self) -> io::Result<SocketAddr> {
        match &self.proxied_tcp {
            Some((t, _)) => t.local_addr(),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "no TCP listener for proxies")),
        }
    }

    /// The counts of this server's connections.
    pub fn stats(&self) -> Arc<ConnStats> {
        self.stats.clone()
    }

    /// The TCP address actually bound (useful with port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match &self.tcp {
            Some(t) => t.local_addr(),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "no TCP listener")),
        }
    }

    /// Accepts the next connection from either listener.
    async fn accept(&self) -> io::Result<Accepted> {
        let unix = async {
            match &self.unix {
                Some((l, _)) => l.accept().await.map(|(s, _)| Accepted::Unix(s)),
                None => std::future::pending().await,
            }
        };
        let proxied = async {
            match &self.proxied {
                Some((l, _)) => l.accept().await.map(|(s, _)| Accepted::Proxied(s)),
                None => std::future::pending().await,
            }
        };
        let tcp = async {
            match &self.tcp {
                Some(l) => l.accept().await.map(|(s, peer)| Accepted::Tcp(s, peer)),
                None => std::future::pending().await,
            }
        };
        let proxied_tcp = async {
            match &self.proxied_tcp {
                Some((l, check)) => {
                    l.accept().await.map(|(s, _)| Accepted::ProxiedTcp(s, check.clone()))
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = tcp => r,
            r = unix => r,
            r = proxied => r,
            r = proxied_tcp => r,
        }
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        for (_, path) in self.unix.iter().chain(&self.proxied) {
            let _ = std::fs::remove_file(path);
        }
    }
}

enum Accepted {
    Tcp(tokio::net::TcpStream, SocketAddr),
    Unix(tokio::net::UnixStream),
    Proxied(tokio::net::UnixStream),
    ProxiedTcp(tokio::net::TcpStream, TokenCheck),
}

/// Serves connections forever. Dropping this future stops the server hard:
/// the listeners close and every connection task is aborted.
pub async fn serve<B: Backend>(backend: Arc<B>, listeners: Listeners) -> io::Result<()> {
    serve_until(backend, listeners, std::future::pending()).await
}

/// Serves connections until `shutdown` completes, then shuts down as the
/// module documentation describes and returns once every connection ended.
pub async fn serve_until<B: Backend>(
    backend: Arc<B>,
    listeners: Listeners,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let registry = Arc::new(CancelRegistry::default());
    let (stop, stopped) = watch::channel(false);
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                log_task_end(done);
                continue;
            }
            r = listeners.accept() => r,
        };
        let (b, r) = (backend.clone(), registry.clone());
        let s = Signals { shutdown: stopped.clone(), orders: listeners.stats.orders.subscribe() };
        // Counted open before counted accepted, so whoever sees the accepted
        // count sees the connection open too.
        let open = accepted.is_ok().then(|| listeners.stats.opened());
        match accepted {
            Ok(Accepted::Tcp(io, peer)) => {
                let _ = io.set_nodelay(true);
                let addrs = io.local_addr().ok().map(|server| (peer, server));
                let tls = listeners.tls.clone();
                tasks.spawn(async move {
                    let _open = open;
                    let mut peer =
                        Peer { addrs, local: peer.ip().is_loopback(), tls_binding: None };
                    let Some(tls) = tls else { return conn::run(b, r, s, io, peer).await };
                    match crate::tls::accept(io, &tls).await {
                        Ok(crate::tls::Accepted::Plain(io)) => conn::run(b, r, s, io, peer).await,
                        Ok(crate::tls::Accepted::Tls(io)) => {
                            peer.tls_binding = Some(tls.end_point.to_vec());
                            conn::run(b, r, s, io, peer).await
                        }
                        Err(e) => tracing::debug!(error = %e, "a TLS client failed to start"),
                    }
                });
            }
            Ok(Accepted::Unix(io)) => {
                tasks.spawn(async move {
                    let _open = open;
                    conn::run(b, r, s, io, Peer { local: true, ..Peer::default() }).await
                });
            }
            Ok(Accepted::Proxied(io)) => {
                // Counted at once (a retire must not miss it), and taken
                // back if it turns out to be a session moved here.
                listeners.stats.proxied_accepted.fetch_add(1, Ordering::SeqCst);
                let stats = listeners.stats.clone();
                tasks.spawn(async move {
                    let _open = open;
                    use crate::handoff::Accepted as H;
                    let start = crate::handoff::accept(io);
                    match tokio::time::timeout(Duration::from_secs(5), start).await {
                        Ok(Ok(H::Forwarded(io))) => proxied(b, r, s, io).await,
                        Ok(Ok(H::Tcp(io, from))) => handed(b, r, s, io, from, &stats).await,
                        Ok(Ok(H::Unix(io, from))) => handed(b, r, s, io, from, &stats).await,
                        Ok(Err(e)) => tracing::warn!(error = %e, "bad connection from the proxy"),
                        Err(_) => tracing::warn!("the proxy sent nothing"),
                    }
                });
            }
            Ok(Accepted::ProxiedTcp(io, check)) => {
                let _ = io.set_nodelay(true);
                let tls = listeners.tls.clone();
                tasks.spawn(async move {
                    let _open = open;
                    let Some(tls) = tls else { return remote(b, r, s, io, &check).await };
                    let handshake = tokio_rustls::TlsAcceptor::from(tls.config).accept(io);
                    match tokio::time::timeout(PROXY_WAIT, handshake).await {
                        Ok(Ok(io)) => remote(b, r, s, Box::new(io), &check).await,
                        Ok(Err(e)) => {
                            tracing::warn!(error = %e, "a proxy failed its TLS handshake")
                        }
                        Err(_) => tracing::warn!("a proxy did not finish its TLS handshake"),
                    }
                });
            }
            Err(e) => {
                // Usually out of file descriptors: back off instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    drop(listeners);
    let _ = stop.send(true);
    while let Some(done) = tasks.join_next().await {
        log_task_end(done);
    }
    Ok(())
}

/// Serves a handed-over client: one the proxy sent, or a session another
/// process moved here (its envelope comes instead of a PROXY header).
async fn handed<B: Backend, IO>(
    backend: Arc<B>,
    registry: Arc<CancelRegistry>,
    signals: Signals,
    mut io: crate::handoff::Prefixed<IO>,
    mut from: tokio::net::UnixStream,
    stats: &ConnStats,
) where
    crate::handoff::Prefixed<IO>: Socket,
{
    if !crate::migrate::is_envelope(io.unread()) {
        // Not kept for the session: with 10,000 of them, a descriptor each
        // counts.
        drop(from);
        return proxied(backend, registry, signals, io).await;
    }
    stats.proxied_accepted.fetch_sub(1, Ordering::SeqCst);
    match crate::migrate::decode(&io.take_unread()) {
        Ok((env, pending)) => {
            conn::resume(backend, registry, signals, io, env, pending, from).await
        }
        Err(e) => crate::migrate::answer(&mut from, Err(e)).await,
    }
}

/// How long a proxy may take to send what comes before its client's bytes
/// (a TLS handshake, its token, the PROXY header).
const PROXY_WAIT: Duration = Duration::from_secs(5);

/// Serves a client a proxy on another machine forwards: its token first
/// (a connection with another is closed unanswered), then as [`proxied`].
async fn remote<B: Backend, IO: Socket>(
    backend: Arc<B>,
    registry: Arc<CancelRegistry>,
    signals: Signals,
    mut io: IO,
    check: &TokenCheck,
) {
    let token = crate::proxy_header::read_token(&mut io);
    match tokio::time::timeout(PROXY_WAIT, token).await {
        Ok(Ok(t)) if check(&t) => proxied(backend, registry, signals, io).await,
        Ok(Ok(_)) => tracing::warn!("a proxy connection with a wrong token"),
        Ok(Err(e)) => tracing::warn!(error = %e, "a bad connection on the socket for proxies"),
        Err(_) => tracing::warn!("a proxy connection sent no token"),
    }
}

/// Serves a client the proxy forwards or handed over: its PROXY header
/// says who the client is.
async fn proxied<B: Backend, IO: Socket>(
    backend: Arc<B>,
    registry: Arc<CancelRegistry>,
    stopped: Signals,
    mut io: IO,
) {
    let header = crate::proxy_header::read_header(&mut io);
    match tokio::time::timeout(PROXY_WAIT, header).await {
        Ok(Ok(h)) => {
            let (addrs, local) = (h.origin.addrs(), h.origin.is_local());
            let peer = Peer { addrs, local, tls_binding: h.tls_binding };
            conn::run(backend, registry, stopped, io, peer).await
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "bad connection from the proxy"),
        Err(_) => tracing::warn!("the proxy sent no PROXY header"),
    }
}

fn log_task_end(done: Result<(), tokio::task::JoinError>) {
    if let Err(e) = done {
        tracing::error!(error = %e, "connection task failed");
    }
}

/// Serves one already-connected stream (tests, or a proxy handing over a
/// socket); the connection ignores server shutdown.
pub async fn serve_stream<B, IO>(
    backend: Arc<B>,
    registry: Arc<CancelRegistry>,
    io: IO,
    local: bool,
) where
    B: Backend,
    IO: Socket,
{
    let (_keep, shutdown) = watch::channel(false);
    let (_no_orders, orders) = watch::channel(None);
    let peer = Peer { local, ..Peer::default() };
    conn::run(backend, registry, Signals { shutdown, orders }, io, peer).await;
}
