//! Firing triggers: which of a table's triggers an INSERT, UPDATE,
//! DELETE or TRUNCATE fires, and running their functions (PL/pgSQL, over
//! the statement's transaction).
//!
//! As in PostgreSQL: BEFORE STATEMENT triggers fire before the statement
//! reads anything; BEFORE ROW triggers fire for each row before it is
//! checked and written, in name order, each seeing the row the previous
//! one returned (NULL skips the row); AFTER ROW triggers fire once the
//! statement has written every row, row by row in the order they were
//! written; AFTER STATEMENT triggers fire last. UPDATE OF fires when a
//! listed column is assigned, WHEN when its condition holds.

use std::sync::Arc;

use kvapi::{TenantId, Txn};
use sqltypes::Value;

use crate::catalog::{Catalog, TableDef, TriggerDef};
use crate::error::Result;
use crate::expr::EvalContext;
use crate::plpgsql::{self, run, spi};
use crate::{bail, err};

/// The event a DML statement fires triggers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// INSERT (and the inserting half of ON CONFLICT).
    Insert,
    /// UPDATE (and ON CONFLICT DO UPDATE).
    Update,
    /// DELETE.
    Delete,
    /// TRUNCATE (statement triggers only).
    Truncate,
}

impl Event {
    fn bit(self) -> i16 {
        match self {
            Event::Insert => TriggerDef::INSERT,
            Event::Update => TriggerDef::UPDATE,
            Event::Delete => TriggerDef::DELETE,
            Event::Truncate => TriggerDef::TRUNCATE,
        }
    }

    fn op(self) -> &'static str {
        match self {
            Event::Insert => "INSERT",
            Event::Update => "UPDATE",
            Event::Delete => "DELETE",
            Event::Truncate => "TRUNCATE",
        }
    }
}

/// One row's change, queued for the AFTER ROW triggers.
pub struct RowEvent {
    /// What happened to it.
    pub event: Event,
    /// The row before (UPDATE, DELETE).
    pub old: Option<Vec<Value>>,
    /// The row after (INSERT, UPDATE).
    pub new: Option<Vec<Value>>,
}

/// Where triggers run: the statement's transaction and context.
pub struct Firing<'a, T: Txn> {
    /// The transaction the statement writes in.
    pub txn: &'a mut T,
    /// Its tenant.
    pub tenant: TenantId,
    /// The catalog the statement was planned against.
    pub catalog: &'a Catalog,
    /// The statement's context.
    pub ctx: &'a EvalContext,
    /// The table written.
    pub table: &'a TableDef,
    /// The columns an UPDATE assigns (UPDATE OF).
    pub set_cols: &'a [usize],
}

/// When a trigger fires, relative to its event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timing {
    Before,
    After,
    /// In place of the event (a view's INSTEAD OF triggers).
    Instead,
}

impl Timing {
    fn of(t: &TriggerDef) -> Timing {
        match () {
            _ if t.has(TriggerDef::INSTEAD) => Timing::Instead,
            _ if t.has(TriggerDef::BEFORE) => Timing::Before,
            _ => Timing::After,
        }
    }

    fn before(before: bool) -> Timing {
        if before {
            Timing::Before
        } else {
            Timing::After
        }
    }
}

/// The table's enabled triggers for an event at a timing and level, in
/// name order.
fn selected<'t>(
    table: &'t TableDef,
    event: Event,
    timing: Timing,
    row: bool,
    set_cols: &'t [usize],
) -> impl Iterator<Item = &'t TriggerDef> {
    table.triggers.iter().filter(move |t| {
        t.enabled != 'D'
            && t.has(event.bit())
            && Timing::of(t) == timing
            && t.has(TriggerDef::ROW) == row
            && (event != Event::Update
                || t.columns.is_empty()
                || t.columns.iter().any(|c| set_cols.contains(c)))
    })
}

/// True if the table has enabled ROW triggers for the event, BEFORE or
/// AFTER it.
pub fn has_row(table: &TableDef, event: Event, before: bool) -> bool {
    table.triggers.iter().any(|t| {
        t.enabled != 'D'
            && t.has(event.bit() | TriggerDef::ROW)
            && Timing::of(t) == Timing::before(before)
    })
}

impl<'a, T: Txn> Firing<'a, T> {
    /// Triggers of `table` fired by a statement running in `txn` with
    /// `ctx`; `set_cols` are the columns an UPDATE assigns.
    pub fn new(
        txn: &'a mut T,
        tenant: TenantId,
        catalog: &'a Catalog,
        ctx: &'a EvalContext,
        table: &'a TableDef,
        set_cols: &'a [usize],
    ) -> Self {
        Firing { txn, tenant, catalog, ctx, table, set_cols }
    }

    /// Fires the statement-level triggers of an event.
    pub async fn statement(&mut self, event: Event, before: bool) -> Result<()> {
        let table = self.table;
        if table.triggers.is_empty() {
            return Ok(());
        }
        let set_cols = self.set_cols;
        for t in selected(table, event, Timing::before(before), false, set_cols) {
            self.fire(t, event, None, None).await?;
        }
        Ok(())
    }

