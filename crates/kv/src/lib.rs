//! The KV node: ordered, tenant-prefixed keys with MVCC transactions.
//!
//! This crate implements the [`kvapi`] contract. It owns the storage engines
//! (RocksDB and in-memory), the multi-version encoding, row locks with
//! deadlock detection, group commit, and garbage collection of dropped
//! storage. It must never depend on the SQL layer or the wire protocol: it
//! sees keys and bytes, and checks that every key a transaction touches
//! belongs to that transaction's tenant.

// Storage engines: plain sorted bytes.
pub mod engine;
// Row locks, FIFO waits and deadlock detection.
pub mod lock;
// Multi-version key encoding and snapshot reads.
pub mod mvcc;
// The newest-version cache maintained by the commit worker.
pub mod cache;
// The node, the commit worker and the embedded client.
pub mod node;
// Transactions on the embedded node.
pub mod txn;
// The KV server: the node over the KV RPC, bound to tenants.
pub mod rpc;
// The tenant registry under the system tenant's keys.
pub mod tenants;

pub use node::{EmbeddedClient, KvNode};
pub use rpc::KvServer;
pub use txn::EmbeddedTxn;
