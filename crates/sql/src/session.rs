//! A SQL session: one client connection's transaction state, settings and
//! prepared statements.
//!
//! Transaction states follow PostgreSQL:
//!
//! ```text
//!   Idle --stmt--> Implicit --sync--> Idle        (autocommit, ends at Sync)
//!   Idle --BEGIN--> Block --COMMIT/ROLLBACK--> Idle
//!   Block --error--> Failed --ROLLBACK/COMMIT--> Idle
//!   Implicit --error--> Idle (implicit transaction rolled back)
//! ```
//!
//! In READ COMMITTED every statement takes a fresh snapshot; in REPEATABLE
//! READ and SERIALIZABLE the snapshot of the first statement is kept. Each
//! statement first reads the catalog version at its snapshot and re-plans if
//! the catalog changed since its plan was made.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use kvapi::{IsolationLevel, KvClient, Savepoint, TenantId, Timestamp, Txn};
use parking_lot::{Mutex, RwLock};
use sqlparser::ast;
use sqltypes::{DataType, Value};

use crate::catalog::{self, keys, Catalog, TableDef};
use crate::copy::CopyParser;
use crate::ddl::{self, DdlResult};
use crate::error::{from_kv, ErrorReport, Result};
use crate::exec::{self, ExecCtx, Row};
use crate::expr::EvalContext;
use crate::parse::{self, CopyStmt, Parsed, Stmt};
use crate::plan::Column;
use crate::planner::{self, Bound};
use crate::sequence;
use crate::settings::Settings;
use crate::{bail, dml, err};

/// What a session takes along when it moves to another SQL process.
mod carry;
/// BEGIN, COMMIT, ROLLBACK, SET, RESET, SHOW.
mod control;
/// COPY FROM STDIN / TO STDOUT.
mod copy_in;
/// DECLARE/FETCH/CLOSE cursors and PREPARE/EXECUTE/DEALLOCATE.
mod cursors;
/// CREATE and REFRESH MATERIALIZED VIEW.
mod matviews;
/// The DDL Strata parses itself (ALTER SEQUENCE, OWNER TO).
mod own_ddl;
/// DO blocks.
mod plpgsql;
/// SAVEPOINT, RELEASE, ROLLBACK TO.
mod savepoints;

pub use carry::Carried;
use control::parse_isolation;
use copy_in::CopyIn;
use savepoints::SavepointMark;

/// Server-wide state shared by all sessions of one tenant.
pub struct Database<K: KvClient> {
    /// The KV client.
    pub client: K,
    /// The tenant this SQL process serves.
    pub tenant: TenantId,
    catalog: RwLock<Arc<Catalog>>,
    /// Turns a cleartext password into its stored verifier.
    hasher: ddl::PasswordHasher,
    /// Sequence values this process has reserved (see sequence.rs).
    reserved: Arc<sequence::Reserved>,
    /// The sessions' advisory locks.
    advisory: Arc<crate::advisory::Table>,
    /// The live sessions (pg_stat_activity).
    backends: Arc<crate::backends::Registry>,
    /// LISTEN/NOTIFY channels.
    notify: Arc<crate::notify::Hub>,
    /// When this SQL process started serving the tenant
    /// (pg_postmaster_start_time), microseconds since 2000.
    started: i64,
}

impl<K: KvClient> Database<K> {
    /// Creates the shared state for the tenant `client` is bound to.
    /// `hasher` turns passwords given to CREATE/ALTER ROLE into stored
    /// verifiers.
    pub fn new(client: K, hasher: ddl::PasswordHasher) -> Arc<Database<K>> {
        Arc::new(Database {
            tenant: client.tenant(),
            client,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            hasher,
            reserved: Arc::default(),
            advisory: Arc::default(),
            backends: Arc::default(),
            notify: Arc::default(),
            started: sqltypes::datetime::now_micros(),
        })
    }

    /// The newest catalog this process knows of (roles for authentication).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    /// Reloads the catalog from storage (at startup, before serving).
    pub async fn refresh(&self) -> Result<()> {
        let txn = self.client.begin(IsolationLevel::ReadCommitted).await.map_err(from_kv)?;
        let cat = Arc::new(ddl::load_catalog(&txn, self.tenant).await?);
        txn.abort();
        self.publish(&cat);
        Ok(())
    }

    fn publish(&self, cat: &Arc<Catalog>) {
        let mut cur = self.catalog.write();
        if cat.version > cur.version {
            *cur = cat.clone();
        }
    }
}

/// A statement parsed (and, if single, planned) by [`Session::prepare`].
#[derive(Debug)]
pub struct Prepared {
    /// The parsed statement.
    pub parsed: Parsed,
    /// Types the client declared for the parameters.
    declared: Vec<DataType>,
    /// Parameter types after inference.
    pub param_types: Vec<DataType>,
    /// Result columns as planned at prepare time.
    pub columns: Option<Vec<Column>>,
    plan: Mutex<Option<(PlanKey, Arc<Bound>)>>,
}

impl Prepared {
    /// True for COMMIT, ROLLBACK and ROLLBACK TO SAVEPOINT: the statements
    /// that still run in a failed transaction block.
    fn ends_block(&self) -> bool {
        matches!(&self.parsed.stmt, Stmt::Sql(s) if matches!(s.as_ref(), ast::Statement::Commit { .. } | ast::Statement::Rollback { .. }))
    }
}

/// A statement bound to parameter values, ready to execute.
#[derive(Debug)]
pub struct Portal {
    /// The statement.
    pub prepared: Arc<Prepared>,
    /// Plan used.
    pub bound: Arc<Bound>,
    /// Parameter values.
    pub params: Vec<Value>,
}

impl Portal {
    /// The rows' columns, if the statement returns rows.
    pub fn columns(&self) -> Option<Vec<Column>> {
        statement_columns(&self.prepared.parsed.stmt, &self.bound)
    }
}

/// The result columns of a planned statement: the plan's, or SHOW's one
/// text column named after the setting.
fn statement_columns(stmt: &Stmt, bound: &Bound) -> Option<Vec<Column>> {
    match stmt {
        Stmt::Sql(s) if matches!(s.as_ref(), ast::Statement::ShowVariable { .. }) => {
            Some(match show_name(s).as_str() {
                "all" => ["name", "setting", "description"]
                    .map(|n| Column::computed(n.to_string(), DataType::Text))
                    .to_vec(),
                name => vec![Column::computed(name.to_string(), DataType::Text)],
            })
        }
        _ => bound.columns(),
    }
}

fn show_name(s: &ast::Statement) -> String {
    match s {
        ast::Statement::ShowVariable { variable } => {
            let joined = crate::settings::shown_name(variable);
            match joined.as_str() {
                "all" => joined,
                _ => Settings::canonical(
                    &joined.replace("transaction isolation level", "transaction_isolation"),
                ),
            }
        }
        _ => "?column?".into(),
    }
}

/// What executing a statement produced.
#[derive(Debug)]
pub enum Outcome {
    /// Rows and the command tag.
    Rows(Vec<Row>, String),
    /// A command tag only.
    Command(String),
    /// COPY FROM STDIN is waiting for data with this many columns.
    CopyIn {
        /// Number of columns.
        columns: usize,
        /// Binary format (else text or CSV).
        binary: bool,
    },
    /// COPY TO STDOUT data lines, with the column count and row count.
    CopyOut {
        /// Number of columns.
        columns: usize,
        /// Binary format (else text or CSV).
        binary: bool,
        /// The CopyData payloads, in order.
        data: Vec<Vec<u8>>,
        /// Rows copied.
        count: u64,
    },
    /// The statement was empty.
    Empty,
}

/// What a cached plan is valid for: the catalog version, the temporary
/// tables' epoch and the user whose privileges it was checked with.
type PlanKey = (u64, u64, Arc<str>);

/// Where the session is in PostgreSQL's transaction state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// No transaction.
    Idle,
    /// An implicit (autocommit) transaction, ended at the next sync.
    Implicit,
    /// An explicit transaction block.
    Block,
    /// A failed transaction block, waiting for ROLLBACK.
    Failed,
}

