//! ALTER TABLE operations that change a column's definition or a name:
//! ALTER COLUMN SET/DROP DEFAULT, SET/DROP NOT NULL and TYPE, RENAME TO,
//! RENAME COLUMN, and ADD CONSTRAINT UNIQUE. Each works on the table definition
//! being altered (`cur`), which the caller writes back.

use std::ops::ControlFlow;

use kvapi::{TenantId, Txn};
use sqlparser::ast;

use super::sequences::write_sequence;
use super::{default_expr, foreign_keys, table_batch, view_deps};
use crate::bind;
use sqltypes::Value;

use crate::catalog::{self, keys, Catalog, IndexDef, TableDef, TypeDef};
use crate::error::{ErrorReport, Result};
use crate::{bail, err};

fn column(cur: &TableDef, name: &ast::Ident) -> Result<usize> {
    let n = bind::ident(name);
    cur.column_index(&n).ok_or_else(|| {
        err!(UndefinedColumn, "column \"{n}\" of relation \"{}\" does not exist", cur.name)
    })
}

/// The name in `x` if `x` is a reference to column `name`.
fn column_ref<'a>(x: &'a mut ast::Expr, name: &str) -> Option<&'a mut ast::Ident> {
    let id = match x {
        ast::Expr::Identifier(id) => Some(id),
        ast::Expr::CompoundIdentifier(ids) => ids.last_mut(),
        _ => None,
    };
    id.filter(|id| bind::ident(id) == name)
}

/// `e` with each reference to column `name` cast to `ty`.
fn cast_column(mut e: ast::Expr, name: &str, ty: &sqltypes::DataType) -> Result<ast::Expr> {
    let data_type = crate::parse::type_text(&ty.to_string())
        .map_err(|e| err!(InternalError, "type {ty} does not parse: {e}"))?;
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        if column_ref(x, name).is_some() {
            *x = ast::Expr::Cast {
                kind: ast::CastKind::DoubleColon,
                expr: Box::new(x.clone()),
                data_type: data_type.clone(),
                format: None,
            };
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(e)
}

/// ALTER COLUMN ... SET/DROP DEFAULT, SET/DROP NOT NULL.
pub(super) async fn alter_column<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &mut TableDef,
    name: &ast::Ident,
    op: &ast::AlterColumnOperation,
    notices: &mut Vec<ErrorReport>,
) -> Result<()> {
    let c = column(cur, name)?;
    let cname = cur.columns[c].name.clone();
    let generated = || {
        err!(SyntaxError, "column \"{cname}\" of relation \"{}\" is a generated column", cur.name)
    };
    let drop_if_exists = drop_expression(op);
    match op {
        _ if drop_if_exists.is_some() => {
            if !cur.columns[c].generated {
                let e = err!(
                    ObjectNotInPrerequisiteState,
                    "column \"{cname}\" of relation \"{}\" is not a stored generated column",
                    cur.name
                );
                match drop_if_exists == Some(true) {
                    true => notices.push(super::notice(format!("{}, skipping", e.message))),
                    false => return Err(e),
                }
            } else {
                cur.columns[c].generated = false;
                cur.columns[c].default = None;
                catalog::bind_checks(cat, cur)?;
            }
        }
        ast::AlterColumnOperation::SetDefault { .. } if cur.columns[c].generated => {
            return Err(generated())
        }
        ast::AlterColumnOperation::DropDefault if cur.columns[c].generated => {
            return Err(generated()
                .with_hint("Use ALTER TABLE ... ALTER COLUMN ... DROP EXPRESSION instead."))
        }
        ast::AlterColumnOperation::SetDefault { value } => {
            if cur.columns[c].identity.is_some() {
                return Err(err!(
                    SyntaxError,
                    "column \"{cname}\" of relation \"{}\" is an identity column",
                    cur.name
                )
                .with_hint("Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead."));
            }
            let ty = cur.columns[c].ty.to_type();
            let text = crate::deparse::stored_default(cat, value, &ty);
            default_expr(cat, &cname, &text, &ty)?;
            let kept = crate::deparse::keeps_default(value, &cur.columns[c].ty);
            cur.columns[c].default = kept.then_some(text);
        }
        ast::AlterColumnOperation::DropDefault => cur.columns[c].default = None,
        ast::AlterColumnOperation::DropNotNull => {
            if cur.primary_key.contains(&c) {
                bail!(InvalidTableDefinition, "column \"{cname}\" is in a primary key");
            }
            if cur.columns[c].identity.is_some() {
                bail!(
                    InvalidTableDefinition,
                    "column \"{cname}\" of relation \"{}\" is an identity column",
                    cur.name
                );
            }
            cur.columns[c].nullable = true;
        }
        ast::AlterColumnOperation::SetNotNull => {
            if cur.columns[c].nullable {
                let mut next = Some(keys::storage(tenant, cur.storage).start);
                while let Some(start) = next {
                    let (rows, n) = table_batch(txn, tenant, cur, start).await?;
                    next = n;
                    if rows.iter().any(|(_, r)| r[c].is_null()) {
                        return Err(err!(
                            NotNullViolation,
                            "column \"{cname}\" of relation \"{}\" contains null values",
                            cur.name
                        )
                        .with_table(&cur.name)
                        .with_column(&cname));
                    }
                }
            }
            cur.columns[c].nullable = false;
        }
        other => bail!(FeatureNotSupported, "ALTER COLUMN {other} is not supported yet"),
    }
    Ok(())
}

