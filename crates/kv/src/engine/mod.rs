//! Storage engines: plain bytes in, sorted bytes out.
//!
//! An [`Engine`] knows nothing about versions, transactions or tenants; the
//! MVCC layer above it encodes all of that into keys. Two implementations:
//! [`rocks::RocksEngine`] (durable, the only file that may use RocksDB) and
//! [`memory::MemEngine`] (a B-tree, for tests and ephemeral nodes).

use kvapi::Result;

// The in-memory engine.
pub mod memory;
// The RocksDB engine.
pub mod rocks;

/// An atomic group of writes.
#[derive(Debug, Default)]
pub struct WriteBatch {
    /// Keys to set.
    pub puts: Vec<(Vec<u8>, Vec<u8>)>,
    /// Half-open ranges to remove.
    pub delete_ranges: Vec<(Vec<u8>, Vec<u8>)>,
}

impl WriteBatch {
    /// True if the batch does nothing.
    pub fn is_empty(&self) -> bool {
        self.puts.is_empty() && self.delete_ranges.is_empty()
    }
}

/// A sorted key-value store.
pub trait Engine: Send + Sync + 'static {
    /// Reads one key.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Calls `f` on every pair with `start <= key < end`, in key order, until
    /// `f` returns false.
    fn scan(&self, start: &[u8], end: &[u8], f: &mut dyn FnMut(&[u8], &[u8]) -> bool)
        -> Result<()>;

    /// Like [`Engine::scan`], in descending key order: calls `f` on every
    /// pair with `start <= key < end`, largest key first, until it returns
    /// false.
    fn scan_rev(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()>;

    /// Like [`Engine::scan`], for a range that lies inside one MVCC key's
    /// versions (`start` and `end` share the user-key prefix up to its
    /// terminator): engines may use prefix bloom filters to skip files.
    fn scan_versions(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.scan(start, end, f)
    }

    /// The bytes of the keys and values with `start <= key < end`. This
    /// default reads them all; an engine may answer from its metadata.
    fn size(&self, start: &[u8], end: &[u8]) -> Result<u64> {
        let mut total = 0u64;
        self.scan(start, end, &mut |k, v| {
            total += (k.len() + v.len()) as u64;
            true
        })?;
        Ok(total)
    }

    /// Applies a batch atomically; with `sync` the write-ahead log is synced
    /// before returning.
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()>;

    /// Tells the engine the oldest timestamp any reader may still use, so
    /// background compaction can drop MVCC versions nobody can see. Engines
    /// without background compaction ignore it.
    fn set_gc_watermark(&self, _ts: u64) {}
}
