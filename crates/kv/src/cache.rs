//! A cache of the newest committed version of recently written and read
//! keys.
//!
//! INVARIANT: if a key is in the cache, its entry is the key's newest
//! committed version. The commit worker inserts, for every key it commits,
//! before it publishes the commit's timestamp. So a reader at snapshot S that
//! finds an entry with timestamp <= S has found exactly what a storage read
//! at S would return, and one that finds a newer entry (or none) reads
//! storage. Evicting an entry is always safe; the cache is bounded by
//! dropping a whole shard when it grows past its share.
//!
//! FILL. A reader that missed may insert the newest version it read from
//! storage ([`VersionCache::ticket`], then [`VersionCache::fill`]), so reads
//! of data that was not written lately are served from memory too. Each
//! shard counts its changes (commits, purges, clears) in an epoch; a fill
//! goes in only if the key is still absent and the shard's epoch is the one
//! the ticket saw before the storage read. A commit of that key lands in
//! storage before the commit worker inserts it here, so one that the storage
//! read missed has bumped the epoch by the time the fill looks, and the fill
//! is dropped; one that comes later overwrites the entry, as for any key.
//!
//! FLOOR. Each shard also remembers a timestamp no older than the newest
//! version of any key it does not hold: the node's last commit when it
//! opened, raised whenever entries are dropped. So a missing key was last
//! written at or before the floor, and a lock holder whose snapshot is at or
//! after it knows the key did not change since, without reading storage.

use std::collections::HashMap;
use std::hash::BuildHasher;

use parking_lot::Mutex;

const SHARDS: usize = 64;

type Entry = (u64, Option<Vec<u8>>);

struct Shard {
    map: HashMap<Vec<u8>, Entry>,
    bytes: usize,
    /// Newest timestamp any key missing from `map` can have (see FLOOR).
    floor: u64,
    /// Changes since the start (see FILL).
    epoch: u64,
}

impl Shard {
    /// Drops everything, raising the floor past what was dropped.
    fn clear(&mut self) {
        let newest = self.map.values().map(|(ts, _)| *ts).max().unwrap_or(0);
        self.floor = self.floor.max(newest);
        self.map.clear();
        self.bytes = 0;
        self.epoch += 1;
    }

    /// Inserts or replaces `key`'s entry, making room first if need be.
    fn put(&mut self, key: &[u8], entry: Entry, size: usize, cap: usize) {
        if self.bytes + size > cap {
            self.clear();
        }
        let new = entry.1.as_ref().map(|v| v.len()).unwrap_or(0);
        match self.map.get_mut(key) {
            Some(e) => {
                let old = e.1.as_ref().map(|v| v.len()).unwrap_or(0);
                *e = entry;
                self.bytes = (self.bytes + new).saturating_sub(old);
            }
            None => {
                self.map.insert(key.to_vec(), entry);
                self.bytes += size;
            }
        }
    }
}

/// What a reader saw of a key's shard before reading storage (see FILL).
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    epoch: u64,
}

/// The bytes an entry is charged for: key, value and bookkeeping.
fn charge(key: &[u8], value: Option<&[u8]>) -> usize {
    key.len() + value.map(|v| v.len()).unwrap_or(0) + 48
}

/// The newest-version cache.
pub struct VersionCache {
    shards: Vec<Mutex<Shard>>,
    shard_cap: usize,
    hasher: std::collections::hash_map::RandomState,
}

