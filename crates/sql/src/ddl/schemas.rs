//! CREATE SCHEMA, ALTER SCHEMA (RENAME TO, OWNER TO), DROP SCHEMA [CASCADE]
//! (its extensions included) and COMMENT ON SCHEMA. A schema is one catalog row
//! ([`catalog::SchemaDef`]); `public`, `pg_catalog` and
//! `information_schema` exist without one. Objects name their schema by
//! OID, so they need no change when it is renamed, but stored expression
//! text names it (deparse.rs) and is rewritten (names.rs).

use super::*;
use catalog::SchemaDef;

/// CREATE SCHEMA [IF NOT EXISTS] name [AUTHORIZATION role], or
/// CREATE SCHEMA AUTHORIZATION role (named after the role).
pub async fn create_schema<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    schema: &ast::SchemaName,
    if_not_exists: bool,
    user: &str,
) -> Result<DdlResult> {
    let (name, owner) = match schema {
        ast::SchemaName::Simple(n) => (schema_name(n)?, user.to_string()),
        ast::SchemaName::UnnamedAuthorization(r) => (bind::ident(r), bind::ident(r)),
        ast::SchemaName::NamedAuthorization(n, r) => (schema_name(n)?, bind::ident(r)),
    };
    if cat.role(&owner).is_none() {
        bail!(UndefinedObject, "role \"{owner}\" does not exist");
    }
    let mut r = DdlResult::tag("CREATE SCHEMA");
    if cat.namespace_oid(&name).is_some() && name != "pg_temp" {
        if if_not_exists {
            r.notices.push(super::notice_code(
                sqlstate::SqlState::DuplicateSchema,
                format!("schema \"{name}\" already exists, skipping"),
            ));
            return Ok(r);
        }
        bail!(DuplicateSchema, "schema \"{name}\" already exists");
    }
    if name.starts_with("pg_") {
        return Err(err!(ReservedName, "unacceptable schema name \"{name}\"")
            .with_detail("The prefix \"pg_\" is reserved for system schemas."));
    }
    bump_version(txn, tenant).await?;
    let oid = alloc(txn, tenant, 1).await? as u32;
    let access = crate::acl::Ownership::created(cat, &owner, crate::acl::ObjKind::Schema, 0);
    put(txn, tenant, &SchemaDef { oid, name, access, comment: None }).await?;
    Ok(r)
}

/// ALTER SCHEMA name RENAME TO / OWNER TO.
pub async fn alter_schema<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    a: &ast::AlterSchema,
    user: &str,
) -> Result<DdlResult> {
    let name = schema_name(&a.name)?;
    let r = DdlResult::tag("ALTER SCHEMA");
    let mut def = match cat.schemas.get(&name) {
        Some(d) => (**d).clone(),
        // The built-in public schema gets a row once its owner changes.
        None if cat.namespace_oid(&name) == Some(catalog::PUBLIC_NAMESPACE_OID) => SchemaDef {
            oid: catalog::PUBLIC_NAMESPACE_OID,
            name: name.clone(),
            access: cat.public_access().into_owned(),
            comment: None,
        },
        None if cat.namespace_oid(&name).is_some() => {
            bail!(FeatureNotSupported, "ALTER SCHEMA {name} is not supported")
        }
        None if a.if_exists => return Ok(r),
        None => bail!(InvalidSchemaName, "schema \"{name}\" does not exist"),
    };
    for op in &a.operations {
        match op {
            ast::AlterSchemaOperation::OwnerTo { owner } => {
                let new = owner::owner_name(cat, owner, user)?;
                let kind = crate::acl::ObjKind::Schema;
                if let Some(access) = owner::changed(cat, user, &def.access, kind, &name, 0, &new)?
                {
                    def.access = access;
                }
            }
            ast::AlterSchemaOperation::Rename { name: to } => {
                let to = schema_name(to)?;
                if cat.namespace_oid(&to).is_some() {
                    bail!(DuplicateSchema, "schema \"{to}\" already exists");
                }
                if to.starts_with("pg_") {
                    return Err(err!(ReservedName, "unacceptable schema name \"{to}\"")
                        .with_detail("The prefix \"pg_\" is reserved for system schemas."));
                }
                let from = def.name.clone();
                let moved = |n: &catalog::ObjName| {
                    (n.schema.as_deref() == Some(from.as_str()))
                        .then(|| (to.clone(), n.name.clone()))
                };
                names::rename_everywhere(txn, tenant, cat, None, &moved, true).await?;
                def.name = to;
            }
            other => bail!(FeatureNotSupported, "ALTER SCHEMA {other} is not supported yet"),
        }
    }
    bump_version(txn, tenant).await?;
    put(txn, tenant, &def).await?;
    Ok(r)
}

