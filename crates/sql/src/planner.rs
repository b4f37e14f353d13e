//! Statement planning: turns a parsed statement into a [`Bound`] statement
//! that can be cached and executed many times with different parameters.
//!
//! Queries and DML get full plans. Utility statements (DDL, transaction
//! control, SET/SHOW, COPY) are kept as syntax and interpreted by the
//! session at execution time, since they depend on session state.

use std::sync::Arc;

use sqlparser::ast;
use sqltypes::DataType;

use crate::bind::{self, Binder, Scope};
use crate::catalog::{Catalog, TableDef};
use crate::dml::{DeletePlan, InsertPlan, OnConflict, Returning, UpdatePlan};
use crate::error::Result;
use crate::expr::Expr;
use crate::parse::{written, Stmt};
use crate::plan::{Column, Plan, Scan};
use crate::select;
use crate::{bail, err};

mod merge;
pub mod views;

/// A planned statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// A query returning rows.
    Query(Plan, Vec<Column>),
    /// INSERT.
    Insert(InsertPlan),
    /// UPDATE.
    Update(UpdatePlan),
    /// DELETE.
    Delete(DeletePlan),
    /// MERGE.
    Merge(crate::dml::merge::MergePlan),
    /// EXPLAIN output lines.
    Explain(Vec<String>),
    /// A utility statement, interpreted by the session.
    Utility,
    /// FETCH from a cursor, whose columns the session knew at bind time.
    Fetch(Vec<Column>),
    /// CALL: the procedure with its arguments, and the columns of the row
    /// it returns (None when it has no output parameters).
    Call(crate::plan::PlCall, Option<Vec<Column>>),
    /// A statement under a WITH whose queries write.
    With(Box<Writing>),
}

/// A statement under a WITH whose queries write (INSERT, UPDATE, DELETE
/// or MERGE). All of them run in the statement's transaction; unlike
/// PostgreSQL's, whose parts all read one snapshot, a part sees the
/// changes of those that ran before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Writing {
    /// The writes that later ones or the main statement read, in order,
    /// each with the work table its RETURNING rows become: they run first.
    pub before: Vec<(usize, Bound)>,
    /// The main statement.
    pub main: Bound,
    /// The writes nothing reads: they run after the main statement, which
    /// then does not see their changes (as in PostgreSQL).
    pub after: Vec<Bound>,
}

impl Bound {
    /// True for INSERT, UPDATE, DELETE and MERGE.
    pub fn writes(&self) -> bool {
        self.write_command().is_some()
    }

    /// The command name of INSERT, UPDATE, DELETE and MERGE; None for the
    /// others.
    pub fn write_command(&self) -> Option<&'static str> {
        match self {
            Bound::Insert(_) => Some("INSERT"),
            Bound::Update(_) => Some("UPDATE"),
            Bound::Delete(_) => Some("DELETE"),
            Bound::Merge(_) => Some("MERGE"),
            Bound::With(w) => w.main.write_command(),
            _ => None,
        }
    }

    /// The columns this statement returns, if it returns rows.
    pub fn columns(&self) -> Option<Vec<Column>> {
        match self {
            Bound::Query(_, c) => Some(c.clone()),
            Bound::Insert(p) => p.returning.as_ref().map(|r| r.columns.clone()),
            Bound::Update(p) => p.returning.as_ref().map(|r| r.columns.clone()),
            Bound::Delete(p) => p.returning.as_ref().map(|r| r.columns.clone()),
            Bound::Merge(_) => None,
            Bound::Explain(_) => Some(vec![Column::computed("QUERY PLAN", DataType::Text)]),
            Bound::Utility => None,
            Bound::Fetch(c) => Some(c.clone()),
            Bound::Call(_, c) => c.clone(),
            Bound::With(w) => w.main.columns(),
        }
    }
}

/// Plans `stmt` against `catalog`. Returns the plan and the final parameter
/// types (client-declared ones kept, unknown ones inferred or text).
/// Fails with 42501 unless `user` holds the privileges the statement needs.
pub fn plan(
    catalog: &Catalog,
    stmt: &Stmt,
    declared: &[DataType],
    user: &str,
) -> Result<(Arc<Bound>, Vec<DataType>)> {
    let mut b = Binder::new(catalog, declared.to_vec());
    let bound = match stmt {
        Stmt::Sql(s) => plan_sql(&mut b, s)?,
        _ => Bound::Utility,
    };
    crate::acl::check_all(catalog, user, &b.checks)?;
    Ok((Arc::new(bound), b.final_params()))
}

fn plan_sql(b: &mut Binder<'_>, s: &ast::Statement) -> Result<Bound> {
    Ok(match s {
        ast::Statement::Query(q) if modifying(q) => plan_with(b, q)?,
        ast::Statement::Query(q) => {
            let (p, c) = b.query(q)?;
            Bound::Query(p, c)
        }
        ast::Statement::Insert(i) => {
            let mut p = plan_insert(b, i)?;
            p.init = b.subqueries.drain(..).collect();
            Bound::Insert(p)
        }
        ast::Statement::Update(u) => Bound::Update(plan_update(b, u)?),
        ast::Statement::Delete(d) => Bound::Delete(plan_delete(b, d)?),
        ast::Statement::Merge(m) => Bound::Merge(merge::plan_merge(b, m)?),
        ast::Statement::Call(f) => {
            let (call, columns) = b.procedure_call(f)?;
            Bound::Call(call, columns)
        }
        ast::Statement::Explain { statement, analyze, .. } => {
            if *analyze {
                bail!(FeatureNotSupported, "EXPLAIN ANALYZE is not supported yet");
            }
            let inner = plan_sql(b, statement)?;
            let mut lines = Vec::new();
            explain(&inner, &mut lines, 0);
            Bound::Explain(lines)
        }
        // The cursor's query is planned here only to infer parameter types
        // (drivers send DECLARE with parameters); the session runs it.
        ast::Statement::Declare { stmts } => {
            if let [d] = stmts.as_slice() {
                if let Some(q) = &d.for_query {
                    if modifying(q) {
                        bail!(
                            FeatureNotSupported,
                            "DECLARE CURSOR must not contain data-modifying statements in WITH"
                        );
                    }
                    b.query(q)?;
                }
            }
            Bound::Utility
        }
        _ => Bound::Utility,
    })
}

/// True if query `q` writes: its body, or one of its WITH queries.
pub fn modifying(q: &ast::Query) -> bool {
    written(&q.body).is_some()
        || q.with.iter().flat_map(|w| &w.cte_tables).any(|c| written(&c.query.body).is_some())
}

/// Plans a statement under WITH that writes, in its body or in WITH
/// queries (only here, at the top level, may they write).
fn plan_with(b: &mut Binder<'_>, q: &ast::Query) -> Result<Bound> {
    let mark = b.ctes.len();
    let r = plan_with_ctes(b, q);
    b.ctes.truncate(mark);
    r
}

