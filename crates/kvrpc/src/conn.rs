//! One authenticated, multiplexed connection to the KV server.
//!
//! Many transactions (and their concurrent requests) share a connection: each
//! request carries an id, and a reader task hands each response to the
//! future that waits for it. A writer task owns the socket's write half and
//! sends every queued frame before it flushes, so frames that pile up while
//! a flush is in progress go out together. When the connection breaks,
//! every waiting request fails with [`kvapi::Error::Unavailable`] and the
//! connection is marked dead; callers open a new one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use kvapi::{Error, Result, TenantId};
use parking_lot::Mutex;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio_rustls::rustls;
use tokio_util::codec::Framed;

use crate::proto::{self, ToClient, ToServer};

/// How long connecting and saying hello may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the KV server listens: `host:port`, `tls:host:port@CA-FILE`, or a
/// unix socket path (`unix:/path`, or any path starting with `/` or `.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KvAddr {
    /// A TCP address.
    Tcp(String),
    /// A TCP address of a server that speaks TLS (`strata kv --tls`): its
    /// certificate must chain to a certificate in the PEM file `ca` and
    /// name the host.
    Tls { addr: String, ca: PathBuf },
    /// A unix socket.
    Unix(PathBuf),
}

impl FromStr for KvAddr {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<KvAddr, String> {
        if let Some(p) = s.strip_prefix("unix:") {
            return Ok(KvAddr::Unix(PathBuf::from(p)));
        }
        if s.starts_with('/') || s.starts_with('.') {
            return Ok(KvAddr::Unix(PathBuf::from(s)));
        }
        if let Some(rest) = s.strip_prefix("tls:") {
            return match rest.split_once('@') {
                Some((addr, ca)) if addr.contains(':') && !ca.is_empty() => {
                    Ok(KvAddr::Tls { addr: addr.to_string(), ca: PathBuf::from(ca) })
                }
                _ => Err(format!("bad KV address {s:?}: expected tls:host:port@CA-FILE")),
            };
        }
        if s.is_empty() || !s.contains(':') {
            return Err(format!("bad KV address {s:?}: expected host:port or a socket path"));
        }
        Ok(KvAddr::Tcp(s.to_string()))
    }
}

impl std::fmt::Display for KvAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KvAddr::Tcp(a) => write!(f, "{a}"),
            KvAddr::Tls { addr, ca } => write!(f, "tls:{addr}@{}", ca.display()),
            KvAddr::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// A byte stream the connection can run over.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

impl KvAddr {
    /// Opens a socket to the address.
    pub async fn connect(&self) -> std::io::Result<Box<dyn Io>> {
        match self {
            KvAddr::Tcp(a) => {
                let s = tokio::net::TcpStream::connect(a).await?;
                s.set_nodelay(true)?;
                Ok(Box::new(s))
            }
            KvAddr::Tls { addr, ca } => {
                let s = tokio::net::TcpStream::connect(addr).await?;
                s.set_nodelay(true)?;
                let host = addr.rsplit_once(':').map_or(addr.as_str(), |(h, _)| h);
                let host = host.trim_start_matches('[').trim_end_matches(']');
                let name = ServerName::try_from(host.to_string())
                    .map_err(|e| std::io::Error::other(format!("bad host name {host:?}: {e}")))?;
                let connector = tokio_rustls::TlsConnector::from(client_config(ca)?);
                Ok(Box::new(connector.connect(name, s).await?))
            }
            KvAddr::Unix(p) => Ok(Box::new(tokio::net::UnixStream::connect(p).await?)),
        }
    }
}

