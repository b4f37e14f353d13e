//! Advisory locks: pg_advisory_lock and its family, and pg_locks' rows for
//! them.
//!
//! An advisory lock is a lock on a number the application chooses (one
//! bigint, or two int4s: distinct key spaces, as in PostgreSQL), held in
//! shared or exclusive mode, either for the session (until unlocked or the
//! connection closes) or for the transaction. A session may take the same
//! lock many times; it is released when every take has been undone.
//! Migration tools (Flyway, golang-migrate, Prisma, Rails) take one before
//! migrating so that two deployments cannot migrate at once.
//!
//! WHERE THEY LIVE. The lock [`Table`] is process-wide, in the tenant's
//! `Database`, because every session of a tenant is served by one SQL
//! process. It is not in the KV node's lock table: that one's holders are
//! transactions, while a session-level advisory lock outlives them, and a
//! session never conflicts with itself whichever transaction asked.
//! Waiting for an advisory lock therefore does not take part in the KV
//! node's deadlock detection (a cycle through a row lock and an advisory
//! lock waits until cancelled); cycles of advisory locks alone are
//! detected here, at once, with 40P01 as in PostgreSQL.
//!
//! WAITING. Expressions are evaluated synchronously, so a call that must
//! wait cannot wait where it is. It records the lock it needs in the
//! session's [`SessionLocks`] and fails; the session undoes the attempt
//! ([`SessionLocks::undo`]: locks the attempt took become *reservations*,
//! still held), waits for the lock ([`SessionLocks::wait`], which also
//! reserves it), and runs the statement again, whose calls take the
//! reservations back in order (the same scheme as a sequence refill,
//! sequence.rs). Releases inside a statement only count down; the lock
//! itself is given up, and waiters woken, when the statement ends
//! ([`SessionLocks::end_statement`]), so an undone attempt never lets
//! another session in between. Dropping the wait (a cancel request) leaves
//! the queue cleanly.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use sqlstate::ErrorReport;
use tokio::sync::oneshot;

use crate::catalog::DATABASE_OID;
use crate::err;
use crate::error::{Result, SqlState};

/// Which lock: PostgreSQL's (classid, objid, objsubid) triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockKey {
    /// The high half of a bigint key, or the first int4.
    pub classid: u32,
    /// The low half of a bigint key, or the second int4.
    pub objid: u32,
    /// 1 for a bigint key, 2 for a pair of int4s.
    pub objsubid: u16,
}

impl LockKey {
    /// The lock named by one bigint.
    pub fn single(k: i64) -> LockKey {
        LockKey { classid: (k >> 32) as u32, objid: k as u32, objsubid: 1 }
    }

    /// The lock named by two int4s.
    pub fn pair(a: i32, b: i32) -> LockKey {
        LockKey { classid: a as u32, objid: b as u32, objsubid: 2 }
    }
}

impl std::fmt::Display for LockKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let k = self;
        write!(f, "advisory lock [{DATABASE_OID},{},{},{}]", k.classid, k.objid, k.objsubid)
    }
}

/// Shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Compatible with other shared holders.
    Shared,
    /// Compatible with nobody else.
    Exclusive,
}

impl Mode {
    /// PostgreSQL's name for the mode, as pg_locks shows it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Shared => "ShareLock",
            Mode::Exclusive => "ExclusiveLock",
        }
    }

    fn conflicts(self, other: Mode) -> bool {
        self == Mode::Exclusive || other == Mode::Exclusive
    }

    fn ix(self) -> usize {
        self as usize
    }
}

/// How long a take lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Until unlocked or the session ends.
    Session,
    /// Until the transaction ends.
    Xact,
}

/// One session's hold on one lock.
#[derive(Debug, Default)]
struct Holder {
    owner: u64,
    pid: i32,
    /// Modes held, by [`Mode::ix`]: what other sessions must respect.
    held: [bool; 2],
    /// Takes by mode and scope (session, transaction).
    counts: [[u32; 2]; 2],
    /// Granted after a wait or kept from an undone attempt, not yet taken
    /// by the statement running again.
    reserved: [u32; 2],
}

impl Holder {
    fn needs(&self, m: Mode) -> bool {
        let c = self.counts[m.ix()];
        c[0] + c[1] + self.reserved[m.ix()] > 0
    }
}

