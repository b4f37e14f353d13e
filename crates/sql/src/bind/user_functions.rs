//! Calls of SQL functions (CREATE FUNCTION ... LANGUAGE sql).
//!
//! A call is planned as part of the caller's query, as PostgreSQL inlines
//! simple SQL functions:
//!
//! - A scalar function whose body is one expression (`RETURN expr`, or
//!   `SELECT expr` and nothing else) becomes that expression with each
//!   parameter replaced by its argument cast to the parameter's type, cast
//!   to the result type: `add1(x)` is `CAST((CAST(x AS integer)) + 1 AS
//!   integer)`. It works wherever an expression does.
//! - Any other scalar function becomes a scalar subquery: the body, whose
//!   SELECTs each read the arguments from a one-row derived table named
//!   after the function put first in their FROM (`(SELECT CAST(x AS
//!   integer) AS "$1") AS f`), limited to its first row (a SQL function
//!   returns the first row of its query) and cast to the result type. It
//!   runs where a subquery can.
//! - A function in FROM becomes `(SELECT CAST("$body".c1 AS t1) AS a, ...
//!   FROM (body) AS "$body"(c1, ...))`, read laterally after the items
//!   before it.
//!
//! In the body, `$n` and `f.p` name the parameters; a bare parameter name
//! does too unless a table the body reads has a column of that name, which
//! wins as in PostgreSQL. A `*` in the body stands for its own FROM items'
//! columns. STRICT functions return NULL (no rows in FROM) when an
//! argument is NULL. Argument expressions are substituted, so a volatile
//! argument used twice by an inlined body runs twice.

use std::sync::Arc;

use sqlparser::ast::{self, VisitMut, VisitorMut};

use super::*;
use crate::catalog::{FunctionDef, FunctionReturns};

/// The body's hidden alias in the FROM form.
const BODY: &str = "$body";

/// The hidden one-row relation a one-row function's body is joined to.
const ONE: &str = "$one";

/// How many SQL function calls may be expanded one inside another. A
/// recursive SQL function would expand without end (PostgreSQL runs it
/// until its stack depth limit); Strata plans calls into the query, so it
/// stops here with an error instead.
const MAX_NESTING: usize = 12;

fn too_deep(def: &FunctionDef) -> crate::error::ErrorReport {
    err!(
        StatementTooComplex,
        "SQL function \"{}\" calls SQL functions nested more than {MAX_NESTING} deep (recursive SQL functions are not supported)",
        def.name
    )
}