/// RENAME TO.
pub(super) fn rename_table(
    cat: &Catalog,
    cur: &mut TableDef,
    to: &ast::RenameTableNameKind,
) -> Result<()> {
    let (ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n)) = to;
    let new = bind::object_name(n)?;
    if cat.relation_exists(cur.namespace, &new) {
        bail!(DuplicateTable, "relation \"{new}\" already exists");
    }
    cur.name = new;
    Ok(())
}

/// RENAME COLUMN: CHECK expressions and the owning link of a sequence follow
/// the new name.
pub(super) async fn rename_column<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &mut TableDef,
    old: &ast::Ident,
    new: &ast::Ident,
) -> Result<()> {
    let c = column(cur, old)?;
    let (from, to) = (cur.columns[c].name.clone(), bind::ident(new));
    if cur.column_index(&to).is_some() {
        bail!(DuplicateColumn, "column \"{to}\" of relation \"{}\" already exists", cur.name);
    }
    // CHECKs, index and generation expressions name the column in their
    // text.
    let texts = cur.checks.iter_mut().map(|c| &mut c.expr);
    let indexes = cur.indexes.iter_mut().flat_map(|i| i.exprs.iter_mut().chain(&mut i.predicate));
    let generated =
        cur.columns.iter_mut().filter(|c| c.generated).filter_map(|c| c.default.as_mut());
    for text in texts.chain(indexes).chain(generated) {
        let mut e = catalog::parse_stored(text, "CHECK, index or generation")?;
        let _ = ast::visit_expressions_mut(&mut e, |x| {
            if let Some(id) = column_ref(x, &from) {
                *id = crate::deparse::ident_of(&to);
            }
            ControlFlow::<()>::Continue(())
        });
        *text = crate::deparse::stored_text(cat, &e);
    }
    for s in cat.sequences.values() {
        if s.owned_by.as_ref().is_some_and(|(o, col)| *o == cur.oid && *col == from) {
            let mut s = (**s).clone();
            s.owned_by = Some((cur.oid, to.clone()));
            write_sequence(txn, tenant, &s).await?;
        }
    }
    cur.columns[c].name = to;
    Ok(())
}

/// ADD [CONSTRAINT name] UNIQUE (columns): a unique index built from the
/// existing rows. Returns the index's storage id.
pub(super) async fn add_unique<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &mut TableDef,
    u: &ast::UniqueConstraint,
) -> Result<u64> {
    let cols = super::index_columns(cur, &u.columns)?;
    let taken =
        |n: &str| cat.relation_exists(cur.namespace, n) || cur.indexes.iter().any(|i| i.name == n);
    let name = match &u.name {
        Some(n) => bind::ident(n),
        None => {
            let names: Vec<&str> = cols.iter().map(|&c| cur.columns[c].name.as_str()).collect();
            super::free_name(format!("{}_{}_key", cur.name, names.join("_")), taken)
        }
    };
    if taken(&name) {
        bail!(DuplicateTable, "relation \"{name}\" already exists");
    }
    let id = super::alloc(txn, tenant, 1).await?;
    let idx = IndexDef {
        constraint: true,
        deferral: super::deferral(&u.characteristics)?,
        ..IndexDef::new(id, name.clone(), cols, true)
    };
    let only_new = TableDef { indexes: vec![idx.clone()], ..cur.clone() };
    super::build_index(txn, tenant, &only_new, &name).await?;
    cur.indexes.push(idx);
    Ok(id)
}