struct Waiter {
    owner: u64,
    pid: i32,
    mode: Mode,
    since: i64,
    wake: oneshot::Sender<()>,
}

#[derive(Default)]
struct Entry {
    holders: Vec<Holder>,
    /// FIFO: a waiter is granted only from the front.
    waiters: VecDeque<Waiter>,
}

impl Entry {
    fn holder(&mut self, owner: u64) -> Option<&mut Holder> {
        self.holders.iter_mut().find(|h| h.owner == owner)
    }

    fn holder_or_new(&mut self, owner: u64, pid: i32) -> &mut Holder {
        let i = match self.holders.iter().position(|h| h.owner == owner) {
            Some(i) => i,
            None => {
                self.holders.push(Holder { owner, pid, ..Holder::default() });
                self.holders.len() - 1
            }
        };
        &mut self.holders[i]
    }

    /// Whether `owner` may take `mode` now: no other holder holds a
    /// conflicting mode and, unless `owner` already holds the lock, nobody
    /// queued ahead wants a conflicting one (so waiters are not starved).
    fn grantable(&self, owner: u64, mode: Mode, ahead: usize) -> bool {
        let holds = self.holders.iter().any(|h| h.owner == owner && (h.held[0] || h.held[1]));
        self.blockers(owner, mode, if holds { 0 } else { ahead }).is_empty()
    }

    /// Who `owner` asking for `mode` waits for: other holders of a
    /// conflicting mode, and the first `ahead` waiters that want one.
    fn blockers(&self, owner: u64, mode: Mode, ahead: usize) -> Vec<(u64, i32)> {
        let holders = self.holders.iter().filter(|h| {
            h.owner != owner
                && [Mode::Shared, Mode::Exclusive]
                    .iter()
                    .any(|&m| h.held[m.ix()] && m.conflicts(mode))
        });
        let waiters =
            self.waiters.iter().take(ahead).filter(|w| w.owner != owner && w.mode.conflicts(mode));
        holders.map(|h| (h.owner, h.pid)).chain(waiters.map(|w| (w.owner, w.pid))).collect()
    }

    /// Grants waiters from the front of the queue while they fit.
    fn wake(&mut self, waiting: &mut HashMap<u64, (LockKey, Mode)>) {
        while let Some(w) = self.waiters.front() {
            if !self.grantable(w.owner, w.mode, 0) {
                break;
            }
            let Some(w) = self.waiters.pop_front() else { break };
            let h = self.holder_or_new(w.owner, w.pid);
            h.held[w.mode.ix()] = true;
            h.reserved[w.mode.ix()] += 1;
            waiting.remove(&w.owner);
            // A waiter whose receiver is gone was cancelled after being
            // granted; its session gives the reservation back when its
            // statement ends.
            let _ = w.wake.send(());
        }
    }

    fn is_empty(&self) -> bool {
        self.holders.is_empty() && self.waiters.is_empty()
    }
}

#[derive(Default)]
struct Inner {
    entries: HashMap<LockKey, Entry>,
    /// What each waiting session waits for (one lock at a time).
    waiting: HashMap<u64, (LockKey, Mode)>,
}

impl Inner {
    /// Re-derives `owner`'s modes on `key` from its takes and reservations,
    /// drops the hold if nothing is left, and wakes whoever can go.
    /// Returns whether `owner` still holds the lock.
    fn settle(&mut self, owner: u64, key: LockKey) -> bool {
        let Some(e) = self.entries.get_mut(&key) else { return false };
        let mut still = false;
        if let Some(i) = e.holders.iter().position(|h| h.owner == owner) {
            let h = &mut e.holders[i];
            for m in [Mode::Shared, Mode::Exclusive] {
                h.held[m.ix()] = h.needs(m);
            }
            still = h.held[0] || h.held[1];
            if !still {
                e.holders.swap_remove(i);
            }
        }
        e.wake(&mut self.waiting);
        if e.is_empty() {
            self.entries.remove(&key);
        }
        still
    }

    /// The cycle `owner` would close by waiting for `mode` on `key`, as
    /// (pid, key, mode, blocking pid) steps starting at `owner`; None if
    /// waiting cannot deadlock.
    fn cycle(&self, owner: u64, pid: i32, key: LockKey, mode: Mode) -> Option<Vec<Step>> {
        let e = self.entries.get(&key)?;
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let start = (pid, key, mode, e.blockers(owner, mode, e.waiters.len()));
        self.search(owner, start, &mut path, &mut seen).then_some(path)
    }

