//! CREATE MATERIALIZED VIEW and REFRESH MATERIALIZED VIEW.
//!
//! A materialized view is a table ([`catalog::MatViewDef`] marks it) whose
//! rows its stored query made. CREATE makes the table as CREATE TABLE AS
//! does and marks it; REFRESH moves it to fresh storage, as TRUNCATE does,
//! and fills it again. Rows go in through the INSERT path directly: the
//! statements a client sends may not change a materialized view
//! (`Session::execute_inner` refuses them).

use super::*;

impl<K: KvClient> Session<K> {
    /// CREATE MATERIALIZED VIEW \[IF NOT EXISTS\] name \[(columns)\] AS query
    /// \[WITH \[NO\] DATA\]; the statement has started.
    pub(super) async fn create_matview(
        &mut self,
        cv: &ast::CreateView,
        data: bool,
    ) -> Result<Outcome> {
        self.lock_catalog().await?;
        let names: Vec<String> = cv.columns.iter().map(|c| crate::bind::ident(&c.name)).collect();
        let cols = self.query_columns(&cv.query, &names, "CREATE MATERIALIZED VIEW")?;
        let builder = ast::helpers::stmt_create_table::CreateTableBuilder::new(cv.name.clone())
            .if_not_exists(cv.if_not_exists);
        let ct = ddl::table_as(&builder.build(), &cols)?;
        let tenant = self.db.tenant;
        let catalog = self.catalog.clone();
        let (ns, name, _) = ddl::new_table_name(&catalog, &cv.name, false)?;
        let user = self.current_user().to_string();
        let txn = self.txn.as_mut().expect("DDL statement has a transaction");
        let r = ddl::create_table(txn, tenant, &catalog, &ct, &user).await?;
        if r.fresh.is_empty() {
            // IF NOT EXISTS found the relation.
            self.finish_ddl(r).await?;
            return Ok(Outcome::Command("CREATE MATERIALIZED VIEW".into()));
        }
        self.finish_ddl(r).await?;
        let made = self.catalog.table_at(&(ns, name))?;
        let query = crate::deparse::stored_query(&catalog, &with_names(&cv.query, &cv.columns));
        let txn = self.txn.as_mut().expect("DDL statement has a transaction");
        let r = ddl::mark_matview(txn, tenant, &made, query, data).await?;
        self.finish_ddl(r).await?;
        if !data {
            return Ok(Outcome::Command("CREATE MATERIALIZED VIEW".into()));
        }
        let n = self.fill_matview(made.oid).await?;
        Ok(Outcome::Command(format!("SELECT {n}")))
    }

    /// REFRESH MATERIALIZED VIEW \[CONCURRENTLY\] name \[WITH \[NO\] DATA\].
    /// CONCURRENTLY is checked as PostgreSQL checks it, then refreshes as
    /// the plain form does (readers of the old rows keep their snapshot).
    pub(super) async fn refresh_matview(&mut self, r: &parse::RefreshMatView) -> Result<Outcome> {
        self.lock_catalog().await?;
        let name = crate::bind::obj_name(&r.name)?;
        let t = self.catalog.must_table(&name)?;
        let Some(mv) = &t.matview else {
            bail!(FeatureNotSupported, "\"{}\" is not a materialized view", t.name);
        };
        if r.concurrently {
            if !r.data {
                bail!(
                    SyntaxError,
                    "REFRESH options CONCURRENTLY and WITH NO DATA cannot be used together"
                );
            }
            if !mv.populated {
                bail!(
                    FeatureNotSupported,
                    "CONCURRENTLY cannot be used when the materialized view is not populated"
                );
            }
            if !t.indexes.iter().any(|i| i.unique && i.predicate.is_none()) {
                let shown =
                    crate::func::catalog_info::qualified_name(&self.catalog, t.namespace, &t.name);
                return Err(err!(
                    ObjectNotInPrerequisiteState,
                    "cannot refresh materialized view \"{shown}\" concurrently"
                )
                .with_hint(
                    "Create a unique index with no WHERE clause on one or more columns of the materialized view.",
                ));
            }
        }
        let tenant = self.db.tenant;
        let txn = self.txn.as_mut().expect("DDL statement has a transaction");
        let done = ddl::empty_matview(txn, tenant, &t, r.data).await?;
        self.finish_ddl(done).await?;
        if r.data {
            self.fill_matview(t.oid).await?;
        }
        Ok(Outcome::Command("REFRESH MATERIALIZED VIEW".into()))
    }

    /// Fills materialized view `oid` (just made or emptied) from its query;
    /// the number of rows.
    async fn fill_matview(&mut self, oid: u32) -> Result<u64> {
        let Some(t) = self.catalog.table_by_oid(oid) else {
            bail!(InternalError, "materialized view {oid} is gone");
        };
        let Some(mv) = &t.matview else {
            bail!(InternalError, "{} is not a materialized view", t.name)
        };
        let query = parse::query_text(&mv.query)
            .map_err(|e| err!(DataCorrupted, "stored query of \"{}\": {e}", t.name))?;
        self.fill_from_query(t.namespace, &t.name, &query, t.storage).await
    }
}

/// The query with the view's column names as the aliases of its first
/// output columns, so that the stored text (and pg_get_viewdef, and
/// pg_dump's CREATE MATERIALIZED VIEW) keeps them.
fn with_names(q: &ast::Query, names: &[ast::ViewColumnDef]) -> ast::Query {
    let mut q = q.clone();
    if names.is_empty() {
        return q;
    }
    let mut body = q.body.as_mut();
    // A set operation's columns are named by its first branch.
    while let ast::SetExpr::SetOperation { left, .. } = body {
        body = left.as_mut();
    }
    if let ast::SetExpr::Select(select) = body {
        // Past a `*` the items no longer line up with the columns; the
        // stored query then keeps the query's own names.
        let star = |i: &ast::SelectItem| {
            matches!(i, ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..))
        };
        if select.projection.iter().take(names.len()).any(star) {
            return q;
        }
        for (item, name) in select.projection.iter_mut().zip(names) {
            let alias = name.name.clone();
            *item = match std::mem::replace(item, ast::SelectItem::Wildcard(Default::default())) {
                ast::SelectItem::UnnamedExpr(expr)
                | ast::SelectItem::ExprWithAlias { expr, .. } => {
                    ast::SelectItem::ExprWithAlias { expr, alias }
                }
                other => other,
            };
        }
    }
    q
}
