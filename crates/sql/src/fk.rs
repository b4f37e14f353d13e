//! FOREIGN KEY enforcement: reference checks and ON DELETE/UPDATE actions.
//!
//! The checks of a statement run after all its rows are written, as
//! PostgreSQL's referential triggers fire at the end of the statement, so
//! one INSERT may add a child before its parent and one DELETE may remove a
//! whole self-referencing tree.
//!
//! Concurrency works through row locks. Checking a reference takes the
//! referenced key (the parent's primary-key row, or the exact entry of the
//! unique index the key names) *shared* with [`Txn::lock_for_share`] and
//! reads its newest state: it waits for a transaction that is deleting or
//! re-keying that parent, then sees the outcome, and the parent cannot go
//! away until the referencing transaction ends. A statement that removes a
//! referenced key already holds that key exclusively, so it has waited for
//! every transaction that checked a reference to it; it then looks for
//! referencing rows in the newest committed state ([`Txn::scan_latest`]),
//! which includes the rows those transactions committed after its snapshot
//! (under REPEATABLE READ too, where PostgreSQL likewise reports the
//! violation).
//!
//! Difference from PostgreSQL: the shared lock also waits for (and blocks)
//! updates of the parent's non-key columns; PostgreSQL's FOR KEY SHARE does
//! not conflict with them.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;

use kvapi::{Key, KeyRange, TenantId, Txn};
use sqltypes::{cast, keycode, rowcodec, DataType, Value};

use crate::catalog::{keys, Catalog, FkAction, ForeignKeyDef, TableDef};
use crate::deferred::{Deferred, Pending};
use crate::dml::{self, check_row};
use crate::error::{from_kv, Error, Result};
use crate::exec::{after, row_key, Row, SCAN_BATCH};
use crate::expr::EvalContext;
use crate::triggers::{Event, Firing, RowEvent};
use crate::{bail, err};

/// How deep ON DELETE/UPDATE actions may cascade through tables.
const MAX_CASCADE_DEPTH: u32 = 64;

/// Where a foreign key's referenced values are unique in the parent.
pub enum Target {
    /// The parent's primary key.
    Primary,
    /// The parent's unique index at this position.
    Unique(usize),
}

/// The referenced unique key of `fk` in `parent`, with its columns in key order.
pub fn target(parent: &TableDef, fk: &ForeignKeyDef) -> Result<(Target, Vec<usize>)> {
    let mut want = fk.ref_columns.clone();
    want.sort_unstable();
    let same = |cols: &[usize]| {
        let mut c = cols.to_vec();
        c.sort_unstable();
        c == want
    };
    if !parent.primary_key.is_empty() && same(&parent.primary_key) {
        return Ok((Target::Primary, parent.primary_key.clone()));
    }
    match parent.indexes.iter().position(|i| i.unique && i.is_plain() && same(&i.columns)) {
        Some(i) => Ok((Target::Unique(i), parent.indexes[i].columns.clone())),
        None => bail!(
            InvalidForeignKey,
            "there is no unique constraint matching given keys for referenced table \"{}\"",
            parent.name
        ),
    }
}

/// The parent key that referenced values `vals` (pairwise with
/// `fk.ref_columns`, all non-null) must exist at; None if no parent row
/// can hold them (a value outside the parent column's type).
fn parent_key(
    tenant: TenantId,
    parent: &TableDef,
    fk: &ForeignKeyDef,
    target: &(Target, Vec<usize>),
    vals: &[Value],
) -> Result<Option<Key>> {
    let (which, cols) = target;
    let mut key_vals = Vec::with_capacity(cols.len());
    let mut types = Vec::with_capacity(cols.len());
    for &c in cols {
        let j = fk.ref_columns.iter().position(|&r| r == c).expect("target matches the key");
        let ty = parent.columns[c].ty.to_type();
        match cast::cast(vals[j].clone(), &ty) {
            Ok(v) => key_vals.push(v),
            Err(_) => return Ok(None),
        }
        types.push(ty);
    }
    Ok(Some(match which {
        Target::Primary => row_key(tenant, parent, &key_vals),
        Target::Unique(i) => {
            Key::new(tenant, &dml::index_prefix(&parent.indexes[*i], &key_vals, &types))
        }
    }))
}

