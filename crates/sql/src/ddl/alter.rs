//! ALTER TABLE operations that change a column's definition or a name:
//! ALTER COLUMN SET/DROP DEFAULT and SET/DROP NOT NULL, RENAME TO, RENAME
//! COLUMN, and ADD CONSTRAINT UNIQUE. Each works on the table definition
//! being altered (`cur`), which the caller writes back.

use std::ops::ControlFlow;

use kvapi::{TenantId, Txn};
use sqlparser::ast;

use super::sequences::write_sequence;
use super::{default_expr, table_batch};
use crate::bind;
use sqltypes::Value;

use crate::catalog::{self, keys, Catalog, IndexDef, TableDef};
use crate::error::{ErrorReport, Result};
use crate::{bail, err};

fn column(cur: &TableDef, name: &ast::Ident) -> Result<usize> {
    let n = bind::ident(name);
    cur.column_index(&n).ok_or_else(|| {
        err!(UndefinedColumn, "column \"{n}\" of relation \"{}\" does not exist", cur.name)
    })
}

/// ALTER COLUMN ... SET/DROP DEFAULT, SET/DROP NOT NULL.
pub(super) async fn alter_column<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &mut TableDef,
    name: &ast::Ident,
    op: &ast::AlterColumnOperation,
) -> Result<()> {
    let c = column(cur, name)?;
    let cname = cur.columns[c].name.clone();
    match op {
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
            cur.columns[c].default = Some(text);
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
    for check in &mut cur.checks {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let mut e = sqlparser::parser::Parser::new(&dialect)
            .try_with_sql(&check.expr)
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| err!(DataCorrupted, "stored CHECK expression does not parse: {e}"))?;
        let _ = ast::visit_expressions_mut(&mut e, |x| {
            let id = match x {
                ast::Expr::Identifier(id) => Some(id),
                ast::Expr::CompoundIdentifier(ids) => ids.last_mut(),
                _ => None,
            };
            if let Some(id) = id {
                if bind::ident(id) == from {
                    *id = ast::Ident::with_quote('"', to.clone());
                }
            }
            ControlFlow::<()>::Continue(())
        });
        check.expr = crate::deparse::stored_text(cat, &e);
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
        oid: id as u32,
        name: name.clone(),
        columns: cols,
        unique: true,
        constraint: true,
        storage: id,
        comment: None,
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
        let mut uses = false;
        bound.walk(&mut |x| uses |= x.as_column() == Some(c));
        if !uses {
            keep.push(check.clone());
        }
    }
    cur.checks = keep;
    cur.indexes.retain(|i| !i.columns.contains(&c));
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
        if *v > c {
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
