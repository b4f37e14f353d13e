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
    /// Runs a statement Strata parses itself (ALTER SEQUENCE, ATTACH
    /// PARTITION, CREATE DOMAIN, ...: [`crate::parse::Stmt::own_command`]),
    /// or None where this interpreter cannot (a function called inside a
    /// statement; DO blocks can).
    fn execute_own(&mut self, _stmt: crate::parse::Stmt) -> Option<BoxFut<'_, Done>> {
        None
    }
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
    /// The last catalog a function's own search path was laid over (see
    /// [`function_context`]).
    path: Mutex<Option<PathEntry>>,
}

/// A catalog with a function's search path over it: the catalog it was
/// made from, the setting and user it was resolved for, and the result.
struct PathEntry {
    base: Arc<Catalog>,
    setting: String,
    user: Arc<str>,
    made: Arc<Catalog>,
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

/// A SQL routine's statements as the PL/pgSQL block that runs them, its
/// parameters as variables: a procedure's, or a function's that is not
/// inlined into its callers ([`FunctionDef::interpreted`]). Rows are read
/// and dropped, but for the last statement's, which are the function's
/// result (its first row, or all of them for a set-returning function),
/// or go to the output parameters.
///
/// [`FunctionDef::interpreted`]: crate::catalog::FunctionDef::interpreted
fn sql_block(body: &str, def: &crate::catalog::FunctionDef) -> Result<String> {
    use crate::catalog::FunctionReturns;
    if def.returns_expr {
        return Ok(format!("BEGIN\nRETURN {body};\nEND"));
    }
    let outputs: Vec<String> = def
        .all_params()
        .enumerate()
        .filter(|(_, a)| !a.mode.is_in())
        .map(|(i, a)| match &a.name {
            Some(n) => crate::func::catalog_info::quote_ident(n),
            None => format!("${}", i + 1),
        })
        .collect();
    // The type of a function's one value, unless it returns nothing.
    let value = match &def.returns {
        FunctionReturns::Value(_, sql) if !def.returns_void() => Some(sql.as_str()),
        _ => None,
    };
    let stmts: Vec<_> = crate::parse::parse(body)?
        .into_iter()
        .filter(|p| !matches!(p.stmt, crate::parse::Stmt::Empty))
        .collect();
    let last = stmts.len().saturating_sub(1);
    let mut declare = "";
    let mut out = String::new();
    for (i, p) in stmts.iter().enumerate() {
        let text = &p.text;
        let sql = match &p.stmt {
            crate::parse::Stmt::Sql(s) => Some(&**s),
            _ => None,
        };
        let query = matches!(sql, Some(ast::Statement::Query(_)));
        let returning = matches!(
            sql,
            Some(
                ast::Statement::Insert(ast::Insert { returning: Some(_), .. })
                    | ast::Statement::Update(ast::Update { returning: Some(_), .. })
                    | ast::Statement::Delete(ast::Delete { returning: Some(_), .. })
            )
        );
        let result = i == last && !def.procedure && (!outputs.is_empty() || value.is_some());
        out.push_str(&match (query, returning) {
            // The interpreter's RETURN QUERY also takes RETURNING rows.
            _ if i == last && (query || returning) && def.returns_set() => {
                format!("RETURN QUERY {text}")
            }
            (true, _) if i == last && !outputs.is_empty() => {
                format!("SELECT * INTO {} FROM ({text}) AS \"$q\" LIMIT 1", outputs.join(", "))
            }
            (true, _) if result => format!("RETURN (SELECT * FROM ({text}) AS \"$q\" LIMIT 1)"),
            (true, _) => format!("PERFORM * FROM ({text}) AS \"$q\""),
            (false, true) if result && outputs.is_empty() => {
                declare = "DECLARE \"$r\" ";
                format!("{text} INTO \"$r\";\nRETURN \"$r\"")
            }
            (false, true) if result => format!("{text} INTO {}", outputs.join(", ")),
            _ if result || (i == last && def.returns_set()) => {
                let mut e = crate::err!(
                    InvalidFunctionDefinition,
                    "return type mismatch in function declared to return {}",
                    match &def.returns {
                        FunctionReturns::SetOf(_, sql) => sql.as_str(),
                        _ => value.unwrap_or("record"),
                    }
                )
                .with_detail(
                    "Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING.",
                );
                e.push_context(format!("SQL function \"{}\"", def.name));
                return Err(e);
            }
            _ => text.to_string(),
        });
        out.push_str(";\n");
    }
    Ok(match declare {
        "" => format!("BEGIN\n{out}END"),
        d => format!("{d}{};\nBEGIN\n{out}END", value.unwrap_or_default()),
    })
}

/// Runs a PL/pgSQL function call in FROM: its rows. A query can only
/// read, so the function's own writes fail (see [`run_calls`] for the
/// calls that may write).
pub async fn call<T: kvapi::Txn>(
    c: &crate::plan::PlCall,
    cx: &crate::exec::ExecCtx<'_, T>,
) -> Result<Vec<Vec<Value>>> {
    let access = spi::Access::Read(cx.txn);
    invoke(c, cx.eval, |ctx| spi::TxnSpi::new(access, cx.tenant, cx.catalog, &ctx)).await
}

/// The context a function that runs apart from its caller
/// ([`FunctionDef::runs_apart`](crate::catalog::FunctionDef::runs_apart))
/// runs in: as its owner if SECURITY DEFINER, with the settings of its SET
/// clauses, and its catalog resolving names under its search path. Any
/// other function runs in its caller's.
pub fn function_context(
    mut ctx: EvalContext,
    def: &crate::catalog::FunctionDef,
) -> Result<EvalContext> {
    if !def.runs_apart() {
        return Ok(ctx);
    }
    if def.security_definer {
        ctx.user = Arc::from(def.access.owner.as_str());
    }
    if !def.config.is_empty() {
        let mut settings = (*ctx.settings).clone();
        for (name, value) in &def.config {
            let key = name.to_lowercase();
            if key == "timezone" {
                ctx.zone = Some(sqltypes::Zone::lookup(value)?);
            }
            settings.insert(key, value.clone());
        }
        ctx.settings = Arc::new(settings);
    }
    let Some(base) = ctx.catalog.clone() else { return Ok(ctx) };
    let setting =
        ctx.settings.get("search_path").map_or(crate::catalog::DEFAULT_SEARCH_PATH, |s| s);
    let cache = ctx.pl.clone();
    let mut cached = cache.as_ref().map(|c| c.path.lock());
    if let Some(Some(e)) = cached.as_deref() {
        if Arc::ptr_eq(&e.base, &base) && e.setting == setting && e.user == ctx.user {
            ctx.catalog = Some(e.made.clone());
            return Ok(ctx);
        }
    }
    let path = base.resolve_path(setting, &ctx.user);
    let made = match path == base.path {
        true => base.clone(),
        false => Arc::new(Catalog { path, ..(*base).clone() }),
    };
    if let Some(slot) = cached.as_deref_mut() {
        let entry = PathEntry { base, setting: setting.to_string(), user: ctx.user.clone(), made };
        ctx.catalog = Some(entry.made.clone());
        *slot = Some(entry);
    } else {
        ctx.catalog = Some(made);
    }
    Ok(ctx)
}

/// Evaluates a call's arguments in `ctx` and runs the function through
/// the interpreter `spi` makes from the context one level deeper.
pub async fn invoke<S: Spi>(
    c: &crate::plan::PlCall,
    ctx: &EvalContext,
    spi: impl FnOnce(EvalContext) -> S,
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
    let ctx = function_context(deeper(ctx)?, &c.def)?;
    let code = body(&ctx, &c.def)?;
    let mut spi = spi(ctx);
    Ok(match run::run(&mut spi, code, run::Call::Function(&c.def, args)).await? {
        // A SQL function returns NULL for void; PL/pgSQL, an empty value.
        run::Returned::Value(_) if !c.def.plpgsql && c.def.returns_void() => {
            vec![vec![Value::Null]]
        }
        run::Returned::Value(v) => vec![vec![v]],
        run::Returned::Rows(rows) => rows,
    })
}

/// Runs one of the calls [`run_calls`] finds (its rows), and reads the
/// parts of the plan around them that must run first.
pub trait RunCall: Send {
    /// The transaction the reads go through.
    type Txn: kvapi::Txn;

