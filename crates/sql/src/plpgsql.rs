//! PL/pgSQL: DO blocks, functions written in it, and trigger functions.
//!
//! A body is parsed once into a statement tree
//! ([`parse`](crate::plpgsql::parse)) and run by an interpreter
//! ([`run`](crate::plpgsql::run)). As in PostgreSQL, every expression and SQL
//! statement in the body is ordinary SQL: the interpreter replaces the
//! variables it names with parameters (`NEW.email` becomes `$1`, typed as
//! the variable is), plans it with the SQL planner and runs it. Plans are
//! kept per statement and parameter types for as long as the catalog they
//! were made against stays current.
//!
//! The interpreter reaches the database through [`Spi`](crate::plpgsql::Spi) (PostgreSQL's
//! "server programming interface"): the session's own statement path for
//! a DO block (which may also run DDL), or a transaction directly for a
//! trigger fired by a DML statement or a function called from a query
//! ([`TxnSpi`](crate::plpgsql::spi::TxnSpi)).

pub mod parse;
pub mod run;
pub mod spi;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use parking_lot::Mutex;
use sqlparser::ast;
use sqltypes::{DataType, Value};

use crate::catalog::Catalog;
use crate::error::Result;
use crate::expr::EvalContext;
use crate::planner::Bound;

/// A boxed future: the interpreter, DML and triggers call each other.
pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// A statement ready to run: its parsed form, its plan and its parameters.
pub struct Statement<'a> {
    /// The statement as parsed (the variables replaced by `$n`).
    pub ast: &'a ast::Statement,
    /// Its plan (`Bound::Utility` for DDL and other utility statements).
    pub bound: Arc<Bound>,
    /// The parameters' types.
    pub types: &'a [DataType],
    /// The parameters' values.
    pub params: Vec<Value>,
}

/// What a statement did: the rows it returned and how many rows it
/// processed (ROW_COUNT).
pub struct Done {
    /// Rows returned (a query's, or a DML statement's RETURNING).
    pub rows: Vec<Vec<Value>>,
    /// Rows processed.
    pub count: u64,
    /// The statement was INSERT, UPDATE or DELETE (whose RETURNING INTO
    /// must find at most one row).
    pub dml: bool,
}

/// How the interpreter reaches the database.
pub trait Spi: Send {
    /// The catalog statements are planned against (it changes after DDL).
    fn catalog(&self) -> Arc<Catalog>;
    /// The context expressions are evaluated in: the clocks, the user,
    /// the session's settings. Parameters are set per statement.
    fn context(&self) -> &EvalContext;
    /// Runs one statement.
    fn execute<'a>(&'a mut self, s: Statement<'a>) -> BoxFut<'a, Done>;
    /// Opens a subtransaction (a block with an EXCEPTION clause).
    fn subtransaction(&mut self) -> BoxFut<'_, usize>;
    /// Undoes everything since the subtransaction opened and closes it.
    fn rollback_subtransaction(&mut self, mark: usize) -> BoxFut<'_, ()>;
    /// Sends a RAISE NOTICE/WARNING/INFO to the client.
    fn notice(&mut self, report: sqlstate::ErrorReport);
    /// Closes a subtransaction whose block ended without an error.
    fn release_subtransaction(&mut self, _mark: usize) {}
    /// COMMIT (true) or ROLLBACK in a procedure or DO block, which then
    /// goes on in a new transaction. Only a CALL or DO run by itself,
    /// outside a transaction block and a subtransaction, may.
    fn end_transaction(&mut self, _commit: bool) -> BoxFut<'_, ()> {
        Box::pin(async { Err(invalid_termination()) })
    }
}

/// PostgreSQL's 2D000 for COMMIT or ROLLBACK where a body may not end its
/// transaction.
pub fn invalid_termination() -> crate::error::ErrorReport {
    crate::err!(InvalidTransactionTermination, "invalid transaction termination")
}

/// Bodies parsed once per session and the plans of their statements.
#[derive(Default)]
pub struct Cache {
    /// By function or trigger OID: the text the body was made from (a
    /// function's body, a trigger's WHEN condition) and the parsed body.
    bodies: Mutex<HashMap<u32, (String, Arc<run::Compiled>)>>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("plpgsql::Cache")
    }
}

