//! Listeners and the accept loop, plus the cancel-key registry.
//!
//! Each accepted connection runs as its own tokio task; a failing or
//! misbehaving connection ends only that task.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::Notify;

use crate::backend::Backend;
use crate::conn;

/// The sockets a server accepts on.
pub struct Listeners {
    tcp: TcpListener,
    unix: Option<(UnixListener, PathBuf)>,
}

impl Listeners {
    /// Binds TCP on `addr` and, if given, a unix socket at `unix` (a stale
    /// socket file left by a killed server is replaced).
    pub async fn bind(addr: SocketAddr, unix: Option<&Path>) -> io::Result<Listeners> {
        let tcp = TcpListener::bind(addr).await?;
        let unix = match unix {
            Some(p) => {
                if p.exists() {
                    std::fs::remove_file(p)?;
                }
                Some((UnixListener::bind(p)?, p.to_path_buf()))
            }
            None => None,
        };
        Ok(Listeners { tcp, unix })
    }

    /// The TCP address actually bound (useful with port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

/// Maps BackendKeyData to the running connection's cancel signal.
#[derive(Default)]
pub struct CancelRegistry {
    map: Mutex<HashMap<i32, (i32, Arc<Notify>)>>,
}

impl CancelRegistry {
    /// Registers a new connection; returns its (pid, secret) and signal.
    pub fn register(&self) -> (i32, i32, Arc<Notify>) {
        let notify = Arc::new(Notify::new());
        let mut map = self.map.lock();
        loop {
            let pid = (rand::random::<u32>() >> 1) as i32 | 1;
            if map.contains_key(&pid) {
                continue;
            }
            let secret = rand::random::<i32>();
            map.insert(pid, (secret, notify.clone()));
            return (pid, secret, notify);
        }
    }

    /// Removes a closed connection.
    pub fn unregister(&self, pid: i32) {
        self.map.lock().remove(&pid);
    }

    /// Signals the statement running on `pid` if `secret` matches. Only a
    /// statement running at that moment is cancelled, as in PostgreSQL.
    pub fn cancel(&self, pid: i32, secret: i32) {
        if let Some((s, n)) = self.map.lock().get(&pid) {
            if *s == secret {
                n.notify_waiters();
            }
        }
    }
}

/// Serves connections until the listeners fail.
pub async fn serve<B: Backend>(backend: Arc<B>, listeners: Listeners) -> io::Result<()> {
    let registry = Arc::new(CancelRegistry::default());
    let Listeners { tcp, unix } = listeners;
    let tcp_loop = {
        let backend = backend.clone();
        let registry = registry.clone();
        async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(x) => x,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let local = peer.ip().is_loopback();
                tokio::spawn(conn::run(backend.clone(), registry.clone(), stream, local));
            }
            #[allow(unreachable_code)]
            Ok::<(), io::Error>(())
        }
    };
    match unix {
        None => tcp_loop.await,
        Some((ul, _path)) => {
            let unix_loop = async move {
                loop {
                    match ul.accept().await {
                        Ok((stream, _)) => {
                            tokio::spawn(conn::run(
                                backend.clone(),
                                registry.clone(),
                                stream,
                                true,
                            ));
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "unix accept failed");
                            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        }
                    }
                }
                #[allow(unreachable_code)]
                Ok::<(), io::Error>(())
            };
            tokio::select! {
                r = tcp_loop => r,
                r = unix_loop => r,
            }
        }
    }
}
