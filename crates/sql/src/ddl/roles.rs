//! CREATE ROLE, ALTER ROLE and DROP ROLE; passwords become SCRAM verifiers
//! through the hasher the server wiring supplies.

use super::*;

pub(super) async fn write_role<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    r: &catalog::RoleDef,
) -> Result<()> {
    put_entry(txn, keys::role(tenant, &r.name), json_entry(r)).await
}

pub(super) fn role_password(p: &ast::Password, hasher: PasswordHasher) -> Result<Option<String>> {
    match p {
        ast::Password::NullPassword => Ok(None),
        ast::Password::Password(ast::Expr::Value(v)) => match &v.value {
            ast::Value::SingleQuotedString(s) if s.starts_with("SCRAM-SHA-256$") => {
                Ok(Some(s.clone()))
            }
            ast::Value::SingleQuotedString(s) => Ok(Some(hasher(s))),
            other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
        },
        ast::Password::Password(other) => bail!(SyntaxError, "syntax error at or near \"{other}\""),
    }
}

/// A role named in a role option: 42704 unless it exists.
fn existing_role(cat: &Catalog, id: &ast::Ident) -> Result<String> {
    let name = bind::ident(id);
    if cat.role(&name).is_none() {
        bail!(UndefinedObject, "role \"{name}\" does not exist");
    }
    Ok(name)
}

/// CREATE ROLE (and CREATE USER, rewritten to CREATE ROLE ... LOGIN), made
/// by `user`.
pub async fn create_role<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cr: &ast::CreateRole,
    hasher: PasswordHasher,
    user: &str,
) -> Result<DdlResult> {
    bump_version(txn, tenant).await?;
    for n in &cr.names {
        let name = bind::object_name(n)?;
        if cat.role(&name).is_some() {
            if cr.if_not_exists {
                continue;
            }
            bail!(DuplicateObject, "role \"{name}\" already exists");
        }
        let password = match &cr.password {
            Some(p) => role_password(p, hasher)?,
            None => None,
        };
        let mut r = catalog::RoleDef {
            superuser: cr.superuser.unwrap_or(false),
            login: cr.login.unwrap_or(false),
            inherit: cr.inherit.unwrap_or(true),
            createrole: cr.create_role.unwrap_or(false),
            createdb: cr.create_db.unwrap_or(false),
            password,
            ..catalog::RoleDef::new(&name)
        };
        // IN ROLE r: the new role is a member of r.
        for g in cr.in_role.iter().chain(&cr.in_group) {
            let group = existing_role(cat, g)?;
            r.member_of.push(catalog::Membership {
                role: group,
                grantor: user.into(),
                admin: false,
            });
        }
        write_role(txn, tenant, &r).await?;
        // ROLE m / ADMIN m: m becomes a member of the new role.
        let members = cr.role.iter().chain(&cr.user).map(|m| (m, false));
        for (m, admin) in members.chain(cr.admin.iter().map(|m| (m, true))) {
            let name = existing_role(cat, m)?;
            let Some(mut def) = cat.role(&name) else {
                bail!(UndefinedObject, "role \"{name}\" does not exist")
            };
            def.member_of.push(catalog::Membership {
                role: name.clone(),
                grantor: user.into(),
                admin,
            });
            write_role(txn, tenant, &def).await?;
        }
    }
    Ok(DdlResult::tag("CREATE ROLE"))
}

/// ALTER ROLE ... `[WITH]` options (PASSWORD, LOGIN, SUPERUSER).
pub async fn alter_role<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    name: &ast::Ident,
    op: &ast::AlterRoleOperation,
    hasher: PasswordHasher,
) -> Result<DdlResult> {
    let name = bind::ident(name);
    let Some(mut r) = cat.role(&name) else {
        bail!(UndefinedObject, "role \"{name}\" does not exist")
    };
    let ast::AlterRoleOperation::WithOptions { options } = op else {
        bail!(FeatureNotSupported, "this ALTER ROLE form is not supported yet");
    };
    bump_version(txn, tenant).await?;
    for o in options {
        match o {
            ast::RoleOption::Password(p) => r.password = role_password(p, hasher)?,
            ast::RoleOption::Login(b) => r.login = *b,
            ast::RoleOption::SuperUser(b) => r.superuser = *b,
            ast::RoleOption::Inherit(b) => r.inherit = *b,
            ast::RoleOption::CreateRole(b) => r.createrole = *b,
            ast::RoleOption::CreateDB(b) => r.createdb = *b,
            other => bail!(FeatureNotSupported, "role option not supported yet: {other}"),
        }
    }
    write_role(txn, tenant, &r).await?;
    Ok(DdlResult::tag("ALTER ROLE"))
}

