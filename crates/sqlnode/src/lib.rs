//! The SQL process: serves the PostgreSQL protocol for one tenant by
//! implementing [`wire::Backend`] with [`sql::Session`]s over a
//! [`kvapi::KvClient`].
//!
//! This crate is the adapter between the protocol and the engine: it decodes
//! parameters from their wire formats, encodes result rows straight into the
//! connection's output buffer, and keeps each portal's pending rows so
//! Execute with a row limit can suspend and resume. It never touches KV
//! internals; swapping the embedded client for an RPC client changes nothing
//! here.

use std::sync::Arc;

use kvapi::KvClient;
use sql::plan::Column;
use sql::{Database, Outcome, Session as SqlSession, TxnState};
use sqlstate::{ErrorReport, SqlState};
use sqltypes::{binary, text, DataType, Value, Zone};
use wire::{AuthMethod, ExecOutcome, FieldDesc, Format, Oid, Output, StartupInfo, TxnStatus};

/// Serves one tenant's SQL over the wire protocol.
pub struct SqlNode<K: KvClient> {
    db: Arc<Database<K>>,
    /// Open client sessions (the KV server learns the count: a tenant with
    /// sessions is not dropped without --force).
    sessions: Arc<Sessions>,
    /// Hears each password authentication's outcome (the proxy throttles
    /// failed ones).
    auth_hook: Option<AuthHook>,
}

type AuthHook = Box<dyn Fn(Option<std::net::IpAddr>, bool) + Send + Sync>;

/// The count of open sessions, and who is told when it changes.
#[derive(Default)]
struct Sessions {
    /// Locked while the hook runs, so it hears the counts in order.
    count: std::sync::Mutex<usize>,
    hook: Option<Box<dyn Fn(usize) + Send + Sync>>,
}

impl<K: KvClient> SqlNode<K> {
    /// A SQL node for the tenant `client` is bound to.
    pub fn new(client: K) -> SqlNode<K> {
        SqlNode {
            db: Database::new(client, hash_password),
            sessions: Arc::default(),
            auth_hook: None,
        }
    }

    /// Calls `hook` with the number of open sessions each time it changes,
    /// as a session opens or closes (the SQL process tells the KV server,
    /// before the client hears that its login succeeded).
    pub fn on_sessions(mut self, hook: impl Fn(usize) + Send + Sync + 'static) -> SqlNode<K> {
        self.sessions =
            Arc::new(Sessions { count: Default::default(), hook: Some(Box::new(hook)) });
        self
    }

    /// Calls `hook` with the client's address and whether its password was
    /// right, after each password authentication.
    pub fn on_auth(
        mut self,
        hook: impl Fn(Option<std::net::IpAddr>, bool) + Send + Sync + 'static,
    ) -> SqlNode<K> {
        self.auth_hook = Some(Box::new(hook));
        self
    }

    /// Loads the catalog (tables and roles) before serving.
    pub async fn init(&self) -> Result<(), ErrorReport> {
        self.db.refresh().await
    }
}

/// Stores passwords as SCRAM-SHA-256 verifiers, as PostgreSQL does.
fn hash_password(password: &str) -> String {
    wire::scram::format_verifier(&wire::scram::scram_verifier(password))
}

impl<K: KvClient> wire::Backend for SqlNode<K> {
    type Session = NodeSession<K>;

    fn auth_outcome(&self, client: Option<std::net::IpAddr>, ok: bool) {
        if let Some(hook) = &self.auth_hook {
            hook(client, ok);
        }
    }

    /// Roles with a password authenticate with SCRAM-SHA-256 (from anywhere);
    /// roles without one are trusted on loopback and unix sockets only.
    fn auth_method(&self, startup: &StartupInfo, local: bool) -> Result<AuthMethod, ErrorReport> {
        let user = &startup.user;
        let fatal = |code, msg: String| Err(ErrorReport::fatal(code, msg));
        let Some(role) = self.db.catalog().role(user) else {
            return fatal(
                SqlState::InvalidAuthorizationSpecification,
                format!("role \"{user}\" does not exist"),
            );
        };
        if !role.login {
            return fatal(
                SqlState::InvalidAuthorizationSpecification,
                format!("role \"{user}\" is not permitted to log in"),
            );
        }
        if let Some(stored) = &role.password {
            return match wire::scram::parse_verifier(stored) {
                Some(v) => Ok(AuthMethod::ScramSha256(v)),
                None => fatal(
                    SqlState::InvalidPassword,
                    format!("password authentication failed for user \"{user}\""),
                ),
            };
        }
        if !local {
            let msg = format!("no pg_hba.conf entry for user \"{user}\": only local connections are trusted without a password");
            return fatal(SqlState::InvalidAuthorizationSpecification, msg);
        }
        Ok(AuthMethod::Trust)
    }

