//! The Strata proxy: the front door every PostgreSQL client connects to.
//!
//! For each client connection it reads the startup packets (answering
//! SSLRequest and GSSENCRequest with 'N'), finds the tenant the client asks
//! for ([`route`]), checks with the KV server that the tenant exists, finds
//! or starts that tenant's SQL process, and hands the client's socket to it
//! ([`wire::handoff`], SCM_RIGHTS) or, with [`Config::handoff`] off, copies
//! bytes both ways for the session. Authentication is the SQL process's
//! job: it sees the client's real address in the PROXY header the proxy
//! writes first ([`wire::proxy_header`]), on a unix socket in a directory only the proxy
//! (and the supervisor) can reach, so trust and SCRAM work as if the client
//! had connected directly.
//!
//! SQL processes are children of the proxy, one per tenant for now, each
//! listening on `RUN_DIR/sql-<tenant id>.sock`. A process that died is
//! noticed when its socket refuses a connection, and started again. They
//! outlive the proxy: a restarted proxy finds the sockets and uses them.
//! A CancelRequest names no tenant, so it goes to every SQL process; only
//! the one that handed out the key (pid and secret) acts on it.
//!
//! This crate depends on the wire protocol's framing and on the KV RPC's
//! admin client (for tenant lookups), never on the SQL layer or KV internals.

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use kvrpc::{AdminClient, KvAddr, Secret, TenantInfo};
use parking_lot::Mutex;
use sqlstate::{ErrorReport, SqlState};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;
use wire::codec::{self, Startup};
use wire::proxy_header::{self, Origin};
use wire::transport::Transport;

/// Tenant routing rules.
pub mod route;

/// How long a starting SQL process may take to say it is ready.
const SQL_START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client may take to send its startup packet.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// What the proxy needs to start a tenant's SQL process.
pub struct SqlSpec<'a> {
    /// The tenant's name.
    pub tenant: &'a str,
    /// The tenant's id.
    pub tenant_id: u64,
    /// The unix socket the process must listen on for the proxy.
    pub socket: &'a Path,
}

/// Builds the command that runs a SQL process (the binary supplies
/// `strata sql ...`). The proxy adds the KV token to its environment
/// (`STRATA_KV_TOKEN`) and expects the line `ready` on its standard output
/// once it accepts connections.
pub type Launcher = Arc<dyn Fn(&SqlSpec) -> std::process::Command + Send + Sync>;

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
}

/// The proxy (see the module documentation).
pub struct Proxy {
    cfg: Config,
    admin: tokio::sync::Mutex<Option<AdminClient>>,
    /// One lock per tenant id, so simultaneous first connections start one
    /// process between them.
    slots: Mutex<HashMap<u64, Arc<tokio::sync::Mutex<()>>>>,
    /// OS pids of the SQL processes this proxy started and that still run.
    children: Arc<Mutex<Vec<u32>>>,
}

/// A stream the proxy accepts clients on.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

/// Usually out of file descriptors: back off instead of spinning.
async fn accept_failed(e: std::io::Error) {
    tracing::warn!(error = %e, "accept failed");
    tokio::time::sleep(Duration::from_millis(50)).await;
}

impl Proxy {
    /// A proxy with `cfg`.
    pub fn new(cfg: Config) -> Arc<Proxy> {
        Arc::new(Proxy {
            cfg,
            admin: tokio::sync::Mutex::new(None),
            slots: Mutex::new(HashMap::new()),
            children: Arc::default(),
        })
    }

    /// Checks that the KV server answers (before announcing readiness).
    pub async fn check_kv(&self) -> Result<(), ErrorReport> {
        self.lookup(route::DEFAULT_TENANT).await.map(|_| ())
    }

    /// The pids of the SQL processes this proxy started and that still run.
    pub fn child_pids(&self) -> Vec<u32> {
        self.children.lock().clone()
    }

