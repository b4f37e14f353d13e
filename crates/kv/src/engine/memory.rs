//! [`MemEngine`]: a B-tree behind a read-write lock. Not durable.

use std::collections::BTreeMap;
use std::ops::Bound;

use kvapi::Result;
use parking_lot::RwLock;

use super::{Engine, WriteBatch};

/// An in-memory engine for tests and ephemeral nodes.
#[derive(Debug, Default)]
pub struct MemEngine {
    data: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
}

impl MemEngine {
    /// An empty engine.
    pub fn new() -> MemEngine {
        MemEngine::default()
    }
}

impl MemEngine {
    /// Calls `f` on the pairs of `[start, end)` in key order (or
    /// descending) until it returns false.
    fn visit(&self, start: &[u8], end: &[u8], rev: bool, f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        if start >= end {
            return;
        }
        let data = self.data.read();
        let range = data.range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)));
        let pairs: Box<dyn Iterator<Item = (&Vec<u8>, &Vec<u8>)>> =
            if rev { Box::new(range.rev()) } else { Box::new(range) };
        for (k, v) in pairs {
            if !f(k, v) {
                break;
            }
        }
    }
}

impl Engine for MemEngine {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.data.read().get(key).cloned())
    }

    fn scan(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.visit(start, end, false, f);
        Ok(())
    }

    fn scan_rev(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.visit(start, end, true, f);
        Ok(())
    }

    fn write(&self, batch: WriteBatch, _sync: bool) -> Result<()> {
        let mut data = self.data.write();
        for (s, e) in batch.delete_ranges {
            let doomed: Vec<Vec<u8>> = data
                .range::<[u8], _>((Bound::Included(&s[..]), Bound::Excluded(&e[..])))
                .map(|(k, _)| k.clone())
                .collect();
            for k in doomed {
                data.remove(&k);
            }
        }
        for (k, v) in batch.puts {
            data.insert(k, v);
        }
        Ok(())
    }
}
