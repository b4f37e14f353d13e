//! OWNER TO for relations and the public schema.
//!
//! Strata keeps no owner per object yet: every relation belongs to the
//! bootstrap superuser (pg_class.relowner 10). OWNER TO therefore checks
//! what PostgreSQL checks (the relation exists and is of the kind the
//! statement names, the role exists) and changes nothing, which is what a
//! restored pg_dump needs: its `ALTER TABLE ... OWNER TO postgres` lines
//! succeed, and a typo in a role name still fails.

use super::*;
use crate::parse::{AlterOwner, RelationKind};

/// ALTER TABLE | VIEW | SEQUENCE | INDEX name OWNER TO role.
pub fn alter_owner(cat: &Catalog, a: &AlterOwner) -> Result<DdlResult> {
    let name = check_schema(&a.name)?;
    let mut r = DdlResult::tag(a.kind.tag());
    if a.kind == RelationKind::Type {
        if !cat.enums.contains_key(&name) {
            bail!(UndefinedObject, "type \"{name}\" does not exist");
        }
        check_role(cat, &a.owner)?;
        return Ok(r);
    }
    let found = cat.relations().into_iter().find(|(_, n, _)| *n == name);
    let Some((_, _, relkind)) = found else {
        skip_missing(&mut r, a.if_exists, sqlstate::SqlState::UndefinedTable, "relation", &name)?;
        return Ok(r);
    };
    let wrong = match a.kind {
        RelationKind::Table => None,
        RelationKind::View => (relkind != "v").then_some("a view"),
        RelationKind::Sequence => (relkind != "S").then_some("a sequence"),
        RelationKind::Index => (relkind != "i").then_some("an index"),
        RelationKind::Type => None,
    };
    if let Some(what) = wrong {
        bail!(WrongObjectType, "\"{name}\" is not {what}");
    }
    check_role(cat, &a.owner)?;
    Ok(r)
}

/// ALTER SCHEMA name OWNER TO role: only `public` exists.
pub fn alter_schema(cat: &Catalog, a: &ast::AlterSchema) -> Result<DdlResult> {
    let schema = bind::object_name(&a.name)?;
    if schema != "public" {
        bail!(InvalidSchemaName, "schema \"{schema}\" does not exist");
    }
    for op in &a.operations {
        match op {
            ast::AlterSchemaOperation::OwnerTo { owner } => check_role(cat, owner)?,
            other => bail!(FeatureNotSupported, "ALTER SCHEMA {other} is not supported yet"),
        }
    }
    Ok(DdlResult::tag("ALTER SCHEMA"))
}

/// ALTER TABLE whose only action is OWNER TO, as the relation-generic form:
/// PostgreSQL accepts it for views, sequences and indexes too.
pub fn owner_only(at: &ast::AlterTable) -> Option<AlterOwner> {
    let [ast::AlterTableOperation::OwnerTo { new_owner }] = at.operations.as_slice() else {
        return None;
    };
    Some(AlterOwner {
        kind: RelationKind::Table,
        name: at.name.clone(),
        if_exists: at.if_exists,
        owner: new_owner.clone(),
    })
}

/// 42704 unless `owner` names an existing role (CURRENT_USER and friends
/// always do).
pub(super) fn check_role(cat: &Catalog, owner: &ast::Owner) -> Result<()> {
    let ast::Owner::Ident(id) = owner else { return Ok(()) };
    let role = bind::ident(id);
    if cat.role(&role).is_none() {
        bail!(UndefinedObject, "role \"{role}\" does not exist");
    }
    Ok(())
}
