//! Running MERGE: each source row meets the target rows its join
//! condition holds with, and the first WHEN clause whose condition holds
//! acts on each pair (a source row that meets none takes the first NOT
//! MATCHED clause that holds).
//!
//! The source rows and the target rows are read from the statement's
//! snapshot; the target rows are hashed by the join condition's
//! equalities when it has any. A target row is locked only when a clause
//! updates or deletes it. If it changed after the snapshot, its newest
//! version meets the source row again: still joined, the clauses are
//! tried again from the first on it; no longer joined (or deleted), the
//! source row goes to the NOT MATCHED clauses, as in PostgreSQL. A target
//! row that two source rows would change is an error (21000), as is
//! changing a row twice anywhere in PostgreSQL's MERGE.

use std::collections::{HashMap, HashSet};

use kvapi::{Key, TenantId, Txn};
use sqltypes::{rowcodec, Value};

use super::{
    check_row, delete_row, insert_rows, run_rows, set_columns, update_row, with_init_plans, Row,
};
use crate::error::{from_kv, Result};
use crate::exec::scan_rows;
use crate::expr::{EvalContext, Expr};
use crate::fk;
use crate::plan::{Correlated, Plan, Scan, SubqKind};
use crate::plpgsql::{RunCall, TxnCalls};
use crate::select::HashKeys;
use crate::triggers::{self, Event, Firing, RowEvent};
use crate::{bail, err};

/// A planned MERGE.
#[derive(Debug, Clone, PartialEq)]
pub struct MergePlan {
    /// The target table's rows that may be joined (its filter holds the
    /// join condition's conjuncts that read only them).
    pub scan: Scan,
    /// The source rows.
    pub source: Plan,
    /// The rest of the join condition, over the merge row (target row,
    /// then source row).
    pub on: Option<Expr>,
    /// The join condition's equalities between target and source columns:
    /// only target rows with the source row's key are tried.
    pub hash: Option<HashKeys>,
    /// The WHEN clauses, in order.
    pub clauses: Vec<When>,
    /// The DEFAULT expression per table column (None: NULL), for INSERT.
    pub defaults: Vec<Option<Expr>>,
    /// Uncorrelated subqueries, run once first.
    pub init: Vec<(Plan, SubqKind)>,
    /// Correlated subqueries, run per merge row: their values follow it.
    pub subs: Vec<Correlated>,
}

/// One WHEN clause.
#[derive(Debug, Clone, PartialEq)]
pub struct When {
    /// WHEN MATCHED (else WHEN NOT MATCHED, whose merge row has NULL
    /// target columns).
    pub matched: bool,
    /// The AND condition, over the merge row.
    pub cond: Option<Expr>,
    /// What it does.
    pub action: Action,
}

/// A WHEN clause's action; expressions read the merge row.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// DO NOTHING.
    Nothing,
    /// DELETE the target row.
    Delete,
    /// UPDATE SET: (column, new value).
    Update(Vec<(usize, Expr)>),
    /// INSERT: the columns given and their values (the others take their
    /// defaults).
    Insert(Vec<usize>, Vec<Expr>),
}

impl MergePlan {
    /// The table merged into.
    pub fn table(&self) -> &crate::catalog::TableDef {
        &self.scan.table
    }

    /// The events the clauses may cause, in the order PostgreSQL fires
    /// their BEFORE STATEMENT triggers.
    fn events(&self) -> Vec<Event> {
        let has = |f: fn(&Action) -> bool| self.clauses.iter().any(|c| f(&c.action));
        let mut out = Vec::new();
        if has(|a| matches!(a, Action::Insert(..))) {
            out.push(Event::Insert);
        }
        if has(|a| matches!(a, Action::Update(_))) {
            out.push(Event::Update);
        }
        if has(|a| matches!(a, Action::Delete)) {
            out.push(Event::Delete);
        }
        out
    }

    /// The columns any UPDATE clause sets (UPDATE OF triggers fire on them).
    fn set_columns(&self) -> Vec<usize> {
        let mut cols = Vec::new();
        for c in &self.clauses {
            if let Action::Update(sets) = &c.action {
                for c in set_columns(sets) {
                    if !cols.contains(&c) {
                        cols.push(c);
                    }
                }
            }
        }
        cols
    }
}

/// What a MERGE has written so far.
#[derive(Default)]
struct Written {
    inserted: Vec<Row>,
    /// Updated rows' old versions, pairwise with `news`.
    olds: Vec<Row>,
    news: Vec<Row>,
    deleted: Vec<Row>,
    /// The keys of the target rows updated or deleted.
    touched: HashSet<Vec<u8>>,
    /// For the AFTER ROW triggers, in order.
    events: Vec<RowEvent>,
}

