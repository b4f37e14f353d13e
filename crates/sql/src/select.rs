//! Planning of queries: FROM, WHERE, GROUP BY, HAVING, select list,
//! ORDER BY, LIMIT/OFFSET, and the choice of access path for table scans.
//!
//! The order of operators follows SQL's logical order: scan/join, filter,
//! aggregate, having, sort (on pre-projection rows, so ORDER BY may use
//! columns that are not selected), project, distinct, limit.

use std::sync::Arc;

use sqlparser::ast;
use sqltypes::{DataType, Value};

use crate::bind::{self, AggState, Binder, CorrCtx, Reach, Scope, ScopeCol};
use crate::catalog::{Relation, TableDef};
use crate::error::Result;
use crate::expr::{and_all, conjuncts, BinOp, Expr};
use crate::plan::{Access, Column, Correlated, JoinKind, KeyBound, Plan, Scan, SetOpKind, SortKey};
use crate::system::SystemTable;
use crate::window::WINDOW_BASE;

/// Filter pushdown and access-path choice.
mod access;
// Functions in FROM (generate_series, unnest, generate_subscripts).
pub mod functions;
/// ROLLUP, CUBE and GROUPING SETS.
pub mod grouping;
/// Join conditions and hash joins.
mod joins;
/// ORDER BY and LIMIT served by key order.
mod order;
// Set-returning functions in the select list.
pub(crate) mod srf;
/// Views and WITH RECURSIVE.
mod with;

use crate::{bail, err};
use access::filter_with_subqueries;
pub use access::{choose_access, key_column, pins_primary_key_only, push_filter};
pub use joins::{fits_class, hash_class, hash_key, hash_keys, value_class, HashKeys};
use with::{plan_recursive, plan_view};

/// Plans a query expression.
pub fn plan_query(b: &mut Binder<'_>, q: &ast::Query) -> Result<(Plan, Vec<Column>)> {
    plan_query_with(b, q, true)
}

/// [`plan_query`] of `q` whose WITH queries the caller has put in scope.
pub fn plan_after_with(b: &mut Binder<'_>, q: &ast::Query) -> Result<(Plan, Vec<Column>)> {
    plan_query_with(b, q, false)
}

/// [`plan_query`], with `q`'s WITH queries (`ctes`) or without them.
fn plan_query_with(b: &mut Binder<'_>, q: &ast::Query, ctes: bool) -> Result<(Plan, Vec<Column>)> {
    // An enclosing select's locking clause does not reach into this query.
    let keyed = b.keyed.take();
    b.subq_marks.push(b.subqueries.len());
    let r = plan_query_inner(b, q, ctes);
    b.keyed = keyed;
    let mark = b.subq_marks.pop().unwrap_or(0);
    let (plan, cols) = r?;
    if b.subqueries.len() > mark {
        let init: Vec<_> = b.subqueries.drain(mark..).collect();
        return Ok((Plan::Init(init, Box::new(plan)), cols));
    }
    Ok((plan, cols))
}

/// Plans WITH query `cte` (of a WITH RECURSIVE when `recursive`) and
/// puts it in scope. One that writes is 0A000 here: only a statement's
/// top-level WITH may write (the planner's `plan_with`).
pub fn plan_cte(b: &mut Binder<'_>, recursive: bool, cte: &ast::Cte) -> Result<()> {
    let name = bind::ident(&cte.alias.name);
    if crate::parse::written(&cte.query.body).is_some() {
        bail!(
            FeatureNotSupported,
            "WITH clause containing a data-modifying statement must be at the top level"
        );
    }
    let planned = match cte.query.body.as_ref() {
        ast::SetExpr::SetOperation { op: ast::SetOperator::Union, .. } if recursive => {
            plan_recursive(b, &name, &cte.alias.columns, &cte.query)?
        }
        _ => None,
    };
    let (plan, cols) = match planned {
        Some(r) => r,
        None => {
            let (plan, mut cols) = plan_query(b, &cte.query)?;
            name_cte_columns(&name, &mut cols, &cte.alias.columns)?;
            (plan, cols)
        }
    };
    b.ctes.push((name, plan, cols));
    Ok(())
}

/// Names WITH query `name`'s columns `cols` by its column list `aliases`
/// (42P10 when it has more names than columns).
pub fn name_cte_columns(
    name: &str,
    cols: &mut [Column],
    aliases: &[ast::TableAliasColumnDef],
) -> Result<()> {
    if aliases.len() > cols.len() {
        bail!(
            InvalidColumnReference,
            "WITH query \"{name}\" has {} columns available but {} columns specified",
            cols.len(),
            aliases.len()
        );
    }
    for (c, alias) in cols.iter_mut().zip(aliases) {
        c.name = bind::ident(&alias.name);
    }
    Ok(())
}

fn plan_query_inner(b: &mut Binder<'_>, q: &ast::Query, ctes: bool) -> Result<(Plan, Vec<Column>)> {
    let ctes_before = b.ctes.len();
    let r = plan_with_ctes(b, q, ctes);
    b.ctes.truncate(ctes_before);
    r
}

fn plan_with_ctes(b: &mut Binder<'_>, q: &ast::Query, ctes: bool) -> Result<(Plan, Vec<Column>)> {
    if let Some(with) = q.with.as_ref().filter(|_| ctes) {
        for cte in &with.cte_tables {
            plan_cte(b, with.recursive, cte)?;
        }
    }
    if let (Some(l), false) = (q.locks.first(), matches!(q.body.as_ref(), ast::SetExpr::Select(_)))
    {
        match q.body.as_ref() {
            ast::SetExpr::Values(_) => {
                bail!(FeatureNotSupported, "{} cannot be applied to VALUES", lock_name(l))
            }
            _ => bail!(
                FeatureNotSupported,
                "{} is not allowed with UNION/INTERSECT/EXCEPT",
                lock_name(l)
            ),
        }
    }
    let (plan, cols) = match q.body.as_ref() {
        ast::SetExpr::Select(s) => {
            b.row_locks = q.locks.clone();
            plan_select(b, s, q.order_by.as_ref())?
        }
        ast::SetExpr::Values(v) => {
            let (p, c) = plan_values(b, v)?;
            let p = order_simple(b, p, &c, q.order_by.as_ref())?;
            (p, c)
        }
        ast::SetExpr::Query(inner) => {
            let (p, c) = plan_query(b, inner)?;
            (order_simple(b, p, &c, q.order_by.as_ref())?, c)
        }
        ast::SetExpr::SetOperation { .. } => {
            let (p, c) = plan_set_expr(b, q.body.as_ref())?;
            (order_simple(b, p, &c, q.order_by.as_ref())?, c)
        }
        other => bail!(FeatureNotSupported, "query form not supported yet: {other}"),
    };
    let mut plan = limit(b, plan, q)?;
    // LockRows locks no more rows than the LIMIT lets through.
    if let Plan::Limit(inner, l, o) = &mut plan {
        if let Plan::Project(p, _) = inner.as_mut() {
            if let Plan::LockRows(_, spec) = p.as_mut() {
                (spec.limit, spec.offset) = (l.clone(), o.clone());
            }
        }
    }
    order::use_key_order(&mut plan);
    Ok((plan, cols))
}

/// `FOR UPDATE` or `FOR SHARE`, as PostgreSQL's errors name a clause.
fn lock_name(l: &ast::LockClause) -> String {
    format!("FOR {}", l.lock_type)
}

/// Which tables of a locking select's FROM scan keyed (see rowlock.rs).
#[derive(Debug, Default)]
pub struct KeyedScans {
    /// Each clause's OF name (None: the clause covers every table).
    of: Vec<Option<String>>,
    /// Tables scanned keyed: (qualifier, table name).
    tables: Vec<(String, String)>,
    /// Views and subqueries met in FROM (their rows cannot be locked).
    others: Vec<String>,
}

impl KeyedScans {
    fn new(clauses: &[ast::LockClause]) -> Result<KeyedScans> {
        let of = clauses.iter().map(|c| c.of.as_ref().map(bind::object_name).transpose());
        Ok(KeyedScans { of: of.collect::<Result<_>>()?, ..KeyedScans::default() })
    }

    /// Whether a clause covers the FROM item read as `qualifier`.
    fn wants(&self, qualifier: &str) -> bool {
        self.of.iter().any(|n| n.as_deref().is_none_or(|n| n == qualifier))
    }
}

