//! OWNER TO for relations and types.
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
    let obj = bind::obj_name(&a.name)?;
    let name = &obj.name;
    let mut r = DdlResult::tag(a.kind.tag());
    if a.kind == RelationKind::Type {
        types::must_get(cat, &obj)?;
        check_role(cat, &a.owner)?;
        return Ok(r);
    }
    let Some(rel) = cat.relation(&obj)? else {
        let shown = obj.to_string();
        skip_missing(&mut r, a.if_exists, sqlstate::SqlState::UndefinedTable, "relation", &shown)?;
        return Ok(r);
    };
    use catalog::Relation as R;
    let wrong = match (a.kind, rel) {
        (RelationKind::Table | RelationKind::Type, _) => None,
        (RelationKind::View, R::View(_))
        | (RelationKind::Sequence, R::Sequence(_))
        | (RelationKind::Index, R::Index(..)) => None,
        (RelationKind::View, _) => Some("a view"),
        (RelationKind::Sequence, _) => Some("a sequence"),
        (RelationKind::Index, _) => Some("an index"),
    };
    if let Some(what) = wrong {
        bail!(WrongObjectType, "\"{name}\" is not {what}");
    }
    check_role(cat, &a.owner)?;
    Ok(r)
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