impl Binder<'_> {
    /// The SQL functions a call's name may mean, in search path order
    /// (none for a pg_catalog name).
    pub(crate) fn sql_functions(&self, name: &ast::ObjectName) -> Result<Vec<Arc<FunctionDef>>> {
        let n = obj_name(name)?;
        if self.catalog.functions.is_empty() || n.schema.as_deref() == Some("pg_catalog") {
            return Ok(Vec::new());
        }
        let path = self.catalog.lookup_path(&n, false)?;
        let mut out = Vec::new();
        for ns in path.iter() {
            if let Some(fs) = self.catalog.functions.get(&(*ns, n.name.clone())) {
                out.extend(fs.iter().cloned());
            }
        }
        Ok(out)
    }

    /// A call of a user-defined function with named arguments
    /// (`f(1, b => 2)`) with each argument in its parameter's place and the
    /// gaps filled by defaults; None when the call names no argument or no
    /// function of its name takes the names.
    pub(crate) fn named_user_call(
        &self,
        name: &ast::ObjectName,
        args: &[ast::FunctionArg],
    ) -> Result<Option<Vec<ast::FunctionArg>>> {
        let Some(given) = super::functions::named_args(args)? else { return Ok(None) };
        let keys: Vec<&str> = given.iter().filter_map(|(k, _)| k.as_deref()).collect();
        let positional = given.len() - keys.len();
        for def in self.sql_functions(name)? {
            let names: Vec<&str> =
                def.args.iter().map(|a| a.name.as_deref().unwrap_or("")).collect();
            let at = |k: &&str| names.iter().position(|n| n == k);
            let fits = given.len() <= names.len()
                && keys.iter().all(|k| at(k).is_some_and(|i| i >= positional))
                && def.args.iter().enumerate().all(|(i, a)| {
                    i < positional || keys.contains(&names[i]) || a.default.is_some()
                });
            if !fits {
                continue;
            }
            let defaults = def
                .args
                .iter()
                .map(|a| a.default.as_deref().map(parse_expr).transpose())
                .collect::<Result<Vec<_>>>()?;
            let placed = super::functions::place_args(&def.name, &names, &defaults, given)?;
            return Ok(Some(
                placed
                    .into_iter()
                    .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)))
                    .collect(),
            ));
        }
        Ok(None)
    }

    /// CALL's procedure and its arguments, bound and cast to the
    /// parameters' types, with the columns of the row it returns.
    pub(crate) fn procedure_call(
        &mut self,
        f: &ast::Function,
    ) -> Result<(crate::plan::PlCall, Option<Vec<Column>>)> {
        let name = obj_name(&f.name)?;
        let given = match &f.args {
            ast::FunctionArguments::List(l) => l.args.clone(),
            ast::FunctionArguments::None => Vec::new(),
            ast::FunctionArguments::Subquery(_) => {
                bail!(SyntaxError, "syntax error at or near \"(\"")
            }
        };
        let given = self.named_user_call(&f.name, &given)?.unwrap_or(given);
        let mut args = Vec::with_capacity(given.len());
        for a in given {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => args.push(e),
                other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
            }
        }
        let refs: Vec<&ast::Expr> = args.iter().collect();
        let types = self.arg_types(&refs, &Scope::default(), &mut None)?;
        let shown = || types.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ");
        let not_procedure = || {
            err!(WrongObjectType, "{}({}) is not a procedure", name.name, shown())
                .with_hint("To call a function, use SELECT.")
        };
        // CALL matches a function's OUT parameters too, so a function
        // with any is never the one called without them.
        let found = choose(&self.sql_functions(&f.name)?, &types, packed(&args))?;
        let Some(def) = found.filter(|d| d.procedure || d.outs.is_empty()) else {
            if crate::builtins::procs().iter().any(|p| p.name == name.name) {
                return Err(not_procedure());
            }
            return Err(err!(UndefinedFunction, "procedure {}({}) does not exist", name.name, shown())
                .with_hint(
                    "No procedure matches the given name and argument types. You might need to add explicit type casts.",
                ));
        };
        if !def.procedure {
            return Err(not_procedure());
        }
        let args = with_defaults(&def, args)?;
        let mut bound = Vec::with_capacity(args.len());
        for (a, p) in args.iter().zip(&def.args) {
            bound.push(self.assign(a, &Scope::default(), &p.ty.to_type())?);
        }
        let columns = match &def.returns {
            FunctionReturns::Rows { columns, .. } => Some(
                columns.iter().map(|(n, t, _)| Column::computed(n.clone(), t.to_type())).collect(),
            ),
            _ => None,
        };
        Ok((crate::plan::PlCall { def, args: bound }, columns))
    }

    /// Binds a call of a SQL function in an expression, or None when no
    /// SQL function of its name takes its arguments.
    pub(super) fn sql_function_call(
        &mut self,
        f: &ast::Function,
        args: &[Option<&ast::Expr>],
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<Option<(Expr, DataType)>> {
        let candidates = self.sql_functions(&f.name)?;
        if candidates.is_empty() {
            return Ok(None);
        }
        if self.stored {
            bail!(
                FeatureNotSupported,
                "SQL functions in defaults, CHECK constraints and index expressions are not supported yet"
            );
        }
        let Some(args) = args.iter().copied().collect::<Option<Vec<&ast::Expr>>>() else {
            return Ok(None);
        };
        let types = self.arg_types(&args, scope, agg)?;
        let Some(def) = choose(&candidates, &types, packed(&args))? else { return Ok(None) };
        refuse_procedure(&def, &types)?;
        if self.trace.is_some() {
            // A view's definition is analysed as PostgreSQL does, without
            // the bodies of the functions it calls: its type is enough.
            if let FunctionReturns::Value(t, _) = &def.returns {
                let t = t.to_type();
                return Ok(Some((Expr::Cast(Box::new(Expr::Const(Value::Null)), t.clone()), t)));
            }
        }
        if def.returns_set() {
            bail!(
                FeatureNotSupported,
                "set-returning SQL functions are supported only in FROM so far: {}()",
                def.name
            );
        }
        let args: Vec<ast::Expr> = args.into_iter().cloned().collect();
        if def.interpreted() || def.returns_row() {
            if def.returns_trigger() {
                bail!(FeatureNotSupported, "trigger functions can only be called as triggers");
            }
            // `(SELECT f FROM f(args) AS f)`: the call runs where a
            // subquery does, once per row when its arguments read one. A
            // function returning a row (OUT parameters) gives it as one
            // record.
            // The subquery's call is bound again, where the variadic
            // arguments are packed.
            let args = match def.variadic() {
                Some(_) => args,
                None => with_defaults(&def, args)?,
            };
            let call = call_subquery(&f.name, args, def.returns_row())?;
            // A volatile call runs per row where the query has rows.
            self.per_row_call = def.volatility == 'v' && !scope.cols.is_empty();
            let r = self.expr_in(&call, scope, agg);
            self.per_row_call = false;
            return r.map(Some);
        }
        let call = self.expand_scalar(&def, with_defaults(&def, args)?)?;
        self.enter_function(&def)?;
        let r = self.expr_in(&call, scope, agg);
        self.fn_depth -= 1;
        Ok(Some(r?))
    }

    /// The types of a call's arguments. They are bound again where the
    /// expansion puts them, so the subqueries this binding registers are
    /// dropped (kept, they would run twice).
    fn arg_types(
        &mut self,
        args: &[&ast::Expr],
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<Vec<DataType>> {
        let (subqueries, correlated) = (self.subqueries.len(), self.correlated.len());
        let types: Result<Vec<DataType>> =
            args.iter().map(|a| Ok(self.expr_in(a, scope, agg)?.1)).collect();
        self.subqueries.truncate(subqueries);
        self.correlated.truncate(correlated);
        types
    }

    /// Counts one more SQL function expansion inside the current ones.
    fn enter_function(&mut self, def: &FunctionDef) -> Result<()> {
        if self.fn_depth >= MAX_NESTING {
            return Err(too_deep(def));
        }
        self.fn_depth += 1;
        Ok(())
    }

    /// True if `name` names a user-defined set-returning function.
    pub(crate) fn is_user_srf(&self, name: &ast::ObjectName) -> bool {
        self.sql_functions(name).is_ok_and(|fs| fs.iter().any(|f| f.returns_set()))
    }

    /// True if `item` calls a function in FROM whose name SQL functions
    /// have.
    pub(crate) fn is_sql_function_item(&self, item: &ast::TableFactor) -> bool {
        match item {
            ast::TableFactor::Table { name, args: Some(_), .. }
            | ast::TableFactor::Function { name, .. } => {
                self.sql_functions(name).is_ok_and(|c| !c.is_empty())
            }
            _ => false,
        }
    }

    /// A SQL function call in FROM as the derived table it is planned as,
    /// or a PL/pgSQL function call as its plan; None when `item` is no
    /// such call.
    pub(crate) fn sql_function_item(
        &mut self,
        item: &ast::TableFactor,
    ) -> Result<Option<FunctionItem>> {
        let (name, alias, fargs) = match item {
            ast::TableFactor::Table {
                name, alias, args: Some(a), with_ordinality: false, ..
            } => (name, alias, a.args.as_slice()),
            ast::TableFactor::Function { name, alias, args, .. } => (name, alias, args.as_slice()),
            _ => return Ok(None),
        };
        let candidates = self.sql_functions(name)?;
        if candidates.is_empty() {
            return Ok(None);
        }
        let placed;
        let fargs = match self.named_user_call(name, fargs)? {
            Some(a) => {
                placed = a;
                placed.as_slice()
            }
            None => fargs,
        };
        let mut args = Vec::with_capacity(fargs.len());
        for a in fargs {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => args.push(e.clone()),
                _ => return Ok(None),
            }
        }
        // Argument types, read where the item's arguments are read (items
        // before it are visible as outer columns).
        let refs: Vec<&ast::Expr> = args.iter().collect();
        let types = self.arg_types(&refs, &Scope::default(), &mut None)?;
        let Some(def) = choose(&candidates, &types, packed(&refs))? else { return Ok(None) };
        refuse_procedure(&def, &types)?;
        // A SQL function that runs apart from its caller, or whose body
        // is no one query, runs as a PL/pgSQL body does, not inlined.
        if def.interpreted() && self.trace.is_none() {
            let args = with_defaults(&def, args)?;
            return self.plpgsql_item(def, args, alias).map(Some);
        }
        let query = match self.trace.is_some() {
            true => signature_rows(&def)?,
            false => {
                // The body is bound when the caller plans the derived
                // table; it counts against the nesting limit from here.
                if self.fn_depth >= MAX_NESTING {
                    return Err(too_deep(&def));
                }
                self.expand_rows(&def, with_defaults(&def, args)?)?
            }
        };
        let mut alias = alias.clone().unwrap_or_else(|| ast::TableAlias {
            explicit: true,
            name: ast::Ident::new(def.name.clone()),
            columns: Vec::new(),
            at: None,
        });
        // A function of one value's column is named by its OUT parameter,
        // else by the alias.
        if !matches!(def.returns, FunctionReturns::Rows { .. }) && alias.columns.is_empty() {
            let name = match out_name(&def) {
                Some(n) => ident(n),
                None => alias.name.clone(),
            };
            alias.columns.push(ast::TableAliasColumnDef { name, data_type: None });
        }
        Ok(Some(FunctionItem::Derived(Box::new(ast::TableFactor::Derived {
            lateral: false,
            subquery: Box::new(query),
            alias: Some(alias),
            sample: None,
        }))))
    }

    /// A PL/pgSQL function call in FROM: a [`PlCall`] with its arguments
    /// bound (they read items before it as outer columns) and cast to the
    /// parameters' types, and its columns as the alias names them.
    fn plpgsql_item(
        &mut self,
        def: Arc<FunctionDef>,
        args: Vec<ast::Expr>,
        alias: &Option<ast::TableAlias>,
    ) -> Result<FunctionItem> {
        let mut bound = Vec::with_capacity(args.len());
        for (a, p) in args.iter().zip(&def.args) {
            bound.push(self.assign(a, &Scope::default(), &p.ty.to_type())?);
        }
        let qualifier =
            alias.as_ref().map(|a| crate::bind::ident(&a.name)).unwrap_or_else(|| def.name.clone());
        let columns: Vec<(String, DataType)> = match &def.returns {
            FunctionReturns::Value(t, _) | FunctionReturns::SetOf(t, _) => {
                let ty = if t.oid == DataType::Void.oid() { DataType::Void } else { t.to_type() };
                vec![(out_name(&def).unwrap_or(&qualifier).to_string(), ty)]
            }
            FunctionReturns::Rows { columns, .. } => {
                columns.iter().map(|(n, t, _)| (n.clone(), t.to_type())).collect()
            }
        };
        let renames: Vec<String> = alias
            .as_ref()
            .map(|a| a.columns.iter().map(|c| crate::bind::ident(&c.name)).collect())
            .unwrap_or_default();
        let cols = columns
            .into_iter()
            .enumerate()
            .map(|(i, (name, ty))| ScopeCol {
                qualifier: Some(qualifier.clone()),
                name: renames.get(i).cloned().unwrap_or(name),
                ty,
                table_oid: 0,
                column_id: 0,
                reach: Reach::Full,
            })
            .collect();
        let plan = Plan::PlCall(Box::new(crate::plan::PlCall { def, args: bound }));
        Ok(FunctionItem::Planned(Box::new(plan), Scope { cols }))
    }
}