fn plan_with_ctes(b: &mut Binder<'_>, q: &ast::Query) -> Result<Bound> {
    let mut writes = Vec::new();
    if let Some(with) = &q.with {
        if with.recursive && matches!(q.body.as_ref(), ast::SetExpr::Merge(_)) {
            bail!(SyntaxError, "WITH RECURSIVE is not supported for MERGE statement");
        }
        for cte in &with.cte_tables {
            let name = bind::ident(&cte.alias.name);
            let Some(stmt) = written(&cte.query.body) else {
                select::plan_cte(b, with.recursive, cte)?;
                continue;
            };
            let bound = match &cte.query.with {
                Some(_) => plan_with(b, &cte.query)?,
                None => plan_sql(b, stmt)?,
            };
            // Without RETURNING it has no columns: reading it is 0A000.
            let mut cols = bound.columns().unwrap_or_default();
            select::name_cte_columns(&name, &mut cols, &cte.alias.columns)?;
            let id = b.work_tables;
            b.work_tables += 1;
            b.ctes.push((name, Plan::WorkTable(id), cols));
            writes.push((id, bound));
        }
    }
    let main = match written(&q.body) {
        Some(stmt) => plan_sql(b, stmt)?,
        None => {
            let (p, c) = select::plan_after_with(b, q)?;
            Bound::Query(p, c)
        }
    };
    if writes.is_empty() {
        return Ok(main);
    }
    let (before, after): (Vec<_>, Vec<_>) =
        writes.into_iter().partition(|(id, _)| b.work_read.contains(id));
    let after = after.into_iter().map(|(_, w)| w).collect();
    Ok(Bound::With(Box::new(Writing { before, main, after })))
}

/// EXPLAIN's lines for `bound`, nested `depth` deep.
fn explain(bound: &Bound, lines: &mut Vec<String>, depth: usize) {
    let head = match depth {
        0 => String::new(),
        _ => format!("{}->  ", "  ".repeat(depth)),
    };
    // INSERT's subqueries run first, as an init plan's.
    let with_init;
    let (what, table, source, scan) = match bound {
        Bound::Query(p, _) => return p.explain(lines, depth),
        Bound::Insert(p) if !p.init.is_empty() => {
            with_init = Plan::Init(p.init.clone(), Box::new(p.source.clone()));
            ("Insert", &p.table, Some(&with_init), None)
        }
        Bound::Insert(p) => ("Insert", &p.table, Some(&p.source), None),
        Bound::Update(p) => ("Update", &p.scan.table, None, Some(&p.scan)),
        Bound::Delete(p) => ("Delete", &p.scan.table, None, Some(&p.scan)),
        Bound::Merge(p) => ("Merge", &p.scan.table, Some(&p.source), Some(&p.scan)),
        Bound::With(w) => {
            explain(&w.main, lines, depth);
            let writes = w.before.iter().map(|(_, b)| b).chain(&w.after);
            for b in writes {
                lines.push(format!("{}  CTE", "  ".repeat(depth)));
                explain(b, lines, depth + 2);
            }
            return;
        }
        _ => return lines.push(format!("{head}Utility Statement")),
    };
    lines.push(format!("{head}{what} on {}", table.name));
    if let Some(source) = source {
        source.explain(lines, depth + 1);
    }
    if let Some(scan) = scan {
        Plan::Scan(scan.clone()).explain(lines, depth + 1);
    }
}

fn table_name(t: &ast::TableObject) -> Result<crate::catalog::ObjName> {
    match t {
        ast::TableObject::TableName(n) => bind::obj_name(n),
        other => bail!(FeatureNotSupported, "INSERT into {other} is not supported"),
    }
}

fn returning(
    b: &mut Binder<'_>,
    items: &Option<Vec<ast::SelectItem>>,
    scope: &Scope,
) -> Result<Option<Returning>> {
    let Some(items) = items else { return Ok(None) };
    // Correlated subqueries run per returned row; their values follow it.
    let mark = b.correlated.len();
    let corr = b.corr.replace(bind::CorrCtx { mark, width: scope.cols.len() });
    let r = returning_items(b, items, scope);
    b.corr = corr;
    let (exprs, columns) = r?;
    let subs = b.correlated.split_off(mark);
    let per_row = crate::dml::PerRow { subs, ..Default::default() };
    Ok(Some(Returning { exprs, columns, per_row }))
}

/// RETURNING's expressions over `scope` and its output columns.
fn returning_items(
    b: &mut Binder<'_>,
    items: &[ast::SelectItem],
    scope: &Scope,
) -> Result<(Vec<crate::expr::Expr>, Vec<Column>)> {
    let mut exprs = Vec::new();
    let mut columns = Vec::new();
    for item in items {
        // `*` is every column; `t.*` those of t (with FROM items).
        let wildcard = match item {
            ast::SelectItem::Wildcard(_) => Some(None),
            ast::SelectItem::QualifiedWildcard(
                ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                _,
            ) => Some(Some(bind::object_name(n)?)),
            _ => None,
        };
        match item {
            _ if wildcard.is_some() => {
                let q = wildcard.flatten();
                let of = |c: &bind::ScopeCol| q.is_none() || c.qualifier.as_deref() == q.as_deref();
                if let Some(q) = q.as_deref().filter(|_| !scope.cols.iter().any(of)) {
                    bail!(UndefinedTable, "missing FROM-clause entry for table \"{q}\"");
                }
                for (i, c) in scope.cols.iter().enumerate().filter(|(_, c)| of(c)) {
                    exprs.push(crate::expr::Expr::Column(i));
                    columns.push(Column {
                        name: c.name.clone(),
                        ty: c.ty.clone(),
                        table_oid: c.table_oid,
                        column_id: c.column_id,
                    });
                }
            }
            ast::SelectItem::UnnamedExpr(e) => {
                let (x, t) = b.expr(e, scope)?;
                exprs.push(x);
                columns.push(Column::computed(
                    select::derive_name(e),
                    if t == DataType::Unknown { DataType::Text } else { t },
                ));
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                let (x, t) = b.expr(expr, scope)?;
                exprs.push(x);
                columns.push(Column::computed(bind::ident(alias), t));
            }
            other => bail!(FeatureNotSupported, "RETURNING item not supported: {other}"),
        }
    }
    Ok((exprs, columns))
}

