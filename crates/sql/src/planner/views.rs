//! Automatically updatable views: INSERT, UPDATE and DELETE whose target is
//! a view that reads one table (or one such view) without DISTINCT,
//! grouping, aggregates, set operations, WITH, LIMIT or set-returning
//! calls write that table, as PostgreSQL's rewriter makes them.
//!
//! The statement's clauses are bound over the view's columns, as the user
//! wrote them, and then rewritten over the base table's row: each view
//! column becomes the expression the view computes it with. The views'
//! WHERE clauses join the statement's, and their WITH CHECK OPTION
//! conditions are checked on each row written.

use std::sync::Arc;

use sqlparser::ast;
use sqltypes::DataType;

use crate::bind::{self, Binder, Reach, Scope, ScopeCol};
use crate::catalog::{CheckOption, Relation, TableDef, ViewDef};
use crate::dml::ViewCheck;
use crate::error::Result;
use crate::expr::Expr;
use crate::{bail, err};

/// The statement writing through a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Insert,
    Update,
    Delete,
}

impl Op {
    /// "cannot {verb} view": PostgreSQL's wording per statement.
    fn verb(self) -> &'static str {
        match self {
            Op::Insert => "insert into",
            Op::Update => "update",
            Op::Delete => "delete from",
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Op::Insert => "To enable inserting into the view, provide an INSTEAD OF INSERT trigger or an unconditional ON INSERT DO INSTEAD rule.",
            Op::Update => "To enable updating the view, provide an INSTEAD OF UPDATE trigger or an unconditional ON UPDATE DO INSTEAD rule.",
            Op::Delete => "To enable deleting from the view, provide an INSTEAD OF DELETE trigger or an unconditional ON DELETE DO INSTEAD rule.",
        }
    }
}

/// A view resolved down to the table it writes.
#[derive(Debug, Clone)]
pub(super) struct ViewTarget {
    /// The view the statement names.
    pub view: Arc<ViewDef>,
    /// The table written.
    pub table: Arc<TableDef>,
    /// Per view column: its value over the table's row.
    pub exprs: Vec<Expr>,
    /// Per view column: its type.
    pub types: Vec<DataType>,
    /// Per view column: the table column it is, if it is one (only those
    /// can be assigned).
    pub columns: Vec<Option<usize>>,
    /// The views' WHERE clauses, over the table's row.
    pub filter: Option<Expr>,
    /// WITH CHECK OPTION conditions, innermost view first.
    pub checks: Vec<ViewCheck>,
    /// Per table column: the default of the outermost view column that
    /// is it and has one (what INSERT and DEFAULT write before the
    /// table's default); all None unless resolved for INSERT.
    pub defaults: Vec<Option<Expr>>,
}

impl ViewTarget {
    /// The view's columns as the statement sees them: named by the view
    /// (or by `alias`), qualified by `qualifier`.
    pub fn scope(&self, qualifier: &str, alias: &Option<ast::TableAlias>) -> Scope {
        let renames: Vec<String> = alias
            .as_ref()
            .map(|a| a.columns.iter().map(|c| bind::ident(&c.name)).collect())
            .unwrap_or_default();
        Scope {
            cols: (self.view.columns.iter().zip(&self.types).enumerate())
                .map(|(i, (name, ty))| ScopeCol {
                    qualifier: Some(qualifier.to_string()),
                    name: renames.get(i).unwrap_or(name).clone(),
                    ty: ty.clone(),
                    table_oid: self.view.oid,
                    column_id: i as i16 + 1,
                    reach: Reach::Full,
                })
                .collect(),
        }
    }

    /// Rewrites an expression bound over the view's row (followed by
    /// other columns: FROM items, correlated subqueries' values) over the
    /// table's row followed by the same.
    pub fn to_table(&self, e: &Expr) -> Expr {
        let (n, w) = (self.exprs.len(), self.table.columns.len());
        e.remap_columns(&|i| match self.exprs.get(i) {
            Some(x) => x.clone(),
            None => Expr::Column(i - n + w),
        })
    }

    /// The table column view column `i` (named `name` by the statement)
    /// is; 0A000 for a computed one.
    pub fn column(&self, i: usize, name: &str, op: Op) -> Result<usize> {
        self.columns[i].ok_or_else(|| {
            err!(
                FeatureNotSupported,
                "cannot {} column \"{name}\" of view \"{}\"",
                op.verb(),
                self.view.name
            )
            .with_detail(
                "View columns that are not columns of their base relation are not updatable.",
            )
        })
    }

