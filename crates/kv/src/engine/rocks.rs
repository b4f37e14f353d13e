//! [`RocksEngine`]: the durable engine on RocksDB. The only file in Strata
//! that may use the `rocksdb` crate.
//!
//! Options are chosen for OLTP on a small machine: a shared LRU block cache,
//! bloom filters for point reads, two background jobs, and the WAL synced on
//! every commit batch (the KV node's group commit makes that one sync per
//! group of transactions).

use std::path::Path;

use kvapi::{Error, Result};
use rocksdb::{BlockBasedOptions, Cache, Options, ReadOptions, WriteOptions, DB};

use super::{Engine, WriteBatch};

/// A RocksDB database.
pub struct RocksEngine {
    db: DB,
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
        let mut table = BlockBasedOptions::default();
        let cache = Cache::new_lru_cache(256 << 20);
        table.set_block_cache(&cache);
        table.set_bloom_filter(10.0, false);
        table.set_cache_index_and_filter_blocks(true);
        opts.set_block_based_table_factory(&table);
        let db = DB::open(&opts, path).map_err(io)?;
        Ok(RocksEngine { db })
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
        if start >= end {
            return Ok(());
        }
        let mut ro = ReadOptions::default();
        ro.set_iterate_upper_bound(end.to_vec());
        let mut it = self.db.raw_iterator_opt(ro);
        it.seek(start);
        while it.valid() {
            let (Some(k), Some(v)) = (it.key(), it.value()) else { break };
            if !f(k, v) {
                return Ok(());
            }
            it.next();
        }
        it.status().map_err(io)
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
}
