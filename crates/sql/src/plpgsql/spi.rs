//! [`TxnSpi`]: PL/pgSQL over a transaction, for triggers fired by DML and
//! functions called from a query. It runs queries and DML; utility
//! statements (DDL, SET, ...) need the session and are refused here.

use std::sync::Arc;

use kvapi::{Savepoint, TenantId, Txn};

use super::{BoxFut, Done, Spi, Statement};
use crate::bail;
use crate::catalog::Catalog;
use crate::error::Result;
use crate::exec::{self, ExecCtx};
use crate::expr::EvalContext;
use crate::planner::Bound;

/// How a [`TxnSpi`] may use its transaction.
pub enum Access<'a, T: Txn> {
    /// Read and write (a trigger, fired by DML).
    Write(&'a mut T),
    /// Read only (a function called for a query's rows).
    Read(&'a T),
}

/// A subtransaction's start: the write buffer's position and how far the
/// deferred checks had queued.
struct Mark {
    at: Option<Savepoint>,
    deferred: usize,
    cursors: u64,
}

/// The interpreter's way to a transaction without a session.
pub struct TxnSpi<'a, T: Txn> {
    txn: Access<'a, T>,
    tenant: TenantId,
    catalog: Arc<Catalog>,
    ctx: EvalContext,
    marks: Vec<Mark>,
}

impl<'a, T: Txn> TxnSpi<'a, T> {
    /// Statements run in `txn`, planned against `catalog`, evaluated in
    /// `ctx` (with their own parameters).
    pub fn new(txn: Access<'a, T>, tenant: TenantId, catalog: &Catalog, ctx: &EvalContext) -> Self {
        let catalog = match &ctx.catalog {
            Some(c) if c.version == catalog.version => c.clone(),
            _ => Arc::new(catalog.clone()),
        };
        let ctx = EvalContext { params: Vec::new(), outer: Vec::new(), memo: None, ..ctx.clone() };
        TxnSpi { txn, tenant, catalog, ctx, marks: Vec::new() }
    }

    fn reader(&self) -> &T {
        match &self.txn {
            Access::Write(t) => t,
            Access::Read(t) => t,
        }
    }
}

/// Runs a planned statement in a transaction: a query's rows, or a DML
/// statement's RETURNING rows and count.
pub async fn run_bound<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    bound: &Bound,
    ctx: &EvalContext,
    catalog: &Catalog,
) -> Result<Done> {
    let (count, rows) = match bound {
        Bound::Query(plan, _) => {
            let rows = crate::dml::run_rows(txn, tenant, catalog, ctx, plan).await?;
            (rows.len() as u64, rows)
        }
        Bound::Insert(p) => crate::dml::insert(txn, tenant, p, ctx, catalog, false).await?,
        Bound::Update(p) => crate::dml::update(txn, tenant, p, ctx, catalog).await?,
        Bound::Delete(p) => crate::dml::delete(txn, tenant, p, ctx, catalog).await?,
        Bound::Merge(p) => {
            (crate::dml::merge::merge(txn, tenant, p, ctx, catalog).await?, Vec::new())
        }
        Bound::Explain(lines) => {
            let rows: Vec<_> =
                lines.iter().map(|l| vec![sqltypes::Value::Text(l.clone())]).collect();
            (rows.len() as u64, rows)
        }
        Bound::With(w) => {
            let ctx = run_writes(txn, tenant, &w.before, ctx, catalog).await?;
            let done = Box::pin(run_bound(txn, tenant, &w.main, &ctx, catalog)).await?;
            run_after(txn, tenant, &w.after, &ctx, catalog).await?;
            return Ok(done);
        }
        Bound::Utility | Bound::Fetch(_) | Bound::Call(..) => bail!(
            FeatureNotSupported,
            "utility statements are not supported in triggers or in functions called from a query"
        ),
    };
    let dml = bound.writes();
    Ok(Done { rows, count, dml })
}

