//! Functions that act on the server's sessions or wait: pg_cancel_backend,
//! pg_terminate_backend, pg_notify, and pg_sleep, pg_sleep_for and
//! pg_sleep_until (waits go through [`crate::waits`]).

use sqlstate::{ErrorReport, SqlState};
use sqltypes::{DataType, Value};

use crate::error::Result;
use crate::expr::EvalContext;
use crate::waits::{Memo, Wait};
use crate::{bail, err};

/// One server function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerFunc {
    /// pg_cancel_backend(pid)
    Cancel,
    /// pg_terminate_backend(pid [, timeout])
    Terminate,
    /// pg_notify(channel, payload)
    Notify,
    /// pg_sleep(seconds)
    Sleep,
    /// pg_sleep_for(interval)
    SleepFor,
    /// pg_sleep_until(timestamptz)
    SleepUntil,
}

/// A resolved call: the function, its result type, its argument types.
pub type Resolved = (ServerFunc, DataType, Vec<Option<DataType>>);

/// The function `name` names with these arguments; None if `name` is not
/// one of them.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    use DataType::{Bool, Float8, Int4, Int8, Interval, Text, TimestampTz, Void};
    let (f, ty, params) = match (name, args.len()) {
        ("pg_cancel_backend", 1) => (ServerFunc::Cancel, Bool, vec![Some(Int4)]),
        ("pg_terminate_backend", 1) => (ServerFunc::Terminate, Bool, vec![Some(Int4)]),
        ("pg_terminate_backend", 2) => (ServerFunc::Terminate, Bool, vec![Some(Int4), Some(Int8)]),
        ("pg_notify", 2) => (ServerFunc::Notify, Void, vec![Some(Text), Some(Text)]),
        ("pg_sleep", 1) => (ServerFunc::Sleep, Void, vec![Some(Float8)]),
        ("pg_sleep_for", 1) => (ServerFunc::SleepFor, Void, vec![Some(Interval)]),
        ("pg_sleep_until", 1) => (ServerFunc::SleepUntil, Void, vec![Some(TimestampTz)]),
        (
            "pg_cancel_backend"
            | "pg_terminate_backend"
            | "pg_notify"
            | "pg_sleep"
            | "pg_sleep_for"
            | "pg_sleep_until",
            _,
        ) => return Some(Err(super::no_such_function(name, args))),
        _ => return None,
    };
    Some(Ok((f, ty, params)))
}