/// Runs a MERGE; returns how many rows it inserted, updated and deleted.
pub async fn merge<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    plan: &MergePlan,
    eval: &EvalContext,
    catalog: &crate::catalog::Catalog,
) -> Result<u64> {
    let table = plan.table();
    let triggered = !table.triggers.is_empty();
    let set_cols = if triggered { plan.set_columns() } else { Vec::new() };
    let events = plan.events();
    if triggered {
        for &e in &events {
            Firing::new(txn, tenant, catalog, eval, table, &set_cols).statement(e, true).await?;
        }
    }
    let eval = &*with_init_plans(txn, tenant, &plan.init, eval, catalog).await?;
    let sources = run_rows(txn, tenant, catalog, eval, &plan.source).await?;
    let targets = {
        let calls = TxnCalls { txn: &mut *txn, tenant, catalog };
        scan_rows(&calls.reads(eval)?, &plan.scan).await?
    };
    // The target rows by their join key.
    let mut by_key: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
    if let Some(h) = &plan.hash {
        for (i, (_, row)) in targets.iter().enumerate() {
            if let Some(k) = h.key(&h.left, row, eval)? {
                by_key.entry(k).or_default().push(i);
            }
        }
    }
    // Without keys every target row is tried.
    let all: Vec<usize> = match plan.hash {
        Some(_) => Vec::new(),
        None => (0..targets.len()).collect(),
    };
    let memo = if plan.subs.is_empty() { None } else { crate::exec::memo::fresh() };
    let mut m = Merging {
        txn,
        tenant,
        catalog,
        eval,
        plan,
        set_cols: &set_cols,
        memo,
        done: Written::default(),
    };
    // The merge row of the pair tried, reused.
    let mut pair = Vec::new();
    for source in &sources {
        let candidates = match &plan.hash {
            Some(h) => match h.key(&h.right, source, eval)? {
                Some(k) => by_key.get(&k).map(Vec::as_slice).unwrap_or_default(),
                None => &[],
            },
            None => &all,
        };
        let mut matched = false;
        for &i in candidates {
            let (key, target) = &targets[i];
            m.merge_row(&mut pair, target, source).await?;
            if !holds(plan.on.as_ref(), &pair, eval)? {
                continue;
            }
            matched = true;
            if !m.matched(key.clone(), pair.clone(), source).await? {
                // Changed meanwhile so that it no longer joins.
                m.not_matched(source).await?;
            }
        }
        if !matched {
            m.not_matched(source).await?;
        }
    }
    let done = m.done;
    let defer = eval.deferred.as_deref();
    if table.has_foreign_keys() {
        fk::check_references(txn, tenant, catalog, table, &done.inserted, None, defer).await?;
        fk::check_references(txn, tenant, catalog, table, &done.news, Some(&done.olds), defer)
            .await?;
    }
    if !table.referenced_by.is_empty() {
        let news = Some(done.news.as_slice());
        fk::referenced_rows_changed(txn, tenant, catalog, table, &done.olds, news, 0, Some(eval))
            .await?;
        fk::referenced_rows_changed(
            txn,
            tenant,
            catalog,
            table,
            &done.deleted,
            None,
            0,
            Some(eval),
        )
        .await?;
    }
    if triggered {
        let mut f = Firing::new(txn, tenant, catalog, eval, table, &set_cols);
        f.after_rows(done.events).await?;
        // PostgreSQL's AFTER STATEMENT order: DELETE, UPDATE, INSERT.
        for e in [Event::Delete, Event::Update, Event::Insert] {
            if events.contains(&e) {
                f.statement(e, false).await?;
            }
        }
    }
    Ok((done.inserted.len() + done.news.len() + done.deleted.len()) as u64)
}

/// True when `cond` is absent or holds on `row`.
fn holds(cond: Option<&Expr>, row: &[Value], eval: &EvalContext) -> Result<bool> {
    match cond {
        Some(c) => c.eval_pred(row, eval),
        None => Ok(true),
    }
}

/// The first clause of the kind whose condition holds on `row`.
fn clause<'p>(
    plan: &'p MergePlan,
    matched: bool,
    row: &[Value],
    eval: &EvalContext,
) -> Result<Option<&'p When>> {
    for c in plan.clauses.iter().filter(|c| c.matched == matched) {
        if holds(c.cond.as_ref(), row, eval)? {
            return Ok(Some(c));
        }
    }
    Ok(None)
}

/// A MERGE under way: its transaction and what it has written.
struct Merging<'a, T: Txn> {
    txn: &'a mut T,
    tenant: TenantId,
    catalog: &'a crate::catalog::Catalog,
    eval: &'a EvalContext,
    plan: &'a MergePlan,
    set_cols: &'a [usize],
    /// The correlated subqueries' scan memo.
    memo: Option<std::sync::Arc<crate::exec::memo::ScanMemo>>,
    done: Written,
}

