//! What the proxy and its SQL processes say to each other besides client
//! connections: both ends of two small line protocols, kept in one place.
//!
//! **Binding a pooled process.** A warm-pool SQL process starts with no
//! tenant (`strata sql --pool`), does everything that does not depend on
//! one, prints `ready` and waits on its standard input for one line: a
//! [`Bind`] in JSON (the pipe is the proxy's alone, so the tenant's KV token
//! may travel in it). It then connects to the KV server as that tenant,
//! loads the catalog, binds its sockets and prints `ready` again, or
//! `error MESSAGE` and exits. End of input before a bind (the proxy died)
//! makes it exit.
//!
//! **The control socket.** Every SQL process the proxy routes to also
//! listens on a control socket next to its proxy socket. The proxy keeps a
//! connection to it and asks one thing at a time:
//!
//! - `status` → `status PID ACCEPTED OPEN`: the process id, how many
//!   connections it has taken in on the proxy socket, how many are open;
//! - `wait-idle MS` → `idle`, once no connection has been open for MS
//!   milliseconds (at once if that is already so);
//! - `retire N` → `retired` or `busy`. `retired` means the process had
//!   taken in exactly the N connections the proxy made to it and has none
//!   open; it has removed both its socket files and exits at once. The
//!   proxy asks only while it holds the tenant's routing lock, so no
//!   connection can be on its way: a client is never handed to a process
//!   that is going away. Anything else is `busy`, and the process goes on;
//! - `migrate MS PATH` → `migrated MOVED STAYED`: move every session, each
//!   at its next safe point, to the process whose proxy socket is PATH
//!   ([`wire::migrate`]), for up to MS milliseconds; MOVED sessions went,
//!   STAYED connections are still open here (in a transaction all along,
//!   or holding what cannot move).
//!
//! **Authentication events.** A SQL process reports each password
//! authentication to the proxy's datagram socket (`events` in the
//! [`Bind`]) as `auth ok|failed TENANT_ID ADDRESS` (ADDRESS `local` for a
//! client not over TCP), before the client hears the outcome; the proxy
//! throttles failures by client address and tenant ([`crate::throttle`]).
//! Best effort: a lost datagram is one failure not counted.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use wire::server::ConnStats;

/// The line a pooled SQL process reads to become a tenant's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bind {
    /// The tenant's name.
    pub tenant: String,
    /// The tenant's id.
    pub tenant_id: u64,
    /// The tenant's KV token.
    pub token: String,
    /// The unix socket to serve the proxy's connections on.
    pub socket: PathBuf,
    /// The control socket.
    pub control: PathBuf,
    /// Where to report authentication outcomes ([`report_auth`]); None
    /// from a proxy that does not listen for them.
    #[serde(default)]
    pub events: Option<PathBuf>,
}

impl Bind {
    /// The line to send (ends with a newline).
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Parses a line made by [`Bind::to_line`].
    pub fn parse(line: &str) -> Result<Bind, String> {
        serde_json::from_str(line.trim()).map_err(|e| format!("bad bind line: {e}"))
    }
}

/// A process's answer to `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// Its OS pid.
    pub pid: u32,
    /// Connections it has taken in on its proxy socket.
    pub accepted: u64,
    /// Connections open now.
    pub open: usize,
}

