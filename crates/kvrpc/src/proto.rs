//! The messages of the KV RPC and how they are framed.
//!
//! A connection carries length-prefixed frames (tokio-util's
//! `LengthDelimitedCodec`: a 4-byte big-endian length, at most
//! [`MAX_FRAME`](crate::proto::MAX_FRAME) bytes) whose bodies are [`ToServer`](crate::proto::ToServer) or [`ToClient`](crate::proto::ToClient)
//! values encoded with postcard (serde, varint integers). We chose this
//! stack over tonic/gRPC and tarpc because the hop must be cheap and
//! multiplexed without extra machinery: no code generation, no HTTP/2 layer,
//! one allocation per frame, and our own request ids let many transactions
//! share one connection while a lock wait blocks only its own transaction.
//!
//! The first frame on a connection must be [`ToServer::Hello`](crate::proto::ToServer::Hello): it names a
//! tenant and carries that tenant's token (or the admin token). The server
//! binds the connection to that tenant, and from then on every key and
//! range in a request is checked against the bound tenant, never against a
//! tenant named in the request.
//!
//! A pooled SQL process, which has no tenant yet, says Hello as
//! [`POOL`](crate::proto::POOL) with the pool token: the connection is
//! bound to no tenant and serves nothing, but it stays open (no deadline)
//! until its one [`ToServer::Bind`](crate::proto::ToServer::Bind), which
//! names the tenant and carries that tenant's token, exactly as a Hello
//! would. So the process connects while it waits in the pool, and binding
//! it to a tenant costs one round trip on a connection it already has.
//!
//! A transaction costs no round trip to begin: the client numbers it (its
//! `txn` handle) and the first request carries [`Op::Begin`](crate::proto::Op::Begin). Writes,
//! savepoint rollbacks and snapshot refreshes are local calls in
//! [`kvapi::Txn`]; the client queues them as [`Op`](crate::proto::Op)s and sends them ahead
//! of the transaction's next [`Call`](crate::proto::Call), which the server applies in order
//! first. A read-only transaction ends with a fire-and-forget
//! [`ToServer::End`](crate::proto::ToServer::End); a writing one with [`Call::Commit`](crate::proto::Call::Commit).

use serde::{Deserialize, Serialize};

/// The largest frame either side accepts: a bigger length prefix closes
/// the connection (values are limited to 1 GB in SQL, and COPY batches
/// are far smaller).
pub const MAX_FRAME: usize = 256 << 20;

/// A frame from a SQL process (or an admin tool) to the KV server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ToServer {
    /// Authenticates the connection as `tenant` (a tenant name, or
    /// [`ADMIN`] with the admin token). `pid` is the caller's OS process id,
    /// shown by `strata tenant list`.
    Hello { tenant: String, token: String, pid: u32 },
    /// Binds a connection that said Hello as [`POOL`] to `tenant` (its
    /// token, as in Hello); allowed once, before anything else. Answered
    /// with Welcome, or Goodbye.
    Bind { tenant: String, token: String },
    /// One call of transaction `txn`, after applying `ops` to it.
    Request { id: u64, txn: u64, ops: Vec<Op>, call: Call },
    /// The caller stopped waiting for request `id` of `txn` (a cancelled
    /// statement dropped the future): a lock wait in it is abandoned.
    Cancel { txn: u64, id: u64 },
    /// Ends `txn` without committing: its locks and snapshot are released.
    End { txn: u64 },
    /// How many client sessions the calling SQL process serves now (tenant
    /// drop refuses while a tenant has any).
    Sessions { count: u32 },
    /// A tenant-management call (admin connections only).
    Admin { id: u64, call: AdminCall },
}

/// The tenant name an admin connection says hello as.
pub const ADMIN: &str = "@admin";

/// The tenant name a pooled SQL process says hello as, with the pool
/// token: a connection bound to no tenant until its [`ToServer::Bind`].
pub const POOL: &str = "@pool";