/// The parsed body of object `oid` (a function, or a trigger's WHEN
/// condition) made from `text`: the session's cached one while `text` is
/// the same (a replaced function is parsed again), else parsed from
/// `source(text)` now.
pub fn compiled(
    ctx: &EvalContext,
    oid: u32,
    text: &str,
    source: impl FnOnce(&str) -> Result<String>,
) -> Result<Arc<run::Compiled>> {
    let Some(cache) = &ctx.pl else {
        return Ok(Arc::new(run::Compiled::new(&source(text)?)?));
    };
    if let Some((_, c)) = cache.bodies.lock().get(&oid).filter(|(t, _)| t == text) {
        return Ok(c.clone());
    }
    let c = Arc::new(run::Compiled::new(&source(text)?)?);
    cache.bodies.lock().insert(oid, (text.to_string(), c.clone()));
    Ok(c)
}

/// How deep PL/pgSQL calls and trigger firings may nest. Each level runs
/// the interpreter and the executor once more on the same stack, so a
/// runaway recursion stops here with PostgreSQL's error instead of
/// overflowing it.
pub const MAX_DEPTH: u32 = 48;

/// The context one level deeper, or PostgreSQL's error past
/// [`MAX_DEPTH`].
pub fn deeper(ctx: &EvalContext) -> Result<EvalContext> {
    if ctx.depth >= MAX_DEPTH {
        return Err(crate::err!(StatementTooComplex, "stack depth limit exceeded").with_hint(
            "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate.",
        ));
    }
    Ok(EvalContext { depth: ctx.depth + 1, ..ctx.clone() })
}

/// A function's parsed body: the session's cached one, or parsed now.
pub fn body(ctx: &EvalContext, def: &crate::catalog::FunctionDef) -> Result<Arc<run::Compiled>> {
    match def.plpgsql {
        true => compiled(ctx, def.oid, &def.body, |b| Ok(b.to_string())),
        false => compiled(ctx, def.oid, &def.body, |b| sql_block(b, def)),
    }
}

/// A SQL procedure's statements as the PL/pgSQL block that runs them, its
/// parameters as variables. A query's rows are read and dropped, but for
/// the last one's first row, which goes to the output parameters.
fn sql_block(body: &str, def: &crate::catalog::FunctionDef) -> Result<String> {
    let outputs: Vec<String> = def
        .all_params()
        .enumerate()
        .filter(|(_, a)| !a.mode.is_in())
        .map(|(i, a)| match &a.name {
            Some(n) => crate::func::catalog_info::quote_ident(n),
            None => format!("${}", i + 1),
        })
        .collect();
    let stmts: Vec<_> = crate::parse::parse(body)?
        .into_iter()
        .filter(|p| !matches!(p.stmt, crate::parse::Stmt::Empty))
        .collect();
    let last = stmts.len().saturating_sub(1);
    let mut out = String::from("BEGIN\n");
    for (i, p) in stmts.iter().enumerate() {
        match &p.stmt {
            crate::parse::Stmt::Sql(s) if matches!(**s, ast::Statement::Query(_)) => {
                out.push_str(&match i == last && !outputs.is_empty() {
                    true => format!(
                        "SELECT * INTO {} FROM ({}) AS \"$q\" LIMIT 1",
                        outputs.join(", "),
                        p.text
                    ),
                    false => format!("PERFORM * FROM ({}) AS \"$q\"", p.text),
                })
            }
            _ => out.push_str(&p.text),
        }
        out.push_str(";\n");
    }
    out.push_str("END");
    Ok(out)
}

/// Runs a PL/pgSQL function call in FROM: its rows. A query can only
/// read, so the function's own writes fail (see [`run_calls`] for the
/// calls that may write).
pub async fn call<T: kvapi::Txn>(
    c: &crate::plan::PlCall,
    cx: &crate::exec::ExecCtx<'_, T>,
) -> Result<Vec<Vec<Value>>> {
    invoke(c, spi::Access::Read(cx.txn), cx.tenant, cx.catalog, cx.eval).await
}

