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

/// CREATE ROLE (and CREATE USER, rewritten to CREATE ROLE ... LOGIN).
pub async fn create_role<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cr: &ast::CreateRole,
    hasher: PasswordHasher,
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
        let r = catalog::RoleDef {
            name,
            superuser: cr.superuser.unwrap_or(false),
            login: cr.login.unwrap_or(false),
            password,
        };
        write_role(txn, tenant, &r).await?;
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
        delete_key(txn, keys::role(tenant, &name)).await?;
    }
    Ok(r)
}