    /// Runs call `c`, its arguments evaluated in `ctx` (the statement's,
    /// or with an outer row or uncorrelated subqueries' values).
    fn run_call<'a>(
        &'a mut self,
        c: &'a crate::plan::PlCall,
        ctx: &'a EvalContext,
    ) -> BoxFut<'a, Vec<Vec<Value>>>;

    /// What a read of the plan runs with, in `eval`.
    fn reads<'c>(&'c self, eval: &'c EvalContext) -> Result<crate::exec::ExecCtx<'c, Self::Txn>>;
}

/// Runs calls in a transaction, without a session: their statements may
/// write, but not run utility statements (DML's queries, and the
/// queries of bodies that themselves run in a transaction).
pub struct TxnCalls<'a, T: kvapi::Txn> {
    /// The transaction the statements run in.
    pub txn: &'a mut T,
    /// The tenant whose data they read and write.
    pub tenant: kvapi::TenantId,
    /// The catalog they are planned against.
    pub catalog: &'a Catalog,
}

impl<T: kvapi::Txn> RunCall for TxnCalls<'_, T> {
    type Txn = T;

    fn run_call<'a>(
        &'a mut self,
        c: &'a crate::plan::PlCall,
        ctx: &'a EvalContext,
    ) -> BoxFut<'a, Vec<Vec<Value>>> {
        Box::pin(async move {
            let (tenant, catalog) = (self.tenant, self.catalog);
            let access = spi::Access::Write(&mut *self.txn);
            invoke(c, ctx, |ctx| spi::TxnSpi::new(access, tenant, catalog, &ctx)).await
        })
    }

    fn reads<'c>(&'c self, eval: &'c EvalContext) -> Result<crate::exec::ExecCtx<'c, T>> {
        let (txn, tenant, catalog) = (&*self.txn, self.tenant, self.catalog);
        Ok(crate::exec::ExecCtx { txn, tenant, eval, catalog })
    }
}

