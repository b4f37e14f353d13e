//! Who may run which DDL: the ownership and privilege checks a statement
//! passes before it changes the catalog (PostgreSQL's ownership checks and
//! the CREATE privilege on schemas and the database), in one place.
//!
//! Objects that do not exist are left alone here: the statement itself
//! reports them, with the error PostgreSQL gives.

use super::*;
use crate::acl::{self, ObjKind};
use crate::parse::Stmt;

/// Fails with 42501 unless `user` may run `stmt`.
pub fn authorize(cat: &Catalog, user: &str, stmt: &Stmt) -> Result<()> {
    if cat.is_superuser(user) {
        return Ok(());
    }
    match stmt {
        Stmt::Sql(s) => authorize_statement(cat, user, s),
        Stmt::AlterSequence(a) => own_relation(cat, user, &a.name),
        Stmt::AlterIdentity(a) => {
            own_relation(cat, user, &a.table)?;
            // A SEQUENCE NAME in another schema makes the sequence there.
            match &a.action {
                crate::parse::IdentityAction::Add(_, o) => match &o.name {
                    Some(n) if n.0.len() > 1 => create_in(cat, user, n),
                    _ => Ok(()),
                },
                _ => Ok(()),
            }
        }
        Stmt::AlterView(at) => own_relation(cat, user, &at.name),
        Stmt::AlterName(a) if a.kind.is_type() => own_type(cat, user, &a.name),
        Stmt::CreateDomain(d) => {
            create_in(cat, user, &d.name)?;
            type_usage(cat, user, &d.data_type)
        }
        Stmt::AlterDomain(a) => own_type(cat, user, &a.name),
        Stmt::DropDomain(d) => d.names.iter().try_for_each(|n| own_type(cat, user, n)),
        Stmt::AlterName(a) => {
            own_relation(cat, user, &a.name)?;
            match &a.change {
                // The new schema must take objects from the user.
                crate::parse::NameChange::Schema(s) => match cat.namespace_oid(&bind::ident(s)) {
                    Some(ns) => acl::schema_privilege(cat, user, ns, acl::CREATE),
                    None => Ok(()),
                },
                crate::parse::NameChange::Rename(_) => Ok(()),
            }
        }
        Stmt::CreateMatView(cv, _) => create_in(cat, user, &cv.name),
        Stmt::CreateTrigger(ct, _) => own_relation(cat, user, &ct.table_name),
        Stmt::CreateProcedure(cf) => create_in(cat, user, &cf.name),
        // It checks ownership itself.
        Stmt::CommentOnFunction(..) => Ok(()),
        Stmt::RenameTrigger(r) => own_relation(cat, user, &r.table),
        // Both relations must be the user's (for ALTER INDEX, their tables).
        Stmt::Partition(c) => {
            own_relation(cat, user, &c.parent)?;
            own_relation(cat, user, &c.partition)
        }
        Stmt::RefreshMatView(r) => own_relation(cat, user, &r.name),
        // OWNER TO and role grants check for themselves.
        Stmt::AlterOwner(_)
        | Stmt::GrantRole(_)
        | Stmt::AlterDefaultPrivileges(_)
        | Stmt::GrantOnType(_)
        | Stmt::Owned(_) => Ok(()),
        Stmt::Copy(_)
        | Stmt::Maintenance(_)
        | Stmt::SetConstraints(..)
        | Stmt::Do(_)
        | Stmt::Fetch(_)
        | Stmt::Empty => Ok(()),
    }
}

