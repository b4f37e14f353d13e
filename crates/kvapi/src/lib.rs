//! The contract between the SQL layer and the KV layer.
//!
//! Everything the SQL process may ask of storage is defined here: tenant-prefixed
//! [`Key`]s, the transactional client traits [`KvClient`] and [`Txn`], and the
//! [`Error`] type. This crate has no RocksDB, no sockets and no SQL: today the
//! embedded client in the `kv` crate implements these traits directly; later an
//! RPC client implements the same traits, so moving the KV node into another
//! process is a change of transport, not a redesign.
//!
//! Every call may cost a network hop in the split deployment, so the API works on
//! batches: [`Txn::multi_get`], [`Txn::scan`] with a limit, [`Txn::lock`] over
//! many keys, and writes buffered in the transaction until commit.

use std::fmt;
use std::future::Future;

// Keys and the single place where the tenant prefix is applied.
pub mod key;

pub use key::{Key, KeyRange, TenantId};

/// A result with a KV [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Errors from the KV layer, grouped by what the caller must do about them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The transaction lost a race and must be retried by the client
    /// (SQLSTATE 40001 serialization_failure, or 40P01 for a deadlock).
    #[error("{0}")]
    Retry(RetryReason),
    /// A request touched a key outside the tenant the transaction belongs to.
    /// Never caused by client input through SQL; always a bug or an attack.
    #[error("tenant violation: {0}")]
    TenantViolation(String),
    /// The request itself was malformed (bad range, write without lock, ...).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Stored data failed to decode. The request fails; the node keeps running.
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// The storage engine or the disk failed.
    #[error("i/o error: {0}")]
    Io(String),
    /// The node cannot serve the request now (shutting down, transaction closed).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// A lock wait took longer than the transaction's lock timeout (see
    /// [`Txn::set_lock_timeout`]); nothing was taken or left queued.
    #[error("lock wait timed out")]
    LockTimeout,
    /// What [`Txn::assume`] assumed of a key did not hold at the snapshot:
    /// the request that carried the assumption did nothing (beyond the
    /// local calls queued before it), and the caller must find out anew.
    #[error("an assumed value changed")]
    AssumptionFailed,
}

/// Why a transaction must be retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetryReason {
    /// A row this transaction wants to write was changed by a transaction
    /// that committed after our snapshot (REPEATABLE READ / SERIALIZABLE).
    Serialization,
    /// Waiting for a lock would close a cycle of waiting transactions.
    Deadlock,
}

impl fmt::Display for RetryReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryReason::Serialization => {
                write!(f, "could not serialize access due to concurrent update")
            }
            RetryReason::Deadlock => write!(f, "deadlock detected"),
        }
    }
}

/// A commit timestamp: versions are ordered by it and snapshots read at one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// What [`Txn::snapshot`] reports before a remote transaction has
    /// reached the KV node: larger than any real timestamp.
    pub const UNKNOWN: Timestamp = Timestamp(u64::MAX);
}

/// Identifies a transaction for its whole life (locks, wait-for graph, logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxnId(pub u64);

/// How a transaction reads, with PostgreSQL's names and semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IsolationLevel {
    /// Each statement takes a fresh snapshot ([`Txn::refresh_snapshot`]); writers
    /// wait for row locks and then work on the newest committed version.
    #[default]
    ReadCommitted,
    /// One snapshot for the whole transaction; writing a row that changed after
    /// the snapshot fails with [`RetryReason::Serialization`] (first committer wins).
    RepeatableRead,
    /// Currently the same as RepeatableRead (snapshot isolation).
    Serializable,
}

/// One key's state as seen by the lock holder right after [`Txn::lock`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    /// The newest value: this transaction's own buffered write if any, else the
    /// newest committed version (which may be newer than the snapshot). `None`
    /// if the key does not exist (never written, or deleted).
    pub latest: Option<Vec<u8>>,
    /// True if a transaction that committed after our snapshot wrote this key.
    /// READ COMMITTED re-checks the row against `latest`; REPEATABLE READ gets
    /// an error from `lock` instead of seeing this flag set.
    pub changed_since_snapshot: bool,
}

