//! [`EmbeddedTxn`]: a transaction against the local node.
//!
//! Reads see the snapshot plus the transaction's own buffered writes. Writes
//! stay in an ordered buffer (with an undo log for savepoints) until commit,
//! so aborting is free and a commit is one atomic engine batch. Every key a
//! call touches is checked against the transaction's tenant.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use kvapi::{
    Error, IsolationLevel, Key, KeyRange, LockMode, Locked, Result, RetryReason, Savepoint,
    TenantId, Timestamp, Txn, TxnId,
};

use crate::lock::{Acquire, Mode};
use crate::mvcc;
use crate::node::Shared;

/// A buffered value: Some(bytes) to write, None to delete.
type Buffered = Option<Vec<u8>>;

/// An undo record: the key and its previous buffer entry (None if absent).
type Undo = (Vec<u8>, Option<Buffered>);

/// A transaction on the embedded node.
pub struct EmbeddedTxn {
    shared: Arc<Shared>,
    id: TxnId,
    tenant: TenantId,
    isolation: IsolationLevel,
    snapshot: u64,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    undo: Vec<Undo>,
    /// Keys this transaction holds, with the strongest mode granted.
    held: HashMap<Vec<u8>, Mode>,
    held_order: Vec<Vec<u8>>,
    ranges: Vec<KeyRange>,
    finished: bool,
    /// How long one lock wait may take (None: no limit).
    lock_timeout: Option<std::time::Duration>,
}

/// Removes an abandoned lock wait when the waiting future is dropped.
struct WaitGuard<'a> {
    shared: &'a Shared,
    key: &'a [u8],
    txn: TxnId,
    had_shared: bool,
    armed: bool,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.locks.lock().abandon(self.key, self.txn, self.had_shared);
        }
    }
}

impl EmbeddedTxn {
    pub(crate) fn new(
        shared: Arc<Shared>,
        tenant: TenantId,
        isolation: IsolationLevel,
    ) -> EmbeddedTxn {
        let id = shared.next_txn_id();
        EmbeddedTxn::with_id(shared, tenant, isolation, id)
    }

    /// A transaction whose id the caller chose (the RPC server uses the
    /// remote client's, which never collide with the node's own).
    pub(crate) fn with_id(
        shared: Arc<Shared>,
        tenant: TenantId,
        isolation: IsolationLevel,
        id: TxnId,
    ) -> EmbeddedTxn {
        let snapshot = shared.visible.load(Ordering::Acquire);
        shared.register_snapshot(snapshot);
        EmbeddedTxn {
            shared,
            id,
            tenant,
            isolation,
            snapshot,
            writes: BTreeMap::new(),
            undo: Vec::new(),
            held: HashMap::new(),
            held_order: Vec::new(),
            ranges: Vec::new(),
            finished: false,
            lock_timeout: None,
        }
    }

    fn check(&self, key: &Key) -> Result<()> {
        key.check_tenant(self.tenant)
    }

    fn check_range(&self, r: &KeyRange) -> Result<()> {
        self.check(&r.start)?;
        let end_ok = r.end.tenant() == self.tenant
            || (r.end.tenant().0 == self.tenant.0 + 1 && r.end.rest().is_empty());
        if !end_ok {
            return Err(Error::TenantViolation("range leaves the tenant's keyspace".into()));
        }
        Ok(())
    }

    fn read(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.writes.get(key.as_bytes()) {
            return Ok(v.clone());
        }
        let (cache, engine, k) = (&self.shared.cache, self.shared.engine.as_ref(), key.as_bytes());
        if let Some(v) = cache.get(k, self.snapshot) {
            return Ok(v);
        }
        // The newest version, which the cache may keep for later reads
        // (cache.rs, FILL); the versions GC keeps include it.
        let ticket = cache.ticket(k);
        let Some((ts, value)) = mvcc::get_at(engine, k, u64::MAX)? else { return Ok(None) };
        cache.fill(k, ticket, ts, value.as_deref());
        if ts <= self.snapshot {
            return Ok(value);
        }
        Ok(mvcc::get_at(engine, k, self.snapshot)?.and_then(|(_, v)| v))
    }

