//! pg_locks: what the sessions of this SQL process hold and wait for.
//!
//! Only advisory locks are listed. Row and table locks live in the KV
//! node's lock table, keyed by storage keys rather than relations, and
//! PostgreSQL's other lock types (virtualxid, transactionid, relation locks
//! every statement takes) have no counterpart to show.

use sqltypes::{DataType, Value};

use crate::catalog::DATABASE_OID;
use crate::expr::EvalContext;

/// pg_locks' columns (PostgreSQL 15's; transactionid is shown as oid,
/// Strata having no xid type).
pub fn lock_columns() -> Vec<(&'static str, DataType)> {
    use DataType::{Bool, Int2, Int4, Oid, Text, TimestampTz};
    vec![
        ("locktype", Text),
        ("database", Oid),
        ("relation", Oid),
        ("page", Int4),
        ("tuple", Int2),
        ("virtualxid", Text),
        ("transactionid", Oid),
        ("classid", Oid),
        ("objid", Oid),
        ("objsubid", Int2),
        ("virtualtransaction", Text),
        ("pid", Int4),
        ("mode", Text),
        ("granted", Bool),
        ("fastpath", Bool),
        ("waitstart", TimestampTz),
    ]
}

/// One row per advisory lock mode held, and per waiter.
pub fn lock_rows(eval: &EvalContext) -> Vec<Vec<Value>> {
    let Some(locks) = &eval.advisory else { return Vec::new() };
    let oid = |o: u32| Value::Oid(o);
    locks
        .table()
        .rows()
        .into_iter()
        .map(|r| {
            vec![
                Value::Text("advisory".into()),
                oid(DATABASE_OID),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                oid(r.key.classid),
                oid(r.key.objid),
                Value::Int2(r.key.objsubid as i16),
                Value::Null,
                Value::Int4(r.pid),
                Value::Text(r.mode.name().into()),
                Value::Bool(r.granted),
                Value::Bool(false),
                r.wait_start.map(Value::TimestampTz).unwrap_or(Value::Null),
            ]
        })
        .collect()
}