/// DROP COLUMN: the indexes, foreign keys, CHECK constraints and owned
/// sequence that use the column go with it, as in PostgreSQL, and the rows
/// are rewritten without it. Returns the fresh storage ids.
pub(super) async fn drop_column<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &mut TableDef,
    name: &ast::Ident,
    if_exists: bool,
    notices: &mut Vec<ErrorReport>,
) -> Result<Vec<u64>> {
    let n = bind::ident(name);
    let Some(c) = cur.column_index(&n) else {
        if if_exists {
            notices.push(super::notice(format!(
                "column \"{n}\" of relation \"{}\" does not exist, skipping",
                cur.name
            )));
            return Ok(vec![]);
        }
        bail!(UndefinedColumn, "column \"{n}\" of relation \"{}\" does not exist", cur.name);
    };
    if cur.primary_key.contains(&c) {
        bail!(FeatureNotSupported, "dropping a primary key column is not supported yet");
    }
    let mut children = Vec::new();
    for (child, i) in &cur.referenced_by {
        let ct = cat.table_at(child)?;
        let fk = &ct.foreign_keys[*i];
        if fk.ref_columns.contains(&c) && ct.oid != cur.oid {
            return Err(err!(
                DependentObjectsStillExist,
                "cannot drop column {n} of table {} because other objects depend on it",
                cur.name
            )
            .with_detail(format!(
                "constraint {} on table {} depends on column {n} of table {}",
                fk.name, ct.name, cur.name
            ))
            .with_hint("Drop the constraint first."));
        }
        if ct.oid != cur.oid && !children.iter().any(|t: &TableDef| t.oid == ct.oid) {
            children.push((*ct).clone());
        }
    }
    let old = cur.clone();
    catalog::bind_checks(cat, cur)?;
    let mut keep = Vec::new();
    for (check, bound) in cur.checks.iter().zip(&cur.bound_checks) {
        if !bound.reads_column(c) {
            keep.push(check.clone());
        }
    }
    cur.checks = keep;
    cur.indexes.retain(|i| !i.used_columns().contains(&c));
    let own = cur.oid;
    cur.foreign_keys.retain(|f| {
        !(f.columns.contains(&c) || (f.ref_table == own && f.ref_columns.contains(&c)))
    });
    for s in cat.sequences.values() {
        if s.owned_by.as_ref().is_some_and(|(o, col)| *o == cur.oid && *col == n) {
            super::delete_sequence(txn, tenant, s.oid).await?;
        }
    }
    // Positions after the dropped column move down by one.
    let shift = |v: &mut usize| {
        if *v > c && *v != catalog::EXPRESSION_KEY {
            *v -= 1;
        }
    };
    cur.columns.remove(c);
    cur.primary_key.iter_mut().for_each(shift);
    for i in &mut cur.indexes {
        i.columns.iter_mut().for_each(shift);
    }
    for f in &mut cur.foreign_keys {
        f.columns.iter_mut().for_each(shift);
        if f.ref_table == own {
            f.ref_columns.iter_mut().for_each(shift);
        }
    }
    for child in &mut children {
        for f in child.foreign_keys.iter_mut().filter(|f| f.ref_table == own) {
            f.ref_columns.iter_mut().for_each(shift);
        }
        super::lock_table(txn, tenant, child.oid).await?;
        super::write_table(txn, tenant, child).await?;
    }
    catalog::bind_checks(cat, cur)?;
    let (_, fresh) = super::fresh_storage(txn, tenant, cur, 0).await?;
    super::rewrite(txn, tenant, &old, cur, &|row: &mut Vec<Value>| {
        row.remove(c);
        Ok(())
    })
    .await?;
    Ok(fresh)
}

/// The generated columns of `t` whose expressions read column `c`.
pub(super) fn generated_users(t: &TableDef, c: usize) -> Vec<usize> {
    t.bound_generated.iter().filter(|(_, e)| e.reads_column(c)).map(|(g, _)| *g).collect()
}

/// `ALTER COLUMN c DROP EXPRESSION [IF EXISTS]`, which the parser writes
/// as `SET DEFAULT` of a call ([`crate::parse::DROP_EXPRESSION`]): Some(if
/// IF EXISTS was given).
fn drop_expression(op: &ast::AlterColumnOperation) -> Option<bool> {
    let ast::AlterColumnOperation::SetDefault { value } = op else { return None };
    match crate::parse::marker_args(value, crate::parse::DROP_EXPRESSION)? {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))] => {
            Some(v.value == ast::Value::Boolean(true))
        }
        _ => None,
    }
}