/// One connection's session.
pub struct Session<K: KvClient> {
    db: Arc<Database<K>>,
    settings: Settings,
    /// The catalog statements plan against: `base` plus this session's
    /// temporary tables (which shadow permanent tables of the same name).
    catalog: Arc<Catalog>,
    /// The shared catalog as stored (what other sessions see).
    base: Arc<Catalog>,
    /// This session's temporary tables.
    temp: BTreeMap<String, Arc<TableDef>>,
    /// Changes with every CREATE/DROP of a temporary table and every change
    /// of the search path (cached plans are keyed by it as well as by the
    /// catalog version).
    temp_epoch: u64,
    /// The (search_path setting, user) `catalog`'s path was resolved from.
    path_source: (String, String),
    /// Open cursors (DECLARE's and PL/pgSQL's).
    cursors: Arc<crate::cursor::Portals>,
    /// SQL-level prepared statements (PREPARE) by name.
    sql_prepared: HashMap<String, Arc<Prepared>>,
    /// The temporary tables as they were before this transaction first
    /// changed them, restored if it rolls back.
    temp_at_txn_start: Option<BTreeMap<String, Arc<TableDef>>>,
    txn: Option<K::Txn>,
    state: TxnState,
    /// Isolation level for the current/next transaction block.
    block_isolation: Option<IsolationLevel>,
    /// READ ONLY / READ WRITE of the transaction block (None: the
    /// default_transaction_read_only setting).
    block_read_only: Option<bool>,
    /// Storage ids created in this transaction (bulk loads skip row locks).
    fresh: HashSet<u64>,
    /// This transaction changed the catalog.
    ddl: bool,
    /// Open savepoints of the transaction block, oldest first.
    savepoints: Vec<SavepointMark>,
    /// currval/lastval and pending sequence requests.
    seqs: Arc<Mutex<sequence::SessionSeqs>>,
    txn_time: i64,
    /// The open transaction's txid_current(): its start snapshot (or,
    /// before a remote transaction learns it, the newest timestamp the
    /// session has seen) and KV transaction id, fixed when it begins (0
    /// outside one).
    txid: i64,
    /// The newest snapshot or commit timestamp the session has seen.
    seen_ts: u64,
    /// The catalog version must be read, not assumed, at the next
    /// statement: an assumption failed.
    catalog_suspect: bool,
    notices: Vec<ErrorReport>,
    copy: Option<CopyIn>,
    in_statement: bool,
    user: Arc<str>,
    /// (snapshot, catalog version) at which the catalog was last validated.
    catalog_checked_at: Option<(u64, u64)>,
    /// Bumped whenever a setting may have changed.
    settings_generation: u64,
    settings_cache: Mutex<(u64, Arc<std::collections::BTreeMap<String, String>>)>,
    /// What stops the running statement in its row loops (a cancel,
    /// statement_timeout); set when each statement starts.
    interrupts: crate::interrupts::Interrupts,
    /// Where set_config() queues setting changes during a statement (one
    /// queue for the session's life, shared with each statement's context):
    /// name, value, and whether only for the transaction (is_local).
    set_config: Arc<Mutex<Vec<(String, String, bool)>>>,
    /// The settings as they were before this transaction block first
    /// changed one: ROLLBACK puts them back.
    settings_before_txn: Option<Settings>,
    /// Settings SET LOCAL changed in this transaction block, with the value
    /// each goes back to at COMMIT.
    local_settings: Vec<(String, String)>,
    /// The settings a plain SET changed while a function with SET clauses
    /// ran (the clauses' values are then not put back at its exit), kept
    /// while such functions run (`Session::enter_function`).
    plain_sets: Vec<String>,
    /// How many functions with SET clauses or SECURITY DEFINER are running.
    apart_depth: usize,
    /// The advisory locks this session holds.
    advisory: Arc<crate::advisory::SessionLocks>,
    /// random()'s sequence (setseed).
    random: Arc<crate::func::SessionRandom>,
    /// The pid the client was given in BackendKeyData.
    pid: i32,
    /// The row locks the running statement has decided (FOR UPDATE).
    row_locks: Arc<crate::rowlock::StatementLocks>,
    /// The transaction's deferred constraint checks and SET CONSTRAINTS.
    deferred: Arc<crate::deferred::Deferred>,
    /// LISTEN/NOTIFY: the channels, the inbox, and what the open
    /// transaction queued.
    listener: Arc<crate::notify::Listener>,
    /// The session's entry in pg_stat_activity (None until
    /// [`Session::attach`]).
    registration: Option<crate::backends::Registration>,
    /// pg_stat_activity as the open transaction sees it.
    activity: Option<Arc<crate::backends::View>>,
    /// settings_generation when application_name was last published.
    published_settings: u64,
    /// The running statement's waited calls (pg_sleep).
    waits: Arc<crate::waits::StatementWaits>,
    /// The statement's relation sizes, measured when a call asks.
    sizes: Arc<crate::sizes::StatementSizes>,
    /// Warnings functions raise during a statement (a queue for the
    /// session's life, shared with each statement's context).
    warnings: Arc<Mutex<Vec<ErrorReport>>>,
    /// PL/pgSQL bodies parsed once for the session's life.
    pl_cache: Arc<crate::plpgsql::Cache>,
    /// True while a DO block or procedure runs a statement where a CALL or
    /// DO it starts may not COMMIT or ROLLBACK (see session/plpgsql.rs).
    pl_atomic: bool,
    /// How deep in PL/pgSQL bodies the session's statements run: a DO
    /// block's or procedure's statement starts its context here, so
    /// recursion through CALL and DO meets the depth limit.
    pl_depth: u32,
    /// The owner of the SECURITY DEFINER function whose statements run,
    /// who is the current user meanwhile.
    definer: Option<Arc<str>>,
}

impl<K: KvClient> Session<K> {
    /// Opens a session on `db`.
    pub fn new(db: Arc<Database<K>>) -> Session<K> {
        let catalog = db.catalog.read().clone();
        let advisory = Arc::new(crate::advisory::SessionLocks::new(db.advisory.clone()));
        let listener = Arc::new(crate::notify::Listener::new(db.notify.clone()));
        Session {
            db,
            settings: Settings::default(),
            base: catalog.clone(),
            catalog,
            temp: BTreeMap::new(),
            temp_epoch: 0,
            // Resolved at the first statement (no setting reads "\0").
            path_source: ("\0".to_string(), String::new()),
            temp_at_txn_start: None,
            cursors: Arc::default(),
            sql_prepared: HashMap::new(),
            txn: None,
            state: TxnState::Idle,
            block_isolation: None,
            block_read_only: None,
            fresh: HashSet::new(),
            ddl: false,
            savepoints: Vec::new(),
            seqs: Arc::default(),
            txn_time: 0,
            txid: 0,
            seen_ts: 0,
            catalog_suspect: false,
            notices: Vec::new(),
            copy: None,
            in_statement: false,
            user: Arc::from("postgres"),
            catalog_checked_at: None,
            settings_generation: 1,
            settings_cache: Mutex::new((0, Arc::default())),
            interrupts: Default::default(),
            set_config: Arc::default(),
            settings_before_txn: None,
            local_settings: Vec::new(),
            plain_sets: Vec::new(),
            apart_depth: 0,
            advisory,
            random: Arc::default(),
            pid: 0,
            row_locks: Arc::default(),
            deferred: Arc::default(),
            listener,
            registration: None,
            activity: None,
            published_settings: 0,
            waits: Arc::default(),
            sizes: Arc::default(),
            warnings: Arc::default(),
            pl_cache: Arc::default(),
            pl_atomic: false,
            pl_depth: 0,
            definer: None,
        }
    }

    /// Gives the session the pid the wire layer gave the client in
    /// BackendKeyData (pg_backend_pid, pg_locks, NOTIFY) and lists it in
    /// pg_stat_activity, where pg_cancel_backend and pg_terminate_backend
    /// reach it through `interrupt`. `addrs` are the client's and the
    /// server's address of a TCP connection. Call after
    /// [`Session::set_user`].
    pub fn attach(
        &mut self,
        pid: i32,
        addrs: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
        interrupt: Box<dyn crate::backends::Interrupt>,
    ) {
        self.pid = pid;
        self.advisory.set_pid(pid);
        self.listener.set_pid(pid);
        let reg = self.db.backends.register(pid, addrs, self.user.clone(), interrupt);
        self.activity = Some(Arc::new(crate::backends::View::new(reg.registry().clone())));
        self.registration = Some(reg);
        self.publish_status(crate::backends::State::Idle, None);
    }

    /// Updates the session's pg_stat_activity entry: its state, and the
    /// statement starting now (if `query`).
    fn publish_status(&mut self, state: crate::backends::State, query: Option<&Arc<str>>) {
        let Some(reg) = &self.registration else { return };
        let app = (self.published_settings != self.settings_generation)
            .then(|| self.settings.value("application_name").unwrap_or_default().to_string());
        self.published_settings = self.settings_generation;
        let now = sqltypes::datetime::now_micros();
        let xact_start = self.txn.is_some().then_some(self.txn_time);
        reg.backend().update(|s| {
            if let Some(app) = app {
                s.application_name = app;
            }
            if let Some(q) = query {
                s.query = Some(q.clone());
                s.query_start = Some(now);
            }
            if s.state != state || query.is_some() {
                s.state_change = now;
            }
            s.state = state;
            s.xact_start = match state {
                crate::backends::State::Idle => None,
                _ => xact_start.or(s.xact_start).or(Some(now)),
            };
            s.wait = None;
        });
    }

    /// Notes what the running statement waits for in pg_stat_activity
    /// (wait_event_type, wait_event), or that it stopped waiting.
    fn publish_wait(&self, wait: Option<(&'static str, &'static str)>) {
        if let Some(reg) = &self.registration {
            reg.backend().update(|s| s.wait = wait);
        }
    }

    /// The transaction ended: pg_stat_activity is read afresh next time.
    fn forget_activity(&self) {
        if let Some(v) = &self.activity {
            v.clear();
        }
    }

    /// Notifications to deliver now: none while a transaction is open.
    pub fn take_notifications(&mut self) -> Vec<crate::notify::Note> {
        if self.state != TxnState::Idle || self.in_statement {
            return Vec::new();
        }
        self.listener.take()
    }

    /// Resolves when a notification may have arrived for this session.
    pub async fn notified(&self) {
        self.listener.notified().await
    }

    /// Installs a newly read shared catalog, with this session's temporary
    /// tables and search path laid over it.
    fn set_catalog(&mut self, base: Arc<Catalog>) {
        self.base = base.clone();
        let setting = self.settings.value("search_path").unwrap_or(catalog::DEFAULT_SEARCH_PATH);
        self.path_source = (setting.to_string(), self.user.to_string());
        if self.temp.is_empty() && base.resolve_path(setting, &self.user) == base.path {
            self.catalog = base;
            return;
        }
        let mut merged = (*base).clone();
        for (name, t) in &self.temp {
            merged.tables.insert((catalog::TEMP_NAMESPACE_OID, name.clone()), t.clone());
        }
        // Resolved after the temporary tables are in: they put pg_temp first.
        merged.path = merged.resolve_path(setting, &self.user);
        self.catalog = Arc::new(merged);
    }

