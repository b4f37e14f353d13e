//! Row locks: exclusive per key, granted in FIFO order, with deadlock
//! detection.
//!
//! The table maps a key to its holder and a queue of waiters. A transaction
//! that finds a key held joins the queue and awaits a oneshot; when the
//! holder releases the key (at commit or abort, after the commit is visible),
//! the first live waiter becomes the holder and is woken. Each waiting
//! transaction waits for exactly one key, so the wait-for graph is a set of
//! chains: before queueing, the requester follows the chain from the holder,
//! and if it leads back to itself the request fails with a deadlock error
//! instead of waiting (PostgreSQL reports 40P01 the same way, after a timeout
//! we do not need because detection is immediate and exact).

use std::collections::{HashMap, VecDeque};

use kvapi::TxnId;
use tokio::sync::oneshot;

struct Entry {
    holder: TxnId,
    waiters: VecDeque<(TxnId, oneshot::Sender<()>)>,
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
    /// For each waiting transaction, the transaction it waits for.
    waits_for: HashMap<TxnId, TxnId>,
}

impl LockTable {
    /// Requests `key` for `txn`.
    pub fn acquire(&mut self, key: &[u8], txn: TxnId) -> Acquire {
        let Some(entry) = self.locks.get_mut(key) else {
            self.locks.insert(key.to_vec(), Entry { holder: txn, waiters: VecDeque::new() });
            return Acquire::Granted;
        };
        if entry.holder == txn {
            return Acquire::Granted;
        }
        // Follow the wait-for chain from the holder.
        let mut cur = entry.holder;
        let mut steps = 0;
        while let Some(&next) = self.waits_for.get(&cur) {
            if next == txn {
                return Acquire::Deadlock;
            }
            cur = next;
            steps += 1;
            if steps > self.waits_for.len() {
                break;
            }
        }
        if cur == txn {
            return Acquire::Deadlock;
        }
        let (tx, rx) = oneshot::channel();
        entry.waiters.push_back((txn, tx));
        self.waits_for.insert(txn, entry.holder);
        Acquire::Wait(rx)
    }

    /// Releases `key` held by `txn`, handing it to the first live waiter.
    pub fn release(&mut self, key: &[u8], txn: TxnId) {
        let Some(entry) = self.locks.get_mut(key) else { return };
        if entry.holder != txn {
            return;
        }
        while let Some((next, tx)) = entry.waiters.pop_front() {
            self.waits_for.remove(&next);
            if tx.send(()).is_ok() {
                entry.holder = next;
                for (w, _) in &entry.waiters {
                    self.waits_for.insert(*w, next);
                }
                return;
            }
        }
        self.locks.remove(key);
    }

    /// Withdraws a waiter whose wait was abandoned (its future dropped). If
    /// the lock had already been handed to it, it is released again.
    pub fn abandon(&mut self, key: &[u8], txn: TxnId) {
        self.waits_for.remove(&txn);
        let Some(entry) = self.locks.get_mut(key) else { return };
        if entry.holder == txn {
            self.release(key, txn);
            return;
        }
        entry.waiters.retain(|(w, _)| *w != txn);
    }

    /// True if `txn` holds `key`.
    pub fn holds(&self, key: &[u8], txn: TxnId) -> bool {
        self.locks.get(key).map(|e| e.holder == txn).unwrap_or(false)
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
    fn fifo_handoff() {
        let mut lt = LockTable::default();
        assert!(matches!(lt.acquire(b"k", t(1)), Acquire::Granted));
        let Acquire::Wait(mut r2) = lt.acquire(b"k", t(2)) else { panic!("2 must wait") };
        let Acquire::Wait(mut r3) = lt.acquire(b"k", t(3)) else { panic!("3 must wait") };
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
        assert!(matches!(lt.acquire(b"a", t(1)), Acquire::Granted));
        assert!(matches!(lt.acquire(b"b", t(2)), Acquire::Granted));
        let _w = lt.acquire(b"b", t(1));
        assert!(matches!(lt.acquire(b"a", t(2)), Acquire::Deadlock));
    }

    #[test]
    fn three_way_deadlock() {
        let mut lt = LockTable::default();
        for (k, i) in [(b"a", 1), (b"b", 2), (b"c", 3)] {
            assert!(matches!(lt.acquire(k, t(i)), Acquire::Granted));
        }
        let _w1 = lt.acquire(b"b", t(1));
        let _w2 = lt.acquire(b"c", t(2));
        assert!(matches!(lt.acquire(b"a", t(3)), Acquire::Deadlock));
    }

    #[test]
    fn abandoned_waiter_is_skipped() {
        let mut lt = LockTable::default();
        lt.acquire(b"k", t(1));
        let w2 = lt.acquire(b"k", t(2));
        let Acquire::Wait(mut r3) = lt.acquire(b"k", t(3)) else { panic!("3 must wait") };
        drop(w2);
        lt.abandon(b"k", t(2));
        lt.release(b"k", t(1));
        assert!(r3.try_recv().is_ok());
        assert!(lt.holds(b"k", t(3)));
    }

    #[test]
    fn dropped_receiver_does_not_get_the_lock() {
        let mut lt = LockTable::default();
        lt.acquire(b"k", t(1));
        let w = lt.acquire(b"k", t(2));
        drop(w);
        lt.release(b"k", t(1));
        assert!(lt.is_empty());
    }
}