/// Runs the writing WITH queries nothing reads, after the main statement.
pub async fn run_after<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    after: &[Bound],
    ctx: &EvalContext,
    catalog: &Catalog,
) -> Result<()> {
    for w in after {
        Box::pin(run_bound(txn, tenant, w, ctx, catalog)).await?;
    }
    Ok(())
}

/// Runs the writing WITH queries that the rest of a [`Bound::With`]
/// reads, in order; returns `ctx` with their RETURNING rows as its work
/// tables.
pub async fn run_writes<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    writes: &[(usize, Bound)],
    ctx: &EvalContext,
    catalog: &Catalog,
) -> Result<EvalContext> {
    let mut ctx = ctx.clone();
    for (id, w) in writes {
        let done = Box::pin(run_bound(txn, tenant, w, &ctx, catalog)).await?;
        let mut tables = ctx.work.as_deref().cloned().unwrap_or_default();
        tables.push((*id, Arc::new(done.rows)));
        ctx.work = Some(Arc::new(tables));
    }
    Ok(ctx)
}

impl<T: Txn> Spi for TxnSpi<'_, T> {
    fn catalog(&self) -> Arc<Catalog> {
        self.catalog.clone()
    }

    fn context(&self) -> &EvalContext {
        &self.ctx
    }

    fn execute<'b>(&'b mut self, s: Statement<'b>) -> BoxFut<'b, Done> {
        Box::pin(async move {
            let ctx = EvalContext { params: s.params, ..self.ctx.clone() };
            if let (Bound::Query(plan, _), Access::Read(_)) = (&*s.bound, &self.txn) {
                let cx = ExecCtx {
                    txn: self.reader(),
                    tenant: self.tenant,
                    eval: &ctx,
                    catalog: &self.catalog,
                };
                let rows = exec::run(plan, &cx).await?;
                return Ok(Done { count: rows.len() as u64, rows, dml: false });
            }
            let what = match &*s.bound {
                Bound::With(w) => w.main.write_command().unwrap_or("WITH"),
                b => b.write_command().unwrap_or_default(),
            };
            match &mut self.txn {
                Access::Write(txn) => {
                    run_bound(&mut **txn, self.tenant, &s.bound, &ctx, &self.catalog).await
                }
                Access::Read(_) if !what.is_empty() => bail!(
                    FeatureNotSupported,
                    "{what} in a PL/pgSQL function called for each row of a query is not supported"
                ),
                Access::Read(_) => bail!(
                    FeatureNotSupported,
                    "utility statements are not supported in triggers or in functions called from a query"
                ),
            }
        })
    }

    fn subtransaction(&mut self) -> BoxFut<'_, usize> {
        Box::pin(async move {
            let at = match &mut self.txn {
                Access::Write(t) => Some(t.savepoint()),
                Access::Read(_) => None,
            };
            let deferred = self.ctx.deferred.as_ref().map_or(0, |d| d.mark());
            let cursors = self.ctx.cursors.as_ref().map_or(0, |c| c.mark());
            self.marks.push(Mark { at, deferred, cursors });
            Ok(self.marks.len() - 1)
        })
    }

    fn rollback_subtransaction(&mut self, mark: usize) -> BoxFut<'_, ()> {
        Box::pin(async move {
            if let Some(m) = self.marks.get(mark) {
                if let (Some(at), Access::Write(t)) = (m.at, &mut self.txn) {
                    t.rollback_to(at);
                }
                if let Some(d) = &self.ctx.deferred {
                    d.rollback_to(m.deferred);
                }
                if let Some(c) = &self.ctx.cursors {
                    c.rollback_to(m.cursors);
                }
            }
            self.marks.truncate(mark);
            Ok(())
        })
    }

    fn notice(&mut self, report: sqlstate::ErrorReport) {
        self.ctx.warnings.lock().push(report);
    }
}