/// Serves the control socket of a SQL process (see the module
/// documentation) until the process exits. `sockets` are the files
/// `retired` removes.
pub async fn serve(listener: UnixListener, stats: Arc<ConnStats>, sockets: Vec<PathBuf>) {
    let sockets = Arc::new(sockets);
    loop {
        let Ok((s, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        tokio::spawn(serve_one(s, stats.clone(), sockets.clone()));
    }
}

/// One control connection: requests in order, until it closes.
async fn serve_one(s: UnixStream, stats: Arc<ConnStats>, sockets: Arc<Vec<PathBuf>>) {
    let (r, mut w) = s.into_split();
    let mut lines = BufReader::new(r).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut words = line.split_whitespace();
        if let Some(("migrate", rest)) = line.split_once(' ') {
            let request =
                rest.split_once(' ').and_then(|(ms, path)| Some((ms.parse().ok()?, path)));
            let answer = match request {
                Some((ms, path)) => {
                    let wait = Duration::from_millis(ms);
                    let (moved, stayed) = stats.migrate(PathBuf::from(path), wait).await;
                    format!("migrated {moved} {stayed}")
                }
                None => format!("error bad request {line:?}"),
            };
            if w.write_all(format!("{answer}\n").as_bytes()).await.is_err() {
                return;
            }
            continue;
        }
        let answer = match (words.next(), words.next().map(str::parse::<u64>)) {
            (Some("status"), None) => format!(
                "status {} {} {}",
                std::process::id(),
                stats.proxied_accepted(),
                stats.open()
            ),
            (Some("wait-idle"), Some(Ok(ms))) => {
                stats.wait_idle(Duration::from_millis(ms)).await;
                "idle".into()
            }
            (Some("retire"), Some(Ok(n))) => {
                // Accepted first: a connection is counted open before it is
                // counted accepted, so an accepted count of N means the
                // open count read after it includes all N.
                if stats.proxied_accepted() == n && stats.open() == 0 {
                    for p in sockets.iter() {
                        let _ = std::fs::remove_file(p);
                    }
                    let _ = w.write_all(b"retired\n").await;
                    tracing::info!("idle: retired by the proxy; exiting");
                    // No session is open and none can arrive: nothing to
                    // finish. The KV server sees the connection close.
                    std::process::exit(0);
                }
                "busy".into()
            }
            _ => format!("error unknown request {line:?}"),
        };
        if w.write_all(format!("{answer}\n").as_bytes()).await.is_err() {
            return;
        }
    }
}

/// An authentication outcome as a SQL process reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthEvent {
    /// The tenant the process serves.
    pub tenant_id: u64,
    /// The client's address (None: not over TCP).
    pub client: Option<std::net::IpAddr>,
    /// The password was right.
    pub ok: bool,
}

impl AuthEvent {
    /// The datagram.
    pub fn encode(&self) -> String {
        let client = self.client.map_or_else(|| "local".to_string(), |ip| ip.to_string());
        let ok = if self.ok { "ok" } else { "failed" };
        format!("auth {ok} {} {client}", self.tenant_id)
    }

    /// Parses a datagram (None if it is not one).
    pub fn parse(text: &str) -> Option<AuthEvent> {
        let w: Vec<&str> = text.split_whitespace().collect();
        let ["auth", ok, tenant, client] = w.as_slice() else { return None };
        let ok = match *ok {
            "ok" => true,
            "failed" => false,
            _ => return None,
        };
        let client = match *client {
            "local" => None,
            ip => Some(ip.parse().ok()?),
        };
        Some(AuthEvent { tenant_id: tenant.parse().ok()?, client, ok })
    }
}

/// Sends `event` to the proxy's events socket at `path` (best effort; a
/// full or missing socket drops it). `socket` is an unbound, non-blocking
/// datagram socket the process keeps.
pub fn report_auth(socket: &std::os::unix::net::UnixDatagram, path: &Path, event: AuthEvent) {
    if let Err(e) = socket.send_to(event.encode().as_bytes(), path) {
        tracing::debug!(error = %e, "could not report an authentication to the proxy");
    }
}

/// The proxy's end of a control connection.
pub struct Control {
    lines: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    w: OwnedWriteHalf,
}

impl Control {
    /// Connects to the control socket at `path`.
    pub async fn connect(path: &Path) -> std::io::Result<Control> {
        let (r, w) = UnixStream::connect(path).await?.into_split();
        Ok(Control { lines: BufReader::new(r).lines(), w })
    }

    /// Sends one request and reads its answer.
    async fn ask(&mut self, request: &str) -> std::io::Result<String> {
        self.w.write_all(format!("{request}\n").as_bytes()).await?;
        match self.lines.next_line().await? {
            Some(l) => Ok(l),
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }

    /// The process's [`Status`].
    pub async fn status(&mut self) -> std::io::Result<Status> {
        let line = self.ask("status").await?;
        let n: Vec<&str> = line.split_whitespace().collect();
        let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, line.clone());
        match n.as_slice() {
            ["status", pid, accepted, open] => Ok(Status {
                pid: pid.parse().map_err(|_| bad())?,
                accepted: accepted.parse().map_err(|_| bad())?,
                open: open.parse().map_err(|_| bad())?,
            }),
            _ => Err(bad()),
        }
    }