    async fn open(&self, startup: &StartupInfo) -> Result<NodeSession<K>, ErrorReport> {
        self.open_session(startup).await
    }

    /// A moved session: opened as at login, then given its state back.
    async fn resume(
        &self,
        startup: &StartupInfo,
        state: &str,
    ) -> Result<NodeSession<K>, ErrorReport> {
        let carried: sql::Carried = serde_json::from_str(state).map_err(|e| {
            ErrorReport::new(SqlState::InternalError, format!("bad session state: {e}"))
        })?;
        let mut s = self.open_session(startup).await?;
        s.inner.adopt(carried).await?;
        Ok(s)
    }
}

impl<K: KvClient> SqlNode<K> {
    /// Opens a session for a client that logged in with `startup`.
    async fn open_session(&self, startup: &StartupInfo) -> Result<NodeSession<K>, ErrorReport> {
        if startup.database != "postgres" {
            return Err(ErrorReport::fatal(
                SqlState::InvalidCatalogName,
                format!("database \"{}\" does not exist", startup.database),
            ));
        }
        let mut session = SqlSession::new(self.db.clone());
        session.refresh_catalog().await?;
        session.set_user(&startup.user);
        session
            .check_connect()
            .map_err(|e| ErrorReport { severity: sqlstate::Severity::Fatal, ..e })?;
        let interrupt = Box::new(Interrupt(startup.control.clone()));
        let addrs = startup.client_addr.zip(startup.server_addr);
        session.attach(startup.pid, addrs, interrupt);
        for (k, v) in &startup.params {
            // Unknown startup parameters are errors in PostgreSQL too, but
            // drivers send a few harmless ones; report only real failures.
            if let Err(e) = session.startup_param(k, v) {
                if e.code != SqlState::UndefinedObject {
                    return Err(ErrorReport { severity: sqlstate::Severity::Fatal, ..e });
                }
            }
        }
        Ok(NodeSession { inner: session, _count: SessionCount::new(&self.sessions) })
    }
}

/// pg_cancel_backend and pg_terminate_backend reach a connection through
/// the wire layer's control.
struct Interrupt(wire::ConnControl);

impl sql::backends::Interrupt for Interrupt {
    fn cancel(&self) {
        self.0.cancel();
    }

    fn terminate(&self) {
        self.0.terminate();
    }

    fn cancels(&self) -> u64 {
        self.0.cancels()
    }
}

/// A connection's session: the SQL session plus wire-format handling.
pub struct NodeSession<K: KvClient> {
    inner: SqlSession<K>,
    _count: SessionCount,
}

/// Counts a session in [`SqlNode::sessions`] while it lives.
struct SessionCount(Arc<Sessions>);

impl SessionCount {
    fn new(s: &Arc<Sessions>) -> SessionCount {
        s.change(|n| n + 1);
        SessionCount(s.clone())
    }
}

impl Sessions {
    fn change(&self, f: impl FnOnce(usize) -> usize) {
        let mut n = self.count.lock().unwrap_or_else(|p| p.into_inner());
        *n = f(*n);
        if let Some(h) = &self.hook {
            h(*n);
        }
    }
}

impl Drop for SessionCount {
    fn drop(&mut self) {
        self.0.change(|n| n.saturating_sub(1));
    }
}

/// A prepared statement as the wire layer sees it.
pub struct Statement {
    prepared: Arc<sql::Prepared>,
}

impl wire::Statement for Statement {
    fn param_types(&self) -> Vec<Oid> {
        self.prepared.param_types.iter().map(DataType::oid).collect()
    }

    fn fields(&self) -> Option<Vec<FieldDesc>> {
        self.prepared.columns.as_ref().map(|cols| fields(cols, &[]))
    }

    fn source(&self) -> Option<&str> {
        Some(&self.prepared.parsed.source)
    }

    fn portal_fetch(&self) -> Option<wire::PortalFetch> {
        let sql::parse::Stmt::Fetch(f) = &self.prepared.parsed.stmt else { return None };
        let forward = match f.direction {
            sql::cursor::Direction::Forward(n) if n > 0 => {
                Some(if n == sql::cursor::ALL { u64::MAX } else { n as u64 })
            }
            // BACKWARD -n goes forward.
            sql::cursor::Direction::Backward(n) if n < 0 => Some(n.unsigned_abs()),
            _ => None,
        };
        Some(wire::PortalFetch { portal: f.cursor.clone(), forward, moving: f.moving })
    }