/// ALTER COLUMN ... TYPE ty [USING expr]: every row is rewritten with the
/// column converted (by `expr` over the old row, else by an assignment cast
/// of the old value), and the indexes rebuilt. The default must still be
/// assignable to the new type, CHECK constraints and foreign keys still hold,
/// and an identity column's sequence takes the new type. Refused while a view
/// reads the column, as in PostgreSQL. Returns the fresh storage ids.
pub(super) async fn set_type<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &mut TableDef,
    name: &ast::Ident,
    (data_type, using): (&ast::DataType, Option<&ast::Expr>),
    eval: &crate::expr::EvalContext,
) -> Result<Vec<u64>> {
    let c = column(cur, name)?;
    let cname = cur.columns[c].name.clone();
    let def = bind::column_type(cat, data_type)?;
    let ty = def.to_type();
    if let Some(g) = generated_users(cur, c).first() {
        return Err(err!(
            FeatureNotSupported,
            "cannot alter type of a column used by a generated column"
        )
        .with_detail(format!(
            "Column \"{cname}\" is used by generated column \"{}\".",
            cur.columns[*g].name
        )));
    }
    if !cat.views.is_empty() {
        if let Some(v) =
            view_deps::column_user(&view_deps::with_table(cat, cur), cur.oid, c as i16 + 1)
        {
            return Err(err!(
                FeatureNotSupported,
                "cannot alter type of a column used by a view or rule"
            )
            .with_detail(format!(
                "rule _RETURN on view {} depends on column \"{cname}\"",
                v.name
            )));
        }
    }
    // The conversion, bound over the row as it is.
    let scope = crate::select::table_scope(cur, &cur.name, &None);
    let convert = match using {
        Some(e) => catalog::bind_row_expr(cat, e, "transform expression", |b| {
            b.assign_with(e, &scope, &ty, |_| {
                err!(
                    DatatypeMismatch,
                    "result of USING clause for column \"{cname}\" cannot be cast automatically to type {ty}"
                )
                .with_hint("You might need to add an explicit cast.")
            })
        })?,
        None => {
            let e = ast::Expr::Identifier(ast::Ident::with_quote('"', cname.clone()));
            bind::Binder::new(cat, vec![]).assign_with(&e, &scope, &ty, |_| {
                err!(
                    DatatypeMismatch,
                    "column \"{cname}\" cannot be cast automatically to type {ty}"
                )
                .with_hint(format!(
                    "You might need to specify \"USING {}::{ty}\".",
                    crate::func::catalog_info::quote_ident(&cname)
                ))
            })?
        }
    };
    if let Some(d) = &cur.columns[c].default {
        if super::default_expr(cat, &cname, d, &ty).is_err() {
            bail!(
                DatatypeMismatch,
                "default for column \"{cname}\" cannot be cast automatically to type {ty}"
            );
        }
    }
    if cur.columns[c].identity.is_some() {
        retype_identity(txn, tenant, cat, cur, &cname, &ty).await?;
    }
    // A domain's constraints hold for each converted value.
    let convert = match &def.domain {
        Some(d) => crate::expr::Expr::Domain(Box::new(convert), d.clone()),
        None => convert,
    };
    let old = cur.clone();
    cur.columns[c].ty = def;
    if catalog::bind_checks(cat, cur).is_err() {
        // Checks that no longer bind read the column as its old type, as
        // PostgreSQL's stored (already resolved) expressions do.
        let was = crate::deparse::unmodified(&old.columns[c].ty.to_type());
        let scope = crate::select::table_scope(cur, &cur.name, &None);
        for check in &mut cur.checks {
            let e = catalog::parse_stored(&check.expr, "CHECK")?;
            if catalog::check_expr(cat, &e, &scope).is_err() {
                check.expr = crate::deparse::stored_text(cat, &cast_column(e, &cname, &was)?);
            }
        }
        catalog::bind_checks(cat, cur)?;
    }
    let (_, fresh) = super::fresh_storage(txn, tenant, cur, 0).await?;
    super::rewrite(txn, tenant, &old, cur, &|row: &mut Vec<Value>| {
        row[c] = convert.eval(row, eval)?;
        Ok(())
    })
    .await?;
    check_foreign_keys(txn, tenant, cat, cur, c).await?;
    Ok(fresh)
}