/// The LockRows node for `clauses` over rows of `scope`, whose keyed
/// tables `keyed` lists.
fn plan_lock_rows(
    plan: Plan,
    scope: &Scope,
    clauses: &[ast::LockClause],
    keyed: KeyedScans,
) -> Result<Plan> {
    use crate::rowlock::{LockTarget, WaitPolicy};
    for (c, of) in clauses.iter().zip(&keyed.of) {
        let Some(name) = of else {
            if let Some(other) = keyed.others.first() {
                bail!(
                    FeatureNotSupported,
                    "{} of a view or subquery (\"{other}\") is not supported",
                    lock_name(c)
                );
            }
            continue;
        };
        if keyed.others.contains(name) {
            bail!(FeatureNotSupported, "{} of a view or subquery is not supported", lock_name(c));
        }
        if !keyed.tables.iter().any(|(q, _)| q == name) {
            bail!(
                UndefinedTable,
                "relation \"{name}\" in {} clause not found in FROM clause",
                lock_name(c)
            );
        }
    }
    let mut targets = Vec::new();
    for (i, col) in scope.cols.iter().enumerate() {
        let Some(q) = col.qualifier.as_deref().filter(|_| col.name == crate::rowlock::ROW_KEY)
        else {
            continue;
        };
        let mine: Vec<&ast::LockClause> = clauses
            .iter()
            .zip(&keyed.of)
            .filter(|(_, of)| of.as_deref().is_none_or(|n| n == q))
            .map(|(c, _)| c)
            .collect();
        let Some(first) = mine.first() else { continue };
        let table = keyed.tables.iter().find(|(k, _)| k == q).map(|(_, t)| t.clone());
        let wait = match first.nonblock {
            None => WaitPolicy::Wait,
            Some(ast::NonBlock::Nowait) => WaitPolicy::NoWait,
            Some(ast::NonBlock::SkipLocked) => WaitPolicy::SkipLocked,
        };
        targets.push(LockTarget {
            key_col: i,
            table: table.unwrap_or_else(|| q.to_string()),
            shared: mine.iter().all(|c| c.lock_type == ast::LockType::Share),
            wait,
        });
    }
    if targets.is_empty() {
        return Ok(plan);
    }
    let spec = crate::rowlock::RowLocking { targets, limit: None, offset: None };
    Ok(Plan::LockRows(Box::new(plan), spec))
}

/// Places the query's LIMIT / OFFSET / FETCH FIRST over its plan.
fn limit(b: &mut Binder<'_>, plan: Plan, q: &ast::Query) -> Result<Plan> {
    let (mut lim, off) = match &q.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            (limit.as_ref(), offset.as_ref().map(|o| &o.value))
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => (Some(limit), Some(offset)),
    };
    let one = ast::Expr::value(ast::Value::Number("1".into(), false));
    let mut ties = false;
    if let Some(f) = &q.fetch {
        if lim.is_some() {
            bail!(SyntaxError, "syntax error at or near \"FETCH\"");
        }
        if f.percent {
            bail!(SyntaxError, "syntax error at or near \"PERCENT\"");
        }
        // FETCH FIRST ROW ONLY takes one row.
        lim = Some(f.quantity.as_ref().unwrap_or(&one));
        ties = f.with_ties;
    }
    if lim.is_none() && off.is_none() {
        return Ok(plan);
    }
    let empty = Scope::default();
    let mut bind_count = |e: Option<&ast::Expr>| -> Result<Option<Expr>> {
        match e {
            None => Ok(None),
            Some(e) => {
                let (x, t) = b.expr(e, &empty)?;
                Ok(Some(b.coerce(x, &t, &DataType::Int8)?))
            }
        }
    };
    let l = bind_count(lim)?;
    let o = bind_count(off)?;
    match (ties, l) {
        (true, Some(count)) => {
            if q.order_by.is_none() {
                bail!(SyntaxError, "WITH TIES cannot be specified without ORDER BY clause");
            }
            with_ties(plan, count, o)
        }
        (_, l) => Ok(Plan::Limit(Box::new(plan), l, o)),
    }
}

/// Places FETCH FIRST ... WITH TIES right over the query's sort, where the
/// ORDER BY keys can be evaluated: under the projection, or over a SELECT
/// DISTINCT with the keys read from its output columns.
fn with_ties(plan: Plan, count: Expr, offset: Option<Expr>) -> Result<Plan> {
    /// The sort keys under operators that keep its rows' shape.
    fn sort_keys(p: &Plan) -> Option<&[SortKey]> {
        match p {
            Plan::Sort(_, keys) => Some(keys),
            Plan::DistinctOn(i, _) | Plan::LockRows(i, _) => sort_keys(i),
            _ => None,
        }
    }
    let unsupported = || err!(FeatureNotSupported, "WITH TIES is not supported for this query yet");
    match plan {
        Plan::Project(input, exprs) => {
            let keys = sort_keys(&input).ok_or_else(unsupported)?.to_vec();
            let tied = Plan::LimitTies(input, count, offset, keys);
            Ok(Plan::Project(Box::new(tied), exprs))
        }
        Plan::Distinct(input) => {
            // SELECT DISTINCT's ORDER BY keys are among its outputs.
            let Plan::Project(sorted, exprs) = input.as_ref() else { return Err(unsupported()) };
            let keys = sort_keys(sorted).ok_or_else(unsupported)?;
            let mut out = Vec::with_capacity(keys.len());
            for k in keys {
                let i = exprs.iter().position(|e| *e == k.expr).ok_or_else(unsupported)?;
                out.push(SortKey { expr: Expr::Column(i), ..k.clone() });
            }
            Ok(Plan::LimitTies(Box::new(Plan::Distinct(input)), count, offset, out))
        }
        p => {
            let keys = sort_keys(&p).ok_or_else(unsupported)?.to_vec();
            Ok(Plan::LimitTies(Box::new(p), count, offset, keys))
        }
    }
}

/// Plans one side of a set operation (or a whole one).
fn plan_set_expr(b: &mut Binder<'_>, e: &ast::SetExpr) -> Result<(Plan, Vec<Column>)> {
    match e {
        ast::SetExpr::Select(s) => plan_select(b, s, None),
        ast::SetExpr::Values(v) => plan_values(b, v),
        ast::SetExpr::Query(q) => plan_query(b, q),
        ast::SetExpr::SetOperation { left, op, set_quantifier, right } => {
            let kind = match op {
                ast::SetOperator::Union => SetOpKind::Union,
                ast::SetOperator::Intersect => SetOpKind::Intersect,
                ast::SetOperator::Except | ast::SetOperator::Minus => SetOpKind::Except,
            };
            let all = match set_quantifier {
                ast::SetQuantifier::All => true,
                ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
                other => bail!(FeatureNotSupported, "set quantifier {other} is not supported"),
            };
            let leaf = |e: &ast::SetExpr| matches!(e, ast::SetExpr::Select(_));
            b.set_op_leaf = leaf(left);
            let (lp, lc) = plan_set_expr(b, left)?;
            b.set_op_leaf = leaf(right);
            let (rp, rc) = plan_set_expr(b, right)?;
            if lc.len() != rc.len() {
                let what = format!("{kind:?}").to_uppercase();
                bail!(SyntaxError, "each {what} query must have the same number of columns");
            }
            // Both sides are converted to the common column types.
            let mut cols = lc.clone();
            let mut lx = Vec::new();
            let mut rx = Vec::new();
            for (i, (l, r)) in lc.iter().zip(&rc).enumerate() {
                let Some(t) = sqltypes::cast::common_type(&l.ty, &r.ty) else {
                    let what = format!("{kind:?}").to_uppercase();
                    bail!(DatatypeMismatch, "{what} types {} and {} cannot be matched", l.ty, r.ty);
                };
                let t = if t == DataType::Unknown { DataType::Text } else { t };
                lx.push(b.coerce(Expr::Column(i), &l.ty, &t)?);
                rx.push(b.coerce(Expr::Column(i), &r.ty, &t)?);
                cols[i].ty = t;
            }
            let lp = Plan::Project(Box::new(lp), lx);
            let rp = Plan::Project(Box::new(rp), rx);
            Ok((Plan::SetOp(kind, all, Box::new(lp), Box::new(rp)), cols))
        }
        other => bail!(FeatureNotSupported, "query form not supported yet: {other}"),
    }
}

/// Plans VALUES (...), (...) as a standalone query.
pub fn plan_values(b: &mut Binder<'_>, v: &ast::Values) -> Result<(Plan, Vec<Column>)> {
    let empty = Scope::default();
    let mut rows = Vec::new();
    let mut types: Vec<DataType> = Vec::new();
    let mut raw = Vec::new();
    for row in &v.rows {
        let mut r = Vec::new();
        for (i, e) in row.content.iter().enumerate() {
            let (x, t) = b.expr(e, &empty)?;
            if types.len() <= i {
                types.push(t.clone());
            } else if let Some(ct) = sqltypes::cast::common_type(&types[i], &t) {
                types[i] = ct;
            } else {
                bail!(DatatypeMismatch, "VALUES types {} and {t} cannot be matched", types[i]);
            }
            r.push((x, t));
        }
        if !raw.is_empty() && r.len() != types.len() {
            bail!(SyntaxError, "VALUES lists must all be the same length");
        }
        raw.push(r);
    }
    for t in types.iter_mut() {
        if *t == DataType::Unknown {
            *t = DataType::Text;
        }
    }
    for r in raw {
        let mut out = Vec::new();
        for (i, (x, t)) in r.into_iter().enumerate() {
            out.push(b.coerce(x, &t, &types[i])?);
        }
        rows.push(out);
    }
    let cols = types
        .iter()
        .enumerate()
        .map(|(i, t)| Column::computed(format!("column{}", i + 1), t.clone()))
        .collect();
    Ok((Plan::Values(rows), cols))
}

