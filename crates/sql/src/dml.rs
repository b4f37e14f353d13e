//! INSERT, UPDATE and DELETE: row writes with locking, constraint checks and
//! index maintenance.
//!
//! Writers follow PostgreSQL's READ COMMITTED rules. A statement finds its
//! target rows in its snapshot, then locks them (waiting for concurrent
//! writers to finish). If a row changed after the snapshot, the newest
//! committed version is re-checked against the WHERE clause and, if it still
//! matches, the update is applied to that newest version (PostgreSQL's
//! EvalPlanQual). Under REPEATABLE READ the lock call itself fails with a
//! serialization error instead.
//!
//! Key layout per row: `storage prefix ++ keycode(primary key)` (or a unique
//! row id for tables without a primary key). Secondary index entries live in
//! the index's own storage and hold the row key as their value; unique index
//! entries are keyed by the indexed values alone and locked on insert, which
//! makes the uniqueness check exact under concurrency.

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use kvapi::{Key, LockMode, TenantId, Txn};
use sqltypes::{cast, keycode, ops, rowcodec, DataType, Value};

use crate::catalog::{keys, IndexDef, TableDef};
use crate::error::{from_kv, Result};
use crate::exec::{self, row_key, scan_rows, ExecCtx, Row};
use crate::expr::{EvalContext, Expr};
use crate::fk;
use crate::plan::{Access, Column, Correlated, Plan, Scan, SubqKind};
use crate::plpgsql::{self, RunCall, TxnCalls};
use crate::triggers::{self, Event, Firing, RowEvent};
use crate::{bail, err};

pub mod merge;

/// RETURNING clause: expressions over the written row.
#[derive(Debug, Clone, PartialEq)]
pub struct Returning {
    /// One expression per output column, over the table's columns (the
    /// FROM item's after them), then the correlated subqueries' values.
    pub exprs: Vec<Expr>,
    /// Output columns.
    pub columns: Vec<Column>,
    /// The correlated subqueries, run per returned row (no filter).
    pub per_row: PerRow,
}

/// A planned INSERT.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertPlan {
    /// Target table.
    pub table: Arc<TableDef>,
    /// Table column for each source column.
    pub targets: Vec<usize>,
    /// Produces the rows to insert (one value per target column).
    pub source: Plan,
    /// DEFAULT expression per table column (None: NULL).
    pub defaults: Vec<Option<Expr>>,
    /// RETURNING, if any.
    pub returning: Option<Returning>,
    /// ON CONFLICT, if any.
    pub on_conflict: Option<OnConflict>,
    /// The unique constraints ON CONFLICT looks for a conflicting row in,
    /// in order: None for the primary key, else a unique index (by
    /// position in the table's).
    pub arbiters: Vec<Option<usize>>,
    /// Through a view WITH CHECK OPTION: what each new row must satisfy.
    pub checks: Vec<ViewCheck>,
    /// The table is a view's trigger shell, whose INSTEAD OF INSERT
    /// triggers take the rows.
    pub instead: bool,
    /// Uncorrelated subqueries of VALUES, ON CONFLICT and RETURNING, run
    /// once first.
    pub init: Vec<(Plan, crate::plan::SubqKind)>,
    /// The rows were routed here from a partitioned table, whose
    /// statement-level triggers fire instead of this table's.
    pub routed: bool,
}

/// A condition of a view WITH CHECK OPTION on the rows written through
/// it, over the table's row.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewCheck {
    /// The view whose condition it is.
    pub view: String,
    /// The condition.
    pub pred: Expr,
}

/// 44000 unless every condition holds on `row` (NULL fails, as in
/// PostgreSQL).
fn check_views(checks: &[ViewCheck], row: &[Value], eval: &EvalContext) -> Result<()> {
    for c in checks {
        if !c.pred.eval_pred(row, eval)? {
            return Err(err!(
                WithCheckOptionViolation,
                "new row violates check option for view \"{}\"",
                c.view
            )
            .with_detail(format!("Failing row contains ({}).", row_text(row))));
        }
    }
    Ok(())
}

/// What INSERT does when a row's primary key already exists.
#[derive(Debug, Clone, PartialEq)]
pub enum OnConflict {
    /// Skip the row.
    DoNothing,
    /// Update the existing row. Expressions see the existing row's columns
    /// followed by the proposed row's (`excluded.*`), then the correlated
    /// subqueries' values.
    DoUpdate {
        /// (column, new value).
        sets: Vec<(usize, Expr)>,
        /// The correlated subqueries, run per conflicting row, and the
        /// WHERE clause on the existing/excluded pair.
        per_row: PerRow,
    },
}

/// A planned UPDATE.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdatePlan {
    /// Finds the target rows (its filter is the WHERE clause, unless the
    /// statement has FROM items).
    pub scan: Scan,
    /// UPDATE ... FROM: the items the target rows join.
    pub join: Option<Joined>,
    /// (column, new value expression over the old row, followed by the
    /// joined item's row with FROM).
    pub sets: Vec<(usize, Expr)>,
    /// Uncorrelated subqueries of SET and WHERE, run once first.
    pub init: Vec<(Plan, SubqKind)>,
    /// Correlated subqueries of WHERE and SET, run per target row.
    pub per_row: PerRow,
    /// RETURNING, if any.
    pub returning: Option<Returning>,
    /// Through a view WITH CHECK OPTION: what each new row must satisfy.
    pub checks: Vec<ViewCheck>,
    /// Of a view with INSTEAD OF UPDATE triggers (the scan's table is its
    /// trigger shell): the view's rows to update, each followed by the
    /// values SET reads.
    pub instead: Option<Plan>,
    /// Through a partitioned table: the statement on each leaf partition.
    pub partitions: Vec<UpdatePlan>,
    /// On a leaf partition, through this partitioned table: a row whose
    /// new values leave the partition's bound moves to the partition that
    /// takes them; statement-level triggers fire on this table only.
    pub root: Option<Arc<TableDef>>,
}

/// The correlated subqueries of an UPDATE's or DELETE's WHERE and SET:
/// run per target row (followed by its FROM item row), their values
/// follow that row for the rest of the WHERE clause and the SET
/// expressions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PerRow {
    /// The subqueries.
    pub subs: Vec<Correlated>,
    /// The WHERE conjuncts that read their values.
    pub filter: Option<Expr>,
    /// Through a view: the view's columns over the table's row, which the
    /// subqueries read in place of the table's.
    pub view: Vec<Expr>,
    /// How many of the subqueries (the first) the filter reads: the others
    /// run only for rows it keeps.
    pub filtering: usize,
}

