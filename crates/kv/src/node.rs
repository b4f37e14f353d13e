//! The KV node: shared state, the commit worker (group commit) and the
//! embedded client that implements [`kvapi::KvClient`].
//!
//! Commit path: a transaction hands its write buffer to the single commit
//! worker thread and awaits the reply. The worker drains every commit that
//! is waiting, gives each the next timestamp, writes all their versions (and
//! the last-timestamp meta key) in one engine batch with one WAL sync, then
//! publishes the newest timestamp so new snapshots see the whole group at
//! once, and replies. Only after the reply does the transaction release its
//! row locks, so a waiter that gets the lock always finds the new version.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use kvapi::{Error, IsolationLevel, KvClient, Result, TenantId, TxnId};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::cache::VersionCache;
use crate::engine::memory::MemEngine;
use crate::engine::rocks::RocksEngine;
use crate::engine::{Engine, WriteBatch};
use crate::lock::LockTable;
use crate::mvcc;
use crate::txn::EmbeddedTxn;

/// Bytes of recently committed versions kept in memory for point reads.
const CACHE_BYTES: usize = 256 << 20;

/// Most commits written in one group.
const MAX_GROUP: usize = 512;

/// (commit timestamp, start and end of the range of user keys).
type PendingDelete = (u64, Vec<u8>, Vec<u8>);

pub(crate) struct CommitReq {
    /// Key ranges (full keys) this commit makes unreachable (dropped or
    /// rewritten storage): their cache entries are dropped first.
    pub purge: Vec<(Vec<u8>, Vec<u8>)>,
    pub writes: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub reply: oneshot::Sender<Result<u64>>,
}

/// State shared by the node, its clients and their transactions.
pub(crate) struct Shared {
    pub engine: Arc<dyn Engine>,
    /// Newest committed versions of recently written keys.
    pub cache: Arc<VersionCache>,
    /// Newest timestamp whose commits are fully written; snapshots read here.
    pub visible: Arc<AtomicU64>,
    next_txn: AtomicU64,
    pub locks: Mutex<LockTable>,
    /// Active snapshot timestamps (multiset), for garbage collection.
    snapshots: Mutex<BTreeMap<u64, usize>>,
    /// Engine ranges to delete once no snapshot older than the ts remains.
    pending_deletes: Mutex<Vec<PendingDelete>>,
    /// None once the node is shut down.
    commits: Mutex<Option<mpsc::Sender<CommitReq>>>,
}

impl Shared {
    pub fn next_txn_id(&self) -> TxnId {
        TxnId(self.next_txn.fetch_add(1, Ordering::Relaxed))
    }

    pub fn register_snapshot(&self, ts: u64) {
        *self.snapshots.lock().entry(ts).or_insert(0) += 1;
    }

    pub fn release_snapshot(&self, ts: u64) {
        let mut s = self.snapshots.lock();
        if let Some(n) = s.get_mut(&ts) {
            *n -= 1;
            if *n == 0 {
                s.remove(&ts);
            }
        }
    }

    /// Oldest timestamp any active snapshot reads at.
    fn gc_watermark(&self) -> u64 {
        let s = self.snapshots.lock();
        s.keys().next().copied().unwrap_or_else(|| self.visible.load(Ordering::Acquire))
    }

