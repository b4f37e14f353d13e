//! Sequences: CREATE/DROP SEQUENCE, SERIAL and IDENTITY columns, and
//! nextval / currval / setval / lastval.
//!
//! NON-TRANSACTIONAL, AS IN POSTGRESQL. A value handed out by nextval is
//! never handed out again, even if the transaction that took it rolls back;
//! gaps are normal. The sequence's position is therefore not written by the
//! session's transaction (that would make every inserter wait for the
//! others' commits on one hot key) but by short *autonomous* transactions of
//! their own, which commit durably before any value they reserve is used.
//!
//! RESERVED BLOCKS. Each SQL process keeps, per sequence, a block of values
//! reserved in storage ([`Reserved`]); nextval takes the next one from memory.
//! When the block is used up, the next reservation is twice as large (up to
//! [`MAX_BLOCK`]), so a bulk insert costs few reservations. Values reserved
//! by a process that stops are skipped: more gaps, never duplicates.
//!
//! STATEMENT RETRY. Expressions are evaluated synchronously and cannot reach
//! storage. When nextval finds its block empty (or setval must write), it
//! records a [`Request`] in the session's [`SessionSeqs`] and fails; the
//! session rolls the statement back to its start, serves the request with
//! [`serve`], and runs the statement again. The values the abandoned
//! attempt took are kept: the retry's nextval calls of each sequence return
//! them again, in order, before taking new ones. So a retry gives rows the
//! numbers the first attempt gave them, and a setval runs after the
//! nextval calls written before it, as in PostgreSQL.
//!
//! The stored position of sequence S is `(last_value, is_called)`, as in
//! PostgreSQL: the next value is `last_value` if not called, else
//! `last_value + increment`. A sequence that was never used has no stored
//! position and starts at its START value.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use kvapi::{IsolationLevel, KvClient, TenantId, Txn};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use sqlparser::ast;
use sqltypes::DataType;

use crate::catalog::{keys, Catalog, TypeDef};
use crate::error::{from_kv, Result};
use crate::{bail, err};

/// Largest block of values one reservation takes.
pub const MAX_BLOCK: u64 = 1 << 16;

/// The smallest reservation.
const MIN_BLOCK: u64 = 32;

/// A sequence definition (its position is stored apart, see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequenceDef {
    /// pg_class OID.
    pub oid: u32,
    /// Its schema's OID.
    #[serde(default = "public_namespace")]
    pub namespace: u32,
    /// Name (case-folded).
    pub name: String,
    /// Value type: int2, int4 or int8 (bounds default to its range).
    pub ty: TypeDef,
    /// First value.
    pub start: i64,
    /// Step; never zero.
    pub increment: i64,
    /// Smallest value.
    pub min: i64,
    /// Largest value.
    pub max: i64,
    /// Wrap around at the end instead of failing.
    pub cycle: bool,
    /// CACHE: the smallest block a reservation takes.
    pub cache: i64,
    /// OWNED BY: (table OID, column name); dropped with the table.
    pub owned_by: Option<(u32, String)>,
    /// COMMENT ON SEQUENCE text.
    #[serde(default)]
    pub comment: Option<String>,
    /// Owner and ACL.
    #[serde(flatten)]
    pub access: crate::acl::Ownership,
}

fn public_namespace() -> u32 {
    crate::catalog::PUBLIC_NAMESPACE_OID
}

/// Values reserved by this process, per sequence OID (shared by sessions).
#[derive(Debug, Default)]
pub struct Reserved {
    blocks: Mutex<HashMap<u32, Block>>,
}

impl Reserved {
    /// Drops the values reserved for sequence `oid` (its definition or its
    /// position changed). Only this process's reservations are dropped.
    pub fn forget(&self, oid: u32) {
        self.blocks.lock().remove(&oid);
    }
}

/// One sequence's reserved values: runs of `left` values from `next`
/// (stepping by the increment), used front to back. There is more than one
/// run only when reservations are not contiguous (a CYCLE wrapped).
#[derive(Debug, Clone, Default)]
struct Block {
    runs: std::collections::VecDeque<(i64, u64)>,
    /// Size of the next reservation.
    grow: u64,
}

impl Block {
    fn take(&mut self, inc: i64) -> Option<i64> {
        while let Some(run) = self.runs.front_mut() {
            if run.1 > 0 {
                let v = run.0;
                run.0 = v.wrapping_add(inc);
                run.1 -= 1;
                return Some(v);
            }
            self.runs.pop_front();
        }
        None
    }
}