    /// Accepts clients on `tcp` and `unix` until the future is dropped.
    pub async fn serve(
        self: Arc<Self>,
        tcp: tokio::net::TcpListener,
        unix: Option<tokio::net::UnixListener>,
    ) {
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

    /// Serves one client: startup, routing, then the hand-off or forwarding.
    async fn handle<IO: Io + AsFd>(self: Arc<Self>, io: IO, origin: Origin) {
        let mut t = Transport::new(io);
        let startup = tokio::time::timeout(STARTUP_TIMEOUT, read_startup(&mut t)).await;
        let Ok(Some(first)) = startup else { return };
        let (minor, params) = match first {
            First::Cancel(packet) => return self.cancel(&packet).await,
            First::Start(minor, params) => (minor, params),
        };
        let r = route::route(params);
        let mut sql = match self.connect_tenant(&r.tenant).await {
            Ok(s) => s,
            Err(e) => {
                t.fatal(&e).await;
                return;
            }
        };
        let mut head = BytesMut::new();
        head.put_slice(proxy_header::encode(&origin).as_bytes());
        codec::encode_startup(&mut head, minor, &r.params);
        head.put_slice(&t.rbuf);
        let sent = match self.cfg.handoff {
            // The SQL process holds the client's socket from here on; ours
            // closes when `t` drops.
            true => wire::handoff::send(&mut sql, t.io.as_fd(), &head).await,
            false => sql.write_all(&head).await,
        };
        if sent.is_err() {
            let e = ErrorReport::fatal(
                SqlState::CannotConnectNow,
                "the tenant's SQL process closed the connection",
            );
            t.fatal(&e).await;
            return;
        }
        if !self.cfg.handoff {
            // Ends when either side closes; the other side is closed with it.
            let _ = tokio::io::copy_bidirectional(&mut t.io, &mut sql).await;
        }
    }

    /// A fresh connection to tenant `name`'s SQL process, starting one if
    /// none runs. FATAL 3D000 for an unknown tenant (nothing is started).
    async fn connect_tenant(&self, name: &str) -> Result<UnixStream, ErrorReport> {
        let Some(info) = self.lookup(name).await? else {
            return Err(ErrorReport::fatal(
                SqlState::InvalidCatalogName,
                format!("tenant \"{name}\" does not exist"),
            ));
        };
        let slot = self.slots.lock().entry(info.id).or_default().clone();
        let _one = slot.lock().await;
        let socket = self.cfg.run_dir.join(format!("sql-{}.sock", info.id));
        if let Ok(s) = UnixStream::connect(&socket).await {
            return Ok(s);
        }
        self.start_sql(&info, &socket).await?;
        UnixStream::connect(&socket).await.map_err(|e| {
            ErrorReport::fatal(
                SqlState::CannotConnectNow,
                format!("could not reach the SQL process of tenant \"{name}\": {e}"),
            )
        })
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

    /// Starts tenant `info`'s SQL process on `socket` and waits until it is
    /// ready.
    async fn start_sql(&self, info: &TenantInfo, socket: &Path) -> Result<(), ErrorReport> {
        let failed = |why: String| {
            ErrorReport::fatal(
                SqlState::CannotConnectNow,
                format!("could not start the SQL process of tenant \"{}\": {why}", info.name),
            )
        };
        let spec = SqlSpec { tenant: &info.name, tenant_id: info.id, socket };
        let mut cmd = (self.cfg.launcher)(&spec);
        cmd.env("STRATA_KV_TOKEN", self.cfg.secret.tenant_token(info.id))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped());
        let mut child =
            tokio::process::Command::from(cmd).spawn().map_err(|e| failed(e.to_string()))?;
        let pid = child.id().unwrap_or(0);
        let ready = async {
            let out = child.stdout.take()?;
            let mut line = String::new();
            tokio::io::BufReader::new(out).read_line(&mut line).await.ok()?;
            (line.trim() == "ready").then_some(())
        };
        if tokio::time::timeout(SQL_START_TIMEOUT, ready).await.ok().flatten().is_none() {
            let _ = child.start_kill();
            let _ = child.wait().await;
            return Err(failed("it exited or did not get ready".into()));
        }
        tracing::info!(tenant = %info.name, pid, "started a SQL process");
        self.children.lock().push(pid);
        let children = self.children.clone();
        let tenant = info.name.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            children.lock().retain(|p| *p != pid);
            tracing::info!(%tenant, pid, ?status, "a SQL process exited");
        });
        Ok(())
    }

    /// Hands a CancelRequest to every SQL process (see the module docs).
    async fn cancel(&self, packet: &[u8]) {
        let Ok(entries) = std::fs::read_dir(&self.cfg.run_dir) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !(name.starts_with("sql-") && name.ends_with(".sock")) {
                continue;
            }
            let Ok(mut s) = UnixStream::connect(e.path()).await else { continue };
            let mut buf = BytesMut::new();
            buf.put_slice(proxy_header::encode(&Origin::Unknown).as_bytes());
            buf.put_u32(packet.len() as u32 + 4);
            buf.put_slice(packet);
            let _ = s.write_all(&buf).await;
            let _ = s.shutdown().await;
        }
    }
}

/// The first real startup packet of a client.
enum First {
    /// A CancelRequest's body (code, pid, secret).
    Cancel(Vec<u8>),
    /// A StartupMessage: the minor protocol version and the parameters.
    Start(u16, Vec<(String, String)>),
}

/// Reads startup packets, refusing encryption, until a StartupMessage or a
/// CancelRequest; None if the client left or sent garbage (answered FATAL).
async fn read_startup<IO: AsyncRead + AsyncWrite + Unpin>(t: &mut Transport<IO>) -> Option<First> {
    loop {
        let body = t.startup_frame().await.ok()?;
        match codec::decode_startup(&body) {
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