fn order_simple(
    b: &mut Binder<'_>,
    plan: Plan,
    cols: &[Column],
    order: Option<&ast::OrderBy>,
) -> Result<Plan> {
    let Some(order) = order else { return Ok(plan) };
    let scope = Scope {
        cols: cols
            .iter()
            .map(|c| ScopeCol {
                qualifier: None,
                name: c.name.clone(),
                ty: c.ty.clone(),
                table_oid: 0,
                column_id: 0,
                reach: Reach::Full,
            })
            .collect(),
    };
    let mut keys = Vec::new();
    for o in order_exprs(order)? {
        let expr = match ordinal(&o.expr) {
            Some(n) if n >= 1 && n <= cols.len() => Expr::Column(n - 1),
            Some(n) => bail!(InvalidColumnReference, "ORDER BY position {n} is not in select list"),
            None => b.expr(&o.expr, &scope)?.0,
        };
        keys.push(sort_key(expr, o));
    }
    Ok(Plan::Sort(Box::new(plan), keys))
}

fn order_exprs(order: &ast::OrderBy) -> Result<&[ast::OrderByExpr]> {
    match &order.kind {
        ast::OrderByKind::Expressions(e) => Ok(e),
        ast::OrderByKind::All(_) => bail!(FeatureNotSupported, "ORDER BY ALL is not supported"),
    }
}

pub(crate) fn sort_key(expr: Expr, o: &ast::OrderByExpr) -> SortKey {
    let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
    SortKey { expr, desc, nulls_first: o.options.nulls_first.unwrap_or(desc) }
}