impl VersionCache {
    /// A cache holding about `cap_bytes` of keys and values, for a node
    /// whose last commit (before any entry) was at `last_ts`.
    pub fn new(cap_bytes: usize, last_ts: u64) -> VersionCache {
        VersionCache {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard { map: HashMap::new(), bytes: 0, floor: last_ts, epoch: 0 })
                })
                .collect(),
            shard_cap: cap_bytes / SHARDS,
            hasher: Default::default(),
        }
    }

    fn shard(&self, key: &[u8]) -> &Mutex<Shard> {
        &self.shards[(self.hasher.hash_one(key) as usize) % SHARDS]
    }

    /// The value visible at `snapshot` if the cache can answer: Some(None)
    /// for a deleted key, None if the cache cannot tell.
    pub fn get(&self, key: &[u8], snapshot: u64) -> Option<Option<Vec<u8>>> {
        let shard = self.shard(key).lock();
        match shard.map.get(key) {
            Some((ts, v)) if *ts <= snapshot => Some(v.clone()),
            _ => None,
        }
    }

    /// The newest committed version, if cached: (timestamp, value).
    pub fn newest(&self, key: &[u8]) -> Option<Entry> {
        self.shard(key).lock().map.get(key).cloned()
    }

    /// A timestamp the key's newest version is known not to exceed: its
    /// entry's, or the shard's floor if it has none.
    pub fn newest_ts_bound(&self, key: &[u8]) -> u64 {
        let shard = self.shard(key).lock();
        match shard.map.get(key) {
            Some((ts, _)) => *ts,
            None => shard.floor,
        }
    }

    /// Drops every entry with a key in `[start, end)` (always safe: readers
    /// then read storage).
    pub fn purge(&self, start: &[u8], end: &[u8]) {
        for s in &self.shards {
            let mut shard = s.lock();
            let mut freed = 0;
            let mut newest = 0;
            shard.map.retain(|k, (ts, v)| {
                let doomed = k.as_slice() >= start && k.as_slice() < end;
                if doomed {
                    freed += k.len() + v.as_ref().map(|v| v.len()).unwrap_or(0) + 48;
                    newest = newest.max(*ts);
                }
                !doomed
            });
            shard.bytes = shard.bytes.saturating_sub(freed);
            shard.floor = shard.floor.max(newest);
            shard.epoch += 1;
        }
    }

    /// Taken before a storage read whose result may [`VersionCache::fill`]
    /// the cache.
    pub fn ticket(&self, key: &[u8]) -> Ticket {
        Ticket { epoch: self.shard(key).lock().epoch }
    }

    /// Inserts the newest version of `key` (a deletion if `value` is None)
    /// that a storage read after `ticket` found, unless the key is cached already or its shard changed since the
    /// ticket (see FILL).
    pub fn fill(&self, key: &[u8], ticket: Ticket, ts: u64, value: Option<&[u8]>) {
        let size = charge(key, value);
        if self.shard_cap == 0 || size > self.shard_cap {
            return;
        }
        let mut shard = self.shard(key).lock();
        if shard.epoch != ticket.epoch || shard.map.contains_key(key) {
            return;
        }
        shard.put(key, (ts, value.map(|v| v.to_vec())), size, self.shard_cap);
    }

    /// Records a committed version (commit worker only, before publishing).
    pub fn committed(&self, key: &[u8], ts: u64, value: Option<&[u8]>) {
        let size = charge(key, value);
        let mut shard = self.shard(key).lock();
        shard.epoch += 1;
        if self.shard_cap == 0 || size > self.shard_cap {
            // Too big to cache: make sure no older entry stays behind.
            if let Some((k, (old_ts, v))) = shard.map.remove_entry(key) {
                shard.bytes = shard.bytes.saturating_sub(charge(&k, v.as_deref()));
                shard.floor = shard.floor.max(old_ts);
            }
            shard.floor = shard.floor.max(ts);
            return;
        }
        shard.put(key, (ts, value.map(|v| v.to_vec())), size, self.shard_cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_only_for_snapshots_at_or_after_the_entry() {
        let c = VersionCache::new(1 << 20, 0);
        assert_eq!(c.get(b"k", 10), None);
        c.committed(b"k", 5, Some(b"v5"));
        assert_eq!(c.get(b"k", 4), None);
        assert_eq!(c.get(b"k", 5), Some(Some(b"v5".to_vec())));
        c.committed(b"k", 7, None);
        assert_eq!(c.get(b"k", 6), None);
        assert_eq!(c.get(b"k", 9), Some(None));
        assert_eq!(c.newest(b"k"), Some((7, None)));
        c.committed(b"l", 8, Some(b"x"));
        c.purge(b"k", b"l");
        assert_eq!(c.newest(b"k"), None);
        assert_eq!(c.newest(b"l"), Some((8, Some(b"x".to_vec()))));
    }

    #[test]
    fn stays_bounded() {
        let c = VersionCache::new(64 * 200, 0);
        for i in 0..10_000u32 {
            c.committed(&i.to_be_bytes(), 1, Some(&[0u8; 100]));
        }
        let total: usize = c.shards.iter().map(|s| s.lock().bytes).sum();
        assert!(total <= 64 * 200, "{total}");
        c.committed(b"huge", 2, Some(&vec![0u8; 1 << 16]));
        assert_eq!(c.get(b"huge", 2), None);
        assert!(c.newest_ts_bound(b"huge") >= 2, "a dropped write raises the floor");
    }

    #[test]
    fn floor_bounds_missing_keys() {
        let c = VersionCache::new(1 << 20, 10);
        assert_eq!(c.newest_ts_bound(b"never"), 10, "written before the node opened");
        c.committed(b"k", 12, Some(b"v"));
        assert_eq!(c.newest_ts_bound(b"k"), 12);
        c.purge(b"k", b"l");
        assert!(c.newest_ts_bound(b"k") >= 12, "purged entries raise the floor");
    }

    #[test]
    fn a_fill_goes_in_only_if_nothing_changed_since_its_ticket() {
        let c = VersionCache::new(1 << 20, 10);
        let t = c.ticket(b"k");
        c.fill(b"k", t, 3, Some(b"old"));
        assert_eq!(c.get(b"k", 5), Some(Some(b"old".to_vec())));
        assert_eq!(c.get(b"k", 2), None, "not for snapshots before the version");
        // A cached key keeps its entry: a late fill never replaces it.
        c.committed(b"k", 12, Some(b"new"));
        c.fill(b"k", c.ticket(b"k"), 3, Some(b"old"));
        assert_eq!(c.newest(b"k"), Some((12, Some(b"new".to_vec()))));
        // A commit between the ticket and the fill: the read may have
        // missed it, so the fill is dropped.
        let t = c.ticket(b"m");
        c.committed(b"m", 13, Some(b"m13"));
        c.purge(b"m", b"n");
        c.fill(b"m", t, 4, Some(b"m4"));
        assert_eq!(c.newest(b"m"), None);
        // So is one across a purge, or a clear of the shard.
        let t = c.ticket(b"p");
        c.purge(b"x", b"y");
        c.fill(b"p", t, 4, Some(b"p4"));
        assert_eq!(c.newest(b"p"), None);
        let t = c.ticket(b"p");
        c.fill(b"p", t, 4, None);
        assert_eq!(c.get(b"p", 4), Some(None), "a deletion is a version too");
    }

    #[test]
    fn fills_stay_bounded() {
        let c = VersionCache::new(64 * 200, 0);
        for i in 0..10_000u32 {
            let k = i.to_be_bytes();
            c.fill(&k, c.ticket(&k), 1, Some(&[0u8; 100]));
        }
        let total: usize = c.shards.iter().map(|s| s.lock().bytes).sum();
        assert!(total <= 64 * 200, "{total}");
        let k = b"huge";
        c.fill(k, c.ticket(k), 2, Some(&vec![0u8; 1 << 16]));
        assert_eq!(c.newest(k), None);
    }
}
