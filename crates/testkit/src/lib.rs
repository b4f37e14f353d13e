//! Test helpers shared by the end-to-end suites (dev-only; never a normal
//! dependency of a shipped crate).
//!
//! [`TestServer`] starts a database server owned by one test: the real
//! `strata` binary by default, or a real PostgreSQL 15 when
//! `STRATA_TEST_TARGET=postgres` ([`Target`]). PostgreSQL is the oracle: every
//! end-to-end expectation must hold against it too, so the suites can be
//! checked before Strata implements a feature, and a difference is Strata's
//! bug. Both targets listen on 127.0.0.1 with a free port, a temporary data
//! directory and a temporary unix-socket directory, can be `kill -9`ed and
//! restarted on the same data, and are killed when dropped.
//!
//! Clients: [`TestServer::psql`], [`TestServer::psql_script`] and
//! [`TestServer::pgbench`] run the real client programs; [`TestServer::connect`]
//! opens a `tokio-postgres` connection; [`RawClient`] speaks raw protocol
//! bytes for malformed-input and cancel tests. Every wait is bounded in time.
//!
//! For Strata's multi-process cluster (supervisor, KV server, proxy, one SQL
//! process per tenant) the `split` helpers reach a named tenant
//! ([`TestServer::query_tenant`], [`connect_tenant`]), run `strata tenant`
//! ([`TestServer::tenants`]), and kill and wait for one child process
//! ([`TestServer::kv_pid`], [`kill9_pid`], [`TestServer::wait_for_query`]).

/// The scenario of the tests that DDL shows at once.
mod ddl;
/// Raw PostgreSQL v3 protocol client for exact control of the bytes.
mod raw;
/// The server under test: process lifecycle for Strata and PostgreSQL.
mod server;
/// The multi-process cluster: tenant connections, the `strata tenant` CLI,
/// child pids, kill -9 of one child and bounded waits for its recovery.
mod split;
/// pgbench helpers: TPC-B invariants and output parsing.
mod tpcb;

pub use ddl::{each_statement_sees_ddl, DdlSteps};
pub use raw::RawClient;
pub use server::{
    connect, free_port, run_with_timeout, strata_bin, Target, TestServer, START_TIMEOUT,
};
pub use split::{
    as_proxy, children_of, cluster_option, connect_config, connect_tenant, error_text,
    fork_servers, kill9_pid, parse_tenant_list, pid_alive, plain_config, process_args, query_text,
    read_pid_file, socket_inodes, sql_processes_of, tcp_clients_of, tenant_config, test_runtime,
    unix_peers_of, wait_pid_gone, Part, SqlProcess, TenantInfo, RECOVERY_TIMEOUT,
};
pub use tpcb::{check_tpcb_invariants, pgbench_number};

/// How long one client program (psql, pgbench) may run before a test gives
/// up on it and kills it.
pub const CLIENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Long enough for a statement sent with [`TestServer::send`] to reach its
/// lock wait, usually; tests that sleep for it assert outcomes that hold
/// either way.
pub const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);
