//! Locks on keys: shared or exclusive, granted in FIFO order, with
//! deadlock detection.
//!
//! Row locks are exclusive. Shared locks exist for table locks: a statement
//! that writes a table holds its catalog key shared (many writers at once),
//! and DDL that rewrites or drops the table takes it exclusive, so it waits
//! for those writers to finish and they wait for it (PostgreSQL's ROW
//! EXCLUSIVE vs ACCESS EXCLUSIVE, reduced to the two modes we need).
//!
//! The table maps a key to its holders and a queue of waiters. A request
//! compatible with the holders and with nobody queued ahead is granted at
//! once; otherwise it joins the queue and awaits a oneshot. Releasing a key
//! grants waiters from the front of the queue for as long as they are
//! compatible (one exclusive, or a run of shared), so nobody starves.
//!
//! A transaction waits for at most one key at a time; it waits for that
//! key's other holders and for incompatible waiters queued ahead of it (they
//! will hold the key first). Before queueing, the requester walks that
//! wait-for graph from its blockers, and if it reaches itself the request
//! fails with a deadlock error instead of waiting (PostgreSQL reports 40P01
//! after a timeout we do not need, because detection here is immediate).
//!
//! A holder of a shared lock may ask for the exclusive lock (an upgrade): it
//! is granted at once when the requester is the only holder, and otherwise
//! queues while keeping its shared hold.

use std::collections::{HashMap, HashSet, VecDeque};

use kvapi::TxnId;
use tokio::sync::oneshot;

/// How a key is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Compatible with other shared holders.
    Shared,
    /// Compatible with nothing else.
    Exclusive,
}

struct Waiter {
    txn: TxnId,
    mode: Mode,
    wake: oneshot::Sender<()>,
}

#[derive(Default)]
struct Entry {
    /// Either one exclusive holder, or any number of shared holders.
    holders: Vec<(TxnId, Mode)>,
    waiters: VecDeque<Waiter>,
}

impl Entry {
    /// True if `txn` could hold `mode` alongside the current holders.
    fn compatible(&self, txn: TxnId, mode: Mode) -> bool {
        self.holders.iter().all(|&(h, m)| h == txn || (m == Mode::Shared && mode == Mode::Shared))
    }

    fn held_by(&self, txn: TxnId) -> Option<Mode> {
        self.holders.iter().find(|(h, _)| *h == txn).map(|(_, m)| *m)
    }

    fn grant(&mut self, txn: TxnId, mode: Mode) {
        match self.holders.iter_mut().find(|(h, _)| *h == txn) {
            Some(h) => h.1 = h.1.max(mode),
            None => self.holders.push((txn, mode)),
        }
    }

    /// Who the waiter at queue position `pos` (or a new request, at the end)
    /// must wait for.
    fn blockers(&self, txn: TxnId, mode: Mode, pos: usize) -> Vec<TxnId> {
        let mut out: Vec<TxnId> = self
            .holders
            .iter()
            .filter(|&&(h, m)| h != txn && (m == Mode::Exclusive || mode == Mode::Exclusive))
            .map(|(h, _)| *h)
            .collect();
        for w in self.waiters.iter().take(pos) {
            if w.txn != txn && (w.mode == Mode::Exclusive || mode == Mode::Exclusive) {
                out.push(w.txn);
            }
        }
        out
    }
}

/// What [`LockTable::acquire`] decided.
pub enum Acquire {
    /// The caller holds the lock now.
    Granted,
    /// The caller is queued; the lock is theirs when this fires.
    Wait(oneshot::Receiver<()>),
    /// Waiting would close a cycle of waiting transactions.
    Deadlock,
}

/// The node's lock table (keys are full tenant-prefixed keys).
#[derive(Default)]
pub struct LockTable {
    locks: HashMap<Vec<u8>, Entry>,
    /// For each waiting transaction, the transactions it waits for.
    waits_for: HashMap<TxnId, Vec<TxnId>>,
}