fn referenced_table(cat: &Catalog, fk: &ForeignKeyDef) -> Result<std::sync::Arc<TableDef>> {
    cat.table_by_oid(fk.ref_table).ok_or_else(|| {
        err!(
            InternalError,
            "table {} referenced by constraint \"{}\" is missing",
            fk.ref_table,
            fk.name
        )
    })
}

fn value_list(vals: &[&Value]) -> String {
    let shown: Vec<String> = vals
        .iter()
        .map(|v| {
            let mut out = Vec::new();
            sqltypes::text::format_text(v, &mut out);
            String::from_utf8_lossy(&out).into_owned()
        })
        .collect();
    shown.join(", ")
}

fn column_list(t: &TableDef, cols: &[usize]) -> String {
    let names: Vec<&str> = cols.iter().map(|&c| t.columns[c].name.as_str()).collect();
    names.join(", ")
}

/// A 23503 error of constraint `fk` (defined on `child`) with `detail`.
fn violation(message: String, child: &TableDef, fk: &ForeignKeyDef, detail: String) -> Error {
    err!(ForeignKeyViolation, "{message}")
        .with_detail(detail)
        .with_table(&child.name)
        .with_constraint(&fk.name)
}

/// 23503 for removing key `vals` of `parent` that rows of `child` still reference.
fn still_referenced(
    parent: &TableDef,
    fk: &ForeignKeyDef,
    child: &TableDef,
    vals: &[Value],
) -> Error {
    let vals: Vec<&Value> = vals.iter().collect();
    let message = format!(
        "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
        parent.name, fk.name, child.name
    );
    let detail = format!(
        "Key ({})=({}) is still referenced from table \"{}\".",
        column_list(parent, &fk.ref_columns),
        value_list(&vals),
        child.name
    );
    violation(message, child, fk, detail)
}

/// The message of a violation found on a referencing row of `child`.
fn child_message(child: &TableDef, fk: &ForeignKeyDef) -> String {
    format!(
        "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
        child.name, fk.name
    )
}

/// 23503 for a referencing row whose parent is missing.
fn not_present(child: &TableDef, fk: &ForeignKeyDef, parent: &TableDef, row: &[Value]) -> Error {
    let vals: Vec<&Value> = fk.columns.iter().map(|&c| &row[c]).collect();
    let detail = format!(
        "Key ({})=({}) is not present in table \"{}\".",
        column_list(child, &fk.columns),
        value_list(&vals),
        parent.name
    );
    violation(child_message(child, fk), child, fk, detail)
}

/// Checks that `rows`, just written to `child`, reference existing parent
/// rows, and holds those parents shared until the transaction ends. With
/// `old` (the rows' previous versions, pairwise), rows whose referencing
/// columns did not change are not checked again. The checks of foreign
/// keys deferred in `defer` are queued for COMMIT instead.
pub async fn check_references<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    child: &TableDef,
    rows: &[Row],
    old: Option<&[Row]>,
    defer: Option<&Deferred>,
) -> Result<()> {
    // Rows of a partitioned table are its partitions' (checked there).
    if child.is_partitioned() {
        return Ok(());
    }
    for fk in &child.foreign_keys {
        match defer.filter(|d| d.is_deferred(fk)) {
            Some(d) => {
                for (i, row) in rows.iter().enumerate() {
                    // A queued check finds its row by key: a row that
                    // changed its key is queued again.
                    let same = |o: &Row| {
                        unchanged(&fk.columns, o, row) && unchanged(&child.primary_key, o, row)
                    };
                    if old.is_some_and(|old| same(&old[i])) {
                        continue;
                    }
                    let values: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
                    if values.iter().all(Value::is_null) {
                        continue;
                    }
                    let key = (!child.primary_key.is_empty()).then(|| {
                        let pk: Vec<Value> =
                            child.primary_key.iter().map(|&c| row[c].clone()).collect();
                        row_key(tenant, child, &pk)
                    });
                    d.push(Pending::Reference { table: child.oid, fk: fk.oid, key, values });
                }
            }
            None => check_one(txn, tenant, cat, child, fk, rows, old).await?,
        }
    }
    Ok(())
}

/// Whether `row` has the same values as `old` in `columns`.
fn unchanged(columns: &[usize], old: &[Value], row: &[Value]) -> bool {
    columns.iter().all(|&c| dml::same_value(&old[c], &row[c]))
}