/// Evaluates `f`. pg_notify is not strict: a NULL channel is an empty one
/// (an error), a NULL payload an empty payload.
pub fn call(f: ServerFunc, args: Vec<Value>, ctx: &EvalContext) -> Result<Value> {
    let text = |v: &Value| match v {
        Value::Text(s) => s.clone(),
        _ => String::new(),
    };
    match f {
        ServerFunc::Notify => {
            let Some(listener) = &ctx.listener else {
                bail!(FeatureNotSupported, "pg_notify is not available here");
            };
            listener.notify(&text(&args[0]), &text(&args[1]))?;
            Ok(Value::Text(String::new()))
        }
        _ if args.iter().any(Value::is_null) => Ok(Value::Null),
        ServerFunc::Cancel | ServerFunc::Terminate => {
            let timeout = match args.get(1) {
                Some(Value::Int8(t)) if *t < 0 => {
                    bail!(InvalidParameterValue, "\"timeout\" must not be negative")
                }
                Some(Value::Int8(t)) => *t as u64,
                _ => 0,
            };
            let Value::Int4(pid) = args[0] else {
                bail!(InternalError, "pid of unexpected type");
            };
            let waits = waits(ctx)?;
            if let Some(memo) = replay(waits, ctx) {
                return Ok(Value::Bool(memo));
            }
            let signalled = match signal(f == ServerFunc::Terminate, pid, ctx) {
                Ok(memo) if !memo.result || timeout == 0 => memo,
                Ok(_) => {
                    let registry = ctx.backends.as_ref().expect("signal found it").registry();
                    let timeout = std::time::Duration::from_millis(timeout);
                    let exit = Wait::Exit { registry: registry.clone(), pid, timeout };
                    return Err(waits.wait_for(exit));
                }
                Err(e) => return Err(e),
            };
            waits.settle(signalled.clone());
            Ok(Value::Bool(replayed(signalled, ctx)))
        }
        ServerFunc::Sleep | ServerFunc::SleepFor | ServerFunc::SleepUntil => {
            let waits = waits(ctx)?;
            if replay(waits, ctx).is_some() {
                return Ok(Value::Text(String::new()));
            }
            let now = sqltypes::datetime::now_micros();
            let micros = match (f, &args[0]) {
                (ServerFunc::Sleep, Value::Float8(s)) if s.is_nan() => 0.0,
                (ServerFunc::Sleep, Value::Float8(s)) => s * 1e6,
                (ServerFunc::SleepFor, Value::Interval(iv)) => {
                    (sqltypes::interval::timestamptz_add(now, iv, ctx.zone())? - now) as f64
                }
                (ServerFunc::SleepUntil, Value::TimestampTz(t)) => (t - now) as f64,
                _ => bail!(InternalError, "pg_sleep argument of unexpected type"),
            };
            if micros <= 0.0 {
                waits.settle(Memo::ok(true));
                return Ok(Value::Text(String::new()));
            }
            // tokio caps a sleep at about two years; so does this.
            let d = std::time::Duration::from_micros(micros.min(6e13) as u64);
            Err(waits.wait_for(Wait::Sleep(d)))
        }
    }
}

/// What an earlier attempt decided for this call, its warning raised again.
fn replay(waits: &crate::waits::StatementWaits, ctx: &EvalContext) -> Option<bool> {
    waits.replay().map(|m| replayed(m, ctx))
}

/// Raises the memo's warning; its result.
fn replayed(memo: Memo, ctx: &EvalContext) -> bool {
    if let Some(w) = memo.warning {
        ctx.warnings.lock().push(w);
    }
    memo.result
}

fn waits(ctx: &EvalContext) -> Result<&crate::waits::StatementWaits> {
    match &ctx.waits {
        Some(w) => Ok(w),
        None => Err(err!(FeatureNotSupported, "waiting is not available here")),
    }
}

/// Signals session `pid` of this tenant. A missing pid is false with a
/// warning; a session of another role needs that role's privileges (or
/// pg_signal_backend's), and a superuser's session a superuser
/// (PostgreSQL's rules).
fn signal(terminate: bool, pid: i32, ctx: &EvalContext) -> Result<Memo> {
    let target = ctx.backends.as_ref().and_then(|b| b.registry().get(pid));
    let Some(target) = target else {
        let msg = format!("PID {pid} is not a PostgreSQL backend process");
        let warning = Some(ErrorReport::warning(SqlState::Warning, msg));
        return Ok(Memo { result: false, warning });
    };
    let Some(cat) = ctx.catalog.as_deref() else { return Ok(Memo::ok(false)) };
    let me_super = cat.is_superuser(&ctx.user);
    let owner = target.status().user;
    let (what, whose) = match terminate {
        true => ("terminate", "process is being terminated"),
        false => ("cancel", "query is being canceled"),
    };
    if !me_super {
        if cat.is_superuser(&owner) {
            let thing = if terminate { "superuser process" } else { "superuser query" };
            return Err(err!(InsufficientPrivilege, "must be a superuser to {what} {thing}"));
        }
        if !cat.has_privs_of(&ctx.user, &owner) && !cat.has_privs_of(&ctx.user, "pg_signal_backend")
        {
            return Err(err!(
                InsufficientPrivilege,
                "must be a member of the role whose {whose} or member of pg_signal_backend"
            ));
        }
    }
    match terminate {
        true => target.terminate(),
        false => target.cancel(),
    }
    Ok(Memo::ok(true))
}