    /// What `SET name = DEFAULT` writes through the view: the view
    /// column's own default, or NULL (as in PostgreSQL, neither the
    /// table's nor an inner view's).
    pub fn default(&self, cat: &crate::catalog::Catalog, name: &str) -> Result<Expr> {
        let j = self.view.columns.iter().position(|c| c == name);
        match j.and_then(|j| Some((j, self.view.defaults.get(j)?.as_ref()?))) {
            Some((j, text)) => crate::ddl::default_expr(cat, name, text, &self.types[j]),
            None => Ok(Expr::Const(sqltypes::Value::Null)),
        }
    }

    /// The table column an assignment to view column `name` writes: None
    /// if the view has no such column, 0A000 for a computed one.
    pub fn assigned(&self, name: &str, op: Op) -> Result<Option<usize>> {
        match self.view.columns.iter().position(|c| c == name) {
            Some(j) => self.column(j, name, op).map(Some),
            None => Ok(None),
        }
    }
}

/// The view `name` names, if it names one.
pub(super) fn named_view(b: &Binder<'_>, name: &crate::catalog::ObjName) -> Option<Arc<ViewDef>> {
    match b.catalog.relation(name) {
        Ok(Some(Relation::View(v))) => Some(v),
        _ => None,
    }
}

/// Resolves view `v`, the target of `op`, to its table; the user needs
/// `privs` on the view, the view's owner on the table. 55000 when the
/// view is not automatically updatable.
pub(super) fn resolve(
    b: &mut Binder<'_>,
    v: &Arc<ViewDef>,
    op: Op,
    privs: u16,
) -> Result<ViewTarget> {
    b.require(Relation::View(v.clone()), privs);
    // The view's query sees no enclosing scopes or CTEs of the statement.
    let outer = std::mem::take(&mut b.outer);
    let ctes = std::mem::take(&mut b.ctes);
    let corr = b.corr.take();
    let check_as = b.check_as.replace(v.access.owner.clone());
    b.view_depth += 1;
    let r = resolve_in(b, v, op, privs, false);
    b.view_depth -= 1;
    b.check_as = check_as;
    b.corr = corr;
    b.outer = outer;
    b.ctes = ctes;
    r
}

/// Why view query `q` cannot be written through, if it cannot (the
/// DETAIL of PostgreSQL's error, in its order of checks).
pub(crate) fn not_updatable(q: &ast::Query) -> Option<&'static str> {
    let s = match q.body.as_ref() {
        ast::SetExpr::Select(s) => Some(s),
        _ => None,
    };
    if let Some(s) = s {
        if s.distinct.is_some() {
            return Some("Views containing DISTINCT are not automatically updatable.");
        }
        let grouped = !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty());
        if grouped {
            return Some("Views containing GROUP BY are not automatically updatable.");
        }
        if s.having.is_some() {
            return Some("Views containing HAVING are not automatically updatable.");
        }
    } else {
        return Some(
            "Views containing UNION, INTERSECT, or EXCEPT are not automatically updatable.",
        );
    }
    if q.with.is_some() {
        return Some("Views containing WITH are not automatically updatable.");
    }
    if q.limit_clause.is_some() || q.fetch.is_some() {
        return Some("Views containing LIMIT or OFFSET are not automatically updatable.");
    }
    let s = s?;
    let exprs = || {
        s.projection.iter().filter_map(|i| match i {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                Some(e)
            }
            _ => None,
        })
    };
    if exprs().any(bind::contains_aggregate) {
        return Some("Views that return aggregate functions are not automatically updatable.");
    }
    if exprs().any(crate::select::contains_window) {
        return Some("Views that return window functions are not automatically updatable.");
    }
    if crate::select::srf::extract(&s.projection, &|_| false).is_some() {
        return Some("Views that return set-returning functions are not automatically updatable.");
    }
    let single = match s.from.as_slice() {
        [one] => {
            one.joins.is_empty()
                && matches!(&one.relation, ast::TableFactor::Table { args: None, .. })
        }
        _ => false,
    };
    if !single {
        return Some(
            "Views that do not select from a single table or view are not automatically updatable.",
        );
    }
    None
}