    fn deallocates(&self) -> Option<wire::Deallocate> {
        Some(match self.prepared.parsed.stmt.deallocates()? {
            n if n == "all" => wire::Deallocate::All,
            n => wire::Deallocate::Name(n),
        })
    }
}

/// A bound portal plus its not-yet-sent rows.
pub struct Portal {
    portal: sql::Portal,
    columns: Option<Vec<Column>>,
    formats: Vec<Format>,
    pending: Option<Pending>,
}

struct Pending {
    rows: std::vec::IntoIter<Vec<Value>>,
    tag: String,
    /// An earlier Execute of this portal stopped at its row limit.
    resumed: bool,
}

impl wire::Portal for Portal {
    fn fields(&self) -> Option<Vec<FieldDesc>> {
        self.columns.as_ref().map(|c| fields(c, &self.formats))
    }
}

fn fields(cols: &[Column], formats: &[Format]) -> Vec<FieldDesc> {
    cols.iter()
        .enumerate()
        .map(|(i, c)| FieldDesc {
            name: c.name.clone(),
            table_oid: c.table_oid,
            column_id: c.column_id,
            type_oid: c.ty.oid(),
            type_size: c.ty.typlen(),
            type_modifier: c.ty.typmod(),
            format: format_at(formats, i),
        })
        .collect()
}

fn format_at(formats: &[Format], i: usize) -> Format {
    match formats.len() {
        0 => Format::Text,
        1 => formats[0],
        _ => formats.get(i).copied().unwrap_or(Format::Text),
    }
}

fn decode_param(
    ty: &DataType,
    bytes: &[u8],
    format: Format,
    zone: &Zone,
) -> Result<Value, ErrorReport> {
    match format {
        Format::Binary => binary::decode_binary(ty, bytes),
        Format::Text => match std::str::from_utf8(bytes) {
            Ok(s) => text::parse_text_in(ty, s, zone),
            Err(_) => Err(ErrorReport::new(
                SqlState::CharacterNotInRepertoire,
                "invalid byte sequence for encoding \"UTF8\"",
            )),
        },
    }
}

fn write_rows(
    out: &mut Output,
    rows: &mut std::vec::IntoIter<Vec<Value>>,
    formats: &[Format],
    max: usize,
    zone: &Zone,
) -> bool {
    let mut n = 0;
    while max == 0 || n < max {
        let Some(row) = rows.next() else { return false };
        out.begin_row(row.len());
        for (i, v) in row.iter().enumerate() {
            if v.is_null() {
                out.null_field();
                continue;
            }
            match format_at(formats, i) {
                Format::Text => out.field_with(|buf| text::write_text_in(v, zone, buf)),
                Format::Binary => out.field_with(|buf| binary::write_binary(v, buf)),
            }
        }
        out.end_row();
        n += 1;
    }
    rows.len() > 0
}

impl<K: KvClient> wire::Session for NodeSession<K> {
    type Statement = Statement;
    type Portal = Portal;

    fn parameter_status(&self) -> Vec<(String, String)> {
        self.inner.parameter_status()
    }

    fn changed_parameters(&mut self) -> Vec<(String, String)> {
        self.inner.changed_parameters()
    }

    fn timeouts(&self) -> wire::Timeouts {
        let limit = |key| self.inner.timeout(key);
        wire::Timeouts {
            statement: limit("statement_timeout"),
            idle_in_transaction: limit("idle_in_transaction_session_timeout"),
            idle_session: limit("idle_session_timeout"),
        }
    }

    fn txn_status(&self) -> TxnStatus {
        match self.inner.txn_state() {
            TxnState::Idle | TxnState::Implicit => TxnStatus::Idle,
            TxnState::Block => TxnStatus::InBlock,
            TxnState::Failed => TxnStatus::Failed,
        }
    }

    async fn prepare(
        &mut self,
        sql: &str,
        param_types: &[Oid],
    ) -> Result<Vec<Arc<Statement>>, ErrorReport> {
        let declared = self.inner.declared_types(param_types)?;
        let stmts = self.inner.prepare(sql, &declared).await?;
        Ok(stmts.into_iter().map(|prepared| Arc::new(Statement { prepared })).collect())
    }