/// 42809 for a procedure called as a function.
fn refuse_procedure(def: &FunctionDef, types: &[DataType]) -> Result<()> {
    if !def.procedure {
        return Ok(());
    }
    let shown: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    Err(err!(WrongObjectType, "{}({}) is a procedure", def.name, shown.join(", "))
        .with_hint("To call a procedure, use CALL."))
}

/// The name of a function's one output parameter, which names its
/// column in FROM.
fn out_name(def: &FunctionDef) -> Option<&str> {
    let mut outputs = def.outputs();
    match (outputs.next(), outputs.next()) {
        (Some(one), None) => one.name.as_deref(),
        _ => None,
    }
}

/// What a FROM item calling a user-defined function is planned as.
pub(crate) enum FunctionItem {
    /// A SQL function: a derived table (its body).
    Derived(Box<ast::TableFactor>),
    /// A PL/pgSQL function: its call.
    Planned(Box<Plan>, Scope),
}

/// `(SELECT "$pl" FROM name(args) AS "$pl")`: a scalar PL/pgSQL call, or
/// a call returning a row, as a subquery over its FROM form.
fn call_subquery(name: &ast::ObjectName, args: Vec<ast::Expr>, row: bool) -> Result<ast::Expr> {
    // A row is the item's whole row; a value is its one column, which an
    // OUT parameter would otherwise name.
    let text = match row {
        true => r#"SELECT "$pl" FROM f() AS "$pl""#,
        false => r#"SELECT "$pl" FROM f() AS "$pl"("$pl")"#,
    };
    let mut q = crate::parse::query_text(text).map_err(internal)?;
    if let ast::SetExpr::Select(s) = q.body.as_mut() {
        if let Some(ast::TableFactor::Table { name: n, args: Some(a), .. }) =
            s.from.first_mut().map(|t| &mut t.relation)
        {
            *n = name.clone();
            a.args = args
                .into_iter()
                .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)))
                .collect();
        }
    }
    Ok(ast::Expr::Subquery(Box::new(q)))
}

