//! The contract between the protocol layer and whatever executes queries.
//!
//! The wire layer owns the socket, message framing, authentication, the
//! extended-protocol state machine (named statements and portals, error
//! recovery until Sync), COPY sub-protocol and cancellation. It knows nothing
//! about SQL: it hands strings and parameter bytes to a [`Session`] and writes
//! back what the session produces through an [`Output`].
//!
//! Transactions follow PostgreSQL's rule: a statement outside an explicit
//! transaction block runs in an implicit transaction that ends at the next
//! Sync (extended protocol) or at the end of the query string (simple
//! protocol, which behaves as if a Sync followed it). The wire layer calls
//! [`Session::sync`] at those points and never flushes results to the client
//! before it, so no client hears of a commit before it is durable.

use std::future::Future;
use std::sync::Arc;

use sqlstate::ErrorReport;

pub use crate::output::Output;

/// A type OID, as PostgreSQL numbers types (23 = int4, 25 = text, ...).
pub type Oid = u32;

/// What the client sent in its StartupMessage.
#[derive(Debug, Clone, Default)]
pub struct StartupInfo {
    /// The `user` parameter.
    pub user: String,
    /// The `database` parameter (defaults to the user name, as in PostgreSQL).
    pub database: String,
    /// Every other parameter (application_name, client_encoding, options, ...).
    pub params: Vec<(String, String)>,
    /// The pid the connection is given in BackendKeyData (what
    /// pg_backend_pid() must return).
    pub pid: i32,
    /// The client's address; None for a unix socket.
    pub client_addr: Option<std::net::SocketAddr>,
    /// The server's address the client reached (inet_server_addr); None
    /// for a unix socket.
    pub server_addr: Option<std::net::SocketAddr>,
    /// Cancels the connection's statement or ends the connection
    /// (pg_cancel_backend, pg_terminate_backend).
    pub control: crate::cancel::ConnControl,
}

/// An asynchronous notification (NOTIFY) for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The pid of the notifying session.
    pub pid: i32,
    /// The channel.
    pub channel: String,
    /// The payload ("" when none was given).
    pub payload: String,
}

/// How a connecting user must prove who they are.
#[derive(Debug, Clone)]
pub enum AuthMethod {
    /// No proof needed.
    Trust,
    /// SCRAM-SHA-256 against this stored verifier.
    ScramSha256(ScramVerifier),
}

/// A SCRAM-SHA-256 verifier as PostgreSQL stores it in pg_authid.rolpassword:
/// `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64 parts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramVerifier {
    /// PBKDF2 iteration count.
    pub iterations: u32,
    /// The salt.
    pub salt: Vec<u8>,
    /// H(ClientKey).
    pub stored_key: [u8; 32],
    /// HMAC(SaltedPassword, "Server Key").
    pub server_key: [u8; 32],
}

/// Wire format of a parameter or result column: 0 = text, 1 = binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Text format (code 0).
    #[default]
    Text,
    /// Binary format (code 1).
    Binary,
}

/// One column of a RowDescription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDesc {
    /// Column name shown to the client.
    pub name: String,
    /// OID of the source table, or 0.
    pub table_oid: u32,
    /// Attribute number in the source table, or 0.
    pub column_id: i16,
    /// Type OID.
    pub type_oid: Oid,
    /// pg_type.typlen (-1 for variable length).
    pub type_size: i16,
    /// Type modifier (e.g. varchar length + 4), or -1.
    pub type_modifier: i32,
    /// Format the values will be sent in.
    pub format: Format,
}

/// The transaction state reported in ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnStatus {
    /// 'I': not in a transaction block.
    Idle,
    /// 'T': in a transaction block.
    InBlock,
    /// 'E': in a failed transaction block (until ROLLBACK).
    Failed,
}

/// How an Execute ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecOutcome {
    /// The statement finished; the string is the CommandComplete tag
    /// (e.g. `SELECT 3`, `INSERT 0 1`, `BEGIN`).
    Complete(String),
    /// The row limit was reached and the portal has more rows (PortalSuspended).
    Suspended,
    /// The statement was empty (EmptyQueryResponse).
    Empty,
    /// COPY FROM STDIN: the wire layer sends CopyInResponse with these column
    /// formats, feeds CopyData to [`Session::copy_in_data`] and finishes with
    /// [`Session::copy_in_done`] or [`Session::copy_in_fail`].
    CopyIn {
        /// Overall format (text/CSV are Text; binary COPY is Binary).
        format: Format,
        /// Number of columns.
        columns: usize,
    },
}