/// The FROM items of UPDATE ... FROM (USING of DELETE ... USING): each
/// target row is joined with the first item row for which the WHERE
/// clause holds over the target row followed by the item row, as
/// PostgreSQL joins them (which matching row is unspecified there).
#[derive(Debug, Clone, PartialEq)]
pub struct Joined {
    /// The items, cross-joined, as a query.
    pub plan: Plan,
    /// The WHERE clause over target row ++ item row.
    pub filter: Option<Expr>,
}

/// A planned DELETE.
#[derive(Debug, Clone, PartialEq)]
pub struct DeletePlan {
    /// Finds the target rows.
    pub scan: Scan,
    /// DELETE ... USING: the items the target rows join.
    pub join: Option<Joined>,
    /// Uncorrelated subqueries of WHERE, run once first.
    pub init: Vec<(Plan, SubqKind)>,
    /// Correlated subqueries of WHERE, run per target row.
    pub per_row: PerRow,
    /// RETURNING, if any.
    pub returning: Option<Returning>,
    /// Of a view with INSTEAD OF DELETE triggers (the scan's table is its
    /// trigger shell): the view's rows to delete.
    pub instead: Option<Plan>,
    /// Through a partitioned table: the statement on each leaf partition.
    pub partitions: Vec<DeletePlan>,
    /// On a leaf partition, through a partitioned table (whose
    /// statement-level triggers fire instead of this table's).
    pub routed: bool,
}

/// Hands out unique row ids for tables without a primary key: microseconds
/// since the Unix epoch at process start, then counting up, so ids stay
/// unique across restarts as long as the clock does not jump back by more
/// than the time the previous run lasted.
static NEXT_ROWID: AtomicI64 = AtomicI64::new(0);

fn next_rowid() -> i64 {
    let mut cur = NEXT_ROWID.load(Ordering::Relaxed);
    loop {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        let next = now.max(cur + 1);
        match NEXT_ROWID.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => cur = seen,
        }
    }
}

/// Converts a value to a column's declared type with assignment semantics:
/// varchar(n) rejects longer values (unless only spaces overflow), char(n)
/// pads, numeric(p,s) rounds.
pub fn enforce_type(v: Value, ty: &DataType) -> Result<Value> {
    if v.is_null() {
        return Ok(v);
    }
    match (ty, v) {
        (DataType::Varchar(Some(n)) | DataType::Char(n), Value::Text(s)) if *n > 0 => {
            let n = *n as usize;
            let len = s.chars().count();
            if len > n {
                let (head, tail): (String, String) =
                    (s.chars().take(n).collect(), s.chars().skip(n).collect());
                if tail.chars().any(|c| c != ' ') {
                    bail!(StringDataRightTruncation, "value too long for type {ty}");
                }
                return Ok(Value::Text(head));
            }
            if matches!(ty, DataType::Char(_)) && len < n {
                let mut s = s;
                s.extend(std::iter::repeat_n(' ', n - len));
                return Ok(Value::Text(s));
            }
            Ok(Value::Text(s))
        }
        (_, v)
            if v.data_type().map(|t| t.oid() == ty.oid()).unwrap_or(false)
                && !matches!(ty, DataType::Numeric(Some(_))) =>
        {
            Ok(v)
        }
        (_, v) => cast::cast(v, ty),
    }
}

/// Checks types and NOT NULL constraints of a complete row, in place.
pub fn check_row(table: &TableDef, row: &mut [Value]) -> Result<()> {
    // Generated columns read only the others.
    if !table.bound_generated.is_empty() {
        let ctx = EvalContext::default();
        for (i, e) in &table.bound_generated {
            row[*i] = e.eval(row, &ctx)?;
        }
    }
    for (i, c) in table.columns.iter().enumerate() {
        let v = std::mem::replace(&mut row[i], Value::Null);
        let v = enforce_type(v, &c.ty.to_type())?;
        row[i] = match c.ty.time_precision() {
            Some(p) => sqltypes::datetime::round_precision(v, p),
            None => v,
        };
        if let Some(d) = &c.ty.domain {
            d.check(&row[i])?;
        }
        if !c.nullable && row[i].is_null() {
            return Err(err!(
                NotNullViolation,
                "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                c.name,
                table.name
            )
            .with_detail(format!("Failing row contains ({}).", row_text(row)))
            .with_table(&table.name)
            .with_column(&c.name));
        }
    }
    if !table.bound_checks.is_empty() {
        let ctx = EvalContext::default();
        for (check, e) in table.checks.iter().zip(&table.bound_checks) {
            if let Value::Bool(false) = e.eval(row, &ctx)? {
                return Err(err!(
                    CheckViolation,
                    "new row for relation \"{}\" violates check constraint \"{}\"",
                    table.name,
                    check.name
                )
                .with_detail(format!("Failing row contains ({}).", row_text(row)))
                .with_table(&table.name)
                .with_constraint(&check.name));
            }
        }
    }
    if let Some(c) = &table.partition_check {
        if !c.accepts(row) {
            return Err(crate::partition::violation(table, row));
        }
    }
    Ok(())
}

