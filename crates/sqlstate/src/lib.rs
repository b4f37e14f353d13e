//! SQLSTATE codes and the error report every failure becomes.
//!
//! This leaf crate exists so that the code of every error Strata emits is
//! spelled exactly once: the wire layer encodes an [`ErrorReport`] into an
//! ErrorResponse, the SQL layer creates them, and neither needs to see the
//! other. A typo in a string literal would be a wrong code that nobody
//! notices; a typo in a variant name does not compile.

use std::fmt;

macro_rules! sqlstates {
    ($($(#[$doc:meta])* $name:ident = $code:literal,)*) => {
        /// A PostgreSQL SQLSTATE code (appendix A of the PostgreSQL manual).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum SqlState {
            $($(#[$doc])* $name,)*
            /// Any other five-character code, as a PL/pgSQL RAISE may
            /// give (`ERRCODE = 'U0001'`).
            Custom([u8; 5]),
        }

        impl SqlState {
            /// The five-character code sent to clients.
            pub fn code(&self) -> &str {
                match self {
                    $(SqlState::$name => $code,)*
                    SqlState::Custom(c) => std::str::from_utf8(c).unwrap_or("XX000"),
                }
            }

            /// The state with this code: a named one, or a custom one if
            /// the code is five digits or upper-case letters.
            pub fn from_code(code: &str) -> Option<SqlState> {
                match code {
                    $($code => Some(SqlState::$name),)*
                    _ => {
                        let b: [u8; 5] = code.as_bytes().try_into().ok()?;
                        b.iter()
                            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
                            .then_some(SqlState::Custom(b))
                    }
                }
            }

            /// The state PL/pgSQL's condition name stands for
            /// (`unique_violation`; the variant's name in snake case).
            pub fn from_condition(name: &str) -> Option<SqlState> {
                $(if snake_is(stringify!($name), name) {
                    return Some(SqlState::$name);
                })*
                None
            }
        }
    };
}

/// True if `snake` is `camel` (`UniqueViolation`) in snake case
/// (`unique_violation`).
fn snake_is(camel: &str, snake: &str) -> bool {
    let mut want = snake.bytes();
    for (i, c) in camel.bytes().enumerate() {
        if c.is_ascii_uppercase() && i > 0 && want.next() != Some(b'_') {
            return false;
        }
        if want.next() != Some(c.to_ascii_lowercase()) {
            return false;
        }
    }
    want.next().is_none()
}

sqlstates! {
    /// 00000
    SuccessfulCompletion = "00000",
    /// 01000
    Warning = "01000",
    /// 25001: BEGIN inside a transaction block (a warning in PostgreSQL).
    ActiveSqlTransaction = "25001",
    /// 25P01: COMMIT/ROLLBACK outside a transaction block (a warning).
    NoActiveSqlTransaction = "25P01",
    /// 25P02: commands ignored until end of transaction block.
    InFailedSqlTransaction = "25P02",
    /// 25006
    ReadOnlySqlTransaction = "25006",
    /// 2D000: COMMIT or ROLLBACK in a body that may not end its
    /// transaction.
    InvalidTransactionTermination = "2D000",
    /// 42P20: a window function where none is allowed, or a bad frame.
    WindowingError = "42P20",
    /// 2BP01: DROP of an object others depend on (without CASCADE).
    DependentObjectsStillExist = "2BP01",
    /// 42P17: an object definition that cannot work (e.g. recursive views).
    InvalidObjectDefinition = "42P17",
    /// 428C9: a value given for a GENERATED ALWAYS identity column.
    GeneratedAlways = "428C9",
    /// 3B001: ROLLBACK TO / RELEASE of a savepoint that does not exist.
    InvalidSavepointSpecification = "3B001",
    /// 08P01
    ProtocolViolation = "08P01",
    /// 08006
    ConnectionFailure = "08006",
    /// 08004: the server refused the connection (a throttled login).
    SqlserverRejectedEstablishmentOfSqlconnection = "08004",
    /// 0A000
    FeatureNotSupported = "0A000",
    /// 22000
    DataException = "22000",
    /// 22001
    StringDataRightTruncation = "22001",
    /// 22003
    NumericValueOutOfRange = "22003",
    /// 22007
    InvalidDatetimeFormat = "22007",
    /// 22008
    DatetimeFieldOverflow = "22008",
    /// 22012
    DivisionByZero = "22012",
    /// 22015: an interval field or result out of range.
    IntervalFieldOverflow = "22015",
    /// 22009: a time zone offset out of range.
    InvalidTimeZoneDisplacementValue = "22009",
    /// 22P05: a JSON \u0000 escape or other unrepresentable character.
    UntranslatableCharacter = "22P05",
    /// 22013: a negative window frame offset.
    InvalidPrecedingOrFollowingSize = "22013",
    /// 22014: ntile() with a bucket count below one.
    InvalidArgumentForNtileFunction = "22014",
    /// 22016: nth_value() with a position below one.
    InvalidArgumentForNthValue = "22016",
    /// 22011
    SubstringError = "22011",
    /// 2201F
    InvalidArgumentForPowerFunction = "2201F",
    /// 2201E: log of zero or of a negative number
    InvalidArgumentForLog = "2201E",
    /// 2201G: width_bucket's bounds or count
    InvalidArgumentForWidthBucketFunction = "2201G",
    /// 22008 is above; 2200H
    SequenceGeneratorLimitExceeded = "2200H",
    /// 22021
    CharacterNotInRepertoire = "22021",
    /// 22023
    InvalidParameterValue = "22023",
    /// 2201W
    InvalidRowCountInLimitClause = "2201W",
    /// 2202E
    ArraySubscriptError = "2202E",
    /// 22P02
    InvalidTextRepresentation = "22P02",
    /// 22P03
    InvalidBinaryRepresentation = "22P03",
    /// 22P04
    BadCopyFileFormat = "22P04",
    /// 22004
    NullValueNotAllowed = "22004",
    /// 22026
    StringDataLengthMismatch = "22026",
    /// 2201B
    InvalidRegularExpression = "2201B",
    /// 22025
    InvalidEscapeSequence = "22025",
    /// 2200C
    InvalidUseOfEscapeCharacter = "2200C",
    /// 23502
    NotNullViolation = "23502",
    /// 23505
    UniqueViolation = "23505",
    /// 21000
    CardinalityViolation = "21000",
    /// 23503
    ForeignKeyViolation = "23503",
    /// 23514
    CheckViolation = "23514",
    /// 44000: a row written through a view WITH CHECK OPTION falls outside it.
    WithCheckOptionViolation = "44000",
    /// 26000
    InvalidSqlStatementName = "26000",
    /// 34000
    InvalidCursorName = "34000",
    /// 24000: a cursor in the wrong state (not on a row, pinned).
    InvalidCursorState = "24000",
    /// 42P11: a cursor over a statement that returns no rows.
    InvalidCursorDefinition = "42P11",
    /// 28000
    InvalidAuthorizationSpecification = "28000",
    /// 28P01
    InvalidPassword = "28P01",
    /// 3D000
    InvalidCatalogName = "3D000",
    /// 3F000
    InvalidSchemaName = "3F000",
    /// 58P01: a file the server needs is missing
    UndefinedFile = "58P01",
    /// 39000
    ExternalRoutineInvocationException = "39000",
    /// 40001
    SerializationFailure = "40001",
    /// 40P01
    DeadlockDetected = "40P01",
    /// 42000
    SyntaxErrorOrAccessRuleViolation = "42000",
    /// 42601
    SyntaxError = "42601",
    /// 42501
    InsufficientPrivilege = "42501",
    /// 42712: a table name or alias given twice in one FROM.
    DuplicateAlias = "42712",
    /// 0LP01: a GRANT or REVOKE that cannot be done (a privilege the
    /// object's kind lacks, a circular role membership).
    InvalidGrantOperation = "0LP01",
    /// 42602
    InvalidName = "42602",
    /// 42703
    UndefinedColumn = "42703",
    /// 42704
    UndefinedObject = "42704",
    /// 42P01
    UndefinedTable = "42P01",
    /// 42883
    UndefinedFunction = "42883",
    /// 42725: several functions match a name
    AmbiguousFunction = "42725",
    /// 42723: a function of that name and argument types exists
    DuplicateFunction = "42723",
    /// 42P13: a function definition that cannot work
    InvalidFunctionDefinition = "42P13",
    /// 42P02
    UndefinedParameter = "42P02",
    /// 42P07
    DuplicateTable = "42P07",
    /// 42701
    DuplicateColumn = "42701",
    /// 42710
    DuplicateObject = "42710",
    /// 42P06
    DuplicateSchema = "42P06",
    /// 42939: a name reserved for the system (`pg_` schemas)
    ReservedName = "42939",
    /// 42P16
    InvalidTableDefinition = "42P16",
    /// 42702
    AmbiguousColumn = "42702",
    /// 42803
    GroupingError = "42803",
    /// 42804
    DatatypeMismatch = "42804",
    /// 42P18
    IndeterminateDatatype = "42P18",
    /// 42846
    CannotCoerce = "42846",
    /// 42809
    WrongObjectType = "42809",
    /// 42P10
    InvalidColumnReference = "42P10",
    /// 42830
    InvalidForeignKey = "42830",
    /// 42611
    InvalidColumnDefinition = "42611",
    /// 42P03
    DuplicateCursor = "42P03",
    /// 42P05
    DuplicatePreparedStatement = "42P05",
    /// 54000
    ProgramLimitExceeded = "54000",
    /// 54001
    StatementTooComplex = "54001",
    /// 54011
    TooManyColumns = "54011",
    /// 54023
    TooManyArguments = "54023",
    /// 53200
    OutOfMemory = "53200",
    /// 53300
    TooManyConnections = "53300",
    /// 55000
    ObjectNotInPrerequisiteState = "55000",
    /// 55P02
    CantChangeRuntimeParam = "55P02",
    /// 55006
    ObjectInUse = "55006",
    /// 55P03
    LockNotAvailable = "55P03",
    /// 57014
    QueryCanceled = "57014",
    /// 57P01
    AdminShutdown = "57P01",
    /// 57P03: the proxy cannot reach the tenant's SQL process or storage
    CannotConnectNow = "57P03",
    /// 57P05: idle_session_timeout ended the connection
    IdleSessionTimeout = "57P05",
    /// 25P03: idle_in_transaction_session_timeout ended the connection
    IdleInTransactionSessionTimeout = "25P03",
    /// 58000
    SystemError = "58000",
    /// 58030
    IoError = "58030",
    /// XX000
    InternalError = "XX000",
    /// XX001
    DataCorrupted = "XX001",
    /// 20000: a PL/pgSQL CASE without a matching arm or ELSE.
    CaseNotFound = "20000",
    /// 2F005: a PL/pgSQL function ended without RETURN.
    FunctionExecutedNoReturnStatement = "2F005",
    /// 39P01: a trigger function returned something a trigger cannot.
    TriggerProtocolViolated = "39P01",
    /// 09000: a trigger failed.
    TriggeredActionException = "09000",
    /// P0001: RAISE EXCEPTION's default.
    RaiseException = "P0001",
    /// P0002: SELECT INTO STRICT found no row.
    NoDataFound = "P0002",
    /// P0003: SELECT INTO STRICT found more than one row.
    TooManyRows = "P0003",
    /// P0004: ASSERT failed.
    AssertFailure = "P0004",
}

/// How serious a report is, as PostgreSQL's severity field spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The statement failed.
    Error,
    /// The session ends.
    Fatal,
    /// Informational, sent as a NoticeResponse.
    Warning,
    /// Informational, sent as a NoticeResponse.
    Notice,
    /// Informational and always sent (PL/pgSQL's RAISE INFO).
    Info,
}

impl Severity {
    /// The text sent in the S and V fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
            Severity::Warning => "WARNING",
            Severity::Notice => "NOTICE",
            Severity::Info => "INFO",
        }
    }
}