/// Which keys a write may touch without taking row locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// The key must have been locked with [`Txn::lock`] first.
    Locked,
    /// The caller guarantees no other transaction can see or write this key
    /// (for example: a table storage created in this same transaction). Used
    /// by bulk loads such as COPY into a freshly created or truncated table.
    Private,
}

/// Opens transactions for one tenant. Cheap to clone; one per SQL process,
/// shared by its sessions.
///
/// A client is bound to its tenant when it is made (the embedded client by
/// its constructor, the RPC client when the KV server authenticates its
/// connection), so callers never name the tenant again: every key a
/// transaction touches must carry [`KvClient::tenant`]'s prefix, and the KV
/// node checks that on every request against the tenant it bound, not
/// against anything the request says.
pub trait KvClient: Clone + Send + Sync + 'static {
    /// The transaction type this client hands out.
    type Txn: Txn;

    /// The tenant this client's transactions belong to.
    fn tenant(&self) -> TenantId;

    /// Begins a transaction. It may cost no round trip: a remote client
    /// takes the snapshot with the transaction's first request.
    fn begin(&self, isolation: IsolationLevel) -> impl Future<Output = Result<Self::Txn>> + Send;
}

/// A transaction: snapshot reads merged with its own buffered writes, row locks,
/// and an atomic, durable commit.
///
/// Writes are buffered inside the transaction and become visible to others all
/// at once when [`Txn::commit`] returns; commit returns only after the write-ahead
/// log has been synced. Dropping a transaction without committing aborts it and
/// releases its locks.
pub trait Txn: Send + Sync + 'static {
    /// This transaction's id.
    fn id(&self) -> TxnId;

    /// The timestamp the transaction currently reads at. A remote
    /// transaction learns it from its first request (and after
    /// [`Txn::refresh_snapshot`], from the next one); until then this is
    /// [`Timestamp::UNKNOWN`], which never equals a real snapshot.
    fn snapshot(&self) -> Timestamp;

    /// The isolation level the transaction was begun with.
    fn isolation(&self) -> IsolationLevel;

    /// Moves the read snapshot to the newest committed state. READ COMMITTED
    /// calls this at the start of every statement; other levels never do.
    fn refresh_snapshot(&mut self);

    /// Limits each later lock wait of [`Txn::lock`], [`Txn::lock_for_share`]
    /// and [`Txn::lock_shared`] to `timeout` (None: wait as long as it
    /// takes). A wait that runs out fails with [`Error::LockTimeout`], as
    /// SQL's lock_timeout asks.
    fn set_lock_timeout(&mut self, timeout: Option<std::time::Duration>);

    /// Reads one key at the snapshot, seeing this transaction's own writes.
    fn get(&self, key: &Key) -> impl Future<Output = Result<Option<Vec<u8>>>> + Send;

    /// Assumes `key` holds `expected` at the snapshot (own writes
    /// included), for a caller that keeps something derived from the key
    /// (the SQL layer's catalog and its version key) and would otherwise
    /// read it at the start of every statement.
    ///
    /// Where a read is cheap, the implementation reads at once and returns
    /// `Some` of what the key holds (the default: a [`Txn::get`]); the
    /// caller compares. A remote transaction instead returns `None` and
    /// sends the assumption with its next request (a commit drops it): if
    /// it does not hold there, that request fails with
    /// [`Error::AssumptionFailed`] without running, and
    /// [`Txn::take_assumption_failed`] reports it even if the caller
    /// swallowed the error. Until then the caller runs on its assumption,
    /// and must discard what it did when told it was wrong.
    fn assume(
        &mut self,
        key: &Key,
        expected: Option<&[u8]>,
    ) -> impl Future<Output = Result<Option<Option<Vec<u8>>>>> + Send {
        let _ = expected;
        async move { self.get(key).await.map(Some) }
    }

    /// True if a request found an assumption of [`Txn::assume`] false
    /// since the last call; clears that, and drops an assumption no
    /// request carried yet.
    fn take_assumption_failed(&mut self) -> bool {
        false
    }

    /// This transaction's own uncommitted write of `key`: `Some(Some(v))` if it
    /// wrote `v`, `Some(None)` if it deleted the key, `None` if it has not
    /// touched it. Bulk loads into storage created in the same transaction use
    /// it: nothing committed can exist there, so their own writes are all
    /// there is to check.
    fn get_own(&self, key: &Key) -> Option<Option<Vec<u8>>>;

    /// Reads many keys at once; results are in the order of `keys`.
    fn multi_get(&self, keys: &[Key]) -> impl Future<Output = Result<Vec<Option<Vec<u8>>>>> + Send;

    /// Returns up to `limit` live key/value pairs in `range` in key order, at the
    /// snapshot, merged with this transaction's own writes (its deletes hide
    /// rows). To continue, scan again from just after the last key returned.
    fn scan(
        &self,
        range: &KeyRange,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<(Key, Vec<u8>)>>> + Send;

    /// Like [`Txn::scan`], in descending key order: the up to `limit` largest
    /// live keys of `range`, largest first. To continue, scan again with the
    /// range ending at the last key returned (the end is exclusive).
    fn scan_reverse(
        &self,
        range: &KeyRange,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<(Key, Vec<u8>)>>> + Send;

    /// The bytes the keys and values in `range` take in storage, every
    /// stored version counted (what pg_relation_size reports). Not
    /// transactional: it measures what is stored now.
    fn stored_size(&self, range: &KeyRange) -> impl Future<Output = Result<u64>> + Send;

    /// Takes exclusive row locks on `keys` (in the given order), waiting for
    /// other holders to finish. Locks are held until commit or abort. Errors:
    /// [`RetryReason::Deadlock`] if waiting would deadlock;
    /// [`RetryReason::Serialization`] under REPEATABLE READ/SERIALIZABLE if a key
    /// changed after the snapshot. Dropping the future abandons the wait cleanly
    /// (that is how a statement is cancelled).
    fn lock(&mut self, keys: &[Key]) -> impl Future<Output = Result<Vec<Locked>>> + Send;

    /// Reads `key` at the snapshot (seeing this transaction's own writes)
    /// and, if it holds a value there, locks it as [`Txn::lock`] does:
    /// the value read and the lock's state, or None, and then nothing is
    /// locked. UPDATE and DELETE by primary key read and lock their row
    /// this way, one round trip where calls cost one.
    fn get_for_update(
        &mut self,
        key: &Key,
    ) -> impl Future<Output = Result<Option<(Vec<u8>, Locked)>>> + Send {
        async move {
            let Some(value) = self.get(key).await? else { return Ok(None) };
            let locked = self.lock(std::slice::from_ref(key)).await?.pop();
            let locked = locked.ok_or_else(|| Error::Corrupt("a lock without its key".into()))?;
            Ok(Some((value, locked)))
        }
    }

    /// Like [`Txn::scan`], but reads the newest committed state (merged with
    /// this transaction's own writes) instead of the snapshot. Referential
    /// checks use it: after taking a lock, they must see rows committed by
    /// transactions that held a conflicting lock until just now, which a
    /// READ COMMITTED statement's snapshot may predate.
    fn scan_latest(
        &self,
        range: &KeyRange,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<(Key, Vec<u8>)>>> + Send;

    /// Takes shared locks on `keys` (as [`Txn::lock_shared`]) and returns each
    /// key's newest state as [`Txn::lock`] does: SQL's `FOR SHARE`. A foreign
    /// key check holds the referenced row this way, so the row cannot be
    /// deleted or re-keyed until the referencing transaction ends.
    fn lock_for_share(&mut self, keys: &[Key]) -> impl Future<Output = Result<Vec<Locked>>> + Send;

    /// Takes row locks on `keys` without waiting: exclusive, or shared
    /// with `shared` (as [`Txn::lock`] and [`Txn::lock_for_share`]). A key
    /// another transaction is in the way of gives `None`, and is neither
    /// held nor queued for; the others give their state as those calls do.
    /// SQL's NOWAIT and SKIP LOCKED.
    fn try_lock(
        &mut self,
        keys: &[Key],
        shared: bool,
    ) -> impl Future<Output = Result<Vec<Option<Locked>>>> + Send;

    /// Takes shared locks on `keys`: any number of transactions may hold a
    /// key shared, but not while one holds or waits for it exclusively (FIFO,
    /// so an exclusive waiter is not starved). Table locks use it: writers of
    /// a table hold its catalog key shared, and DDL that rewrites or drops
    /// the table takes the key with [`Txn::lock`], so each waits for the
    /// other. Returns, per key, whether a transaction that committed after
    /// our snapshot wrote it (a writer learns that DDL changed its table);
    /// errors as for [`Txn::lock`]. A key this transaction already held is
    /// reported unchanged without another read, so repeating the call per
    /// statement is cheap.
    fn lock_shared(&mut self, keys: &[Key]) -> impl Future<Output = Result<Vec<bool>>> + Send;

    /// [`Txn::lock_shared`] for a caller that can learn the outcome late:
    /// true if a key changed after the snapshot. Where a call costs a round
    /// trip, the implementation instead queues the locks, returns false,
    /// and takes them with the transaction's next request (or
    /// [`Txn::flush`]): a changed key then fails that request with
    /// [`Error::AssumptionFailed`], as a false [`Txn::assume`] does, and a
    /// lock that cannot be had fails it with the lock's error. The caller
    /// must then be able to run again what it did meanwhile (the SQL layer
    /// runs the statement again), so it flushes before the work is done.
    /// The default takes the locks now.
    fn lock_shared_soon(&mut self, keys: &[Key]) -> impl Future<Output = Result<bool>> + Send {
        async move { Ok(self.lock_shared(keys).await?.contains(&true)) }
    }

    /// Sends what [`Txn::lock_shared_soon`] queued and waits for it: its
    /// errors are this call's. A no-op when nothing is queued (always, by
    /// default).
    fn flush(&mut self) -> impl Future<Output = Result<()>> + Send {
        async { Ok(()) }
    }

    /// Buffers a write of `value` at `key`. With [`LockMode::Locked`] the key must
    /// already be locked by this transaction.
    fn put(&mut self, key: Key, value: Vec<u8>, mode: LockMode) -> Result<()>;

    /// Buffers a delete of `key` (a tombstone version at commit).
    fn delete(&mut self, key: Key, mode: LockMode) -> Result<()>;

    /// Removes everything in `range` once the transaction has committed and no
    /// snapshot older than the commit remains (used for DROP and TRUNCATE, whose
    /// old storage is unreachable after the catalog change commits).
    fn delete_range_after_commit(&mut self, range: KeyRange) -> Result<()>;

    /// Marks the current write buffer so [`Txn::rollback_to`] can undo later writes
    /// (statement-level atomicity, SQL savepoints). Locks taken after the mark
    /// are kept, as PostgreSQL keeps them.
    fn savepoint(&mut self) -> Savepoint;

    /// Discards every write buffered after `savepoint`.
    fn rollback_to(&mut self, savepoint: Savepoint);

    /// Commits atomically and durably; returns the commit timestamp. A
    /// read-only transaction commits without touching the log.
    fn commit(self) -> impl Future<Output = Result<Timestamp>> + Send;

    /// Aborts, discarding all writes and releasing locks.
    fn abort(self);
}

/// A position in a transaction's write buffer (see [`Txn::savepoint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Savepoint(pub u64);
