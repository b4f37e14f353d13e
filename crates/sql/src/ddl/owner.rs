//! OWNER TO for relations, types and schemas.
//!
//! The owner is stored with the object (`acl::Ownership`); its ACL's
//! entries for the old owner pass to the new one. A user who is not a
//! superuser must own the object, be a member of the new owner, and the new
//! owner must be allowed to create in the object's schema, as in
//! PostgreSQL. A table's owned sequences change owner with it; an index
//! cannot change owner apart from its table (a warning, as in PostgreSQL).

use super::*;
use crate::acl::{self, ObjKind, Ownership};
use crate::parse::{AlterOwner, RelationKind};

/// ALTER TABLE | VIEW | SEQUENCE | INDEX | TYPE name OWNER TO role.
pub async fn alter_owner<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    a: &AlterOwner,
    user: &str,
) -> Result<DdlResult> {
    let obj = bind::obj_name(&a.name)?;
    let name = &obj.name;
    let mut r = DdlResult::tag(a.kind.tag());
    if a.kind.is_type() {
        let def = types::must_get(cat, &obj, a.kind == RelationKind::Domain)?;
        let new = owner_name(cat, &a.owner, user)?;
        if let Some(access) =
            changed(cat, user, &def.access, ObjKind::Type, &def.name, def.namespace, &new)?
        {
            bump_version(txn, tenant).await?;
            types::put(txn, tenant, &catalog::UserTypeDef { access, ..def }).await?;
        }
        return Ok(r);
    }
    let Some(rel) = cat.relation(&obj)? else {
        let shown = obj.to_string();
        skip_missing(&mut r, a.if_exists, sqlstate::SqlState::UndefinedTable, "relation", &shown)?;
        return Ok(r);
    };
    use catalog::Relation as R;
    let wrong = match (a.kind, &rel) {
        (RelationKind::Table | RelationKind::Type | RelationKind::Domain, _) => None,
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
    let new = owner_name(cat, &a.owner, user)?;
    if let R::Index(t, _) = &rel {
        if new != t.access.owner {
            r.notices.push(
                ErrorReport::warning(
                    sqlstate::SqlState::Warning,
                    format!("cannot change owner of index \"{name}\""),
                )
                .with_hint("Change the ownership of the index's table, instead."),
            );
        }
        return Ok(r);
    }
    let Some(access) =
        changed(cat, user, rel.access(), rel.kind(), rel.name(), rel.namespace(), &new)?
    else {
        return Ok(r);
    };
    bump_version(txn, tenant).await?;
    if let R::Table(t) = &rel {
        let owned = cat
            .sequences
            .values()
            .filter(|s| s.owned_by.as_ref().is_some_and(|(o, _)| *o == t.oid));
        for s in owned {
            let mut seq_access = s.access.clone();
            seq_access.set_owner(&new);
            grants::write_relation_access(txn, tenant, &R::Sequence(s.clone()), seq_access).await?;
        }
    }
    grants::write_relation_access(txn, tenant, &rel, access).await?;
    Ok(r)
}

/// The object's owner and ACL after OWNER TO `new`, or None when `new`
/// owns it already; 42501 unless `user` may make the change.
pub(super) fn changed(
    cat: &Catalog,
    user: &str,
    access: &Ownership,
    kind: ObjKind,
    name: &str,
    namespace: u32,
    new: &str,
) -> Result<Option<Ownership>> {
    if access.owner == new {
        return Ok(None);
    }
    if !cat.is_superuser(user) {
        access.must_own(cat, user, kind, name)?;
        authorize::must_be_member(cat, user, new)?;
        if kind == ObjKind::Schema {
            acl::database_privilege(cat, user, acl::CREATE)?;
        } else {
            acl::schema_privilege(cat, new, namespace, acl::CREATE)?;
        }
    }
    let mut out = access.clone();
    out.set_owner(new);
    Ok(Some(out))
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

/// The role OWNER TO names: 42704 unless it exists (CURRENT_USER and
/// friends are `user`).
pub(super) fn owner_name(cat: &Catalog, owner: &ast::Owner, user: &str) -> Result<String> {
    let ast::Owner::Ident(id) = owner else { return Ok(user.to_string()) };
    let role = bind::ident(id);
    if cat.role(&role).is_none() {
        bail!(UndefinedObject, "role \"{role}\" does not exist");
    }
    Ok(role)
}
