//! CREATE [OR REPLACE] VIEW, ALTER VIEW's column actions and DROP VIEW: a
//! view is its query's text, planned again wherever it is read
//! (select.rs).

use super::*;

/// CREATE [OR REPLACE] VIEW name [(columns)] AS query. The query is planned
/// now, so it must be valid against the current catalog; it is stored as
/// text and planned again wherever the view is read.
pub async fn create_view<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cv: &ast::CreateView,
    owner: &str,
) -> Result<DdlResult> {
    if cv.materialized {
        bail!(FeatureNotSupported, "materialized views are not supported yet");
    }
    let (namespace, name) = new_name(cat, &cv.name)?;
    let existing = cat.views.get(&(namespace, name.clone())).cloned();
    if existing.is_none() && cat.relation_exists(namespace, &name) {
        bail!(DuplicateTable, "relation \"{name}\" already exists");
    }
    if existing.is_some() && !cv.or_replace {
        if cv.if_not_exists {
            let mut r = DdlResult::tag("CREATE VIEW");
            r.notices.push(super::notice_code(
                sqlstate::SqlState::DuplicateTable,
                format!("relation \"{name}\" already exists, skipping"),
            ));
            return Ok(r);
        }
        bail!(DuplicateTable, "relation \"{name}\" already exists");
    }
    let check_option = check_option(cv)?;
    if check_option.is_some() {
        if let Some(why) = crate::planner::views::not_updatable(&cv.query) {
            return Err(err!(
                FeatureNotSupported,
                "WITH CHECK OPTION is supported only on automatically updatable views"
            )
            .with_hint(why));
        }
    }
    if crate::planner::modifying(&cv.query) {
        bail!(FeatureNotSupported, "views must not contain data-modifying statements in WITH");
    }
    let (cols, trace) = view_deps::trace(cat, &cv.query)?;
    if cv.columns.len() > cols.len() {
        bail!(SyntaxError, "CREATE VIEW specifies more column names than columns");
    }
    let mut columns: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
    for (c, given) in columns.iter_mut().zip(&cv.columns) {
        *c = bind::ident(&given.name);
    }
    let mut seen = HashSet::new();
    if let Some(dup) = columns.iter().find(|c| !seen.insert(c.as_str())) {
        bail!(DuplicateColumn, "column \"{dup}\" specified more than once");
    }
    // OR REPLACE may add columns at the end, never drop or rename any.
    if let Some(old) = &existing {
        if columns.len() < old.columns.len() {
            bail!(InvalidTableDefinition, "cannot drop columns from view");
        }
        for (o, n) in old.columns.iter().zip(&columns) {
            if o != n {
                bail!(
                    InvalidTableDefinition,
                    "cannot change name of view column \"{o}\" to \"{n}\""
                );
            }
        }
    }
    bump_version(txn, tenant).await?;
    let oid = match &existing {
        Some(v) => v.oid,
        None => alloc(txn, tenant, 1).await? as u32,
    };
    let mut q = (*cv.query).clone();
    view_deps::expand_wildcards(&mut q, &trace);
    let query = crate::deparse::stored_query(cat, &q);
    let comment = existing.as_ref().and_then(|v| v.comment.clone());
    // OR REPLACE keeps the owner and privileges.
    let access = existing.as_ref().map_or_else(
        || crate::acl::Ownership::created(cat, owner, crate::acl::ObjKind::View, namespace),
        |v| v.access.clone(),
    );
    // OR REPLACE keeps the triggers and column defaults.
    let triggers = existing.as_ref().map(|v| v.triggers.clone()).unwrap_or_default();
    let defaults = existing.as_ref().map(|v| v.defaults.clone()).unwrap_or_default();
    let view = catalog::ViewDef {
        oid,
        namespace,
        name,
        query,
        columns,
        comment,
        check_option,
        triggers,
        defaults,
        access,
    };
    put_entry(txn, keys::view(tenant, oid), json_entry(&view)).await?;
    Ok(DdlResult::tag("CREATE VIEW"))
}

/// ALTER VIEW name ALTER COLUMN ... SET/DROP DEFAULT, RENAME COLUMN.
pub async fn alter_view<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    at: &ast::AlterTable,
) -> Result<DdlResult> {
    let name = bind::obj_name(&at.name)?;
    match cat.relation(&name)? {
        Some(catalog::Relation::View(v)) => {
            alter_columns(txn, tenant, cat, &v, at, "ALTER VIEW").await
        }
        Some(_) => bail!(WrongObjectType, "\"{}\" is not a view", name.name),
        None if at.if_exists => {
            let mut r = DdlResult::tag("ALTER VIEW");
            r.notices.push(notice(format!("relation \"{name}\" does not exist, skipping")));
            Ok(r)
        }
        None => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
    }
}