/// A local transaction call, queued by the client and applied by the server
/// before the next [`Call`] of the same transaction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Op {
    /// Opens the transaction (always the first op of its first request).
    Begin { isolation: Isolation },
    /// Buffers a write; `private` is [`kvapi::LockMode::Private`].
    Put { key: Vec<u8>, value: Vec<u8>, private: bool },
    /// Buffers a delete.
    Delete { key: Vec<u8>, private: bool },
    /// [`kvapi::Txn::delete_range_after_commit`].
    DeleteRangeAfterCommit { start: Vec<u8>, end: Vec<u8> },
    /// [`kvapi::Txn::rollback_to`] (the savepoint's write count).
    RollbackTo(u64),
    /// [`kvapi::Txn::set_lock_timeout`], in microseconds.
    LockTimeout(Option<u64>),
    /// [`kvapi::Txn::refresh_snapshot`].
    RefreshSnapshot,
    /// [`kvapi::Txn::assume`]: the request fails with
    /// [`WireError::AssumptionFailed`] (its call does not run; every op
    /// is still applied) unless `key` holds `value` at the snapshot.
    Assume { key: Vec<u8>, value: Option<Vec<u8>> },
    /// [`kvapi::Txn::lock_shared_soon`]: takes the shared locks after the
    /// other ops (a request carrying it may wait). A key changed after the
    /// snapshot fails the request with [`WireError::AssumptionFailed`]; a
    /// lock that cannot be had, with the lock's error.
    LockShared(Vec<Vec<u8>>),
}

/// [`kvapi::IsolationLevel`] on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Isolation {
    /// READ COMMITTED.
    ReadCommitted,
    /// REPEATABLE READ.
    RepeatableRead,
    /// SERIALIZABLE.
    Serializable,
}

/// A transaction call that needs the server's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Call {
    /// Applies the ops only (and reports the snapshot).
    Flush,
    /// [`kvapi::Txn::get`].
    Get(Vec<u8>),
    /// [`kvapi::Txn::multi_get`].
    MultiGet(Vec<Vec<u8>>),
    /// [`kvapi::Txn::scan`], [`kvapi::Txn::scan_reverse`] and
    /// [`kvapi::Txn::scan_latest`].
    Scan { start: Vec<u8>, end: Vec<u8>, limit: u64, order: ScanOrder },
    /// [`kvapi::Txn::stored_size`].
    StoredSize { start: Vec<u8>, end: Vec<u8> },
    /// [`kvapi::Txn::lock`] (`share`: [`kvapi::Txn::lock_for_share`]).
    Lock { keys: Vec<Vec<u8>>, share: bool },
    /// [`kvapi::Txn::try_lock`].
    TryLock { keys: Vec<Vec<u8>>, share: bool },
    /// [`kvapi::Txn::lock_shared`].
    LockShared(Vec<Vec<u8>>),
    /// [`kvapi::Txn::get_for_update`].
    GetForUpdate(Vec<u8>),
    /// [`kvapi::Txn::commit`]; ends the transaction.
    Commit,
}

/// Which rows a [`Call::Scan`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScanOrder {
    /// At the snapshot, ascending.
    Forward,
    /// At the snapshot, descending.
    Reverse,
    /// The newest committed state, ascending.
    Latest,
}

/// Tenant management, served on admin connections.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum AdminCall {
    /// Creates a tenant.
    Create { name: String },
    /// Every tenant with its state.
    List,
    /// Looks one tenant up by name.
    Lookup { name: String },
    /// Drops a tenant and all its data (refused while it has sessions,
    /// unless `force`, which also closes its SQL processes' connections).
    Drop { name: String, force: bool },
    /// Changes a tenant's settings (None: unchanged); answers with the
    /// tenant as it is then.
    Set { name: String, max_sql_processes: Option<u32> },
}

/// A tenant as the admin calls report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TenantInfo {
    /// The tenant's name (`[a-z0-9-]`, at most 63 bytes).
    pub name: String,
    /// Its id: the key prefix of its data.
    pub id: u64,
    /// When it was created, microseconds since the Unix epoch.
    pub created_micros: i64,
    /// How many SQL processes may serve it at once.
    pub max_sql_processes: u32,
    /// OS pids of the SQL processes connected for it now.
    pub sql_pids: Vec<u32>,
    /// Client sessions those processes serve now.
    pub sessions: u32,
    /// The last time it had a client session (now while it has one),
    /// microseconds since the Unix epoch; 0 if it never had one. Reported
    /// by List only (0 from Create and Lookup).
    pub last_active_micros: i64,
    /// Bytes its keys take in storage (measured by List only; 0 from
    /// Create and Lookup).
    pub stored_bytes: u64,
}