    pub async fn commit(
        &self,
        writes: Vec<(Vec<u8>, Option<Vec<u8>>)>,
        purge: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> Result<u64> {
        let (tx, rx) = oneshot::channel();
        let sent = match self.commits.lock().as_ref() {
            Some(s) => s.send(CommitReq { writes, purge, reply: tx }).is_ok(),
            None => false,
        };
        if !sent {
            return Err(Error::Unavailable("the KV node is shut down".into()));
        }
        rx.await.map_err(|_| Error::Unavailable("commit worker stopped".into()))?
    }

    /// Deletes every stored version of the user keys in `[start, end)`
    /// once no snapshot older than `ts` remains ([`Shared::collect_garbage`]).
    pub fn schedule_delete(&self, ts: u64, start: Vec<u8>, end: Vec<u8>) {
        self.pending_deletes.lock().push((ts, start, end));
    }

    /// Deletes scheduled ranges that no snapshot can see any more.
    pub fn collect_garbage(&self) {
        let wm = self.gc_watermark();
        self.engine.set_gc_watermark(wm);
        let ready: Vec<PendingDelete> = {
            let mut p = self.pending_deletes.lock();
            if p.is_empty() {
                return;
            }
            let (ready, keep) = p.drain(..).partition(|(ts, _, _)| *ts <= wm);
            *p = keep;
            ready
        };
        if ready.is_empty() {
            return;
        }
        let batch = WriteBatch {
            puts: vec![],
            delete_ranges: ready.iter().map(|(_, s, e)| mvcc::range(s, e)).collect(),
        };
        if let Err(e) = self.engine.write(batch, false) {
            tracing::error!(error = %e, "deleting dropped storage failed; will retry");
            self.pending_deletes.lock().extend(ready);
            return;
        }
        // Readers at old snapshots may have cached versions of these keys
        // since the drop (cache.rs, FILL): they are gone from storage now.
        for (_, s, e) in &ready {
            self.cache.purge(s, e);
        }
    }
}

fn commit_worker(
    engine: Arc<dyn Engine>,
    cache: Arc<VersionCache>,
    visible: Arc<AtomicU64>,
    rx: mpsc::Receiver<CommitReq>,
    mut last: u64,
    sync: bool,
) {
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(r) => group.push(r),
                Err(_) => break,
            }
        }
        let mut batch = WriteBatch::default();
        let mut ts = last;
        let mut stamps = Vec::with_capacity(group.len());
        for req in &group {
            ts += 1;
            for (k, v) in &req.writes {
                batch.puts.push((mvcc::encode(k, ts), mvcc::encode_value(v.as_deref())));
            }
            stamps.push(ts);
        }
        batch.puts.push((mvcc::META_LAST_TS.to_vec(), ts.to_be_bytes().to_vec()));
        match engine.write(batch, sync) {
            Ok(()) => {
                last = ts;
                // The cache learns every new version before anyone can read
                // at its timestamp (see cache.rs for the invariant).
                for (req, t) in group.iter().zip(&stamps) {
                    for (s, e) in &req.purge {
                        cache.purge(s, e);
                    }
                    for (k, v) in &req.writes {
                        cache.committed(k, *t, v.as_deref());
                    }
                }
                visible.store(ts, Ordering::Release);
                for (req, t) in group.into_iter().zip(stamps) {
                    let _ = req.reply.send(Ok(t));
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "commit batch failed");
                for req in group {
                    let _ = req.reply.send(Err(e.clone()));
                }
            }
        }
    }
}

/// A KV node: an engine plus MVCC transactions over it.
pub struct KvNode {
    pub(crate) shared: Arc<Shared>,
    worker: Option<std::thread::JoinHandle<()>>,
}

/// Dropping the node stops the commit worker after the commits already
/// queued, so the engine closes cleanly.
impl Drop for KvNode {
    fn drop(&mut self) {
        self.shared.commits.lock().take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl KvNode {
    /// Opens a durable node on RocksDB in `path`.
    pub fn open(path: &Path) -> Result<KvNode> {
        let engine: Arc<dyn Engine> = Arc::new(RocksEngine::open(path)?);
        KvNode::with_engine(engine, true)
    }

    /// A node that keeps everything in memory (tests, ephemeral use).
    pub fn memory() -> KvNode {
        KvNode::with_engine(Arc::new(MemEngine::new()), false)
            .expect("an empty memory engine always opens")
    }

    /// A node on any engine; `sync` syncs the log on every commit batch.
    pub fn with_engine(engine: Arc<dyn Engine>, sync: bool) -> Result<KvNode> {
        let last = match engine.get(mvcc::META_LAST_TS)? {
            Some(b) => u64::from_be_bytes(
                b.as_slice()
                    .try_into()
                    .map_err(|_| Error::Corrupt("bad last-timestamp record".into()))?,
            ),
            None => 0,
        };
        let (tx, rx) = mpsc::channel();
        let visible = Arc::new(AtomicU64::new(last));
        let cache = Arc::new(VersionCache::new(CACHE_BYTES, last));
        let shared = Arc::new(Shared {
            engine: engine.clone(),
            cache: cache.clone(),
            visible: visible.clone(),
            next_txn: AtomicU64::new(1),
            locks: Mutex::new(LockTable::default()),
            snapshots: Mutex::new(BTreeMap::new()),
            pending_deletes: Mutex::new(Vec::new()),
            commits: Mutex::new(Some(tx)),
        });
        let worker = std::thread::Builder::new()
            .name("kv-commit".into())
            .spawn(move || commit_worker(engine, cache, visible, rx, last, sync))
            .map_err(|e| Error::Io(format!("starting commit worker: {e}")))?;
        Ok(KvNode { shared, worker: Some(worker) })
    }

    /// A client for `tenant`'s keys on this node (cheap to clone).
    pub fn client(&self, tenant: TenantId) -> EmbeddedClient {
        EmbeddedClient { shared: self.shared.clone(), tenant }
    }
}

/// The in-process client: transactions run directly against the node.
#[derive(Clone)]
pub struct EmbeddedClient {
    shared: Arc<Shared>,
    tenant: TenantId,
}

impl KvClient for EmbeddedClient {
    type Txn = EmbeddedTxn;

    fn tenant(&self) -> TenantId {
        self.tenant
    }

    async fn begin(&self, isolation: IsolationLevel) -> Result<EmbeddedTxn> {
        Ok(EmbeddedTxn::new(self.shared.clone(), self.tenant, isolation))
    }
}