fn plan_insert(b: &mut Binder<'_>, ins: &ast::Insert) -> Result<InsertPlan> {
    let target = table_name(&ins.table)?;
    let mut privs = crate::acl::INSERT;
    if ins.returning.is_some() {
        privs |= crate::acl::SELECT;
    }
    if let Some(ast::OnInsert::OnConflict(c)) = &ins.on {
        if matches!(c.action, ast::OnConflictAction::DoUpdate(_)) {
            privs |= crate::acl::UPDATE | crate::acl::SELECT;
        }
    }
    // A view with an INSTEAD OF INSERT trigger takes the rows as a
    // table would (its triggers see them); another view writes its table.
    let named = views::named_view(b, &target);
    let instead = named.as_ref().filter(|v| v.has_instead(crate::catalog::TriggerDef::INSERT));
    let view = match (&named, instead) {
        (Some(v), None) => Some(views::resolve(b, v, views::Op::Insert, privs)?),
        _ => None,
    };
    let table = match (&view, instead) {
        (Some(v), _) => v.table.clone(),
        (None, Some(v)) => {
            b.require(crate::catalog::Relation::View(v.clone()), privs);
            Arc::new(v.trigger_shell(b.catalog))
        }
        (None, None) => {
            let t = b.catalog.query_table(&target)?;
            b.require(crate::catalog::Relation::Table(t.clone()), privs);
            t
        }
    };
    // ON CONFLICT on a view with INSTEAD OF triggers finds no unique
    // constraint to conflict in: without a target it changes nothing.
    let instead = instead.is_some();
    // The relation's columns as the statement names them (a view's, or
    // the table's), and the table column each one writes.
    let (name, names) = match &view {
        Some(v) => (v.view.name.clone(), v.view.columns.clone()),
        None => (table.name.clone(), table.columns.iter().map(|c| c.name.clone()).collect()),
    };
    let to_table = |j: usize| match &view {
        Some(v) => v.column(j, &names[j], views::Op::Insert),
        None => Ok(j),
    };
    let (overriding, columns) = overriding(&ins.columns);
    let named = insert_columns(&names, columns, &name)?;
    // A view column that is not a table column may not be given a value;
    // those after the values given are not written.
    let given = |n: usize| named.iter().take(n).map(|&j| to_table(j)).collect::<Result<Vec<_>>>();
    let types = table.types();
    // The rows to insert, and the table column each of their values goes to.
    let (source, targets) = match &ins.source {
        None => (Plan::Values(vec![vec![]]), Vec::new()),
        Some(q) => match q.body.as_ref() {
            ast::SetExpr::Values(v) if q.order_by.is_none() && q.limit_clause.is_none() => {
                let width = v.rows.iter().map(|r| r.content.len()).max().unwrap_or(0);
                let targets = given(named.len().min(width))?;
                let empty = Scope::default();
                let mut rows = Vec::with_capacity(v.rows.len());
                for row in &v.rows {
                    if row.content.len() > named.len() {
                        bail!(SyntaxError, "INSERT has more expressions than target columns");
                    }
                    if row.content.len() < named.len() && !columns.is_empty() {
                        bail!(SyntaxError, "INSERT has more target columns than expressions");
                    }
                    let mut r = Vec::with_capacity(row.content.len());
                    for (e, &t) in row.content.iter().zip(&targets) {
                        if takes_default(e, &table, t, overriding) {
                            r.push(default_value(b.catalog, &table, view.as_ref(), t)?);
                        } else {
                            check_not_generated_always(&table, t, overriding)?;
                            let column = (table.columns[t].name.as_str(), &types[t]);
                            r.push(b.assign_column(e, &empty, column)?);
                        }
                    }
                    rows.push(r);
                }
                let first = rows.first().map_or(0, Vec::len);
                (Plan::Values(rows), targets[..first].to_vec())
            }
            _ => {
                // As in PostgreSQL, the select list's untyped literals
                // (`NULL`, `'1'`) take the target columns' types instead
                // of text.
                b.set_op_leaf =
                    q.with.is_none() && matches!(q.body.as_ref(), ast::SetExpr::Select(_));
                let (p, cols) = b.query(q)?;
                if cols.len() > named.len() {
                    bail!(SyntaxError, "INSERT has more expressions than target columns");
                }
                let targets = given(cols.len())?;
                for &t in &targets {
                    check_not_generated_always(&table, t, overriding)?;
                }
                let mut exprs = Vec::new();
                for (i, (c, &t)) in cols.iter().zip(&targets).enumerate() {
                    if !sqltypes::cast::can_assign(&c.ty, &types[t]) && c.ty != DataType::Unknown {
                        return Err(bind::mismatched_column(
                            &table.columns[t].name,
                            &types[t],
                            &c.ty,
                        ));
                    }
                    if user_overrides(&table, t, overriding) {
                        exprs.push(default_value(b.catalog, &table, view.as_ref(), t)?);
                        continue;
                    }
                    exprs.push(b.coerce_assigned(
                        crate::expr::Expr::Column(i),
                        &c.ty,
                        &types[t],
                    )?);
                }
                (Plan::Project(Box::new(p), exprs), targets)
            }
        },
    };
    let mut defaults = table_defaults(b.catalog, &table)?;
    if let Some(v) = &view {
        // The views' defaults go before the table's; one on a computed
        // column the statement leaves out cannot be written.
        for (j, d) in v.view.defaults.iter().enumerate() {
            if d.is_some() && !named[..targets.len().min(named.len())].contains(&j) {
                to_table(j)?;
            }
        }
        for (d, vd) in defaults.iter_mut().zip(&v.defaults) {
            if vd.is_some() {
                d.clone_from(vd);
            }
        }
    }
    let qualifier =
        ins.table_alias.as_ref().map(|a| bind::ident(&a.alias)).unwrap_or_else(|| name.clone());
    let scope = match &view {
        Some(v) => v.scope(&qualifier, &None),
        None => select::table_scope(&table, &qualifier, &None),
    };
    let (on_conflict, arbiters) = match &ins.on {
        None => (None, Vec::new()),
        Some(on) => {
            let (oc, arbiters) = plan_on_conflict(b, (&table, view.as_ref()), &scope, on)?;
            (Some(oc), arbiters)
        }
    };
    let mut ret = returning(b, &ins.returning, &scope)?;
    let mut checks = Vec::new();
    if let Some(v) = &view {
        over_table(v, &mut ret);
        checks = v.checks.clone();
    }
    Ok(InsertPlan {
        table,
        targets,
        source,
        defaults,
        returning: ret,
        on_conflict,
        arbiters,
        checks,
        instead,
        init: Vec::new(),
        routed: false,
    })
}

/// What an INSERT's OVERRIDING clause does with the values it gives
/// identity columns: with SYSTEM VALUE they are written (also to GENERATED
/// ALWAYS ones), with USER VALUE their defaults are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Overriding {
    No,
    System,
    User,
}

/// An INSERT column list's OVERRIDING marker (the parser writes it first,
/// see `parse::overriding`), and the columns named after it.
fn overriding(columns: &[ast::ObjectName]) -> (Overriding, &[ast::ObjectName]) {
    let Some((first, rest)) = columns.split_first() else { return (Overriding::No, columns) };
    match bind::object_name(first) {
        Ok(n) if n == crate::parse::OVERRIDING_SYSTEM => (Overriding::System, rest),
        Ok(n) if n == crate::parse::OVERRIDING_USER => (Overriding::User, rest),
        _ => (Overriding::No, columns),
    }
}

/// True if INSERT writes column `t`'s default for value `e`: DEFAULT, or
/// any value for an identity column under OVERRIDING USER VALUE.
fn takes_default(e: &ast::Expr, table: &TableDef, t: usize, overriding: Overriding) -> bool {
    is_default(e) || user_overrides(table, t, overriding)
}