pub(crate) fn row_text(row: &[Value]) -> String {
    row.iter()
        .map(|v| if v.is_null() { "null".to_string() } else { value_text(v) })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn value_text(v: &Value) -> String {
    let mut out = Vec::new();
    sqltypes::text::format_text(v, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn key_detail(table: &TableDef, cols: &[usize], row: &[Value]) -> String {
    let names: Vec<&str> = cols.iter().map(|&c| table.columns[c].name.as_str()).collect();
    let vals: Vec<Value> = cols.iter().map(|&c| row[c].clone()).collect();
    index_key_detail(&names, &vals, "already exists")
}

/// `Key (a, b)=(1, 2) <what>.`, as PostgreSQL details a unique violation.
pub fn index_key_detail(names: &[&str], vals: &[Value], what: &str) -> String {
    let vals: Vec<String> = vals.iter().map(value_text).collect();
    format!("Key ({})=({}) {what}.", names.join(", "), vals.join(", "))
}

fn unique_violation(table: &TableDef, name: &str, detail: String) -> crate::error::Error {
    err!(UniqueViolation, "duplicate key value violates unique constraint \"{name}\"")
        .with_detail(detail)
        .with_table(&table.name)
        .with_constraint(name)
}

/// Equal, or both NULL (whether a column's value changed).
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => ops::compare(a, b).ok().flatten() == Some(std::cmp::Ordering::Equal),
        _ => false,
    }
}

/// The storage key of a row.
pub fn key_for(tenant: TenantId, table: &TableDef, row: &[Value]) -> Key {
    if table.primary_key.is_empty() {
        row_key(tenant, table, &[Value::Int8(next_rowid())])
    } else {
        let pk: Vec<Value> = table.primary_key.iter().map(|&c| row[c].clone()).collect();
        row_key(tenant, table, &pk)
    }
}

/// An index entry: its key, its key values, and whether it is an
/// exact-unique entry that must be locked and checked. None if a partial
/// index leaves the row out.
pub fn index_entry(
    tenant: TenantId,
    table: &TableDef,
    idx: &IndexDef,
    row: &[Value],
    row_key: &Key,
) -> Result<Option<(Key, Vec<Value>, bool)>> {
    let Some(vals) = idx.key_values(row)? else { return Ok(None) };
    let mut k = index_prefix(idx, &vals, &idx.key_types(table));
    let exact = idx.unique && !vals.iter().any(Value::is_null);
    if !exact {
        k.extend_from_slice(row_key.rest());
    }
    Ok(Some((Key::new(tenant, &k), vals, exact)))
}

/// True if `a` and `b` have the same entry in `idx` (an update of a row
/// leaves the entry alone).
fn same_entry(idx: &IndexDef, a: &[Value], b: &[Value]) -> Result<bool> {
    if idx.is_plain() {
        return Ok(idx.columns.iter().all(|&c| same_value(&a[c], &b[c])));
    }
    Ok(match (idx.key_values(a)?, idx.key_values(b)?) {
        (Some(x), Some(y)) => x.iter().zip(&y).all(|(x, y)| same_value(x, y)),
        (None, None) => true,
        _ => false,
    })
}

/// The start of `idx`'s entries for leading column values `vals` (of
/// `types`): for a unique index and all its columns, the exact entry.
pub fn index_prefix(idx: &IndexDef, vals: &[Value], types: &[DataType]) -> Vec<u8> {
    let mut k = keys::storage_prefix(idx.storage);
    keycode::encode_key(vals, types, &mut k);
    k
}

async fn add_index_entries<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    row: &[Value],
    key: &Key,
    skip_unchanged: Option<&[Value]>,
) -> Result<()> {
    for idx in &table.indexes {
        if let Some(old) = skip_unchanged {
            if same_entry(idx, old, row)? {
                continue;
            }
        }
        let Some((ik, vals, exact)) = index_entry(tenant, table, idx, row, key)? else {
            continue;
        };
        if exact {
            let locked = txn.lock(std::slice::from_ref(&ik)).await.map_err(from_kv)?;
            if locked.first().map(|l| l.latest.is_some()).unwrap_or(false) {
                let detail = index_key_detail(&idx.key_names(table), &vals, "already exists");
                return Err(unique_violation(table, &idx.name, detail));
            }
            txn.put(ik, key.rest().to_vec(), LockMode::Locked).map_err(from_kv)?;
        } else {
            txn.put(ik, key.rest().to_vec(), LockMode::Private).map_err(from_kv)?;
        }
    }
    Ok(())
}

fn remove_index_entries<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    row: &[Value],
    key: &Key,
    keep_unchanged: Option<&[Value]>,
) -> Result<()> {
    for idx in &table.indexes {
        if let Some(new) = keep_unchanged {
            if same_entry(idx, new, row)? {
                continue;
            }
        }
        let Some((ik, _, exact)) = index_entry(tenant, table, idx, row, key)? else {
            continue;
        };
        // Exact unique entries must be locked first (lock_unique_entries).
        let mode = if exact { LockMode::Locked } else { LockMode::Private };
        txn.delete(ik, mode).map_err(from_kv)?;
    }
    Ok(())
}

/// Locks the exact-unique index entries of `row` so they can be deleted.
async fn lock_unique_entries<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    row: &[Value],
    key: &Key,
) -> Result<()> {
    let mut ks = Vec::new();
    for idx in &table.indexes {
        if let Some((ik, _, true)) = index_entry(tenant, table, idx, row, key)? {
            ks.push(ik);
        }
    }
    if !ks.is_empty() {
        txn.lock(&ks).await.map_err(from_kv)?;
    }
    Ok(())
}

/// Inserts complete, checked rows. `private` means the table's storage was
/// created in this transaction, so no other transaction can see its keys.
pub async fn insert_rows<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    rows: &[Row],
    private: bool,
) -> Result<()> {
    let keyed: Vec<Key> = rows.iter().map(|r| key_for(tenant, table, r)).collect();
    if !table.primary_key.is_empty() {
        let locked = if private {
            // Storage created in this transaction holds only our own writes.
            keyed.iter().map(|k| txn.get_own(k).flatten()).collect::<Vec<Option<Vec<u8>>>>()
        } else {
            txn.lock(&keyed).await.map_err(from_kv)?.into_iter().map(|l| l.latest).collect()
        };
        let mut seen = HashSet::with_capacity(keyed.len());
        for ((k, latest), row) in keyed.iter().zip(&locked).zip(rows) {
            if latest.is_some() || !seen.insert(k.as_bytes()) {
                let name =
                    table.pkey_name.clone().unwrap_or_else(|| format!("{}_pkey", table.name));
                return Err(unique_violation(
                    table,
                    &name,
                    key_detail(table, &table.primary_key, row),
                ));
            }
        }
    }
    let mode =
        if private || table.primary_key.is_empty() { LockMode::Private } else { LockMode::Locked };
    let mut buf = Vec::new();
    for (k, row) in keyed.into_iter().zip(rows) {
        buf.clear();
        rowcodec::encode_row(row, &mut buf);
        if !table.indexes.is_empty() {
            add_index_entries(txn, tenant, table, row, &k, None).await?;
        }
        txn.put(k, buf.clone(), mode).map_err(from_kv)?;
    }
    Ok(())
}