/// The function a call with argument types `types` means among
/// `candidates`: one whose parameters (after those defaults fill) take
/// the types exactly, else the one that takes them by implicit casts
/// with the most exact matches; None when none takes them.
fn choose(
    candidates: &[Arc<FunctionDef>],
    types: &[DataType],
    packed: bool,
) -> Result<Option<Arc<FunctionDef>>> {
    // A packed call (`VARIADIC array` last) passes the variadic
    // parameter's array whole, so only variadic functions take it.
    let variadic = |d: &FunctionDef| d.variadic().filter(|_| !packed);
    let fits = |d: &FunctionDef| {
        let defaults = d.args.iter().rev().take_while(|a| a.default.is_some()).count();
        if packed && d.variadic().is_none() {
            return false;
        }
        match variadic(d) {
            Some(_) => types.len() >= d.args.len(),
            None => types.len() <= d.args.len() && types.len() + defaults >= d.args.len(),
        }
    };
    let mut best: Vec<(usize, &Arc<FunctionDef>)> = Vec::new();
    for d in candidates.iter().filter(|d| fits(d)) {
        let mut params = d.arg_types();
        if let Some(elem) = variadic(d) {
            // The last arguments are the variadic array's elements.
            params.pop();
            params.resize(types.len(), elem);
        }
        let mut exact = 0;
        let mut ok = true;
        for (t, p) in types.iter().zip(&params) {
            if t.oid() == p.oid() {
                exact += 1;
            } else if !implicit(t, p) {
                ok = false;
                break;
            }
        }
        if ok {
            best.push((exact, d));
        }
    }
    let Some(top) = best.iter().map(|(e, _)| *e).max() else { return Ok(None) };
    let mut tops = best.into_iter().filter(|(e, _)| *e == top);
    let first = tops.next().map(|(_, d)| d.clone());
    if tops.next().is_some() && top < types.len() {
        let name = first.as_ref().map(|d| d.name.clone()).unwrap_or_default();
        return Err(crate::func::ambiguous_function(&name, types));
    }
    Ok(first)
}