/// True if OVERRIDING USER VALUE replaces column `t`'s value by its
/// default (an identity column's).
fn user_overrides(table: &TableDef, t: usize, overriding: Overriding) -> bool {
    overriding == Overriding::User && table.columns[t].identity.is_some()
}

/// The positions in `names` (a relation's column names) of an INSERT's
/// column list; all of them when it has none.
fn insert_columns(
    names: &[String],
    columns: &[ast::ObjectName],
    relation: &str,
) -> Result<Vec<usize>> {
    if columns.is_empty() {
        return Ok((0..names.len()).collect());
    }
    let mut v = Vec::with_capacity(columns.len());
    for c in columns {
        let (cn, _) = column_target(c, relation, |_| None)?;
        let i = names.iter().position(|n| *n == cn).ok_or_else(|| {
            err!(UndefinedColumn, "column \"{cn}\" of relation \"{relation}\" does not exist")
        })?;
        if v.contains(&i) {
            bail!(DuplicateColumn, "column \"{cn}\" specified more than once");
        }
        v.push(i);
    }
    Ok(v)
}

/// Each column's DEFAULT expression (None: NULL), as INSERT fills them.
fn table_defaults(cat: &Catalog, table: &TableDef) -> Result<Vec<Option<Expr>>> {
    table.columns.iter().map(|c| crate::ddl::column_default(cat, c)).collect()
}

/// The name and table column of SET assignment `a` (through `view`, the
/// view's column the name is), and the fields of a composite column it
/// assigns to (`SET c.f = ...`; none for the whole column): 42703 when
/// there is none, 42701 when `sets` (if given) assigns it already, 428C9
/// for a generated column set to anything but DEFAULT.
fn set_column(
    table: &TableDef,
    view: Option<&views::ViewTarget>,
    a: &ast::Assignment,
    sets: Option<&[(usize, Expr)]>,
) -> Result<(String, usize, Vec<String>)> {
    let relation = view.map_or(&table.name, |v| &v.view.name);
    let (cn, fields) = assigned_column(a, relation, table)?;
    let found = match view {
        Some(_) if !fields.is_empty() => {
            bail!(FeatureNotSupported, "assignment to a field through a view is not supported")
        }
        Some(v) => v.assigned(&cn, views::Op::Update)?,
        None => table.column_index(&cn),
    };
    let Some(i) = found else {
        bail!(UndefinedColumn, "column \"{cn}\" of relation \"{relation}\" does not exist");
    };
    // Assignments to fields of one column combine.
    if fields.is_empty() && sets.is_some_and(|s| s.iter().any(|(c, _)| *c == i)) {
        bail!(SyntaxError, "multiple assignments to same column \"{cn}\"");
    }
    refuse_generated_set(table, i, &a.value)?;
    Ok((cn, i, fields))
}

/// The column an INSERT column list or a SET names, and the fields of a
/// composite column a qualified name goes on to (42804 when the column is
/// not of a composite type); `ty` gives a column's type, if the relation
/// has it.
fn column_target(
    n: &ast::ObjectName,
    relation: &str,
    ty: impl Fn(&str) -> Option<DataType>,
) -> Result<(String, Vec<String>)> {
    let parts: Vec<String> = n.0.iter().filter_map(|p| p.as_ident()).map(bind::ident).collect();
    match parts.as_slice() {
        [one] => Ok((one.clone(), Vec::new())),
        [first, field, ..] => match ty(first) {
            Some(DataType::Record(r)) if r.named.is_some() => {
                Ok((first.clone(), parts[1..].to_vec()))
            }
            Some(t) => bail!(
                DatatypeMismatch,
                "cannot assign to field \"{field}\" of column \"{first}\" because its type {t} is not a composite type"
            ),
            None => {
                bail!(UndefinedColumn, "column \"{first}\" of relation \"{relation}\" does not exist")
            }
        },
        [] => bail!(SyntaxError, "invalid name {n}"),
    }
}

/// The column a SET assignment names and the fields it goes on to (see
/// [`column_target`]; `table` has the columns whose types its error
/// names).
fn assigned_column(
    a: &ast::Assignment,
    relation: &str,
    table: &TableDef,
) -> Result<(String, Vec<String>)> {
    let ty = |c: &str| table.column_index(c).map(|i| table.columns[i].ty.to_type());
    match &a.target {
        ast::AssignmentTarget::ColumnName(n) => column_target(n, relation, ty),
        ast::AssignmentTarget::Tuple(_) => {
            bail!(FeatureNotSupported, "multi-column SET from a sub-SELECT is not supported yet")
        }
    }
}

/// The type of field `fields` of column `column` of type `ty`, for `SET
/// column.field[.field...] = ...` (42703 for a field the type lacks,
/// 42804 for a field of a field that is not composite).
fn field_type(column: &str, ty: &DataType, fields: &[String]) -> Result<DataType> {
    let mut ty = ty.clone();
    for f in fields {
        let DataType::Record(rt) = &ty else {
            bail!(
                DatatypeMismatch,
                "cannot assign to field \"{f}\" of column \"{column}\" because its type {ty} is not a composite type"
            );
        };
        let Some(k) = rt.field(f) else {
            bail!(
                UndefinedColumn,
                "cannot assign to field \"{f}\" of column \"{column}\" because there is no such column in data type {ty}"
            );
        };
        ty = rt.fields[k].1.clone();
    }
    Ok(ty)
}

/// `base` (a record of composite type `ty`) with field path `fields` set
/// to `value`, the other fields as they are: PostgreSQL's FieldStore (a
/// NULL base makes a record of NULLs).
fn field_store(base: Expr, ty: &DataType, fields: &[String], value: Expr) -> Expr {
    let (DataType::Record(rt), Some((first, rest))) = (ty, fields.split_first()) else {
        return value;
    };
    let k = rt.field(first).unwrap_or(usize::MAX);
    let field = |j: usize| Expr::Field(Box::new(base.clone()), j);
    let mut value = Some(value);
    let items = rt.fields.iter().enumerate().map(|(j, (_, ft))| match value.take_if(|_| j == k) {
        Some(v) => field_store(field(j), ft, rest, v),
        None => field(j),
    });
    Expr::Row(rt.clone(), items.collect())
}

/// Binds SET assignment `a` to column `i` (`cn`, of type `ty`) through
/// `fields`: the whole column when there are none, else the column's
/// value (or what earlier assignments in `sets` made it) with those
/// fields replaced.
fn assign_set(
    b: &mut Binder<'_>,
    a: &ast::Assignment,
    scope: &Scope,
    (cn, i, fields): (&str, usize, &[String]),
    ty: &DataType,
    sets: &mut Vec<(usize, Expr)>,
) -> Result<Option<Expr>> {
    if fields.is_empty() {
        return Ok(None);
    }
    let fty = field_type(cn, ty, fields)?;
    let value = b.assign_column(&a.value, scope, (cn, &fty))?;
    let base = match sets.iter().position(|(c, _)| *c == i) {
        Some(p) => sets.remove(p).1,
        None => Expr::Column(i),
    };
    Ok(Some(field_store(base, ty, fields, value)))
}

