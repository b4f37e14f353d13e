//! A write-through cache of the newest committed version of recently
//! written keys.
//!
//! INVARIANT: if a key is in the cache, its entry is the key's newest
//! committed version. Only the commit worker inserts, for every key it
//! commits, before it publishes the commit's timestamp; readers never insert.
//! So a reader at snapshot S that finds an entry with timestamp <= S has found
//! exactly what a storage read at S would return, and one that finds a newer
//! entry (or none) reads storage. Evicting an entry is always safe; the cache
//! is bounded by dropping a whole shard when it grows past its share.
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
}

impl Shard {
    /// Drops everything, raising the floor past what was dropped.
    fn clear(&mut self) {
        let newest = self.map.values().map(|(ts, _)| *ts).max().unwrap_or(0);
        self.floor = self.floor.max(newest);
        self.map.clear();
        self.bytes = 0;
    }
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
                .map(|_| Mutex::new(Shard { map: HashMap::new(), bytes: 0, floor: last_ts }))
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
        }
    }

    /// Records a committed version (commit worker only, before publishing).
    pub fn committed(&self, key: &[u8], ts: u64, value: Option<&[u8]>) {
        let size = key.len() + value.map(|v| v.len()).unwrap_or(0) + 48;
        if self.shard_cap == 0 || size > self.shard_cap {
            // Too big to cache: make sure no older entry stays behind.
            let mut shard = self.shard(key).lock();
            shard.map.remove(key);
            shard.floor = shard.floor.max(ts);
            return;
        }
        let mut shard = self.shard(key).lock();
        if shard.bytes + size > self.shard_cap {
            shard.clear();
        }
        match shard.map.get_mut(key) {
            Some(e) => {
                let old = e.1.as_ref().map(|v| v.len()).unwrap_or(0);
                *e = (ts, value.map(|v| v.to_vec()));
                shard.bytes = (shard.bytes + size).saturating_sub(key.len() + old + 48);
            }
            None => {
                shard.map.insert(key.to_vec(), (ts, value.map(|v| v.to_vec())));
                shard.bytes += size;
            }
        }
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
}