/// [`check_references`] for foreign key `fk` of `child`, now.
pub async fn check_one<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    child: &TableDef,
    fk: &ForeignKeyDef,
    rows: &[Row],
    old: Option<&[Row]>,
) -> Result<()> {
    let parent = referenced_table(cat, fk)?;
    let target = target(&parent, fk)?;
    let mut keys = Vec::new();
    let mut from = Vec::new();
    let mut seen = HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        if old.is_some_and(|old| unchanged(&fk.columns, &old[i], row)) {
            continue;
        }
        let vals: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
        let nulls = vals.iter().filter(|v| v.is_null()).count();
        if nulls == vals.len() {
            continue;
        }
        if nulls > 0 {
            if !fk.match_full {
                continue; // MATCH SIMPLE: any NULL satisfies the constraint
            }
            let detail = "MATCH FULL does not allow mixing of null and nonnull key values.";
            return Err(violation(child_message(child, fk), child, fk, detail.into()));
        }
        match parent_key(tenant, &parent, fk, &target, &vals)? {
            Some(k) => {
                if seen.insert(k.as_bytes().to_vec()) {
                    keys.push(k);
                    from.push(i);
                }
            }
            None => return Err(not_present(child, fk, &parent, row)),
        }
    }
    if keys.is_empty() {
        return Ok(());
    }
    let locked = txn.lock_for_share(&keys).await.map_err(from_kv)?;
    for (l, &i) in locked.iter().zip(&from) {
        if l.latest.is_none() {
            return Err(not_present(child, fk, &parent, &rows[i]));
        }
    }
    Ok(())
}

/// A referenced key that went away: its values (pairwise with the foreign
/// key's referenced columns) and, for an update, the values it changed to.
struct Gone {
    old: Vec<Value>,
    new: Option<Vec<Value>>,
    /// `old` encoded in the parent's column types (see [`encode`]).
    enc: Vec<u8>,
}

/// Encodes referenced values in the parent's column types, for matching
/// referencing rows against them; None if some value has no such form.
fn encode(vals: &[Value], types: &[DataType]) -> Option<Vec<u8>> {
    let mut cast_vals = Vec::with_capacity(vals.len());
    for (v, ty) in vals.iter().zip(types) {
        if v.is_null() {
            return None;
        }
        cast_vals.push(cast::cast(v.clone(), ty).ok()?);
    }
    let mut out = Vec::new();
    keycode::encode_key(&cast_vals, types, &mut out);
    Some(out)
}

/// Applies the foreign keys that reference `table` after a statement
/// removed some of its keys: `old` rows were deleted (`new` is None) or
/// updated to `new` (pairwise). NO ACTION and RESTRICT fail if referencing
/// rows remain (NO ACTION at COMMIT when `defer` defers it); CASCADE, SET
/// NULL and SET DEFAULT rewrite them, which may cascade further.
#[allow(clippy::too_many_arguments)]
pub fn referenced_rows_changed<'a, T: Txn>(
    txn: &'a mut T,
    tenant: TenantId,
    cat: &'a Catalog,
    table: &'a TableDef,
    old: &'a [Row],
    new: Option<&'a [Row]>,
    depth: u32,
    ctx: Option<&'a EvalContext>,
) -> Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>> {
    Box::pin(async move {
        let defer = ctx.and_then(|c| c.deferred.as_deref());
        if table.referenced_by.is_empty() || old.is_empty() {
            return Ok(());
        }
        if depth > MAX_CASCADE_DEPTH {
            bail!(
                StatementTooComplex,
                "foreign key actions cascade more than {MAX_CASCADE_DEPTH} levels deep"
            );
        }
        for (child_name, i) in &table.referenced_by {
            let child = cat.table_at(child_name)?;
            // A partitioned table's rows are its partitions', whose copies
            // of the foreign key act on them.
            if child.is_partitioned() {
                continue;
            }
            let fk = &child.foreign_keys[*i];
            let action = if new.is_some() { fk.on_update } else { fk.on_delete };
            let deferred = defer.filter(|d| d.is_deferred(fk));
            if let (FkAction::NoAction, Some(d)) = (action, deferred) {
                for (r, row) in old.iter().enumerate() {
                    if new.is_some_and(|n| unchanged(&fk.ref_columns, row, &n[r])) {
                        continue;
                    }
                    let (t, f, parent) = (child.oid, fk.oid, table.oid);
                    d.push(Pending::Removed { table: t, fk: f, parent, old: row.clone() });
                }
                continue;
            }
            let change = Change { old, new, action, depth, ctx };
            key_change(txn, tenant, cat, table, &child, fk, change).await?;
        }
        Ok(())
    })
}