/// [`authorize`] for a statement sqlparser read.
pub fn authorize_statement(cat: &Catalog, user: &str, stmt: &ast::Statement) -> Result<()> {
    if cat.is_superuser(user) {
        return Ok(());
    }
    use ast::Statement as S;
    match stmt {
        S::CreateTable(ct) => {
            if ct.temporary {
                acl::database_privilege(cat, user, acl::TEMPORARY)?;
            } else {
                create_in(cat, user, &ct.name)?;
            }
            let column_fks =
                ct.columns.iter().flat_map(|c| &c.options).filter_map(|o| match &o.option {
                    ast::ColumnOption::ForeignKey(fk) => Some(fk),
                    _ => None,
                });
            let table_fks = ct.constraints.iter().filter_map(|c| match c {
                ast::TableConstraint::ForeignKey(fk) => Some(fk),
                _ => None,
            });
            for fk in column_fks.chain(table_fks) {
                relation_privilege(cat, user, &fk.foreign_table, acl::REFERENCES, false)?;
            }
            ct.columns.iter().try_for_each(|c| type_usage(cat, user, &c.data_type))
        }
        S::CreateView(cv) => {
            create_in(cat, user, &cv.name)?;
            if cv.or_replace {
                own_relation(cat, user, &cv.name)?;
            }
            Ok(())
        }
        S::CreateSequence { name, .. } | S::CreateType { name, .. } => create_in(cat, user, name),
        S::CreateFunction(cf) => create_in(cat, user, &cf.name),
        S::CreateIndex(ci) => own_relation(cat, user, &ci.table_name),
        S::DropTrigger(dt) => match &dt.table_name {
            Some(t) => own_relation(cat, user, t),
            None => Ok(()),
        },
        S::CreateSchema { schema_name, .. } => {
            acl::database_privilege(cat, user, acl::CREATE)?;
            let owner = match schema_name {
                ast::SchemaName::Simple(_) => return Ok(()),
                ast::SchemaName::UnnamedAuthorization(r)
                | ast::SchemaName::NamedAuthorization(_, r) => bind::ident(r),
            };
            must_be_member(cat, user, &owner)
        }
        S::CreateExtension(_) => acl::database_privilege(cat, user, acl::CREATE),
        S::DropExtension(d) => {
            d.names.iter().try_for_each(|n| own_extension(cat, user, &bind::ident(n)))
        }
        S::CreateRole(cr) => {
            let attrs = cr.superuser.unwrap_or(false);
            if attrs {
                bail!(InsufficientPrivilege, "must be superuser to create superusers");
            }
            if !cat.role(user).is_some_and(|r| r.createrole) {
                bail!(InsufficientPrivilege, "permission denied to create role");
            }
            Ok(())
        }
        S::AlterRole { name, operation } => alter_role(cat, user, &bind::ident(name), operation),
        S::Drop { object_type, names, .. } => drop(cat, user, *object_type, names),
        S::Truncate(t) => {
            for n in &t.table_names {
                relation_privilege(cat, user, &n.name, acl::TRUNCATE, false)?;
            }
            Ok(())
        }
        S::Lock(l) => {
            use ast::LockTableMode as M;
            let privs = match l.lock_mode {
                Some(M::AccessShare) => acl::SELECT,
                Some(M::RowExclusive) => acl::INSERT | acl::UPDATE | acl::DELETE | acl::TRUNCATE,
                _ => acl::UPDATE | acl::DELETE | acl::TRUNCATE,
            };
            for t in &l.tables {
                relation_privilege(cat, user, &t.name, privs, true)?;
            }
            Ok(())
        }
        S::AlterTable(at) if owner::owner_only(at).is_some() => Ok(()),
        S::AlterTable(at) => {
            own_relation(cat, user, &at.name)?;
            for op in &at.operations {
                if let ast::AlterTableOperation::AddConstraint {
                    constraint: ast::TableConstraint::ForeignKey(fk),
                    ..
                } = op
                {
                    relation_privilege(cat, user, &fk.foreign_table, acl::REFERENCES, false)?;
                }
            }
            Ok(())
        }
        S::AlterSchema(a) => {
            let name = bind::object_name(&a.name)?;
            if let Some(access) = cat.namespace_oid(&name).and_then(|ns| cat.schema_access(ns)) {
                access.must_own(cat, user, ObjKind::Schema, &name)?;
                if a.operations
                    .iter()
                    .any(|o| matches!(o, ast::AlterSchemaOperation::Rename { .. }))
                {
                    acl::database_privilege(cat, user, acl::CREATE)?;
                }
            }
            Ok(())
        }
        S::AlterType(at) => own_type(cat, user, &at.name),
        S::Comment { object_type, object_name, .. } => {
            use ast::CommentObject as C;
            match object_type {
                C::Table | C::View | C::MaterializedView | C::Sequence | C::Index => {
                    own_relation(cat, user, object_name)
                }
                C::Column => {
                    let mut table = object_name.clone();
                    table.0.pop();
                    own_relation(cat, user, &table)
                }
                C::Schema => {
                    let name = bind::object_name(object_name)?;
                    match cat.namespace_oid(&name).and_then(|ns| cat.schema_access(ns)) {
                        Some(a) => a.must_own(cat, user, ObjKind::Schema, &name),
                        None => Ok(()),
                    }
                }
                C::Type => own_type(cat, user, object_name),
                C::Database => {
                    cat.database_access.must_own(cat, user, ObjKind::Database, "postgres")
                }
                C::Extension => own_extension(cat, user, &bind::object_name(object_name)?),
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// CREATE on the schema a new object named `name` goes to.
fn create_in(cat: &Catalog, user: &str, name: &ast::ObjectName) -> Result<()> {
    let obj = bind::obj_name(name)?;
    match cat.creation_namespace(&obj) {
        Ok(ns) => acl::schema_privilege(cat, user, ns, acl::CREATE),
        Err(_) => Ok(()),
    }
}

/// 42501 unless `user` may act as the owner of relation `name`.
fn own_relation(cat: &Catalog, user: &str, name: &ast::ObjectName) -> Result<()> {
    let Ok(Some(rel)) = bind::obj_name(name).and_then(|n| cat.relation(&n)) else {
        return Ok(());
    };
    // An index is owned through its table; PostgreSQL names the index.
    rel.access().must_own(cat, user, rel.kind(), rel.name())
}

/// 42501 unless `user` holds `privs` (any one of them with `any`) on
/// relation `name`.
fn relation_privilege(
    cat: &Catalog,
    user: &str,
    name: &ast::ObjectName,
    privs: u16,
    any: bool,
) -> Result<()> {
    let Ok(Some(rel)) = bind::obj_name(name).and_then(|n| cat.relation(&n)) else {
        return Ok(());
    };
    acl::check_schema_usage(cat, user, rel.namespace())?;
    if rel.access().allows(cat, rel.kind(), user, privs, any) {
        return Ok(());
    }
    bail!(InsufficientPrivilege, "permission denied for {} {}", rel.kind().noun(), rel.name())
}

/// 42501 unless `user` may use type `ty` (enum and composite types have
/// privileges).
fn type_usage(cat: &Catalog, user: &str, ty: &ast::DataType) -> Result<()> {
    let Ok(t) = bind::catalog_type(cat, ty) else { return Ok(()) };
    let elem = t.elem().unwrap_or(&t);
    if !elem.is_user_defined() {
        return Ok(());
    }
    let Some(def) = cat.user_type(elem.oid()) else { return Ok(()) };
    if def.access.allows(cat, ObjKind::Type, user, acl::USAGE, false) {
        return Ok(());
    }
    bail!(InsufficientPrivilege, "permission denied for type {}", def.name)
}

/// 42501 unless `user` may act as the owner of extension `name`.
fn own_extension(cat: &Catalog, user: &str, name: &str) -> Result<()> {
    match cat.extensions.get(name) {
        Some(x) if !cat.has_privs_of(user, &x.owner) => {
            bail!(InsufficientPrivilege, "must be owner of extension {name}")
        }
        _ => Ok(()),
    }
}

/// 42501 unless `user` may act as the owner of type `name`.
fn own_type(cat: &Catalog, user: &str, name: &ast::ObjectName) -> Result<()> {
    let Ok(Some((def, _))) = bind::obj_name(name).and_then(|n| cat.user_type_named(&n)) else {
        return Ok(());
    };
    def.access.must_own(cat, user, ObjKind::Type, &def.name)
}

/// 42501 unless `user` is a member of `role` (to give it objects).
pub(super) fn must_be_member(cat: &Catalog, user: &str, role: &str) -> Result<()> {
    if cat.role(role).is_none() || cat.may_become(user, role) {
        return Ok(());
    }
    bail!(InsufficientPrivilege, "must be member of role \"{role}\"")
}

fn drop(cat: &Catalog, user: &str, kind: ast::ObjectType, names: &[ast::ObjectName]) -> Result<()> {
    use ast::ObjectType as O;
    for n in names {
        match kind {
            O::Table | O::View | O::MaterializedView | O::Sequence | O::Index => {
                own_relation(cat, user, n)?
            }
            O::Type => own_type(cat, user, n)?,
            O::Schema => {
                let name = bind::object_name(n)?;
                if let Some(a) = cat.namespace_oid(&name).and_then(|ns| cat.schema_access(ns)) {
                    a.must_own(cat, user, ObjKind::Schema, &name)?;
                }
            }
            O::Role | O::User => {
                let name = bind::object_name(n)?;
                if cat.is_superuser(&name) {
                    bail!(InsufficientPrivilege, "must be superuser to drop superusers");
                }
                if !cat.role(user).is_some_and(|r| r.createrole) {
                    bail!(InsufficientPrivilege, "permission denied to drop role");
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// ALTER ROLE by a user who is not a superuser: CREATEROLE lets it change
/// roles that are not superusers; anyone may change their own password.
fn alter_role(cat: &Catalog, user: &str, name: &str, op: &ast::AlterRoleOperation) -> Result<()> {
    let ast::AlterRoleOperation::WithOptions { options } = op else { return Ok(()) };
    let touches_super = options.iter().any(|o| matches!(o, ast::RoleOption::SuperUser(_)));
    if touches_super || cat.is_superuser(name) {
        bail!(
            InsufficientPrivilege,
            "must be superuser to alter superuser roles or change superuser attribute"
        );
    }
    let own_password =
        name == user && options.iter().all(|o| matches!(o, ast::RoleOption::Password(_)));
    if own_password || cat.role(user).is_some_and(|r| r.createrole) {
        return Ok(());
    }
    bail!(InsufficientPrivilege, "permission denied")
}