    /// Fires the BEFORE ROW triggers for one row: the row to write (as
    /// the triggers left it), or None if one of them skipped it. For a
    /// DELETE the row returned is `old`.
    pub async fn before_row(
        &mut self,
        event: Event,
        old: Option<&[Value]>,
        new: Option<Vec<Value>>,
    ) -> Result<Option<Vec<Value>>> {
        self.row_triggers(event, Timing::Before, old, new).await
    }

    /// Fires a view's INSTEAD OF triggers for one row, which do the
    /// event's work: the row as they left it (`old` for a DELETE), or None
    /// if one of them returned NULL (the row does not count as changed).
    pub async fn instead_row(
        &mut self,
        event: Event,
        old: Option<&[Value]>,
        new: Option<Vec<Value>>,
    ) -> Result<Option<Vec<Value>>> {
        self.row_triggers(event, Timing::Instead, old, new).await
    }

    async fn row_triggers(
        &mut self,
        event: Event,
        timing: Timing,
        old: Option<&[Value]>,
        new: Option<Vec<Value>>,
    ) -> Result<Option<Vec<Value>>> {
        let table = self.table;
        let set_cols = self.set_cols;
        let mut new = new;
        for t in selected(table, event, timing, true, set_cols) {
            let Some(v) = self.fire(t, event, old, new.as_deref()).await? else { continue };
            match v {
                Value::Null => return Ok(None),
                Value::Record(rv) => {
                    if event == Event::Delete {
                        continue;
                    }
                    if rv.values.len() != table.columns.len() {
                        bail!(
                            DatatypeMismatch,
                            "returned row structure does not match the structure of the triggering table"
                        );
                    }
                    new = Some(rv.values);
                }
                _ => bail!(
                    TriggerProtocolViolated,
                    "trigger function {} returned a value that is not a row",
                    t.name
                ),
            }
        }
        Ok(match event {
            Event::Delete => old.map(<[Value]>::to_vec),
            _ => new,
        })
    }

    /// Fires the AFTER ROW triggers for the rows a statement changed, in
    /// order.
    pub async fn after_rows(&mut self, rows: Vec<RowEvent>) -> Result<()> {
        let table = self.table;
        let set_cols = self.set_cols;
        for r in rows {
            for t in selected(table, r.event, Timing::After, true, set_cols) {
                self.fire(t, r.event, r.old.as_deref(), r.new.as_deref()).await?;
            }
        }
        Ok(())
    }

    /// Runs one trigger's function (if its WHEN condition holds): what it
    /// returned, or None when the condition skipped it.
    async fn fire(
        &mut self,
        t: &TriggerDef,
        event: Event,
        old: Option<&[Value]>,
        new: Option<&[Value]>,
    ) -> Result<Option<Value>> {
        let table = self.table;
        let Some(def) = self.catalog.function_by_oid(t.function).cloned() else {
            bail!(UndefinedFunction, "function with OID {} does not exist", t.function);
        };
        let call = run::TriggerCall {
            name: t.name.clone(),
            function: self
                .catalog
                .function_by_oid(t.function)
                .map(|f| f.name.clone())
                .unwrap_or_default(),
            when: t.timing(),
            level: if t.has(TriggerDef::ROW) { "ROW" } else { "STATEMENT" },
            op: event.op(),
            relid: table.oid,
            table: table.name.clone(),
            schema: self.catalog.namespace_name(table.namespace).unwrap_or_default().to_string(),
            args: t.args.clone(),
            row_type: table.row_type(),
            new: new.map(<[Value]>::to_vec),
            old: old.map(<[Value]>::to_vec),
        };
        let ctx = plpgsql::deeper(self.ctx)?;
        if let Some(w) = &t.when {
            let code = condition(&ctx, t.oid, w)?;
            let access = spi::Access::Write(&mut *self.txn);
            let mut s = spi::TxnSpi::new(access, self.tenant, self.catalog, &ctx);
            match run::run(&mut s, code, run::Call::Condition(&call)).await? {
                run::Returned::Value(Value::Bool(true)) => {}
                _ => return Ok(None),
            }
        }
        let ctx = plpgsql::function_context(ctx, &def)?;
        let code = plpgsql::body(&ctx, &def)?;
        let access = spi::Access::Write(&mut *self.txn);
        let mut s = spi::TxnSpi::new(access, self.tenant, self.catalog, &ctx);
        match run::run(&mut s, code, run::Call::Trigger(&call)).await? {
            run::Returned::Value(v) => Ok(Some(v)),
            run::Returned::Rows(_) => {
                Err(err!(TriggerProtocolViolated, "trigger function {} returned a set", def.name))
            }
        }
    }
}

/// A WHEN condition as a body that returns it (cached by the trigger's
/// OID).
fn condition(ctx: &EvalContext, oid: u32, when: &str) -> Result<Arc<run::Compiled>> {
    plpgsql::compiled(ctx, oid, when, |w| Ok(format!("BEGIN RETURN {w}; END")))
}