/// Storage work an expression could not do itself.
#[derive(Debug, Clone)]
pub enum Request {
    /// Reserve a new block of values.
    Reserve(Arc<SequenceDef>),
    /// setval: store this position and drop the reserved block.
    Set(Arc<SequenceDef>, i64, bool),
}

/// One session's sequence state.
#[derive(Debug, Default)]
pub struct SessionSeqs {
    currval: HashMap<u32, i64>,
    /// The sequence nextval used last (lastval is its currval).
    lastval: Option<u32>,
    /// What the failed attempt of the current statement needs.
    pub request: Option<Request>,
    /// setval calls already stored during the current statement.
    applied: Vec<(u32, i64, bool)>,
    /// Values nextval returned in the current attempt, per sequence, in order.
    taken: HashMap<u32, Values>,
    /// Values a failed attempt took, per sequence, which the retry's
    /// nextval calls return again before taking new ones.
    replay: HashMap<u32, Values>,
}

/// Values of one sequence in the order nextval returned them, kept as runs
/// of equal steps (a statement's nextval calls mostly follow the sequence's
/// increment), so a statement that numbers many rows keeps little.
#[derive(Debug, Default)]
struct Values(VecDeque<Run>);

/// `count` values from `first`, `step` apart.
#[derive(Debug)]
struct Run {
    first: i64,
    step: i64,
    count: i64,
}

impl Values {
    fn push(&mut self, v: i64) {
        if let Some(run) = self.0.back_mut() {
            if run.count == 1 && v != run.first {
                run.step = v.wrapping_sub(run.first);
                run.count = 2;
                return;
            }
            let next = run.step.checked_mul(run.count).and_then(|d| run.first.checked_add(d));
            if run.count > 1 && next == Some(v) {
                run.count += 1;
                return;
            }
        }
        self.0.push_back(Run { first: v, step: 0, count: 1 });
    }

    fn pop_front(&mut self) -> Option<i64> {
        let run = self.0.front_mut()?;
        let v = run.first;
        run.first = run.first.wrapping_add(run.step);
        run.count -= 1;
        if run.count == 0 {
            self.0.pop_front();
        }
        Some(v)
    }
}

impl SessionSeqs {
    /// currval of each sequence used (by OID), and lastval's sequence: what
    /// a session moving to another process takes along.
    pub fn carried(&self) -> (Vec<(u32, i64)>, Option<u32>) {
        (self.currval.iter().map(|(k, v)| (*k, *v)).collect(), self.lastval)
    }

    /// Restores what [`SessionSeqs::carried`] gave.
    pub fn restore(&mut self, currval: &[(u32, i64)], lastval: Option<u32>) {
        self.currval = currval.iter().copied().collect();
        self.lastval = lastval;
    }

    /// Called when a statement starts (not when it is retried).
    pub fn start_statement(&mut self) {
        self.request = None;
        self.applied.clear();
        self.start_attempt();
    }

    /// Called when a batch of work that may be retried on its own starts
    /// (a COPY batch): only its values are replayed.
    pub fn start_attempt(&mut self) {
        self.taken.clear();
        self.replay.clear();
    }

    /// Called when an attempt failed and will run again: the values it took
    /// are handed out again, in the order it took them.
    pub fn retry(&mut self) {
        self.replay = std::mem::take(&mut self.taken);
    }
}

/// What expressions use to reach sequences.
#[derive(Debug, Clone, Default)]
pub struct SeqContext {
    /// The statement's catalog (sequence names).
    pub catalog: Arc<Catalog>,
    /// The process's reserved blocks.
    pub reserved: Arc<Reserved>,
    /// The session's state.
    pub session: Arc<Mutex<SessionSeqs>>,
    /// The current user, whose privileges on sequences apply.
    pub user: Arc<str>,
}

