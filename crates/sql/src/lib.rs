//! The SQL engine: parse -> bind -> plan -> execute, over the KV contract.
//!
//! This crate owns everything between a query string and KV calls: parsing
//! (sqlparser's PostgreSQL dialect plus a few utility statements), name and
//! type resolution, planning with access-path selection, execution, the
//! catalog, and PostgreSQL's session and transaction semantics. It reaches
//! storage only through [`kvapi::KvClient`] and [`kvapi::Txn`]; it must never
//! depend on the `kv` crate (except in tests), RocksDB, the wire protocol or
//! sockets, so the same engine runs embedded or against a remote KV node.
//!
//! Life of a query: [`session::Session::prepare`] parses ([`parse`]) and plans
//! ([`planner`], [`bind`], [`select`]) it; [`session::Session::bind`] attaches
//! parameters (re-planning if the catalog changed); [`session::Session::execute`]
//! opens or continues a transaction, refreshes the snapshot (READ COMMITTED),
//! and runs the plan ([`exec`], [`dml`], [`ddl`]).

// Owners, access control lists and privilege checks.
pub mod acl;
// Advisory locks (pg_advisory_lock and friends).
pub mod advisory;
// The tenant's live sessions (pg_stat_activity, pg_cancel_backend).
pub mod backends;
// Name and type resolution.
pub mod bind;
// PostgreSQL 15's pg_proc and pg_type data for the built-ins.
pub mod builtins;
// Table definitions stored in KV, and the key layout.
pub mod catalog;
// COPY data formats.
pub mod copy;
// Cursors: DECLARE's and PL/pgSQL's portals, FETCH and MOVE.
pub mod cursor;
// CREATE, DROP, TRUNCATE, ALTER.
pub mod ddl;
// Deferred constraint checks and SET CONSTRAINTS.
pub mod deferred;
// Expression text kept in the catalog, as PostgreSQL deparses it.
pub mod deparse;
// INSERT, UPDATE, DELETE.
pub mod dml;
// CREATE EXTENSION: the extensions Strata ships and their functions.
pub mod extensions;
// Error type and SQLSTATE helpers.
pub mod error;
// The executor.
pub mod exec;
// Bound expressions and evaluation.
pub mod expr;
// FOREIGN KEY checks and referential actions.
pub mod fk;
// Built-in scalar functions.
pub mod func;
// Cancel and statement_timeout checks inside the executor's row loops.
pub mod interrupts;
// LISTEN, UNLISTEN and NOTIFY.
pub mod notify;
// Query string splitting and parsing.
pub mod parse;
// Declarative partitioning: bounds, constraints, routing.
pub mod partition;
// Plan node types.
pub mod plan;
/// PL/pgSQL: DO blocks, functions and trigger functions.
pub mod plpgsql;
// Statement planning entry point.
pub mod planner;
// Query planning (SELECT).
pub mod select;
// Sessions and transactions.
pub mod session;
// Row locks of SELECT ... FOR UPDATE / SHARE.
pub mod rowlock;
// Sequences, SERIAL and IDENTITY.
pub mod sequence;
// Session settings.
pub mod settings;
// pg_relation_size and the other size functions, measured per statement.
pub mod sizes;
// System catalog views.
pub mod system;
/// Firing triggers for INSERT, UPDATE and DELETE.
pub mod triggers;
// Waits function calls ask for (pg_sleep).
pub mod waits;
// Window functions: binding and evaluation.
pub mod window;

pub use session::{Carried, Database, Outcome, Portal, Prepared, Session, TxnState};

/// Builds the built-in catalog data every tenant shares (pg_proc, pg_type,
/// the keywords, operators and casts), which is otherwise parsed on first
/// use: a pooled SQL process does it before it knows its tenant, so the
/// tenant's first statement does not pay for it.
pub fn warm_up() {
    let _ = builtins::procs();
    let _ = builtins::keyword_category("select");
    let _ = builtins::type_io(0);
    let _ = builtins::pgcat::pgcat();
}