/// Runs an INSERT; returns the count and the RETURNING rows.
pub async fn insert<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    plan: &InsertPlan,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
    private: bool,
) -> Result<(u64, Vec<Row>)> {
    let table = &plan.table;
    let triggered = !table.triggers.is_empty();
    // Statement-level triggers fire on the table the statement names.
    let statement = triggered && !plan.routed;
    let upsert_sets = match (&plan.on_conflict, triggered) {
        (Some(OnConflict::DoUpdate { sets, .. }), true) => set_columns(sets),
        _ => Vec::new(),
    };
    let updates = matches!(plan.on_conflict, Some(OnConflict::DoUpdate { .. }));
    if statement {
        let mut f = Firing::new(txn, tenant, catalog, eval, table, &upsert_sets);
        f.statement(Event::Insert, true).await?;
        if updates {
            f.statement(Event::Update, true).await?;
        }
    }
    let eval = &*with_init_plans(txn, tenant, &plan.init, eval, catalog).await?;
    let source = run_rows(txn, tenant, catalog, eval, &plan.source).await?;
    // ON CONFLICT fires BEFORE INSERT row by row, with its conflicts.
    let upserting = plan.on_conflict.is_some();
    let before = triggers::has_row(table, Event::Insert, true) && !upserting;
    let mut rows = Vec::with_capacity(source.len());
    for src in source {
        let mut row = vec![Value::Null; table.columns.len()];
        let mut given = vec![false; table.columns.len()];
        for (v, &t) in src.into_iter().zip(&plan.targets) {
            row[t] = v;
            given[t] = true;
        }
        for (i, d) in plan.defaults.iter().enumerate() {
            if !given[i] {
                if let Some(d) = d {
                    row[i] = d.eval(&[], eval)?;
                }
            }
        }
        if before {
            let mut f = Firing::new(txn, tenant, catalog, eval, table, &[]);
            match f.before_row(Event::Insert, None, Some(row)).await? {
                Some(r) => row = r,
                None => continue,
            }
        }
        if !upserting && !table.is_partitioned() {
            check_row(table, &mut row)?;
        }
        rows.push(row);
    }
    if table.is_partitioned() && !plan.instead {
        let r = insert_routed(txn, tenant, plan, rows, eval, catalog).await?;
        if statement {
            let mut f = Firing::new(txn, tenant, catalog, eval, table, &upsert_sets);
            f.statement(Event::Insert, false).await?;
            if updates {
                f.statement(Event::Update, false).await?;
            }
        }
        return Ok(r);
    }
    if plan.instead {
        let mut done = Vec::with_capacity(rows.len());
        for row in rows {
            let mut f = Firing::new(txn, tenant, catalog, eval, table, &[]);
            done.extend(f.instead_row(Event::Insert, None, Some(row)).await?);
        }
        let mut calls = TxnCalls { txn: &mut *txn, tenant, catalog };
        let returned =
            returning_rows(plan.returning.as_ref(), &done, &[], &mut calls, eval).await?;
        Firing::new(txn, tenant, catalog, eval, table, &[]).statement(Event::Insert, false).await?;
        return Ok((done.len() as u64, returned));
    }
    if let Some(oc) = &plan.on_conflict {
        let r = upsert(txn, tenant, plan, oc, rows, eval, catalog).await?;
        if triggered {
            let mut f = Firing::new(txn, tenant, catalog, eval, table, &upsert_sets);
            f.after_rows(r.2).await?;
            if statement {
                f.statement(Event::Insert, false).await?;
                if updates {
                    f.statement(Event::Update, false).await?;
                }
            }
        }
        return Ok((r.0, r.1));
    }
    for chunk in rows.chunks(1024) {
        insert_rows(txn, tenant, table, chunk, private).await?;
    }
    // As in PostgreSQL, a view's check comes after the table's
    // constraints and unique indexes.
    for row in &rows {
        check_views(&plan.checks, row, eval)?;
    }
    if !table.foreign_keys.is_empty() {
        let defer = eval.deferred.as_deref();
        fk::check_references(txn, tenant, catalog, table, &rows, None, defer).await?;
    }
    let mut calls = TxnCalls { txn: &mut *txn, tenant, catalog };
    let returned = returning_rows(plan.returning.as_ref(), &rows, &[], &mut calls, eval).await?;
    if triggered {
        let mut f = Firing::new(txn, tenant, catalog, eval, table, &[]);
        if triggers::has_row(table, Event::Insert, false) {
            let events = rows
                .iter()
                .map(|r| RowEvent { event: Event::Insert, old: None, new: Some(r.clone()) })
                .collect();
            f.after_rows(events).await?;
        }
        if statement {
            f.statement(Event::Insert, false).await?;
        }
    }
    Ok((rows.len() as u64, returned))
}

/// INSERT into a partitioned table: each complete row goes to the leaf
/// partition that takes it, the rows of one leaf inserted together as an
/// INSERT into it would (its constraints, indexes, ON CONFLICT, row
/// triggers and RETURNING).
async fn insert_routed<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    plan: &InsertPlan,
    rows: Vec<Row>,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<(u64, Vec<Row>)> {
    let (mut count, mut returned) = (0, Vec::new());
    for (leaf, rows) in crate::partition::split(&catalog.partitions, &plan.table, rows)? {
        let n = leaf.columns.len();
        let arbiters = crate::partition::leaf_arbiters(&plan.table, &leaf, &plan.arbiters)?;
        let values = rows.into_iter().map(|r| r.into_iter().map(Expr::Const).collect()).collect();
        let sub = InsertPlan {
            table: leaf,
            targets: (0..n).collect(),
            source: Plan::Values(values),
            defaults: vec![None; n],
            returning: plan.returning.clone(),
            on_conflict: plan.on_conflict.clone(),
            arbiters,
            checks: plan.checks.clone(),
            instead: false,
            init: Vec::new(),
            routed: true,
        };
        let (k, r) = Box::pin(insert(txn, tenant, &sub, eval, catalog, false)).await?;
        count += k;
        returned.extend(r);
    }
    Ok((count, returned))
}

/// The columns SET assigns (UPDATE OF triggers fire on them).
fn set_columns(sets: &[(usize, Expr)]) -> Vec<usize> {
    sets.iter().map(|(c, _)| *c).collect()
}

/// `eval` with the values of the uncorrelated subqueries `init` (INSERT's,
/// UPDATE's, DELETE's, MERGE's), which run first: itself when there are
/// none.
async fn with_init_plans<'e, T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    init: &[(Plan, crate::plan::SubqKind)],
    eval: &'e EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<std::borrow::Cow<'e, EvalContext>> {
    if init.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(eval));
    }
    Ok(std::borrow::Cow::Owned(init_plans(txn, tenant, init, eval, catalog).await?))
}

/// Runs UPDATE's or DELETE's uncorrelated subqueries (the PL/pgSQL calls
/// in them first, as they may write); returns the context that sees them.
async fn init_plans<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    init: &[(Plan, crate::plan::SubqKind)],
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<EvalContext> {
    let mut ran = Vec::new();
    for (i, (p, kind)) in init.iter().enumerate() {
        let mut calls = crate::plpgsql::TxnCalls { txn: &mut *txn, tenant, catalog };
        if let Some(once) = crate::plpgsql::run_calls(p, eval, &mut calls).await? {
            ran.push((i, (once, *kind)));
        }
    }
    let cx = ExecCtx { txn: &*txn, tenant, eval, catalog };
    if ran.is_empty() {
        return exec::with_init_plans(init, &cx).await;
    }
    let mut list = init.to_vec();
    for (i, p) in ran {
        list[i] = p;
    }
    exec::with_init_plans(&list, &cx).await
}