/// An identity column's sequence follows the column to type `ty`; bounds
/// that were the old type's defaults become the new type's.
async fn retype_identity<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &TableDef,
    column: &str,
    ty: &sqltypes::DataType,
) -> Result<()> {
    let Some(s) = cat.owned_sequence(cur.oid, column) else { return Ok(()) };
    let (lo, hi) = crate::sequence::type_range(ty).map_err(|_| {
        err!(InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
    })?;
    let (old_lo, old_hi) = crate::sequence::type_range(&s.ty.to_type())?;
    let mut s = (**s).clone();
    if s.max == old_hi {
        s.max = hi;
    }
    if s.min == old_lo {
        s.min = lo;
    }
    s.ty = TypeDef::from_type(ty);
    write_sequence(txn, tenant, &s).await
}

/// After column `c` of `cur` changed type: the foreign keys on either side
/// of it must still compare their key columns, and still hold for the
/// converted values.
async fn check_foreign_keys<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &TableDef,
    c: usize,
) -> Result<()> {
    let snap = view_deps::with_table(cat, cur);
    for fk in cur.foreign_keys.iter().filter(|f| {
        f.columns.contains(&c) || (f.ref_table == cur.oid && f.ref_columns.contains(&c))
    }) {
        let parent = if fk.ref_table == cur.oid {
            std::sync::Arc::new(cur.clone())
        } else {
            snap.table_by_oid(fk.ref_table).ok_or_else(|| {
                err!(DataCorrupted, "foreign key {} references a missing table", fk.name)
            })?
        };
        foreign_keys::key_types(&fk.name, cur, &fk.columns, &parent, &fk.ref_columns)?;
        foreign_keys::validate(txn, tenant, &snap, cur, fk).await?;
    }
    for (child, i) in &cur.referenced_by {
        let ct = snap.table_at(child)?;
        let fk = &ct.foreign_keys[*i];
        if ct.oid == cur.oid || !fk.ref_columns.contains(&c) {
            continue;
        }
        foreign_keys::key_types(&fk.name, &ct, &fk.columns, cur, &fk.ref_columns)?;
        foreign_keys::validate(txn, tenant, &snap, &ct, fk).await?;
    }
    Ok(())
}

/// The actions of an ALTER TABLE with each ADD COLUMN's constraints
/// (PRIMARY KEY, UNIQUE, REFERENCES, CHECK) taken out of the column and
/// run as ADD CONSTRAINT actions right after it, as PostgreSQL does. The
/// flag marks those, which a skipped ADD COLUMN IF NOT EXISTS skips too.
pub(super) fn column_constraints(
    ops: &[ast::AlterTableOperation],
) -> Vec<(ast::AlterTableOperation, bool)> {
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let ast::AlterTableOperation::AddColumn { column_def, .. } = op else {
            out.push((op.clone(), false));
            continue;
        };
        let col = column_def.name.clone();
        let mut added = Vec::new();
        let mut options = Vec::with_capacity(column_def.options.len());
        for opt in &column_def.options {
            let named = |n: &Option<ast::Ident>| opt.name.clone().or_else(|| n.clone());
            let constraint = match &opt.option {
                ast::ColumnOption::PrimaryKey(pk) => {
                    let mut pk = pk.clone();
                    pk.name = named(&pk.name);
                    pk.columns = vec![ast::IndexColumn::from(col.clone())];
                    ast::TableConstraint::PrimaryKey(pk)
                }
                ast::ColumnOption::Unique(u) => {
                    let mut u = u.clone();
                    u.name = named(&u.name);
                    u.columns = vec![ast::IndexColumn::from(col.clone())];
                    ast::TableConstraint::Unique(u)
                }
                ast::ColumnOption::ForeignKey(fk) => {
                    let mut fk = fk.clone();
                    fk.name = named(&fk.name);
                    fk.columns = vec![col.clone()];
                    ast::TableConstraint::ForeignKey(fk)
                }
                ast::ColumnOption::Check(c) => {
                    let mut c = c.clone();
                    c.name = named(&c.name);
                    ast::TableConstraint::Check(c)
                }
                _ => {
                    options.push(opt.clone());
                    continue;
                }
            };
            added.push(ast::AlterTableOperation::AddConstraint { constraint, not_valid: false });
        }
        let mut op = op.clone();
        if let ast::AlterTableOperation::AddColumn { column_def, .. } = &mut op {
            column_def.options = options;
        }
        out.push((op, false));
        out.extend(added.into_iter().map(|a| (a, true)));
    }
    out
}