    fn search(
        &self,
        target: u64,
        (pid, key, mode, blockers): (i32, LockKey, Mode, Vec<(u64, i32)>),
        path: &mut Vec<Step>,
        seen: &mut HashSet<u64>,
    ) -> bool {
        for (b, bpid) in blockers {
            path.push(Step { pid, key, mode, blocker: bpid });
            if b == target {
                return true;
            }
            if seen.insert(b) {
                if let Some(&(k2, m2)) = self.waiting.get(&b) {
                    if let Some(e2) = self.entries.get(&k2) {
                        let pos = e2.waiters.iter().position(|w| w.owner == b).unwrap_or(0);
                        let next = (bpid, k2, m2, e2.blockers(b, m2, pos));
                        if self.search(target, next, path, seen) {
                            return true;
                        }
                    }
                }
            }
            path.pop();
        }
        false
    }
}

/// One step of a deadlock cycle: `pid` waits for `mode` on `key`, blocked
/// by `blocker`.
struct Step {
    pid: i32,
    key: LockKey,
    mode: Mode,
    blocker: i32,
}

/// The advisory locks of one tenant's sessions.
#[derive(Default)]
pub struct Table {
    inner: Mutex<Inner>,
    next_owner: AtomicU64,
}

/// One row of pg_locks.
#[derive(Debug, Clone, PartialEq)]
pub struct LockRow {
    /// Which lock.
    pub key: LockKey,
    /// The holding or waiting session's pid.
    pub pid: i32,
    /// The mode held or wanted.
    pub mode: Mode,
    /// Held (true) or waited for.
    pub granted: bool,
    /// When the wait began (microseconds since 2000), for waiters.
    pub wait_start: Option<i64>,
}

impl Table {
    /// Every hold and wait, for pg_locks: by key, holders first.
    pub fn rows(&self) -> Vec<LockRow> {
        let inner = self.inner.lock();
        let mut keys: Vec<&LockKey> = inner.entries.keys().collect();
        keys.sort();
        let mut out = Vec::new();
        for k in keys {
            let e = &inner.entries[k];
            for h in &e.holders {
                for m in [Mode::Exclusive, Mode::Shared] {
                    if h.held[m.ix()] {
                        let (key, pid) = (*k, h.pid);
                        out.push(LockRow { key, pid, mode: m, granted: true, wait_start: None });
                    }
                }
            }
            for w in &e.waiters {
                let (key, pid, mode, wait_start) = (*k, w.pid, w.mode, Some(w.since));
                out.push(LockRow { key, pid, mode, granted: false, wait_start });
            }
        }
        out
    }
}

/// A session's view of the table: what it holds, and the bookkeeping of
/// the statement it runs (module doc).
pub struct SessionLocks {
    table: Arc<Table>,
    owner: u64,
    pid: AtomicI32,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Locks this session holds or has reserved or waits for.
    keys: HashSet<LockKey>,
    /// This statement attempt's changes to the counts: (key, mode, scope,
    /// +n for takes, -n for releases).
    log: Vec<(LockKey, Mode, Scope, i64)>,
    /// The lock the failed attempt must wait for.
    pending: Option<(LockKey, Mode)>,
    /// Warnings of this attempt (an unlock of a lock not held).
    warnings: Vec<ErrorReport>,
}

impl std::fmt::Debug for SessionLocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLocks").field("owner", &self.owner).finish_non_exhaustive()
    }
}

impl SessionLocks {
    /// A new session's handle on `table`.
    pub fn new(table: Arc<Table>) -> SessionLocks {
        let owner = table.next_owner.fetch_add(1, Ordering::Relaxed);
        SessionLocks { table, owner, pid: AtomicI32::new(0), state: Mutex::default() }
    }

    /// The table, for pg_locks.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Whether the session holds, has reserved or waits for any lock.
    pub fn holds_any(&self) -> bool {
        !self.state.lock().keys.is_empty()
    }

    /// Sets the pid pg_locks shows for this session's locks.
    pub fn set_pid(&self, pid: i32) {
        self.pid.store(pid, Ordering::Relaxed);
    }