    fn bind(
        &mut self,
        stmt: &Arc<Statement>,
        params: &[Option<&[u8]>],
        param_formats: &[Format],
        result_formats: &[Format],
    ) -> Result<Portal, ErrorReport> {
        let types = &stmt.prepared.param_types;
        if params.len() != types.len() {
            return Err(ErrorReport::new(
                SqlState::ProtocolViolation,
                format!(
                    "bind message supplies {} parameters, but prepared statement requires {}",
                    params.len(),
                    types.len()
                ),
            ));
        }
        let mut values = Vec::with_capacity(params.len());
        let zone = self.inner.zone();
        for (i, p) in params.iter().enumerate() {
            values.push(match p {
                None => Value::Null,
                Some(bytes) => decode_param(&types[i], bytes, format_at(param_formats, i), &zone)?,
            });
        }
        let portal = self.inner.bind(&stmt.prepared, values)?;
        let columns = portal.columns();
        Ok(Portal { portal, columns, formats: result_formats.to_vec(), pending: None })
    }

    async fn execute<'a>(
        &'a mut self,
        portal: &'a mut Portal,
        max_rows: usize,
        out: &'a mut Output,
    ) -> Result<ExecOutcome, ErrorReport> {
        if portal.pending.is_none() {
            match self.inner.execute(&portal.portal).await? {
                Outcome::Rows(rows, tag) => {
                    portal.pending = Some(Pending { rows: rows.into_iter(), tag, resumed: false })
                }
                Outcome::Command(tag) => return Ok(ExecOutcome::Complete(tag)),
                Outcome::Empty => return Ok(ExecOutcome::Empty),
                Outcome::CopyIn { columns, binary } => {
                    let format = if binary { Format::Binary } else { Format::Text };
                    return Ok(ExecOutcome::CopyIn { format, columns });
                }
                Outcome::CopyOut { columns, binary, data: lines, count } => {
                    out.copy_out_start(columns, binary);
                    for l in &lines {
                        out.copy_data(l);
                    }
                    out.copy_done();
                    return Ok(ExecOutcome::Complete(format!("COPY {count}")));
                }
            }
        }
        let pending = portal.pending.as_mut().expect("pending rows were just set");
        if portal.columns.is_none() {
            // DML without RETURNING: no rows to send.
            return Ok(ExecOutcome::Complete(pending.tag.clone()));
        }
        let before = out.rows_written();
        let zone = self.inner.zone();
        if write_rows(out, &mut pending.rows, &portal.formats, max_rows, &zone) {
            pending.resumed = true;
            return Ok(ExecOutcome::Suspended);
        }
        // A SELECT finished by a resumed Execute reports the rows of that
        // Execute only, as PostgreSQL does.
        if pending.resumed && pending.tag.starts_with("SELECT ") {
            return Ok(ExecOutcome::Complete(format!("SELECT {}", out.rows_written() - before)));
        }
        Ok(ExecOutcome::Complete(pending.tag.clone()))
    }

    fn cancelled(&mut self) {
        self.inner.cancelled();
    }

    async fn sync(&mut self) -> Result<(), ErrorReport> {
        self.inner.sync().await
    }

    async fn copy_in_data<'a>(&'a mut self, data: &'a [u8]) -> Result<(), ErrorReport> {
        self.inner.copy_data(data).await
    }

    async fn copy_in_done(&mut self) -> Result<String, ErrorReport> {
        self.inner.copy_done().await
    }

    fn copy_in_fail(&mut self, message: &str) -> ErrorReport {
        self.inner.copy_fail(message)
    }

    fn take_notices(&mut self) -> Vec<ErrorReport> {
        self.inner.take_notices()
    }

    fn take_notifications(&mut self) -> Vec<wire::Notification> {
        let notes = self.inner.take_notifications();
        notes
            .into_iter()
            .map(|n| wire::Notification { pid: n.pid, channel: n.channel, payload: n.payload })
            .collect()
    }

    fn notified(&self) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.inner.notified()
    }

    fn cursor_fields(&self, name: &str) -> Option<Vec<FieldDesc>> {
        self.inner.cursor_columns_named(name).map(|cols| fields(&cols, &[]))
    }

    fn export(&self) -> Result<String, String> {
        let carried = self.inner.carry()?;
        serde_json::to_string(&carried).map_err(|e| e.to_string())
    }

    fn close(&mut self) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.inner.close()
    }
}
pub use sql::warm_up;