    /// Lays the search path over the catalog again if the setting (or the
    /// user `$user` names) changed since; cached plans made under the old
    /// one are dropped.
    fn sync_search_path(&mut self) {
        let setting = self.settings.value("search_path").unwrap_or(catalog::DEFAULT_SEARCH_PATH);
        if self.path_source.0 != setting || *self.path_source.1 != *self.user {
            self.temp_epoch += 1;
            self.set_catalog(self.base.clone());
        }
    }

    /// Ends the session: an open transaction rolls back and the rows of its
    /// temporary tables are deleted. (After a crash they stay on disk,
    /// unreachable: no catalog entry names their storage.)
    pub async fn close(&mut self) {
        if let Some(t) = self.txn.take() {
            t.abort();
        }
        self.reset_txn_info();
        if self.temp.is_empty() {
            return;
        }
        let tenant = self.db.tenant;
        let Ok(mut txn) = self.db.client.begin(IsolationLevel::ReadCommitted).await else {
            return;
        };
        for t in std::mem::take(&mut self.temp).values() {
            let storages = std::iter::once(t.storage).chain(t.indexes.iter().map(|i| i.storage));
            for st in storages {
                if txn.delete_range_after_commit(keys::storage(tenant, st)).is_err() {
                    return;
                }
            }
        }
        if let Err(e) = txn.commit().await {
            tracing::warn!("could not remove the session's temporary tables: {e}");
        }
    }

    /// What plans made now are valid for.
    fn plan_key(&self) -> PlanKey {
        (self.catalog.version, self.temp_epoch, self.current_user_arc())
    }

    /// True when a plan made for `k` still holds.
    fn plan_valid(&self, k: &PlanKey) -> bool {
        k.0 == self.catalog.version && k.1 == self.temp_epoch && *k.2 == *self.current_user()
    }

    /// The session user: the authenticated one, or whom SET SESSION
    /// AUTHORIZATION chose.
    pub fn session_user(&self) -> &str {
        self.settings.value("session_authorization").unwrap_or(&self.user)
    }

    /// The current user, whose privileges statements run with: the owner
    /// of the SECURITY DEFINER function running, else the role SET ROLE
    /// chose, else the session user.
    pub fn current_user(&self) -> &str {
        if let Some(owner) = &self.definer {
            return owner;
        }
        match self.settings.value("role") {
            Some(r) if r != "none" => r,
            _ => self.session_user(),
        }
    }

    /// [`Session::current_user`] as a shared string.
    fn current_user_arc(&self) -> Arc<str> {
        self.shared_name(self.current_user())
    }

    /// [`Session::session_user`] as a shared string.
    fn session_user_arc(&self) -> Arc<str> {
        self.shared_name(self.session_user())
    }

    /// `name` as a shared string: the authenticated user's own when it is
    /// the same (mostly it is), so statements allocate nothing for it.
    fn shared_name(&self, name: &str) -> Arc<str> {
        if name == &*self.user {
            self.user.clone()
        } else {
            Arc::from(name)
        }
    }

    /// Sets the authenticated user (current_user, session_user).
    pub fn set_user(&mut self, user: &str) {
        self.user = Arc::from(user);
        let _ = self.settings.set("session_authorization", user);
        let superuser = self.db.catalog().role(user).map(|r| r.superuser).unwrap_or(false);
        let _ = self.settings.set("is_superuser", if superuser { "on" } else { "off" });
        // Reported in the startup ParameterStatus messages, not as changes.
        self.settings.take_changed();
        if let Some(reg) = &self.registration {
            reg.backend().update(|s| s.user = self.user.clone());
        }
    }

    /// Fails with 42501 unless the user may connect to the database (the
    /// CONNECT privilege, which PUBLIC holds until revoked).
    pub fn check_connect(&self) -> Result<()> {
        let cat = &self.catalog;
        if cat.database_access.allows(
            cat,
            crate::acl::ObjKind::Database,
            &self.user,
            crate::acl::CONNECT,
            false,
        ) {
            return Ok(());
        }
        Err(err!(InsufficientPrivilege, "permission denied for database \"postgres\"")
            .with_detail("User does not have CONNECT privilege."))
    }

    /// Brings the session's catalog up to date with storage (called when a
    /// connection opens, so the first Parse sees every committed table even
    /// right after a restart).
    pub async fn refresh_catalog(&mut self) -> Result<()> {
        let txn = self.db.client.begin(IsolationLevel::ReadCommitted).await.map_err(from_kv)?;
        // The catalog version can only change through a commit, and every
        // commit moves the snapshot timestamp: at a snapshot where we already
        // checked it (and without DDL of our own since), it is unchanged.
        let snap = txn.snapshot().0;
        if !self.ddl && self.catalog_checked_at == Some((snap, self.catalog.version)) {
            return Ok(());
        }
        let version = match txn.get(&keys::version(self.db.tenant)).await.map_err(from_kv)? {
            Some(b) => ddl::decode_u64(&b)?,
            None => 0,
        };
        // Read the snapshot again: a remote transaction learns it only from
        // its first request (before, it is Timestamp::UNKNOWN).
        let snap = txn.snapshot().0;
        self.seen_ts = self.seen_ts.max(snap);
        self.catalog_checked_at = if self.ddl { None } else { Some((snap, version)) };
        if version != self.catalog.version {
            let cat = Arc::new(ddl::load_catalog(&txn, self.db.tenant).await?);
            self.db.publish(&cat);
            self.set_catalog(cat);
        }
        txn.abort();
        Ok(())
    }

    /// Applies a startup parameter (application_name, client_encoding, ...).
    pub fn startup_param(&mut self, name: &str, value: &str) -> Result<()> {
        self.settings_generation += 1;
        if name == "options" {
            return self.startup_options(value);
        }
        self.settings.set(name, value)
    }

    fn startup_options(&mut self, value: &str) -> Result<()> {
        // `-c name=value` pairs, as libpq passes PGOPTIONS.
        let mut it = value.split_whitespace();
        while let Some(tok) = it.next() {
            let kv = match tok {
                "-c" => it.next().unwrap_or(""),
                t if t.starts_with("-c") => &t[2..],
                t if t.starts_with("--") => &t[2..],
                _ => continue,
            };
            if let Some((k, v)) = kv.split_once('=') {
                self.settings.set(&k.replace('-', "_"), v)?;
            }
        }
        Ok(())
    }

    /// The settings reported to the client at startup.
    pub fn parameter_status(&self) -> Vec<(String, String)> {
        self.settings.reported()
    }

    /// A timeout setting's value (statement_timeout, the idle timeouts);
    /// None when it is 0 (no limit).
    pub fn timeout(&self, key: &str) -> Option<std::time::Duration> {
        self.settings.timeout(key)
    }

    /// Reported settings changed since the last call.
    pub fn changed_parameters(&mut self) -> Vec<(String, String)> {
        self.settings.take_changed()
    }

    /// Notices raised since the last call.
    pub fn take_notices(&mut self) -> Vec<ErrorReport> {
        std::mem::take(&mut self.notices)
    }

    /// The transaction state (for ReadyForQuery).
    pub fn txn_state(&self) -> TxnState {
        self.state
    }

    fn refresh_shared_catalog(&mut self) {
        self.sync_search_path();
        if self.txn.is_none() || !self.ddl {
            let shared = self.db.catalog.read().clone();
            if shared.version > self.catalog.version {
                self.set_catalog(shared);
            }
        }
    }

    /// The types of the parameter type OIDs a client declared at Parse:
    /// built-in types and the catalog's enums (42704 for an unknown OID).
    pub fn declared_types(&mut self, oids: &[u32]) -> Result<Vec<DataType>> {
        let mut out = Vec::with_capacity(oids.len());
        for &oid in oids {
            // Built-in types need no catalog; only an enum's OID reads it.
            let ty = match DataType::from_oid(oid) {
                Some(t) => t,
                None => {
                    self.refresh_shared_catalog();
                    self.catalog.type_by_oid(oid).ok_or_else(|| {
                        err!(UndefinedObject, "type with OID {oid} does not exist")
                    })?
                }
            };
            out.push(ty);
        }
        Ok(out)
    }

    /// Parses `sql`. A single statement is also planned, so its parameter
    /// types and result columns are known (Describe), and errors such as an
    /// unknown table surface at Parse, as in PostgreSQL.
    pub async fn prepare(
        &mut self,
        sql: &str,
        declared: &[DataType],
    ) -> Result<Vec<Arc<Prepared>>> {
        let mut r = self.prepare_inner(sql, declared);
        // Planning uses the catalog this process has; another SQL process
        // of the tenant may have committed DDL since (in one process, its
        // sessions publish their DDL to each other). A name it cannot
        // resolve is looked for again in the catalog as stored.
        if r.as_ref().is_err_and(|e| names_missing(&e.code)) && !self.ddl {
            let before = self.catalog.version;
            if self.refresh_catalog().await.is_ok() && self.catalog.version != before {
                r = self.prepare_inner(sql, declared);
            }
        }
        if r.is_err() {
            // As in PostgreSQL, a failed Parse aborts the transaction block.
            self.fail_txn();
        }
        r
    }

    fn prepare_inner(&mut self, sql: &str, declared: &[DataType]) -> Result<Vec<Arc<Prepared>>> {
        let parsed = parse::parse(sql)?;
        self.refresh_shared_catalog();
        let single = parsed.len() == 1;
        let mut out = Vec::with_capacity(parsed.len());
        for p in parsed {
            let mut prepared = Prepared {
                parsed: p,
                declared: declared.to_vec(),
                param_types: declared.to_vec(),
                columns: None,
                plan: Mutex::new(None),
            };
            // In an aborted block only COMMIT/ROLLBACK may run; PostgreSQL
            // answers 25P02 before looking at tables, so no planning either.
            if single && self.state == TxnState::Failed && !prepared.ends_block() {
                return Err(aborted());
            }
            if single {
                let (bound, params) = planner::plan(
                    &self.catalog,
                    &prepared.parsed.stmt,
                    declared,
                    self.current_user(),
                )
                .map_err(|e| self.position(e, &prepared.parsed))?;
                prepared.columns = statement_columns(&prepared.parsed.stmt, &bound);
                prepared.param_types = params;
                *prepared.plan.lock() = Some((self.plan_key(), bound));
            }
            out.push(Arc::new(prepared));
        }
        Ok(out)
    }