    fn pid(&self) -> i32 {
        self.pid.load(Ordering::Relaxed)
    }

    /// Takes `key` in `mode` for `scope`. Returns false if another session
    /// holds it and `wait` is false; with `wait`, records the lock to wait
    /// for and fails (the session waits and runs the statement again).
    pub fn acquire(&self, key: LockKey, mode: Mode, scope: Scope, wait: bool) -> Result<bool> {
        let (m, s) = (mode.ix(), scope as usize);
        let mut st = self.state.lock();
        let mut inner = self.table.inner.lock();
        let e = inner.entries.entry(key).or_default();
        if let Some(h) = e.holder(self.owner) {
            if h.reserved[m] > 0 || h.held[m] {
                h.reserved[m] = h.reserved[m].saturating_sub(1);
                h.counts[m][s] += 1;
                st.log.push((key, mode, scope, 1));
                return Ok(true);
            }
        }
        if e.grantable(self.owner, mode, e.waiters.len()) {
            let h = e.holder_or_new(self.owner, self.pid());
            h.held[m] = true;
            h.counts[m][s] += 1;
            st.keys.insert(key);
            st.log.push((key, mode, scope, 1));
            return Ok(true);
        }
        if !wait {
            return Ok(false);
        }
        st.pending = Some((key, mode));
        Err(err!(LockNotAvailable, "could not obtain {} on {key} without waiting", mode.name()))
    }

    /// Undoes one take of `key` in `mode` for `scope`; false (and a
    /// warning, as PostgreSQL gives) if this session has none.
    pub fn release(&self, key: LockKey, mode: Mode, scope: Scope) -> bool {
        let mut st = self.state.lock();
        let mut inner = self.table.inner.lock();
        let held = inner.entries.get_mut(&key).and_then(|e| e.holder(self.owner));
        match held {
            Some(h) if h.counts[mode.ix()][scope as usize] > 0 => {
                h.counts[mode.ix()][scope as usize] -= 1;
                st.log.push((key, mode, scope, -1));
                true
            }
            _ => {
                let msg = format!("you don't own a lock of type {}", mode.name());
                st.warnings.push(ErrorReport::warning(SqlState::Warning, msg));
                false
            }
        }
    }

    /// Undoes every take for `scope` (pg_advisory_unlock_all for the
    /// session's; a transaction's end for its own).
    pub fn release_all(&self, scope: Scope) {
        let mut st = self.state.lock();
        let mut inner = self.table.inner.lock();
        let keys: Vec<LockKey> = st.keys.iter().copied().collect();
        for key in keys {
            let Some(h) = inner.entries.get_mut(&key).and_then(|e| e.holder(self.owner)) else {
                continue;
            };
            for mode in [Mode::Shared, Mode::Exclusive] {
                let n = std::mem::take(&mut h.counts[mode.ix()][scope as usize]);
                if n > 0 {
                    st.log.push((key, mode, scope, -(n as i64)));
                }
            }
        }
    }

    /// The lock a failed attempt must wait for (taken once).
    pub fn take_pending(&self) -> Option<(LockKey, Mode)> {
        self.state.lock().pending.take()
    }

    /// Reverses the attempt's changes: its takes become reservations the
    /// next attempt takes back, its releases are undone; its warnings go.
    pub fn undo(&self) {
        let mut st = self.state.lock();
        let mut inner = self.table.inner.lock();
        for (key, mode, scope, delta) in st.log.drain(..).rev() {
            let Some(h) = inner.entries.get_mut(&key).and_then(|e| e.holder(self.owner)) else {
                continue;
            };
            let c = &mut h.counts[mode.ix()][scope as usize];
            if delta > 0 {
                *c = c.saturating_sub(delta as u32);
                h.reserved[mode.ix()] += delta as u32;
            } else {
                *c += (-delta) as u32;
            }
        }
        st.warnings.clear();
    }

