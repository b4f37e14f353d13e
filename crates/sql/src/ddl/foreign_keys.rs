//! FOREIGN KEY constraints in DDL: defining them (CREATE TABLE, ALTER TABLE
//! ADD CONSTRAINT), checking the rows already present, and the dependencies
//! DROP TABLE, DROP INDEX and TRUNCATE must respect. Enforcement on writes
//! lives in [`crate::fk`].

use std::sync::Arc;

use kvapi::{TenantId, Txn};
use sqlparser::ast;
use sqltypes::DataType;

use super::lock_table;
use crate::bind;
use crate::catalog::{keys, Catalog, FkAction, ForeignKeyDef, QualName, TableDef};
use crate::error::{ErrorReport, Result};
use crate::{bail, err};

/// A FOREIGN KEY clause waiting for its table's OIDs: (constraint name if
/// given, referencing columns, the clause).
pub(super) type PendingFk = (Option<String>, Vec<usize>, ast::ForeignKeyConstraint);

/// Resolves the referencing columns of a table-level FOREIGN KEY clause.
pub(super) fn columns(t: &TableDef, c: &ast::ForeignKeyConstraint) -> Result<Vec<usize>> {
    c.columns
        .iter()
        .map(|i| {
            let name = bind::ident(i);
            t.column_index(&name).ok_or_else(|| {
                err!(
                    UndefinedColumn,
                    "column \"{name}\" referenced in foreign key constraint does not exist"
                )
            })
        })
        .collect()
}

fn action(a: &Option<ast::ReferentialAction>) -> FkAction {
    match a {
        None | Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => FkAction::SetDefault,
    }
}

/// Types whose values can be compared for a reference (PostgreSQL requires
/// an equality operator between them).
fn comparable(a: &DataType, b: &DataType) -> bool {
    use DataType::*;
    let numeric = |t: &DataType| matches!(t, Int2 | Int4 | Int8 | Numeric(_) | Float8);
    let text = |t: &DataType| matches!(t, Text | Varchar(_) | Char(_));
    (numeric(a) && numeric(b)) || (text(a) && text(b)) || a.oid() == b.oid()
}

/// Checks that each key column of `child` can be compared with the column of
/// `parent` it references (foreign key `name`).
pub(super) fn key_types(
    name: &str,
    child: &TableDef,
    columns: &[usize],
    parent: &TableDef,
    ref_columns: &[usize],
) -> Result<()> {
    for (&c, &r) in columns.iter().zip(ref_columns) {
        let (ct, rt) = (child.columns[c].ty.to_type(), parent.columns[r].ty.to_type());
        if !comparable(&ct, &rt) {
            return Err(err!(
                DatatypeMismatch,
                "foreign key constraint \"{name}\" cannot be implemented"
            )
            .with_detail(format!(
                "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                child.columns[c].name, parent.columns[r].name, ct, rt
            )));
        }
    }
    Ok(())
}

/// Every constraint name `t` already uses (they share one namespace per table).
pub(super) fn constraint_names(t: &TableDef) -> Vec<String> {
    let mut names: Vec<String> = t.checks.iter().map(|c| c.name.clone()).collect();
    names.extend(t.foreign_keys.iter().map(|f| f.name.clone()));
    names.extend(t.pkey_name.clone());
    names.extend(t.indexes.iter().map(|i| i.name.clone()));
    names
}