fn ordinal(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

/// One select-list entry after wildcard expansion.
enum Item<'a> {
    Expr(&'a ast::Expr, Option<String>),
    Column(usize),
}

fn plan_select(
    b: &mut Binder<'_>,
    s: &ast::Select,
    order: Option<&ast::OrderBy>,
) -> Result<(Plan, Vec<Column>)> {
    let keep_unknown = std::mem::take(&mut b.set_op_leaf);
    let locks = std::mem::take(&mut b.row_locks);
    if let Some(l) = locks.first() {
        refuse_locking(s, l)?;
    }
    // Set-returning calls in the select list run as a hidden FROM item.
    let rewritten;
    let (s, srf_calls) = match srf::extract(&s.projection, &|n| b.is_user_srf(n)) {
        Some((projection, calls)) => {
            rewritten = ast::Select { projection, ..s.clone() };
            (&rewritten, calls)
        }
        None => (s, Vec::new()),
    };
    // Correlated subqueries and window calls of an enclosing query's clause
    // cannot be ours.
    let enclosing_corr = b.corr.take();
    let enclosing_win = b.win.take();
    let named = crate::window::resolve_window_clause(&s.named_window)?;
    let enclosing_named = std::mem::replace(&mut b.named_windows, named);
    if !locks.is_empty() {
        b.keyed = Some(KeyedScans::new(&locks)?);
    }
    let from = plan_from(b, &s.from);
    let keyed = b.keyed.take();
    let (mut plan, mut scope) = from?;
    if !srf_calls.is_empty() {
        let grouped = !matches!(&s.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty())
            || s.having.is_some()
            || s.projection.iter().any(|i| match i {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => bind::contains_aggregate(e),
                _ => false,
            });
        if grouped {
            bail!(
                FeatureNotSupported,
                "set-returning functions in the select list of a grouped query are not supported yet"
            );
        }
        (plan, scope) = lateral(b, (plan, scope), None, |b| {
            functions::plan_zipped(b, &srf_calls, srf::QUALIFIER)
        })?;
    }
    let width = scope.cols.len();
    if let Some(w) = &s.selection {
        if bind::contains_grouping(w) {
            bail!(GroupingError, "grouping operations are not allowed in WHERE");
        }
        if bind::contains_aggregate(w) {
            bail!(GroupingError, "aggregate functions are not allowed in WHERE");
        }
        if contains_window(w) {
            bail!(WindowingError, "window functions are not allowed in WHERE");
        }
        let mark = b.correlated.len();
        b.corr = Some(CorrCtx { mark, width });
        let bound = b.expr(w, &scope);
        b.corr = None;
        let (pred, t) = bound?;
        let pred = b.coerce(pred, &t, &DataType::Bool)?;
        let subs = b.correlated.split_off(mark);
        plan = filter_with_subqueries(plan, pred, subs, &scope.types());
    }
    // `(x).*` items: x's fields, each as `(x).field`.
    let mut fields_of = Vec::new();
    for item in &s.projection {
        if let ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } =
            item
        {
            if let Some(x) = bind::marker_arg(e, crate::parse::FIELDS) {
                fields_of.push(record_fields(b, x, &scope)?);
            }
        }
    }
    let mut fields_of = fields_of.iter();
    // Expand the select list.
    let mut items = Vec::new();
    for item in &s.projection {
        match item {
            // (PostgreSQL ignores an alias of `(x).*`.)
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }
                if bind::marker_arg(e, crate::parse::FIELDS).is_some() =>
            {
                let fields = fields_of.next().map(Vec::as_slice).unwrap_or_default();
                items.extend(fields.iter().map(|f| Item::Expr(f, None)));
            }
            ast::SelectItem::UnnamedExpr(e) => items.push(Item::Expr(e, None)),
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                items.push(Item::Expr(expr, Some(bind::ident(alias))))
            }
            ast::SelectItem::Wildcard(opts) => {
                if let Some(alias) = &opts.opt_alias {
                    // PostgreSQL does not allow `* alias`.
                    bail!(SyntaxError, "syntax error at or near \"{}\"", alias.value);
                }
                let visible: Vec<usize> = (0..scope.cols.len())
                    .filter(|&i| {
                        let c = &scope.cols[i];
                        c.reach == Reach::Full && c.qualifier.as_deref() != Some(srf::QUALIFIER)
                    })
                    .collect();
                if visible.is_empty() {
                    bail!(SyntaxError, "SELECT * with no tables specified is not valid");
                }
                trace_wildcard(b, &opts.wildcard_token, &scope, &visible);
                items.extend(visible.into_iter().map(Item::Column));
            }
            ast::SelectItem::QualifiedWildcard(kind, opts) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => bind::object_name(n)?,
                    _ => bail!(FeatureNotSupported, "qualified wildcard not supported"),
                };
                let matching: Vec<usize> = (0..scope.cols.len())
                    .filter(|&i| {
                        let c = &scope.cols[i];
                        c.reach != Reach::System && c.qualifier.as_deref() == Some(&q)
                    })
                    .collect();
                if matching.is_empty() {
                    bail!(UndefinedTable, "missing FROM-clause entry for table \"{q}\"");
                }
                trace_wildcard(b, &opts.wildcard_token, &scope, &matching);
                items.extend(matching.into_iter().map(Item::Column));
            }
            other => bail!(FeatureNotSupported, "select item not supported: {other}"),
        }
    }
    let group_by: &[ast::Expr] = match &s.group_by {
        ast::GroupByExpr::Expressions(e, _) => e,
        ast::GroupByExpr::All(_) => bail!(FeatureNotSupported, "GROUP BY ALL is not supported"),
    };
    let has_agg = !group_by.is_empty()
        || s.having.is_some()
        || items.iter().any(|i| matches!(i, Item::Expr(e, _) if bind::contains_aggregate(e)));

    let mut outputs: Vec<(Expr, Column)> = Vec::new();
    let mut keys = Vec::new();
    // DISTINCT ON expressions, resolved like ORDER BY items.
    let distinct_on: &[ast::Expr] = match &s.distinct {
        Some(ast::Distinct::On(exprs)) => exprs,
        _ => &[],
    };
    let mut on: Vec<Expr> = Vec::new();
    if has_agg {
        let mut state = AggState::default();
        let grouping = grouping::expand(group_by)?;
        // Where each expression of the clause went among the bound ones
        // (two may bind alike, as `a` and `t.a`).
        let mut bound_at = Vec::with_capacity(grouping.exprs.len());
        for g in &grouping.exprs {
            // GROUP BY may name a select-list position or output alias.
            let resolved = match ordinal(g) {
                Some(n) => match items.get(n.wrapping_sub(1)) {
                    Some(Item::Expr(e, _)) => (*e).clone(),
                    Some(Item::Column(c)) => {
                        ast::Expr::Identifier(ast::Ident::new(scope.cols[*c].name.clone()))
                    }
                    None => {
                        bail!(InvalidColumnReference, "GROUP BY position {n} is not in select list")
                    }
                },
                None => g.clone(),
            };
            let bound = b.expr(&resolved, &scope)?;
            match state.group.iter().position(|x| x.0 == bound.0) {
                Some(p) => bound_at.push(p),
                None => {
                    bound_at.push(state.group.len());
                    state.group_asts.push(resolved);
                    state.group.push(bound);
                }
            }
        }
        state.sets = grouping.sets.map(|sets| {
            let at =
                |set: Vec<usize>| grouping::sorted(set.into_iter().map(|i| bound_at[i]).collect());
            sets.into_iter().map(at).collect()
        });
        if !state.group.is_empty() {
            state.add_dependent_columns(b.catalog, &scope);
        }
        // Correlated subqueries of the select list, HAVING and ORDER BY run
        // on the input rows, below the aggregation.
        let mark = b.correlated.len();
        b.corr = Some(CorrCtx { mark, width });
        // Window functions read the grouped rows (select list, ORDER BY).
        let wmark = b.windows.len();
        b.win = Some(wmark);
        for item in &items {
            outputs.push(match item {
                Item::Expr(e, alias) => {
                    let (x, t) = b.expr_in(e, &scope, &mut Some(&mut state))?;
                    (x, Column::computed(alias.clone().unwrap_or_else(|| derive_name(e)), t))
                }
                Item::Column(c) => {
                    // `*` of a grouped query: the column by its qualified
                    // name (grouped, or the error names it so).
                    let sc = &scope.cols[*c];
                    let name = ast::Ident::with_quote('"', sc.name.clone());
                    let e = match &sc.qualifier {
                        Some(q) => {
                            let q = ast::Ident::with_quote('"', q.clone());
                            ast::Expr::CompoundIdentifier(vec![q, name])
                        }
                        None => ast::Expr::Identifier(name),
                    };
                    let (x, t) = b.expr_in(&e, &scope, &mut Some(&mut state))?;
                    let (table_oid, column_id) = (sc.table_oid, sc.column_id);
                    (x, Column { name: sc.name.clone(), ty: t, table_oid, column_id })
                }
            });
        }
        let having = match &s.having {
            Some(h) => {
                if contains_window(h) {
                    bail!(WindowingError, "window functions are not allowed in HAVING");
                }
                let (x, t) = b.expr_in(h, &scope, &mut Some(&mut state))?;
                Some(b.coerce(x, &t, &DataType::Bool)?)
            }
            None => None,
        };
        if let Some(order) = order {
            for o in order_exprs(order)? {
                let expr = match order_target("ORDER BY", &o.expr, &outputs)? {
                    Some(x) => x,
                    None => b.expr_in(&o.expr, &scope, &mut Some(&mut state))?.0,
                };
                keys.push(sort_key(expr, o));
            }
        }
        for e in distinct_on {
            on.push(match order_target("DISTINCT ON", e, &outputs)? {
                Some(x) => x,
                None => b.expr_in(e, &scope, &mut Some(&mut state))?.0,
            });
        }
        b.corr = None;
        b.win = None;
        let subs = b.correlated.split_off(mark);
        if !subs.is_empty() {
            plan = Plan::Apply(Box::new(plan), subs);
        }
        // Window results go behind the group keys and the aggregates.
        let base = state.group.len() + state.aggs.len();
        let group: Vec<Expr> = state.group.into_iter().map(|(x, _)| x).collect();
        plan = Plan::Aggregate(Box::new(plan), group, state.aggs, state.sets);
        if let Some(h) = having {
            plan = Plan::Filter(Box::new(plan), h);
        }
        let calls = b.windows.split_off(wmark);
        if !calls.is_empty() {
            plan = place_windows(plan, calls, base, &mut outputs, &mut keys, &mut on);
        }
    } else {
        let mark = b.correlated.len();
        b.corr = Some(CorrCtx { mark, width });
        let wmark = b.windows.len();
        b.win = Some(wmark);
        for item in &items {
            outputs.push(match item {
                Item::Expr(e, alias) => {
                    let (x, t) = b.expr(e, &scope)?;
                    let t =
                        if t == DataType::Unknown && !keep_unknown { DataType::Text } else { t };
                    let mut col =
                        Column::computed(alias.clone().unwrap_or_else(|| derive_name(e)), t);
                    if let Some(sc) = x.as_column().and_then(|c| scope.cols.get(c)) {
                        col.table_oid = sc.table_oid;
                        col.column_id = sc.column_id;
                    }
                    (x, col)
                }
                Item::Column(c) => {
                    let sc = &scope.cols[*c];
                    (
                        Expr::Column(*c),
                        Column {
                            name: sc.name.clone(),
                            ty: sc.ty.clone(),
                            table_oid: sc.table_oid,
                            column_id: sc.column_id,
                        },
                    )
                }
            });
        }
        if let Some(order) = order {
            for o in order_exprs(order)? {
                let expr = match order_target("ORDER BY", &o.expr, &outputs)? {
                    Some(x) => x,
                    None => b.expr(&o.expr, &scope)?.0,
                };
                keys.push(sort_key(expr, o));
            }
        }
        for e in distinct_on {
            on.push(match order_target("DISTINCT ON", e, &outputs)? {
                Some(x) => x,
                None => b.expr(e, &scope)?.0,
            });
        }
        b.corr = None;
        b.win = None;
        let subs = b.correlated.split_off(mark);
        // Window results go behind the input and the subquery results.
        let base = width + subs.len();
        if !subs.is_empty() {
            plan = Plan::Apply(Box::new(plan), subs);
        }
        let calls = b.windows.split_off(wmark);
        if let (false, Some(l)) = (calls.is_empty(), locks.first()) {
            bail!(FeatureNotSupported, "{} is not allowed with window functions", lock_name(l));
        }
        if !calls.is_empty() {
            plan = place_windows(plan, calls, base, &mut outputs, &mut keys, &mut on);
        }
    }
    b.corr = enclosing_corr;
    b.win = enclosing_win;
    b.named_windows = enclosing_named;
    if !on.is_empty() && !keys.iter().take(on.len()).all(|k| on.contains(&k.expr)) {
        bail!(
            InvalidColumnReference,
            "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"
        );
    }
    if !keys.is_empty() {
        plan = Plan::Sort(Box::new(plan), keys);
    }
    if !on.is_empty() {
        plan = Plan::DistinctOn(Box::new(plan), on);
    }
    if let Some(keyed) = keyed {
        plan = plan_lock_rows(plan, &scope, &locks, keyed)?;
    }
    let (exprs, cols): (Vec<Expr>, Vec<Column>) = outputs.into_iter().unzip();
    plan = Plan::Project(Box::new(plan), exprs);
    if let Some(ast::Distinct::Distinct) = &s.distinct {
        plan = Plan::Distinct(Box::new(plan));
    }
    Ok((plan, cols))
}

/// PostgreSQL's refusals of a locking clause on a select whose rows are
/// not table rows (grouped, distinct, set-returning).
fn refuse_locking(s: &ast::Select, l: &ast::LockClause) -> Result<()> {
    let what = if s.distinct.is_some() {
        "DISTINCT clause"
    } else if !matches!(&s.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty()) {
        "GROUP BY clause"
    } else if s.having.is_some() {
        "HAVING clause"
    } else if s.projection.iter().any(|i| match i {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            bind::contains_aggregate(e)
        }
        _ => false,
    }) {
        "aggregate functions"
    } else if srf::extract(&s.projection, &|_| false).is_some() {
        "set-returning functions in the target list"
    } else {
        return Ok(());
    };
    bail!(FeatureNotSupported, "{} is not allowed with {what}", lock_name(l))
}

/// The scope of a derived relation (a CTE or view) read as `qualifier`:
/// its columns named by the alias's column list, else by `names` (a view's
/// stored names), else as the query named them.
fn derived_scope(
    cols: Vec<Column>,
    names: &[String],
    qualifier: &str,
    alias: &Option<ast::TableAlias>,
) -> Scope {
    let renames: Vec<String> = alias
        .as_ref()
        .map(|a| a.columns.iter().map(|c| bind::ident(&c.name)).collect())
        .unwrap_or_default();
    Scope {
        cols: cols
            .into_iter()
            .enumerate()
            .map(|(i, c)| ScopeCol {
                qualifier: Some(qualifier.to_string()),
                name: renames.get(i).or(names.get(i)).cloned().unwrap_or(c.name),
                ty: c.ty,
                table_oid: 0,
                column_id: 0,
                reach: Reach::Full,
            })
            .collect(),
    }
}

