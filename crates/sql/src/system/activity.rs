//! pg_locks: what the sessions of this SQL process hold and wait for; and
//! pg_stat_activity: what they are doing.
//!
//! Only advisory locks are listed in pg_locks. Row and table locks live in the KV
//! node's lock table, keyed by storage keys rather than relations, and
//! PostgreSQL's other lock types (virtualxid, transactionid, relation locks
//! every statement takes) have no counterpart to show.

use sqltypes::{DataType, Value};

use crate::catalog::{Catalog, DATABASE_OID};
use crate::expr::EvalContext;

/// pg_stat_activity's columns (PostgreSQL 15's; client_addr is text, as
/// Strata has no inet type, and the xid columns are oid).
pub fn activity_columns() -> Vec<(&'static str, DataType)> {
    use DataType::{Int4, Int8, Name, Oid, Text, TimestampTz};
    vec![
        ("datid", Oid),
        ("datname", Name),
        ("pid", Int4),
        ("leader_pid", Int4),
        ("usesysid", Oid),
        ("usename", Name),
        ("application_name", Text),
        ("client_addr", Text),
        ("client_hostname", Text),
        ("client_port", Int4),
        ("backend_start", TimestampTz),
        ("xact_start", TimestampTz),
        ("query_start", TimestampTz),
        ("state_change", TimestampTz),
        ("wait_event_type", Text),
        ("wait_event", Text),
        ("state", Text),
        ("backend_xid", Oid),
        ("backend_xmin", Oid),
        ("query_id", Int8),
        ("query", Text),
        ("backend_type", Text),
    ]
}

/// One row per session of the tenant, by pid. As in PostgreSQL, a session
/// of a role whose privileges the reader lacks shows only who and where
/// (unless the reader has pg_read_all_stats'); its query reads
/// `<insufficient privilege>`.
pub fn activity_rows(catalog: &Catalog, eval: &EvalContext) -> Vec<Vec<Value>> {
    let Some(backends) = &eval.backends else { return Vec::new() };
    let roles = super::roles_with_oids(catalog);
    let all_stats = catalog.has_privs_of(&eval.user, "pg_read_all_stats");
    let text = |s: &str| Value::Text(s.to_string());
    let time = |t: Option<i64>| t.map_or(Value::Null, Value::TimestampTz);
    backends
        .snapshot()
        .iter()
        .map(|seen| {
            let (b, s) = (&seen.backend, &seen.status);
            let usesysid = roles.iter().find(|(_, r)| *r.name == *s.user).map(|(o, _)| *o as u32);
            let mut row = vec![
                Value::Oid(DATABASE_OID),
                text("postgres"),
                Value::Int4(b.pid),
                Value::Null,
                usesysid.map_or(Value::Null, Value::Oid),
                text(&s.user),
            ];
            if !all_stats && !catalog.has_privs_of(&eval.user, &s.user) {
                row.extend(std::iter::repeat_n(Value::Null, 14));
                row.push(text("<insufficient privilege>"));
                row.push(Value::Null);
                return row;
            }
            let (addr, port) = match b.client {
                Some(a) => (text(&a.ip().to_string()), Value::Int4(a.port() as i32)),
                None => (Value::Null, Value::Int4(-1)),
            };
            let (wait_type, wait) = match (s.wait, s.state) {
                (Some((t, e)), _) => (text(t), text(e)),
                (None, crate::backends::State::Active) => (Value::Null, Value::Null),
                (None, _) => (text("Client"), text("ClientRead")),
            };
            row.extend([
                text(&s.application_name),
                addr,
                Value::Null,
                port,
                Value::TimestampTz(b.backend_start),
                time(s.xact_start),
                time(s.query_start),
                Value::TimestampTz(s.state_change),
                wait_type,
                wait,
                text(s.state.name()),
                Value::Null,
                Value::Null,
                Value::Null,
                s.query.as_deref().map_or_else(|| text(""), text),
                text("client backend"),
            ]);
            row
        })
        .collect()
}

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