    fn position(&self, mut e: ErrorReport, p: &Parsed) -> ErrorReport {
        if e.position.is_some() || e.internal_query.is_some() {
            // Placed already, or in a PL/pgSQL statement's own text.
        } else if let Some(schema) = e.message.strip_prefix("permission denied for schema ") {
            // PostgreSQL points at the name looked up in the schema, or at
            // the name of the object being made in it.
            let qualified = p.text.to_ascii_lowercase().find(&format!("{schema}."));
            let at = match qualified {
                Some(i) => Some(p.offset + p.text[..i].chars().count()),
                None => p
                    .stmt
                    .created_name()
                    .and_then(|s| parse::char_pos(&p.source, s.start.line, s.start.column)),
            };
            e.position = at.map(|i| i as u32 + 1);
        } else if let Some(at) = crate::error::ambiguous_name_position(&p.text, &e.message) {
            e.position = Some(p.offset as u32 + at);
        } else if let Some(tok) = crate::error::quoted_token(&e.message).filter(|_| {
            let is = |f: fn(&ast::Statement) -> bool| matches!(&p.stmt, Stmt::Sql(s) if f(s));
            // ALTER TABLE's own errors about its columns carry no position,
            // nor do CREATE TABLE's about the columns it is given.
            // Nor do ALTER statements' about a missing relation.
            let alter_table = is(|s| matches!(s, ast::Statement::AlterTable(_)))
                || matches!(p.stmt, Stmt::AlterView(_));
            let alter_any = alter_table
                || matches!(
                    p.stmt,
                    Stmt::AlterName(_) | Stmt::AlterOwner(_) | Stmt::AlterSequence(_)
                );
            let alter = alter_table
                && (e.message.contains(" of relation \"")
                    || e.message.contains("cannot be cast automatically")
                    || e.message.starts_with("invalid input syntax for type "))
                || alter_any && e.code == sqlstate::SqlState::UndefinedTable;
            let create = is(|s| {
                matches!(s, ast::Statement::CreateTable(_) | ast::Statement::CreateType { .. })
            }) && matches!(
                e.code,
                sqlstate::SqlState::DuplicateColumn | sqlstate::SqlState::InvalidTableDefinition
            );
            // CREATE/DROP FUNCTION point only into the body, at a name
            // it reads.
            let function = is(|s| {
                matches!(
                    s,
                    ast::Statement::CreateFunction(_)
                        | ast::Statement::DropFunction(_)
                        | ast::Statement::DropProcedure { .. }
                )
            }) && !matches!(
                e.code,
                sqlstate::SqlState::UndefinedColumn | sqlstate::SqlState::UndefinedTable
            );
            // Nor do errors about a name already taken.
            let taken = crate::error::name_taken(&e.code);
            let comment = matches!(
                p.stmt,
                Stmt::CommentOnFunction(..)
                    | Stmt::RenameTrigger(_)
                    | Stmt::AlterIdentity(_)
                    | Stmt::CreateDomain(_)
                    | Stmt::AlterDomain(_)
                    | Stmt::DropDomain(_)
                    | Stmt::Partition(_)
            );
            !alter && !create && !function && !taken && !comment
        }) {
            // A qualified name the statement wrote bare (`column "t.c"
            // must appear in the GROUP BY clause`) points at the bare name.
            let at = crate::error::token_position(&p.text, &tok).or_else(|| {
                let (_, column) = tok.rsplit_once('.')?;
                crate::error::bare_name_position(&p.text, column)
            });
            if let Some(at) = at {
                e.position = Some(p.offset as u32 + at);
            }
        }
        e
    }

    fn plan_for(&self, p: &Prepared) -> Result<Arc<Bound>> {
        if let Some((v, b)) = &*p.plan.lock() {
            if self.plan_valid(v) {
                return Ok(b.clone());
            }
        }
        let user = self.current_user();
        let (bound, _) = planner::plan(&self.catalog, &p.parsed.stmt, &p.declared, user)
            .map_err(|e| self.position(e, &p.parsed))?;
        *p.plan.lock() = Some((self.plan_key(), bound.clone()));
        Ok(bound)
    }

    /// Binds parameter values (already decoded to their types).
    pub fn bind(&mut self, p: &Arc<Prepared>, params: Vec<Value>) -> Result<Portal> {
        if self.state == TxnState::Failed && !p.ends_block() {
            return Err(aborted());
        }
        self.refresh_shared_catalog();
        if let Stmt::Fetch(f) = &p.parsed.stmt {
            // The cursor's columns (a MOVE has none; its cursor is looked
            // up when it runs).
            let bound = match (f.moving, self.cursors.columns(&f.cursor)) {
                (true, _) => Bound::Utility,
                (false, Some(columns)) => Bound::Fetch(columns),
                (false, None) => {
                    self.fail_txn();
                    return Err(crate::cursor::missing(&f.cursor));
                }
            };
            let bound = Arc::new(bound);
            return Ok(Portal { prepared: p.clone(), bound, params });
        }
        if let Stmt::Sql(s) = &p.parsed.stmt {
            if let ast::Statement::Execute { name, parameters, .. } = s.as_ref() {
                let r = self.bind_execute(name, parameters);
                if r.is_err() {
                    self.fail_txn();
                }
                return r;
            }
        }
        match self.plan_for(p) {
            Ok(bound) => Ok(Portal { prepared: p.clone(), bound, params }),
            Err(e) => {
                self.fail_txn();
                Err(e)
            }
        }
    }

    /// Called when an execute future was dropped mid-statement (cancel or
    /// disconnect): the statement's effects are discarded like an error's.
    pub fn cancelled(&mut self) {
        self.copy = None;
        self.in_statement = false;
        self.interrupts = Default::default();
        self.advisory.end_statement();
        self.fail_txn();
    }

    /// Executes a bound portal.
    pub async fn execute(&mut self, portal: &Portal) -> Result<Outcome> {
        if self.in_statement {
            // A previous execute was dropped without `cancelled` being called.
            self.cancelled();
        }
        if self.state == TxnState::Failed && !portal.prepared.ends_block() {
            return Err(aborted());
        }
        self.in_statement = true;
        self.publish_status(crate::backends::State::Active, Some(&portal.prepared.parsed.source));
        let r = self.execute_with_retries(portal).await;
        // Work outside a statement keeps no deadline or cancel baseline.
        self.interrupts = Default::default();
        self.notices.extend(self.warnings.lock().drain(..));
        self.notices.extend(self.advisory.end_statement());
        self.in_statement = false;
        let r = match r {
            Ok(o) => Ok(o),
            Err(e) => {
                self.fail_txn();
                Err(self.position(e, &portal.prepared.parsed))
            }
        };
        // An implicit transaction stays active until Sync ends it.
        let after = match self.state {
            TxnState::Implicit => None,
            TxnState::Idle => Some(crate::backends::State::Idle),
            TxnState::Block => Some(crate::backends::State::IdleInTransaction),
            TxnState::Failed => Some(crate::backends::State::IdleInTransactionAborted),
        };
        if let Some(state) = after {
            self.publish_status(state, None);
        }
        r
    }

    /// Runs the statement; when it must wait or reach storage first (a
    /// sequence's new block of values or setval, rows to lock for FOR
    /// UPDATE, an advisory lock held by another session), undoes the
    /// attempt, does that and runs the statement again (see sequence.rs,
    /// rowlock.rs and advisory.rs).
    async fn execute_with_retries(&mut self, portal: &Portal) -> Result<Outcome> {
        self.seqs.lock().start_statement();
        self.row_locks.start_statement();
        self.waits.start_statement();
        self.sizes.start_statement();
        let backend = self.registration.as_ref().map(|r| r.backend().clone());
        self.interrupts = crate::interrupts::Interrupts::start(
            self.settings.timeout("statement_timeout"),
            backend,
        );
        let mut refills = 0;
        let mut stale_catalog = 0;
        loop {
            let mark = self.txn.as_mut().map(|t| t.savepoint()).unwrap_or(Savepoint(0));
            let notify_mark = self.listener.mark();
            let deferred_mark = self.deferred.mark();
            self.waits.start_attempt();
            let mut r = self.execute_inner(portal).await;
            // Table locks taken "soon" are taken before the statement ends.
            if let Some(t) = self.txn.as_mut() {
                if let (Ok(_), Err(e)) = (&r, t.flush().await) {
                    r = Err(from_kv(e));
                }
            }
            let request = self.seqs.lock().request.take();
            let rows = self.row_locks.take_pending();
            let wait = self.advisory.take_pending();
            let call_wait = self.waits.take_pending();
            // The statement ran on a catalog it assumed current, and a
            // request found it was not (even if the error was swallowed,
            // as a PL/pgSQL handler may): undo it and run it again on the
            // current catalog (bounded: each time, another DDL committed).
            let stale = self.txn.as_mut().is_some_and(|t| t.take_assumption_failed());
            if let Some(t) = &self.txn {
                let snap = t.snapshot().0;
                if snap != Timestamp::UNKNOWN.0 {
                    self.seen_ts = self.seen_ts.max(snap);
                }
            }
            if stale && stale_catalog < 10 {
                stale_catalog += 1;
                self.catalog_suspect = true;
                self.undo_attempt(mark, notify_mark, deferred_mark);
                continue;
            }
            let Err(e) = &r else { return r };
            // A size call asks only by failing the attempt.
            let measure = self.sizes.take_pending();
            let nothing = request.is_none() && rows.is_empty() && wait.is_none();
            if nothing && call_wait.is_none() && !measure {
                return r;
            }
            if request.is_some() {
                refills += 1;
                if refills > 30 {
                    return Err(e.clone());
                }
            }
            self.undo_attempt(mark, notify_mark, deferred_mark);
            if let Some(req) = request {
                self.serve_sequence_request(req).await?;
            }
            if !rows.is_empty() {
                self.publish_wait(Some(("Lock", "transactionid")));
                if let Some(t) = self.txn.as_mut() {
                    crate::rowlock::serve(t, &self.row_locks, rows).await?;
                }
                self.publish_wait(None);
            }
            if let Some((key, mode)) = wait {
                self.publish_wait(Some(("Lock", "advisory")));
                lock_wait(self.lock_timeout(), self.advisory.wait(key, mode)).await??;
                self.publish_wait(None);
            }
            if let Some(w) = call_wait {
                self.publish_wait(Some(w.event()));
                let memo = w.run().await;
                self.waits.done(memo);
                self.publish_wait(None);
            }
            if measure {
                let Some(t) = self.txn.as_ref() else { return Err(e.clone()) };
                self.sizes.measure(t, self.db.tenant, &self.catalog).await?;
            }
        }
    }