    /// Waits until `key` can be held in `mode`, then reserves it for the
    /// statement's next attempt. Fails with 40P01 if waiting would close a
    /// cycle of advisory lock waits.
    pub async fn wait(&self, key: LockKey, mode: Mode) -> Result<()> {
        let rx = {
            let mut st = self.state.lock();
            let mut inner = self.table.inner.lock();
            st.keys.insert(key);
            let pid = self.pid();
            let e = inner.entries.entry(key).or_default();
            if e.grantable(self.owner, mode, e.waiters.len()) {
                let h = e.holder_or_new(self.owner, pid);
                h.held[mode.ix()] = true;
                h.reserved[mode.ix()] += 1;
                return Ok(());
            }
            if let Some(cycle) = inner.cycle(self.owner, pid, key, mode) {
                return Err(deadlock(&cycle));
            }
            let (tx, rx) = oneshot::channel();
            let since = sqltypes::datetime::now_micros();
            let w = Waiter { owner: self.owner, pid, mode, since, wake: tx };
            inner.entries.entry(key).or_default().waiters.push_back(w);
            inner.waiting.insert(self.owner, (key, mode));
            rx
        };
        let _leave = LeaveQueue { table: &self.table, owner: self.owner, key };
        rx.await.map_err(|_| err!(InternalError, "advisory lock wait ended without a grant"))
    }

    /// Ends a statement (finished, failed or cancelled): gives back
    /// reservations it did not take, lets go of locks whose takes were all
    /// released, and returns its warnings.
    pub fn end_statement(&self) -> Vec<ErrorReport> {
        let mut st = self.state.lock();
        st.log.clear();
        st.pending = None;
        if st.keys.is_empty() {
            return std::mem::take(&mut st.warnings);
        }
        let mut inner = self.table.inner.lock();
        let keys: Vec<LockKey> = st.keys.iter().copied().collect();
        for key in keys {
            if let Some(h) = inner.entries.get_mut(&key).and_then(|e| e.holder(self.owner)) {
                h.reserved = [0, 0];
            }
            if !inner.settle(self.owner, key) {
                st.keys.remove(&key);
            }
        }
        std::mem::take(&mut st.warnings)
    }

    /// Ends a transaction: its transaction-level takes go.
    pub fn end_transaction(&self) {
        if self.state.lock().keys.is_empty() {
            return;
        }
        self.release_all(Scope::Xact);
        self.end_statement();
    }
}

impl Drop for SessionLocks {
    /// The session is gone: everything it held goes.
    fn drop(&mut self) {
        let st = self.state.get_mut();
        let mut inner = self.table.inner.lock();
        for key in st.keys.drain() {
            if let Some(h) = inner.entries.get_mut(&key).and_then(|e| e.holder(self.owner)) {
                *h = Holder { owner: self.owner, ..Holder::default() };
            }
            inner.settle(self.owner, key);
        }
    }
}

/// Takes a cancelled waiter out of the queue (a granted one keeps its
/// reservation until its statement ends).
struct LeaveQueue<'a> {
    table: &'a Table,
    owner: u64,
    key: LockKey,
}

impl Drop for LeaveQueue<'_> {
    fn drop(&mut self) {
        let mut inner = self.table.inner.lock();
        let inner = &mut *inner;
        if inner.waiting.get(&self.owner).is_some_and(|(k, _)| *k == self.key) {
            inner.waiting.remove(&self.owner);
        }
        if let Some(e) = inner.entries.get_mut(&self.key) {
            e.waiters.retain(|w| w.owner != self.owner);
            // Those queued behind the waiter that left may go now.
            e.wake(&mut inner.waiting);
            if e.is_empty() {
                inner.entries.remove(&self.key);
            }
        }
    }
}