/// The actions of ALTER VIEW, or of an ALTER TABLE (`tag`) that names view
/// `v`: a column's DEFAULT (what INSERT and UPDATE through the view use
/// before the table's), RENAME COLUMN and RENAME TO. PostgreSQL refuses
/// the others on a view.
pub(super) async fn alter_columns<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    v: &Arc<catalog::ViewDef>,
    at: &ast::AlterTable,
    tag: &'static str,
) -> Result<DdlResult> {
    if let [ast::AlterTableOperation::RenameTable { table_name }] = at.operations.as_slice() {
        let (ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n)) = table_name;
        let Some(to) = n.0.last().and_then(|p| p.as_ident()) else {
            bail!(SyntaxError, "invalid name \"{n}\"");
        };
        let a = crate::parse::AlterName {
            kind: crate::parse::RelationKind::View,
            name: at.name.clone(),
            if_exists: at.if_exists,
            change: crate::parse::NameChange::Rename(to.clone()),
        };
        let r = super::alter_name(txn, tenant, cat, &a).await?;
        return Ok(DdlResult { tag: tag.into(), ..r });
    }
    bump_version(txn, tenant).await?;
    let mut cur = (**v).clone();
    let column = |cur: &catalog::ViewDef, n: &ast::Ident| {
        let n = bind::ident(n);
        cur.columns.iter().position(|c| *c == n).ok_or_else(|| {
            err!(UndefinedColumn, "column \"{n}\" of relation \"{}\" does not exist", v.name)
        })
    };
    for op in &at.operations {
        match op {
            ast::AlterTableOperation::AlterColumn { column_name, op } => {
                let i = column(&cur, column_name)?;
                let text = match op {
                    ast::AlterColumnOperation::SetDefault { value } => {
                        let ty = cat.view_columns(v)[i].ty.to_type();
                        let text = crate::deparse::stored_default(cat, value, &ty);
                        default_expr(cat, &cur.columns[i], &text, &ty)?;
                        Some(text)
                    }
                    ast::AlterColumnOperation::DropDefault => None,
                    other => {
                        let action = match other {
                            ast::AlterColumnOperation::SetNotNull => "SET NOT NULL".into(),
                            ast::AlterColumnOperation::DropNotNull => "DROP NOT NULL".into(),
                            ast::AlterColumnOperation::SetDataType { .. } => "SET DATA TYPE".into(),
                            o => o.to_string(),
                        };
                        return Err(not_for_views(&format!("ALTER COLUMN ... {action}"), v));
                    }
                };
                cur.defaults.resize(cur.columns.len(), None);
                cur.defaults[i] = text;
                while cur.defaults.last() == Some(&None) {
                    cur.defaults.pop();
                }
            }
            ast::AlterTableOperation::RenameColumn { old_column_name, new_column_name } => {
                let i = column(&cur, old_column_name)?;
                let to = bind::ident(new_column_name);
                if cur.columns.contains(&to) {
                    bail!(
                        DuplicateColumn,
                        "column \"{to}\" of relation \"{}\" already exists",
                        v.name
                    );
                }
                // Views that read this one name its columns in their text.
                if let Some(user) = view_deps::relation_user(cat, v.oid) {
                    bail!(
                        FeatureNotSupported,
                        "renaming a column of view \"{}\" that view \"{}\" reads is not supported yet",
                        v.name,
                        user.name
                    );
                }
                cur.columns[i] = to;
            }
            ast::AlterTableOperation::AddColumn { .. } => {
                return Err(not_for_views("ADD COLUMN", v))
            }
            ast::AlterTableOperation::DropColumn { .. } => {
                return Err(not_for_views("DROP COLUMN", v))
            }
            ast::AlterTableOperation::AddConstraint { .. } => {
                return Err(not_for_views("ADD CONSTRAINT", v))
            }
            ast::AlterTableOperation::DropConstraint { .. } => {
                return Err(not_for_views("DROP CONSTRAINT", v))
            }
            other => bail!(FeatureNotSupported, "{tag} ... {other} is not supported on views yet"),
        }
    }
    put_entry(txn, keys::view(tenant, cur.oid), json_entry(&cur)).await?;
    Ok(DdlResult::tag(tag))
}

/// PostgreSQL's refusal of ALTER TABLE action `action` on view `v`.
fn not_for_views(action: &str, v: &catalog::ViewDef) -> ErrorReport {
    err!(WrongObjectType, "ALTER action {action} cannot be performed on relation \"{}\"", v.name)
        .with_detail("This operation is not supported for views.")
}

/// The view's `check_option` (from `WITH (check_option = ...)` or a
/// trailing WITH CHECK OPTION); other options are accepted and ignored.
fn check_option(cv: &ast::CreateView) -> Result<Option<catalog::CheckOption>> {
    let ast::CreateTableOptions::With(options) = &cv.options else { return Ok(None) };
    let mut found = None;
    for o in options {
        let ast::SqlOption::KeyValue { key, value } = o else { continue };
        if bind::ident(key) != "check_option" {
            continue;
        }
        let text = match value {
            ast::Expr::Identifier(i) => i.value.to_lowercase(),
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) => s.to_lowercase(),
                other => other.to_string(),
            },
            other => other.to_string(),
        };
        found = Some(match text.as_str() {
            "local" => catalog::CheckOption::Local,
            "cascaded" => catalog::CheckOption::Cascaded,
            _ => bail!(
                InvalidParameterValue,
                "invalid value for enum option \"check_option\": {text}"
            ),
        });
    }
    Ok(found)
}

/// DROP VIEW: refused while other views read one (unless CASCADE drops
/// them too).
pub(super) async fn drop_views<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    names: &[ast::ObjectName],
    if_exists: bool,
    d: &mut Dropping,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag("DROP VIEW");
    let mut bumped = false;
    let mut going = Vec::new();
    for n in names {
        let name = bind::obj_name(n)?;
        let Some(catalog::Relation::View(view)) = cat.relation(&name)? else {
            let name = name.to_string();
            skip_missing(&mut r, if_exists, sqlstate::SqlState::UndefinedTable, "view", &name)?;
            continue;
        };
        d.views.insert(view.oid);
        going.push(view);
    }
    for view in going {
        bump_once(txn, tenant, &mut bumped).await?;
        let what = format!("view {}", view.name);
        view_deps::drop_dependents(txn, tenant, cat, (view.oid, None, &what), d).await?;
        delete_key(txn, keys::view(tenant, view.oid)).await?;
    }
    Ok(r)
}