/// A frame from the KV server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ToClient {
    /// The answer to Hello and Bind: the tenant id the connection is bound
    /// to and the connection's number (which makes transaction ids unique
    /// on the node). To a [`POOL`] Hello: tenant and number 0 (none yet).
    Welcome { tenant: u64, conn: u32 },
    /// The answer to a [`ToServer::Request`]; `snapshot` is the
    /// transaction's snapshot after the call.
    Response { id: u64, snapshot: u64, result: Result<Reply, WireError> },
    /// The answer to a [`ToServer::Admin`].
    AdminResponse { id: u64, result: Result<AdminReply, WireError> },
    /// The server is closing the connection for this reason (a failed
    /// Hello, a malformed frame, a dropped tenant).
    Goodbye(WireError),
}

/// What a [`Call`] returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Reply {
    /// Flush.
    Unit,
    /// Get.
    Value(Option<Vec<u8>>),
    /// MultiGet.
    Values(Vec<Option<Vec<u8>>>),
    /// Scan: full keys and values.
    Rows(Vec<(Vec<u8>, Vec<u8>)>),
    /// StoredSize.
    Size(u64),
    /// Lock.
    Locked(Vec<LockedKey>),
    /// TryLock.
    TryLocked(Vec<Option<LockedKey>>),
    /// LockShared: changed since the snapshot, per key.
    Changed(Vec<bool>),
    /// GetForUpdate: the value at the snapshot and the lock, if the key
    /// held one.
    GotForUpdate(Option<(Vec<u8>, LockedKey)>),
    /// Commit: the commit timestamp.
    Committed(u64),
}

/// [`kvapi::Locked`] on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LockedKey {
    /// The newest value.
    pub latest: Option<Vec<u8>>,
    /// Written by a transaction that committed after the snapshot.
    pub changed_since_snapshot: bool,
}

/// What an admin call returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum AdminReply {
    /// Create, Lookup, Set.
    Tenant(Option<TenantInfo>),
    /// List.
    Tenants(Vec<TenantInfo>),
    /// Drop.
    Dropped,
}

/// [`kvapi::Error`] on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireError {
    /// Retry(Serialization).
    Serialization,
    /// Retry(Deadlock).
    Deadlock,
    /// TenantViolation.
    TenantViolation(String),
    /// InvalidInput.
    InvalidInput(String),
    /// Corrupt.
    Corrupt(String),
    /// Io.
    Io(String),
    /// Unavailable.
    Unavailable(String),
    /// LockTimeout.
    LockTimeout,
    /// Authentication failed (Hello) or the call needs the admin token.
    Unauthorized(String),
    /// AssumptionFailed.
    AssumptionFailed,
}

impl From<kvapi::Error> for WireError {
    fn from(e: kvapi::Error) -> WireError {
        use kvapi::{Error as E, RetryReason as R};
        match e {
            E::Retry(R::Serialization) => WireError::Serialization,
            E::Retry(R::Deadlock) => WireError::Deadlock,
            E::TenantViolation(m) => WireError::TenantViolation(m),
            E::InvalidInput(m) => WireError::InvalidInput(m),
            E::Corrupt(m) => WireError::Corrupt(m),
            E::Io(m) => WireError::Io(m),
            E::Unavailable(m) => WireError::Unavailable(m),
            E::LockTimeout => WireError::LockTimeout,
            E::AssumptionFailed => WireError::AssumptionFailed,
        }
    }
}

