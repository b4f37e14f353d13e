//! CREATE TYPE ... AS ENUM, ALTER TYPE (ADD VALUE, RENAME VALUE, RENAME TO)
//! and DROP TYPE. An enum type is one catalog row ([`catalog::UserTypeDef`]);
//! its labels keep their OIDs and sort orders for life, because stored
//! rows hold a label's OID and index keys its sort order. DROP TYPE drops
//! domains too (ddl/domains.rs makes them), and COMMENT ON TYPE | DOMAIN,
//! ownership and renames treat both kinds alike.

use super::*;
use catalog::UserTypeDef;

/// The longest label PostgreSQL allows (NAMEDATALEN - 1 bytes).
const MAX_LABEL: usize = 63;

/// CREATE TYPE name AS ENUM ('label', ...).
pub async fn create_type<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    name: &ast::ObjectName,
    representation: Option<&ast::UserDefinedTypeRepresentation>,
    owner: &str,
) -> Result<DdlResult> {
    let (namespace, name) = new_name(cat, name)?;
    if type_exists(cat, namespace, &name) {
        bail!(DuplicateObject, "type \"{name}\" already exists");
    }
    let labels = match representation {
        Some(ast::UserDefinedTypeRepresentation::Enum { labels }) => labels,
        Some(ast::UserDefinedTypeRepresentation::Composite { attributes }) => {
            return create_composite(txn, tenant, cat, namespace, name, attributes, owner).await
        }
        _ => bail!(
            FeatureNotSupported,
            "CREATE TYPE is supported only for enum and composite types so far"
        ),
    };
    let texts = labels.iter().map(label).collect::<Result<Vec<String>>>()?;
    bump_version(txn, tenant).await?;
    let first = alloc(txn, tenant, 2 + texts.len() as u64).await? as u32;
    // PostgreSQL's unique index on (enumtypid, enumlabel) catches a repeat.
    for (i, l) in texts.iter().enumerate() {
        if texts[..i].contains(l) {
            return Err(err!(
                UniqueViolation,
                "duplicate key value violates unique constraint \"pg_enum_typid_label_index\""
            )
            .with_detail(format!("Key (enumtypid, enumlabel)=({first}, {l}) already exists.")));
        }
    }
    let labels =
        texts.into_iter().enumerate().map(|(i, l)| (first + 2 + i as u32, (i + 1) as f32, l));
    let def = UserTypeDef {
        labels: labels.collect(),
        ..UserTypeDef::new(cat, first, namespace, name, owner)
    };
    put(txn, tenant, &def).await?;
    Ok(DdlResult::tag("CREATE TYPE"))
}

/// CREATE TYPE name AS (attribute type, ...): a type row, its array type
/// and a pg_class row of kind `c` that holds the attributes.
async fn create_composite<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    namespace: u32,
    name: String,
    attributes: &[ast::UserDefinedTypeCompositeAttributeDef],
    owner: &str,
) -> Result<DdlResult> {
    if cat.relation_exists(namespace, &name) {
        bail!(DuplicateTable, "relation \"{name}\" already exists");
    }
    let mut fields: Vec<catalog::CompositeAttribute> = Vec::new();
    for a in attributes {
        let name = bind::ident(&a.name);
        if fields.iter().any(|f| f.name == name) {
            bail!(DuplicateColumn, "column \"{name}\" specified more than once");
        }
        let ty = bind::column_type(cat, &a.data_type)?;
        if ty.domain.is_some() {
            bail!(
                FeatureNotSupported,
                "attributes of domain types are not supported yet (attribute \"{name}\")"
            );
        }
        let collation = match &a.collation {
            Some(c) => bind::column_collation(c, &ty.to_type())?,
            None => None,
        };
        fields.push(catalog::CompositeAttribute { name, ty, collation });
    }
    bump_version(txn, tenant).await?;
    let first = alloc(txn, tenant, 3).await? as u32;
    let def = UserTypeDef {
        composite: Some(catalog::CompositeSpec { relid: first + 2, attributes: fields }),
        ..UserTypeDef::new(cat, first, namespace, name, owner)
    };
    put(txn, tenant, &def).await?;
    Ok(DdlResult::tag("CREATE TYPE"))
}