fn resolve_in(
    b: &mut Binder<'_>,
    v: &Arc<ViewDef>,
    op: Op,
    privs: u16,
    cascaded: bool,
) -> Result<ViewTarget> {
    if b.view_depth > 32 {
        bail!(
            InvalidObjectDefinition,
            "infinite recursion detected in rules for relation \"{}\"",
            v.name
        );
    }
    let refuse = |detail: &str| {
        err!(ObjectNotInPrerequisiteState, "cannot {} view \"{}\"", op.verb(), v.name)
            .with_detail(detail.to_string())
            .with_hint(op.hint())
    };
    let q = v.parse()?;
    if let Some(why) = not_updatable(&q) {
        return Err(refuse(why));
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else { return Err(refuse("")) };
    let Some(ast::TableFactor::Table { name, alias, .. }) = s.from.first().map(|f| &f.relation)
    else {
        return Err(refuse(""));
    };
    let name = bind::obj_name(name)?;
    let qualifier = alias.as_ref().map(|a| bind::ident(&a.name)).unwrap_or(name.name.clone());
    // This view's own check, and whether views below check theirs as if
    // they had CASCADED CHECK OPTION.
    let own = match (v.check_option, cascaded) {
        (_, true) | (Some(CheckOption::Cascaded), _) => Some(true),
        (Some(CheckOption::Local), false) => Some(false),
        (None, false) => None,
    };
    // The relation the view reads: a table, or a view resolved in turn.
    let (inner, base, scope) = match b.catalog.relation(&name)? {
        Some(Relation::Table(t)) if t.matview.is_none() => {
            b.require(Relation::Table(t.clone()), privs);
            let scope = crate::select::table_scope(&t, &qualifier, alias);
            (None, Some(t), scope)
        }
        Some(Relation::View(inner)) => {
            b.require(Relation::View(inner.clone()), privs);
            let check_as = b.check_as.replace(inner.access.owner.clone());
            b.view_depth += 1;
            let r = resolve_in(b, &inner, op, privs, own == Some(true));
            b.view_depth -= 1;
            b.check_as = check_as;
            let t = r?;
            let scope = t.scope(&qualifier, alias);
            (Some(t), None, scope)
        }
        Some(_) => return Err(refuse(
            "Views that do not select from a single table or view are not automatically updatable.",
        )),
        None => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
    };
    let over = |e: Expr| match &inner {
        Some(t) => t.to_table(&e),
        None => e,
    };
    let mut exprs = Vec::with_capacity(s.projection.len());
    let mut types = Vec::with_capacity(s.projection.len());
    let mut columns = Vec::with_capacity(s.projection.len());
    for item in &s.projection {
        let e = match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
            other => bail!(FeatureNotSupported, "view item {other} is not supported here"),
        };
        let (x, ty) = b.expr(e, &scope)?;
        let column = match (&x, &inner) {
            (Expr::Column(i), None) => Some(*i),
            (Expr::Column(i), Some(t)) => t.columns[*i],
            _ => None,
        };
        exprs.push(over(x));
        types.push(ty);
        columns.push(column);
    }
    let filter = match &s.selection {
        Some(w) => {
            let (x, t) = b.expr(w, &scope)?;
            Some(over(b.coerce(x, &t, &DataType::Bool)?))
        }
        None => None,
    };
    let (table, mut checks, below, mut defaults) = match (inner, base) {
        (Some(t), _) => (t.table, t.checks, t.filter, t.defaults),
        (None, Some(t)) => {
            let n = t.columns.len();
            (t, Vec::new(), None, vec![None; n])
        }
        (None, None) => return Err(refuse("")),
    };
    // Only INSERT writes them (UPDATE's DEFAULT reads the named view's own).
    if op == Op::Insert {
        for (j, d) in v.defaults.iter().enumerate() {
            if let (Some(text), Some(Some(c))) = (d, columns.get(j)) {
                let x = crate::ddl::default_expr(b.catalog, &v.columns[j], text, &types[j])?;
                defaults[*c] = Some(x);
            }
        }
    }
    if let (Some(_), Some(f)) = (own, &filter) {
        let mut reads_subquery = false;
        f.walk(&mut |x| reads_subquery |= matches!(x, Expr::Subquery(_) | Expr::InSubquery(..)));
        if reads_subquery {
            bail!(
                FeatureNotSupported,
                "WITH CHECK OPTION on a view whose WHERE clause has a subquery is not supported yet"
            );
        }
        checks.push(ViewCheck { view: v.name.clone(), pred: f.clone() });
    }
    let filter = crate::expr::and_all(below.into_iter().chain(filter).collect());
    Ok(ViewTarget { view: v.clone(), table, exprs, types, columns, filter, checks, defaults })
}