/// Runs the PL/pgSQL calls of a plan that run once per statement (in an
/// uncorrelated subquery or the statement's own FROM, with arguments that
/// read no row) before the plan, through `calls`, where they may write,
/// and returns the plan with their results in their place; None if it has
/// no such call.
///
/// A call in a correlated subquery (`select f(id) from t`: an `Apply`)
/// or a LATERAL item runs once per row, also through `calls`: the rows
/// are read first, then each row's calls run (the same walk, with the row
/// among the enclosing rows), and the `Apply` or `Lateral` becomes its
/// rows. Calls the walk leaves (in a recursive query's step, or with an
/// argument that reads a subquery) run inside the query's execution,
/// which only reads ([`call`]).
pub async fn run_calls(
    plan: &crate::plan::Plan,
    ctx: &EvalContext,
    calls: &mut impl RunCall,
) -> Result<Option<crate::plan::Plan>> {
    if !has_calls(plan) {
        return Ok(None);
    }
    let mut plan = plan.clone();
    once(&mut plan, calls, ctx).await?;
    Ok(Some(plan))
}

/// True if an argument reads no subquery's result, so it can be evaluated
/// with the enclosing rows in `ctx` before the statement runs.
fn standalone(e: &crate::expr::Expr) -> bool {
    use crate::expr::Expr;
    let mut ok = true;
    e.walk(&mut |x| ok &= !matches!(x, Expr::Subquery(_) | Expr::InSubquery(..)));
    ok
}

/// True if the plan calls a PL/pgSQL function.
fn has_calls(p: &crate::plan::Plan) -> bool {
    p.any(&|p| matches!(p, crate::plan::Plan::PlCall(_)))
}

/// [`run_calls`]'s walk; `ctx` has the enclosing rows and the values of
/// the uncorrelated subqueries around `p`.
fn once<'p, R: RunCall>(
    p: &'p mut crate::plan::Plan,
    calls: &'p mut R,
    ctx: &'p EvalContext,
) -> BoxFut<'p, ()> {
    use crate::plan::Plan;
    Box::pin(async move {
        match p {
            Plan::PlCall(c) if c.args.iter().all(standalone) => {
                *p = Plan::Values(consts(calls.run_call(c, ctx).await?));
            }
            // These run their right side, step or subqueries per row.
            Plan::Lateral(l, r, kind, width) => {
                once(l, calls, ctx).await?;
                if has_calls(r) {
                    let rows = Box::pin(per_left_row(l, r, (*kind, *width), calls, ctx)).await?;
                    *p = Plan::Values(consts(rows));
                }
            }
            Plan::Apply(i, subs) => {
                once(i, calls, ctx).await?;
                if subs.iter().any(|c| has_calls(&c.plan)) {
                    let rows = Box::pin(per_row(i, subs, calls, ctx)).await?;
                    *p = Plan::Values(consts(rows));
                }
            }
            Plan::Recursive { base, .. } => once(base, calls, ctx).await?,
            Plan::Init(list, input) => {
                for (l, _) in list.iter_mut() {
                    once(l, calls, ctx).await?;
                }
                // Rows read before the plan runs (those of a node whose
                // calls run per row) need the subqueries' values.
                let per_row = |p: &Plan| match p {
                    Plan::Apply(_, subs) => subs.iter().any(|c| has_calls(&c.plan)),
                    Plan::Lateral(_, r, ..) => has_calls(r),
                    _ => false,
                };
                match input.any(&per_row) {
                    true => with_init_values(list, input, calls, ctx).await?,
                    false => once(input, calls, ctx).await?,
                }
            }
            other => {
                for c in other.children_mut() {
                    once(c, calls, ctx).await?;
                }
            }
        }
        Ok(())
    })
}