/// True if `e` calls a window function (`f(...) OVER ...`) anywhere.
pub(crate) fn contains_window(e: &ast::Expr) -> bool {
    let found = ast::visit_expressions(e, |x| match x {
        ast::Expr::Function(f) if f.over.is_some() => std::ops::ControlFlow::Break(()),
        _ => std::ops::ControlFlow::Continue(()),
    });
    found.is_break()
}

/// ORDER BY (or DISTINCT ON, the `clause`) may name an output column by
/// position or by name. A bare name is an output column's (its alias or
/// the name derived for it) before it is an input column's, the SQL92 rule
/// PostgreSQL keeps (`SELECT CAST(k AS text) FROM t ORDER BY k` sorts by
/// the text); output columns of that name with different expressions make
/// it 42702. None: not an output column, bind it over the input.
fn order_target(clause: &str, e: &ast::Expr, outputs: &[(Expr, Column)]) -> Result<Option<Expr>> {
    if let Some(n) = ordinal(e) {
        return match outputs.get(n.wrapping_sub(1)) {
            Some((x, _)) => Ok(Some(x.clone())),
            None => bail!(InvalidColumnReference, "{clause} position {n} is not in select list"),
        };
    }
    let ast::Expr::Identifier(i) = e else { return Ok(None) };
    let name = bind::ident(i);
    let mut found: Option<&Expr> = None;
    for (x, _) in outputs.iter().filter(|(_, c)| c.name == name) {
        match found {
            Some(f) if f != x => bail!(AmbiguousColumn, "{clause} \"{name}\" is ambiguous"),
            _ => found = Some(x),
        }
    }
    Ok(found.cloned())
}

/// The select items `(x).*` expands into: `(x).field` for each field of
/// record-valued x (42809 when x is not of a composite type). x is bound
/// here only for its type; the binder's state is left as it was.
fn record_fields(b: &mut Binder<'_>, x: &ast::Expr, scope: &Scope) -> Result<Vec<ast::Expr>> {
    let marks = (b.subqueries.len(), b.correlated.len(), b.windows.len());
    let bound = b.expr(x, scope);
    b.subqueries.truncate(marks.0);
    b.correlated.truncate(marks.1);
    b.windows.truncate(marks.2);
    let rt = match bound?.1 {
        DataType::Record(rt) if !rt.fields.is_empty() => rt,
        DataType::Record(_) => {
            bail!(ObjectNotInPrerequisiteState, "record type has not been registered")
        }
        other => bail!(WrongObjectType, "type {other} is not composite"),
    };
    let field = |name: &String| ast::Expr::CompoundFieldAccess {
        root: Box::new(ast::Expr::Nested(Box::new(x.clone()))),
        access_chain: vec![ast::AccessExpr::Dot(ast::Expr::Identifier(ast::Ident::with_quote(
            '"',
            name.clone(),
        )))],
    };
    Ok(rt.fields.iter().map(|(n, _)| field(n)).collect())
}

/// [`derive_name`], except that a typed literal, or a cast whose operand
/// has no strong name, gives no name.
fn derive_name_strong(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Cast { expr, .. } => derive_name_strong(expr),
        ast::Expr::TypedString(_) | ast::Expr::Interval(_) => "?column?".into(),
        ast::Expr::Nested(inner) => derive_name_strong(inner),
        ast::Expr::Case { else_result: Some(e), .. } => derive_name_strong(e),
        ast::Expr::Case { else_result: None, .. } => "?column?".into(),
        other => derive_name(other),
    }
}

/// The column name a cast to `t` gives: the type's pg_type name (the
/// element type's for an array type; an enum's own name).
fn type_column_name(t: &ast::DataType) -> String {
    match (bind::data_type(t), t) {
        (Ok(t), _) => t.elem().unwrap_or(&t).typname().to_string(),
        (Err(_), ast::DataType::Custom(name, _)) => {
            bind::object_name(name).unwrap_or_else(|_| "?column?".into())
        }
        (Err(_), ast::DataType::Array(ast::ArrayElemTypeDef::SquareBracket(inner, _))) => {
            type_column_name(inner)
        }
        _ => "?column?".into(),
    }
}

/// The column name PostgreSQL derives for an unaliased select item.
pub fn derive_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => bind::ident(i),
        ast::Expr::CompoundIdentifier(p) => p.last().map(bind::ident).unwrap_or_default(),
        ast::Expr::Function(f) => bind::object_name(&f.name).unwrap_or_else(|_| "?column?".into()),
        // The outermost cast's type names it unless its operand has a
        // name of its own (a column or a function, not another cast).
        ast::Expr::Cast { expr, data_type, .. } => match derive_name_strong(expr).as_str() {
            // A cast to an array type is named after the element type.
            "?column?" => type_column_name(data_type),
            n => n.to_string(),
        },
        ast::Expr::Array(_) => "array".into(),
        ast::Expr::Tuple(_) => "row".into(),
        ast::Expr::AtTimeZone { .. } => "timezone".into(),
        // `t.col[i]`: the last field name, else the root's name.
        ast::Expr::CompoundFieldAccess { root, access_chain } => access_chain
            .iter()
            .rev()
            .find_map(|a| match a {
                ast::AccessExpr::Dot(ast::Expr::Identifier(i)) => Some(bind::ident(i)),
                _ => None,
            })
            .unwrap_or_else(|| derive_name(root)),
        ast::Expr::Nested(inner) => derive_name(inner),
        ast::Expr::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(s) => match s.projection.as_slice() {
                [ast::SelectItem::UnnamedExpr(e)] => derive_name(e),
                [ast::SelectItem::ExprWithAlias { alias, .. }] => bind::ident(alias),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        ast::Expr::Exists { .. } => "exists".into(),
        ast::Expr::IsNormalized { negated: false, .. } => "is_normalized".into(),
        ast::Expr::Position { .. } => "position".into(),
        ast::Expr::Trim { trim_where, .. } => match trim_where {
            Some(ast::TrimWhereField::Leading) => "ltrim".into(),
            Some(ast::TrimWhereField::Trailing) => "rtrim".into(),
            _ => "btrim".into(),
        },
        ast::Expr::Substring { shorthand, .. } => {
            if *shorthand {
                "substr".into()
            } else {
                "substring".into()
            }
        }
        // Named by its ELSE branch if that has a name of its own.
        ast::Expr::Case { else_result, .. } => {
            match else_result.as_deref().map(derive_name_strong).as_deref() {
                None | Some("?column?") => "case".into(),
                Some(n) => n.to_string(),
            }
        }
        ast::Expr::Ceil { .. } => "ceil".into(),
        ast::Expr::Floor { .. } => "floor".into(),
        ast::Expr::Overlay { .. } => "overlay".into(),
        ast::Expr::BinaryOp { op: ast::BinaryOperator::Overlaps, .. } => "overlaps".into(),
        ast::Expr::Interval(_) => "interval".into(),
        ast::Expr::Extract { .. } => "extract".into(),
        ast::Expr::TypedString(ts) => type_column_name(&ts.data_type),
        _ => "?column?".into(),
    }
}

/// Plans the FROM clause; an empty FROM yields one empty row.
pub fn plan_from(b: &mut Binder<'_>, from: &[ast::TableWithJoins]) -> Result<(Plan, Scope)> {
    let mut acc: Option<(Plan, Scope)> = None;
    for twj in from {
        // A function after a comma may read the items before it.
        let mut cur = match (acc.take(), functions::call_of(&twj.relation)) {
            // A SQL function reads the items before it (planned in plan_factor).
            (Some(left), Some(_)) if b.is_sql_function_item(&twj.relation) => {
                lateral(b, left, None, |b| plan_factor(b, &twj.relation))?
            }
            (Some(left), Some(call)) => {
                let call = call?;
                lateral(b, left, None, |b| functions::plan_function(b, &call))?
            }
            (Some(left), _)
                if matches!(&twj.relation, ast::TableFactor::Derived { lateral: true, .. }) =>
            {
                lateral(b, left, None, |b| lateral_subquery(b, &twj.relation))?
            }
            (left, _) => {
                let cur = plan_factor(b, &twj.relation)?;
                match left {
                    None => cur,
                    Some(left) => cross(left, cur),
                }
            }
        };
        for j in &twj.joins {
            if let ast::TableFactor::Derived { lateral: true, .. } = &j.relation {
                cur =
                    lateral(b, cur, Some(&j.join_operator), |b| lateral_subquery(b, &j.relation))?;
                continue;
            }
            if b.is_sql_function_item(&j.relation) && lateral_kind(Some(&j.join_operator)).is_ok() {
                cur = lateral(b, cur, Some(&j.join_operator), |b| plan_factor(b, &j.relation))?;
                continue;
            }
            if let Some(call) = functions::call_of(&j.relation) {
                let call = call?;
                if lateral_kind(Some(&j.join_operator)).is_ok() {
                    cur = lateral(b, cur, Some(&j.join_operator), |b| {
                        functions::plan_function(b, &call)
                    })?;
                    continue;
                }
            }
            let right = plan_factor(b, &j.relation)?;
            cur = join(b, cur, right, &j.join_operator, &|b| plan_factor(b, &j.relation))?;
        }
        acc = Some(cur);
    }
    Ok(acc.unwrap_or((Plan::Values(vec![vec![]]), Scope::default())))
}