/// ALTER TYPE name ADD VALUE / RENAME VALUE / RENAME TO.
pub async fn alter_type<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    at: &ast::AlterType,
) -> Result<DdlResult> {
    let mut def = must_get(cat, &bind::obj_name(&at.name)?, false)?;
    if def.domain.is_some() {
        bail!(WrongObjectType, "{} is not an enum", def.name);
    }
    let mut r = DdlResult::tag("ALTER TYPE");
    let position = |def: &UserTypeDef, l: &str| {
        def.labels
            .iter()
            .position(|(_, _, x)| x == l)
            .ok_or_else(|| err!(InvalidParameterValue, "\"{l}\" is not an existing enum label"))
    };
    match &at.operation {
        ast::AlterTypeOperation::AddValue(add) => {
            let text = label(&add.value)?;
            if def.labels.iter().any(|(_, _, x)| *x == text) {
                if add.if_not_exists {
                    let msg = format!("enum label \"{text}\" already exists, skipping");
                    r.notices.push(super::notice_code(sqlstate::SqlState::DuplicateObject, msg));
                    return Ok(r);
                }
                bail!(DuplicateObject, "enum label \"{text}\" already exists");
            }
            // The new label's sort order lies between its neighbours', so
            // no existing label's changes.
            let at = match &add.position {
                None => def.labels.len(),
                Some(ast::AlterTypeAddValuePosition::Before(n)) => position(&def, &label(n)?)?,
                Some(ast::AlterTypeAddValuePosition::After(n)) => position(&def, &label(n)?)? + 1,
            };
            let before = at.checked_sub(1).map(|i| def.labels[i].1);
            let after = def.labels.get(at).map(|l| l.1);
            let sort = match (before, after) {
                (None, None) => 1.0,
                (Some(b), None) => b + 1.0,
                (None, Some(a)) => a - 1.0,
                (Some(b), Some(a)) => b + (a - b) / 2.0,
            };
            if Some(sort) == before || Some(sort) == after {
                bail!(FeatureNotSupported, "no room for another enum label at this position");
            }
            bump_version(txn, tenant).await?;
            let oid = alloc(txn, tenant, 1).await? as u32;
            def.labels.insert(at, (oid, sort, text));
        }
        ast::AlterTypeOperation::RenameValue(rv) => {
            let (from, to) = (label(&rv.from)?, label(&rv.to)?);
            let i = position(&def, &from)?;
            if def.labels.iter().any(|(_, _, x)| *x == to) {
                bail!(DuplicateObject, "enum label \"{to}\" already exists");
            }
            bump_version(txn, tenant).await?;
            def.labels[i].2 = to;
        }
        ast::AlterTypeOperation::Rename(rn) => {
            let new = bind::ident(&rn.new_name);
            if type_exists(cat, def.namespace, &new) {
                bail!(DuplicateObject, "type \"{new}\" already exists");
            }
            bump_version(txn, tenant).await?;
            let schema = cat.namespace_name(def.namespace).unwrap_or_default().to_string();
            let renamed = names::one((schema.clone(), def.name.clone()), (schema, new.clone()));
            names::rename_everywhere(txn, tenant, cat, None, &renamed, false).await?;
            def.name = new;
        }
    }
    put(txn, tenant, &def).await?;
    Ok(r)
}