/// DROP SCHEMA (IF EXISTS) name, ... (CASCADE): without CASCADE only an
/// empty schema goes; with it, its extensions (and what uses their
/// functions), views, tables (and the foreign keys other tables have on
/// them), sequences and types go first.
pub async fn drop_schemas<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag("DROP SCHEMA");
    for n in names {
        let name = schema_name(n)?;
        let def = match (cat.schemas.get(&name), cat.namespace_oid(&name)) {
            (Some(def), _) => def.clone(),
            // The built-in public schema goes like any other; a marker
            // records that it is gone.
            (None, Some(catalog::PUBLIC_NAMESPACE_OID)) => Arc::new(SchemaDef {
                oid: catalog::PUBLIC_NAMESPACE_OID,
                name,
                access: cat.public_access().into_owned(),
                comment: None,
            }),
            (None, Some(_)) => bail!(
                DependentObjectsStillExist,
                "cannot drop schema {name} because it is required by the database system"
            ),
            (None, None) => {
                let code = sqlstate::SqlState::InvalidSchemaName;
                skip_missing(&mut r, if_exists, code, "schema", &name)?;
                continue;
            }
        };
        let name = &def.name;
        let objects = contents(cat, def.oid);
        // Objects of a schema on the search path are named bare, as
        // PostgreSQL names visible objects.
        let shown: Vec<String> = objects
            .iter()
            .map(|(_, kind, obj)| {
                match cat.path.relations.contains(&def.oid) || *kind == "extension" {
                    true => format!("{kind} {obj}"),
                    false => format!("{kind} {}.{obj}", def.name),
                }
            })
            .collect();
        // Its extensions go first, with what uses their functions.
        let installed: Vec<Arc<catalog::ExtensionDef>> =
            cat.extensions.values().filter(|x| x.namespace == def.oid).cloned().collect();
        // Listed after the extensions, as PostgreSQL lists them.
        let after_extensions = shown.iter().filter(|o| o.starts_with("extension ")).count();
        if !objects.is_empty() && !cascade {
            let mut detail: Vec<String> =
                shown.iter().map(|o| format!("{o} depends on schema {name}")).collect();
            let users = extensions::user_lines(cat, &installed);
            detail.splice(after_extensions..after_extensions, users);
            return Err(super::still_depended_on(&format!("schema {name}"), &detail));
        }
        let qualified = |kind: &str| -> Vec<ast::ObjectName> {
            let of_kind = objects.iter().filter(|(_, k, _)| *k == kind);
            of_kind
                .map(|(_, _, o)| {
                    let parts = [def.name.as_str(), o.as_str()];
                    ast::ObjectName::from(parts.map(|p| ast::Ident::with_quote('"', p)).to_vec())
                })
                .collect()
        };
        let mut with_extensions = Vec::new();
        if !installed.is_empty() {
            with_extensions =
                extensions::drop_installed(txn, tenant, cat, &installed, true).await?;
        }
        // Views of other schemas that read its relations, and other
        // schemas' foreign keys on its tables, go too.
        let mut d = Dropping::new(true);
        let names = qualified("view");
        if !names.is_empty() {
            drop_views(txn, tenant, cat, &names, false, &mut d).await?;
        }
        let names = qualified("table");
        if !names.is_empty() {
            let table = ast::ObjectType::Table;
            drop_relations(txn, tenant, cat, &table, &names, false, &mut d).await?;
        }
        let mut listed = shown;
        listed.splice(after_extensions..after_extensions, with_extensions);
        for c in d.cascaded {
            if !listed.contains(&c) {
                listed.push(c);
            }
        }
        r.notices.extend(view_deps::cascade_notice(&listed));
        let sequences = qualified("sequence");
        if !sequences.is_empty() {
            // Defaults outside the schema that use its sequences go too.
            let dropped: HashSet<u32> =
                objects.iter().map(|(oid, ..)| *oid).chain(d.views.iter().copied()).collect();
            drop_sequences(txn, tenant, cat, &sequences, false, (true, &dropped)).await?;
        }
        for (oid, kind, type_name) in &objects {
            if *kind != "type" {
                continue;
            }
            let def_oid = *oid;
            let Some(e) = cat.user_type(def_oid) else { continue };
            let outside = cat.tables.values().filter(|t| t.namespace != def.oid);
            for t in outside {
                let uses = t.columns.iter().find(|c| c.ty.oid == e.oid || c.ty.oid == e.array_oid);
                if let Some(c) = uses {
                    bail!(
                        FeatureNotSupported,
                        "cannot drop type {}.{type_name}: column {} of table {} uses it",
                        def.name,
                        c.name,
                        t.name
                    );
                }
            }
            delete_key(txn, keys::user_type(tenant, e.oid)).await?;
        }
        for (oid, kind, sig) in &objects {
            if !matches!(*kind, "function" | "procedure") {
                continue;
            }
            // Triggers on its own tables went with them.
            if let Some((trigger, table)) = super::triggers::triggers_calling(cat, *oid)
                .into_iter()
                .find(|(_, t)| !objects.iter().any(|(_, k, n)| *k == "table" && n == t))
            {
                bail!(
                    FeatureNotSupported,
                    "cannot drop {kind} {}.{sig}: trigger {trigger} on table {table} calls it (not supported yet)",
                    def.name
                );
            }
            delete_key(txn, keys::function(tenant, *oid)).await?;
        }
        bump_version(txn, tenant).await?;
        if def.oid == catalog::PUBLIC_NAMESPACE_OID {
            put_entry(txn, keys::public_dropped(tenant), vec![]).await?;
        }
        delete_key(txn, keys::schema(tenant, def.oid)).await?;
    }
    Ok(r)
}