/// Referenced keys of a parent that went away, and what to do about them.
struct Change<'a> {
    /// The parent rows before the statement.
    old: &'a [Row],
    /// The rows they were updated to (pairwise), or None for a delete.
    new: Option<&'a [Row]>,
    /// The foreign key's action for this kind of change.
    action: FkAction,
    /// How deep in cascading actions this is.
    depth: u32,
    /// The statement's context (its deferred checks, and what the
    /// referencing table's triggers run with).
    ctx: Option<&'a EvalContext>,
}

/// Checks, at COMMIT, a deferred NO ACTION foreign key `fk` of `child`
/// whose referenced keys `old` (rows of `parent`) went away: no row may
/// reference one of them unless it exists again.
pub async fn removed_keys<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    parent: &TableDef,
    child: &TableDef,
    fk: &ForeignKeyDef,
    old: &[Row],
) -> Result<()> {
    let change = Change { old, new: None, action: FkAction::NoAction, depth: 0, ctx: None };
    key_change(txn, tenant, cat, parent, child, fk, change).await
}

/// Applies foreign key `fk` of `child` to the keys of `table` that `c`
/// changed (see [`referenced_rows_changed`]).
async fn key_change<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    table: &TableDef,
    child: &TableDef,
    fk: &ForeignKeyDef,
    c: Change<'_>,
) -> Result<()> {
    let parent_types: Vec<DataType> =
        fk.ref_columns.iter().map(|&c| table.columns[c].ty.to_type()).collect();
    let mut gone: Vec<Gone> = Vec::new();
    let mut by_key: HashMap<Vec<u8>, usize> = HashMap::new();
    for (r, row) in c.old.iter().enumerate() {
        let ov: Vec<Value> = fk.ref_columns.iter().map(|&c| row[c].clone()).collect();
        let nv: Option<Vec<Value>> =
            c.new.map(|n| fk.ref_columns.iter().map(|&c| n[r][c].clone()).collect());
        if let Some(nv) = &nv {
            if ov.iter().zip(nv).all(|(a, b): (&Value, &Value)| dml::same_value(a, b)) {
                continue;
            }
        }
        let Some(enc) = encode(&ov, &parent_types) else { continue };
        if by_key.contains_key(&enc) {
            continue;
        }
        by_key.insert(enc.clone(), gone.len());
        gone.push(Gone { old: ov, new: nv, enc });
    }
    if c.action == FkAction::NoAction && !gone.is_empty() {
        // A key that still exists (re-inserted, or moved back to by
        // the same statement) is still satisfied.
        let target = target(table, fk)?;
        let mut ks = Vec::new();
        let mut enc_of = Vec::new();
        for (enc, &g) in &by_key {
            if let Some(k) = parent_key(tenant, table, fk, &target, &gone[g].old)? {
                ks.push(k);
                enc_of.push(enc.clone());
            }
        }
        let locked = txn.lock_for_share(&ks).await.map_err(from_kv)?;
        for (l, enc) in locked.iter().zip(enc_of) {
            if l.latest.is_some() {
                by_key.remove(&enc);
            }
        }
    }
    if by_key.is_empty() {
        return Ok(());
    }
    let found = find_referencing(txn, tenant, child, fk, &parent_types, &gone, &by_key).await?;
    if found.is_empty() {
        return Ok(());
    }
    match c.action {
        FkAction::NoAction | FkAction::Restrict => {
            // Also when the referencing row committed after a
            // REPEATABLE READ snapshot, as PostgreSQL reports it.
            Err(still_referenced(table, fk, child, &gone[found[0].2].old))
        }
        action => {
            let keys = Keys { gone: &gone, parent_types: &parent_types, by_key: &by_key };
            act(txn, table, tenant, cat, child, fk, action, keys, found, c.depth, c.ctx).await
        }
    }
}

