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
    }
}
