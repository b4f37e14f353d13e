//! REASSIGN OWNED and DROP OWNED: what roles own, and the privileges they
//! hold, in the tenant's database.
//!
//! REASSIGN OWNED gives every object the roles own to another role (their
//! ACL entries follow, as OWNER TO's do); default privileges stay. DROP
//! OWNED revokes what was granted to the roles, removes their default
//! privileges, and then the session drops what they own, kind by kind
//! (`owned_objects`), through the ordinary DROP.

use super::*;
use crate::acl::Ownership;

/// The roles a REASSIGN or DROP OWNED names: 42704 unless they exist;
/// 42501 unless `user` has their privileges; the bootstrap superuser's
/// objects cannot go (2BP01).
pub fn owned_roles(cat: &Catalog, user: &str, o: &crate::parse::Owned) -> Result<Vec<String>> {
    let mut roles = Vec::new();
    let what = if o.to.is_some() { "reassign" } else { "drop" };
    for id in &o.roles {
        let name = bind::ident(id);
        if cat.role(&name).is_none() {
            bail!(UndefinedObject, "role \"{name}\" does not exist");
        }
        if !cat.has_privs_of(user, &name) {
            bail!(InsufficientPrivilege, "permission denied to {what} objects");
        }
        if name == crate::acl::BOOTSTRAP {
            let verb = if o.to.is_some() { "reassign ownership of" } else { "drop" };
            bail!(
                DependentObjectsStillExist,
                "cannot {verb} objects owned by role {name} because they are required by the database system"
            );
        }
        roles.push(name);
    }
    Ok(roles)
}

/// REASSIGN OWNED BY `roles` TO `to`.
pub async fn reassign_owned<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    user: &str,
    roles: &[String],
    to: &ast::Ident,
) -> Result<DdlResult> {
    let to = bind::ident(to);
    if cat.role(&to).is_none() {
        bail!(UndefinedObject, "role \"{to}\" does not exist");
    }
    if !cat.has_privs_of(user, &to) {
        bail!(InsufficientPrivilege, "permission denied to reassign objects");
    }
    bump_version(txn, tenant).await?;
    let given = |a: &Ownership| {
        roles.contains(&a.owner).then(|| {
            let mut a = a.clone();
            a.set_owner(&to);
            a
        })
    };
    rewrite_access(txn, tenant, cat, &given).await?;
    for x in cat.extensions.values().filter(|x| roles.contains(&x.owner)) {
        extensions::put(txn, tenant, &catalog::ExtensionDef { owner: to.clone(), ..(**x).clone() })
            .await?;
    }
    Ok(DdlResult::tag("REASSIGN OWNED"))
}

/// DROP OWNED's first step: privileges granted to `roles` are revoked
/// (with those they passed on) and their default privileges removed.
pub async fn revoke_owned<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    roles: &[String],
) -> Result<DdlResult> {
    bump_version(txn, tenant).await?;
    // The ACL without the roles' entries, or None when it has none.
    let cleaned = |a: &Ownership| -> Option<Ownership> {
        let items = a.acl.as_ref()?;
        if !items.iter().any(|i| roles.contains(&i.grantee) || roles.contains(&i.grantor)) {
            return None;
        }
        let kept = items
            .iter()
            .filter(|i| !roles.contains(&i.grantee) && !roles.contains(&i.grantor))
            .cloned()
            .collect();
        Some(Ownership { owner: a.owner.clone(), acl: Some(kept) })
    };
    rewrite_access(txn, tenant, cat, &cleaned).await?;
    for d in &cat.default_acls {
        let mentioned = d.acl.iter().any(|i| roles.contains(&i.grantee));
        if roles.contains(&d.role) {
            delete_key(txn, keys::default_acl(tenant, d.oid)).await?;
        } else if mentioned {
            let acl = d.acl.iter().filter(|i| !roles.contains(&i.grantee)).cloned().collect();
            let def = catalog::DefaultAclDef { acl, ..(**d).clone() };
            put_entry(txn, keys::default_acl(tenant, d.oid), json_entry(&def)).await?;
        }
    }
    Ok(DdlResult::tag("DROP OWNED"))
}