/// A query engine that serves connections. One per server; shared by all
/// connections.
pub trait Backend: Send + Sync + 'static {
    /// Per-connection state.
    type Session: Session;

    /// How `startup.user` must authenticate. `local` is true for loopback TCP
    /// and unix sockets. An Err rejects the connection with that report.
    fn auth_method(&self, startup: &StartupInfo, local: bool) -> Result<AuthMethod, ErrorReport>;

    /// Hears how a password authentication from `client` (None: not over
    /// TCP) ended: `ok`, or a wrong password. Called before the client
    /// hears it, so whoever counts failures has counted this one before a
    /// retry can arrive.
    fn auth_outcome(&self, client: Option<std::net::IpAddr>, ok: bool) {
        let _ = (client, ok);
    }

    /// Opens a session after authentication succeeded.
    fn open(
        &self,
        startup: &StartupInfo,
    ) -> impl Future<Output = Result<Self::Session, ErrorReport>> + Send;

    /// Opens a session moved here from another process, for the client
    /// `startup` describes (already authenticated there), with the state
    /// its [`Session::export`] gave. The default: sessions cannot move here.
    fn resume(
        &self,
        startup: &StartupInfo,
        state: &str,
    ) -> impl Future<Output = Result<Self::Session, ErrorReport>> + Send {
        let _ = (startup, state);
        async {
            Err(ErrorReport::new(
                sqlstate::SqlState::FeatureNotSupported,
                "this server does not take moved sessions",
            ))
        }
    }
}

/// The time limits the wire layer enforces for a session (PostgreSQL's
/// statement_timeout, idle_in_transaction_session_timeout and
/// idle_session_timeout); None is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeouts {
    /// How long one statement (one Execute) may run before it is cancelled
    /// with 57014.
    pub statement: Option<std::time::Duration>,
    /// How long the connection may wait for the client inside a
    /// transaction block before it is closed with FATAL 25P03.
    pub idle_in_transaction: Option<std::time::Duration>,
    /// How long the connection may wait for the client outside a
    /// transaction before it is closed with FATAL 57P05.
    pub idle_session: Option<std::time::Duration>,
}

/// One client connection's query state: transactions, settings, prepared
/// statements' plans. Statements and portals are created here but stored by
/// the wire layer, which maps protocol names to them.
pub trait Session: Send + 'static {
    /// A parsed and planned statement (Parse).
    type Statement: Statement;
    /// A statement bound to parameter values (Bind).
    type Portal: Portal;

    /// ParameterStatus pairs sent after authentication (server_version,
    /// client_encoding, DateStyle, TimeZone, integer_datetimes,
    /// standard_conforming_strings, application_name, ...).
    fn parameter_status(&self) -> Vec<(String, String)>;

    /// ParameterStatus pairs that changed since the last call (after SET),
    /// which the wire layer reports before ReadyForQuery.
    fn changed_parameters(&mut self) -> Vec<(String, String)>;

    /// The status for the next ReadyForQuery.
    fn txn_status(&self) -> TxnStatus;

    /// How long a statement may run and the connection may sit idle, read
    /// before each statement and each wait for the client. The default: no
    /// limits.
    fn timeouts(&self) -> Timeouts {
        Timeouts::default()
    }

    /// Parses a query string into its statements (simple protocol: many
    /// allowed; extended protocol: the wire layer rejects more than one).
    /// `param_types` are the client's declared parameter types (0 = unknown).
    fn prepare(
        &mut self,
        sql: &str,
        param_types: &[Oid],
    ) -> impl Future<Output = Result<Vec<Arc<Self::Statement>>, ErrorReport>> + Send;

    /// Binds parameter values. `params[i]` is None for NULL; `param_formats`
    /// and `result_formats` follow the protocol's 0/1/N convention already
    /// expanded to one entry per parameter/column by the wire layer (an empty
    /// `result_formats` means all text).
    fn bind(
        &mut self,
        stmt: &Arc<Self::Statement>,
        params: &[Option<&[u8]>],
        param_formats: &[Format],
        result_formats: &[Format],
    ) -> Result<Self::Portal, ErrorReport>;

    /// Runs a portal, writing at most `max_rows` DataRows (0 = no limit) to
    /// `out`. The wire layer may drop this future to cancel the statement and
    /// then calls [`Session::cancelled`].
    fn execute<'a>(
        &'a mut self,
        portal: &'a mut Self::Portal,
        max_rows: usize,
        out: &'a mut Output,
    ) -> impl Future<Output = Result<ExecOutcome, ErrorReport>> + Send + 'a;

    /// Called after an `execute` future was dropped (cancel request, client
    /// gone): the session must undo the statement's partial effects and put
    /// its transaction into the state an error would have.
    fn cancelled(&mut self);

    /// Ends the implicit transaction, if one is open (commit if it succeeded,
    /// roll back if it failed). Explicit transaction blocks stay open.
    fn sync(&mut self) -> impl Future<Output = Result<(), ErrorReport>> + Send + '_;

    /// One CopyData message's payload during COPY FROM STDIN.
    fn copy_in_data<'a>(
        &'a mut self,
        data: &'a [u8],
    ) -> impl Future<Output = Result<(), ErrorReport>> + Send + 'a;

    /// CopyDone: returns the CommandComplete tag (`COPY n`).
    fn copy_in_done(&mut self) -> impl Future<Output = Result<String, ErrorReport>> + Send + '_;

    /// CopyFail (or a protocol error during COPY): abort the COPY with an error.
    fn copy_in_fail(&mut self, message: &str) -> ErrorReport;

    /// Drains notices (warnings such as "there is no transaction in progress")
    /// raised by the last call, which the wire layer sends as NoticeResponse.
    fn take_notices(&mut self) -> Vec<ErrorReport>;

    /// The result fields of the open SQL cursor `name` (DECLARE), which
    /// Describe of a portal by that name reports. The default: none.
    fn cursor_fields(&self, _name: &str) -> Option<Vec<FieldDesc>> {
        None
    }

    /// Notifications to deliver now (LISTEN/NOTIFY). The wire layer asks
    /// before each ReadyForQuery and whenever [`Session::notified`] fires
    /// while the connection waits for the client; the session returns none
    /// while a transaction is open. The default: none.
    fn take_notifications(&mut self) -> Vec<Notification> {
        Vec::new()
    }

    /// Resolves when notifications may have arrived (a spurious wake-up is
    /// harmless). The default never resolves.
    fn notified(&self) -> impl Future<Output = ()> + Send + '_ {
        std::future::pending()
    }

    /// The session's state for a move to another process
    /// ([`crate::migrate`]), asked only between transactions; Err says why
    /// it cannot move now (temporary tables, say). The default: never.
    fn export(&self) -> Result<String, String> {
        Err("this server cannot move sessions".into())
    }

    /// The connection has ended (Terminate, EOF, a fatal error or a move):
    /// release what the session holds. The default does nothing.
    fn close(&mut self) -> impl Future<Output = ()> + Send + '_ {
        async {}
    }
}

