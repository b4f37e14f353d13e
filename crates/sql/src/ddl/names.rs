//! Renames that reach stored text: ALTER TABLE ... RENAME TO and SET
//! SCHEMA, ALTER VIEW ... RENAME TO and SET SCHEMA, ALTER SEQUENCE and
//! ALTER TYPE ... SET SCHEMA, ALTER TYPE ... RENAME TO and ALTER SCHEMA ...
//! RENAME TO.
//!
//! Objects name their schema, and each other, by OID, so the catalog rows
//! themselves need only the new name or namespace. But stored text (view
//! queries, column defaults, CHECK conditions) names relations and types
//! schema-qualified (deparse.rs), so [`rename_everywhere`] rewrites every
//! such text that names a moved or renamed object.

use super::*;
use crate::catalog::ObjName;
use crate::deparse::{rename_in_expr, rename_names, Renaming};
use crate::parse::{AlterName, NameChange, RelationKind};

/// Applies `to` to every view query (materialized ones too), column
/// default and CHECK condition
/// (with `functions`, to the extension functions they call too).
/// `cur`, the definition of a table being altered, is changed in place
/// (its caller writes it); other tables are written here.
pub(super) async fn rename_everywhere<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    mut cur: Option<&mut TableDef>,
    to: Renaming<'_>,
    functions: bool,
) -> Result<()> {
    for v in cat.views.values() {
        let Ok(mut q) = v.parse() else { continue };
        if rename_names(&mut q, to, functions) {
            let view = catalog::ViewDef { query: q.to_string(), ..(**v).clone() };
            put_entry(txn, keys::view(tenant, v.oid), json_entry(&view)).await?;
        }
    }
    for t in cat.tables.values().filter(|t| !t.temporary) {
        let mut own = None;
        let def: &mut TableDef = match cur.as_deref_mut() {
            Some(c) if c.oid == t.oid => c,
            _ => own.insert((**t).clone()),
        };
        let mut changed = false;
        if let Some(mv) = &mut def.matview {
            if let Ok(mut q) = crate::parse::query_text(&mv.query) {
                if rename_names(&mut q, to, functions) {
                    mv.query = q.to_string();
                    changed = true;
                }
            }
        }
        for c in &mut def.columns {
            if let Some(d) = c.default.as_deref().and_then(|d| rename_in_expr(d, to, functions)) {
                c.default = Some(d);
                changed = true;
            }
        }
        for c in &mut def.checks {
            if let Some(e) = rename_in_expr(&c.expr, to, functions) {
                c.expr = e;
                changed = true;
            }
        }
        if let (true, Some(def)) = (changed, own) {
            lock_table(txn, tenant, def.oid).await?;
            write_table(txn, tenant, &def).await?;
        }
    }
    Ok(())
}

/// The renaming of one object: (schema, name) to (schema, name).
pub(super) fn one(
    from: (String, String),
    to: (String, String),
) -> impl Fn(&ObjName) -> Option<(String, String)> + Sync {
    move |n: &ObjName| {
        (n.schema.as_deref() == Some(from.0.as_str()) && n.name == from.1).then(|| to.clone())
    }
}

/// What ALTER ... SET SCHEMA / RENAME TO names.
enum Object {
    Relation(catalog::Relation),
    Type(Arc<catalog::UserTypeDef>),
}

/// Renames index `i` of `t` (None: the primary key's). A UNIQUE or
/// PRIMARY KEY constraint shares its index's name, so it is renamed too.
pub(super) fn rename_index(t: &mut TableDef, i: Option<usize>, to: String) {
    match i {
        Some(i) => t.indexes[i].name = to,
        None => t.pkey_name = Some(to),
    }
}