    /// Discards what a failed attempt of the statement did.
    fn undo_attempt(
        &mut self,
        mark: Savepoint,
        notify_mark: crate::notify::Mark,
        deferred_mark: usize,
    ) {
        if let Some(t) = self.txn.as_mut() {
            t.rollback_to(mark);
        }
        self.listener.rollback_to(notify_mark);
        self.deferred.rollback_to(deferred_mark);
        self.seqs.lock().retry();
        self.advisory.undo();
    }

    async fn serve_sequence_request(&self, req: sequence::Request) -> Result<()> {
        let db = &self.db;
        sequence::serve(&db.client, db.tenant, &db.reserved, &self.seqs, req).await
    }

    /// Ends the implicit transaction if one is open.
    pub async fn sync(&mut self) -> Result<()> {
        if self.state == TxnState::Implicit {
            self.state = TxnState::Idle;
            let r = self.commit_txn().await;
            // SET LOCAL in a function the statement called ends here.
            self.end_txn_settings(r.is_ok());
            self.publish_status(crate::backends::State::Idle, None);
            return r;
        }
        Ok(())
    }

    fn fail_txn(&mut self) {
        if self.state != TxnState::Implicit && !self.savepoints.is_empty() && self.txn.is_some() {
            // Keep the transaction: ROLLBACK TO a savepoint can recover it.
            // The failed statement's writes stay buffered until then.
            self.state = TxnState::Failed;
            return;
        }
        if let Some(t) = self.txn.take() {
            t.abort();
        }
        self.reset_txn_info();
        self.state = match self.state {
            TxnState::Block | TxnState::Failed => TxnState::Failed,
            _ => TxnState::Idle,
        };
    }

    /// Rolls back the transaction's CREATE/DROP of temporary tables; true
    /// if there were any (the caller re-merges the catalog).
    fn undo_temp_changes(&mut self) -> bool {
        let Some(saved) = self.temp_at_txn_start.take() else { return false };
        self.temp = saved;
        self.temp_epoch += 1;
        true
    }

    fn reset_txn_info(&mut self) {
        self.deferred.reset();
        self.advisory.end_transaction();
        self.listener.abort();
        self.forget_activity();
        self.end_txn_settings(false);
        self.cursors.end_transaction(false);
        self.fresh.clear();
        self.savepoints.clear();
        if self.undo_temp_changes() {
            self.set_catalog(self.base.clone());
        }
        if self.ddl {
            let shared = self.db.catalog.read().clone();
            self.set_catalog(shared);
        }
        self.ddl = false;
    }

    async fn commit_txn(&mut self) -> Result<()> {
        let ready = self.listener.pre_commit();
        let Some(mut t) = self.txn.take() else {
            self.deferred.reset();
            self.listener.commit();
            return Ok(());
        };
        let ddl = self.ddl;
        // Deferred constraint checks run last, and a violation fails the COMMIT.
        let ready = match ready {
            Ok(()) => self.deferred.run(&mut t, self.db.tenant, &self.catalog, &|_| true).await,
            e => e,
        };
        self.deferred.reset();
        // Temporary tables' ON COMMIT DROP and DELETE ROWS.
        let mut temp_changes = Vec::new();
        let ready = match ready {
            Ok(()) if !self.temp.is_empty() => {
                let changes = ddl::temp_on_commit(&mut t, self.db.tenant, &self.temp).await;
                changes.map(|c| temp_changes = c)
            }
            other => other,
        };
        let r = match ready {
            Ok(()) => match t.commit().await {
                Ok(ts) => {
                    self.seen_ts = self.seen_ts.max(ts.0);
                    Ok(())
                }
                Err(e) => Err(from_kv(e)),
            },
            Err(e) => {
                t.abort();
                Err(e)
            }
        };
        match r {
            Ok(()) => self.listener.commit(),
            Err(_) => self.listener.abort(),
        }
        self.forget_activity();
        self.advisory.end_transaction();
        if r.is_ok() && ddl {
            // The shared part only: temporary tables stay with this session.
            self.db.publish(&self.base);
        }
        self.ddl = false;
        self.fresh.clear();
        self.cursors.end_transaction(r.is_ok());
        match r.is_ok() {
            true => {
                self.temp_at_txn_start = None;
                if !temp_changes.is_empty() {
                    for (name, def) in temp_changes {
                        match def {
                            Some(def) => self.temp.insert(name, Arc::new(def)),
                            None => self.temp.remove(&name),
                        };
                    }
                    self.temp_epoch += 1;
                    self.set_catalog(self.base.clone());
                }
            }
            false => {
                self.undo_temp_changes();
                let shared = self.db.catalog.read().clone();
                self.set_catalog(shared);
            }
        }
        r
    }

    fn isolation(&self) -> Result<IsolationLevel> {
        if let Some(l) = self.block_isolation {
            return Ok(l);
        }
        parse_isolation(&self.settings.get("default_transaction_isolation")?)
    }

    fn read_only(&self) -> bool {
        self.block_read_only
            .unwrap_or_else(|| self.settings.value("default_transaction_read_only") == Some("on"))
    }

    /// How long a lock wait may take (lock_timeout; None for no limit).
    fn lock_timeout(&self) -> Option<std::time::Duration> {
        self.settings.timeout("lock_timeout")
    }

    async fn begin_txn(&mut self) -> Result<()> {
        if self.txn.is_none() {
            let iso = self.isolation()?;
            let mut t = self.db.client.begin(iso).await.map_err(from_kv)?;
            t.set_lock_timeout(self.lock_timeout());
            // Set by start_statement once the snapshot is known.
            self.txid = 0;
            self.txn = Some(t);
            self.txn_time = sqltypes::datetime::now_micros();
        }
        Ok(())
    }

    /// Starts the statement: opens a transaction if needed, refreshes the
    /// snapshot (READ COMMITTED) and the catalog.
    async fn start_statement(&mut self) -> Result<()> {
        if self.state == TxnState::Idle {
            self.state = TxnState::Implicit;
        }
        let fresh_txn = self.txn.is_none();
        self.begin_txn().await?;
        let iso = self.isolation()?;
        let lock_timeout = self.lock_timeout();
        let txn = self.txn.as_mut().expect("begin_txn opened a transaction");
        txn.set_lock_timeout(lock_timeout);
        if !fresh_txn && iso == IsolationLevel::ReadCommitted {
            txn.refresh_snapshot();
        }
        // The catalog version is assumed unchanged: a remote transaction
        // then checks it with the statement's first request instead of a
        // round trip of its own, and execute_with_retries runs the
        // statement again if it had changed. Our own DDL, or an assumption
        // that just failed, reads it.
        let key = keys::version(self.db.tenant);
        let read = if self.ddl || std::mem::take(&mut self.catalog_suspect) {
            Some(txn.get(&key).await.map_err(from_kv)?)
        } else {
            let known = self.catalog.version;
            let expected = (known != 0).then(|| known.to_be_bytes());
            txn.assume(&key, expected.as_ref().map(|b| &b[..])).await.map_err(from_kv)?
        };
        let version = match read {
            Some(Some(b)) => ddl::decode_u64(&b)?,
            Some(None) => 0,
            None => self.catalog.version,
        };
        if self.txid == 0 {
            // Unique while the node runs (its KV ids), growing with start
            // order, and after a restart above every committed
            // transaction's: the snapshot is the last commit's, and a
            // remote transaction that has not learnt it yet takes the
            // newest the session saw, which the connection's first
            // catalog read set after any restart.
            let snap = txn.snapshot().0;
            let start = if snap == Timestamp::UNKNOWN.0 { self.seen_ts } else { snap };
            self.txid = ((start << 20) | (txn.id().0 & 0xF_FFFF)) as i64;
        }
        if version != self.catalog.version {
            let cat = Arc::new(ddl::load_catalog(&*txn, self.db.tenant).await?);
            if !self.ddl {
                self.db.publish(&cat);
            }
            self.set_catalog(cat);
        }
        Ok(())
    }

