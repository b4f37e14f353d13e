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

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::backend::Backend;
use crate::cancel::CancelRegistry;
use crate::conn;

/// The sockets a server accepts on.
pub struct Listeners {
    tcp: Option<TcpListener>,
    unix: Option<(UnixListener, PathBuf)>,
    /// A unix socket for the Strata proxy only: each connection starts
    /// with a PROXY header naming the real client ([`crate::proxy_header`]).
    proxied: Option<(UnixListener, PathBuf)>,
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
        Ok(Listeners { tcp: Some(tcp), unix, proxied: None })
    }

    /// No sockets yet (add them with the `with_` methods).
    pub fn none() -> Listeners {
        Listeners { tcp: None, unix: None, proxied: None }
    }

    /// Also accepts on the proxy's unix socket at `path` (see the field).
    pub fn with_proxied(mut self, path: &Path) -> io::Result<Listeners> {
        self.proxied = Some(bind_unix(path)?);
        Ok(self)
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
        tokio::select! {
            r = tcp => r,
            r = unix => r,
            r = proxied => r,
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
        let (b, r, s) = (backend.clone(), registry.clone(), stopped.clone());
        match accepted {
            Ok(Accepted::Tcp(io, peer)) => {
                let _ = io.set_nodelay(true);
                let addrs = io.local_addr().ok().map(|server| (peer, server));
                tasks.spawn(conn::run(b, r, s, io, addrs, peer.ip().is_loopback()));
            }
            Ok(Accepted::Unix(io)) => {
                tasks.spawn(conn::run(b, r, s, io, None, true));
            }
            Ok(Accepted::Proxied(io)) => {
                tasks.spawn(async move {
                    use crate::handoff::Accepted as H;
                    let start = crate::handoff::accept(io);
                    match tokio::time::timeout(Duration::from_secs(5), start).await {
                        Ok(Ok(H::Forwarded(io))) => proxied(b, r, s, io).await,
                        Ok(Ok(H::Tcp(io))) => proxied(b, r, s, io).await,
                        Ok(Ok(H::Unix(io))) => proxied(b, r, s, io).await,
                        Ok(Err(e)) => tracing::warn!(error = %e, "bad connection from the proxy"),
                        Err(_) => tracing::warn!("the proxy sent nothing"),
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

/// Serves a client the proxy forwards or handed over: its PROXY header
/// says who the client is.
async fn proxied<B: Backend, IO: AsyncRead + AsyncWrite + Unpin + Send>(
    backend: Arc<B>,
    registry: Arc<CancelRegistry>,
    stopped: watch::Receiver<bool>,
    mut io: IO,
) {
    let header = crate::proxy_header::read(&mut io);
    match tokio::time::timeout(Duration::from_secs(5), header).await {
        Ok(Ok(origin)) => {
            conn::run(backend, registry, stopped, io, origin.addrs(), origin.is_local()).await
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
    IO: AsyncRead + AsyncWrite + Unpin + Send,
{
    let (_keep, stopped) = watch::channel(false);
    conn::run(backend, registry, stopped, io, None, local).await;
}