/// COMMENT ON SCHEMA name IS ... (`public`'s comment is PostgreSQL's and
/// stays).
pub(super) async fn comment<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    name: &ast::ObjectName,
    text: Option<String>,
) -> Result<DdlResult> {
    let name = schema_name(name)?;
    let r = DdlResult::tag("COMMENT");
    let Some(def) = cat.schemas.get(&name) else {
        if cat.namespace_oid(&name).is_some() {
            return Ok(r);
        }
        bail!(InvalidSchemaName, "schema \"{name}\" does not exist");
    };
    let mut def = (**def).clone();
    def.comment = text;
    bump_version(txn, tenant).await?;
    put(txn, tenant, &def).await?;
    Ok(r)
}

/// The objects in schema `ns` that DROP SCHEMA names: (OID, kind, name),
/// in OID order. Indexes and sequences owned by a column go with their
/// table and are not listed.
fn contents(cat: &Catalog, ns: u32) -> Vec<(u32, &'static str, String)> {
    let tables: Vec<u32> =
        cat.tables.values().filter(|t| t.namespace == ns).map(|t| t.oid).collect();
    let mut out: Vec<(u32, &'static str, String)> = Vec::new();
    for x in cat.extensions.values().filter(|x| x.namespace == ns) {
        out.push((x.oid, "extension", x.name.clone()));
    }
    for (d, _) in cat.user_types.values().filter(|(d, _)| d.namespace == ns) {
        out.push((d.oid, "type", d.name.clone()));
    }
    for t in cat.tables.values().filter(|t| t.namespace == ns) {
        out.push((t.oid, "table", t.name.clone()));
    }
    for v in cat.views.values().filter(|v| v.namespace == ns) {
        out.push((v.oid, "view", v.name.clone()));
    }
    // A sequence owned by one of the tables listed goes with it.
    let owned_here = |s: &crate::sequence::SequenceDef| {
        s.owned_by.as_ref().is_some_and(|(t, _)| tables.contains(t))
    };
    for s in cat.sequences.values().filter(|s| s.namespace == ns && !owned_here(s)) {
        out.push((s.oid, "sequence", s.name.clone()));
    }
    for f in cat.functions.values().flatten().filter(|f| f.namespace == ns) {
        let kind = if f.procedure { "procedure" } else { "function" };
        out.push((f.oid, kind, super::functions::signature(f)));
    }
    out.sort_by_key(|(oid, ..)| *oid);
    out
}

/// A schema name: one identifier.
fn schema_name(n: &ast::ObjectName) -> Result<String> {
    if n.0.len() != 1 {
        bail!(SyntaxError, "improper qualified name (too many dotted names): {n}");
    }
    bind::object_name(n)
}

/// Stores schema `ns`'s changed owner and ACL (the built-in public
/// schema, which has no definition, gets a row for them).
pub(super) async fn put_access<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    ns: u32,
    access: crate::acl::Ownership,
) -> Result<()> {
    let def = match cat.schemas.values().find(|s| s.oid == ns) {
        Some(d) => SchemaDef { access, ..(**d).clone() },
        None => SchemaDef { oid: ns, name: "public".into(), access, comment: None },
    };
    put(txn, tenant, &def).await
}

pub(super) async fn put<T: Txn>(txn: &mut T, tenant: TenantId, def: &SchemaDef) -> Result<()> {
    put_entry(txn, keys::schema(tenant, def.oid), json_entry(def)).await
}