/// A TLS client that trusts the certificates in the PEM file `ca`.
fn client_config(ca: &std::path::Path) -> std::io::Result<Arc<rustls::ClientConfig>> {
    let bad = |e: String| std::io::Error::other(format!("the CA file {}: {e}", ca.display()));
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(ca).map_err(|e| bad(e.to_string()))?;
    for cert in certs {
        roots.add(cert.map_err(|e| bad(e.to_string()))?).map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

fn lost() -> Error {
    Error::Unavailable("the connection to the KV server was lost".into())
}

/// A connection bound to one tenant by the server.
pub struct Connection {
    tx: mpsc::UnboundedSender<ToServer>,
    pending: Mutex<HashMap<u64, oneshot::Sender<ToClient>>>,
    next_id: AtomicU64,
    alive: AtomicBool,
    /// The tenant the server bound the connection to.
    pub tenant: TenantId,
    /// The server's number for this connection.
    pub conn_no: u32,
}

/// The framed socket under a connection.
type Framing = Framed<Box<dyn Io>, tokio_util::codec::LengthDelimitedCodec>;

/// Sends `msg` (Hello or Bind) and reads the Welcome: the tenant and the
/// connection's number.
async fn greet(framed: &mut Framing, msg: &ToServer) -> Result<(TenantId, u32)> {
    framed.send(proto::encode(msg)).await.map_err(|_| lost())?;
    let frame = framed.next().await.ok_or_else(lost)?.map_err(|_| lost())?;
    match proto::decode::<ToClient>(&frame).map_err(Error::Corrupt)? {
        ToClient::Welcome { tenant, conn } => Ok((TenantId(tenant), conn)),
        ToClient::Goodbye(e) => Err(Error::from(e)),
        other => Err(Error::Corrupt(format!("unexpected answer to hello: {other:?}"))),
    }
}

/// Runs `f` within [`CONNECT_TIMEOUT`].
async fn in_time<T>(addr: &KvAddr, f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(CONNECT_TIMEOUT, f)
        .await
        .map_err(|_| Error::Unavailable(format!("the KV server at {addr} did not answer")))?
}

/// Opens a socket to `addr` and says hello as `tenant`.
async fn hello(addr: &KvAddr, tenant: &str, token: &str) -> Result<(Framing, TenantId, u32)> {
    let io = addr
        .connect()
        .await
        .map_err(|e| Error::Unavailable(format!("cannot reach the KV server at {addr}: {e}")))?;
    let mut framed = Framed::new(io, proto::codec());
    let pid = std::process::id();
    let msg = ToServer::Hello { tenant: tenant.into(), token: token.into(), pid };
    let (tenant, conn) = greet(&mut framed, &msg).await?;
    Ok((framed, tenant, conn))
}

/// A connection opened with the pool token: bound to no tenant, it serves
/// nothing until [`Unbound::bind`] binds it to one (a pooled SQL process
/// connects while it waits, so binding costs one round trip). The server
/// keeps it open however long the wait.
pub struct Unbound {
    framed: Framing,
    addr: KvAddr,
}

impl Unbound {
    /// Connects to `addr` with the pool token.
    pub async fn open(addr: &KvAddr, pool_token: &str) -> Result<Unbound> {
        let (framed, _, _) = in_time(addr, hello(addr, proto::POOL, pool_token)).await?;
        Ok(Unbound { framed, addr: addr.clone() })
    }

    /// The address it is connected to.
    pub fn addr(&self) -> &KvAddr {
        &self.addr
    }

    /// Binds the connection to `tenant` with its token. Fails (the
    /// connection is gone) if the server closed it meanwhile or refuses.
    pub async fn bind(mut self, tenant: &str, token: &str) -> Result<Arc<Connection>> {
        let msg = ToServer::Bind { tenant: tenant.into(), token: token.into() };
        let (tenant, conn_no) = in_time(&self.addr, greet(&mut self.framed, &msg)).await?;
        Ok(Connection::run(self.framed, tenant, conn_no))
    }
}

impl Connection {
    /// Connects to `addr` and authenticates as `tenant` with `token`.
    pub async fn open(addr: &KvAddr, tenant: &str, token: &str) -> Result<Arc<Connection>> {
        let (framed, tenant, conn_no) = in_time(addr, hello(addr, tenant, token)).await?;
        Ok(Connection::run(framed, tenant, conn_no))
    }

    /// Starts the reader and writer tasks of a greeted connection.
    fn run(framed: Framing, tenant: TenantId, conn_no: u32) -> Arc<Connection> {
        let (sink, stream) = framed.split();
        let (tx, rx) = mpsc::unbounded_channel();
        let conn = Arc::new(Connection {
            tx,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            alive: AtomicBool::new(true),
            tenant,
            conn_no,
        });
        tokio::spawn(write_loop(sink, rx, Arc::downgrade(&conn)));
        tokio::spawn(read_loop(stream, conn.clone()));
        conn
    }

    /// False once the connection broke.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    fn mark_dead(&self) {
        self.alive.store(false, Ordering::Release);
        // Dropping the senders wakes every waiter with an error.
        self.pending.lock().clear();
    }

    /// Sends a frame that needs no answer.
    pub fn send(&self, msg: ToServer) {
        let _ = self.tx.send(msg);
    }

    /// Sends the frame `build` makes for a fresh request id and waits for
    /// its answer.
    pub async fn call(&self, build: impl FnOnce(u64) -> ToServer) -> Result<ToClient> {
        let id = self.next_id();
        let rx = self.start(id, build(id))?;
        self.wait(id, rx, None).await
    }

    /// Waits for the answer to request `id` (registered by
    /// [`Connection::start`]). If the caller stops waiting first, the
    /// request is forgotten and `on_drop` (a Cancel) is sent.
    pub async fn wait(
        &self,
        id: u64,
        rx: oneshot::Receiver<ToClient>,
        on_drop: Option<ToServer>,
    ) -> Result<ToClient> {
        let mut guard = Waiting { conn: self, id, on_drop, armed: true };
        let answer = rx.await.map_err(|_| lost());
        guard.armed = false;
        answer
    }

    /// Registers request `id` and queues its frame; the caller awaits the
    /// receiver. Queued frames keep the order of these calls.
    pub fn start(&self, id: u64, msg: ToServer) -> Result<oneshot::Receiver<ToClient>> {
        if !self.is_alive() {
            return Err(lost());
        }
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        if self.tx.send(msg).is_err() {
            self.pending.lock().remove(&id);
            return Err(lost());
        }
        Ok(rx)
    }

    /// A fresh request id (for [`Connection::start`]).
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Forgets request `id` (its caller stopped waiting).
    pub fn forget(&self, id: u64) {
        self.pending.lock().remove(&id);
    }
}

/// Forgets a request whose caller stopped waiting (its future was
/// dropped), sending the frame that tells the server so.
struct Waiting<'a> {
    conn: &'a Connection,
    id: u64,
    on_drop: Option<ToServer>,
    armed: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.conn.forget(self.id);
            if let Some(msg) = self.on_drop.take() {
                self.conn.send(msg);
            }
        }
    }
}