    /// Scans `range` at timestamp `at`, merged with our own writes, in key
    /// order or (`reverse`) descending.
    fn scan_sync(
        &self,
        range: &KeyRange,
        limit: usize,
        at: u64,
        reverse: bool,
    ) -> Result<Vec<(Key, Vec<u8>)>> {
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        // The part of the range not read yet: [lo, hi).
        let mut lo = range.start.as_bytes().to_vec();
        let mut hi = range.end.as_bytes().to_vec();
        loop {
            let mut committed: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let want = limit - out.len();
            let mut collect = |k, v: Option<Vec<u8>>| {
                if let Some(v) = v {
                    committed.push((k, v));
                }
                committed.len() < want
            };
            let engine = self.shared.engine.as_ref();
            match reverse {
                false => mvcc::scan_at(engine, &lo, &hi, at, &mut collect)?,
                true => mvcc::scan_at_rev(engine, &lo, &hi, at, &mut collect)?,
            }
            let hit_limit = committed.len() >= want;
            // The part this round read completely: all of [lo, hi), or up
            // to and including the last committed key returned.
            let (from, to) = match (hit_limit, committed.last()) {
                (true, Some((k, _))) if reverse => (k.clone(), hi.clone()),
                (true, Some((k, _))) => {
                    let mut u = k.clone();
                    u.push(0);
                    (lo.clone(), u)
                }
                _ => (lo.clone(), hi.clone()),
            };
            // Merge committed rows with our own writes in [from, to).
            let own = self
                .writes
                .range::<[u8], _>((Bound::Included(&from[..]), Bound::Excluded(&to[..])));
            let own: Box<dyn Iterator<Item = (&Vec<u8>, &Buffered)>> =
                if reverse { Box::new(own.rev()) } else { Box::new(own) };
            let mut own = own.peekable();
            let mut comm = committed.into_iter().peekable();
            loop {
                let take_own = match (own.peek(), comm.peek()) {
                    (None, None) => break,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (Some((ok, _)), Some((ck, _))) => match reverse {
                        false => ok.as_slice() <= ck.as_slice(),
                        true => ok.as_slice() >= ck.as_slice(),
                    },
                };
                let (k, v) = if take_own {
                    let (k, v) = own.next().expect("peeked");
                    if comm.peek().map(|(ck, _)| ck == k).unwrap_or(false) {
                        comm.next();
                    }
                    (k.clone(), v.clone())
                } else {
                    let (k, v) = comm.next().expect("peeked");
                    (k, Some(v))
                };
                if let Some(v) = v {
                    out.push((Key::decode(k)?, v));
                    if out.len() >= limit {
                        return Ok(out);
                    }
                }
            }
            if !hit_limit {
                return Ok(out);
            }
            match reverse {
                false => lo = to,
                true => hi = from,
            }
        }
    }

    fn release_locks(&mut self) {
        if self.held_order.is_empty() {
            return;
        }
        let mut lt = self.shared.locks.lock();
        for k in self.held_order.drain(..) {
            lt.release(&k, self.id);
        }
        self.held.clear();
    }

    fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            self.release_locks();
            self.shared.release_snapshot(self.snapshot);
        }
    }

    fn record(&mut self, key: Key, value: Option<Vec<u8>>, mode: LockMode) -> Result<()> {
        self.check(&key)?;
        if self.finished {
            return Err(Error::Unavailable("transaction already finished".into()));
        }
        if mode == LockMode::Locked && self.held.get(key.as_bytes()) != Some(&Mode::Exclusive) {
            return Err(Error::InvalidInput(format!("write to {key:?} without its lock")));
        }
        let k = key.into_bytes();
        let prev = self.writes.insert(k.clone(), value);
        self.undo.push((k, prev));
        Ok(())
    }

    /// Takes `key` in `mode`, waiting if needed. Returns false if the
    /// transaction already held it at least that strongly.
    async fn lock_one(&mut self, key: &Key, mode: Mode) -> Result<bool> {
        let kb = key.as_bytes();
        let had = self.held.get(kb).copied();
        if had.is_some_and(|m| m >= mode) {
            return Ok(false);
        }
        let decision = self.shared.locks.lock().acquire(kb, self.id, mode);
        match decision {
            Acquire::Granted => {}
            Acquire::Deadlock => return Err(Error::Retry(RetryReason::Deadlock)),
            Acquire::Wait(rx) => {
                let mut guard = WaitGuard {
                    shared: &self.shared,
                    key: kb,
                    txn: self.id,
                    had_shared: had.is_some(),
                    armed: true,
                };
                let r = match self.lock_timeout {
                    None => rx.await,
                    // Running out drops the wait; the guard withdraws it
                    // (or gives back a grant that came at that moment).
                    Some(limit) => match tokio::time::timeout(limit, rx).await {
                        Ok(r) => r,
                        Err(_) => return Err(Error::LockTimeout),
                    },
                };
                guard.armed = r.is_err();
                drop(guard);
                if r.is_err() {
                    return Err(Error::Unavailable("lock wait abandoned".into()));
                }
            }
        }
        if had.is_none() {
            self.held_order.push(kb.to_vec());
        }
        self.held.insert(kb.to_vec(), mode);
        Ok(true)
    }

    /// Takes `key` in `mode` if no other transaction is in the way; false
    /// (and nothing held or queued) otherwise.
    fn try_lock_one(&mut self, key: &Key, mode: Mode) -> bool {
        let kb = key.as_bytes();
        let had = self.held.get(kb).copied();
        if had.is_some_and(|m| m >= mode) {
            return true;
        }
        if !self.shared.locks.lock().try_acquire(kb, self.id, mode) {
            return false;
        }
        if had.is_none() {
            self.held_order.push(kb.to_vec());
        }
        self.held.insert(kb.to_vec(), mode);
        true
    }

    /// Checks a batch of keys before locking any of them.
    fn check_lockable(&self, keys: &[Key]) -> Result<()> {
        if self.finished {
            return Err(Error::Unavailable("transaction already finished".into()));
        }
        keys.iter().try_for_each(|k| self.check(k))
    }

    /// The newest state of keys this transaction holds locks on.
    fn locked_state(&self, keys: &[Key]) -> Result<Vec<Locked>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let (ts, committed) = self.newest_locked(k)?;
            let latest = match self.writes.get(k.as_bytes()) {
                Some(own) => own.clone(),
                None => committed,
            };
            out.push(Locked { latest, changed_since_snapshot: ts > self.snapshot });
        }
        Ok(out)
    }

    /// The newest committed version of a locked key: (timestamp, value),
    /// (0, None) if it was never written. Under REPEATABLE READ a version
    /// newer than the snapshot is a serialization failure.
    fn newest_locked(&self, key: &Key) -> Result<(u64, Option<Vec<u8>>)> {
        let newest = match self.shared.cache.newest(key.as_bytes()) {
            Some(e) => Some(e),
            None => mvcc::get_at(self.shared.engine.as_ref(), key.as_bytes(), u64::MAX)?,
        };
        let (ts, value) = newest.unwrap_or((0, None));
        if ts > self.snapshot && self.isolation != IsolationLevel::ReadCommitted {
            return Err(Error::Retry(RetryReason::Serialization));
        }
        Ok((ts, value))
    }
}

impl Drop for EmbeddedTxn {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Txn for EmbeddedTxn {
    fn id(&self) -> TxnId {
        self.id
    }

    fn snapshot(&self) -> Timestamp {
        Timestamp(self.snapshot)
    }

    fn isolation(&self) -> IsolationLevel {
        self.isolation
    }

    fn set_lock_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.lock_timeout = timeout;
    }

    fn refresh_snapshot(&mut self) {
        let new = self.shared.visible.load(Ordering::Acquire);
        if new != self.snapshot {
            self.shared.register_snapshot(new);
            self.shared.release_snapshot(self.snapshot);
            self.snapshot = new;
        }
    }