/// RETURNING bound over a view's columns, rewritten over its table's row.
fn over_table(v: &views::ViewTarget, ret: &mut Option<Returning>) {
    let Some(ret) = ret else { return };
    for e in &mut ret.exprs {
        *e = v.to_table(e);
    }
    // The subqueries read the view's columns.
    if !ret.per_row.subs.is_empty() {
        ret.per_row.view.clone_from(&v.exprs);
    }
}

/// ON CONFLICT of an INSERT into `table`, or through view `view` (then its
/// column names and `scope` are the view's, and the expressions are
/// rewritten over the existing and proposed table rows).
fn plan_on_conflict(
    b: &mut Binder<'_>,
    (table, view): (&crate::catalog::TableDef, Option<&views::ViewTarget>),
    scope: &Scope,
    on: &ast::OnInsert,
) -> Result<(OnConflict, Vec<Option<usize>>)> {
    // The table column a name the statement uses stands for.
    let column = |name: &str| match view {
        Some(v) => v.view.columns.iter().position(|c| c == name).and_then(|j| v.columns[j]),
        None => table.column_index(name),
    };
    let ast::OnInsert::OnConflict(oc) = on else {
        bail!(FeatureNotSupported, "ON DUPLICATE KEY UPDATE is MySQL syntax; use ON CONFLICT");
    };
    let no_match = || {
        err!(
            InvalidColumnReference,
            "there is no unique or exclusion constraint matching the ON CONFLICT specification"
        )
    };
    // The unique constraints a conflict is looked for in (None: the
    // primary key): without a target, all of them.
    let has_pk = !table.primary_key.is_empty();
    let unique = |i: &usize| table.indexes[*i].unique && table.indexes[*i].predicate.is_none();
    let arbiters: Vec<Option<usize>> = match &oc.conflict_target {
        None => {
            let indexes = (0..table.indexes.len()).filter(|&i| table.indexes[i].unique).map(Some);
            has_pk.then_some(None).into_iter().chain(indexes).collect()
        }
        Some(ast::ConflictTarget::Columns(cols)) => {
            let mut want: Vec<usize> = Vec::new();
            for c in cols {
                want.push(column(&bind::ident(c)).ok_or_else(no_match)?);
            }
            want.sort_unstable();
            want.dedup();
            let sorted = |cols: &[usize]| {
                let mut c = cols.to_vec();
                c.sort_unstable();
                c
            };
            if has_pk && sorted(&table.primary_key) == want {
                vec![None]
            } else {
                let plain = |i: &usize| table.indexes[*i].is_plain();
                let found = (0..table.indexes.len())
                    .filter(unique)
                    .filter(plain)
                    .find(|&i| sorted(&table.indexes[i].columns) == want);
                vec![Some(found.ok_or_else(no_match)?)]
            }
        }
        Some(ast::ConflictTarget::OnConstraint(n)) if inference(n).is_some() => {
            if view.is_some() {
                bail!(
                    FeatureNotSupported,
                    "ON CONFLICT with expressions or WHERE is not supported on views"
                );
            }
            inferred_arbiters(b.catalog, table, inference(n).unwrap_or_default())?
        }
        Some(ast::ConflictTarget::OnConstraint(n)) => {
            let cname = bind::object_name(n)?;
            let found = table
                .indexes
                .iter()
                .position(|i| i.constraint && i.unique && i.name == cname && i.predicate.is_none());
            match found {
                Some(i) => vec![Some(i)],
                None if has_pk && table.pkey_name.as_deref() == Some(cname.as_str()) => vec![None],
                None => bail!(
                    UndefinedObject,
                    "constraint \"{cname}\" for table \"{}\" does not exist",
                    table.name
                ),
            }
        }
    };
    let deferrable = |a: &Option<usize>| match a {
        None => table.pkey_deferral.is_some(),
        Some(i) => table.indexes[*i].deferral.is_some(),
    };
    if arbiters.iter().any(deferrable) {
        bail!(
            ObjectNotInPrerequisiteState,
            "ON CONFLICT does not support deferrable unique constraints/exclusion constraints as arbiters"
        );
    }
    match &oc.action {
        ast::OnConflictAction::DoNothing => Ok((OnConflict::DoNothing, arbiters)),
        ast::OnConflictAction::DoUpdate(du) => {
            if oc.conflict_target.is_none() {
                return Err(err!(
                    SyntaxError,
                    "ON CONFLICT DO UPDATE requires inference specification or constraint name"
                )
                .with_hint("For example, ON CONFLICT (column_name)."));
            }
            // Existing row's columns, then the proposed row's as `excluded`.
            let mut pair = scope.clone();
            let excluded = match view {
                Some(v) => v.scope("excluded", &None),
                None => select::table_scope(table, "excluded", &None),
            };
            pair.cols.extend(excluded.cols);
            // Through a view: over the existing table row, then the
            // proposed one.
            let over = |e: Expr| match view {
                None => e,
                Some(v) => {
                    let (n, w) = (v.exprs.len(), table.columns.len());
                    e.remap_columns(&|i| match i < n {
                        true => v.exprs[i].clone(),
                        false => v.exprs[i - n].remap_columns(&|c| Expr::Column(c + w)),
                    })
                }
            };
            // Correlated subqueries run per conflicting row (not through a
            // view, whose rows they would read); their values follow the
            // pair.
            let mark = b.correlated.len();
            let corr = match view {
                None => b.corr.replace(bind::CorrCtx { mark, width: pair.cols.len() }),
                Some(_) => b.corr.take(),
            };
            let r = do_update(b, du, (table, view), &pair, over);
            b.corr = corr;
            let (sets, filter, filtering) = r?;
            let subs = b.correlated.split_off(mark);
            let per_row = crate::dml::PerRow { subs, filter, view: Vec::new(), filtering };
            Ok((OnConflict::DoUpdate { sets, per_row }, arbiters))
        }
    }
}

/// DO UPDATE's assignments, WHERE clause and the number of correlated
/// subqueries it bound (see [`do_update`]).
type DoUpdate = (Vec<(usize, Expr)>, Option<Expr>, usize);

/// DO UPDATE's SET and WHERE over `pair` (the existing row's columns,
/// then the proposed row's), rewritten by `over`, and the number of
/// correlated subqueries the WHERE clause bound (before the SET's).
fn do_update(
    b: &mut Binder<'_>,
    du: &ast::DoUpdate,
    (table, view): (&crate::catalog::TableDef, Option<&views::ViewTarget>),
    pair: &Scope,
    over: impl Fn(Expr) -> Expr,
) -> Result<DoUpdate> {
    let mark = b.correlated.len();
    let filter = match &du.selection {
        Some(w) => {
            let (x, t) = b.expr(w, pair)?;
            Some(over(b.coerce(x, &t, &DataType::Bool)?))
        }
        None => None,
    };
    let filtering = b.correlated.len() - mark;
    let mut sets = Vec::new();
    for a in &du.assignments {
        let (cn, i, fields) = set_column(table, view, a, None)?;
        let ty = table.columns[i].ty.to_type();
        if let Some(e) = assign_set(b, a, pair, (&cn, i, &fields), &ty, &mut sets)? {
            sets.push((i, over(e)));
            continue;
        }
        let e = match is_default(&a.value) {
            true => set_default(b.catalog, table, view, &cn, i)?,
            false => over(b.assign_column(&a.value, pair, (&cn, &ty))?),
        };
        sets.push((i, e));
    }
    Ok((sets, filter, filtering))
}