/// A prepared statement's description (for Describe Statement).
pub trait Statement: Send + Sync + 'static {
    /// Parameter type OIDs, inferred where the client left them unknown.
    fn param_types(&self) -> Vec<Oid>;
    /// The result columns (text format), or None if it returns no rows.
    fn fields(&self) -> Option<Vec<FieldDesc>>;
    /// The query string it was parsed from, to prepare it again in
    /// another process (None: it cannot move). The default: None.
    fn source(&self) -> Option<&str> {
        None
    }

    /// If it is `FETCH` or `MOVE`: what it asks of the cursor it names.
    /// In PostgreSQL protocol-level portals and SQL cursors share one
    /// namespace, so when the session has no SQL cursor of that name and
    /// the connection has a portal of it (asyncpg's `Cursor.forward` sends
    /// `MOVE FORWARD n "<its portal>"`), the wire layer runs it on that
    /// portal. The default: None.
    fn portal_fetch(&self) -> Option<PortalFetch> {
        None
    }

    /// If it is `DEALLOCATE`: which prepared statements it drops. Those of
    /// the protocol (Parse) are the wire layer's, which drops them itself
    /// (one namespace with SQL PREPARE, as in PostgreSQL: psycopg drops its
    /// statements this way). The default: None.
    fn deallocates(&self) -> Option<Deallocate> {
        None
    }
}

/// What a `DEALLOCATE` drops ([`Statement::deallocates`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deallocate {
    /// `DEALLOCATE ALL`.
    All,
    /// `DEALLOCATE name`.
    Name(String),
}

/// A `FETCH` or `MOVE` of a cursor that may be a protocol-level portal
/// ([`Statement::portal_fetch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortalFetch {
    /// The cursor's name.
    pub portal: String,
    /// How many rows forward (`u64::MAX`: all), or None for any other
    /// direction, which a portal cannot go (55000, as a NO SCROLL cursor).
    pub forward: Option<u64>,
    /// MOVE: the rows are skipped, not sent.
    pub moving: bool,
}

/// A bound portal's description (for Describe Portal and simple queries).
pub trait Portal: Send + 'static {
    /// The result columns with the formats chosen at Bind, or None.
    fn fields(&self) -> Option<Vec<FieldDesc>>;
}

/// Handed to [`crate::serve`]: shared server-wide state such as the cancel
/// key registry lives behind this.
pub type SharedBackend<B> = Arc<B>;
