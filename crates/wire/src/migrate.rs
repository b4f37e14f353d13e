//! Live session migration: moving an idle client connection, with its
//! session, to another server process of the same tenant.
//!
//! The process that holds the connection (the sender) is given an
//! [`Order`](crate::migrate::Order) through [`crate::server::ConnStats::migrate`]: move every
//! session to the server listening on `target` (its proxy socket). Each
//! connection obeys at its next safe point: ReadyForQuery was sent with no
//! transaction open, and the session says it can move
//! ([`crate::Session::export`]: no temporary tables, cursors or session
//! locks). It then sends the receiver an [`Envelope`](crate::migrate::Envelope) — who the client is,
//! its BackendKeyData, its protocol-level prepared statements (as text and
//! parameter types), the session's own state, and the client's bytes
//! already read but not yet handled — with the client's socket attached
//! ([`crate::handoff`], SCM_RIGHTS), and waits for one line back.
//!
//! The receiver rebuilds the session ([`crate::Backend::resume`]),
//! prepares the statements again, registers the same cancel key, and only
//! then answers `ok`; from that moment it serves the client, and the
//! sender lets go of the socket without writing to it. Any failure on the
//! receiver's side is answered `error ...`, it drops its copy of the
//! socket, and the sender goes on serving as if nothing had happened. The
//! client sees nothing either way: it is idle, and whatever it sends
//! meanwhile waits in the socket for whichever process reads it next.
//!
//! The envelope is one line `STRATA-MIGRATE 1`, one line of JSON, then the
//! pending client bytes. Only processes that can reach the 0700 run
//! directory can connect to a proxy socket, the same trust as the PROXY
//! header the proxy writes there.

use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::backend::{Oid, StartupInfo};
use crate::cancel::{BackendKey, ConnControl};

/// The first line of an envelope.
const MAGIC: &[u8] = b"STRATA-MIGRATE 1\n";

/// How long a sender waits for the receiver to connect and to answer.
/// Past it the sender stops serving the client (the receiver may hold
/// it), never serves it alongside.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// What a session takes to its new process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// The StartupMessage's user.
    pub user: String,
    /// The StartupMessage's database.
    pub database: String,
    /// The StartupMessage's other parameters.
    pub params: Vec<(String, String)>,
    /// The client's address (TCP).
    pub client_addr: Option<std::net::SocketAddr>,
    /// The server address the client reached (TCP).
    pub server_addr: Option<std::net::SocketAddr>,
    /// The BackendKeyData the client holds.
    pub pid: i32,
    /// Its secret.
    pub secret: i32,
    /// Protocol-level prepared statements.
    pub statements: Vec<CarriedStatement>,
    /// The session's own state ([`crate::Session::export`]).
    pub session: String,
}

/// A protocol-level prepared statement as it moves: prepared again from
/// its text with the parameter types the client was told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedStatement {
    /// Its protocol name ("" for the unnamed statement).
    pub name: String,
    /// The query string of its Parse.
    pub sql: String,
    /// Its parameter types.
    pub types: Vec<Oid>,
}

impl Envelope {
    /// The envelope of a session that logged in with `info`.
    pub fn new(info: &StartupInfo, key: BackendKey, session: String) -> Envelope {
        Envelope {
            user: info.user.clone(),
            database: info.database.clone(),
            params: info.params.clone(),
            client_addr: info.client_addr,
            server_addr: info.server_addr,
            pid: key.pid,
            secret: key.secret,
            statements: Vec::new(),
            session,
        }
    }

    /// The key the client holds.
    pub fn key(&self) -> BackendKey {
        BackendKey { pid: self.pid, secret: self.secret }
    }

    /// The startup as the receiving process sees it.
    pub fn startup(&self, control: ConnControl) -> StartupInfo {
        StartupInfo {
            user: self.user.clone(),
            database: self.database.clone(),
            params: self.params.clone(),
            pid: self.pid,
            client_addr: self.client_addr,
            server_addr: self.server_addr,
            control,
        }
    }

    /// The bytes sent ahead of the socket: the envelope, then `pending`.
    pub fn encode(&self, pending: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(serde_json::to_string(self).unwrap_or_default().as_bytes());
        out.push(b'\n');
        out.extend_from_slice(pending);
        out
    }
}

/// True if a handed-over connection's prefix is an envelope (not a PROXY
/// header from the proxy).
pub fn is_envelope(prefix: &[u8]) -> bool {
    prefix.starts_with(MAGIC)
}