/// Everything an ErrorResponse or NoticeResponse carries. Fields that drivers
/// read (constraint, table, column) are kept so ORMs can map errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReport {
    /// ERROR, FATAL, WARNING or NOTICE.
    pub severity: Severity,
    /// The SQLSTATE code.
    pub code: SqlState,
    /// Primary message: lower case, no trailing period, PostgreSQL's wording.
    pub message: String,
    /// Optional DETAIL line.
    pub detail: Option<String>,
    /// Optional HINT line.
    pub hint: Option<String>,
    /// 1-based character position in the query string the error refers to.
    pub position: Option<u32>,
    /// Schema name field.
    pub schema: Option<String>,
    /// Table name field.
    pub table: Option<String>,
    /// Column name field.
    pub column: Option<String>,
    /// Constraint name field.
    pub constraint: Option<String>,
    /// CONTEXT line (where the error happened, e.g. a COPY line).
    pub context: Option<String>,
    /// The internally generated query the error is in (a PL/pgSQL
    /// statement), which `internal_position` points into.
    pub internal_query: Option<String>,
    /// 1-based character position in `internal_query`.
    pub internal_position: Option<u32>,
}

impl ErrorReport {
    /// An ERROR with `code` and `message`.
    pub fn new(code: SqlState, message: impl Into<String>) -> ErrorReport {
        ErrorReport {
            severity: Severity::Error,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            schema: None,
            table: None,
            column: None,
            constraint: None,
            context: None,
            internal_query: None,
            internal_position: None,
        }
    }