/// The row already in `table` that `row` conflicts with in one of the
/// `arbiters` (see [`InsertPlan::arbiters`]), locked: its key and stored
/// bytes.
async fn conflicting<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    arbiters: &[Option<usize>],
    row: &[Value],
) -> Result<Option<(Key, Vec<u8>)>> {
    for a in arbiters {
        let key = match a.and_then(|i| table.indexes.get(i)) {
            None => key_for(tenant, table, row),
            Some(idx) => {
                // A unique index's exact entry holds the row's key; a
                // key with a NULL conflicts with nothing.
                let placeholder = Key::new(tenant, &[]);
                let Some((ik, _, true)) = index_entry(tenant, table, idx, row, &placeholder)?
                else {
                    continue;
                };
                let locked = txn.lock(std::slice::from_ref(&ik)).await.map_err(from_kv)?;
                let Some(rest) = locked.into_iter().next().and_then(|l| l.latest) else {
                    continue;
                };
                Key::new(tenant, &rest)
            }
        };
        let locked = txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
        if let Some(bytes) = locked.into_iter().next().and_then(|l| l.latest) {
            return Ok(Some((key, bytes)));
        }
    }
    Ok(None)
}

/// INSERT ... ON CONFLICT: row by row, lock the key, then insert, skip or
/// update the existing row. Returns the count, the RETURNING rows and the
/// changes for the AFTER ROW triggers (if the table has any).
async fn upsert<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    plan: &InsertPlan,
    oc: &OnConflict,
    rows: Vec<Row>,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<(u64, Vec<Row>, Vec<RowEvent>)> {
    let table = &plan.table;
    let after = triggers::has_row(table, Event::Insert, false)
        || triggers::has_row(table, Event::Update, false);
    let before_update = triggers::has_row(table, Event::Update, true);
    let before_insert = triggers::has_row(table, Event::Insert, true);
    let set_cols = match (oc, before_update) {
        (OnConflict::DoUpdate { sets, .. }, true) => set_columns(sets),
        _ => Vec::new(),
    };
    let mut events = Vec::new();
    let types = table.types();
    let mut written = Vec::new();
    let mut updated_keys = HashSet::new();
    // Rows replaced by DO UPDATE, pairwise with their new versions in
    // `written`, for the foreign-key checks.
    let mut replaced: Vec<(usize, Row)> = Vec::new();
    let memo = crate::exec::memo::fresh();
    for mut row in rows {
        if before_insert {
            let mut f = Firing::new(txn, tenant, catalog, eval, table, &[]);
            match f.before_row(Event::Insert, None, Some(row)).await? {
                Some(r) => row = r,
                None => continue,
            }
        }
        check_row(table, &mut row)?;
        let Some((key, existing)) = conflicting(txn, tenant, table, &plan.arbiters, &row).await?
        else {
            insert_rows(txn, tenant, table, std::slice::from_ref(&row), false).await?;
            let key = key_for(tenant, table, &row);
            check_views(&plan.checks, &row, eval)?;
            updated_keys.insert(key.as_bytes().to_vec());
            if after {
                events.push(RowEvent { event: Event::Insert, old: None, new: Some(row.clone()) });
            }
            written.push(row);
            continue;
        };
        let OnConflict::DoUpdate { sets, per_row } = oc else { continue };
        if !updated_keys.insert(key.as_bytes().to_vec()) {
            return Err(err!(CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time")
                .with_hint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values."));
        }
        let old = rowcodec::decode_row(&existing, &types)?;
        let mut pair = old.clone();
        pair.extend(row.iter().cloned());
        let mut calls = TxnCalls { txn: &mut *txn, tenant, catalog };
        match with_per_row(&pair, Vec::new(), per_row, &memo, &mut calls, eval).await? {
            Some(values) => pair.extend(values),
            None => continue,
        }
        let mut new = old.clone();
        for (c, e) in sets {
            new[*c] = e.eval(&pair, eval)?;
        }
        if before_update {
            let mut f = Firing::new(txn, tenant, catalog, eval, table, &set_cols);
            match f.before_row(Event::Update, Some(&old), Some(new)).await? {
                Some(r) => new = r,
                None => continue,
            }
        }
        check_row(table, &mut new)?;
        if table.primary_key.iter().any(|&c| {
            ops::compare(&old[c], &new[c]).ok().flatten() != Some(std::cmp::Ordering::Equal)
        }) {
            bail!(FeatureNotSupported, "ON CONFLICT DO UPDATE cannot change the primary key yet");
        }
        written.push(update_row(txn, tenant, table, key, &old, new, false).await?);
        if let Some(new) = written.last() {
            check_views(&plan.checks, new, eval)?;
        }
        if after {
            let new = written.last().cloned();
            events.push(RowEvent { event: Event::Update, old: Some(old.clone()), new });
        }
        if table.has_foreign_keys() {
            replaced.push((written.len() - 1, old));
        }
    }
    if table.has_foreign_keys() {
        // Inserted rows have no old version; replaced ones compare with theirs.
        let (mut olds, mut news) = (Vec::new(), Vec::new());
        let mut inserted = Vec::new();
        let mut next = replaced.into_iter().peekable();
        for (i, row) in written.iter().enumerate() {
            match next.next_if(|(j, _)| *j == i) {
                Some((_, old)) => {
                    olds.push(old);
                    news.push(row.clone());
                }
                None => inserted.push(row.clone()),
            }
        }
        let defer = eval.deferred.as_deref();
        fk::check_references(txn, tenant, catalog, table, &inserted, None, defer).await?;
        fk::check_references(txn, tenant, catalog, table, &news, Some(&olds), defer).await?;
        let news = Some(news.as_slice());
        fk::referenced_rows_changed(txn, tenant, catalog, table, &olds, news, 0, Some(eval))
            .await?;
    }
    let mut calls = TxnCalls { txn: &mut *txn, tenant, catalog };
    let returned = returning_rows(plan.returning.as_ref(), &written, &[], &mut calls, eval).await?;
    Ok((written.len() as u64, returned, events))
}

/// RETURNING over each row, followed by the item row it joined (with
/// FROM or USING items; `items` is empty or one per row). Its correlated
/// subqueries' PL/pgSQL calls run in `calls`, where they may write.
async fn returning_rows<R: RunCall>(
    ret: Option<&Returning>,
    rows: &[Row],
    items: &[Row],
    calls: &mut R,
    eval: &EvalContext,
) -> Result<Vec<Row>> {
    let Some(ret) = ret else { return Ok(vec![]) };
    let subs = !ret.per_row.subs.is_empty();
    let memo = if subs { crate::exec::memo::fresh() } else { None };
    let mut out = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let item = items.get(i).map(Vec::as_slice).unwrap_or_default();
        let joined;
        let r = match (subs, item.is_empty()) {
            (false, true) => r,
            (false, false) => {
                joined = [r.as_slice(), item].concat();
                &joined
            }
            (true, _) => {
                let ext = with_per_row(r, item.to_vec(), &ret.per_row, &memo, calls, eval).await?;
                joined = [r.as_slice(), &ext.unwrap_or_default()].concat();
                &joined
            }
        };
        let mut o = Vec::with_capacity(ret.exprs.len());
        for e in &ret.exprs {
            o.push(e.eval(r, eval)?);
        }
        out.push(o);
    }
    Ok(out)
}

/// Finds, locks and re-checks the target rows of an UPDATE or DELETE,
/// with the item row each joins (empty without FROM items). Returns
/// (key, newest row, item row) for rows that still qualify: a row a
/// transaction committed after our snapshot changed is checked (joined)
/// again in its newest version, and dropped if it is gone or no longer
/// matches.
async fn lock_joined<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    scan: &Scan,
    join: Option<&Joined>,
    per_row: &PerRow,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<Vec<(Key, Row, Row)>> {
    let memo = crate::exec::memo::fresh();
    let mut calls = TxnCalls { txn, tenant, catalog };
    // One row by its whole primary key and nothing else to check: read
    // and lock it in one call (a row the WHERE clause may reject must not
    // be locked, so any other condition takes the general path).
    let pinned = |f: &Option<Expr>| {
        f.as_ref().is_none_or(|f| crate::select::pins_primary_key_only(&scan.table, f))
    };
    if let (None, Access::Point(exprs), true, None, false, None) =
        (join, &scan.access, pinned(&scan.filter), &per_row.filter, scan.keyed, &scan.cap)
    {
        let t = &scan.table;
        let Some(vals) = exec::key_values(exprs, &t.pk_types(), eval)? else { return Ok(vec![]) };
        let key = row_key(tenant, t, &vals);
        let Some((bytes, l)) = calls.txn.get_for_update(&key).await.map_err(from_kv)? else {
            return Ok(vec![]);
        };
        let bytes = match (l.changed_since_snapshot, l.latest) {
            (false, _) => bytes,
            (true, Some(newest)) => newest,
            (true, None) => return Ok(vec![]),
        };
        let row = rowcodec::decode_row(&bytes, &t.types())?;
        let rows = Rows { scan, join, items: &[], per_row, memo: &memo };
        let item = rows.qualify(&row, true, &mut calls, eval).await?;
        return Ok(item.map(|item| (key, row, item)).into_iter().collect());
    }
    let (found, items) = {
        let cx = calls.reads(eval)?;
        let found = scan_rows(&cx, scan).await?;
        let items = match join {
            Some(j) => exec::run(&j.plan, &cx).await?,
            None => Vec::new(),
        };
        (found, items)
    };
    let mut candidates = Vec::with_capacity(found.len());
    let rows = Rows { scan, join, items: &items, per_row, memo: &memo };
    for (key, row) in found {
        // Without FROM items the scan applied the WHERE clause already.
        if let Some(item) = rows.qualify(&row, join.is_some(), &mut calls, eval).await? {
            candidates.push((key, row, item));
        }
    }
    if candidates.is_empty() {
        return Ok(vec![]);
    }
    let keys: Vec<Key> = candidates.iter().map(|(k, _, _)| k.clone()).collect();
    let locked = calls.txn.lock(&keys).await.map_err(from_kv)?;
    let types = scan.table.types();
    let mut out = Vec::with_capacity(candidates.len());
    for ((key, row, item), l) in candidates.into_iter().zip(locked) {
        if !l.changed_since_snapshot {
            out.push((key, row, item));
            continue;
        }
        let Some(bytes) = l.latest else { continue };
        let newest = rowcodec::decode_row(&bytes, &types)?;
        if let Some(item) = rows.qualify(&newest, true, &mut calls, eval).await? {
            out.push((key, newest, item));
        }
    }
    Ok(out)
}

/// What decides whether an UPDATE's or DELETE's target row is written.
struct Rows<'a> {
    scan: &'a Scan,
    join: Option<&'a Joined>,
    items: &'a [Row],
    per_row: &'a PerRow,
    memo: &'a Option<std::sync::Arc<crate::exec::memo::ScanMemo>>,
}