/// Builds the definition of a FOREIGN KEY on `t` (whose columns, primary key
/// and indexes are final) and takes the referenced table's lock, so no
/// writer of it runs without knowing about the new constraint.
pub(super) async fn define<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    t: &TableDef,
    pending: &PendingFk,
    oid: u32,
) -> Result<ForeignKeyDef> {
    let (name, columns, c) = pending;
    if c.characteristics.as_ref().is_some_and(|ch| ch.enforced == Some(false)) {
        bail!(FeatureNotSupported, "FOREIGN KEY constraints cannot be marked NOT ENFORCED");
    }
    let deferral = super::deferral(&c.characteristics)?;
    let (deferrable, initially_deferred) = (deferral.is_some(), deferral == Some(true));
    let match_full = match c.match_kind {
        Some(ast::ConstraintReferenceMatchKind::Full) => true,
        Some(ast::ConstraintReferenceMatchKind::Partial) => {
            bail!(FeatureNotSupported, "MATCH PARTIAL not yet implemented")
        }
        _ => false,
    };
    let pname = bind::obj_name(&c.foreign_table)?;
    let own = pname.name == t.name
        && cat
            .lookup_path(&pname, false)?
            .iter()
            .find(|&&ns| ns == t.namespace || cat.relation_exists(ns, &pname.name))
            == Some(&t.namespace);
    let parent = if own { Arc::new(t.clone()) } else { cat.must_table(&pname)? };
    super::partitions::refuse_partitioned(&parent, "foreign keys referencing them")?;
    if parent.temporary && !t.temporary {
        bail!(
            InvalidTableDefinition,
            "constraints on permanent tables may reference only permanent tables"
        );
    }
    let ref_columns: Vec<usize> = if c.referred_columns.is_empty() {
        if parent.primary_key.is_empty() {
            bail!(UndefinedObject, "there is no primary key for referenced table \"{pname}\"");
        }
        parent.primary_key.clone()
    } else {
        c.referred_columns
            .iter()
            .map(|i| {
                let n = bind::ident(i);
                parent.column_index(&n).ok_or_else(|| {
                    err!(
                        UndefinedColumn,
                        "column \"{n}\" referenced in foreign key constraint does not exist"
                    )
                })
            })
            .collect::<Result<_>>()?
    };
    if ref_columns.len() != columns.len() {
        bail!(
            InvalidForeignKey,
            "number of referencing and referenced columns for foreign key disagree"
        );
    }
    let name = match name {
        Some(n) => {
            if constraint_names(t).contains(n) {
                bail!(
                    DuplicateObject,
                    "constraint \"{n}\" for relation \"{}\" already exists",
                    t.name
                );
            }
            n.clone()
        }
        None => {
            let cols: Vec<&str> = columns.iter().map(|&c| t.columns[c].name.as_str()).collect();
            let taken = constraint_names(t);
            super::free_name(format!("{}_{}_fkey", t.name, cols.join("_")), |n| {
                taken.iter().any(|t| t == n)
            })
        }
    };
    key_types(&name, t, columns, &parent, &ref_columns)?;
    let def = ForeignKeyDef {
        not_valid: false,
        name,
        oid,
        columns: columns.clone(),
        ref_table: parent.oid,
        ref_columns,
        on_delete: action(&c.on_delete),
        on_update: action(&c.on_update),
        match_full,
        deferrable,
        initially_deferred,
        parent: None,
    };
    crate::fk::target(&parent, &def)?;
    if parent.oid != t.oid {
        lock_table(txn, tenant, parent.oid).await?;
    }
    Ok(def)
}

/// Checks that every row already in `t` satisfies its foreign key `fk`
/// (ALTER TABLE ADD CONSTRAINT), locking the referenced rows.
pub(super) async fn validate<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    t: &TableDef,
    fk: &ForeignKeyDef,
) -> Result<()> {
    let only = TableDef { foreign_keys: vec![fk.clone()], ..t.clone() };
    // A self-reference is checked against the table as it will be.
    let mut with = cat.clone();
    if fk.ref_table == t.oid {
        with.tables.insert(t.qual_name(), Arc::new(only.clone()));
    }
    let mut next = Some(keys::storage(tenant, t.storage).start);
    while let Some(start) = next {
        let (batch, n) = super::table_batch(txn, tenant, t, start).await?;
        next = n;
        let rows: Vec<_> = batch.into_iter().map(|(_, r)| r).collect();
        crate::fk::check_references(txn, tenant, &with, &only, &rows, None, None).await?;
    }
    Ok(())
}

/// The foreign keys of other tables that reference `t`, leaving out the
/// tables in `going` (dropped or truncated by the same statement): each
/// referencing table with the position of the constraint.
pub(super) fn references_from_outside(
    cat: &Catalog,
    t: &TableDef,
    going: &[QualName],
) -> Result<Vec<(Arc<TableDef>, usize)>> {
    let mut out = Vec::new();
    for (child, i) in &t.referenced_by {
        if *child != t.qual_name() && !going.contains(child) {
            out.push((cat.table_at(child)?, *i));
        }
    }
    Ok(out)
}

/// 2BP01 for DROP TABLE `t` without CASCADE while `refs` reference it.
pub(super) fn still_referenced(t: &TableDef, refs: &[(Arc<TableDef>, usize)]) -> ErrorReport {
    // A partition's copy of its parent's foreign key is the parent's.
    let lines: Vec<String> = refs
        .iter()
        .filter(|(c, i)| c.foreign_keys[*i].parent.is_none())
        .map(|(c, i)| {
            format!(
                "constraint {} on table {} depends on table {}",
                c.foreign_keys[*i].name, c.name, t.name
            )
        })
        .collect();
    super::still_depended_on(&format!("table {}", t.name), &lines)
}

/// 0A000 for TRUNCATE `t` without CASCADE while `child` references it.
pub(super) fn truncate_referenced(t: &TableDef, child: &TableDef) -> ErrorReport {
    err!(FeatureNotSupported, "cannot truncate a table referenced in a foreign key constraint")
        .with_detail(format!("Table \"{}\" references \"{}\".", child.name, t.name))
        .with_hint(format!(
            "Truncate table \"{}\" at the same time, or use TRUNCATE ... CASCADE.",
            child.name
        ))
}

/// The foreign key (table name, constraint name) that needs unique index
/// `i` of `t` as its referenced key, if any.
pub(super) fn index_user(
    cat: &Catalog,
    t: &TableDef,
    i: usize,
) -> Result<Option<(String, String)>> {
    for (child, j) in &t.referenced_by {
        let c = cat.table_at(child)?;
        let fk = &c.foreign_keys[*j];
        if let Ok((crate::fk::Target::Unique(k), _)) = crate::fk::target(t, fk) {
            if k == i {
                return Ok(Some((c.name.clone(), fk.name.clone())));
            }
        }
    }
    Ok(None)
}