/// A generated column takes only its default, and so does a GENERATED
/// ALWAYS identity column unless the INSERT says OVERRIDING SYSTEM VALUE.
fn check_not_generated_always(t: &TableDef, col: usize, overriding: Overriding) -> Result<()> {
    let c = &t.columns[col];
    if c.generated {
        return Err(err!(
            GeneratedAlways,
            "cannot insert a non-DEFAULT value into column \"{}\"",
            c.name
        )
        .with_detail(format!("Column \"{}\" is a generated column.", c.name)));
    }
    if c.identity == Some('a') && overriding == Overriding::No {
        return Err(err!(
            GeneratedAlways,
            "cannot insert a non-DEFAULT value into column \"{}\"",
            c.name
        )
        .with_detail(format!(
            "Column \"{}\" is an identity column defined as GENERATED ALWAYS.",
            c.name
        ))
        .with_hint("Use OVERRIDING SYSTEM VALUE to override."));
    }
    Ok(())
}

/// A SET of generated column `col`, or of a GENERATED ALWAYS identity
/// column, to anything but DEFAULT.
fn refuse_generated_set(t: &TableDef, col: usize, value: &ast::Expr) -> Result<()> {
    let c = &t.columns[col];
    if is_default(value) {
        return Ok(());
    }
    let refused = |detail: String| {
        err!(GeneratedAlways, "column \"{}\" can only be updated to DEFAULT", c.name)
            .with_detail(detail)
    };
    if c.generated {
        return Err(refused(format!("Column \"{}\" is a generated column.", c.name)));
    }
    if c.identity == Some('a') {
        return Err(refused(format!(
            "Column \"{}\" is an identity column defined as GENERATED ALWAYS.",
            c.name
        )));
    }
    Ok(())
}

fn is_default(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
}

/// What `SET name = DEFAULT` writes to column `col` of table `t`: through
/// `view`, the view column's own default or NULL.
fn set_default(
    cat: &Catalog,
    t: &crate::catalog::TableDef,
    view: Option<&views::ViewTarget>,
    name: &str,
    col: usize,
) -> Result<crate::expr::Expr> {
    match view {
        Some(v) => v.default(cat, name),
        None => default_value(cat, t, None, col),
    }
}

/// What DEFAULT writes to column `col` of table `t`, written through
/// `view` if one: the view's default for it, else the table's, else NULL.
fn default_value(
    cat: &Catalog,
    t: &crate::catalog::TableDef,
    view: Option<&views::ViewTarget>,
    col: usize,
) -> Result<crate::expr::Expr> {
    if let Some(Some(d)) = view.and_then(|v| v.defaults.get(col)) {
        return Ok(d.clone());
    }
    Ok(crate::ddl::column_default(cat, &t.columns[col])?
        .unwrap_or(crate::expr::Expr::Const(sqltypes::Value::Null)))
}

/// What [`target_scan`] finds: the scan of the table written, the scope
/// of the statement's clauses, the FROM items' join, the WHERE conjuncts
/// that read correlated subqueries, and the view written through (then
/// the clauses are bound over the view's columns, and the scan's filter
/// and join already rewritten over the table's row).
type Target = (Scan, Scope, Option<crate::dml::Joined>, Option<Expr>, Option<views::ViewTarget>);

/// The table an UPDATE or DELETE writes (with privilege `write`), scanned
/// with its WHERE; with FROM (USING) `items`, the join with them, whose
/// columns follow the table's in the scope.
fn target_scan(
    b: &mut Binder<'_>,
    twj: &ast::TableWithJoins,
    selection: &Option<ast::Expr>,
    items: Option<&[ast::TableWithJoins]>,
    (write, returning, constant_sets): (u16, bool, bool),
) -> Result<Target> {
    if !twj.joins.is_empty() {
        bail!(FeatureNotSupported, "joins in UPDATE/DELETE targets are not supported yet");
    }
    let (name, alias) = match &twj.relation {
        ast::TableFactor::Table { name, alias, args: None, .. } => (bind::obj_name(name)?, alias),
        other => bail!(FeatureNotSupported, "UPDATE/DELETE target not supported: {other}"),
    };
    // Reading the rows (a WHERE, RETURNING or SET expression) needs
    // SELECT too; PostgreSQL asks it per column read, Strata per table.
    let reads = selection.is_some() || returning || !constant_sets;
    let privs = write | if reads { crate::acl::SELECT } else { 0 };
    let op = if write == crate::acl::UPDATE { views::Op::Update } else { views::Op::Delete };
    let view = match views::named_view(b, &name) {
        Some(v) => Some(views::resolve(b, &v, op, privs)?),
        None => None,
    };
    let table = match &view {
        Some(v) => v.table.clone(),
        None => {
            let t = b.catalog.query_table(&name)?;
            b.require(crate::catalog::Relation::Table(t.clone()), privs);
            t
        }
    };
    let name = view.as_ref().map_or_else(|| table.name.clone(), |v| v.view.name.clone());
    let qualifier = alias.as_ref().map(|a| bind::ident(&a.name)).unwrap_or_else(|| name.clone());
    let scope = match &view {
        Some(v) => v.scope(&qualifier, alias),
        None => select::table_scope(&table, &qualifier, alias),
    };
    let over = |e: Option<Expr>| match &view {
        Some(v) => e.map(|e| v.to_table(&e)),
        None => e,
    };
    let viewed = view.as_ref().and_then(|v| v.filter.clone());
    let mut scan = Scan::full(table, false);
    if let Some(cursor) = current_of(b, selection)? {
        if items.is_some() || view.is_some() {
            bail!(
                FeatureNotSupported,
                "WHERE CURRENT OF is supported only on a table, without FROM or USING"
            );
        }
        allow_correlated(b, &scope);
        scan.access = crate::plan::Access::Current(cursor);
        return Ok((scan, scope, None, None, view));
    }
    if let Some(items) = items {
        // FROM / USING: the WHERE clause joins the target with the items.
        let (plan, item_scope) = select::plan_from(b, items)?;
        if item_scope.cols.iter().any(|c| c.qualifier.as_deref() == Some(qualifier.as_str())) {
            bail!(DuplicateAlias, "table name \"{qualifier}\" specified more than once");
        }
        let mut scope = scope;
        scope.cols.extend(item_scope.cols);
        allow_correlated(b, &scope);
        let (filter, late) = where_clause(b, selection, &scope)?;
        let filter = crate::expr::and_all(viewed.into_iter().chain(over(filter)).collect());
        let joined = crate::dml::Joined { plan, filter };
        return Ok((scan, scope, Some(joined), over(late), view));
    }
    allow_correlated(b, &scope);
    let (pred, late) = where_clause(b, selection, &scope)?;
    let pred = crate::expr::and_all(viewed.into_iter().chain(over(pred)).collect());
    if let Some(pred) = pred {
        if let Plan::Scan(s) = select::push_filter(Plan::Scan(scan), pred) {
            scan = s;
        } else {
            unreachable!("push_filter keeps a scan a scan");
        }
    }
    Ok((scan, scope, None, over(late), view))
}