impl SeqContext {
    /// The sequence `text` names, if the user holds one of `privs` on it
    /// (nextval: USAGE or UPDATE; currval: SELECT or USAGE; setval:
    /// UPDATE).
    fn resolve(&self, text: &str, privs: u16) -> Result<Arc<SequenceDef>> {
        let (schema, name) = crate::func::catalog_info::split_name(text);
        let name = crate::catalog::ObjName { schema, name };
        let s = match self.catalog.relation(&name)? {
            Some(crate::catalog::Relation::Sequence(s)) => s,
            Some(_) => bail!(WrongObjectType, "\"{}\" is not a sequence", name.name),
            None => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
        };
        let user = if self.user.is_empty() { crate::acl::BOOTSTRAP } else { &self.user };
        let kind = crate::acl::ObjKind::Sequence;
        if !self.catalog.is_superuser(user)
            && !s.access.allows(&self.catalog, kind, user, privs, true)
        {
            bail!(InsufficientPrivilege, "permission denied for sequence {}", s.name);
        }
        Ok(s)
    }

    /// nextval(name).
    pub fn nextval(&self, name: &str) -> Result<i64> {
        let def = self.resolve(name, crate::acl::USAGE | crate::acl::UPDATE)?;
        let mut s = self.session.lock();
        let replayed = s.replay.get_mut(&def.oid).and_then(|q| q.pop_front());
        let taken = replayed.or_else(|| {
            self.reserved.blocks.lock().get_mut(&def.oid).and_then(|b| b.take(def.increment))
        });
        let Some(v) = taken else {
            s.request = Some(Request::Reserve(def));
            bail!(ObjectNotInPrerequisiteState, "sequence needs a new block of values");
        };
        s.currval.insert(def.oid, v);
        s.lastval = Some(def.oid);
        s.taken.entry(def.oid).or_default().push(v);
        Ok(v)
    }

    /// currval(name): this session's last nextval of the sequence.
    pub fn currval(&self, name: &str) -> Result<i64> {
        let def = self.resolve(name, crate::acl::SELECT | crate::acl::USAGE)?;
        match self.session.lock().currval.get(&def.oid) {
            Some(v) => Ok(*v),
            None => bail!(
                ObjectNotInPrerequisiteState,
                "currval of sequence \"{}\" is not yet defined in this session",
                def.name
            ),
        }
    }

    /// lastval(): currval of the sequence this session's last nextval
    /// used (a later setval of it counts, as in PostgreSQL).
    pub fn lastval(&self) -> Result<i64> {
        let s = self.session.lock();
        match s.lastval.and_then(|oid| s.currval.get(&oid)) {
            Some(v) => Ok(*v),
            None => {
                bail!(ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
            }
        }
    }

    /// setval(name, value, is_called). With is_called, currval becomes
    /// `value`, as in PostgreSQL.
    pub fn setval(&self, name: &str, value: i64, called: bool) -> Result<i64> {
        let def = self.resolve(name, crate::acl::UPDATE)?;
        if value < def.min || value > def.max {
            bail!(
                NumericValueOutOfRange,
                "setval: value {value} is out of bounds for sequence \"{}\" ({}..{})",
                def.name,
                def.min,
                def.max
            );
        }
        let mut s = self.session.lock();
        if !s.applied.contains(&(def.oid, value, called)) {
            s.request = Some(Request::Set(def, value, called));
            bail!(ObjectNotInPrerequisiteState, "setval must be stored first");
        }
        if called {
            s.currval.insert(def.oid, value);
        }
        Ok(value)
    }
}

/// Serves `req` in an autonomous transaction that commits durably.
pub async fn serve<K: KvClient>(
    client: &K,
    tenant: TenantId,
    reserved: &Reserved,
    session: &Mutex<SessionSeqs>,
    req: Request,
) -> Result<()> {
    match req {
        Request::Reserve(def) => reserve(client, tenant, reserved, &def).await,
        Request::Set(def, value, called) => {
            store(client, tenant, def.oid, |_| Ok((value, called))).await?;
            reserved.blocks.lock().remove(&def.oid);
            session.lock().applied.push((def.oid, value, called));
            Ok(())
        }
    }
}

async fn reserve<K: KvClient>(
    client: &K,
    tenant: TenantId,
    reserved: &Reserved,
    def: &SequenceDef,
) -> Result<()> {
    let grow = match reserved.blocks.lock().get(&def.oid) {
        Some(b) if b.grow > 0 => b.grow,
        _ => MIN_BLOCK.max(def.cache.max(1) as u64),
    };
    let mut got = Vec::new();
    store(client, tenant, def.oid, |mut pos| {
        // A CYCLE sequence wraps as often as it takes to reserve `grow`
        // values; any other stops at its bound.
        let mut want = grow;
        while want > 0 {
            let (first, count) = match next_range(def, pos, want) {
                Ok(r) => r,
                Err(_) if !got.is_empty() => break,
                Err(e) => return Err(e),
            };
            let last = first + (count as i64 - 1) * def.increment;
            got.push((first, count));
            pos = Some((last, true));
            want -= count;
            if !def.cycle && count < grow {
                break;
            }
        }
        Ok(pos.expect("at least one run was reserved"))
    })
    .await?;
    let grow = (grow * 2).min(MAX_BLOCK);
    // Values still reserved (from a concurrent refill) are used first.
    let mut blocks = reserved.blocks.lock();
    let b = blocks.entry(def.oid).or_default();
    b.grow = grow;
    for (first, count) in got {
        match b.runs.back_mut() {
            Some(last) if last.0.wrapping_add(last.1 as i64 * def.increment) == first => {
                last.1 += count
            }
            _ => b.runs.push_back((first, count)),
        }
    }
    Ok(())
}

/// Numbers the rows a table already has when ALTER TABLE adds a SERIAL or
/// IDENTITY column: each row takes the new sequence's next value in turn,
/// as nextval would give it, and [`Numbering::position`] is where the
/// sequence then stands.
pub struct Numbering<'a> {
    def: &'a SequenceDef,
    ty: DataType,
    pos: Mutex<Option<(i64, bool)>>,
}

