//! The KV RPC: how a SQL process reaches the shared KV server.
//!
//! This crate owns the messages and their framing ([`proto`]), the tenant
//! tokens that bind a connection to one tenant ([`auth`]), and the client
//! side: [`RpcClient`] implements [`kvapi::KvClient`], so the SQL layer runs
//! unchanged over it, and [`AdminClient`] manages tenants. The server side
//! lives in the `kv` crate (`kv::rpc`), next to the node it serves. This
//! crate must never depend on the KV node, RocksDB or the SQL layer: a SQL
//! process links it and `kvapi`, nothing of storage.

/// Tenant tokens derived from the KV server's secret.
pub mod auth;
/// The client: `RpcClient`, `RpcTxn` and `AdminClient`.
pub mod client;
/// One multiplexed connection, and the addresses it reaches.
pub mod conn;
/// Message types and the framing codec.
pub mod proto;

pub use auth::Secret;
pub use client::{AdminClient, RpcClient, RpcTxn};
pub use conn::{KvAddr, Unbound};
pub use proto::TenantInfo;
