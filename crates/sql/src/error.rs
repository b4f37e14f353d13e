//! The SQL layer's error: a PostgreSQL error report with its SQLSTATE.
//!
//! Every failure in parsing, planning or execution becomes an
//! [`sqlstate::ErrorReport`], so the code the client sees is decided where
//! the error is raised. The macros keep call sites to one line:
//! `return Err(err!(UndefinedTable, "relation \"{name}\" does not exist"))`.

pub use sqlstate::{ErrorReport, SqlState};

/// The SQL layer's error type.
pub type Error = ErrorReport;

/// A result with the SQL layer's error.
pub type Result<T> = std::result::Result<T, Error>;

/// Builds an [`ErrorReport`] with the named [`SqlState`] variant and a
/// formatted message: `err!(DivisionByZero, "division by zero")`.
#[macro_export]
macro_rules! err {
    ($state:ident, $($arg:tt)*) => {
        $crate::error::ErrorReport::new($crate::error::SqlState::$state, format!($($arg)*))
    };
}

/// `return Err(err!(...))` in one line.
#[macro_export]
macro_rules! bail {
    ($state:ident, $($arg:tt)*) => {
        return Err($crate::err!($state, $($arg)*))
    };
}

/// Maps a KV failure to the report the client sees.
pub fn from_kv(e: kvapi::Error) -> Error {
    use kvapi::{Error as K, RetryReason};
    match e {
        K::Retry(RetryReason::Serialization) => {
            err!(SerializationFailure, "could not serialize access due to concurrent update")
        }
        K::Retry(RetryReason::Deadlock) => err!(DeadlockDetected, "deadlock detected"),
        K::TenantViolation(m) => err!(InsufficientPrivilege, "tenant violation: {m}"),
        K::InvalidInput(m) => err!(InternalError, "invalid storage request: {m}"),
        K::Corrupt(m) => err!(DataCorrupted, "corrupt data: {m}"),
        K::Io(m) => err!(IoError, "i/o error: {m}"),
        K::Unavailable(m) => err!(AdminShutdown, "storage unavailable: {m}"),
        K::LockTimeout => err!(LockNotAvailable, "canceling statement due to lock timeout"),
        K::AssumptionFailed => {
            err!(SerializationFailure, "could not serialize access due to concurrent DDL")
        }
    }
}

/// True for an error about a name already taken, which PostgreSQL gives
/// without a position.
pub(crate) fn name_taken(code: &sqlstate::SqlState) -> bool {
    matches!(
        code,
        sqlstate::SqlState::DuplicateTable
            | sqlstate::SqlState::DuplicateObject
            | sqlstate::SqlState::DuplicateSchema
            | sqlstate::SqlState::DuplicateFunction
    )
}

/// The text an error about a name or literal points at in the statement:
/// the quoted name, the literal, or the call (None if the message names
/// nothing to point at).
pub(crate) fn quoted_token(msg: &str) -> Option<String> {
    // Points the caret at the first quoted name in messages such as
    // `relation "x" does not exist` or `column "y" does not exist`, and at the
    // literal in `invalid input syntax for type integer: "x"`.
    if msg.starts_with("ON CONFLICT DO UPDATE requires") {
        return Some("on conflict".into());
    }
    if msg == "DEFAULT is not allowed in this context" {
        return Some("default".into());
    }
    if msg.starts_with("arguments to GROUPING must")
        || msg.starts_with("GROUPING must have")
        || msg.starts_with("grouping operations are not allowed")
    {
        return Some("grouping(".into());
    }
    if msg == "CUBE is limited to 12 elements" {
        return Some("cube".into());
    }
    if msg.starts_with('"') && msg.contains("\" is out of range for type ") {
        let end = msg[1..].find('"')? + 1;
        return Some(format!("'{}'", &msg[1..end]));
    }
    let literal = msg.starts_with("invalid input syntax for type ")
        || msg.starts_with("invalid cidr value: ")
        || msg.starts_with("malformed range literal: ")
        || msg.starts_with("malformed array literal: ")
        || msg.starts_with("malformed record literal: ")
        || msg.starts_with("date/time field value out of range: ");
    if let Some(rest) = msg.strip_prefix("syntax error at or near \"") {
        return rest.strip_suffix('"').map(|t| t.to_string());
    }
    // `function f(integer) does not exist` points at the call `f(`, as do
    // the errors about calling a procedure as a function and back.
    let call = msg.strip_prefix("function ").or_else(|| msg.strip_prefix("procedure "));
    if let Some(call) = call.filter(|m| !m.starts_with('"')) {
        return call.find('(').map(|i| call[..=i].to_string());
    }
    if msg.ends_with(") is a procedure") || msg.ends_with(") is not a procedure") {
        return msg.find('(').map(|i| msg[..=i].to_string());
    }
    if !(literal
        || msg.starts_with("missing FROM-clause entry for table ")
        || msg.starts_with("relation ")
        || msg.starts_with("column ")
        || msg.starts_with("function "))
    {
        return None;
    }
    let start = msg.find('"')? + 1;
    let end = start + msg[start..].find('"')?;
    let tok = &msg[start..end];
    Some(if literal { format!("'{tok}'") } else { tok.to_string() })
}

/// The 1-based character position of `name` standing alone in `text`: a
/// whole word, not a qualified name's part (`a.id`), matched case-blind;
/// PostgreSQL's caret for a bare name.
pub(crate) fn bare_name_position(text: &str, name: &str) -> Option<u32> {
    let lower = text.to_lowercase();
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut from = 0;
    while let Some(at) = lower[from..].find(name).map(|i| i + from) {
        let before = lower[..at].chars().next_back();
        let after = lower[at + name.len()..].chars().next();
        if !before.is_some_and(|c| word(c) || c == '.') && !after.is_some_and(word) {
            return Some(text[..at].chars().count() as u32 + 1);
        }
        from = at + name.len();
    }
    None
}

/// Where PostgreSQL's caret goes for `ORDER BY "x" is ambiguous` (or
/// DISTINCT ON's): at the name in that clause, the last such clause of
/// `text`. None for other messages.
pub(crate) fn ambiguous_name_position(text: &str, msg: &str) -> Option<u32> {
    let rest = msg.strip_suffix("\" is ambiguous")?;
    let (clause, name) = ["ORDER BY", "DISTINCT ON"]
        .into_iter()
        .find_map(|c| Some((c, rest.strip_prefix(c)?.strip_prefix(" \"")?)))?;
    let at = text.to_ascii_lowercase().rfind(&clause.to_ascii_lowercase())?;
    let within = bare_name_position(&text[at..], name)?;
    Some(text[..at].chars().count() as u32 + within)
}

/// The 1-based character position of `tok` (from [`quoted_token`]) in
/// `text`, matched exactly or else case-blind; a literal's at its opening
/// quote.
pub(crate) fn token_position(text: &str, tok: &str) -> Option<u32> {
    let mut i =
        text.find(tok).or_else(|| text.to_ascii_lowercase().find(&tok.to_ascii_lowercase()))?;
    if text[..i].ends_with('\'') {
        i -= 1;
    }
    Some(text[..i].chars().count() as u32 + 1)
}