    /// Takes the table lock a writer holds until the transaction ends (shared
    /// with other writers, exclusive against DDL on the table). Returns true
    /// if DDL on the table committed after the statement's snapshot and
    /// `may_retry`: the snapshot and catalog have been refreshed, and the
    /// caller must plan the statement again. Under REPEATABLE READ that case
    /// is a serialization failure instead.
    ///
    /// In READ COMMITTED a remote transaction takes the lock with the
    /// statement's next request ([`Txn::lock_shared_soon`]): if the table
    /// changed, that request fails as a false catalog assumption does, and
    /// execute_with_retries runs the statement again on the new catalog
    /// (it flushes the lock before the statement ends). REPEATABLE READ
    /// must not run the statement again on its old snapshot, so it locks
    /// at once.
    async fn lock_table_for_write(&mut self, oid: u32, may_retry: bool) -> Result<bool> {
        let tenant = self.db.tenant;
        let txn = self.txn.as_mut().expect("statement has a transaction");
        let soon = txn.isolation() == IsolationLevel::ReadCommitted;
        let key = keys::table(tenant, oid);
        let key = std::slice::from_ref(&key);
        let changed = if soon {
            txn.lock_shared_soon(key).await.map_err(from_kv)?
        } else {
            txn.lock_shared(key).await.map_err(from_kv)?.contains(&true)
        };
        if !changed {
            return Ok(false);
        }
        if !may_retry {
            bail!(SerializationFailure, "could not serialize access due to concurrent DDL");
        }
        txn.refresh_snapshot();
        let cat = Arc::new(ddl::load_catalog(&*txn, tenant).await?);
        self.set_catalog(cat);
        Ok(true)
    }

    /// LOCK TABLE: in a transaction block, each named table is locked until
    /// the transaction ends: shared for the modes that let writers in
    /// (ACCESS SHARE to SHARE UPDATE EXCLUSIVE, as INSERT, UPDATE and DELETE
    /// take it), exclusive for the stronger ones. Either way DDL on the
    /// table waits.
    async fn lock_tables(&mut self, lock: &ast::Lock) -> Result<Outcome> {
        use ast::LockTableMode as M;
        if self.state != TxnState::Block {
            bail!(NoActiveSqlTransaction, "LOCK TABLE can only be used in transaction blocks");
        }
        let mut oids = Vec::new();
        for target in &lock.tables {
            let table = self.catalog.table(&crate::bind::obj_name(&target.name)?)?;
            match table {
                Some(t) => oids.push(t.oid),
                None => bail!(UndefinedTable, "relation \"{}\" does not exist", target.name),
            }
        }
        let shared = matches!(
            lock.lock_mode,
            Some(M::AccessShare | M::RowShare | M::RowExclusive | M::ShareUpdateExclusive)
        );
        let tenant = self.db.tenant;
        let txn = self.txn.as_mut().expect("statement has a transaction");
        let keys: Vec<_> = oids.iter().map(|&oid| keys::table(tenant, oid)).collect();
        if shared {
            txn.lock_shared(&keys).await.map_err(from_kv)?;
        } else {
            txn.lock(&keys).await.map_err(from_kv)?;
        }
        Ok(Outcome::Command("LOCK TABLE".into()))
    }

    /// Takes the catalog lock before DDL (DDL statements run one at a time).
    /// In READ COMMITTED, DDL that committed while we waited is then seen:
    /// the snapshot moves forward and the catalog is read again, so the
    /// statement checks names and definitions against the current catalog.
    async fn lock_catalog(&mut self) -> Result<()> {
        let tenant = self.db.tenant;
        let txn = self.txn.as_mut().expect("statement has a transaction");
        let key = keys::version(tenant);
        let locked = txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
        if locked.iter().any(|l| l.changed_since_snapshot) {
            txn.refresh_snapshot();
            let cat = Arc::new(ddl::load_catalog(&*txn, tenant).await?);
            self.set_catalog(cat);
        }
        Ok(())
    }

    /// What nextval and friends see during a statement.
    fn seq_context(&self) -> sequence::SeqContext {
        sequence::SeqContext {
            catalog: self.catalog.clone(),
            reserved: self.db.reserved.clone(),
            session: self.seqs.clone(),
            user: self.current_user_arc(),
        }
    }

    /// The settings as current_setting() sees them; rebuilt only after SET.
    fn settings_snapshot(&self) -> Arc<std::collections::BTreeMap<String, String>> {
        let mut cached = self.settings_cache.lock();
        if cached.0 != self.settings_generation {
            *cached = (self.settings_generation, self.settings.snapshot());
        }
        cached.1.clone()
    }

    /// The session's time zone (the TimeZone setting).
    pub fn zone(&self) -> Arc<sqltypes::Zone> {
        self.settings.zone()
    }

    fn eval_ctx(&self, params: &[Value]) -> EvalContext {
        // Changes queued by a statement that failed are dropped.
        self.set_config.lock().clear();
        self.warnings.lock().clear();
        EvalContext {
            params: params.to_vec(),
            interrupts: self.interrupts.clone(),
            txn_time: self.txn_time,
            txid: self.txid,
            started: self.db.started,
            stmt_time: sqltypes::datetime::now_micros(),
            outer: Vec::new(),
            user: self.current_user_arc(),
            session_user: self.session_user_arc(),
            subq: Default::default(),
            settings: self.settings_snapshot(),
            seqs: self.seq_context(),
            catalog: Some(self.catalog.clone()),
            cursors: Some(self.cursors.clone()),
            set_config: self.set_config.clone(),
            work: None,
            zone: Some(self.settings.zone()),
            advisory: Some(self.advisory.clone()),
            pid: self.pid,
            row_locks: Some(self.row_locks.clone()),
            backends: self.activity.clone(),
            listener: Some(self.listener.clone()),
            waits: Some(self.waits.clone()),
            sizes: Some(self.sizes.clone()),
            memo: None,
            warnings: self.warnings.clone(),
            deferred: Some(self.deferred.clone()),
            pl: Some(self.pl_cache.clone()),
            depth: self.pl_depth,
            random: Some(self.random.clone()),
        }
    }

    async fn execute_inner(&mut self, portal: &Portal) -> Result<Outcome> {
        if self.state == TxnState::Block {
            if let Some(what) = parse::concurrently(&portal.prepared.parsed) {
                bail!(ActiveSqlTransaction, "{what} cannot run inside a transaction block");
            }
        }
        let stmt = match &portal.prepared.parsed.stmt {
            Stmt::Empty => return Ok(Outcome::Empty),
            Stmt::Maintenance(tag) => {
                if self.state == TxnState::Block && *tag == "VACUUM" {
                    bail!(ActiveSqlTransaction, "VACUUM cannot run inside a transaction block");
                }
                return Ok(Outcome::Command(tag.to_string()));
            }
            Stmt::Copy(c) => return self.copy(c.clone()).await,
            Stmt::SetConstraints(names, deferred) => {
                return self.set_constraints(names.as_deref(), *deferred).await
            }
            Stmt::Do(code) => {
                self.start_statement().await?;
                return self.run_do(code).await;
            }
            Stmt::Fetch(f) => {
                self.start_statement().await?;
                return self.fetch(f);
            }
            own @ (Stmt::AlterSequence(_)
            | Stmt::AlterIdentity(_)
            | Stmt::AlterOwner(_)
            | Stmt::AlterName(_)
            | Stmt::AlterView(_)
            | Stmt::CreateMatView(..)
            | Stmt::RefreshMatView(_)
            | Stmt::GrantRole(_)
            | Stmt::AlterDefaultPrivileges(_)
            | Stmt::GrantOnType(_)
            | Stmt::CreateTrigger(..)
            | Stmt::CreateProcedure(_)
            | Stmt::CommentOnFunction(..)
            | Stmt::RenameTrigger(_)
            | Stmt::CreateDomain(_)
            | Stmt::AlterDomain(_)
            | Stmt::DropDomain(_)
            | Stmt::Partition(_)
            | Stmt::Owned(_)) => {
                self.start_statement().await?;
                if let Some(command) = own.own_command().filter(|_| self.read_only()) {
                    bail!(
                        ReadOnlySqlTransaction,
                        "cannot execute {command} in a read-only transaction"
                    );
                }
                ddl::authorize(&self.catalog, self.current_user(), own)?;
                return match own {
                    Stmt::CreateMatView(cv, data) => self.create_matview(cv, *data).await,
                    Stmt::RefreshMatView(r) => self.refresh_matview(r).await,
                    Stmt::Owned(o) if o.to.is_none() => self.drop_owned(o).await,
                    _ => self.own_ddl(own).await,
                };
            }
            Stmt::Sql(s) => s.as_ref(),
        };
        if let Some(o) = self.control(stmt).await? {
            return Ok(o);
        }
        self.start_statement().await?;
        if let Some(o) = self.cursor_statement(stmt, portal).await? {
            return Ok(o);
        }
        // A writer that waited for DDL on its table runs again on the new
        // definition (bounded: each retry means another DDL committed).
        let mut attempts = 0;
        let bound = loop {
            let bound = if matches!(*portal.bound, Bound::Utility | Bound::Fetch(_)) {
                portal.bound.clone()
            } else {
                self.plan_for(&portal.prepared)?
            };
            let targets = written_tables(&bound);
            if let Some(t) = targets.iter().find(|t| t.matview.is_some()) {
                bail!(WrongObjectType, "cannot change materialized view \"{}\"", t.name);
            }
            attempts += 1;
            let mut again = false;
            for t in &targets {
                again |= self.lock_table_for_write(t.oid, attempts < 10).await?;
            }
            if !again {
                break bound;
            }
        };
        if self.read_only() {
            if let Some(command) = writes(&bound, stmt) {
                bail!(
                    ReadOnlySqlTransaction,
                    "cannot execute {command} in a read-only transaction"
                );
            }
        }
        if let Bound::Call(call, _) = bound.as_ref() {
            return self.run_call(call, &portal.params).await;
        }
        let ctx = self.eval_ctx(&portal.params);
        let tenant = self.db.tenant;
        let catalog = self.catalog.clone();
        // Writing WITH queries run first; the main statement reads their
        // rows.
        let (ctx, bound, after) = match bound.as_ref() {
            Bound::With(w) => {
                let txn = self.txn.as_mut().expect("statement has a transaction");
                let ctx =
                    crate::plpgsql::spi::run_writes(txn, tenant, &w.before, &ctx, &catalog).await?;
                (ctx, &w.main, w.after.as_slice())
            }
            b => (ctx, b, &[][..]),
        };
        // PL/pgSQL calls that run once run first, through the session: they
        // may write and run utility statements.
        let once = match bound {
            Bound::Query(plan, _) => self.run_calls(plan, &ctx).await?,
            _ => None,
        };
        let txn = self.txn.as_mut().expect("statement has a transaction");
        let out = match bound {
            Bound::Query(plan, _) => {
                let cx = ExecCtx { txn: &*txn, tenant, eval: &ctx, catalog: &catalog };
                let rows = exec::run(once.as_ref().unwrap_or(plan), &cx).await?;
                let tag = format!("SELECT {}", rows.len());
                let changed = std::mem::take(&mut *self.set_config.lock());
                for (name, value, local) in changed {
                    self.settings_generation += 1;
                    self.set_setting(&name, &value, local, false)?;
                }
                Ok(Outcome::Rows(rows, tag))
            }
            Bound::Insert(p) => {
                let private = self.fresh.contains(&p.table.storage);
                let (n, rows) = dml::insert(txn, tenant, p, &ctx, &catalog, private).await?;
                Ok(Outcome::Rows(rows, format!("INSERT 0 {n}")))
            }
            Bound::Update(p) => {
                let (n, rows) = dml::update(txn, tenant, p, &ctx, &catalog).await?;
                Ok(Outcome::Rows(rows, format!("UPDATE {n}")))
            }
            Bound::Delete(p) => {
                let (n, rows) = dml::delete(txn, tenant, p, &ctx, &catalog).await?;
                Ok(Outcome::Rows(rows, format!("DELETE {n}")))
            }
            Bound::Merge(p) => {
                let n = dml::merge::merge(txn, tenant, p, &ctx, &catalog).await?;
                Ok(Outcome::Command(format!("MERGE {n}")))
            }
            Bound::Explain(lines) => {
                let rows = lines.iter().map(|l| vec![Value::Text(l.clone())]).collect();
                Ok(Outcome::Rows(rows, "EXPLAIN".into()))
            }
            Bound::Utility | Bound::Fetch(_) => self.utility(stmt).await,
            Bound::Call(..) | Bound::With(..) => {
                bail!(InternalError, "CALL or WITH reached the executor")
            }
        }?;
        if !after.is_empty() {
            let txn = self.txn.as_mut().expect("statement has a transaction");
            crate::plpgsql::spi::run_after(txn, tenant, after, &ctx, &catalog).await?;
        }
        Ok(out)
    }