impl<'a> Numbering<'a> {
    /// Numbering from the start of `def`, values of the column's type `ty`.
    pub fn new(def: &'a SequenceDef, ty: DataType) -> Self {
        Numbering { def, ty, pos: Mutex::new(None) }
    }

    /// The next row's value.
    pub fn next(&self) -> Result<sqltypes::Value> {
        let mut pos = self.pos.lock();
        let (v, _) = next_range(self.def, *pos, 1)?;
        *pos = Some((v, true));
        sqltypes::cast::cast(sqltypes::Value::Int8(v), &self.ty)
    }

    /// The position to store: None when no row was numbered.
    pub fn position(&self) -> Option<(i64, bool)> {
        *self.pos.lock()
    }
}

/// The first value after stored position `pos` (None: never used) and how
/// many values up to `want` fit before the bound (wrapping if CYCLE).
fn next_range(def: &SequenceDef, pos: Option<(i64, bool)>, want: u64) -> Result<(i64, u64)> {
    let inc = def.increment;
    let first = match pos {
        None => Some(def.start),
        Some((last, false)) => Some(last),
        Some((last, true)) => last.checked_add(inc).filter(|v| (def.min..=def.max).contains(v)),
    };
    let first = match first {
        Some(v) => v,
        None if def.cycle => {
            if inc > 0 {
                def.min
            } else {
                def.max
            }
        }
        None if inc > 0 => bail!(
            SequenceGeneratorLimitExceeded,
            "nextval: reached maximum value of sequence \"{}\" ({})",
            def.name,
            def.max
        ),
        None => bail!(
            SequenceGeneratorLimitExceeded,
            "nextval: reached minimum value of sequence \"{}\" ({})",
            def.name,
            def.min
        ),
    };
    let room = if inc > 0 { def.max - first } else { first - def.min };
    let fits = (room as u128 / inc.unsigned_abs() as u128 + 1).min(want as u128) as u64;
    Ok((first, fits.max(1)))
}

/// A stored position: `last_value` (8 bytes, big-endian) and `is_called`.
fn decode_position(bytes: Option<&[u8]>) -> Result<Option<(i64, bool)>> {
    Ok(match bytes {
        Some(b) if b.len() == 9 => {
            let v = i64::from_be_bytes(b[..8].try_into().expect("checked length"));
            Some((v, b[8] != 0))
        }
        Some(_) => bail!(DataCorrupted, "corrupt sequence position"),
        None => None,
    })
}

/// The sequence's stored position as `txn` sees it (None if never used).
/// With reserved blocks this is the end of the last reservation, as
/// PostgreSQL's last_value is with CACHE.
pub async fn stored_position<T: Txn>(
    txn: &T,
    tenant: TenantId,
    oid: u32,
) -> Result<Option<(i64, bool)>> {
    let key = keys::sequence_state(tenant, oid);
    decode_position(txn.get(&key).await.map_err(from_kv)?.as_deref())
}