/// An UPDATE or DELETE of a view with INSTEAD OF triggers for it: the
/// rows it hands them.
pub(super) struct Instead {
    /// The view as its triggers see it.
    pub shell: Arc<TableDef>,
    /// The view's rows the statement picks (its FROM items and WHERE
    /// clause), each followed by the values SET assigns.
    pub rows: crate::plan::Plan,
    /// (view column, its new value over a row of `rows`).
    pub sets: Vec<(usize, Expr)>,
    /// The view's columns, for RETURNING.
    pub scope: Scope,
}

/// Plans an UPDATE (`assignments`) or DELETE of `twj` when it is a view
/// with an INSTEAD OF trigger for `event` (a [`TriggerDef`] bit); None
/// when it is not.
///
/// [`TriggerDef`]: crate::catalog::TriggerDef
pub(super) fn instead(
    b: &mut Binder<'_>,
    (twj, items, selection): (&ast::TableWithJoins, &[ast::TableWithJoins], &Option<ast::Expr>),
    assignments: &[ast::Assignment],
    event: i16,
    privs: u16,
) -> Result<Option<Instead>> {
    let ast::TableFactor::Table { name, alias, args: None, .. } = &twj.relation else {
        return Ok(None);
    };
    let Some(v) = named_view(b, &bind::obj_name(name)?) else { return Ok(None) };
    if !v.has_instead(event) || !twj.joins.is_empty() {
        return Ok(None);
    }
    b.require(Relation::View(v.clone()), privs);
    let shell = Arc::new(v.trigger_shell(b.catalog));
    let qualifier = alias.as_ref().map(|a| a.name.clone()).unwrap_or(ast::Ident::new(&v.name));
    let mut targets = Vec::new();
    let mut projection = vec![ast::SelectItem::QualifiedWildcard(
        ast::SelectItemQualifiedWildcardKind::ObjectName(ast::ObjectName::from(vec![
            qualifier.clone()
        ])),
        ast::WildcardAdditionalOptions::default(),
    )];
    for a in assignments {
        let (cn, fields) = super::assigned_column(a, &v.name, &shell)?;
        if !fields.is_empty() {
            bail!(FeatureNotSupported, "assignment to a field through a view is not supported");
        }
        let Some(i) = shell.column_index(&cn) else {
            bail!(UndefinedColumn, "column \"{cn}\" of relation \"{}\" does not exist", v.name);
        };
        if targets.contains(&i) {
            bail!(SyntaxError, "multiple assignments to same column \"{cn}\"");
        }
        targets.push(i);
        // DEFAULT is the view column's default (set below).
        let value = match super::is_default(&a.value) {
            true => ast::Expr::value(ast::Value::Null),
            false => a.value.clone(),
        };
        projection.push(ast::SelectItem::UnnamedExpr(value));
    }
    let mut q = crate::parse::query_text("SELECT 1")
        .map_err(|e| err!(InternalError, "query template does not parse: {e}"))?;
    if let ast::SetExpr::Select(s) = q.body.as_mut() {
        s.projection = projection;
        s.from = std::iter::once(twj.clone()).chain(items.iter().cloned()).collect();
        s.selection = selection.clone();
    }
    let (rows, cols) = b.query(&q)?;
    let n = shell.columns.len();
    let mut sets = Vec::with_capacity(targets.len());
    for (k, (&i, a)) in targets.iter().zip(assignments).enumerate() {
        if super::is_default(&a.value) {
            sets.push((i, super::default_value(b.catalog, &shell, None, i)?));
            continue;
        }
        let from = match &cols[n + k].ty {
            DataType::Unknown => DataType::Text,
            t => t.clone(),
        };
        sets.push((
            i,
            b.coerce_assigned(Expr::Column(n + k), &from, &shell.columns[i].ty.to_type())?,
        ));
    }
    let qualifier = bind::ident(&qualifier);
    let scope = crate::select::table_scope(&shell, &qualifier, alias);
    Ok(Some(Instead { shell, rows, sets, scope }))
}

/// Which of view `v`'s columns an INSERT or UPDATE through it may assign,
/// or None when it is not automatically updatable (what
/// information_schema reports).
pub fn auto_updatable(cat: &crate::catalog::Catalog, v: &Arc<ViewDef>) -> Option<Vec<bool>> {
    let mut b = Binder::new(cat, Vec::new());
    let target = resolve(&mut b, v, Op::Delete, 0).ok()?;
    Some(target.columns.iter().map(Option::is_some).collect())
}
