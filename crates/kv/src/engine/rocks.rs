//! [`RocksEngine`]: the durable engine on RocksDB. The only file in Strata
//! that may use the `rocksdb` crate.
//!
//! Options are chosen for OLTP on a small machine: a shared HyperClock block cache
//! holding partitioned indexes and bloom filters too, bloom filters for point
//! reads, two background jobs, and the WAL synced on every commit batch (the KV node's group commit makes that one sync per
//! group of transactions).

use std::ffi::CStr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kvapi::{Error, Result};
use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use rocksdb::{BlockBasedOptions, Cache, Options, ReadOptions, SliceTransform, WriteOptions, DB};

use crate::mvcc;

use super::{Engine, WriteBatch};

/// How an iterator may use the prefix bloom filters.
enum Seek {
    /// Ignore them: the scan crosses user keys.
    TotalOrder,
    /// Use them: the scan stays within one user key's versions.
    SamePrefix,
    /// Ignore them, and visit the range from its last key down.
    Backward,
}

/// A RocksDB database.
pub struct RocksEngine {
    db: DB,
    watermark: Arc<AtomicU64>,
}

const GC_NAME: &CStr = c"strata-mvcc-gc";

/// Creates one [`GcFilter`] per compaction, with the watermark of that moment.
struct GcFactory {
    watermark: Arc<AtomicU64>,
}

impl CompactionFilterFactory for GcFactory {
    type Filter = GcFilter;

    fn create(&mut self, _context: CompactionFilterContext) -> GcFilter {
        GcFilter {
            watermark: self.watermark.load(Ordering::Acquire),
            last: Vec::new(),
            shadowed: false,
        }
    }

    fn name(&self) -> &CStr {
        GC_NAME
    }
}

/// Drops versions shadowed by a newer version at or below the watermark:
/// every live snapshot reads at or above the watermark, so it sees that newer
/// version (or something newer still) and never the old one. Versions of a
/// key arrive newest first within a compaction; versions outside this
/// compaction's inputs are simply not seen, which only keeps more.
struct GcFilter {
    watermark: u64,
    last: Vec<u8>,
    shadowed: bool,
}

impl CompactionFilter for GcFilter {
    fn filter(&mut self, _level: u32, key: &[u8], _value: &[u8]) -> Decision {
        let Ok((user, ts)) = mvcc::decode(key) else { return Decision::Keep };
        if user != self.last {
            self.last = user;
            self.shadowed = false;
        }
        if self.shadowed {
            return Decision::Remove;
        }
        if ts <= self.watermark {
            self.shadowed = true;
        }
        Decision::Keep
    }

    fn name(&self) -> &CStr {
        GC_NAME
    }
}

fn io(e: rocksdb::Error) -> Error {
    Error::Io(e.to_string())
}

impl RocksEngine {
    /// Opens (or creates) the database in `path`.
    pub fn open(path: &Path) -> Result<RocksEngine> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_max_background_jobs(2);
        opts.set_compression_type(rocksdb::DBCompressionType::Lz4);
        opts.set_write_buffer_size(64 << 20);
        // RocksDB keeps each old info LOG; every start makes one.
        opts.set_keep_log_file_num(4);
        let mut table = BlockBasedOptions::default();
        // HyperClockCache: lookups take no mutex (the LRU cache's shard
        // mutexes were the hottest RocksDB symbols of cold point reads).
        // 0 lets it size its table as it fills.
        let cache = Cache::new_hyper_clock_cache(256 << 20, 0);
        table.set_block_cache(&cache);
        // Bloom filters on the user-key prefix of versioned keys (see
        // mvcc::user_prefix), so point reads skip files without the key.
        table.set_bloom_filter(10.0, false);
        table.set_whole_key_filtering(false);
        opts.set_prefix_extractor(SliceTransform::create(
            "strata-user-key",
            mvcc::user_prefix,
            Some(mvcc::has_user_prefix),
        ));
        opts.set_memtable_prefix_bloom_ratio(0.1);
        // Index and filter blocks live in the block cache, cut into 4 kB
        // partitions under a small pinned top level. Whole, a 64 MB table's
        // index and bloom filter are megabytes each, more than one shard of
        // the cache holds, so every point read read them from the file again
        // (pgbench -S at scale 100 after a restart: 1.2k tps, its CPU in
        // LZ4 and checksums of those blocks).
        table.set_cache_index_and_filter_blocks(true);
        table.set_index_type(rocksdb::BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_partition_filters(true);
        table.set_metadata_block_size(4096);
        table.set_pin_top_level_index_and_filter(true);
        table.set_pin_l0_filter_and_index_blocks_in_cache(true);
        opts.set_block_based_table_factory(&table);
        let watermark = Arc::new(AtomicU64::new(0));
        opts.set_compaction_filter_factory(GcFactory { watermark: watermark.clone() });
        let db = DB::open(&opts, path).map_err(io)?;
        Ok(RocksEngine { db, watermark })
    }

