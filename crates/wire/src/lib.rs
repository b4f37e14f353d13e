//! The PostgreSQL wire protocol, version 3, server side.
//!
//! This crate owns everything between a socket and a [`Backend`]: the
//! startup handshake (SSLRequest and GSSENCRequest answered 'N',
//! CancelRequest, the StartupMessage), trust and SCRAM-SHA-256
//! authentication, the simple and extended query protocols with named
//! statements and portals, COPY FROM STDIN, cancellation, and error recovery
//! until Sync. It never sees SQL semantics, storage or tenants: those live
//! behind the [`Backend`] and [`Session`] traits.
//!
//! We write our own codec instead of using the `pgwire` crate's handler API
//! because Strata needs three things that API does not give directly:
//! control of the implicit transaction at Sync (nothing is flushed to the
//! client before the session has ended it, so no client hears of a commit
//! before it is durable), cancellation by dropping the statement's future,
//! and result rows encoded straight into the send buffer ([`Output`]) with no
//! per-row allocation.
//!
//! Life of a connection: [`server`] accepts it and spawns [`conn::run`];
//! [`startup`] answers the handshake and authenticates (with [`scram`]);
//! [`conn`] then loops: [`transport`] cuts a frame from the read buffer,
//! [`codec`] decodes it, the session does the work, [`messages`] encodes the
//! answers, and the buffer is flushed at ReadyForQuery. [`cancel`] maps
//! BackendKeyData to a running statement's cancel signal.

/// The contract with the query engine: `Backend`, `Session` and friends.
pub mod backend;
/// Cancel keys and the registry CancelRequests are looked up in.
pub mod cancel;
/// Frontend (client to server) message framing and decoding; pure, fuzzable.
pub mod codec;
/// The per-connection message loop after startup.
pub mod conn;
/// Handing a client socket from the proxy to a SQL process (SCM_RIGHTS).
pub mod handoff;
/// Backend (server to client) message encoding.
pub mod messages;
/// Live session migration between processes of one tenant.
pub mod migrate;
/// The buffer sessions write DataRows and COPY data into.
pub mod output;
/// The PROXY v1 header the Strata proxy sends ahead of a client's bytes.
pub mod proxy_header;
/// SCRAM-SHA-256 server side and PostgreSQL's verifier format.
pub mod scram;
/// Listeners, the accept loop and shutdown.
pub mod server;
/// The startup phase: SSL/GSS refusal, CancelRequest, StartupMessage, auth.
pub mod startup;
/// TLS on a server's own TCP listener.
pub mod tls;
/// A socket with its reusable read buffer.
pub mod transport;

pub use backend::{
    AuthMethod, Backend, Deallocate, ExecOutcome, FieldDesc, Format, Notification, Oid, Portal,
    PortalFetch, ScramVerifier, Session, StartupInfo, Statement, Timeouts, TxnStatus,
};
pub use cancel::{BackendKey, CancelRegistry, ConnControl};
pub use output::Output;
pub use scram::scram_verifier;
pub use server::{serve, serve_stream, serve_until, Listeners};