    /// Adds a CONTEXT line after those already there (innermost first).
    pub fn push_context(&mut self, line: impl Into<String>) {
        let line = line.into();
        self.context = Some(match self.context.take() {
            Some(c) => format!("{c}\n{line}"),
            None => line,
        });
    }

    /// A FATAL report: the connection closes after it is sent.
    pub fn fatal(code: SqlState, message: impl Into<String>) -> ErrorReport {
        ErrorReport { severity: Severity::Fatal, ..ErrorReport::new(code, message) }
    }

    /// 57014 for a statement a CancelRequest (or pg_cancel_backend)
    /// stopped; the wire layer and the executor's own checks both give it.
    pub fn cancelled_by_user() -> ErrorReport {
        ErrorReport::new(SqlState::QueryCanceled, "canceling statement due to user request")
    }

    /// 57014 for a statement that ran past statement_timeout.
    pub fn statement_timeout() -> ErrorReport {
        ErrorReport::new(SqlState::QueryCanceled, "canceling statement due to statement timeout")
    }

    /// A WARNING notice.
    pub fn warning(code: SqlState, message: impl Into<String>) -> ErrorReport {
        ErrorReport { severity: Severity::Warning, ..ErrorReport::new(code, message) }
    }

    /// Adds a DETAIL line.
    pub fn with_detail(mut self, detail: impl Into<String>) -> ErrorReport {
        self.detail = Some(detail.into());
        self
    }