impl<T: Txn> Merging<'_, T> {
    fn firing(&mut self) -> Firing<'_, T> {
        let table = &self.plan.scan.table;
        Firing::new(self.txn, self.tenant, self.catalog, self.eval, table, self.set_cols)
    }

    /// Makes `row` the merge row of `target` (NULLs for none) and
    /// `source`, followed by the correlated subqueries' values over it.
    async fn merge_row(&mut self, row: &mut Row, target: &[Value], source: &[Value]) -> Result<()> {
        row.clear();
        row.extend_from_slice(target);
        row.extend_from_slice(source);
        if !self.plan.subs.is_empty() {
            let mut calls =
                TxnCalls { txn: &mut *self.txn, tenant: self.tenant, catalog: self.catalog };
            let subs = &self.plan.subs;
            let values =
                crate::plpgsql::correlated_values(row, subs, &self.memo, &mut calls, self.eval)
                    .await?;
            row.extend(values);
        }
        Ok(())
    }

    /// Acts on the merge row `pair` of the target row at `key` and
    /// `source`. False when the target row, locked, turned out changed so
    /// that it no longer joins the source row (or deleted).
    async fn matched(&mut self, key: Key, mut pair: Row, source: &[Value]) -> Result<bool> {
        let plan = self.plan;
        let table = &plan.scan.table;
        let width = table.columns.len();
        let mut locked = false;
        loop {
            let Some(when) = clause(plan, true, &pair, self.eval)? else { return Ok(true) };
            if matches!(when.action, Action::Nothing) {
                return Ok(true);
            }
            if self.done.touched.contains(key.as_bytes()) {
                return Err(err!(
                    CardinalityViolation,
                    "MERGE command cannot affect row a second time"
                )
                .with_hint(
                    "Ensure that not more than one source row matches any one target row.",
                ));
            }
            if !locked {
                locked = true;
                let l = self.txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
                let Some(l) = l.into_iter().next() else {
                    bail!(InternalError, "a lock without its row");
                };
                if l.changed_since_snapshot {
                    let Some(bytes) = l.latest else { return Ok(false) };
                    let newest = rowcodec::decode_row(&bytes, &table.types())?;
                    self.merge_row(&mut pair, &newest, source).await?;
                    if !holds(plan.on.as_ref(), &pair, self.eval)?
                        || !holds(plan.scan.filter.as_ref(), &pair[..width], self.eval)?
                    {
                        return Ok(false);
                    }
                    // The clauses again, on the newest version.
                    continue;
                }
            }
            let old = pair[..width].to_vec();
            match &when.action {
                Action::Update(sets) => {
                    let mut new = old.clone();
                    for (c, e) in sets {
                        new[*c] = e.eval(&pair, self.eval)?;
                    }
                    if triggers::has_row(table, Event::Update, true) {
                        match self.firing().before_row(Event::Update, Some(&old), Some(new)).await?
                        {
                            Some(r) => new = r,
                            None => return Ok(true),
                        }
                    }
                    check_row(table, &mut new)?;
                    self.done.touched.insert(key.as_bytes().to_vec());
                    let new =
                        update_row(self.txn, self.tenant, table, key, &old, new, true).await?;
                    if triggers::has_row(table, Event::Update, false) {
                        let (old, new) = (Some(old.clone()), Some(new.clone()));
                        self.done.events.push(RowEvent { event: Event::Update, old, new });
                    }
                    self.done.olds.push(old);
                    self.done.news.push(new);
                }
                Action::Delete => {
                    if triggers::has_row(table, Event::Delete, true)
                        && self
                            .firing()
                            .before_row(Event::Delete, Some(&old), None)
                            .await?
                            .is_none()
                    {
                        return Ok(true);
                    }
                    self.done.touched.insert(key.as_bytes().to_vec());
                    delete_row(self.txn, self.tenant, table, key, &old).await?;
                    if triggers::has_row(table, Event::Delete, false) {
                        let old = Some(old.clone());
                        self.done.events.push(RowEvent { event: Event::Delete, old, new: None });
                    }
                    self.done.deleted.push(old);
                }
                Action::Nothing | Action::Insert(..) => {}
            }
            return Ok(true);
        }
    }

    /// Acts on a source row no target row joins.
    async fn not_matched(&mut self, source: &[Value]) -> Result<()> {
        let plan = self.plan;
        let width = plan.scan.table.columns.len();
        let mut merged = Vec::new();
        self.merge_row(&mut merged, &vec![Value::Null; width], source).await?;
        let Some(when) = clause(plan, false, &merged, self.eval)? else { return Ok(()) };
        let Action::Insert(targets, values) = &when.action else { return Ok(()) };
        let table = &plan.scan.table;
        let mut row = vec![Value::Null; width];
        let mut given = vec![false; width];
        for (&t, e) in targets.iter().zip(values) {
            row[t] = e.eval(&merged, self.eval)?;
            given[t] = true;
        }
        for (i, d) in plan.defaults.iter().enumerate() {
            if let (false, Some(d)) = (given[i], d) {
                row[i] = d.eval(&[], self.eval)?;
            }
        }
        if triggers::has_row(table, Event::Insert, true) {
            match self.firing().before_row(Event::Insert, None, Some(row)).await? {
                Some(r) => row = r,
                None => return Ok(()),
            }
        }
        check_row(table, &mut row)?;
        insert_rows(self.txn, self.tenant, table, std::slice::from_ref(&row), false).await?;
        if triggers::has_row(table, Event::Insert, false) {
            let new = Some(row.clone());
            self.done.events.push(RowEvent { event: Event::Insert, old: None, new });
        }
        self.done.inserted.push(row);
        Ok(())
    }
}
