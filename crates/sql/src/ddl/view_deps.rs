//! What a view depends on, and how DDL on those objects keeps views right.
//!
//! PostgreSQL stores a view as a query tree that names tables and columns by
//! OID: renaming them leaves the view working, and dropping them is refused
//! while a view uses them (or, with CASCADE, drops the view too). Strata
//! stores a view as query text (views.rs), so it learns the same facts by
//! binding that text with the binder's trace on ([`bind::Trace`]): which
//! relations and table columns the query reads, and where in the text each
//! column name stands. With them:
//!
//! - CREATE VIEW stores each `*` expanded to the columns it stood for, so a
//!   column added to the table later does not appear in the view;
//! - RENAME COLUMN rewrites the names that resolved to the column, keeping
//!   the old name as the output column's name;
//! - DROP TABLE, DROP VIEW and DROP COLUMN are refused while a view uses the
//!   object, and with CASCADE drop those views (and views on them) too.

use std::ops::ControlFlow;

use sqlparser::ast::{VisitMut, VisitorMut};

use super::*;
use crate::bind::Trace;
use crate::catalog::ViewDef;
use crate::deparse::ident_of;
use crate::plan::Column;

/// `cat` with `t` as the table's current definition (an ALTER TABLE
/// changes it one operation at a time).
pub(super) fn with_table(cat: &Catalog, t: &TableDef) -> Catalog {
    let mut c = cat.clone();
    c.tables.retain(|_, old| old.oid != t.oid);
    c.tables.insert(t.qual_name(), Arc::new(t.clone()));
    c
}

/// Binds `q` against `cat`, recording what it names.
pub(super) fn trace(cat: &Catalog, q: &ast::Query) -> Result<(Vec<Column>, Trace)> {
    let mut b = Binder::new(cat, vec![]);
    b.trace = Some(Trace::default());
    let (_, cols) = b.query(q)?;
    Ok((cols, b.trace.take().unwrap_or_default()))
}

/// Every view with its parsed query and trace, by OID.
pub(super) type ViewTraces = Vec<(Arc<ViewDef>, ast::Query, Trace)>;

/// The query of every view that still binds, with its trace, by OID. (A
/// view whose query no longer binds reads nothing PostgreSQL would track.)
fn traced_views(cat: &Catalog) -> ViewTraces {
    let mut out = Vec::new();
    for v in cat.views.values() {
        let Ok(q) = v.parse() else { continue };
        if let Ok((_, t)) = trace(cat, &q) {
            out.push((v.clone(), q, t));
        }
    }
    out.sort_by_key(|(v, _, _)| v.oid);
    out
}

/// A view that must go (or stops a DROP), and what it depends on, as
/// PostgreSQL words it ("view v depends on column a of table t").
struct Dependent {
    view: Arc<ViewDef>,
    on: String,
}

/// Of `views`, those that read relation `oid` (a table or view) or, with
/// `column`, that column of table `oid`, which `what` describes; then the views that
/// read those, and so on. Views in `skip` are left out (they go anyway).
fn dependents(
    views: &ViewTraces,
    oid: u32,
    column: Option<i16>,
    what: &str,
    skip: &HashSet<u32>,
) -> Vec<Dependent> {
    let mut out: Vec<Dependent> = Vec::new();
    let mut seen: HashSet<u32> = skip.clone();
    // Depth first, as PostgreSQL lists them: each view, then what reads it.
    let reads = |t: &Trace| match column {
        None => t.relations.contains(&oid),
        Some(c) => t.columns.iter().any(|&(_, o, n)| o == oid && n == c),
    };
    let mut stack: Vec<Dependent> = Vec::new();
    for (v, _, t) in views.iter().rev() {
        if reads(t) {
            stack.push(Dependent { view: v.clone(), on: what.to_string() });
        }
    }
    while let Some(d) = stack.pop() {
        if !seen.insert(d.view.oid) {
            continue;
        }
        for (v, _, t) in views.iter().rev() {
            if t.relations.contains(&d.view.oid) && !seen.contains(&v.oid) {
                stack.push(Dependent { view: v.clone(), on: format!("view {}", d.view.name) });
            }
        }
        out.push(d);
    }
    out
}

/// The first view that reads column `column` (numbered from 1) of table
/// `oid` directly: ALTER COLUMN TYPE is refused while one does, as in
/// PostgreSQL.
pub(super) fn column_user(cat: &Catalog, oid: u32, column: i16) -> Option<Arc<ViewDef>> {
    let views = traced_views(cat);
    let direct = dependents(&views, oid, Some(column), "", &HashSet::new());
    direct.into_iter().next().map(|d| d.view)
}

/// The first view that reads relation `oid` (a table or view).
pub(super) fn relation_user(cat: &Catalog, oid: u32) -> Option<Arc<ViewDef>> {
    let views = traced_views(cat);
    views.into_iter().find(|(_, _, t)| t.relations.contains(&oid)).map(|(v, _, _)| v)
}

/// The error for dropping `what` while views depend on it.
fn still_used(what: &str, deps: &[Dependent]) -> ErrorReport {
    let detail: Vec<String> =
        deps.iter().map(|d| format!("view {} depends on {}", d.view.name, d.on)).collect();
    super::still_depended_on(what, &detail)
}

