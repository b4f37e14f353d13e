//! The PostgreSQL wire protocol, version 3, server side.
//!
//! This crate owns everything between a socket and a [`Backend`]: the
//! startup handshake (SSLRequest answered 'N', CancelRequest, the
//! StartupMessage), trust and SCRAM-SHA-256 authentication, the simple and
//! extended query protocols with named statements and portals, COPY FROM
//! STDIN, cancellation, and error recovery until Sync. It never sees SQL
//! semantics, storage or tenants.
//!
//! We write our own codec instead of using the `pgwire` crate's handler API
//! because Strata needs three things that API does not give directly: the
//! implicit transaction must end at Sync (so nothing is flushed to the client
//! before the commit is durable), statements are cancelled by dropping their
//! future, and result rows are encoded straight into the send buffer without
//! per-row allocation.

// The contract with the query engine.
pub mod backend;
// Frontend message decoding.
pub mod codec;
// Per-connection state machine.
pub mod conn;
// Backend message encoding.
pub mod messages;
// The buffer sessions write rows into.
pub mod output;
// SCRAM-SHA-256.
pub mod scram;
// Listeners, accept loop, cancel registry.
pub mod server;

pub use backend::{
    AuthMethod, Backend, ExecOutcome, FieldDesc, Format, Oid, Portal, ScramVerifier, Session,
    StartupInfo, Statement, TxnStatus,
};
pub use output::Output;
pub use server::{serve, CancelRegistry, Listeners};