    /// Compacts everything now (tests and maintenance).
    pub fn compact_all(&self) {
        self.db.compact_range::<&[u8], &[u8]>(None, None);
    }
}

impl Engine for RocksEngine {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.db.get(key).map_err(io)
    }

    fn scan(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        // Range scans cross user keys: never let the prefix filter hide keys.
        self.iterate(Seek::TotalOrder, start, end, f)
    }

    fn scan_rev(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.iterate(Seek::Backward, start, end, f)
    }

    fn scan_versions(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.iterate(Seek::SamePrefix, start, end, f)
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        let mut wb = rocksdb::WriteBatch::default();
        for (s, e) in &batch.delete_ranges {
            wb.delete_range(s, e);
        }
        for (k, v) in &batch.puts {
            wb.put(k, v);
        }
        let mut wo = WriteOptions::default();
        wo.set_sync(sync);
        self.db.write_opt(wb, &wo).map_err(io)
    }

    fn set_gc_watermark(&self, ts: u64) {
        self.watermark.fetch_max(ts, Ordering::AcqRel);
    }
}

impl RocksEngine {
    fn iterate(
        &self,
        seek: Seek,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        let mut ro = ReadOptions::default();
        ro.set_iterate_upper_bound(end.to_vec());
        match seek {
            Seek::TotalOrder => ro.set_total_order_seek(true),
            Seek::SamePrefix => ro.set_prefix_same_as_start(true),
            Seek::Backward => {
                ro.set_total_order_seek(true);
                ro.set_iterate_lower_bound(start.to_vec());
            }
        }
        let backward = matches!(seek, Seek::Backward);
        let mut it = self.db.raw_iterator_opt(ro);
        match backward {
            false => it.seek(start),
            true => it.seek_to_last(),
        }
        while it.valid() {
            let (Some(k), Some(v)) = (it.key(), it.value()) else { break };
            if !f(k, v) {
                return Ok(());
            }
            match backward {
                false => it.next(),
                true => it.prev(),
            }
        }
        it.status().map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_drops_only_shadowed_versions() {
        let dir = tempfile::tempdir().expect("dir");
        let e = RocksEngine::open(dir.path()).expect("open");
        let mut b = WriteBatch::default();
        for ts in 1..=5 {
            b.puts.push((mvcc::encode(b"k", ts), mvcc::encode_value(Some(&[ts as u8]))));
        }
        e.write(b, false).expect("write");
        e.set_gc_watermark(3);
        e.compact_all();
        let mut versions = Vec::new();
        let (s, end) = mvcc::range(b"k", b"l");
        e.scan(&s, &end, &mut |k, _| {
            versions.push(mvcc::decode(k).expect("key").1);
            true
        })
        .expect("scan");
        // 5 and 4 are above the watermark; 3 is the newest at or below it;
        // 2 and 1 are shadowed by 3 for every possible reader.
        assert_eq!(versions, vec![5, 4, 3]);
        assert_eq!(mvcc::get_at(&e, b"k", 3).expect("get"), Some((3, Some(vec![3]))));
    }
}