/// The text of an ON CONFLICT inference the parser carried in a
/// constraint name (see [`crate::parse::INFERENCE`]).
fn inference(n: &ast::ObjectName) -> Option<&str> {
    let [part] = n.0.as_slice() else { return None };
    let name = &part.as_ident()?.value;
    name.strip_prefix(crate::parse::INFERENCE)
}

/// The arbiters of `ON CONFLICT (elements) [WHERE predicate]` (`spec` is
/// the two texts, split by [`crate::parse::INFERENCE`]): every unique
/// index (or the primary key) whose keys are exactly the elements, columns
/// or expressions in any order, and which is not partial or whose
/// condition's conjuncts are among the predicate's.
fn inferred_arbiters(cat: &Catalog, table: &TableDef, spec: &str) -> Result<Vec<Option<usize>>> {
    let (elements, predicate) = spec.split_once(crate::parse::INFERENCE).unwrap_or((spec, ""));
    let parse = |text: &str| {
        crate::parse::expr_text(text)
            .map_err(|_| err!(SyntaxError, "syntax error in ON CONFLICT target: {text}"))
    };
    let scope = select::table_scope(table, &table.name, &None);
    let list = match parse(&format!("({elements})"))? {
        ast::Expr::Tuple(v) => v,
        ast::Expr::Nested(e) => vec![*e],
        e => vec![e],
    };
    let mut keys = Vec::with_capacity(list.len());
    for e in list {
        let e = match e {
            ast::Expr::Collate { expr, .. } => *expr,
            e => e,
        };
        keys.push(crate::catalog::index_expr(cat, &e, &scope, false)?.0);
    }
    let mut given = Vec::new();
    if !predicate.trim().is_empty() {
        let p = crate::catalog::index_expr(cat, &parse(predicate)?, &scope, true)?.0;
        crate::expr::conjuncts(p, &mut given);
    }
    let same = |other: &[Expr]| {
        keys.iter().all(|k| other.contains(k)) && other.iter().all(|k| keys.contains(k))
    };
    let columns = |cols: &[usize]| cols.iter().map(|&c| Expr::Column(c)).collect::<Vec<_>>();
    let mut out = Vec::new();
    if !table.primary_key.is_empty() && same(&columns(&table.primary_key)) {
        out.push(None);
    }
    for (i, idx) in table.indexes.iter().enumerate().filter(|(_, x)| x.unique) {
        let (index_keys, condition) = match &idx.bound {
            Some(b) => (b.keys.clone(), b.predicate.clone()),
            None => (columns(&idx.columns), None),
        };
        if !same(&index_keys) {
            continue;
        }
        let implied = match condition {
            None => true,
            Some(c) => {
                let mut needed = Vec::new();
                crate::expr::conjuncts(c, &mut needed);
                needed.iter().all(|n| given.contains(n))
            }
        };
        if implied {
            out.push(Some(i));
        }
    }
    if out.is_empty() {
        bail!(
            InvalidColumnReference,
            "there is no unique or exclusion constraint matching the ON CONFLICT specification"
        );
    }
    Ok(out)
}

/// `WHERE CURRENT OF cursor` (read as a call, see
/// [`crate::parse::CURRENT_OF`]): the cursor's name, as an expression (a
/// name as written, or a PL/pgSQL variable's parameter).
fn current_of(b: &mut Binder<'_>, selection: &Option<ast::Expr>) -> Result<Option<Expr>> {
    let Some(args) =
        selection.as_ref().and_then(|s| crate::parse::marker_args(s, crate::parse::CURRENT_OF))
    else {
        return Ok(None);
    };
    let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] = args else {
        return Ok(None);
    };
    Ok(Some(match arg {
        ast::Expr::Identifier(i) => Expr::Const(sqltypes::Value::Text(bind::ident(i))),
        other => {
            let (e, t) = b.expr(other, &Scope::default())?;
            b.coerce(e, &t, &DataType::Text)?
        }
    }))
}

/// Lets the WHERE and SET clauses of an UPDATE or DELETE over `scope` hold
/// correlated subqueries (their values follow the scope's columns), until
/// [`correlated_subqueries`] collects them.
fn allow_correlated(b: &mut Binder<'_>, scope: &Scope) {
    b.corr = Some(bind::CorrCtx { mark: b.correlated.len(), width: scope.cols.len() });
}

/// The correlated subqueries bound since [`allow_correlated`], with the
/// WHERE conjuncts that read them (RETURNING binds its own).
fn correlated_subqueries(
    b: &mut Binder<'_>,
    late: Option<Expr>,
    view: Option<&views::ViewTarget>,
    filtering: usize,
) -> crate::dml::PerRow {
    let Some(ctx) = b.corr.take() else { return crate::dml::PerRow::default() };
    let subs = b.correlated.split_off(ctx.mark);
    // Through a view, the subqueries read the view's columns.
    let view = match view {
        Some(v) if !subs.is_empty() => v.exprs.clone(),
        _ => Vec::new(),
    };
    crate::dml::PerRow { subs, filter: late, view, filtering }
}

/// How many correlated subqueries were bound since [`allow_correlated`]
/// (after the WHERE clause: those it reads).
fn bound_correlated(b: &Binder<'_>) -> usize {
    b.corr.map_or(0, |c| b.correlated.len() - c.mark)
}

/// An UPDATE's or DELETE's WHERE clause over `scope`, split into the
/// conjuncts a scan can check and those that read correlated subqueries'
/// values (columns after the scope's).
fn where_clause(
    b: &mut Binder<'_>,
    selection: &Option<ast::Expr>,
    scope: &Scope,
) -> Result<(Option<Expr>, Option<Expr>)> {
    let Some(w) = selection else { return Ok((None, None)) };
    if bind::contains_aggregate(w) {
        bail!(GroupingError, "aggregate functions are not allowed in WHERE");
    }
    let (pred, t) = b.expr(w, scope)?;
    let pred = b.coerce(pred, &t, &DataType::Bool)?;
    let width = scope.cols.len();
    let mut parts = Vec::new();
    crate::expr::conjuncts(pred, &mut parts);
    let (late, early): (Vec<Expr>, Vec<Expr>) = parts.into_iter().partition(|p| {
        let mut reads = false;
        p.walk(&mut |x| reads |= x.as_column().is_some_and(|c| c >= width));
        reads
    });
    Ok((crate::expr::and_all(early), crate::expr::and_all(late)))
}