/// [`once`] for the input of `Init(list, input)`: rows read before the
/// plan runs see its uncorrelated subqueries' values (computed again when
/// it runs). Apart from [`once`], whose stack frame nested calls repeat.
fn with_init_values<'p, R: RunCall>(
    list: &'p [(crate::plan::Plan, crate::plan::SubqKind)],
    input: &'p mut crate::plan::Plan,
    calls: &'p mut R,
    ctx: &'p EvalContext,
) -> BoxFut<'p, ()> {
    Box::pin(async move {
        let inner = crate::exec::with_init_plans(list, &calls.reads(ctx)?).await?;
        once(input, calls, &inner).await
    })
}

fn consts(rows: Vec<Vec<Value>>) -> Vec<Vec<crate::expr::Expr>> {
    rows.into_iter().map(|r| r.into_iter().map(crate::expr::Expr::Const).collect()).collect()
}

/// The rows of `Apply(input, subs)` whose subqueries call PL/pgSQL
/// functions: `input`'s rows are read, then each gets the values of the
/// subqueries ([`correlated_values`]).
async fn per_row<R: RunCall>(
    input: &crate::plan::Plan,
    subs: &[crate::plan::Correlated],
    calls: &mut R,
    ctx: &EvalContext,
) -> Result<Vec<Vec<Value>>> {
    let rows = crate::exec::run(input, &calls.reads(ctx)?).await?;
    let mut out = Vec::with_capacity(rows.len());
    for mut row in rows {
        let values = correlated_values(&row, subs, &None, calls, ctx).await?;
        row.extend(values);
        out.push(row);
    }
    Ok(out)
}

/// The rows of `left LATERAL right` when `right` calls PL/pgSQL
/// functions: `left`'s rows are read, then for each the calls of `right`
/// over it run through `calls` (where they may write) and `right` is read
/// with their results. `kind` and `width` are the join's.
async fn per_left_row<R: RunCall>(
    left: &crate::plan::Plan,
    right: &crate::plan::Plan,
    (kind, width): (crate::plan::JoinKind, usize),
    calls: &mut R,
    ctx: &EvalContext,
) -> Result<Vec<Vec<Value>>> {
    let rows = crate::exec::run(left, &calls.reads(ctx)?).await?;
    let mut out = Vec::new();
    for row in rows {
        let with_row = ctx.with_row(&row);
        let mut mine = right.clone();
        once(&mut mine, calls, &with_row).await?;
        let rights = crate::exec::run(&mine, &calls.reads(&with_row)?).await?;
        if rights.is_empty() && kind == crate::plan::JoinKind::Left {
            out.push(row.iter().cloned().chain(std::iter::repeat_n(Value::Null, width)).collect());
        }
        for r in rights {
            out.push(row.iter().cloned().chain(r).collect());
        }
    }
    Ok(out)
}

/// The values of correlated subqueries `subs` over `row` (see
/// [`crate::exec::correlated_values`]); the PL/pgSQL calls in them run
/// first, through `calls`, where they may write, with `row` after the
/// enclosing rows of `ctx`. The runs share `memo` only without calls
/// (a call's writes may change what a subquery reads).
pub async fn correlated_values<R: RunCall>(
    row: &[Value],
    subs: &[crate::plan::Correlated],
    memo: &Option<std::sync::Arc<crate::exec::memo::ScanMemo>>,
    calls: &mut R,
    ctx: &EvalContext,
) -> Result<Vec<Value>> {
    if !subs.iter().any(|c| has_calls(&c.plan)) {
        return crate::exec::correlated_values(row, subs, memo, &calls.reads(ctx)?).await;
    }
    let with_row = ctx.with_row(row);
    let mut mine = subs.to_vec();
    for c in &mut mine {
        once(&mut c.plan, calls, &with_row).await?;
    }
    crate::exec::correlated_values(row, &mine, &None, &calls.reads(ctx)?).await
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