    async fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        self.check(key)?;
        self.read(key)
    }

    fn get_own(&self, key: &Key) -> Option<Option<Vec<u8>>> {
        self.writes.get(key.as_bytes()).cloned()
    }

    async fn multi_get(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            self.check(k)?;
            out.push(self.read(k)?);
        }
        Ok(out)
    }

    async fn scan(&self, range: &KeyRange, limit: usize) -> Result<Vec<(Key, Vec<u8>)>> {
        self.check_range(range)?;
        self.scan_sync(range, limit, self.snapshot, false)
    }

    async fn scan_reverse(&self, range: &KeyRange, limit: usize) -> Result<Vec<(Key, Vec<u8>)>> {
        self.check_range(range)?;
        self.scan_sync(range, limit, self.snapshot, true)
    }

    async fn stored_size(&self, range: &KeyRange) -> Result<u64> {
        self.check_range(range)?;
        let (start, end) = mvcc::range(range.start.as_bytes(), range.end.as_bytes());
        self.shared.engine.size(&start, &end)
    }

    async fn scan_latest(&self, range: &KeyRange, limit: usize) -> Result<Vec<(Key, Vec<u8>)>> {
        self.check_range(range)?;
        // Every version up to `visible` is in the engine; the newest
        // version of a key is never collected, so reading above our
        // registered snapshot is safe.
        self.scan_sync(range, limit, self.shared.visible.load(Ordering::Acquire), false)
    }

    async fn lock(&mut self, keys: &[Key]) -> Result<Vec<Locked>> {
        self.check_lockable(keys)?;
        for k in keys {
            self.lock_one(k, Mode::Exclusive).await?;
        }
        self.locked_state(keys)
    }

    async fn lock_for_share(&mut self, keys: &[Key]) -> Result<Vec<Locked>> {
        self.check_lockable(keys)?;
        for k in keys {
            self.lock_one(k, Mode::Shared).await?;
        }
        self.locked_state(keys)
    }

    async fn try_lock(&mut self, keys: &[Key], shared: bool) -> Result<Vec<Option<Locked>>> {
        self.check_lockable(keys)?;
        let mode = if shared { Mode::Shared } else { Mode::Exclusive };
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            out.push(match self.try_lock_one(k, mode) {
                true => self.locked_state(std::slice::from_ref(k))?.pop(),
                false => None,
            });
        }
        Ok(out)
    }

    async fn lock_shared(&mut self, keys: &[Key]) -> Result<Vec<bool>> {
        self.check_lockable(keys)?;
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            // A key held since an earlier call cannot have been written by
            // anyone else meanwhile, and the snapshot only moved forward.
            let fresh = self.lock_one(k, Mode::Shared).await?;
            // Most keys provably did not change since the snapshot (see the
            // cache's floor); only the others are read.
            let changed = fresh
                && self.shared.cache.newest_ts_bound(k.as_bytes()) > self.snapshot
                && self.newest_locked(k)?.0 > self.snapshot;
            out.push(changed);
        }
        Ok(out)
    }

    fn put(&mut self, key: Key, value: Vec<u8>, mode: LockMode) -> Result<()> {
        self.record(key, Some(value), mode)
    }

    fn delete(&mut self, key: Key, mode: LockMode) -> Result<()> {
        self.record(key, None, mode)
    }

    fn delete_range_after_commit(&mut self, range: KeyRange) -> Result<()> {
        self.check_range(&range)?;
        self.ranges.push(range);
        Ok(())
    }

    fn savepoint(&mut self) -> Savepoint {
        Savepoint(self.undo.len() as u64)
    }

    fn rollback_to(&mut self, savepoint: Savepoint) {
        while self.undo.len() as u64 > savepoint.0 {
            let Some((k, prev)) = self.undo.pop() else { break };
            match prev {
                Some(p) => {
                    self.writes.insert(k, p);
                }
                None => {
                    self.writes.remove(&k);
                }
            }
        }
    }

    async fn commit(mut self) -> Result<Timestamp> {
        if self.finished {
            return Err(Error::Unavailable("transaction already finished".into()));
        }
        if self.writes.is_empty() && self.ranges.is_empty() {
            let ts = self.snapshot;
            self.finish();
            return Ok(Timestamp(ts));
        }
        let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> =
            std::mem::take(&mut self.writes).into_iter().collect();
        let ranges = std::mem::take(&mut self.ranges);
        let purge = ranges
            .iter()
            .map(|r| (r.start.as_bytes().to_vec(), r.end.as_bytes().to_vec()))
            .collect();
        let r = self.shared.commit(writes, purge).await;
        // Locks are released only now: the commit is visible (or failed).
        self.finish();
        let ts = r?;
        for range in ranges {
            let (s, e) = (range.start.as_bytes().to_vec(), range.end.as_bytes().to_vec());
            self.shared.schedule_delete(ts, s, e);
        }
        self.shared.collect_garbage();
        Ok(Timestamp(ts))
    }

    fn abort(mut self) {
        self.finish();
    }
}