    /// Returns once the process has had no connection for `idle`.
    pub async fn wait_idle(&mut self, idle: Duration) -> std::io::Result<()> {
        let ms = idle.as_millis().min(u64::MAX as u128);
        match self.ask(&format!("wait-idle {ms}")).await?.as_str() {
            "idle" => Ok(()),
            other => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string())),
        }
    }

    /// Asks the process to exit if it took in exactly `handed` connections
    /// and holds none: true if it did (it is exiting).
    pub async fn retire(&mut self, handed: u64) -> std::io::Result<bool> {
        Ok(self.ask(&format!("retire {handed}")).await? == "retired")
    }

    /// Moves the process's sessions to the process on `target` (see the
    /// module docs), for up to `wait`: (moved, stayed).
    pub async fn migrate(&mut self, target: &Path, wait: Duration) -> std::io::Result<(u64, u64)> {
        let ms = wait.as_millis().min(u64::MAX as u128);
        let line = self.ask(&format!("migrate {ms} {}", target.display())).await?;
        let n: Vec<&str> = line.split_whitespace().collect();
        match n.as_slice() {
            ["migrated", moved, stayed] => match (moved.parse(), stayed.parse()) {
                (Ok(m), Ok(s)) => Ok((m, s)),
                _ => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, line.clone())),
            },
            _ => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, line.clone())),
        }
    }

    /// Waits (up to `timeout`) for the process to close the connection,
    /// which it does by exiting.
    pub async fn closed(mut self, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, async {
            while let Ok(Some(_)) = self.lines.next_line().await {}
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_round_trip() {
        let b = Bind {
            tenant: "acme".into(),
            tenant_id: 7,
            token: "abc".into(),
            socket: "/tmp/a b/sql-7.sock".into(),
            control: "/tmp/a b/sql-7.ctl".into(),
            events: Some("/tmp/a b/events.sock".into()),
        };
        let line = b.to_line();
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        assert_eq!(Bind::parse(&line), Ok(b));
        assert!(Bind::parse("bind acme").is_err());
    }

    #[test]
    fn auth_event_round_trip() {
        for e in [
            AuthEvent { tenant_id: 7, client: Some([10, 0, 0, 1].into()), ok: false },
            AuthEvent {
                tenant_id: 2,
                client: Some(std::net::Ipv6Addr::LOCALHOST.into()),
                ok: true,
            },
            AuthEvent { tenant_id: 3, client: None, ok: false },
        ] {
            assert_eq!(AuthEvent::parse(&e.encode()), Some(e));
        }
        assert_eq!(AuthEvent::parse("auth maybe 1 local"), None);
        assert_eq!(AuthEvent::parse("auth ok x local"), None);
        assert_eq!(AuthEvent::parse("status"), None);
    }

    #[tokio::test]
    async fn status_idle_and_busy() {
        let dir = std::env::temp_dir().join(format!("strata-ctl-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("x.ctl");
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).expect("bind");
        let stats = Arc::new(ConnStats::default());
        tokio::spawn(serve(listener, stats.clone(), vec![]));
        let mut c = Control::connect(&path).await.expect("connect");
        let st = c.status().await.expect("status");
        assert_eq!((st.pid, st.accepted, st.open), (std::process::id(), 0, 0));
        c.wait_idle(Duration::from_millis(1)).await.expect("idle");
        // One connection the proxy made that the process has not taken in:
        // it must not retire (exiting would end this test's process).
        assert!(!c.retire(1).await.expect("retire"));
        // No session to move: done at once, whatever the target.
        let moved = c.migrate(&dir.join("no such.sock"), Duration::from_secs(5)).await;
        assert_eq!(moved.expect("migrate"), (0, 0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