/// The keys that went away, as [`act`] matches referencing rows to them.
struct Keys<'a> {
    gone: &'a [Gone],
    parent_types: &'a [DataType],
    by_key: &'a HashMap<Vec<u8>, usize>,
}

/// CASCADE, SET NULL or SET DEFAULT on the referencing rows `found`.
#[allow(clippy::too_many_arguments)]
async fn act<T: Txn>(
    txn: &mut T,
    parent: &TableDef,
    tenant: TenantId,
    cat: &Catalog,
    child: &TableDef,
    fk: &ForeignKeyDef,
    action: FkAction,
    k: Keys<'_>,
    found: Vec<(Key, Row, usize)>,
    depth: u32,
    ctx: Option<&EvalContext>,
) -> Result<()> {
    let Keys { gone, parent_types, by_key } = k;
    // The referencing table's row triggers fire for the rows changed.
    let fires = ctx.filter(|_| !child.triggers.is_empty());
    let set_cols = fk.columns.clone();
    let mut events = Vec::new();
    let keys: Vec<Key> = found.iter().map(|(k, _, _)| k.clone()).collect();
    let locked = txn.lock(&keys).await.map_err(from_kv)?;
    let types = child.types();
    let defaults = match action {
        FkAction::SetDefault => {
            let eval = crate::expr::EvalContext {
                txn_time: sqltypes::datetime::now_micros(),
                ..Default::default()
            };
            let mut d = Vec::with_capacity(fk.columns.len());
            for &c in &fk.columns {
                d.push(match crate::ddl::column_default(cat, &child.columns[c])? {
                    Some(e) => e.eval(&[], &eval)?,
                    None => Value::Null,
                });
            }
            d
        }
        _ => vec![],
    };
    // SET DEFAULT to the very key that went away leaves it referenced.
    let default_key = match action {
        FkAction::SetDefault => encode(&defaults, parent_types),
        _ => None,
    };
    let (mut olds, mut news) = (Vec::new(), Vec::new());
    for ((key, _, _), l) in found.into_iter().zip(locked) {
        // Re-check the newest version: it may be gone or point elsewhere now.
        let Some(bytes) = l.latest else { continue };
        let row = rowcodec::decode_row(&bytes, &types)?;
        let vals: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
        let Some(&g) = encode(&vals, parent_types).and_then(|e| by_key.get(&e)) else { continue };
        if action == FkAction::Cascade && gone[g].new.is_none() {
            if let Some(ctx) = fires {
                let mut f = Firing::new(&mut *txn, tenant, cat, ctx, child, &set_cols);
                if f.before_row(Event::Delete, Some(&row), None).await?.is_none() {
                    continue;
                }
                events.push(RowEvent { event: Event::Delete, old: Some(row.clone()), new: None });
            }
            dml::delete_row(txn, tenant, child, key, &row).await?;
            olds.push(row);
            continue;
        }
        if default_key.as_ref() == Some(&gone[g].enc) {
            // The default is the very key that went away: still referenced.
            return Err(still_referenced(parent, fk, child, &gone[g].old));
        }
        let mut updated = row.clone();
        for (j, &c) in fk.columns.iter().enumerate() {
            updated[c] = match (action, &gone[g].new) {
                (FkAction::Cascade, Some(nv)) => nv[j].clone(),
                (FkAction::SetDefault, _) => defaults[j].clone(),
                _ => Value::Null,
            };
        }
        if let Some(ctx) = fires {
            let mut f = Firing::new(&mut *txn, tenant, cat, ctx, child, &set_cols);
            match f.before_row(Event::Update, Some(&row), Some(updated)).await? {
                Some(r) => updated = r,
                None => continue,
            }
        }
        check_row(child, &mut updated)?;
        news.push(dml::update_row(txn, tenant, child, key, &row, updated, true).await?);
        if fires.is_some() {
            let new = news.last().cloned();
            events.push(RowEvent { event: Event::Update, old: Some(row.clone()), new });
        }
        olds.push(row);
    }
    if let Some(ctx) = fires {
        let mut f = Firing::new(&mut *txn, tenant, cat, ctx, child, &set_cols);
        f.after_rows(events).await?;
    }
    if olds.is_empty() {
        return Ok(());
    }
    if news.is_empty() {
        return referenced_rows_changed(txn, tenant, cat, child, &olds, None, depth + 1, ctx).await;
    }
    if action == FkAction::SetDefault {
        // Every default must exist, even one equal to the key that went away.
        check_one(txn, tenant, cat, child, fk, &news, None).await?;
    }
    let news = Some(news.as_slice());
    referenced_rows_changed(txn, tenant, cat, child, &olds, news, depth + 1, ctx).await
}