/// Rewrites a sequence's stored position in its own durable transaction.
async fn store<K: KvClient>(
    client: &K,
    tenant: TenantId,
    oid: u32,
    f: impl FnOnce(Option<(i64, bool)>) -> Result<(i64, bool)>,
) -> Result<()> {
    let mut txn = client.begin(IsolationLevel::ReadCommitted).await.map_err(from_kv)?;
    let key = keys::sequence_state(tenant, oid);
    let locked = txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
    let pos = decode_position(locked.first().and_then(|l| l.latest.as_deref()))?;
    let (v, called) = f(pos)?;
    let mut bytes = v.to_be_bytes().to_vec();
    bytes.push(called as u8);
    txn.put(key, bytes, kvapi::LockMode::Locked).map_err(from_kv)?;
    txn.commit().await.map_err(from_kv)?;
    Ok(())
}

/// The values a sequence of type `ty` can hold: its MINVALUE and MAXVALUE
/// defaults (for an ascending sequence, MINVALUE defaults to 1).
pub fn type_range(ty: &DataType) -> Result<(i64, i64)> {
    Ok(match ty {
        DataType::Int2 => (i16::MIN as i64, i16::MAX as i64),
        DataType::Int4 => (i32::MIN as i64, i32::MAX as i64),
        DataType::Int8 => (i64::MIN, i64::MAX),
        other => bail!(
            InvalidParameterValue,
            "sequence type must be smallint, integer, or bigint, not {other}"
        ),
    })
}

/// Builds a definition from CREATE SEQUENCE / identity options, with
/// PostgreSQL's defaults for the value type `ty`.
pub fn define(
    oid: u32,
    name: String,
    ty: &DataType,
    options: &[ast::SequenceOptions],
) -> Result<SequenceDef> {
    let (lo, hi) = type_range(ty)?;
    let (mut inc, mut min, mut max, mut start, mut cache, mut cycle) =
        (1i64, None, None, None, 1i64, false);
    for o in options {
        match o {
            ast::SequenceOptions::IncrementBy(e, _) => inc = constant(e)?,
            ast::SequenceOptions::MinValue(e) => min = e.as_ref().map(constant).transpose()?,
            ast::SequenceOptions::MaxValue(e) => max = e.as_ref().map(constant).transpose()?,
            ast::SequenceOptions::StartWith(e, _) => start = Some(constant(e)?),
            ast::SequenceOptions::Cache(e) => cache = constant(e)?,
            // sqlparser's flag means NO CYCLE.
            ast::SequenceOptions::Cycle(no) => cycle = !*no,
        }
    }
    if inc == 0 {
        bail!(InvalidParameterValue, "INCREMENT must not be zero");
    }
    let min = min.unwrap_or(if inc > 0 { 1 } else { lo });
    let max = max.unwrap_or(if inc > 0 { hi } else { -1 });
    if min < lo || max > hi {
        bail!(
            InvalidParameterValue,
            "MINVALUE ({min}) or MAXVALUE ({max}) is out of range for sequence data type {ty}"
        );
    }
    if min >= max {
        bail!(InvalidParameterValue, "MINVALUE ({min}) must be less than MAXVALUE ({max})");
    }
    let start = start.unwrap_or(if inc > 0 { min } else { max });
    if start < min {
        bail!(InvalidParameterValue, "START value ({start}) cannot be less than MINVALUE ({min})");
    }
    if start > max {
        bail!(
            InvalidParameterValue,
            "START value ({start}) cannot be greater than MAXVALUE ({max})"
        );
    }
    if cache < 1 {
        bail!(InvalidParameterValue, "CACHE ({cache}) must be greater than zero");
    }
    let ty = TypeDef::from_type(ty);
    Ok(SequenceDef {
        oid,
        namespace: crate::catalog::PUBLIC_NAMESPACE_OID,
        access: Default::default(),
        name,
        ty,
        start,
        increment: inc,
        min,
        max,
        cycle,
        cache,
        owned_by: None,
        comment: None,
    })
}