/// ALTER TABLE/VIEW/SEQUENCE/TYPE name SET SCHEMA, ALTER VIEW | INDEX name
/// RENAME TO.
pub async fn alter_name<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    a: &AlterName,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag(a.kind.tag());
    let name = bind::obj_name(&a.name)?;
    let found = match a.kind {
        RelationKind::Type | RelationKind::Domain => match cat.user_type_named(&name)? {
            Some((d, _)) if a.kind == RelationKind::Domain && d.domain.is_none() => {
                bail!(WrongObjectType, "\"{}\" is not a domain", d.name)
            }
            found => found.map(|(d, _)| Object::Type(d.clone())),
        },
        _ => match cat.relation(&name)? {
            Some(rel @ catalog::Relation::Index(..)) if a.kind == RelationKind::Index => {
                Some(Object::Relation(rel))
            }
            Some(catalog::Relation::Index(..)) | None => None,
            Some(rel) => {
                let fits = matches!(
                    (&rel, a.kind),
                    (_, RelationKind::Table)
                        | (catalog::Relation::View(_), RelationKind::View)
                        | (catalog::Relation::Sequence(_), RelationKind::Sequence)
                );
                if !fits {
                    let what = match a.kind {
                        RelationKind::View => "a view",
                        RelationKind::Index => "an index",
                        _ => "a sequence",
                    };
                    bail!(WrongObjectType, "\"{}\" is not {what}", name.name);
                }
                Some(Object::Relation(rel))
            }
        },
    };
    let Some(found) = found else {
        let what = if a.kind.is_type() { "type" } else { "relation" };
        if a.if_exists {
            r.notices.push(notice(format!("{what} \"{name}\" does not exist, skipping")));
            return Ok(r);
        }
        match a.kind {
            RelationKind::Type | RelationKind::Domain => {
                bail!(UndefinedObject, "type \"{name}\" does not exist")
            }
            _ => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
        }
    };
    let (ns, old) = match &found {
        Object::Relation(rel) => (rel.namespace(), name.name.clone()),
        Object::Type(d) => (d.namespace, d.name.clone()),
    };
    let schema = cat.namespace_name(ns).unwrap_or_default().to_string();
    let (to_ns, to_name) = match &a.change {
        NameChange::Rename(n) => (ns, bind::ident(n)),
        NameChange::Schema(s) => {
            let s = bind::ident(s);
            let Some(to) = cat.namespace_oid(&s) else {
                bail!(InvalidSchemaName, "schema \"{s}\" does not exist");
            };
            if matches!(to, catalog::PG_CATALOG_NAMESPACE_OID | catalog::INFO_SCHEMA_NAMESPACE_OID)
            {
                bail!(FeatureNotSupported, "cannot move objects into or out of system schemas");
            }
            (to, old.clone())
        }
    };
    if (to_ns, to_name.as_str()) == (ns, old.as_str()) {
        return Ok(r);
    }
    let taken = match a.kind {
        RelationKind::Type | RelationKind::Domain => types::type_exists(cat, to_ns, &to_name),
        _ => cat.relation_exists(to_ns, &to_name),
    };
    if taken {
        let to_schema = cat.namespace_name(to_ns).unwrap_or_default();
        return Err(match (&a.change, a.kind) {
            (NameChange::Rename(_), _) => {
                err!(DuplicateTable, "relation \"{to_name}\" already exists")
            }
            (_, RelationKind::Type | RelationKind::Domain) => {
                err!(DuplicateObject, "type \"{to_name}\" already exists in schema \"{to_schema}\"")
            }
            _ => err!(
                DuplicateTable,
                "relation \"{to_name}\" already exists in schema \"{to_schema}\""
            ),
        });
    }
    bump_version(txn, tenant).await?;
    let to_schema = cat.namespace_name(to_ns).unwrap_or_default().to_string();
    let moved = one((schema.clone(), old.clone()), (to_schema.clone(), to_name.clone()));
    match found {
        Object::Relation(catalog::Relation::Table(t)) => {
            refuse_temporary(&t, "ALTER TABLE")?;
            // The sequences its columns own move with it.
            let owned: Vec<Arc<SequenceDef>> = cat
                .sequences
                .values()
                .filter(|s| s.owned_by.as_ref().is_some_and(|(o, _)| *o == t.oid))
                .cloned()
                .collect();
            if let Some(s) = owned.iter().find(|s| cat.relation_exists(to_ns, &s.name)) {
                bail!(
                    DuplicateTable,
                    "relation \"{}\" already exists in schema \"{to_schema}\"",
                    s.name
                );
            }
            lock_table(txn, tenant, t.oid).await?;
            let mut cur = TableDef { namespace: to_ns, ..(*t).clone() };
            let names: Vec<String> = owned.iter().map(|s| s.name.clone()).collect();
            let (from_schema, dest) = (schema.clone(), to_schema.clone());
            let to = move |n: &ObjName| {
                moved(n).or_else(|| {
                    let ours = n.schema.as_deref() == Some(from_schema.as_str());
                    (ours && names.contains(&n.name)).then(|| (dest.clone(), n.name.clone()))
                })
            };
            rename_everywhere(txn, tenant, cat, Some(&mut cur), &to, false).await?;
            for s in owned {
                let s = SequenceDef { namespace: to_ns, ..(*s).clone() };
                sequences::write_sequence(txn, tenant, &s).await?;
            }
            write_table(txn, tenant, &cur).await?;
        }
        Object::Relation(catalog::Relation::View(v)) => {
            rename_everywhere(txn, tenant, cat, None, &moved, false).await?;
            let v = catalog::ViewDef { namespace: to_ns, name: to_name, ..(*v).clone() };
            put_entry(txn, keys::view(tenant, v.oid), json_entry(&v)).await?;
        }
        Object::Relation(catalog::Relation::Sequence(s)) => {
            rename_everywhere(txn, tenant, cat, None, &moved, false).await?;
            let s = SequenceDef { namespace: to_ns, ..(*s).clone() };
            sequences::write_sequence(txn, tenant, &s).await?;
        }
        Object::Relation(catalog::Relation::Index(t, i)) => {
            if to_ns != ns {
                bail!(FeatureNotSupported, "ALTER INDEX ... SET SCHEMA is not supported");
            }
            lock_table(txn, tenant, t.oid).await?;
            let mut cur = (*t).clone();
            rename_index(&mut cur, i, to_name);
            write_table(txn, tenant, &cur).await?;
        }
        Object::Type(d) => {
            rename_everywhere(txn, tenant, cat, None, &moved, false).await?;
            let d = catalog::UserTypeDef { namespace: to_ns, name: to_name, ..(*d).clone() };
            types::put(txn, tenant, &d).await?;
        }
    }
    Ok(r)
}