/// DROP ROLE.
pub async fn drop_role<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    names: &[ast::ObjectName],
    if_exists: bool,
    user: &str,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag("DROP ROLE");
    bump_version(txn, tenant).await?;
    for n in names {
        let name = bind::object_name(n)?;
        if name == "postgres" {
            bail!(ObjectInUse, "cannot drop role postgres: it is the bootstrap superuser");
        }
        if cat.role(&name).is_none() {
            skip_missing(&mut r, if_exists, sqlstate::SqlState::UndefinedObject, "role", &name)?;
            continue;
        }
        if name == user {
            bail!(ObjectInUse, "current user cannot be dropped");
        }
        let uses = role_uses(cat, &name);
        if !uses.is_empty() {
            return Err(err!(
                DependentObjectsStillExist,
                "role \"{name}\" cannot be dropped because some objects depend on it"
            )
            .with_detail(uses.join("\n")));
        }
        delete_key(txn, keys::role(tenant, &name)).await?;
        // Its members stop being members.
        for mut other in cat.all_roles() {
            if other.member_of.iter().any(|m| m.role == name) {
                other.member_of.retain(|m| m.role != name);
                write_role(txn, tenant, &other).await?;
            }
        }
    }
    Ok(r)
}

/// What keeps a role from being dropped, as PostgreSQL's DETAIL lines:
/// objects it owns, and objects whose ACL names it.
fn role_uses(cat: &Catalog, role: &str) -> Vec<String> {
    use crate::acl::Ownership;
    let mut objects: Vec<(String, &Ownership)> = Vec::new();
    let name_of = |ns: u32, n: &str| crate::func::catalog_info::relation_display_name(cat, ns, n);
    if cat.database_access.owner == role || cat.database_access.mentions(role) {
        objects.push(("database postgres".into(), &cat.database_access));
    }
    for s in cat.schemas.values() {
        objects.push((format!("schema {}", s.name), &s.access));
    }
    for t in cat.tables.values().filter(|t| !t.temporary) {
        let kind = if t.matview.is_some() { "materialized view" } else { "table" };
        objects.push((format!("{kind} {}", name_of(t.namespace, &t.name)), &t.access));
    }
    for v in cat.views.values() {
        objects.push((format!("view {}", name_of(v.namespace, &v.name)), &v.access));
    }
    for s in cat.sequences.values() {
        objects.push((format!("sequence {}", name_of(s.namespace, &s.name)), &s.access));
    }
    for (d, _) in cat.user_types.values() {
        let name = match cat.type_visible(d.namespace, &d.name) {
            true => crate::func::catalog_info::quote_ident(&d.name),
            false => crate::func::catalog_info::qualified_name(cat, d.namespace, &d.name),
        };
        objects.push((format!("type {name}"), &d.access));
    }
    let mut owner = Vec::new();
    let mut privileges = Vec::new();
    for (what, access) in objects {
        if access.owner == role {
            owner.push(format!("owner of {what}"));
        } else if access.mentions(role) {
            privileges.push(format!("privileges for {what}"));
        }
    }
    if cat.public_access.as_ref().is_some_and(|a| a.mentions(role)) {
        privileges.push("privileges for schema public".into());
    }
    for d in &cat.default_acls {
        let kind = match d.objtype {
            'r' => "relations",
            'S' => "sequences",
            'f' => "functions",
            'T' => "types",
            _ => "schemas",
        };
        let mut what = format!("default privileges on new {kind} belonging to role {}", d.role);
        if let Some(s) = cat.namespace_name(d.namespace).filter(|_| d.namespace != 0) {
            what.push_str(&format!(" in schema {s}"));
        }
        if d.role == role {
            owner.push(format!("owner of {what}"));
        } else if d.acl.iter().any(|i| i.grantee == role || i.grantor == role) {
            owner.push(format!("privileges for {what}"));
        }
    }
    for x in cat.extensions.values().filter(|x| x.owner == role) {
        owner.push(format!("owner of extension {}", x.name));
    }
    owner.extend(privileges);
    owner
}