/// DROP TYPE [IF EXISTS] name, ...: refused while a column has the type.
pub(super) async fn drop_types<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    names: &[ast::ObjectName],
    if_exists: bool,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag("DROP TYPE");
    let mut bumped = false;
    // A domain over a type dropped by the same statement does not keep it.
    let mut dropped = Vec::new();
    for n in names {
        if let Some((d, _)) = cat.user_type_named(&bind::obj_name(n)?)? {
            dropped.push(d.oid);
        }
    }
    for n in names {
        let obj = bind::obj_name(n)?;
        let Some((def, _)) = cat.user_type_named(&obj)? else {
            let name = obj.to_string();
            skip_missing(&mut r, if_exists, sqlstate::SqlState::UndefinedObject, "type", &name)?;
            continue;
        };
        let shown = |oid| crate::func::catalog_info::format_type(Some(cat), oid, None);
        let name = &shown(def.oid);
        let over = cat.user_types.values().map(|(d, _)| d);
        let over = over.filter(|d| d.domain.as_ref().is_some_and(|s| s.base.oid == def.oid));
        let over = over.filter(|d| !dropped.contains(&d.oid));
        let mut uses: Vec<String> =
            over.map(|d| format!("type {} depends on type {name}", shown(d.oid))).collect();
        // A column of the type's array depends on the array type, listed
        // first; the others in the order their relations were made.
        let on = |oid: u32| match oid == def.array_oid {
            true => shown(oid),
            false => name.clone(),
        };
        let mut columns: Vec<(bool, u32, String)> = Vec::new();
        for t in cat.tables.values() {
            let used = t.columns.iter().filter(|c| [def.oid, def.array_oid].contains(&c.ty.oid));
            columns.extend(used.map(|c| {
                let what = format!("column {} of table {}", c.name, t.name);
                (c.ty.oid == def.oid, t.oid, format!("{what} depends on type {}", on(c.ty.oid)))
            }));
        }
        for (d, _) in cat.user_types.values().filter(|(d, _)| !dropped.contains(&d.oid)) {
            let Some(c) = &d.composite else { continue };
            let used = c.attributes.iter().filter(|a| [def.oid, def.array_oid].contains(&a.ty.oid));
            columns.extend(used.map(|a| {
                let what = format!("column {} of composite type {}", a.name, shown(d.oid));
                (a.ty.oid == def.oid, d.oid, format!("{what} depends on type {}", on(a.ty.oid)))
            }));
        }
        columns.sort_by_key(|(direct, oid, _)| (*direct, *oid));
        uses.extend(columns.into_iter().map(|(.., m)| m));
        if !uses.is_empty() {
            return Err(super::still_depended_on(&format!("type {name}"), &uses));
        }
        bump_once(txn, tenant, &mut bumped).await?;
        delete_key(txn, keys::user_type(tenant, def.oid)).await?;
    }
    Ok(r)
}

/// COMMENT ON TYPE, or COMMENT ON DOMAIN (`domain`: the type must be one).
pub(super) async fn comment_type<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    name: &ast::ObjectName,
    comment: Option<String>,
    domain: bool,
) -> Result<DdlResult> {
    let mut def = must_get(cat, &bind::obj_name(name)?, domain)?;
    bump_version(txn, tenant).await?;
    def.comment = comment;
    put(txn, tenant, &def).await?;
    Ok(DdlResult::tag("COMMENT"))
}

/// The stored definition of user-defined type `name` as the search path
/// finds it (42704 if there is none, 42809 for a built-in type, or for
/// an enum when `domain` asks for a domain).
pub(super) fn must_get(
    cat: &Catalog,
    name: &catalog::ObjName,
    domain: bool,
) -> Result<UserTypeDef> {
    if let Some((def, _)) = cat.user_type_named(name)? {
        if domain && def.domain.is_none() {
            bail!(WrongObjectType, "\"{}\" is not a domain", def.name);
        }
        return Ok((**def).clone());
    }
    let builtin = name.schema.as_deref().is_none_or(|s| s == "pg_catalog");
    let parts = vec![ast::Ident::new(&name.name)];
    let ty = ast::DataType::Custom(ast::ObjectName::from(parts), vec![]);
    match bind::data_type(&ty) {
        Ok(other) if builtin => bail!(WrongObjectType, "{other} is not an enum"),
        _ => bail!(UndefinedObject, "type \"{name}\" does not exist"),
    }
}

/// Whether schema `ns` has a type named `name`: an enum, or a table's or
/// view's row type.
pub(super) fn type_exists(cat: &Catalog, ns: u32, name: &str) -> bool {
    let key = (ns, name.to_string());
    cat.user_types.contains_key(&key)
        || cat.tables.contains_key(&key)
        || cat.views.contains_key(&key)
}

/// An enum label: a string literal of at most 63 bytes.
fn label(i: &ast::Ident) -> Result<String> {
    if i.quote_style != Some('\'') {
        bail!(SyntaxError, "syntax error at or near \"{}\"", i.value);
    }
    if i.value.len() > MAX_LABEL {
        return Err(err!(InvalidName, "invalid enum label \"{}\"", i.value)
            .with_detail(format!("Labels must be {MAX_LABEL} bytes or less.")));
    }
    Ok(i.value.clone())
}

pub(super) async fn put<T: Txn>(txn: &mut T, tenant: TenantId, def: &UserTypeDef) -> Result<()> {
    put_entry(txn, keys::user_type(tenant, def.oid), json_entry(def)).await
}