/// True if the call's last argument is `VARIADIC array`.
fn packed<E: std::borrow::Borrow<ast::Expr>>(args: &[E]) -> bool {
    args.last().is_some_and(|a| super::variadic_argument(a.borrow()).is_some())
}

/// True if a value of type `from` passes to a parameter of type `to`
/// without an explicit cast.
fn implicit(from: &DataType, to: &DataType) -> bool {
    if *from == DataType::Unknown || from.oid() == to.oid() {
        return true;
    }
    match sqltypes::cast::common_type(from, to) {
        Some(c) => c.oid() == to.oid(),
        None => false,
    }
}

/// The arguments with the parameters' defaults after them.
fn with_defaults(def: &FunctionDef, mut args: Vec<ast::Expr>) -> Result<Vec<ast::Expr>> {
    if let Some(whole) = args.last().and_then(super::variadic_argument) {
        // `VARIADIC array`: the array is the parameter's value.
        let whole = whole.clone();
        args.pop();
        args.push(whole);
    } else if def.variadic().is_some() && args.len() >= def.args.len() {
        // The last arguments become the variadic parameter's array.
        let elems = args.split_off(def.args.len() - 1);
        args.push(ast::Expr::Array(ast::Array { elem: elems, named: true }));
    }
    for a in def.args.iter().skip(args.len()) {
        let Some(text) = &a.default else {
            bail!(InternalError, "function {} lacks a default", def.name)
        };
        args.push(parse_expr(text)?);
    }
    Ok(args)
}

/// The name of parameter `i` as a column of the arguments' row.
fn param_column(i: usize) -> String {
    format!("${}", i + 1)
}

/// A stored expression (a parameter's default).
fn parse_expr(text: &str) -> Result<ast::Expr> {
    crate::parse::expr_text(text).map_err(|e| err!(InternalError, "{e}"))
}

fn parse_type(text: &str) -> Result<ast::DataType> {
    crate::parse::type_text(text).map_err(|e| err!(InternalError, "type {text}: {e}"))
}

fn cast(e: ast::Expr, type_sql: &str) -> Result<ast::Expr> {
    Ok(ast::Expr::Cast {
        kind: ast::CastKind::Cast,
        expr: Box::new(ast::Expr::Nested(Box::new(e))),
        data_type: parse_type(type_sql)?,
        format: None,
    })
}

fn ident(name: &str) -> ast::Ident {
    ast::Ident::with_quote('"', name)
}

fn internal(e: sqlparser::parser::ParserError) -> crate::error::ErrorReport {
    err!(InternalError, "{e}")
}

/// The body as a query: `AS 'query'`, or `SELECT expr` for `RETURN expr`.
fn body_query(def: &FunctionDef) -> Result<ast::Query> {
    let text = match def.returns_expr {
        true => format!("SELECT {}", def.body),
        false => def.body.clone(),
    };
    crate::parse::query_text(&text).map_err(|e| err!(SyntaxError, "{e}"))
}

/// Rewrites the body's parameter references. With `args`, each becomes its
/// argument (the inlined form); without, the column of the arguments' row
/// (`f."$1"`). `$n` and `f.p` always name a parameter; a bare name does
/// unless a table the body reads has a column of that name, which wins as
/// in PostgreSQL; `p.field` reads a field of a row-typed parameter unless
/// the body reads a table named `p`.
struct Params<'a> {
    def: &'a FunctionDef,
    args: Option<&'a [ast::Expr]>,
    read: &'a Read,
}