/// A `LATERAL (subquery) alias` item, planned with the items before it
/// visible as outer columns.
fn lateral_subquery(b: &mut Binder<'_>, item: &ast::TableFactor) -> Result<(Plan, Scope)> {
    let ast::TableFactor::Derived { subquery, alias, .. } = item else {
        bail!(InternalError, "not a LATERAL subquery")
    };
    let (plan, cols) = b.query(subquery)?;
    let q = alias_name(alias).unwrap_or_default();
    Ok((plan, derived_scope(cols, &[], &q, alias)))
}

/// The join of a LATERAL item and its ON condition: inner for a comma,
/// CROSS JOIN or [INNER] JOIN, left for LEFT JOIN.
fn lateral_kind(op: Option<&ast::JoinOperator>) -> Result<(JoinKind, Option<&ast::Expr>)> {
    use ast::JoinConstraint as C;
    use ast::JoinOperator as J;
    Ok(match op {
        None | Some(J::CrossJoin(_)) => (JoinKind::Inner, None),
        Some(J::Join(c) | J::Inner(c)) if matches!(c, C::None | C::On(_)) => {
            (JoinKind::Inner, on_of(c))
        }
        Some(J::Left(c) | J::LeftOuter(c)) if matches!(c, C::None | C::On(_)) => {
            (JoinKind::Left, on_of(c))
        }
        Some(other) => bail!(FeatureNotSupported, "LATERAL join form not supported yet: {other:?}"),
    })
}

/// A join constraint's ON condition.
fn on_of(c: &ast::JoinConstraint) -> Option<&ast::Expr> {
    match c {
        ast::JoinConstraint::On(e) => Some(e),
        _ => None,
    }
}