/// RENAME CONSTRAINT: a CHECK or FOREIGN KEY constraint, or a UNIQUE or
/// PRIMARY KEY constraint together with its index.
pub(super) fn rename_constraint(
    cat: &Catalog,
    cur: &mut TableDef,
    from: &str,
    to: String,
) -> Result<()> {
    if !cur.has_constraint(from) {
        bail!(UndefinedObject, "constraint \"{from}\" for table \"{}\" does not exist", cur.name);
    }
    if cur.has_constraint(&to) {
        bail!(DuplicateObject, "constraint \"{to}\" for relation \"{}\" already exists", cur.name);
    }
    if let Some(c) = cur.checks.iter_mut().find(|c| c.name == from) {
        c.name = to;
        cur.checks.sort_by(|a, b| a.name.cmp(&b.name));
        return Ok(());
    }
    if let Some(f) = cur.foreign_keys.iter_mut().find(|f| f.name == from) {
        f.name = to;
        return Ok(());
    }
    // A constraint with an index: the index is renamed, and its name is a
    // relation name.
    if cat.relation_exists(cur.namespace, &to) || cur.indexes.iter().any(|i| i.name == to) {
        bail!(DuplicateTable, "relation \"{to}\" already exists");
    }
    let index = cur.indexes.iter().position(|i| i.constraint && i.name == from);
    super::names::rename_index(cur, index, to);
    Ok(())
}

/// VALIDATE CONSTRAINT: checks the rows a CHECK or FOREIGN KEY constraint
/// added NOT VALID skipped, then marks it valid (a valid one is left as is).
pub(super) async fn validate_constraint<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &mut TableDef,
    name: &str,
) -> Result<()> {
    if let Some(i) = cur.checks.iter().position(|c| c.name == name) {
        if cur.checks[i].not_valid {
            let only = TableDef { checks: vec![cur.checks[i].clone()], ..cur.clone() };
            super::validate_check(txn, tenant, cat, only).await?;
            cur.checks[i].not_valid = false;
        }
        return Ok(());
    }
    if let Some(i) = cur.foreign_keys.iter().position(|f| f.name == name) {
        if cur.foreign_keys[i].not_valid {
            foreign_keys::validate(txn, tenant, cat, cur, &cur.foreign_keys[i]).await?;
            cur.foreign_keys[i].not_valid = false;
        }
        return Ok(());
    }
    if cur.has_key_constraint(name) {
        bail!(
            WrongObjectType,
            "constraint \"{name}\" of relation \"{}\" is not a foreign key or check constraint",
            cur.name
        );
    }
    bail!(UndefinedObject, "constraint \"{name}\" of relation \"{}\" does not exist", cur.name)
}

/// The storage parameters `ALTER TABLE ... SET (...)` accepts. Strata's
/// storage has no use for them (no heap pages to fill, no autovacuum), so
/// they are checked by name and not kept.
const STORAGE_PARAMETERS: &[&str] = &[
    "fillfactor",
    "toast_tuple_target",
    "parallel_workers",
    "autovacuum_enabled",
    "vacuum_index_cleanup",
    "vacuum_truncate",
    "log_autovacuum_min_duration",
    "user_catalog_table",
    "autovacuum_vacuum_threshold",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_analyze_threshold",
    "autovacuum_analyze_scale_factor",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "autovacuum_freeze_min_age",
    "autovacuum_freeze_max_age",
    "autovacuum_freeze_table_age",
    "autovacuum_multixact_freeze_min_age",
    "autovacuum_multixact_freeze_max_age",
    "autovacuum_multixact_freeze_table_age",
];

/// ALTER TABLE ... SET (name = value, ...): each name must be a storage
/// parameter PostgreSQL knows (`toast.` ones too); see
/// [`STORAGE_PARAMETERS`].
pub(super) fn storage_parameters(options: &[ast::SqlOption]) -> Result<()> {
    for o in options {
        let name = match o {
            ast::SqlOption::KeyValue { key, .. } => bind::ident(key),
            other => other.to_string().to_lowercase(),
        };
        let bare = name.strip_prefix("toast.").unwrap_or(&name);
        if !STORAGE_PARAMETERS.contains(&bare) {
            bail!(InvalidParameterValue, "unrecognized parameter \"{name}\"");
        }
    }
    Ok(())
}