/// An integer constant in a sequence option (possibly negative).
/// ALTER SEQUENCE: `old` with `options` applied over it. Options not given
/// keep their values; `NO MINVALUE` / `NO MAXVALUE` return to the type's
/// defaults for the (possibly new) increment.
pub fn redefine(old: &SequenceDef, options: &[ast::SequenceOptions]) -> Result<SequenceDef> {
    use ast::SequenceOptions as S;
    let n = |v: i64| ast::Expr::value(ast::Value::Number(v.to_string(), false));
    let mut all = vec![
        S::IncrementBy(n(old.increment), true),
        S::MinValue(Some(n(old.min))),
        S::MaxValue(Some(n(old.max))),
        S::StartWith(n(old.start), true),
        S::Cache(n(old.cache)),
        S::Cycle(!old.cycle),
    ];
    all.extend(options.iter().cloned());
    let mut def = define(old.oid, old.name.clone(), &old.ty.to_type(), &all)?;
    def.owned_by = old.owned_by.clone();
    def.namespace = old.namespace;
    def.comment = old.comment.clone();
    def.access = old.access.clone();
    Ok(def)
}

/// The value of a numeric sequence option (`5`, `-5`, `+5`).
pub fn constant(e: &ast::Expr) -> Result<i64> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n
                .parse()
                .map_err(|_| err!(InvalidParameterValue, "invalid sequence option value {n}")),
            other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
        },
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } => constant(expr)?
            .checked_neg()
            .ok_or_else(|| err!(NumericValueOutOfRange, "value out of range")),
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Plus, expr } => constant(expr),
        other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
    }
}

/// Serializes a sequence definition for storage.
pub fn encode(s: &SequenceDef) -> Vec<u8> {
    serde_json::to_vec(s).expect("sequence definitions always serialize")
}

/// Reads a stored sequence definition.
pub fn decode(bytes: &[u8]) -> Result<SequenceDef> {
    serde_json::from_slice(bytes).map_err(|e| err!(DataCorrupted, "corrupt sequence entry: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(inc: i64, min: i64, max: i64, cycle: bool) -> SequenceDef {
        let mut s = define(1, "s".into(), &DataType::Int8, &[]).expect("define");
        (s.increment, s.min, s.max, s.cycle) = (inc, min, max, cycle);
        s.start = if inc > 0 { min } else { max };
        s
    }

    #[test]
    fn ranges_follow_position_bounds_and_cycle() {
        let s = seq(1, 1, 10, false);
        assert_eq!(next_range(&s, None, 32).expect("fresh"), (1, 10));
        assert_eq!(next_range(&s, Some((1, false)), 4).expect("setval false"), (1, 4));
        assert_eq!(next_range(&s, Some((4, true)), 4).expect("after 4"), (5, 4));
        assert!(next_range(&s, Some((10, true)), 4).is_err(), "exhausted");
        let c = seq(1, 1, 10, true);
        assert_eq!(next_range(&c, Some((10, true)), 4).expect("cycles"), (1, 4));
        let d = seq(-3, -10, -1, false);
        assert_eq!(next_range(&d, None, 32).expect("descending"), (-1, 4));
        let big = seq(i64::MAX / 2, 1, i64::MAX, false);
        assert!(next_range(&big, Some((i64::MAX - 5, true)), 8).is_err(), "no overflow");
    }

    #[test]
    fn define_checks_options() {
        let opt = |sql: &str| {
            let dialect = sqlparser::dialect::PostgreSqlDialect {};
            let stmt = sqlparser::parser::Parser::parse_sql(&dialect, sql).expect("parse");
            match stmt.into_iter().next() {
                Some(ast::Statement::CreateSequence { sequence_options, .. }) => sequence_options,
                other => panic!("{other:?}"),
            }
        };
        let d = define(1, "s".into(), &DataType::Int4, &opt("create sequence s increment by -2"))
            .expect("descending");
        assert_eq!((d.start, d.min, d.max), (-1, i32::MIN as i64, -1));
        assert!(
            define(1, "s".into(), &DataType::Int8, &opt("create sequence s increment 0")).is_err()
        );
        assert!(define(
            1,
            "s".into(),
            &DataType::Int8,
            &opt("create sequence s minvalue 5 start 1")
        )
        .is_err());
    }

    #[test]
    fn taken_values_come_back_in_order() {
        let given = [1, 2, 3, 10, 7, 4, 1, 5, 5, i64::MAX, i64::MIN, 0];
        let mut v = Values::default();
        for x in given {
            v.push(x);
        }
        let back: Vec<i64> = std::iter::from_fn(|| v.pop_front()).collect();
        assert_eq!(back, given);
        let mut many = Values::default();
        (1..=10_000).for_each(|x| many.push(x * 3));
        assert_eq!(many.0.len(), 1);
    }
}