    /// Adds a HINT line.
    pub fn with_hint(mut self, hint: impl Into<String>) -> ErrorReport {
        self.hint = Some(hint.into());
        self
    }

    /// Names the table (in schema `public`) the error is about, as drivers
    /// read it from the ErrorResponse (PostgreSQL's 's' and 't' fields).
    pub fn with_table(mut self, table: impl Into<String>) -> ErrorReport {
        self.schema = Some("public".into());
        self.table = Some(table.into());
        self
    }

    /// Names the column the error is about ('c').
    pub fn with_column(mut self, column: impl Into<String>) -> ErrorReport {
        self.column = Some(column.into());
        self
    }

    /// Names the constraint the error is about ('n').
    pub fn with_constraint(mut self, constraint: impl Into<String>) -> ErrorReport {
        self.constraint = Some(constraint.into());
        self
    }

    /// Sets the 1-based position in the query text.
    pub fn with_position(mut self, position: u32) -> ErrorReport {
        self.position = Some(position);
        self
    }
}

impl fmt::Display for ErrorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({})", self.severity.as_str(), self.message, self.code.code())
    }
}

impl std::error::Error for ErrorReport {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_five_characters() {
        for s in [SqlState::SyntaxError, SqlState::QueryCanceled, SqlState::DataCorrupted] {
            assert_eq!(s.code().len(), 5);
        }
        assert_eq!(SqlState::UniqueViolation.code(), "23505");
    }

    #[test]
    fn codes_and_condition_names() {
        assert_eq!(SqlState::from_code("23505"), Some(SqlState::UniqueViolation));
        assert_eq!(
            SqlState::from_code("U0001").map(|s| s.code().to_string()),
            Some("U0001".into())
        );
        assert_eq!(SqlState::from_code("abc"), None);
        assert_eq!(SqlState::from_condition("unique_violation"), Some(SqlState::UniqueViolation));
        assert_eq!(SqlState::from_condition("raise_exception"), Some(SqlState::RaiseException));
        assert_eq!(SqlState::from_condition("uniqueviolation"), None);
        assert_eq!(SqlState::from_condition("unique_violation_"), None);
    }
}