impl Rows<'_> {
    /// The row the SET and RETURNING expressions read after target row
    /// `row`, when the WHERE clause holds for it: the first FROM item row
    /// it holds with, followed by the correlated subqueries' values. With
    /// `check_scan` false the scan has applied its filter already.
    async fn qualify<R: RunCall>(
        &self,
        row: &[Value],
        check_scan: bool,
        calls: &mut R,
        eval: &EvalContext,
    ) -> Result<Option<Row>> {
        let Some(join) = self.join else {
            if check_scan {
                if let Some(f) = &self.scan.filter {
                    if !f.eval_pred(row, eval)? {
                        return Ok(None);
                    }
                }
            }
            return with_per_row(row, Vec::new(), self.per_row, self.memo, calls, eval).await;
        };
        let mut both = Vec::with_capacity(row.len() + self.items.first().map_or(0, Vec::len));
        for item in self.items {
            both.clear();
            both.extend_from_slice(row);
            both.extend_from_slice(item);
            if let Some(f) = &join.filter {
                if !f.eval_pred(&both, eval)? {
                    continue;
                }
            }
            let ext = with_per_row(row, item.clone(), self.per_row, self.memo, calls, eval).await?;
            if ext.is_some() {
                return Ok(ext);
            }
        }
        Ok(None)
    }
}

/// `item` followed by the values of the correlated subqueries over `row`
/// and `item`, or None when the WHERE conjuncts reading them do not hold.
/// Their PL/pgSQL calls run through `calls`, where they may write.
async fn with_per_row<R: RunCall>(
    row: &[Value],
    item: Row,
    per_row: &PerRow,
    memo: &Option<std::sync::Arc<crate::exec::memo::ScanMemo>>,
    calls: &mut R,
    eval: &EvalContext,
) -> Result<Option<Row>> {
    if per_row.subs.is_empty() && per_row.filter.is_none() {
        return Ok(Some(item));
    }
    let mut ext = [row, item.as_slice()].concat();
    let base = ext.len();
    // The row the subqueries read: `ext` as it starts, or through a view
    // the view's columns and the item.
    let seen = match per_row.view.is_empty() {
        true => None,
        false => {
            let mut seen =
                per_row.view.iter().map(|e| e.eval(row, eval)).collect::<Result<Vec<_>>>()?;
            seen.extend(item.iter().cloned());
            Some(seen)
        }
    };
    // Those the filter reads first, the others only if it holds.
    let (first, rest) = per_row.subs.split_at(per_row.filtering.min(per_row.subs.len()));
    if !first.is_empty() {
        let outer = seen.as_deref().unwrap_or(&ext);
        let values = plpgsql::correlated_values(outer, first, memo, calls, eval).await?;
        ext.extend(values);
    }
    if let Some(f) = &per_row.filter {
        if !f.eval_pred(&ext, eval)? {
            return Ok(None);
        }
    }
    if !rest.is_empty() {
        let outer = seen.as_deref().unwrap_or(&ext[..base]);
        let values = plpgsql::correlated_values(outer, rest, memo, calls, eval).await?;
        ext.extend(values);
    }
    Ok(Some(ext.split_off(row.len())))
}