/// True when `e` may read a column (any identifier outside a subquery
/// counts).
fn reads_columns(e: &ast::Expr) -> bool {
    use sqlparser::ast::Visit;
    struct Finder(bool);
    impl ast::Visitor for Finder {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> std::ops::ControlFlow<()> {
            if matches!(e, ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)) {
                self.0 = true;
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut f = Finder(false);
    let _ = e.visit(&mut f);
    f.0
}

fn plan_update(b: &mut Binder<'_>, u: &ast::Update) -> Result<UpdatePlan> {
    let items = match &u.from {
        Some(ast::UpdateTableFromKind::AfterSet(items)) => Some(items.as_slice()),
        Some(ast::UpdateTableFromKind::BeforeSet(_)) => {
            bail!(SyntaxError, "syntax error at or near \"FROM\"")
        }
        None => None,
    };
    let constant_sets =
        u.assignments.iter().all(|a| is_default(&a.value) || !reads_columns(&a.value));
    let needs = (crate::acl::UPDATE, u.returning.is_some(), constant_sets);
    let from = (&u.table, items.unwrap_or_default(), &u.selection);
    let update = crate::catalog::TriggerDef::UPDATE;
    let privs = crate::acl::UPDATE | crate::acl::SELECT;
    if let Some(i) = views::instead(b, from, &u.assignments, update, privs)? {
        let ret = returning(b, &u.returning, &i.scope)?;
        return Ok(UpdatePlan {
            scan: Scan::full(i.shell, false),
            join: None,
            sets: i.sets,
            init: Vec::new(),
            per_row: Default::default(),
            returning: ret,
            checks: Vec::new(),
            instead: Some(i.rows),
            partitions: Vec::new(),
            root: None,
        });
    }
    let (scan, scope, join, late, view) = target_scan(b, &u.table, &u.selection, items, needs)?;
    let filtering = bound_correlated(b);
    let table = scan.table.clone();
    let mut sets = Vec::new();
    for a in &u.assignments {
        // Through a view: its column, and the table column that is.
        let (cn, i, fields) = set_column(&table, view.as_ref(), a, Some(&sets))?;
        let ty = table.columns[i].ty.to_type();
        if let Some(e) = assign_set(b, a, &scope, (&cn, i, &fields), &ty, &mut sets)? {
            sets.push((i, e));
            continue;
        }
        let e = if is_default(&a.value) {
            set_default(b.catalog, &table, view.as_ref(), &cn, i)?
        } else {
            let e = b.assign_column(&a.value, &scope, (&cn, &ty))?;
            match &view {
                Some(v) => v.to_table(&e),
                None => e,
            }
        };
        sets.push((i, e));
    }
    let per_row = correlated_subqueries(b, late, view.as_ref(), filtering);
    let mut ret = returning(b, &u.returning, &scope)?;
    let checks = view.as_ref().map(|v| v.checks.clone()).unwrap_or_default();
    if let Some(v) = &view {
        over_table(v, &mut ret);
    }
    let init = b.subqueries.drain(..).collect();
    let mut plan = UpdatePlan {
        scan,
        join,
        sets,
        init,
        per_row,
        returning: ret,
        checks,
        instead: None,
        partitions: Vec::new(),
        root: None,
    };
    if plan.scan.table.is_partitioned() {
        let root = plan.scan.table.clone();
        for leaf in leaf_targets(b, &u.table, &root) {
            let mut one = u.clone();
            one.table = leaf;
            let checks = b.checks.len();
            let mut p = plan_update(b, &one)?;
            // Privileges are the partitioned table's, as in PostgreSQL.
            b.checks.truncate(checks);
            p.root = Some(root.clone());
            plan.partitions.push(p);
        }
    }
    Ok(plan)
}

/// The target of an UPDATE or DELETE through partitioned table `root`,
/// once per leaf partition: the leaf, named as the statement names the
/// parent so that its columns resolve alike.
fn leaf_targets(
    b: &Binder<'_>,
    twj: &ast::TableWithJoins,
    root: &TableDef,
) -> Vec<ast::TableWithJoins> {
    let mut out = Vec::new();
    for leaf in crate::partition::leaves(&b.catalog.partitions, root) {
        let mut one = twj.clone();
        if let ast::TableFactor::Table { name, alias, .. } = &mut one.relation {
            let schema = b.catalog.namespace_name(leaf.namespace).unwrap_or("public");
            *name = ast::ObjectName::from(vec![
                ast::Ident::with_quote('"', schema),
                ast::Ident::with_quote('"', leaf.name.clone()),
            ]);
            if alias.is_none() {
                *alias = Some(ast::TableAlias {
                    explicit: true,
                    name: ast::Ident::with_quote('"', root.name.clone()),
                    columns: Vec::new(),
                    at: None,
                });
            }
        }
        out.push(one);
    }
    out
}

fn plan_delete(b: &mut Binder<'_>, d: &ast::Delete) -> Result<DeletePlan> {
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
    };
    let [twj] = from.as_slice() else {
        bail!(FeatureNotSupported, "DELETE from several tables is not supported")
    };
    let needs = (crate::acl::DELETE, d.returning.is_some(), true);
    let items = d.using.as_deref();
    let from = (twj, items.unwrap_or_default(), &d.selection);
    let delete = crate::catalog::TriggerDef::DELETE;
    let privs = crate::acl::DELETE | crate::acl::SELECT;
    if let Some(i) = views::instead(b, from, &[], delete, privs)? {
        let ret = returning(b, &d.returning, &i.scope)?;
        return Ok(DeletePlan {
            scan: Scan::full(i.shell, false),
            join: None,
            init: Vec::new(),
            per_row: Default::default(),
            returning: ret,
            instead: Some(i.rows),
            partitions: Vec::new(),
            routed: false,
        });
    }
    let (scan, scope, join, late, view) = target_scan(b, twj, &d.selection, items, needs)?;
    let filtering = bound_correlated(b);
    let per_row = correlated_subqueries(b, late, view.as_ref(), filtering);
    let mut ret = returning(b, &d.returning, &scope)?;
    if let Some(v) = &view {
        over_table(v, &mut ret);
    }
    let init = b.subqueries.drain(..).collect();
    let mut plan = DeletePlan {
        scan,
        join,
        init,
        per_row,
        returning: ret,
        instead: None,
        partitions: Vec::new(),
        routed: false,
    };
    if plan.scan.table.is_partitioned() {
        let root = plan.scan.table.clone();
        for leaf in leaf_targets(b, twj, &root) {
            let mut one = d.clone();
            let (ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f)) =
                &mut one.from;
            *f = vec![leaf];
            let checks = b.checks.len();
            let mut p = plan_delete(b, &one)?;
            b.checks.truncate(checks);
            p.routed = true;
            plan.partitions.push(p);
        }
    }
    Ok(plan)
}