/// Splits a prefix made by [`Envelope::encode`] into the envelope and the
/// pending client bytes.
pub fn decode(prefix: &[u8]) -> Result<(Envelope, Vec<u8>), String> {
    let rest = prefix.strip_prefix(MAGIC).ok_or("not a session envelope")?;
    let end = rest.iter().position(|b| *b == b'\n').ok_or("the envelope has no end")?;
    let env = serde_json::from_slice(&rest[..end]).map_err(|e| format!("bad envelope: {e}"))?;
    Ok((env, rest[end + 1..].to_vec()))
}

/// Sends a session to the server on `target` with the client's socket
/// `client`, and waits for its answer: Ok(true) once the receiver serves
/// the client (or may: it did not answer in time), Ok(false) if it
/// refused, Err if it could not be reached (nothing was handed over).
pub async fn send(target: &Path, client: BorrowedFd<'_>, prefix: &[u8]) -> std::io::Result<bool> {
    let connect = tokio::time::timeout(ANSWER_TIMEOUT, UnixStream::connect(target));
    let mut s = connect.await.map_err(|_| std::io::ErrorKind::TimedOut)??;
    if let Err(e) = crate::handoff::send(&mut s, client, prefix).await {
        // The descriptor went with the first bytes, if any went: whether
        // the receiver got it is unknown. Its answer says.
        tracing::debug!(error = %e, "sending a session's state failed");
    }
    let (mut line, mut r) = (String::new(), BufReader::new(&mut s));
    let answer = tokio::time::timeout(ANSWER_TIMEOUT, r.read_line(&mut line));
    match answer.await {
        Ok(Ok(_)) if line.trim() == "ok" => Ok(true),
        Ok(_) => {
            tracing::info!(answer = line.trim(), "a session could not move; it stays");
            Ok(false)
        }
        Err(_) => {
            tracing::warn!("the receiving process did not answer; leaving the session to it");
            Ok(true)
        }
    }
}

/// Answers a sender ([`send`]): `ok`, or `error WHY`.
pub async fn answer(to: &mut UnixStream, outcome: Result<(), String>) {
    let line = match outcome {
        Ok(()) => "ok\n".to_string(),
        Err(why) => format!("error {}\n", why.replace('\n', " ")),
    };
    let _ = to.write_all(line.as_bytes()).await;
    let _ = to.flush().await;
}

/// An order to move every session to the server listening on `target`.
#[derive(Debug)]
pub struct Order {
    /// The receiver's proxy socket.
    pub target: PathBuf,
    /// The order lapses then; sessions not moved by then stay.
    pub until: Instant,
    /// Sessions moved so far.
    moved: AtomicU64,
}

impl Order {
    /// An order to move sessions to `target` for `wait`.
    pub fn new(target: PathBuf, wait: Duration) -> Order {
        Order { target, until: Instant::now() + wait, moved: AtomicU64::new(0) }
    }

    /// Whether it still holds.
    pub fn live(&self) -> bool {
        Instant::now() < self.until
    }

    /// Counts one moved session.
    pub fn moved_one(&self) {
        self.moved.fetch_add(1, Ordering::SeqCst);
    }

    /// Sessions moved so far.
    pub fn moved(&self) -> u64 {
        self.moved.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_round_trips_with_its_pending_bytes() {
        let info = StartupInfo {
            user: "u".into(),
            database: "postgres".into(),
            params: vec![("application_name".into(), "a\nb".into())],
            client_addr: Some("127.0.0.1:5000".parse().expect("addr")),
            ..Default::default()
        };
        let mut env = Envelope::new(&info, BackendKey { pid: 7, secret: -3 }, "{\"x\":1}".into());
        env.statements.push(CarriedStatement {
            name: "s1".into(),
            sql: "select $1".into(),
            types: vec![23],
        });
        let bytes = env.encode(b"Q\0\0\0\x05\n");
        assert!(is_envelope(&bytes));
        assert!(!is_envelope(b"PROXY UNKNOWN\r\n"));
        let (back, pending) = decode(&bytes).expect("decodes");
        assert_eq!(back, env);
        assert_eq!(pending, b"Q\0\0\0\x05\n");
        assert!(decode(b"STRATA-MIGRATE 1\n{bad").is_err());
        assert!(decode(b"PROXY").is_err());
    }
}