/// `left [CROSS|LEFT] JOIN LATERAL item [ON cond]`: the item (planned by
/// `right`) sees the left side's columns as outer references and runs per
/// left row; the ON condition filters its rows (so a left row whose item
/// rows all fail it is kept once, NULL-padded, by a LEFT JOIN).
fn lateral(
    b: &mut Binder<'_>,
    left: (Plan, Scope),
    op: Option<&ast::JoinOperator>,
    right: impl FnOnce(&mut Binder<'_>) -> Result<(Plan, Scope)>,
) -> Result<(Plan, Scope)> {
    let (kind, on) = lateral_kind(op)?;
    // The item sees the left side's row after the enclosing queries' rows.
    b.outer.push(bind::OuterScope::new(left.1.clone()));
    let r = right(b).and_then(|(plan, rscope)| {
        let Some(on) = on else { return Ok((plan, rscope)) };
        // Correlated subqueries in the condition read the item's row.
        let mark = b.correlated.len();
        let corr = b.corr.replace(CorrCtx { mark, width: rscope.cols.len() });
        let bound = b.expr(on, &rscope);
        b.corr = corr;
        let (x, t) = bound?;
        let cond = b.coerce(x, &t, &DataType::Bool)?;
        let subs = b.correlated.split_off(mark);
        Ok((filter_with_subqueries(plan, cond, subs, &rscope.types()), rscope))
    });
    b.outer.pop();
    let (plan, rscope) = r?;
    let width = rscope.cols.len();
    let mut scope = left.1;
    scope.cols.extend(rscope.cols);
    Ok((Plan::Lateral(Box::new(left.0), Box::new(plan), kind, width), scope))
}

fn cross(left: (Plan, Scope), right: (Plan, Scope)) -> (Plan, Scope) {
    let lw = left.1.cols.len();
    let mut scope = left.1;
    scope.cols.extend(right.1.cols);
    let plan = joins::make_join(left.0, right.0, JoinKind::Inner, None, &scope.types(), lw);
    (plan, scope)
}

/// `left JOIN right ON/USING ...`. `replan` plans the right item again,
/// for a LEFT JOIN whose condition has a subquery that reads both sides:
/// that join is made a LATERAL one (see [`lateral`]).
fn join(
    b: &mut Binder<'_>,
    left: (Plan, Scope),
    right: (Plan, Scope),
    op: &ast::JoinOperator,
    replan: &dyn Fn(&mut Binder<'_>) -> Result<(Plan, Scope)>,
) -> Result<(Plan, Scope)> {
    use ast::JoinOperator as J;
    let left_width = left.1.cols.len();
    let (kind, constraint) = match op {
        J::Join(c) | J::Inner(c) => (JoinKind::Inner, c),
        J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, c),
        J::Right(c) | J::RightOuter(c) => (JoinKind::Right(left_width), c),
        J::FullOuter(c) => (JoinKind::Full(left_width), c),
        J::CrossJoin(c) => (JoinKind::Inner, c),
        other => bail!(FeatureNotSupported, "join type not supported yet: {other:?}"),
    };
    let using = match constraint {
        ast::JoinConstraint::Using(names) => {
            let names = names.iter().map(bind::object_name).collect::<Result<Vec<_>>>()?;
            Some(names)
        }
        ast::JoinConstraint::Natural => {
            let visible = |s: &Scope| -> Vec<String> {
                s.cols.iter().filter(|c| c.reach == Reach::Full).map(|c| c.name.clone()).collect()
            };
            let right_names = visible(&right.1);
            let mut common = visible(&left.1);
            common.retain(|n| right_names.contains(n));
            common.dedup();
            Some(common)
        }
        _ => None,
    };
    if let Some(names) = using {
        return join_using(b, left, right, kind, &names);
    }
    let mut scope = left.1;
    scope.cols.extend(right.1.cols);
    let on = match constraint {
        ast::JoinConstraint::On(e) => {
            // Correlated subqueries in the condition read the joined row.
            let (mark, init) = (b.correlated.len(), b.subqueries.len());
            let corr = b.corr.replace(CorrCtx { mark, width: scope.cols.len() });
            let bound = b.expr(e, &scope);
            b.corr = corr;
            let (x, t) = bound?;
            let cond = b.coerce(x, &t, &DataType::Bool)?;
            let subs = b.correlated.split_off(mark);
            let both = |s: &Correlated| {
                let reads = correlated_reads(s);
                reads.iter().any(|&c| c < left_width) && reads.iter().any(|&c| c >= left_width)
            };
            if kind == JoinKind::Left && subs.iter().any(both) {
                // Bound again, per left row, with the item.
                b.subqueries.truncate(init);
                scope.cols.truncate(left_width);
                return lateral(b, (left.0, scope), Some(op), replan);
            }
            if !subs.is_empty() {
                let types = scope.types();
                let plan =
                    join_with_subqueries((left.0, right.0), kind, cond, subs, &types, left_width)?;
                return Ok((plan, scope));
            }
            Some(cond)
        }
        _ => None,
    };
    let plan = joins::make_join(left.0, right.0, kind, on, &scope.types(), left_width);
    Ok((plan, scope))
}

/// A join whose ON condition has correlated subqueries. An inner join
/// filters the joined rows, running the subqueries per row. An outer join
/// cannot (it would lose the rows it pads), so each subquery runs on the
/// side whose columns it reads, per row of that side, its value carried as
/// an extra column the condition reads and the result drops; a subquery
/// reading both sides of an outer join is not supported.
fn join_with_subqueries(
    (left, right): (Plan, Plan),
    kind: JoinKind,
    cond: Expr,
    subs: Vec<Correlated>,
    types: &[DataType],
    lw: usize,
) -> Result<Plan> {
    if kind == JoinKind::Inner {
        let plan = joins::make_join(left, right, kind, None, types, lw);
        return Ok(filter_with_subqueries(plan, cond, subs, types));
    }
    let w = types.len();
    let rw = w - lw;
    let (mut lsubs, mut rsubs, mut place) = (Vec::new(), Vec::new(), Vec::new());
    for s in subs {
        let reads = correlated_reads(&s);
        if reads.iter().all(|&c| c < lw) {
            place.push(lw + lsubs.len());
            lsubs.push(s);
        } else if reads.iter().all(|&c| c >= lw) {
            place.push(w + rsubs.len());
            rsubs.push(s);
        } else {
            bail!(
                FeatureNotSupported,
                "a correlated subquery in the ON condition of an outer join may read only one side of the join"
            );
        }
    }
    let nl = lsubs.len();
    // `place` was counted before the left side's values moved the right
    // side's columns on by `nl`.
    let place: Vec<usize> = place.into_iter().map(|p| if p >= w { p + nl } else { p }).collect();
    let mut join_types = types[..lw].to_vec();
    join_types.extend(lsubs.iter().map(|s| s.ty.clone()));
    join_types.extend_from_slice(&types[lw..]);
    join_types.extend(rsubs.iter().map(|s| s.ty.clone()));
    let left = apply_on_side(left, lsubs, 0..lw, w);
    let right = apply_on_side(right, rsubs, lw..w, w);
    let cond = cond.remap_columns(&|c| {
        Expr::Column(match c {
            c if c < lw => c,
            c if c < w => c + nl,
            c => place.get(c - w).copied().unwrap_or(c),
        })
    });
    let kind = match kind {
        JoinKind::Right(_) => JoinKind::Right(lw + nl),
        JoinKind::Full(_) => JoinKind::Full(lw + nl),
        k => k,
    };
    let join = joins::make_join(left, right, kind, Some(cond), &join_types, lw + nl);
    let kept = (0..lw).chain(lw + nl..lw + nl + rw).map(Expr::Column).collect();
    Ok(Plan::Project(Box::new(join), kept))
}

/// The columns of the joined row a correlated subquery of a join's
/// condition reads: the subquery's, and an IN's left operand's.
fn correlated_reads(s: &Correlated) -> Vec<usize> {
    let mut reads = s.reads.clone();
    if let Some((probe, _)) = &s.probe {
        reads.extend(probe.columns_read());
    }
    reads
}

/// One side of a join (the columns `cols` of the joined row of `width`)
/// with the values of `subs` appended to its rows. The subqueries run on
/// the side's row padded to the joined row's shape with NULLs, so their
/// references to the joined row find the side's columns where they were
/// bound.
fn apply_on_side(
    plan: Plan,
    subs: Vec<Correlated>,
    cols: std::ops::Range<usize>,
    width: usize,
) -> Plan {
    if subs.is_empty() {
        return plan;
    }
    let n = subs.len();
    let padded = (0..width)
        .map(|c| match cols.contains(&c) {
            true => Expr::Column(c - cols.start),
            false => Expr::Const(Value::Null),
        })
        .collect();
    let applied = Plan::Apply(Box::new(Plan::Project(Box::new(plan), padded)), subs);
    let kept = cols.chain(width..width + n).map(Expr::Column).collect();
    Plan::Project(Box::new(applied), kept)
}

/// `JOIN ... USING (names)` and NATURAL JOIN: the join on equal named
/// columns, projected to PostgreSQL's column order: each merged column
/// once (left's value, right's for RIGHT JOIN, the first non-null for FULL
/// JOIN), then both sides' columns, the merged ones reachable only qualified.
fn join_using(
    b: &mut Binder<'_>,
    left: (Plan, Scope),
    right: (Plan, Scope),
    kind: JoinKind,
    names: &[String],
) -> Result<(Plan, Scope)> {
    let left_width = left.1.cols.len();
    let width = right.1.cols.len();
    let find = |s: &Scope, name: &str, side: &str| -> Result<usize> {
        let mut hits =
            s.cols.iter().enumerate().filter(|(_, c)| c.reach == Reach::Full && c.name == name);
        let Some((i, _)) = hits.next() else {
            bail!(
                UndefinedColumn,
                "column \"{name}\" specified in USING clause does not exist in {side} table"
            )
        };
        if hits.next().is_some() {
            bail!(
                AmbiguousColumn,
                "common column name \"{name}\" appears more than once in {side} table"
            )
        }
        Ok(i)
    };
    let mut on: Option<Expr> = None;
    let mut merged_cols = Vec::new();
    let mut merged_exprs = Vec::new();
    let (mut lscope, mut rscope) = (left.1, right.1);
    for (k, name) in names.iter().enumerate() {
        if names[..k].contains(name) {
            bail!(DuplicateColumn, "column name \"{name}\" appears more than once in USING clause");
        }
        let li = find(&lscope, name, "left")?;
        let ri = find(&rscope, name, "right")?;
        // Both sides' columns are now reached through the merged one.
        lscope.cols[li].reach = Reach::Qualified;
        rscope.cols[ri].reach = Reach::Qualified;
        let (lt, rt) = (lscope.cols[li].ty.clone(), rscope.cols[ri].ty.clone());
        let (l, r) = (Expr::Column(li), Expr::Column(left_width + ri));
        let (eq, t) = b.bind_binop(BinOp::Eq, l.clone(), lt.clone(), r.clone(), rt.clone())?;
        let eq = b.coerce(eq, &t, &DataType::Bool)?;
        on = Some(match on {
            None => eq,
            Some(prev) => Expr::Binary(BinOp::And, Box::new(prev), Box::new(eq)),
        });
        let ty = b.unify(&lt, &rt)?;
        let l = b.coerce(l, &lt, &ty)?;
        let r = b.coerce(r, &rt, &ty)?;
        merged_exprs.push(match kind {
            JoinKind::Inner | JoinKind::Left => l,
            JoinKind::Right(_) => r,
            JoinKind::Full(_) => Expr::Func(crate::func::Func::Coalesce, vec![l, r]),
        });
        merged_cols.push(ScopeCol {
            qualifier: None,
            name: name.clone(),
            ty,
            table_oid: 0,
            column_id: 0,
            reach: Reach::Full,
        });
    }
    let mut scope = Scope { cols: merged_cols };
    scope.cols.extend(lscope.cols);
    scope.cols.extend(rscope.cols);
    let inner_types = scope.types().split_off(names.len());
    let join = joins::make_join(left.0, right.0, kind, on, &inner_types, left_width);
    merged_exprs.extend((0..left_width + width).map(Expr::Column));
    Ok((Plan::Project(Box::new(join), merged_exprs), scope))
}

fn alias_name(alias: &Option<ast::TableAlias>) -> Option<String> {
    alias.as_ref().map(|a| bind::ident(&a.name))
}

fn plan_factor(b: &mut Binder<'_>, f: &ast::TableFactor) -> Result<(Plan, Scope)> {
    match b.sql_function_item(f)? {
        Some(crate::bind::user_functions::FunctionItem::Derived(derived)) => {
            return plan_factor(b, &derived)
        }
        Some(crate::bind::user_functions::FunctionItem::Planned(plan, scope)) => {
            return Ok((*plan, scope))
        }
        None => {}
    }
    if let Some(call) = functions::call_of(f) {
        return functions::plan_function(b, &call?);
    }
    match f {
        ast::TableFactor::Table { name, alias, .. } => {
            let tname = bind::object_name(name)?;
            let schema = bind::object_schema(name);
            let qualifier = alias_name(alias).unwrap_or_else(|| tname.clone());
            if schema.is_none() {
                if let Some((_, plan, cols)) =
                    b.ctes.iter().rev().find(|(n, _, _)| *n == tname).cloned()
                {
                    // A WITH query that writes without RETURNING (the only
                    // work table without columns).
                    if let Plan::WorkTable(id) = plan {
                        if cols.is_empty() {
                            bail!(
                                FeatureNotSupported,
                                "WITH query \"{tname}\" does not have a RETURNING clause"
                            );
                        }
                        b.work_read.push(id);
                    }
                    return Ok((plan, derived_scope(cols, &[], &qualifier, alias)));
                }
            }
            let obj = crate::catalog::ObjName { schema, name: tname };
            let Ok(path) = b.catalog.lookup_path(&obj, false) else {
                bail!(UndefinedTable, "relation \"{obj}\" does not exist");
            };
            let mut found = None;
            for &ns in path.iter() {
                let system = match ns {
                    crate::catalog::PG_CATALOG_NAMESPACE_OID => Some("pg_catalog"),
                    crate::catalog::INFO_SCHEMA_NAMESPACE_OID => Some("information_schema"),
                    _ => None,
                };
                if let Some(schema) = system {
                    // System schemas hold no user relations.
                    if let Some(sys) = SystemTable::lookup(Some(schema), &obj.name) {
                        found = Some(Err(sys));
                        break;
                    }
                    if let Some(v) = (ns == crate::catalog::PG_CATALOG_NAMESPACE_OID)
                        .then(|| crate::system::views::lookup(&obj.name))
                        .flatten()
                    {
                        if let Some(k) = b.keyed.as_mut() {
                            k.others.push(qualifier.clone());
                        }
                        return plan_view(b, &v, &qualifier, alias);
                    }
                    continue;
                }
                if let Some(r) = b.catalog.relation_in(ns, &obj.name) {
                    found = Some(Ok(r));
                    break;
                }
            }
            if let (Some(t), Some(Ok(r))) = (&mut b.trace, &found) {
                t.relations.push(r.oid());
            }
            if let Some(Ok(r)) = &found {
                b.require(r.clone(), crate::acl::SELECT);
            }
            match found {
                Some(Ok(Relation::View(v))) => {
                    if let Some(k) = b.keyed.as_mut() {
                        k.others.push(qualifier.clone());
                    }
                    return plan_view(b, &v, &qualifier, alias);
                }
                Some(Ok(Relation::Sequence(seq))) => {
                    let cols = [("last_value", DataType::Int8), ("log_cnt", DataType::Int8)]
                        .into_iter()
                        .chain([("is_called", DataType::Bool)]);
                    let scope = Scope {
                        cols: cols
                            .map(|(n, ty)| ScopeCol {
                                qualifier: Some(qualifier.clone()),
                                name: n.into(),
                                ty,
                                table_oid: 0,
                                column_id: 0,
                                reach: Reach::Full,
                            })
                            .collect(),
                    };
                    return Ok((Plan::Sequence(seq), scope));
                }
                Some(Ok(Relation::Table(t))) => {
                    if t.matview.as_ref().is_some_and(|m| !m.populated) {
                        return Err(err!(
                            ObjectNotInPrerequisiteState,
                            "materialized view \"{}\" has not been populated",
                            t.name
                        )
                        .with_hint("Use the REFRESH MATERIALIZED VIEW command."));
                    }
                    let mut scope = table_scope(&t, &qualifier, alias);
                    if t.is_partitioned() {
                        scope.cols.push(ScopeCol {
                            qualifier: Some(qualifier.clone()),
                            name: "tableoid".into(),
                            ty: DataType::Oid,
                            table_oid: 0,
                            column_id: 0,
                            reach: Reach::System,
                        });
                    }
                    let keyed = match b.keyed.as_mut().filter(|k| k.wants(&qualifier)) {
                        Some(k) => {
                            k.tables.push((qualifier.clone(), t.name.clone()));
                            // Locking rows needs UPDATE, as in PostgreSQL.
                            b.require(Relation::Table(t.clone()), crate::acl::UPDATE);
                            scope.cols.push(ScopeCol {
                                qualifier: Some(qualifier.clone()),
                                name: crate::rowlock::ROW_KEY.into(),
                                ty: DataType::Bytea,
                                table_oid: 0,
                                column_id: 0,
                                reach: Reach::System,
                            });
                            true
                        }
                        None => false,
                    };
                    if t.is_partitioned() {
                        return Ok((partitioned_scan(b, &t, keyed), scope));
                    }
                    let scan = Scan::full(t, keyed);
                    return Ok((Plan::Scan(scan), scope));
                }
                Some(Err(sys)) => {
                    // A catalog's rows carry its tableoid last, a system column.
                    let tableoid = sys.oid().map(|_| ("tableoid", DataType::Oid, Reach::System));
                    let cols = sys.columns().into_iter().map(|(n, t)| (n, t, Reach::Full));
                    let scope = Scope {
                        cols: cols
                            .chain(tableoid)
                            .map(|(n, t, reach)| ScopeCol {
                                qualifier: Some(qualifier.clone()),
                                name: n.to_string(),
                                ty: t,
                                table_oid: 0,
                                column_id: 0,
                                reach,
                            })
                            .collect(),
                    };
                    return Ok((Plan::System(sys), scope));
                }
                Some(Ok(Relation::Index(..))) => {
                    bail!(WrongObjectType, "\"{}\" is an index", obj.name)
                }
                None => {}
            }
            Err(err!(UndefinedTable, "relation \"{}\" does not exist", name.to_string()))
        }
        ast::TableFactor::Derived { subquery, alias, lateral: false, .. } => {
            if let (Some(k), Some(a)) = (b.keyed.as_mut(), alias) {
                k.others.push(bind::ident(&a.name));
            }
            let (plan, cols) = b.query(subquery)?;
            let q = alias_name(alias);
            let renames: Vec<String> = alias
                .as_ref()
                .map(|a| a.columns.iter().map(|c| bind::ident(&c.name)).collect())
                .unwrap_or_default();
            let scope = Scope {
                cols: cols
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| ScopeCol {
                        qualifier: q.clone(),
                        name: renames.get(i).cloned().unwrap_or(c.name),
                        ty: c.ty,
                        table_oid: 0,
                        column_id: 0,
                        reach: Reach::Full,
                    })
                    .collect(),
            };
            Ok((plan, scope))
        }
        ast::TableFactor::NestedJoin { table_with_joins, alias } => {
            let (plan, mut scope) = plan_from(b, std::slice::from_ref(table_with_joins))?;
            if let Some(a) = alias {
                alias_join(&mut scope, a)?;
            }
            Ok((plan, scope))
        }
        other => bail!(FeatureNotSupported, "FROM item not supported yet: {other}"),
    }
}