impl LockTable {
    /// Requests `key` in `mode` for `txn`.
    pub fn acquire(&mut self, key: &[u8], txn: TxnId, mode: Mode) -> Acquire {
        let Some(entry) = self.locks.get_mut(key) else {
            self.locks.insert(
                key.to_vec(),
                Entry { holders: vec![(txn, mode)], waiters: VecDeque::new() },
            );
            return Acquire::Granted;
        };
        if entry.held_by(txn).is_some_and(|m| m >= mode) {
            return Acquire::Granted;
        }
        // An upgrade may pass the queue: waiters behind it wait for its
        // shared hold anyway.
        let upgrade = entry.held_by(txn).is_some();
        if entry.compatible(txn, mode) && (upgrade || entry.waiters.is_empty()) {
            entry.grant(txn, mode);
            return Acquire::Granted;
        }
        // An upgrader queues ahead of everyone who does not hold the key:
        // they wait for its shared hold, so behind them it would deadlock.
        let pos = if upgrade {
            entry.waiters.iter().take_while(|w| entry.held_by(w.txn).is_some()).count()
        } else {
            entry.waiters.len()
        };
        let blockers = entry.blockers(txn, mode, pos);
        if self.reaches(&blockers, txn) {
            return Acquire::Deadlock;
        }
        let (wake, rx) = oneshot::channel();
        let entry = self.locks.get_mut(key).expect("entry looked up above");
        entry.waiters.insert(pos, Waiter { txn, mode, wake });
        self.waits_for.insert(txn, blockers);
        Acquire::Wait(rx)
    }

    /// Grants `key` in `mode` to `txn` if that needs no wait (the same test
    /// as [`LockTable::acquire`]'s immediate grant); false otherwise, and
    /// nothing is queued. NOWAIT and SKIP LOCKED use it.
    pub fn try_acquire(&mut self, key: &[u8], txn: TxnId, mode: Mode) -> bool {
        let Some(entry) = self.locks.get_mut(key) else {
            self.locks.insert(
                key.to_vec(),
                Entry { holders: vec![(txn, mode)], waiters: VecDeque::new() },
            );
            return true;
        };
        if entry.held_by(txn).is_some_and(|m| m >= mode) {
            return true;
        }
        let upgrade = entry.held_by(txn).is_some();
        if entry.compatible(txn, mode) && (upgrade || entry.waiters.is_empty()) {
            entry.grant(txn, mode);
            return true;
        }
        false
    }

    /// True if following wait-for edges from `from` leads to `target`.
    fn reaches(&self, from: &[TxnId], target: TxnId) -> bool {
        let mut seen = HashSet::new();
        let mut stack: Vec<TxnId> = from.to_vec();
        while let Some(t) = stack.pop() {
            if t == target {
                return true;
            }
            if seen.insert(t) {
                if let Some(next) = self.waits_for.get(&t) {
                    stack.extend_from_slice(next);
                }
            }
        }
        false
    }

    /// Releases `key` held by `txn`, granting waiters that have become
    /// compatible, in queue order.
    pub fn release(&mut self, key: &[u8], txn: TxnId) {
        let Some(entry) = self.locks.get_mut(key) else { return };
        let before = entry.holders.len();
        entry.holders.retain(|(h, _)| *h != txn);
        if entry.holders.len() == before {
            return;
        }
        self.grant_waiters(key);
    }

    /// Grants the compatible waiters at the front of `key`'s queue, then
    /// recomputes what the rest wait for; drops the entry once it is free.
    fn grant_waiters(&mut self, key: &[u8]) {
        let Some(entry) = self.locks.get_mut(key) else { return };
        while let Some(front) = entry.waiters.front() {
            if !entry.compatible(front.txn, front.mode) {
                break;
            }
            let w = entry.waiters.pop_front().expect("front exists");
            self.waits_for.remove(&w.txn);
            if w.wake.send(()).is_ok() {
                entry.grant(w.txn, w.mode);
            }
        }
        if entry.holders.is_empty() && entry.waiters.is_empty() {
            self.locks.remove(key);
            return;
        }
        for (pos, w) in entry.waiters.iter().enumerate() {
            self.waits_for.insert(w.txn, entry.blockers(w.txn, w.mode, pos));
        }
    }

    /// Withdraws a waiter whose wait was abandoned (its future dropped). If
    /// the lock had already been handed to it, it is released again, unless
    /// the wait was an upgrade (`had_shared`): then the transaction keeps the
    /// key until it ends, as it expects to.
    pub fn abandon(&mut self, key: &[u8], txn: TxnId, had_shared: bool) {
        self.waits_for.remove(&txn);
        let Some(entry) = self.locks.get_mut(key) else { return };
        let queued = entry.waiters.len();
        entry.waiters.retain(|w| w.txn != txn);
        if entry.waiters.len() < queued {
            self.grant_waiters(key);
        } else if !had_shared {
            self.release(key, txn);
        }
    }

    /// The mode in which `txn` holds `key`, if it does.
    pub fn held(&self, key: &[u8], txn: TxnId) -> Option<Mode> {
        self.locks.get(key).and_then(|e| e.held_by(txn))
    }