/// Runs a query in a transaction (INSERT's source, the view rows of
/// INSTEAD OF triggers, a PL/pgSQL statement): its PL/pgSQL calls that
/// run once first, in that transaction, where they may write.
pub(crate) async fn run_rows<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    catalog: &crate::catalog::Catalog,
    eval: &EvalContext,
    plan: &Plan,
) -> Result<Vec<Row>> {
    let once = {
        let mut calls = crate::plpgsql::TxnCalls { txn: &mut *txn, tenant, catalog };
        crate::plpgsql::run_calls(plan, eval, &mut calls).await?
    };
    let cx = ExecCtx { txn: &*txn, tenant, eval, catalog };
    crate::exec::run(once.as_ref().unwrap_or(plan), &cx).await
}

/// UPDATE or DELETE of a view through its INSTEAD OF triggers: each row
/// of `rows` (the view's columns, then the values `sets` read) goes to
/// them; the rows they do not skip count, and RETURNING reads them as
/// the triggers left them.
async fn instead_of<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    catalog: &crate::catalog::Catalog,
    eval: &EvalContext,
    table: &TableDef,
    event: Event,
    (rows, sets, returning): (&Plan, &[(usize, Expr)], Option<&Returning>),
) -> Result<(u64, Vec<Row>)> {
    let set_cols = set_columns(sets);
    Firing::new(txn, tenant, catalog, eval, table, &set_cols).statement(event, true).await?;
    let rows = run_rows(txn, tenant, catalog, eval, rows).await?;
    let n = table.columns.len();
    let mut done = Vec::new();
    for row in rows {
        let old = &row[..n.min(row.len())];
        let new = match event {
            Event::Delete => None,
            _ => {
                let mut new = old.to_vec();
                for (c, e) in sets {
                    new[*c] = enforce_type(e.eval(&row, eval)?, &table.columns[*c].ty.to_type())?;
                }
                Some(new)
            }
        };
        let mut f = Firing::new(txn, tenant, catalog, eval, table, &set_cols);
        done.extend(f.instead_row(event, Some(old), new).await?);
    }
    let mut calls = TxnCalls { txn: &mut *txn, tenant, catalog };
    let returned = returning_rows(returning, &done, &[], &mut calls, eval).await?;
    Firing::new(txn, tenant, catalog, eval, table, &set_cols).statement(event, false).await?;
    Ok((done.len() as u64, returned))
}

/// Runs an UPDATE.
pub async fn update<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    plan: &UpdatePlan,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<(u64, Vec<Row>)> {
    update_rows(txn, tenant, plan, eval, catalog, &mut Vec::new()).await
}

/// [`update`]; a row of a leaf partition that moves out of its bound is
/// deleted and added to `moved`, which the partitioned table's update
/// inserts once every partition was updated (so that none sees the moved
/// rows again).
async fn update_rows<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    plan: &UpdatePlan,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
    moved: &mut Vec<Row>,
) -> Result<(u64, Vec<Row>)> {
    let table = &plan.scan.table;
    if let Some(rows) = &plan.instead {
        let what = (rows, plan.sets.as_slice(), plan.returning.as_ref());
        return instead_of(txn, tenant, catalog, eval, table, Event::Update, what).await;
    }
    let triggered = !table.triggers.is_empty();
    // Statement-level triggers fire on the table the statement names.
    let statement = triggered && plan.root.is_none();
    let set_cols = match triggered {
        true => set_columns(&plan.sets),
        false => Vec::new(),
    };
    if statement {
        Firing::new(txn, tenant, catalog, eval, table, &set_cols)
            .statement(Event::Update, true)
            .await?;
    }
    let eval = &*with_init_plans(txn, tenant, &plan.init, eval, catalog).await?;
    let join = plan.join.as_ref();
    let targets = lock_joined(txn, tenant, &plan.scan, join, &plan.per_row, eval, catalog).await?;
    let before = triggers::has_row(table, Event::Update, true);
    let after = triggers::has_row(table, Event::Update, false);
    let mut events = Vec::new();
    let pk_cols: HashSet<usize> = table.primary_key.iter().copied().collect();
    let pk_changes = plan.sets.iter().any(|(c, _)| pk_cols.contains(c));
    let mut written = Vec::with_capacity(targets.len());
    let mut olds = Vec::new();
    let mut items = Vec::new();
    // A DEFERRABLE unique constraint holds at the end of the statement:
    // every row's old entries go before any row's new ones are written.
    let batch = table.has_deferrable_unique();
    let mut staged = Vec::new();
    let mut record = |old: Row, new: Row, item: Row| -> Result<()> {
        check_views(&plan.checks, &new, eval)?;
        if after {
            events.push(RowEvent {
                event: Event::Update,
                old: Some(old.clone()),
                new: Some(new.clone()),
            });
        }
        if table.has_foreign_keys() {
            olds.push(old);
        }
        items.push(item);
        written.push(new);
        Ok(())
    };
    for (key, old, item) in targets {
        let mut new = old.clone();
        let with_item;
        let source: &[Value] = match item.is_empty() {
            true => &old,
            false => {
                with_item = [old.as_slice(), item.as_slice()].concat();
                &with_item
            }
        };
        for (c, e) in &plan.sets {
            new[*c] = e.eval(source, eval)?;
        }
        if before {
            let mut f = Firing::new(txn, tenant, catalog, eval, table, &set_cols);
            match f.before_row(Event::Update, Some(&old), Some(new)).await? {
                Some(r) => new = r,
                None => continue,
            }
        }
        if plan.root.is_some() && table.partition_check.as_ref().is_some_and(|c| !c.accepts(&new)) {
            // Through the partitioned table, the row moves to the
            // partition that takes its new values.
            delete_row(txn, tenant, table, key, &old).await?;
            moved.push(new.clone());
            record(old, new, item)?;
            continue;
        }
        check_row(table, &mut new)?;
        // A BEFORE trigger may change the key too.
        let moves = pk_changes || before;
        if batch {
            let moved = unlink_old(txn, tenant, table, &key, &old, &new, moves).await?;
            staged.push((key, old, new, item, moved));
            continue;
        }
        let new = update_row(txn, tenant, table, key, &old, new, moves).await?;
        record(old, new, item)?;
    }
    for (key, old, new, item, moved) in staged {
        let new = link_new(txn, tenant, table, key, &old, new, moved).await?;
        record(old, new, item)?;
    }
    if table.has_foreign_keys() {
        let defer = eval.deferred.as_deref();
        fk::check_references(txn, tenant, catalog, table, &written, Some(olds.as_slice()), defer)
            .await?;
        let news = Some(written.as_slice());
        fk::referenced_rows_changed(txn, tenant, catalog, table, &olds, news, 0, Some(eval))
            .await?;
    }
    let mut calls = TxnCalls { txn: &mut *txn, tenant, catalog };
    let mut returned =
        returning_rows(plan.returning.as_ref(), &written, &items, &mut calls, eval).await?;
    let mut count = written.len() as u64;
    for p in &plan.partitions {
        let (n, r) = Box::pin(update_rows(txn, tenant, p, eval, catalog, moved)).await?;
        count += n;
        returned.extend(r);
    }
    if !moved.is_empty() && !plan.partitions.is_empty() {
        insert_moved(txn, tenant, table, std::mem::take(moved), eval, catalog).await?;
    }
    if triggered {
        let mut f = Firing::new(txn, tenant, catalog, eval, table, &set_cols);
        f.after_rows(events).await?;
        if statement {
            f.statement(Event::Update, false).await?;
        }
    }
    Ok((count, returned))
}