impl From<WireError> for kvapi::Error {
    fn from(e: WireError) -> kvapi::Error {
        use kvapi::{Error as E, RetryReason as R};
        match e {
            WireError::Serialization => E::Retry(R::Serialization),
            WireError::Deadlock => E::Retry(R::Deadlock),
            WireError::TenantViolation(m) => E::TenantViolation(m),
            WireError::InvalidInput(m) => E::InvalidInput(m),
            WireError::Corrupt(m) => E::Corrupt(m),
            WireError::Io(m) => E::Io(m),
            WireError::Unavailable(m) => E::Unavailable(m),
            WireError::LockTimeout => E::LockTimeout,
            WireError::AssumptionFailed => E::AssumptionFailed,
            WireError::Unauthorized(m) => E::Unavailable(format!("KV server refused: {m}")),
        }
    }
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Unauthorized(m) => write!(f, "unauthorized: {m}"),
            other => write!(f, "{}", kvapi::Error::from(other.clone())),
        }
    }
}

impl From<kvapi::IsolationLevel> for Isolation {
    fn from(i: kvapi::IsolationLevel) -> Isolation {
        match i {
            kvapi::IsolationLevel::ReadCommitted => Isolation::ReadCommitted,
            kvapi::IsolationLevel::RepeatableRead => Isolation::RepeatableRead,
            kvapi::IsolationLevel::Serializable => Isolation::Serializable,
        }
    }
}

impl From<Isolation> for kvapi::IsolationLevel {
    fn from(i: Isolation) -> kvapi::IsolationLevel {
        match i {
            Isolation::ReadCommitted => kvapi::IsolationLevel::ReadCommitted,
            Isolation::RepeatableRead => kvapi::IsolationLevel::RepeatableRead,
            Isolation::Serializable => kvapi::IsolationLevel::Serializable,
        }
    }
}

/// The node-wide id of transaction `handle` of connection `conn`, which
/// both sides compute: the top bit marks remote transactions (the node's
/// own count up from 1), then 23 bits of the connection's number, then 40
/// bits of the handle.
pub fn remote_txn_id(conn: u32, handle: u64) -> kvapi::TxnId {
    kvapi::TxnId((1 << 63) | (u64::from(conn & 0x7f_ffff) << 40) | (handle & ((1 << 40) - 1)))
}

/// The framing codec both sides use.
pub fn codec() -> tokio_util::codec::LengthDelimitedCodec {
    tokio_util::codec::LengthDelimitedCodec::builder().max_frame_length(MAX_FRAME).new_codec()
}

/// Encodes one message body.
pub fn encode<T: Serialize>(msg: &T) -> bytes::Bytes {
    // Serializing these plain enums into a Vec cannot fail.
    postcard::to_stdvec(msg).expect("postcard encodes every message").into()
}

/// Decodes one message body; a malformed body is an error (the receiver
/// closes the connection), never a panic.
pub fn decode<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, String> {
    postcard::from_bytes(body).map_err(|e| format!("malformed frame: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let m = ToServer::Request {
            id: 7,
            txn: 3,
            ops: vec![Op::Begin { isolation: Isolation::ReadCommitted }],
            call: Call::Get(b"t\0\0\0\0\0\0\0\x02k".to_vec()),
        };
        let back: ToServer = decode(&encode(&m)).expect("decodes");
        assert!(matches!(back, ToServer::Request { id: 7, txn: 3, .. }));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decode::<ToServer>(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode::<ToServer>(&[]).is_err());
        assert!(decode::<ToServer>(&[1, 200]).is_err());
    }

    /// Random and truncated frames decode to an error or a message, never a
    /// panic (the fuzz target kvrpc_decode goes further).
    #[test]
    fn random_bytes_never_panic() {
        let valid = encode(&ToServer::Request {
            id: 1,
            txn: 1,
            ops: vec![Op::Put { key: vec![1; 20], value: vec![2; 40], private: false }],
            call: Call::Scan {
                start: vec![],
                end: vec![0xff],
                limit: 10,
                order: ScanOrder::Latest,
            },
        });
        for cut in 0..valid.len() {
            let _ = decode::<ToServer>(&valid[..cut]);
        }
        for _ in 0..5000 {
            let len = rand::random::<u8>() as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rand::random()).collect();
            let _ = decode::<ToServer>(&bytes);
            let _ = decode::<ToClient>(&bytes);
        }
    }
}