type Sink = futures_util::stream::SplitSink<Framing, bytes::Bytes>;
type Stream = futures_util::stream::SplitStream<Framing>;

async fn write_loop(
    mut sink: Sink,
    mut rx: mpsc::UnboundedReceiver<ToServer>,
    conn: std::sync::Weak<Connection>,
) {
    while let Some(first) = rx.recv().await {
        let mut ok = sink.feed(proto::encode(&first)).await.is_ok();
        while ok {
            match rx.try_recv() {
                Ok(m) => ok = sink.feed(proto::encode(&m)).await.is_ok(),
                Err(_) => break,
            }
        }
        if !ok || sink.flush().await.is_err() {
            break;
        }
    }
    if let Some(c) = conn.upgrade() {
        c.mark_dead();
    }
}

async fn read_loop(mut stream: Stream, conn: Arc<Connection>) {
    while let Some(frame) = stream.next().await {
        let Ok(frame) = frame else { break };
        let msg = match proto::decode::<ToClient>(&frame) {
            Ok(m) => m,
            Err(e) => {
                tracing::error!(error = %e, "bad frame from the KV server");
                break;
            }
        };
        let id = match &msg {
            ToClient::Response { id, .. } | ToClient::AdminResponse { id, .. } => *id,
            ToClient::Goodbye(e) => {
                tracing::warn!(error = %e, "the KV server closed the connection");
                break;
            }
            ToClient::Welcome { .. } => continue,
        };
        let waiter = conn.pending.lock().remove(&id);
        if let Some(w) = waiter {
            let _ = w.send(msg);
        }
    }
    conn.mark_dead();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!("127.0.0.1:7000".parse(), Ok(KvAddr::Tcp("127.0.0.1:7000".into())));
        assert_eq!("unix:/tmp/kv.sock".parse(), Ok(KvAddr::Unix("/tmp/kv.sock".into())));
        assert_eq!("/tmp/kv.sock".parse(), Ok(KvAddr::Unix("/tmp/kv.sock".into())));
        let tls = KvAddr::Tls { addr: "db1:7000".into(), ca: "/etc/ca.pem".into() };
        assert_eq!("tls:db1:7000@/etc/ca.pem".parse(), Ok(tls.clone()));
        assert_eq!(tls.to_string().parse(), Ok(tls));
        assert!("tls:db1:7000".parse::<KvAddr>().is_err());
        assert!("tls:db1@/etc/ca.pem".parse::<KvAddr>().is_err());
        assert!("nonsense".parse::<KvAddr>().is_err());
    }
}