/// The NOTICE PostgreSQL sends for what a DROP ... CASCADE took along
/// (`objects` as "view v", "table s.t"), if anything.
pub(super) fn cascade_notice(objects: &[String]) -> Option<ErrorReport> {
    match objects {
        [] => None,
        [one] => Some(notice(format!("drop cascades to {one}"))),
        many => {
            let lines: Vec<String> = many.iter().map(|o| format!("drop cascades to {o}")).collect();
            Some(
                notice(format!("drop cascades to {} other objects", many.len()))
                    .with_detail(lines.join("\n")),
            )
        }
    }
}

/// Refuses (without CASCADE) or carries out dropping the views that depend
/// on `on`: (relation OID, column number, how PostgreSQL names it).
pub(super) async fn drop_dependents<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    on: (u32, Option<i16>, &str),
    d: &mut Dropping,
) -> Result<()> {
    let (oid, column, what) = on;
    let views = d.traces.get_or_insert_with(|| traced_views(cat));
    let deps = dependents(views, oid, column, what, &d.views);
    if deps.is_empty() {
        return Ok(());
    }
    if !d.cascade {
        return Err(still_used(what, &deps));
    }
    for dep in deps {
        d.views.insert(dep.view.oid);
        d.cascaded.push(format!("view {}", dep.view.name));
        delete_key(txn, keys::view(tenant, dep.view.oid)).await?;
    }
    Ok(())
}

/// RENAME COLUMN: in the views that read column `column` (0-based) of
/// `table`, the names that resolved to it become `to`; where such a name
/// was a select-list item of its own, the old name stays as its alias, so
/// the query's output columns keep their names.
pub(super) async fn rename_column<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    table: &TableDef,
    column: usize,
    to: &str,
) -> Result<()> {
    let from = table.columns[column].name.clone();
    let id = column as i16 + 1;
    for (v, mut q, t) in traced_views(cat) {
        let spans: Vec<sqlparser::tokenizer::Span> = t
            .columns
            .iter()
            .filter(|&&(s, o, n)| {
                o == table.oid && n == id && s != sqlparser::tokenizer::Span::empty()
            })
            .map(|&(s, _, _)| s)
            .collect();
        if spans.is_empty() {
            continue;
        }
        let mut r = ColumnRenamer { spans, from: &from, to };
        let _ = q.visit(&mut r);
        crate::deparse::normalize_casts(&mut q);
        let view = ViewDef { query: q.to_string(), ..(*v).clone() };
        put_entry(txn, keys::view(tenant, v.oid), json_entry(&view)).await?;
    }
    Ok(())
}

/// Renames the column names at `spans` (see [`rename_column`]).
struct ColumnRenamer<'a> {
    spans: Vec<sqlparser::tokenizer::Span>,
    from: &'a str,
    to: &'a str,
}

impl ColumnRenamer<'_> {
    /// The name part of `e` that is one of the renamed names.
    fn target<'e>(&self, e: &'e mut ast::Expr) -> Option<&'e mut ast::Ident> {
        let id = match e {
            ast::Expr::Identifier(id) => id,
            ast::Expr::CompoundIdentifier(ids) => ids.last_mut()?,
            _ => return None,
        };
        (self.spans.contains(&id.span) && bind::ident(id) == self.from).then_some(id)
    }
}

impl VisitorMut for ColumnRenamer<'_> {
    type Break = ();
    fn pre_visit_select(&mut self, s: &mut ast::Select) -> ControlFlow<()> {
        for item in &mut s.projection {
            if let ast::SelectItem::UnnamedExpr(e) = item {
                if self.target(e).is_some() {
                    let expr = e.clone();
                    *item = ast::SelectItem::ExprWithAlias { expr, alias: ident_of(self.from) };
                }
            }
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        let to = ident_of(self.to);
        if let Some(id) = self.target(e) {
            *id = ast::Ident { span: id.span, ..to };
        }
        ControlFlow::Continue(())
    }
}

/// Replaces each `*` and `t.*` of `q`'s select lists by the columns it
/// expanded to when `q` was bound (`wildcards`), as PostgreSQL fixes a
/// view's columns when it is created.
pub(super) fn expand_wildcards(q: &mut ast::Query, trace: &Trace) {
    struct Expander<'t>(&'t [crate::bind::Wildcard]);
    impl VisitorMut for Expander<'_> {
        type Break = ();
        fn pre_visit_select(&mut self, s: &mut ast::Select) -> ControlFlow<()> {
            let mut out = Vec::with_capacity(s.projection.len());
            for item in s.projection.drain(..) {
                let token = match &item {
                    ast::SelectItem::Wildcard(o) | ast::SelectItem::QualifiedWildcard(_, o) => {
                        o.wildcard_token.0.span
                    }
                    _ => {
                        out.push(item);
                        continue;
                    }
                };
                let Some((_, cols)) = self.0.iter().find(|(s, _)| *s == token) else {
                    out.push(item);
                    continue;
                };
                out.extend(cols.iter().map(|(q, name)| {
                    ast::SelectItem::UnnamedExpr(match q {
                        Some(q) => ast::Expr::CompoundIdentifier(vec![ident_of(q), ident_of(name)]),
                        None => ast::Expr::Identifier(ident_of(name)),
                    })
                }));
            }
            s.projection = out;
            ControlFlow::Continue(())
        }
    }
    let _ = q.visit(&mut Expander(&trace.wildcards));
}