    async fn utility(&mut self, stmt: &ast::Statement) -> Result<Outcome> {
        use ast::Statement as S;
        match stmt {
            S::Lock(lock) => {
                ddl::authorize_statement(&self.catalog, self.current_user(), stmt)?;
                return self.lock_tables(lock).await;
            }
            S::LISTEN { channel } => {
                self.listener.listen(&crate::bind::ident(channel))?;
                return Ok(Outcome::Command("LISTEN".into()));
            }
            S::UNLISTEN { channel } => {
                let all = channel.quote_style.is_none() && channel.value == "*";
                self.listener.unlisten((!all).then(|| crate::bind::ident(channel)).as_deref());
                return Ok(Outcome::Command("UNLISTEN".into()));
            }
            S::NOTIFY { channel, payload } => {
                let payload = payload.as_deref().unwrap_or("");
                self.listener.notify(&crate::bind::ident(channel), payload)?;
                return Ok(Outcome::Command("NOTIFY".into()));
            }
            _ => {}
        }
        if !matches!(stmt, S::Analyze(_)) {
            self.lock_catalog().await?;
        }
        ddl::authorize_statement(&self.catalog, self.current_user(), stmt)?;
        if let S::CreateTable(ct @ ast::CreateTable { query: Some(query), .. }) = stmt {
            return self.create_table_as(ct, query).await;
        }
        let tenant = self.db.tenant;
        let catalog = self.catalog.clone();
        let user = self.current_user().to_string();
        let user = user.as_str();
        // ALTER TABLE computes values for existing rows (a new column's
        // default, a changed type) in the statement's context.
        let eval = match stmt {
            S::AlterTable(_) => self.eval_ctx(&[]),
            _ => EvalContext::default(),
        };
        let txn = self.txn.as_mut().expect("utility statement has a transaction");
        let r: DdlResult = match stmt {
            S::CreateTable(ct) => ddl::create_table(txn, tenant, &catalog, ct, user).await?,
            S::Drop {
                object_type: ast::ObjectType::Role | ast::ObjectType::User,
                if_exists,
                names,
                ..
            } => ddl::drop_role(txn, tenant, &catalog, names, *if_exists, user).await?,
            S::Drop { object_type: ast::ObjectType::Schema, if_exists, names, cascade, .. } => {
                ddl::drop_schemas(txn, tenant, &catalog, names, *if_exists, *cascade).await?
            }
            S::Drop { object_type, if_exists, names, cascade, .. } => {
                ddl::drop(txn, tenant, &catalog, object_type, names, *if_exists, *cascade).await?
            }
            S::Truncate(t) => {
                let cascade = t.cascade == Some(ast::CascadeOption::Cascade);
                let truncated = ddl::truncated(&catalog, &t.table_names, cascade, user)?;
                let fires = |t: &catalog::TableDef| {
                    t.triggers.iter().any(|g| g.has(catalog::TriggerDef::TRUNCATE))
                };
                if truncated.0.iter().any(|t| fires(t)) {
                    return self.truncate_with_triggers(truncated).await;
                }
                ddl::truncate(txn, tenant, truncated).await?
            }
            S::CreateIndex(ci) => ddl::create_index(txn, tenant, &catalog, ci).await?,
            S::CreateSequence { .. } => {
                ddl::create_sequence(txn, tenant, &catalog, stmt, user).await?
            }
            S::CreateView(cv) => ddl::create_view(txn, tenant, &catalog, cv, user).await?,
            S::CreateType { name, representation } => {
                ddl::create_type(txn, tenant, &catalog, name, representation.as_ref(), user).await?
            }
            S::AlterType(at) => ddl::alter_type(txn, tenant, &catalog, at).await?,
            S::CreateFunction(cf) => {
                let settings = &self.settings;
                ddl::create_function(txn, tenant, &catalog, cf, user, settings, false).await?
            }
            S::DropFunction(df) => {
                ddl::drop_function(txn, tenant, &catalog, df, user, false).await?
            }
            S::DropProcedure { if_exists, proc_desc, drop_behavior } => {
                let df = ast::DropFunction {
                    if_exists: *if_exists,
                    func_desc: proc_desc.clone(),
                    drop_behavior: *drop_behavior,
                };
                ddl::drop_function(txn, tenant, &catalog, &df, user, true).await?
            }
            S::DropTrigger(dt) => ddl::drop_trigger(txn, tenant, &catalog, dt).await?,
            S::AlterFunction(af) => {
                ddl::alter_function(txn, tenant, &catalog, af, user, &self.settings).await?
            }
            S::CreateRole(cr) => {
                ddl::create_role(txn, tenant, &catalog, cr, self.db.hasher, user).await?
            }
            S::AlterRole { name, operation } => {
                ddl::alter_role(txn, tenant, &catalog, name, operation, self.db.hasher).await?
            }
            S::AlterTable(at) => match ddl::owner_only(at) {
                Some(a) => ddl::alter_owner(txn, tenant, &catalog, &a, user).await?,
                None => ddl::alter_table(txn, tenant, &catalog, at, &eval).await?,
            },
            S::AlterSchema(a) => ddl::alter_schema(txn, tenant, &catalog, a, user).await?,
            S::CreateSchema { schema_name, if_not_exists, .. } => {
                ddl::create_schema(txn, tenant, &catalog, schema_name, *if_not_exists, user).await?
            }
            S::CreateExtension(c) => ddl::create_extension(txn, tenant, &catalog, c, user).await?,
            S::Grant(g) => {
                ddl::privileges(txn, tenant, &catalog, user, &ddl::Privileges::of_grant(g)).await?
            }
            S::Revoke(r) => {
                ddl::privileges(txn, tenant, &catalog, user, &ddl::Privileges::of_revoke(r)).await?
            }
            S::DropExtension(d) => {
                let cascade = d.cascade_or_restrict == Some(ast::ReferentialAction::Cascade);
                ddl::drop_extensions(txn, tenant, &catalog, &d.names, d.if_exists, cascade).await?
            }
            S::Comment { object_type, object_name, comment, .. } => {
                ddl::comment(txn, tenant, &catalog, object_type, object_name, comment).await?
            }
            S::Analyze(_) => return Ok(Outcome::Command("ANALYZE".into())),
            other => bail!(
                FeatureNotSupported,
                "statement not supported yet: {}",
                first_words(&other.to_string())
            ),
        };
        self.finish_ddl(r).await
    }

    /// TRUNCATE of tables with TRUNCATE triggers: the BEFORE triggers of
    /// every table, in order, then the truncation, then the AFTER
    /// triggers (which see the tables empty).
    async fn truncate_with_triggers(
        &mut self,
        truncated: (Vec<Arc<catalog::TableDef>>, DdlResult),
    ) -> Result<Outcome> {
        let tenant = self.db.tenant;
        let oids: Vec<u32> = truncated.0.iter().map(|t| t.oid).collect();
        self.fire_truncate(&oids, true).await?;
        let txn = self.txn.as_mut().expect("utility statement has a transaction");
        let r = ddl::truncate(txn, tenant, truncated).await?;
        let out = self.finish_ddl(r).await?;
        self.fire_truncate(&oids, false).await?;
        Ok(out)
    }