/// Evaluates a call's arguments and runs the function.
async fn invoke<T: kvapi::Txn>(
    c: &crate::plan::PlCall,
    access: spi::Access<'_, T>,
    tenant: kvapi::TenantId,
    catalog: &Catalog,
    ctx: &EvalContext,
) -> Result<Vec<Vec<Value>>> {
    if c.def.returns_trigger() {
        crate::bail!(FeatureNotSupported, "trigger functions can only be called as triggers");
    }
    let args = c.args.iter().map(|e| e.eval(&[], ctx)).collect::<Result<Vec<_>>>()?;
    if c.def.strict && args.iter().any(Value::is_null) {
        return Ok(match &c.def.returns {
            _ if c.def.returns_set() => Vec::new(),
            crate::catalog::FunctionReturns::Rows { columns, .. } => {
                vec![vec![Value::Null; columns.len()]]
            }
            _ => vec![vec![Value::Null]],
        });
    }
    let ctx = deeper(ctx)?;
    let code = body(&ctx, &c.def)?;
    let mut spi = spi::TxnSpi::new(access, tenant, catalog, &ctx);
    Ok(match run::run(&mut spi, code, run::Call::Function(&c.def, args)).await? {
        run::Returned::Value(v) => vec![vec![v]],
        run::Returned::Rows(rows) => rows,
    })
}

/// Runs the PL/pgSQL calls of a plan that run once per statement (in an
/// uncorrelated subquery or the statement's own FROM, with arguments that
/// read no row) before the plan, where they may write, and returns the
/// plan with their results in their place; None if it has no such call.
/// A function called for each row of a query runs inside the query's
/// execution, which only reads ([`call`]).
pub async fn run_calls<T: kvapi::Txn>(
    plan: &crate::plan::Plan,
    txn: &mut T,
    tenant: kvapi::TenantId,
    catalog: &Catalog,
    ctx: &EvalContext,
) -> Result<Option<crate::plan::Plan>> {
    if !plan.any(&|p| matches!(p, crate::plan::Plan::PlCall(_))) {
        return Ok(None);
    }
    let mut plan = plan.clone();
    let mut once = Once { txn, tenant, catalog, ctx };
    once.run(&mut plan).await?;
    Ok(Some(plan))
}

/// True if an argument reads neither a row nor a subquery's result, so
/// it can be evaluated before the statement runs.
fn standalone(e: &crate::expr::Expr) -> bool {
    use crate::expr::Expr;
    let mut ok = true;
    e.walk(&mut |x| ok &= !matches!(x, Expr::Outer(_) | Expr::Subquery(_) | Expr::InSubquery(..)));
    ok
}

/// [`run_calls`]'s walk.
struct Once<'a, T: kvapi::Txn> {
    txn: &'a mut T,
    tenant: kvapi::TenantId,
    catalog: &'a Catalog,
    ctx: &'a EvalContext,
}

impl<T: kvapi::Txn> Once<'_, T> {
    fn run<'p>(&'p mut self, p: &'p mut crate::plan::Plan) -> BoxFut<'p, ()> {
        use crate::plan::Plan;
        Box::pin(async move {
            match p {
                Plan::PlCall(c) if c.args.iter().all(standalone) => {
                    let rows = self.call(c).await?;
                    let rows = rows
                        .into_iter()
                        .map(|r| r.into_iter().map(crate::expr::Expr::Const).collect());
                    *p = Plan::Values(rows.collect());
                }
                // These run their right side, step or subqueries per row.
                Plan::Lateral(l, ..) => self.run(l).await?,
                Plan::Apply(i, _) => self.run(i).await?,
                Plan::Recursive { base, .. } => self.run(base).await?,
                other => {
                    for c in other.children_mut() {
                        self.run(c).await?;
                    }
                }
            }
            Ok(())
        })
    }

    async fn call(&mut self, c: &crate::plan::PlCall) -> Result<Vec<Vec<Value>>> {
        let access = spi::Access::Write(&mut *self.txn);
        invoke(c, access, self.tenant, self.catalog, self.ctx).await
    }
}

/// Checks a function's body: its syntax, the SQL inside it, and its
/// RETURN statements (CREATE FUNCTION ... LANGUAGE plpgsql).
pub fn check(def: &crate::catalog::FunctionDef) -> Result<()> {
    let c = match def.plpgsql {
        true => run::Compiled::new(&def.body)?,
        false => run::Compiled::new(&sql_block(&def.body, def)?)?,
    };
    run::check_returns(&c.block, def)
}
