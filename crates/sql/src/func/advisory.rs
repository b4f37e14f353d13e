//! The advisory lock functions: pg_advisory_lock, pg_try_advisory_lock,
//! pg_advisory_unlock and the rest of the family, over the session's
//! [`crate::advisory::SessionLocks`].

use sqltypes::{DataType, Value};

use crate::advisory::{LockKey, Mode, Scope};
use crate::err;
use crate::error::Result;
use crate::expr::EvalContext;

/// One advisory lock function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdvisoryFunc {
    /// `pg_[try_]advisory_[xact_]lock[_shared]`: `wait` false for the try
    /// forms, which return whether they got the lock.
    Lock(Mode, Scope, bool),
    /// `pg_advisory_unlock[_shared]`: whether a session-level take was undone.
    Unlock(Mode),
    /// pg_advisory_unlock_all()
    UnlockAll,
}

/// A resolved call: the function, its result type, its argument types.
pub type Resolved = (AdvisoryFunc, DataType, Vec<Option<DataType>>);

/// The function `name` names, its result type and argument types; None if
/// `name` is not one of them.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    let rest = name.strip_prefix("pg_")?;
    let (try_, rest) = match rest.strip_prefix("try_") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let rest = rest.strip_prefix("advisory_")?;
    let (rest, mode) = match rest.strip_suffix("_shared") {
        Some(r) => (r, Mode::Shared),
        None => (rest, Mode::Exclusive),
    };
    let f = match (rest, try_) {
        ("lock", _) => AdvisoryFunc::Lock(mode, Scope::Session, !try_),
        ("xact_lock", _) => AdvisoryFunc::Lock(mode, Scope::Xact, !try_),
        ("unlock", false) => AdvisoryFunc::Unlock(mode),
        ("unlock_all", false) if mode == Mode::Exclusive => AdvisoryFunc::UnlockAll,
        _ => return None,
    };
    let params = match (f, args.len()) {
        (AdvisoryFunc::UnlockAll, 0) => vec![],
        (AdvisoryFunc::UnlockAll, _) => return Some(Err(super::no_such_function(name, args))),
        (_, 1) => vec![Some(DataType::Int8)],
        (_, 2) => vec![Some(DataType::Int4), Some(DataType::Int4)],
        _ => return Some(Err(super::no_such_function(name, args))),
    };
    let ty = match f {
        AdvisoryFunc::Lock(_, _, true) | AdvisoryFunc::UnlockAll => DataType::Void,
        _ => DataType::Bool,
    };
    Some(Ok((f, ty, params)))
}

/// Evaluates `f` (strict: NULL in, NULL out).
pub fn call(f: AdvisoryFunc, args: Vec<Value>, ctx: &EvalContext) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let Some(locks) = ctx.advisory.as_deref() else {
        return Err(err!(FeatureNotSupported, "advisory locks are not available here"));
    };
    let key = || match args.as_slice() {
        [Value::Int8(k)] => Ok(LockKey::single(*k)),
        [Value::Int4(a), Value::Int4(b)] => Ok(LockKey::pair(*a, *b)),
        _ => Err(err!(InternalError, "advisory lock key of unexpected types")),
    };
    let void = Value::Text(String::new());
    Ok(match f {
        AdvisoryFunc::Lock(mode, scope, true) => {
            locks.acquire(key()?, mode, scope, true)?;
            void
        }
        AdvisoryFunc::Lock(mode, scope, false) => {
            Value::Bool(locks.acquire(key()?, mode, scope, false)?)
        }
        AdvisoryFunc::Unlock(mode) => Value::Bool(locks.release(key()?, mode, Scope::Session)),
        AdvisoryFunc::UnlockAll => {
            locks.release_all(Scope::Session);
            void
        }
    })
}