impl VisitorMut for Params<'_> {
    type Break = ();

    fn post_visit_expr(&mut self, e: &mut ast::Expr) -> std::ops::ControlFlow<()> {
        let def = self.def;
        let named = |n: &str| def.args.iter().position(|a| a.name.as_deref() == Some(n));
        // `p.field` (or `f.p.field`) reads a field of row-typed parameter
        // `p`, unless a table the body reads is named `p`.
        let row_param = |q: &str| {
            named(q).filter(|&i| def.args[i].ty.oid == 2249 && !self.read.relations.contains(q))
        };
        let mut field = None;
        let mut field_of =
            |p: &str, parts: &[ast::Ident]| row_param(p).inspect(|_| field = parts.last().cloned());
        let index = match &*e {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Placeholder(p) => super::placeholder(p)
                    .map(|(n, _)| n)
                    .filter(|n| *n >= 1 && *n <= def.args.len())
                    .map(|n| n - 1),
                _ => None,
            },
            ast::Expr::Identifier(id) => {
                let n = super::ident(id);
                if self.read.columns.contains(&n) {
                    None
                } else {
                    named(&n)
                }
            }
            ast::Expr::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(super::ident).collect();
                match names.as_slice() {
                    [q, n] if *q == def.name => named(n),
                    [p, _] => field_of(p, parts),
                    [q, p, _] if *q == def.name => field_of(p, parts),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(i) = index {
            let arg = match self.args {
                Some(args) => ast::Expr::Nested(Box::new(caller_variables(args[i].clone()))),
                None => {
                    ast::Expr::CompoundIdentifier(vec![ident(&def.name), ident(&param_column(i))])
                }
            };
            *e = match field {
                Some(f) => ast::Expr::CompoundFieldAccess {
                    root: Box::new(ast::Expr::Nested(Box::new(arg))),
                    access_chain: vec![ast::AccessExpr::Dot(ast::Expr::Identifier(f))],
                },
                None => arg,
            };
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// An argument moved into a function's body: the PL/pgSQL variables it
/// names by bare name are checked against the caller's columns, not the
/// body's, so here they are plain parameters.
fn caller_variables(mut e: ast::Expr) -> ast::Expr {
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        if let ast::Expr::Value(v) = x {
            if let ast::Value::Placeholder(p) = &mut v.value {
                if let Some((n, Some(_))) = super::placeholder(p) {
                    *p = format!("${n}");
                }
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    e
}

/// What a body reads: the names of its tables and views (and its FROM
/// items' aliases), and the tables' and views' columns' names.
#[derive(Default)]
struct Read {
    relations: std::collections::HashSet<String>,
    columns: std::collections::HashSet<String>,
}

/// The tables and views `q` reads, and their column names.
fn read_columns(cat: &Catalog, q: &ast::Query) -> Read {
    let mut out = Read::default();
    let _ = ast::visit_relations(q, |name| {
        if let Ok(n) = obj_name(name) {
            out.relations.insert(n.name.clone());
            match cat.relation(&n) {
                Ok(Some(crate::catalog::Relation::Table(t))) => {
                    out.columns.extend(t.columns.iter().map(|c| c.name.clone()))
                }
                Ok(Some(crate::catalog::Relation::View(v))) => {
                    out.columns.extend(v.columns.iter().cloned())
                }
                _ => {}
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    /// The FROM items' aliases, which name relations too.
    struct Aliases<'a>(&'a mut std::collections::HashSet<String>);
    impl ast::Visitor for Aliases<'_> {
        type Break = ();
        fn pre_visit_table_factor(&mut self, f: &ast::TableFactor) -> std::ops::ControlFlow<()> {
            use ast::TableFactor as F;
            let alias = match f {
                F::Table { alias, .. }
                | F::Derived { alias, .. }
                | F::Function { alias, .. }
                | F::TableFunction { alias, .. }
                | F::UNNEST { alias, .. }
                | F::NestedJoin { alias, .. } => alias.as_ref(),
                _ => None,
            };
            if let Some(a) = alias {
                self.0.insert(super::ident(&a.name));
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let _ = ast::Visit::visit(q, &mut Aliases(&mut out.relations));
    out
}

/// The one expression of a body that is `SELECT expr` and nothing else,
/// with no subquery and no aggregate.
fn simple_expression(q: &ast::Query) -> Option<ast::Expr> {
    if q.with.is_some() || q.order_by.is_some() || q.limit_clause.is_some() || q.fetch.is_some() {
        return None;
    }
    let ast::SetExpr::Select(s) = &*q.body else { return None };
    let plain = s.from.is_empty()
        && s.selection.is_none()
        && s.having.is_none()
        && s.distinct.is_none()
        && matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty());
    let [item] = s.projection.as_slice() else { return None };
    let e = match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
        _ => return None,
    };
    if !plain || contains_query(e) || contains_aggregate(e) {
        return None;
    }
    Some(e.clone())
}

fn contains_query(e: &ast::Expr) -> bool {
    use sqlparser::ast::Visit;
    struct Q;
    impl ast::Visitor for Q {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<()> {
            std::ops::ControlFlow::Break(())
        }
    }
    e.visit(&mut Q).is_break()
}

/// `CASE WHEN a IS NULL OR ... THEN NULL ELSE e END` for a STRICT
/// function with arguments `args`.
fn strict(def: &FunctionDef, args: &[ast::Expr], e: ast::Expr) -> ast::Expr {
    match any_null(def, args) {
        Some(cond) => ast::Expr::Case {
            case_token: sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
            end_token: sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
            operand: None,
            conditions: vec![ast::CaseWhen {
                condition: cond,
                result: ast::Expr::value(ast::Value::Null),
            }],
            else_result: Some(Box::new(e)),
        },
        None => e,
    }
}

/// `a IS NULL OR ...` over a STRICT function's arguments (None if the
/// function is not strict or takes none).
fn any_null(def: &FunctionDef, args: &[ast::Expr]) -> Option<ast::Expr> {
    if !def.strict {
        return None;
    }
    let mut cond: Option<ast::Expr> = None;
    for a in args {
        let test = ast::Expr::IsNull(Box::new(ast::Expr::Nested(Box::new(a.clone()))));
        cond = Some(match cond {
            None => test,
            Some(c) => ast::Expr::BinaryOp {
                left: Box::new(c),
                op: ast::BinaryOperator::Or,
                right: Box::new(test),
            },
        });
    }
    cond
}

/// The body with its parameters read from a one-row derived table of the
/// arguments (`casted`), put first in the FROM of each of its SELECTs (and
/// its CTEs'); a `*` there becomes each of its own items' `.*`.
fn body_with_args(cat: &Catalog, def: &FunctionDef, casted: &[ast::Expr]) -> Result<ast::Query> {
    let mut body = body_query(def)?;
    if casted.is_empty() {
        return Ok(body);
    }
    let read = read_columns(cat, &body);
    // LIMIT and OFFSET read no columns: they get the arguments themselves.
    let none = Read::default();
    let mut direct = Params { def, args: Some(casted), read: &none };
    if let Some(ast::LimitClause::LimitOffset { limit, offset, .. }) = &mut body.limit_clause {
        let _ = limit.visit(&mut direct);
        let _ = offset.visit(&mut direct);
    }
    let _ = body.visit(&mut Params { def, args: None, read: &read });
    let items: Vec<String> = casted
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{a} AS {}", ident(&param_column(i))))
        .collect();
    let text = format!("SELECT 1 FROM (SELECT {}) AS {}", items.join(", "), ident(&def.name));
    let q = crate::parse::query_text(&text).map_err(internal)?;
    let ast::SetExpr::Select(s) = *q.body else { bail!(InternalError, "not a select") };
    let Some(item) = s.from.into_iter().next() else { bail!(InternalError, "no FROM") };
    inject(&mut body.body, &item)?;
    // A CTE's query reads the parameters too.
    if let Some(with) = &mut body.with {
        for cte in &mut with.cte_tables {
            inject(&mut cte.query.body, &item)?;
        }
    }
    Ok(body)
}

fn inject(body: &mut ast::SetExpr, item: &ast::TableWithJoins) -> Result<()> {
    match body {
        ast::SetExpr::Select(s) => {
            let mut own = Vec::new();
            for twj in &s.from {
                item_names(&twj.relation, &mut own);
                for j in &twj.joins {
                    item_names(&j.relation, &mut own);
                }
            }
            let mut projection = Vec::with_capacity(s.projection.len());
            for p in std::mem::take(&mut s.projection) {
                match p {
                    ast::SelectItem::Wildcard(opts) => {
                        for n in &own {
                            projection.push(ast::SelectItem::QualifiedWildcard(
                                ast::SelectItemQualifiedWildcardKind::ObjectName(n.clone()),
                                opts.clone(),
                            ));
                        }
                    }
                    other => projection.push(other),
                }
            }
            s.projection = projection;
            s.from.insert(0, item.clone());
            Ok(())
        }
        ast::SetExpr::SetOperation { left, right, .. } => {
            inject(left, item)?;
            inject(right, item)
        }
        ast::SetExpr::Query(q) => inject(&mut q.body, item),
        _ => bail!(FeatureNotSupported, "this form of SQL function body is not supported yet"),
    }
}

/// The names `.*` of a FROM item takes (each table of a join).
fn item_names(f: &ast::TableFactor, out: &mut Vec<ast::ObjectName>) {
    match f {
        ast::TableFactor::Table { name, alias, .. } => out.push(match alias {
            Some(a) => ast::ObjectName::from(vec![a.name.clone()]),
            None => name.clone(),
        }),
        ast::TableFactor::Derived { alias: Some(a), .. } => {
            out.push(ast::ObjectName::from(vec![a.name.clone()]))
        }
        ast::TableFactor::NestedJoin { table_with_joins, .. } => {
            item_names(&table_with_joins.relation, out);
            for j in &table_with_joins.joins {
                item_names(&j.relation, out);
            }
        }
        _ => {}
    }
}

/// The arguments cast to their parameters' types.
fn casted(def: &FunctionDef, args: &[ast::Expr]) -> Result<Vec<ast::Expr>> {
    args.iter().zip(&def.args).map(|(a, p)| cast(a.clone(), &p.type_sql)).collect()
}

impl Binder<'_> {
    /// The expression a scalar call stands for (see the module comment).
    fn expand_scalar(&self, def: &FunctionDef, args: Vec<ast::Expr>) -> Result<ast::Expr> {
        let FunctionReturns::Value(_, result_sql) = &def.returns else {
            bail!(InternalError, "{} returns rows", def.name)
        };
        let casted = casted(def, &args)?;
        let body = body_query(def)?;
        if let Some(mut e) = simple_expression(&body) {
            let none = Read::default();
            let _ = e.visit(&mut Params { def, args: Some(&casted), read: &none });
            return Ok(strict(def, &casted, cast(e, result_sql)?));
        }
        let mut body = body_with_args(self.catalog, def, &casted)?;
        first_row(&mut body);
        let value = cast(ast::Expr::Subquery(Box::new(body)), result_sql)?;
        Ok(strict(def, &casted, value))
    }

    /// The query a call in FROM stands for (see the module comment).
    fn expand_rows(&self, def: &FunctionDef, args: Vec<ast::Expr>) -> Result<ast::Query> {
        let casted = casted(def, &args)?;
        let mut body = body_with_args(self.catalog, def, &casted)?;
        let columns: Vec<(String, String)> = match &def.returns {
            FunctionReturns::Value(_, t) => {
                first_row(&mut body);
                vec![(def.name.clone(), t.clone())]
            }
            FunctionReturns::SetOf(_, t) => vec![(def.name.clone(), t.clone())],
            FunctionReturns::Rows { columns, single, .. } => {
                if *single {
                    first_row(&mut body);
                }
                columns.iter().map(|(n, _, t)| (n.clone(), t.clone())).collect()
            }
        };
        let inner: Vec<String> = (1..=columns.len()).map(|i| format!("c{i}")).collect();
        let mut list = Vec::with_capacity(columns.len());
        for (i, (name, t)) in columns.iter().enumerate() {
            let col = ast::Expr::CompoundIdentifier(vec![ident(BODY), ident(&inner[i])]);
            list.push(format!("{} AS {}", cast(col, t)?, ident(name)));
        }
        let from = format!("({body}) AS {}({})", ident(BODY), inner.join(", "));
        let strict = any_null(def, &casted).map(|cond| format!("NOT ({cond})"));
        let select = match def.returns_set() {
            true => {
                let filter = strict.map(|c| format!(" WHERE {c}")).unwrap_or_default();
                format!("SELECT {} FROM {from}{filter}", list.join(", "))
            }
            // A function that returns one value or row is one row in
            // FROM, of NULLs where the body returned none (or a strict
            // function was given a NULL).
            false => format!(
                "SELECT {} FROM (SELECT 1) AS {}(one) LEFT JOIN {from} ON {}",
                list.join(", "),
                ident(ONE),
                strict.unwrap_or_else(|| "true".into())
            ),
        };
        crate::parse::query_text(&select).map_err(internal)
    }
}

/// No rows of a FROM function's declared columns: how a view's definition
/// sees the function without reading its body.
fn signature_rows(def: &FunctionDef) -> Result<ast::Query> {
    let columns: Vec<(String, String)> = match &def.returns {
        FunctionReturns::Value(_, t) | FunctionReturns::SetOf(_, t) => {
            vec![(def.name.clone(), t.clone())]
        }
        FunctionReturns::Rows { columns, .. } => {
            columns.iter().map(|(n, _, t)| (n.clone(), t.clone())).collect()
        }
    };
    let mut list = Vec::with_capacity(columns.len());
    for (name, t) in &columns {
        list.push(format!("{} AS {}", cast(ast::Expr::value(ast::Value::Null), t)?, ident(name)));
    }
    crate::parse::query_text(&format!("SELECT {} LIMIT 0", list.join(", "))).map_err(internal)
}

/// Limits a scalar function's body to its first row, unless it has a
/// LIMIT of its own.
fn first_row(q: &mut ast::Query) {
    if q.limit_clause.is_none() && q.fetch.is_none() {
        q.limit_clause = Some(ast::LimitClause::LimitOffset {
            limit: Some(ast::Expr::value(ast::Value::Number("1".into(), false))),
            offset: None,
            limit_by: Vec::new(),
        });
    }
}

/// The body's output columns' types, bound with each parameter a NULL of
/// its type (CREATE FUNCTION's check; no row is read).
pub(crate) fn body_types(cat: &Catalog, def: &FunctionDef) -> Result<Vec<DataType>> {
    let nulls: Vec<ast::Expr> = def
        .args
        .iter()
        .map(|a| cast(ast::Expr::value(ast::Value::Null), &a.type_sql))
        .collect::<Result<_>>()?;
    let body = body_with_args(cat, def, &nulls)?;
    let (_, cols) = Binder::new(cat, vec![]).query(&body)?;
    Ok(cols.into_iter().map(|c| c.ty).collect())
}