/// The rows of `child` (newest committed state plus our own writes) whose
/// referencing columns equal one of the keys in `by_key` (encoded in the
/// parent's types), with the position of the key each one matched.
async fn find_referencing<T: Txn>(
    txn: &T,
    tenant: TenantId,
    child: &TableDef,
    fk: &ForeignKeyDef,
    parent_types: &[DataType],
    gone: &[Gone],
    by_key: &HashMap<Vec<u8>, usize>,
) -> Result<Vec<(Key, Row, usize)>> {
    let types = child.types();
    let mut out = Vec::new();
    let matches = |key: Key, bytes: &[u8], out: &mut Vec<(Key, Row, usize)>| -> Result<()> {
        let row = rowcodec::decode_row(bytes, &types)?;
        let vals: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
        if let Some(&g) = encode(&vals, parent_types).and_then(|e| by_key.get(&e)) {
            out.push((key, row, g));
        }
        Ok(())
    };
    // An index that starts with the referencing columns finds them directly.
    let n = fk.columns.len();
    let index = child.indexes.iter().find(|i| {
        i.is_plain() && i.columns.len() >= n && {
            let mut lead = i.columns[..n].to_vec();
            let mut want = fk.columns.clone();
            lead.sort_unstable();
            want.sort_unstable();
            lead == want
        }
    });
    if let Some(idx) = index {
        let lead_types: Vec<DataType> =
            idx.columns[..n].iter().map(|&c| types[c].clone()).collect();
        let mut seen = HashSet::new();
        for &g in by_key.values() {
            let pv = &gone[g].old;
            // The key's values in index column order, in the child's types.
            let mut vals = Vec::with_capacity(n);
            for (&c, ty) in idx.columns[..n].iter().zip(&lead_types) {
                let j = fk.columns.iter().position(|&f| f == c).expect("leading columns match");
                match cast::cast(pv[j].clone(), ty) {
                    Ok(v) => vals.push(v),
                    Err(_) => break,
                }
            }
            if vals.len() < n {
                continue;
            }
            let prefix = dml::index_prefix(idx, &vals, &lead_types);
            // Index entries hold the row key (after the tenant prefix).
            let mut row_keys = Vec::new();
            for_each_latest(txn, KeyRange::prefix(tenant, &prefix), &mut |_, rest| {
                row_keys.push(rest);
                Ok(())
            })
            .await?;
            for row_rest in row_keys {
                let key = Key::new(tenant, &row_rest);
                if !seen.insert(row_rest) {
                    continue;
                }
                let one = KeyRange { start: key.clone(), end: after(&key) };
                if let Some((k, bytes)) = txn.scan_latest(&one, 1).await.map_err(from_kv)?.pop() {
                    matches(k, &bytes, &mut out)?;
                }
            }
        }
        return Ok(out);
    }
    for_each_latest(txn, keys::storage(tenant, child.storage), &mut |k, bytes| {
        matches(k, &bytes, &mut out)
    })
    .await?;
    Ok(out)
}

/// Calls `f` with every live key and value of `range` in the newest state,
/// batch by batch.
async fn for_each_latest<T: Txn>(
    txn: &T,
    range: KeyRange,
    f: &mut (dyn FnMut(Key, Vec<u8>) -> Result<()> + Send),
) -> Result<()> {
    let mut start = range.start.clone();
    loop {
        let r = KeyRange { start, end: range.end.clone() };
        let batch = txn.scan_latest(&r, SCAN_BATCH).await.map_err(from_kv)?;
        let n = batch.len();
        let next = batch.last().map(|(k, _)| after(k));
        for (k, v) in batch {
            f(k, v)?;
        }
        match next {
            Some(k) if n == SCAN_BATCH => start = k,
            _ => return Ok(()),
        }
    }
}