    /// True if `txn` holds `key` exclusively.
    pub fn holds(&self, key: &[u8], txn: TxnId) -> bool {
        self.held(key, txn) == Some(Mode::Exclusive)
    }

    /// Number of locked keys (for tests and metrics).
    pub fn len(&self) -> usize {
        self.locks.len()
    }

    /// True if no key is locked.
    pub fn is_empty(&self) -> bool {
        self.locks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(i: u64) -> TxnId {
        TxnId(i)
    }

    #[test]
    fn try_acquire_never_queues() {
        let mut lt = LockTable::default();
        assert!(lt.try_acquire(b"k", t(1), Mode::Shared));
        assert!(lt.try_acquire(b"k", t(2), Mode::Shared));
        assert!(!lt.try_acquire(b"k", t(3), Mode::Exclusive));
        assert!(!lt.try_acquire(b"k", t(1), Mode::Exclusive), "another shared holder");
        lt.release(b"k", t(2));
        assert!(lt.try_acquire(b"k", t(1), Mode::Exclusive), "sole holder upgrades");
        assert!(!lt.try_acquire(b"k", t(2), Mode::Shared));
        lt.release(b"k", t(1));
        assert!(lt.is_empty(), "failed tries left nothing behind");
    }

    #[test]
    fn fifo_handoff() {
        let mut lt = LockTable::default();
        assert!(matches!(lt.acquire(b"k", t(1), Mode::Exclusive), Acquire::Granted));
        let Acquire::Wait(mut r2) = lt.acquire(b"k", t(2), Mode::Exclusive) else {
            panic!("2 must wait")
        };
        let Acquire::Wait(mut r3) = lt.acquire(b"k", t(3), Mode::Exclusive) else {
            panic!("3 must wait")
        };
        lt.release(b"k", t(1));
        assert!(r2.try_recv().is_ok());
        assert!(r3.try_recv().is_err());
        assert!(lt.holds(b"k", t(2)));
        lt.release(b"k", t(2));
        assert!(r3.try_recv().is_ok());
        lt.release(b"k", t(3));
        assert!(lt.is_empty());
    }

    #[test]
    fn two_way_deadlock() {
        let mut lt = LockTable::default();
        assert!(matches!(lt.acquire(b"a", t(1), Mode::Exclusive), Acquire::Granted));
        assert!(matches!(lt.acquire(b"b", t(2), Mode::Exclusive), Acquire::Granted));
        let _w = lt.acquire(b"b", t(1), Mode::Exclusive);
        assert!(matches!(lt.acquire(b"a", t(2), Mode::Exclusive), Acquire::Deadlock));
    }

    #[test]
    fn three_way_deadlock() {
        let mut lt = LockTable::default();
        for (k, i) in [(b"a", 1), (b"b", 2), (b"c", 3)] {
            assert!(matches!(lt.acquire(k, t(i), Mode::Exclusive), Acquire::Granted));
        }
        let _w1 = lt.acquire(b"b", t(1), Mode::Exclusive);
        let _w2 = lt.acquire(b"c", t(2), Mode::Exclusive);
        assert!(matches!(lt.acquire(b"a", t(3), Mode::Exclusive), Acquire::Deadlock));
    }

    #[test]
    fn abandoned_waiter_is_skipped() {
        let mut lt = LockTable::default();
        lt.acquire(b"k", t(1), Mode::Exclusive);
        let w2 = lt.acquire(b"k", t(2), Mode::Exclusive);
        let Acquire::Wait(mut r3) = lt.acquire(b"k", t(3), Mode::Exclusive) else {
            panic!("3 must wait")
        };
        drop(w2);
        lt.abandon(b"k", t(2), false);
        lt.release(b"k", t(1));
        assert!(r3.try_recv().is_ok());
        assert!(lt.holds(b"k", t(3)));
    }

    #[test]
    fn dropped_receiver_does_not_get_the_lock() {
        let mut lt = LockTable::default();
        lt.acquire(b"k", t(1), Mode::Exclusive);
        let w = lt.acquire(b"k", t(2), Mode::Exclusive);
        drop(w);
        lt.release(b"k", t(1));
        assert!(lt.is_empty());
    }

    #[test]
    fn shared_holders_coexist_and_exclusive_waits_for_all() {
        let mut lt = LockTable::default();
        assert!(matches!(lt.acquire(b"t", t(1), Mode::Shared), Acquire::Granted));
        assert!(matches!(lt.acquire(b"t", t(2), Mode::Shared), Acquire::Granted));
        let Acquire::Wait(mut x) = lt.acquire(b"t", t(3), Mode::Exclusive) else {
            panic!("exclusive must wait for both shared holders")
        };
        // FIFO: a later shared request queues behind the exclusive waiter.
        let Acquire::Wait(mut s4) = lt.acquire(b"t", t(4), Mode::Shared) else {
            panic!("shared must not overtake a queued exclusive")
        };
        lt.release(b"t", t(1));
        assert!(x.try_recv().is_err());
        lt.release(b"t", t(2));
        assert!(x.try_recv().is_ok());
        assert!(lt.holds(b"t", t(3)));
        assert!(s4.try_recv().is_err());
        lt.release(b"t", t(3));
        assert!(s4.try_recv().is_ok());
        assert_eq!(lt.held(b"t", t(4)), Some(Mode::Shared));
    }

    #[test]
    fn run_of_shared_waiters_is_granted_together() {
        let mut lt = LockTable::default();
        lt.acquire(b"t", t(1), Mode::Exclusive);
        let Acquire::Wait(mut a) = lt.acquire(b"t", t(2), Mode::Shared) else { panic!("wait") };
        let Acquire::Wait(mut b) = lt.acquire(b"t", t(3), Mode::Shared) else { panic!("wait") };
        let Acquire::Wait(mut c) = lt.acquire(b"t", t(4), Mode::Exclusive) else { panic!("wait") };
        lt.release(b"t", t(1));
        assert!(a.try_recv().is_ok());
        assert!(b.try_recv().is_ok());
        assert!(c.try_recv().is_err());
    }

    #[test]
    fn sole_shared_holder_upgrades_at_once() {
        let mut lt = LockTable::default();
        lt.acquire(b"t", t(1), Mode::Shared);
        assert!(matches!(lt.acquire(b"t", t(1), Mode::Exclusive), Acquire::Granted));
        assert!(lt.holds(b"t", t(1)));
        assert!(matches!(lt.acquire(b"t", t(1), Mode::Shared), Acquire::Granted));
        assert!(lt.holds(b"t", t(1)), "a weaker request never downgrades");
    }

    #[test]
    fn two_upgraders_deadlock() {
        let mut lt = LockTable::default();
        lt.acquire(b"t", t(1), Mode::Shared);
        lt.acquire(b"t", t(2), Mode::Shared);
        let _w = lt.acquire(b"t", t(1), Mode::Exclusive);
        assert!(matches!(lt.acquire(b"t", t(2), Mode::Exclusive), Acquire::Deadlock));
    }

    #[test]
    fn upgrader_goes_ahead_of_queued_exclusive() {
        let mut lt = LockTable::default();
        lt.acquire(b"t", t(1), Mode::Shared);
        lt.acquire(b"t", t(2), Mode::Shared);
        let Acquire::Wait(mut x3) = lt.acquire(b"t", t(3), Mode::Exclusive) else { panic!("wait") };
        let Acquire::Wait(mut up) = lt.acquire(b"t", t(1), Mode::Exclusive) else {
            panic!("upgrade waits for the other shared holder, not a deadlock")
        };
        lt.release(b"t", t(2));
        assert!(up.try_recv().is_ok());
        assert!(lt.holds(b"t", t(1)));
        assert!(x3.try_recv().is_err());
        lt.release(b"t", t(1));
        assert!(x3.try_recv().is_ok());
    }

    #[test]
    fn shared_and_row_locks_deadlock_across_keys() {
        // 1 holds the table shared and waits for a row 2 holds; 2 then asks
        // for the table exclusive (DDL after DML in another session).
        let mut lt = LockTable::default();
        lt.acquire(b"t", t(1), Mode::Shared);
        lt.acquire(b"r", t(2), Mode::Exclusive);
        let _w = lt.acquire(b"r", t(1), Mode::Exclusive);
        assert!(matches!(lt.acquire(b"t", t(2), Mode::Exclusive), Acquire::Deadlock));
    }

    #[test]
    fn abandoned_exclusive_waiter_unblocks_shared_behind_it() {
        let mut lt = LockTable::default();
        lt.acquire(b"t", t(1), Mode::Shared);
        let x = lt.acquire(b"t", t(2), Mode::Exclusive);
        let Acquire::Wait(mut s3) = lt.acquire(b"t", t(3), Mode::Shared) else { panic!("wait") };
        drop(x);
        lt.abandon(b"t", t(2), false);
        assert!(s3.try_recv().is_ok());
        assert_eq!(lt.held(b"t", t(3)), Some(Mode::Shared));
    }
}