/// Names a parenthesized join's columns by its alias `a`: those `*` reads
/// take the alias as their qualifier (and its column names, in order); the
/// joined tables' names no longer reach any.
fn alias_join(scope: &mut Scope, a: &ast::TableAlias) -> Result<()> {
    let name = bind::ident(&a.name);
    let mut renames = a.columns.iter().map(|c| bind::ident(&c.name));
    let mut available = 0;
    for c in &mut scope.cols {
        match c.reach {
            Reach::Full => {
                c.qualifier = Some(name.clone());
                if let Some(n) = renames.next() {
                    c.name = n;
                }
                available += 1;
            }
            _ => {
                c.qualifier = None;
                c.reach = Reach::Qualified;
            }
        }
    }
    if a.columns.len() > available {
        bail!(
            InvalidColumnReference,
            "join expression \"{name}\" has {available} columns available but {} columns specified",
            a.columns.len()
        );
    }
    Ok(())
}

/// The scope a table contributes: its columns, qualified by alias or name.
pub fn table_scope(t: &TableDef, qualifier: &str, alias: &Option<ast::TableAlias>) -> Scope {
    let renames: Vec<String> = alias
        .as_ref()
        .map(|a| a.columns.iter().map(|c| bind::ident(&c.name)).collect())
        .unwrap_or_default();
    Scope {
        cols: t
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| ScopeCol {
                qualifier: Some(qualifier.to_string()),
                name: renames.get(i).cloned().unwrap_or_else(|| c.name.clone()),
                ty: c.ty.to_type(),
                table_oid: t.oid,
                column_id: i as i16 + 1,
                reach: Reach::Full,
            })
            .collect(),
    }
}

/// Reading partitioned table `t`: the scans of its leaf partitions
/// appended, in bound order, each row followed by its partition's OID (the
/// `tableoid` system column) and, `keyed`, its storage key. With no
/// partitions, the parent's own storage (which holds no rows) is read.
fn partitioned_scan(b: &Binder<'_>, t: &Arc<TableDef>, keyed: bool) -> Plan {
    let n = t.columns.len();
    let arm = |leaf: Arc<TableDef>| {
        let mut exprs: Vec<Expr> = (0..n).map(Expr::Column).collect();
        exprs.push(Expr::Const(Value::Oid(leaf.oid)));
        if keyed {
            exprs.push(Expr::Column(n));
        }
        Plan::Project(Box::new(Plan::Scan(Scan::full(leaf, keyed))), exprs)
    };
    let mut arms = crate::partition::leaves(&b.catalog.partitions, t).into_iter().map(arm);
    let first = arms.next().unwrap_or_else(|| arm(t.clone()));
    arms.fold(first, |all, p| Plan::SetOp(SetOpKind::Union, true, Box::new(all), Box::new(p)))
}

/// Wraps an expression list into a Values plan with one row (for tests).
#[allow(dead_code)]
pub fn single_row(exprs: Vec<Expr>) -> Plan {
    Plan::Values(vec![exprs])
}

/// Puts a window node over `plan` and points the placeholder columns of
/// its calls (`WINDOW_BASE + k`) at their results, which follow the `base`
/// columns of each row.
fn place_windows(
    plan: Plan,
    calls: Vec<crate::window::WindowCall>,
    base: usize,
    outputs: &mut [(Expr, Column)],
    keys: &mut [SortKey],
    on: &mut [Expr],
) -> Plan {
    let place = |c: usize| Expr::Column(if c >= WINDOW_BASE { base + c - WINDOW_BASE } else { c });
    for (x, _) in outputs.iter_mut() {
        *x = x.remap_columns(&place);
    }
    for k in keys.iter_mut() {
        k.expr = k.expr.remap_columns(&place);
    }
    for x in on.iter_mut() {
        *x = x.remap_columns(&place);
    }
    Plan::Window(Box::new(plan), calls)
}

/// Records what a `*` (or `t.*`) at `token` expanded to, when the binder
/// traces (see [`bind::Trace`]).
fn trace_wildcard(
    b: &mut Binder<'_>,
    token: &ast::helpers::attached_token::AttachedToken,
    scope: &Scope,
    cols: &[usize],
) {
    if b.trace.is_none() {
        return;
    }
    for &i in cols {
        Binder::traced(&mut b.trace, sqlparser::tokenizer::Span::empty(), &scope.cols[i]);
    }
    let names = cols.iter().map(|&i| (scope.cols[i].qualifier.clone(), scope.cols[i].name.clone()));
    if let Some(t) = &mut b.trace {
        t.wildcards.push((token.0.span, names.collect()));
    }
}