/// PostgreSQL's 40P01 report of a wait cycle.
fn deadlock(cycle: &[Step]) -> ErrorReport {
    let detail: Vec<String> = cycle
        .iter()
        .map(|s| {
            let (pid, mode, key, by) = (s.pid, s.mode.name(), s.key, s.blocker);
            format!("Process {pid} waits for {mode} on {key}; blocked by process {by}.")
        })
        .collect();
    err!(DeadlockDetected, "deadlock detected")
        .with_detail(detail.join("\n"))
        .with_hint("See server log for query details.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(t: &Arc<Table>, pid: i32) -> SessionLocks {
        let s = SessionLocks::new(t.clone());
        s.set_pid(pid);
        s
    }

    const X: Mode = Mode::Exclusive;
    const S: Mode = Mode::Shared;

    #[test]
    fn exclusive_excludes_and_is_reentrant() {
        let t = Arc::new(Table::default());
        let (a, b) = (session(&t, 1), session(&t, 2));
        let k = LockKey::single(7);
        assert!(a.acquire(k, X, Scope::Session, false).expect("a"));
        assert!(a.acquire(k, X, Scope::Session, false).expect("a again"));
        a.end_statement();
        assert!(!b.acquire(k, X, Scope::Session, false).expect("b"));
        assert!(!b.acquire(k, S, Scope::Session, false).expect("b shared"));
        assert!(a.release(k, X, Scope::Session));
        a.end_statement();
        assert!(!b.acquire(k, X, Scope::Session, false).expect("still held once"));
        assert!(a.release(k, X, Scope::Session));
        assert!(!a.release(k, X, Scope::Session));
        assert!(!b.acquire(k, X, Scope::Session, false).expect("b"), "released at statement end");
        assert_eq!(a.end_statement().len(), 1, "one warning");
        assert!(b.acquire(k, X, Scope::Session, false).expect("free"));
    }

    #[test]
    fn key_spaces_are_distinct_and_shared_is_shared() {
        let t = Arc::new(Table::default());
        let (a, b) = (session(&t, 1), session(&t, 2));
        assert!(a.acquire(LockKey::single(1), X, Scope::Session, false).expect("a"));
        assert!(b.acquire(LockKey::pair(0, 1), X, Scope::Session, false).expect("b"));
        let k = LockKey::single(2);
        assert!(a.acquire(k, S, Scope::Session, false).expect("a"));
        assert!(b.acquire(k, S, Scope::Session, false).expect("b"));
        assert_eq!(t.rows().len(), 4);
    }

    #[tokio::test]
    async fn waiter_is_granted_on_release_and_xact_locks_end_with_the_transaction() {
        let t = Arc::new(Table::default());
        let (a, b) = (session(&t, 1), session(&t, 2));
        let k = LockKey::single(3);
        assert!(a.acquire(k, X, Scope::Xact, false).expect("a"));
        a.end_statement();
        assert!(b.acquire(k, X, Scope::Session, true).is_err());
        assert_eq!(b.take_pending(), Some((k, X)));
        b.undo();
        let wait = b.wait(k, X);
        tokio::pin!(wait);
        assert!(futures_poll(&mut wait).is_none(), "b waits");
        a.end_transaction();
        assert!(futures_poll(&mut wait).is_some(), "b is granted");
        assert!(b.acquire(k, X, Scope::Session, true).expect("reserved"));
        b.end_statement();
        assert!(!a.acquire(k, S, Scope::Session, false).expect("b holds it"));
    }

    #[tokio::test]
    async fn cycles_are_deadlocks() {
        let t = Arc::new(Table::default());
        let (a, b) = (session(&t, 1), session(&t, 2));
        let (k1, k2) = (LockKey::single(1), LockKey::single(2));
        assert!(a.acquire(k1, X, Scope::Session, false).expect("a"));
        assert!(b.acquire(k2, X, Scope::Session, false).expect("b"));
        let wait = a.wait(k2, X);
        tokio::pin!(wait);
        assert!(futures_poll(&mut wait).is_none());
        let e = b.wait(k1, X).await.expect_err("deadlock");
        assert_eq!(e.code, SqlState::DeadlockDetected);
        assert_eq!(e.detail.as_deref().map(|d| d.lines().count()), Some(2));
    }

    #[tokio::test]
    async fn a_cancelled_wait_leaves_the_queue() {
        let t = Arc::new(Table::default());
        let (a, b, c) = (session(&t, 1), session(&t, 2), session(&t, 3));
        let k = LockKey::single(9);
        assert!(a.acquire(k, S, Scope::Session, false).expect("a"));
        {
            let wait = b.wait(k, X);
            tokio::pin!(wait);
            assert!(futures_poll(&mut wait).is_none());
            // c's shared request queues behind b's exclusive one.
            assert!(!c.acquire(k, S, Scope::Session, false).expect("c"));
        }
        b.end_statement();
        assert!(c.acquire(k, S, Scope::Session, false).expect("b left"));
        drop(a);
        drop(c);
        assert!(t.rows().is_empty());
    }

    /// Polls a future once.
    fn futures_poll<F: std::future::Future + Unpin>(f: &mut F) -> Option<F::Output> {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        match std::pin::Pin::new(f).poll(&mut cx) {
            std::task::Poll::Ready(v) => Some(v),
            std::task::Poll::Pending => None,
        }
    }
}