/// Writes the owner and ACL `f` gives each object (None: unchanged):
/// tables (not temporary ones), views, sequences, types, schemas, the
/// built-in public schema and the database.
async fn rewrite_access<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    f: &(dyn Fn(&Ownership) -> Option<Ownership> + Sync),
) -> Result<()> {
    for t in cat.tables.values().filter(|t| !t.temporary) {
        if let Some(access) = f(&t.access) {
            write_table(txn, tenant, &TableDef { access, ..(**t).clone() }).await?;
        }
    }
    for v in cat.views.values() {
        if let Some(access) = f(&v.access) {
            let v = catalog::ViewDef { access, ..(**v).clone() };
            put_entry(txn, keys::view(tenant, v.oid), json_entry(&v)).await?;
        }
    }
    for s in cat.sequences.values() {
        if let Some(access) = f(&s.access) {
            sequences::write_sequence(txn, tenant, &SequenceDef { access, ..(**s).clone() })
                .await?;
        }
    }
    for (d, _) in cat.user_types.values() {
        if let Some(access) = f(&d.access) {
            types::put(txn, tenant, &catalog::UserTypeDef { access, ..(**d).clone() }).await?;
        }
    }
    let public =
        (!cat.public_dropped).then(|| (catalog::PUBLIC_NAMESPACE_OID, cat.public_access()));
    let others = cat.schemas.values().map(|s| (s.oid, std::borrow::Cow::Borrowed(&s.access)));
    for (ns, access) in public.into_iter().chain(others) {
        if let Some(access) = f(&access) {
            schemas::put_access(txn, tenant, cat, ns, access).await?;
        }
    }
    if let Some(access) = f(&cat.database_access) {
        put_entry(txn, keys::database(tenant), json_entry(&access)).await?;
    }
    Ok(())
}

/// Objects of one kind that roles own, named as DROP names them.
#[derive(Debug, Clone)]
pub enum OwnedKind {
    /// Relations or types of this DROP kind.
    Objects(ast::ObjectType, Vec<ast::ObjectName>),
    /// Extensions.
    Extensions(Vec<ast::Ident>),
    /// Schemas.
    Schemas(Vec<ast::ObjectName>),
}

/// What `roles` own, in the order DROP OWNED drops it: views,
/// materialized views, tables, sequences, types, extensions, schemas.
pub fn owned_objects(cat: &Catalog, roles: &[String]) -> Vec<OwnedKind> {
    let theirs = |a: &Ownership| roles.contains(&a.owner);
    let quoted = |n: &str| ast::Ident::with_quote('"', n);
    let name = |ns: u32, n: &str| {
        ast::ObjectName::from(vec![quoted(cat.namespace_name(ns).unwrap_or_default()), quoted(n)])
    };
    let tables = |mv: bool| -> Vec<ast::ObjectName> {
        let mine = cat.tables.values().filter(|t| !t.temporary && theirs(&t.access));
        mine.filter(|t| t.matview.is_some() == mv).map(|t| name(t.namespace, &t.name)).collect()
    };
    let views = cat.views.values().filter(|v| theirs(&v.access));
    let sequences = cat.sequences.values().filter(|s| theirs(&s.access));
    let types = cat.user_types.values().filter(|(d, _)| theirs(&d.access));
    let extensions = cat.extensions.values().filter(|x| roles.contains(&x.owner));
    let schemas = cat.schemas.values().filter(|s| theirs(&s.access));
    let out = vec![
        OwnedKind::Objects(
            ast::ObjectType::View,
            views.map(|v| name(v.namespace, &v.name)).collect(),
        ),
        OwnedKind::Objects(ast::ObjectType::MaterializedView, tables(true)),
        OwnedKind::Objects(ast::ObjectType::Table, tables(false)),
        OwnedKind::Objects(
            ast::ObjectType::Sequence,
            sequences.map(|s| name(s.namespace, &s.name)).collect(),
        ),
        OwnedKind::Objects(
            ast::ObjectType::Type,
            types.map(|(d, _)| name(d.namespace, &d.name)).collect(),
        ),
        OwnedKind::Extensions(extensions.map(|x| quoted(&x.name)).collect()),
        OwnedKind::Schemas(schemas.map(|s| ast::ObjectName::from(vec![quoted(&s.name)])).collect()),
    ];
    out.into_iter()
        .filter(|k| match k {
            OwnedKind::Objects(_, n) | OwnedKind::Schemas(n) => !n.is_empty(),
            OwnedKind::Extensions(n) => !n.is_empty(),
        })
        .collect()
}