    /// Fires the BEFORE or AFTER TRUNCATE triggers of the tables `oids`.
    async fn fire_truncate(&mut self, oids: &[u32], before: bool) -> Result<()> {
        let tenant = self.db.tenant;
        let catalog = self.catalog.clone();
        let ctx = self.eval_ctx(&[]);
        let txn = self.txn.as_mut().expect("utility statement has a transaction");
        for &oid in oids {
            let Some(t) = catalog.table_by_oid(oid) else { continue };
            let mut f = crate::triggers::Firing::new(txn, tenant, &catalog, &ctx, &t, &[]);
            f.statement(crate::triggers::Event::Truncate, before).await?;
        }
        Ok(())
    }

    /// CREATE TABLE ... AS query (and SELECT ... INTO): creates the table
    /// with the query's columns, then fills it as INSERT INTO ... query
    /// would. The tag is `SELECT n`, as in PostgreSQL.
    async fn create_table_as(
        &mut self,
        ct: &ast::CreateTable,
        query: &ast::Query,
    ) -> Result<Outcome> {
        if ct.with_data.as_ref().is_some_and(|w| w.statistics.is_some()) {
            bail!(SyntaxError, "syntax error at or near \"AND\"");
        }
        // CREATE TABLE t (a, b) AS ...: the names only (parse.rs).
        let names: Vec<String> = ct.columns.iter().map(|c| crate::bind::ident(&c.name)).collect();
        let cols = self.query_columns(query, &names, "CREATE TABLE AS")?;
        let def = ddl::table_as(ct, &cols)?;
        let tenant = self.db.tenant;
        let catalog = self.catalog.clone();
        let (ns, name, _) = ddl::new_table_name(&catalog, &ct.name, ct.temporary)?;
        let user = self.current_user().to_string();
        let txn = self.txn.as_mut().expect("utility statement has a transaction");
        let r = ddl::create_table(txn, tenant, &catalog, &def, &user).await?;
        let Some(&storage) = r.fresh.first() else {
            // IF NOT EXISTS found the table: nothing is created or filled.
            self.finish_ddl(r).await?;
            return Ok(Outcome::Command("CREATE TABLE AS".into()));
        };
        self.finish_ddl(r).await?;
        if ct.with_data.as_ref().is_some_and(|w| !w.data) {
            return Ok(Outcome::Command("CREATE TABLE AS".into()));
        }
        let n = self.fill_from_query(ns, &name, query, storage).await?;
        Ok(Outcome::Command(format!("SELECT {n}")))
    }

    /// The columns `query` gives a table made from it (CREATE TABLE AS,
    /// CREATE MATERIALIZED VIEW, which `what` names), the first ones named
    /// `names` if the statement lists any.
    fn query_columns(
        &self,
        query: &ast::Query,
        names: &[String],
        what: &str,
    ) -> Result<Vec<Column>> {
        let select = Stmt::Sql(Box::new(ast::Statement::Query(Box::new(query.clone()))));
        let (bound, _) = planner::plan(&self.catalog, &select, &[], self.current_user())?;
        let Some(mut cols) = bound.columns() else {
            bail!(InternalError, "{what} over a query without columns")
        };
        if names.len() > cols.len() {
            bail!(SyntaxError, "too many column names were specified");
        }
        for (c, name) in cols.iter_mut().zip(names) {
            c.name = name.clone();
        }
        Ok(cols)
    }

    /// Fills table `name` of schema `ns`, whose rows this statement just
    /// gave fresh storage `storage`, with `query`'s rows as INSERT INTO ...
    /// query would; the number of rows. The table is named with its
    /// schema: a temporary table of the same name must not catch them.
    async fn fill_from_query(
        &mut self,
        ns: u32,
        name: &str,
        query: &ast::Query,
        storage: u64,
    ) -> Result<u64> {
        let schema = match ns {
            catalog::TEMP_NAMESPACE_OID => "pg_temp",
            _ => self.catalog.namespace_name(ns).unwrap_or("public"),
        };
        let target = ast::ObjectName::from(vec![
            ast::Ident::with_quote('"', schema),
            ast::Ident::with_quote('"', name),
        ]);
        let insert = parse::insert_select(&target, query)?;
        let (bound, _) = planner::plan(&self.catalog, &insert, &[], self.current_user())?;
        let Bound::Insert(p) = bound.as_ref() else {
            bail!(InternalError, "a new table's rows planned as something else");
        };
        if p.table.storage != storage {
            bail!(InternalError, "a new table's rows went to another table");
        }
        let ctx = self.eval_ctx(&[]);
        let tenant = self.db.tenant;
        let catalog = self.catalog.clone();
        let txn = self.txn.as_mut().expect("DDL statement has a transaction");
        let (n, _) = dml::insert(txn, tenant, p, &ctx, &catalog, true).await?;
        Ok(n)
    }

    /// After a DDL statement: keeps its notices and new storage ids, and
    /// reads the catalog it changed.
    async fn finish_ddl(&mut self, mut r: DdlResult) -> Result<Outcome> {
        let tenant = self.db.tenant;
        for (def, restart) in std::mem::take(&mut r.sequences) {
            // Values reserved under the old definition would step by the
            // old increment or ignore the restart.
            self.db.reserved.forget(def.oid);
            if let Some((v, called)) = restart {
                self.serve_sequence_request(sequence::Request::Set(def, v, called)).await?;
            }
        }
        self.notices.extend(r.notices);
        self.fresh.extend(r.fresh);
        self.ddl = true;
        let txn = self.txn.as_ref().expect("still in the transaction");
        let cat = Arc::new(ddl::load_catalog(txn, tenant).await?);
        if r.temp_table.is_some() || !r.dropped_temp.is_empty() {
            self.temp_at_txn_start.get_or_insert_with(|| self.temp.clone());
            self.temp_epoch += 1;
            for name in &r.dropped_temp {
                self.temp.remove(name);
            }
            if let Some(mut t) = r.temp_table {
                catalog::bind_checks(&cat, &mut t)?;
                self.temp.insert(t.name.clone(), Arc::new(t));
            }
        }
        self.set_catalog(cat);
        Ok(Outcome::Command(r.tag))
    }
}

/// Waits for an advisory lock for at most `limit` (lock_timeout; None is
/// no limit), then fails with 55P03 as PostgreSQL does. Row and table lock
/// waits time out in the KV layer (`Txn::set_lock_timeout`).
async fn lock_wait<T>(
    limit: Option<std::time::Duration>,
    wait: impl std::future::Future<Output = T>,
) -> Result<T> {
    let Some(limit) = limit else { return Ok(wait.await) };
    tokio::time::timeout(limit, wait).await.map_err(|_| from_kv(kvapi::Error::LockTimeout))
}

/// Errors of a name the catalog lacks (a relation, column, function,
/// type, schema, ...): perhaps only this process's copy of it.
fn names_missing(code: &sqlstate::SqlState) -> bool {
    use sqlstate::SqlState as S;
    matches!(
        code,
        S::UndefinedTable
            | S::UndefinedColumn
            | S::UndefinedFunction
            | S::UndefinedObject
            | S::InvalidSchemaName
    )
}

fn aborted() -> ErrorReport {
    err!(
        InFailedSqlTransaction,
        "current transaction is aborted, commands ignored until end of transaction block"
    )
}

fn first_words(s: &str) -> String {
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// The tables `bound` writes (a [`Bound::With`]'s writes too).
fn written_tables(bound: &Bound) -> Vec<&Arc<crate::catalog::TableDef>> {
    match bound {
        Bound::Insert(p) => vec![&p.table],
        Bound::Update(p) => vec![&p.scan.table],
        Bound::Delete(p) => vec![&p.scan.table],
        Bound::Merge(p) => vec![&p.scan.table],
        Bound::With(w) => {
            let before = w.before.iter().map(|(_, b)| b);
            before.chain([&w.main]).chain(&w.after).flat_map(written_tables).collect()
        }
        _ => Vec::new(),
    }
}

/// The command a read-only transaction refuses, named as PostgreSQL names
/// it in the error (None for statements that only read). Asked only in a
/// read-only transaction.
fn writes(bound: &Bound, stmt: &ast::Statement) -> Option<String> {
    use ast::Statement as S;
    // PostgreSQL names the main statement, a SELECT too.
    if let Bound::With(w) = bound {
        return Some(w.main.write_command().unwrap_or("SELECT").into());
    }
    if let Some(command) = bound.write_command() {
        return Some(command.into());
    }
    if !matches!(bound, Bound::Utility) {
        return None;
    }
    match stmt {
        S::Declare { .. } | S::Fetch { .. } | S::Close { .. } | S::Analyze(_) => None,
        S::Prepare { .. } | S::Execute { .. } | S::Deallocate { .. } => None,
        S::LISTEN { .. } | S::UNLISTEN { .. } | S::NOTIFY { .. } => None,
        S::Lock(lock) => lock
            .lock_mode
            .as_ref()
            .is_none_or(|m| {
                !matches!(m, ast::LockTableMode::AccessShare | ast::LockTableMode::RowShare)
            })
            .then(|| "LOCK TABLE".into()),
        other => {
            let text = other.to_string();
            let words: Vec<&str> = text.split_whitespace().take(2).collect();
            Some(match words.as_slice() {
                [w @ ("CREATE" | "DROP" | "ALTER"), what, ..] => format!("{w} {what}"),
                [w, ..] => w.to_string(),
                [] => "statement".into(),
            })
        }
    }
}