/// Inserts `rows`, moved out of their partitions by an UPDATE through
/// partitioned table `root`, into the partitions that take them (their
/// constraints, indexes and INSERT row triggers apply).
async fn insert_moved<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    root: &Arc<TableDef>,
    rows: Vec<Row>,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<()> {
    let n = root.columns.len();
    let values = rows.into_iter().map(|r| r.into_iter().map(Expr::Const).collect()).collect();
    let plan = InsertPlan {
        table: root.clone(),
        targets: (0..n).collect(),
        source: Plan::Values(values),
        defaults: vec![None; n],
        returning: None,
        on_conflict: None,
        arbiters: Vec::new(),
        checks: Vec::new(),
        instead: false,
        init: Vec::new(),
        routed: true,
    };
    Box::pin(insert(txn, tenant, &plan, eval, catalog, false)).await?;
    Ok(())
}

/// Replaces locked row `old` (at `key`) with `new`, which has passed
/// [`check_row`]: index entries follow, and a changed primary key moves the
/// row (`pk_may_change` false skips that comparison). Returns `new`.
pub async fn update_row<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    key: Key,
    old: &[Value],
    new: Row,
    pk_may_change: bool,
) -> Result<Row> {
    let moved = unlink_old(txn, tenant, table, &key, old, &new, pk_may_change).await?;
    link_new(txn, tenant, table, key, old, new, moved).await
}

/// [`update_row`]'s first half: removes the index entries of `old` that
/// `new` changes, and `old` itself when its primary key moves (returns
/// whether it does).
async fn unlink_old<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    key: &Key,
    old: &[Value],
    new: &[Value],
    pk_may_change: bool,
) -> Result<bool> {
    let moved = pk_may_change
        && table.primary_key.iter().any(|&c| {
            ops::compare(&old[c], &new[c]).ok().flatten() != Some(std::cmp::Ordering::Equal)
        });
    if !table.indexes.is_empty() {
        lock_unique_entries(txn, tenant, table, old, key).await?;
        remove_index_entries(txn, tenant, table, old, key, if moved { None } else { Some(new) })?;
    }
    if moved {
        txn.delete(key.clone(), LockMode::Locked).map_err(from_kv)?;
    }
    Ok(moved)
}

/// [`update_row`]'s second half: writes `new` (at its own key when it
/// `moved`, else at `key`) with the index entries [`unlink_old`] removed.
async fn link_new<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    key: Key,
    old: &[Value],
    new: Row,
    moved: bool,
) -> Result<Row> {
    if moved {
        let rows = [new];
        insert_rows(txn, tenant, table, &rows, false).await?;
        let [new] = rows;
        return Ok(new);
    }
    if !table.indexes.is_empty() {
        add_index_entries(txn, tenant, table, &new, &key, Some(old)).await?;
    }
    let mut buf = Vec::new();
    rowcodec::encode_row(&new, &mut buf);
    txn.put(key, buf, LockMode::Locked).map_err(from_kv)?;
    Ok(new)
}

/// Deletes locked row `old` at `key` with its index entries.
pub async fn delete_row<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    table: &TableDef,
    key: Key,
    old: &[Value],
) -> Result<()> {
    if !table.indexes.is_empty() {
        lock_unique_entries(txn, tenant, table, old, &key).await?;
        remove_index_entries(txn, tenant, table, old, &key, None)?;
    }
    txn.delete(key, LockMode::Locked).map_err(from_kv)
}

/// Runs a DELETE.
pub async fn delete<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    plan: &DeletePlan,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<(u64, Vec<Row>)> {
    let table = &plan.scan.table;
    if let Some(rows) = &plan.instead {
        let what = (rows, &[][..], plan.returning.as_ref());
        return instead_of(txn, tenant, catalog, eval, table, Event::Delete, what).await;
    }
    let triggered = !table.triggers.is_empty();
    // Statement-level triggers fire on the table the statement names.
    let statement = triggered && !plan.routed;
    if statement {
        Firing::new(txn, tenant, catalog, eval, table, &[]).statement(Event::Delete, true).await?;
    }
    let eval = &*with_init_plans(txn, tenant, &plan.init, eval, catalog).await?;
    let join = plan.join.as_ref();
    let targets = lock_joined(txn, tenant, &plan.scan, join, &plan.per_row, eval, catalog).await?;
    let before = triggers::has_row(table, Event::Delete, true);
    let mut deleted = Vec::with_capacity(targets.len());
    let mut items = Vec::with_capacity(targets.len());
    for (key, old, item) in targets {
        if before {
            let mut f = Firing::new(txn, tenant, catalog, eval, table, &[]);
            if f.before_row(Event::Delete, Some(&old), None).await?.is_none() {
                continue;
            }
        }
        delete_row(txn, tenant, table, key, &old).await?;
        deleted.push(old);
        items.push(item);
    }
    if !table.referenced_by.is_empty() {
        fk::referenced_rows_changed(txn, tenant, catalog, table, &deleted, None, 0, Some(eval))
            .await?;
    }
    let mut calls = TxnCalls { txn: &mut *txn, tenant, catalog };
    let mut returned =
        returning_rows(plan.returning.as_ref(), &deleted, &items, &mut calls, eval).await?;
    let mut count = deleted.len() as u64;
    for p in &plan.partitions {
        let (n, r) = Box::pin(delete(txn, tenant, p, eval, catalog)).await?;
        count += n;
        returned.extend(r);
    }
    if triggered {
        let mut f = Firing::new(txn, tenant, catalog, eval, table, &[]);
        if triggers::has_row(table, Event::Delete, false) {
            let events = deleted
                .iter()
                .map(|r| RowEvent { event: Event::Delete, old: Some(r.clone()), new: None })
                .collect();
            f.after_rows(events).await?;
        }
        if statement {
            f.statement(Event::Delete, false).await?;
        }
    }
    Ok((count, returned))
}
