//! Privileges: who owns an object, what its access control list grants,
//! and whether a role holds a privilege.
//!
//! An object's [`Ownership`] is stored with its definition: the owning
//! role's name and the ACL, a list of [`AclItem`]s (PostgreSQL's aclitem:
//! grantee, grantor, privileges, grant options). No ACL (`None`, PostgreSQL's
//! NULL relacl) means the default for the object's kind: its owner holds
//! every privilege, and PUBLIC holds some on databases and types.
//!
//! Roles are named, not numbered, in stored ACLs and owners: a role's OID is
//! computed when the catalog is shown (`system::roles_with_oids`).
//!
//! A superuser holds every privilege; so does a role for what it owns while
//! the owner's entry is left alone. Role membership passes privileges on
//! (roles made with INHERIT, the default).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use sqltypes::{DataType, Value};

use crate::catalog::Catalog;
use crate::error::Result;
use crate::{bail, err};

/// INSERT (`a`).
pub const INSERT: u16 = 1;
/// SELECT (`r`).
pub const SELECT: u16 = 1 << 1;
/// UPDATE (`w`).
pub const UPDATE: u16 = 1 << 2;
/// DELETE (`d`).
pub const DELETE: u16 = 1 << 3;
/// TRUNCATE (`D`).
pub const TRUNCATE: u16 = 1 << 4;
/// REFERENCES (`x`).
pub const REFERENCES: u16 = 1 << 5;
/// TRIGGER (`t`).
pub const TRIGGER: u16 = 1 << 6;
/// EXECUTE (`X`).
pub const EXECUTE: u16 = 1 << 7;
/// USAGE (`U`).
pub const USAGE: u16 = 1 << 8;
/// CREATE (`C`).
pub const CREATE: u16 = 1 << 9;
/// TEMPORARY (`T`).
pub const TEMPORARY: u16 = 1 << 10;
/// CONNECT (`c`).
pub const CONNECT: u16 = 1 << 11;

/// A table's privileges with their SQL names, in bit order.
pub const TABLE_PRIVILEGES: [(u16, &str); 7] = [
    (INSERT, "INSERT"),
    (SELECT, "SELECT"),
    (UPDATE, "UPDATE"),
    (DELETE, "DELETE"),
    (TRUNCATE, "TRUNCATE"),
    (REFERENCES, "REFERENCES"),
    (TRIGGER, "TRIGGER"),
];

/// The letters aclitem text uses, in bit order.
const LETTERS: &[u8; 12] = b"arwdDxtXUCTc";

/// The bootstrap superuser, owner of everything made before owners were
/// stored.
pub const BOOTSTRAP: &str = "postgres";

/// The role that owns the `public` schema in PostgreSQL 15: whoever owns
/// the database.
pub const DATABASE_OWNER: &str = "pg_database_owner";

fn bootstrap() -> String {
    BOOTSTRAP.to_string()
}

/// The kinds of object that have privileges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjKind {
    /// A table (GRANT ... ON TABLE).
    Table,
    /// A view.
    View,
    /// A materialized view.
    MatView,
    /// A sequence.
    Sequence,
    /// A schema.
    Schema,
    /// The database.
    Database,
    /// A type.
    Type,
    /// A function.
    Function,
    /// An index (owned through its table; no privileges of its own).
    Index,
}

impl ObjKind {
    /// Every privilege an object of this kind has.
    pub fn all(self) -> u16 {
        match self {
            ObjKind::Table | ObjKind::View | ObjKind::MatView | ObjKind::Index => {
                INSERT | SELECT | UPDATE | DELETE | TRUNCATE | REFERENCES | TRIGGER
            }
            ObjKind::Sequence => SELECT | UPDATE | USAGE,
            ObjKind::Schema => USAGE | CREATE,
            ObjKind::Database => CREATE | TEMPORARY | CONNECT,
            ObjKind::Type => USAGE,
            ObjKind::Function => EXECUTE,
        }
    }

    /// What PUBLIC holds by default.
    pub fn public_default(self) -> u16 {
        match self {
            ObjKind::Database => TEMPORARY | CONNECT,
            ObjKind::Type | ObjKind::Function => self.all(),
            _ => 0,
        }
    }

    /// The kind ALTER DEFAULT PRIVILEGES and pg_default_acl name objects
    /// of this kind by (`r` for tables and views alike).
    pub fn defacl_code(self) -> char {
        match self {
            ObjKind::Table | ObjKind::View | ObjKind::MatView | ObjKind::Index => 'r',
            ObjKind::Sequence => 'S',
            ObjKind::Function => 'f',
            ObjKind::Type => 'T',
            ObjKind::Schema => 'n',
            ObjKind::Database => 'd',
        }
    }

    /// The kind a pg_default_acl code names.
    pub fn from_defacl_code(code: char) -> Option<ObjKind> {
        Some(match code {
            'r' => ObjKind::Table,
            'S' => ObjKind::Sequence,
            'f' => ObjKind::Function,
            'T' => ObjKind::Type,
            'n' => ObjKind::Schema,
            _ => return None,
        })
    }

    /// The kind's name in messages (`permission denied for table t`).
    pub fn noun(self) -> &'static str {
        match self {
            ObjKind::Table => "table",
            ObjKind::View => "view",
            ObjKind::MatView => "materialized view",
            ObjKind::Sequence => "sequence",
            ObjKind::Schema => "schema",
            ObjKind::Database => "database",
            ObjKind::Type => "type",
            ObjKind::Function => "function",
            ObjKind::Index => "index",
        }
    }
}

/// One entry of an ACL: what `grantor` granted `grantee`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AclItem {
    /// The role granted to; empty for PUBLIC.
    pub grantee: String,
    /// The role that granted.
    pub grantor: String,
    /// Privilege bits.
    pub privs: u16,
    /// The privileges held WITH GRANT OPTION (a subset of `privs`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grantable: u16,
}

fn is_zero(v: &u16) -> bool {
    *v == 0
}

impl AclItem {
    /// aclitem text: `grantee=privs/grantor`, `*` after each privilege
    /// held with grant option, an empty grantee for PUBLIC.
    pub fn to_text(&self) -> String {
        let mut s = quote_name(&self.grantee);
        s.push('=');
        for (i, &c) in LETTERS.iter().enumerate() {
            let bit = 1 << i;
            if self.privs & bit != 0 {
                s.push(c as char);
                if self.grantable & bit != 0 {
                    s.push('*');
                }
            }
        }
        s.push('/');
        s.push_str(&quote_name(&self.grantor));
        s
    }
}

/// A role name as aclitem text writes it: double-quoted unless it is all
/// ASCII letters, digits and underscores (not as an SQL identifier is).
pub fn quote_name(name: &str) -> String {
    if name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// An object's owner and ACL, stored with its definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ownership {
    /// The owning role's name.
    #[serde(default = "bootstrap")]
    pub owner: String,
    /// The ACL; None is the kind's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acl: Option<Vec<AclItem>>,
}

impl Default for Ownership {
    fn default() -> Self {
        Ownership::new(BOOTSTRAP)
    }
}

impl Ownership {
    /// Owned by `owner`, with the default ACL.
    pub fn new(owner: &str) -> Ownership {
        Ownership { owner: owner.to_string(), acl: None }
    }

    /// A new object's: owned by `owner`, with the ACL ALTER DEFAULT
    /// PRIVILEGES gives objects of `kind` in schema `ns` (0 for a schema).
    pub fn created(cat: &Catalog, owner: &str, kind: ObjKind, ns: u32) -> Ownership {
        Ownership { owner: owner.to_string(), acl: initial_acl(cat, owner, kind, ns) }
    }

    /// The ACL in effect: the stored one or the kind's default.
    pub fn items(&self, kind: ObjKind) -> Cow<'_, [AclItem]> {
        match &self.acl {
            Some(a) => Cow::Borrowed(a),
            None => Cow::Owned(default_acl(kind, &self.owner)),
        }
    }

    /// relacl / nspacl: NULL while the default holds, else aclitem[] text.
    pub fn acl_value(&self) -> Value {
        match &self.acl {
            None => Value::Null,
            Some(items) => acl_array(items),
        }
    }

    /// The privileges `user` holds here, and the grant options (an owner
    /// holds every grant option).
    pub fn held(&self, cat: &Catalog, kind: ObjKind, user: &str) -> Held {
        if cat.is_superuser(user) {
            let all = kind.all();
            return Held { privs: all, grantable: all };
        }
        let mut h = Held::default();
        let roles = cat.roles_of(user);
        for item in self.items(kind).iter() {
            if item.grantee.is_empty() || roles.contains(&item.grantee) {
                h.privs |= item.privs;
                h.grantable |= item.grantable;
            }
        }
        // An owner may grant everything, whatever its own entry says.
        if roles.contains(&self.owner) {
            h.grantable = kind.all();
        }
        h
    }

    /// True when `user` holds every privilege in `bits` (any one with
    /// `any`).
    pub fn allows(&self, cat: &Catalog, kind: ObjKind, user: &str, bits: u16, any: bool) -> bool {
        let held = self.held(cat, kind, user).privs & bits;
        if any {
            held != 0
        } else {
            held == bits
        }
    }

    /// True when `user` may act as the owner (ALTER, DROP, GRANT anything).
    pub fn owned_by(&self, cat: &Catalog, user: &str) -> bool {
        cat.has_privs_of(user, &self.owner)
    }

    /// Gives the object to `new`: the ACL's entries for the old owner (as
    /// grantee or grantor) become the new owner's, as PostgreSQL's
    /// aclnewowner does.
    pub fn set_owner(&mut self, new: &str) {
        if let Some(items) = &mut self.acl {
            for it in items.iter_mut() {
                if it.grantee == self.owner {
                    it.grantee = new.to_string();
                }
                if it.grantor == self.owner {
                    it.grantor = new.to_string();
                }
            }
            merge_duplicates(items);
        }
        self.owner = new.to_string();
    }

    /// True when the ACL names `role` as grantee or grantor.
    pub fn mentions(&self, role: &str) -> bool {
        self.acl.iter().flatten().any(|i| i.grantee == role || i.grantor == role)
    }
}

/// Folds entries with the same grantee and grantor into one.
fn merge_duplicates(items: &mut Vec<AclItem>) {
    let mut out: Vec<AclItem> = Vec::with_capacity(items.len());
    for it in items.drain(..) {
        match out.iter_mut().find(|o| o.grantee == it.grantee && o.grantor == it.grantor) {
            Some(o) => {
                o.privs |= it.privs;
                o.grantable |= it.grantable;
            }
            None => out.push(it),
        }
    }
    *items = out;
}

/// Privileges held, and which of them with grant option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Privilege bits.
    pub privs: u16,
    /// Grant option bits.
    pub grantable: u16,
}

/// The default ACL of an object of `kind` owned by `owner`: PUBLIC's entry
/// (if it has one) first, then the owner's, as PostgreSQL's acldefault.
pub fn default_acl(kind: ObjKind, owner: &str) -> Vec<AclItem> {
    let mut out = Vec::with_capacity(2);
    let public = kind.public_default();
    if public != 0 {
        out.push(AclItem {
            grantee: String::new(),
            grantor: owner.into(),
            privs: public,
            grantable: 0,
        });
    }
    // The owner needs no grant options: owning the object lets it grant.
    out.push(AclItem {
        grantee: owner.into(),
        grantor: owner.into(),
        privs: kind.all(),
        grantable: 0,
    });
    out
}

/// The ACL a new object of `kind` owned by `owner` in schema `ns` starts
/// with: None (the default) unless ALTER DEFAULT PRIVILEGES changed it,
/// else the entry for every schema (or the default) with the schema's
/// entry added, sorted by grantee as PostgreSQL's get_user_default_acl.
pub fn initial_acl(cat: &Catalog, owner: &str, kind: ObjKind, ns: u32) -> Option<Vec<AclItem>> {
    let code = kind.defacl_code();
    let entry = |n: u32| {
        cat.default_acls.iter().find(|d| d.role == owner && d.objtype == code && d.namespace == n)
    };
    let (global, schema) = (entry(0), if ns == 0 { None } else { entry(ns) });
    if global.is_none() && schema.is_none() {
        return None;
    }
    let default = default_acl(kind, owner);
    let mut items = global.map_or_else(|| default.clone(), |g| g.acl.clone());
    items.extend(schema.iter().flat_map(|s| s.acl.iter().cloned()));
    merge_duplicates(&mut items);
    sort_items(cat, &mut items);
    let mut sorted_default = default;
    sort_items(cat, &mut sorted_default);
    (items != sorted_default).then_some(items)
}

/// Sorts ACL entries by grantee, grantor and privileges, PUBLIC first, as
/// PostgreSQL's aclitemsort does by role OID.
pub fn sort_items(cat: &Catalog, items: &mut [AclItem]) {
    let roles = crate::system::roles_with_oids(cat);
    let oid =
        |name: &str| if name.is_empty() { 0 } else { crate::system::role_oid_among(&roles, name) };
    items.sort_by_key(|i| (oid(&i.grantee), oid(&i.grantor), i.privs, i.grantable));
}

/// aclitem[] text for `items`.
pub fn acl_array(items: &[AclItem]) -> Value {
    let items = items.iter().map(|i| Value::Text(i.to_text())).collect();
    sqltypes::array::ArrayValue::new(DataType::Text, items).into_value()
}

/// A privilege a planned statement needs on a relation.
#[derive(Debug, Clone)]
pub struct Check {
    /// The relation.
    pub rel: crate::catalog::Relation,
    /// The privileges (all of them).
    pub privs: u16,
    /// Whose: a view's owner for the tables it reads, else None (the
    /// current user).
    pub as_user: Option<String>,
}

/// Fails with 42501 unless `user` (or the view owner a check names) holds
/// what each check asks, and may use the schema of each relation it
/// names itself.
pub fn check_all(cat: &Catalog, user: &str, checks: &[Check]) -> Result<()> {
    if checks.is_empty() || cat.is_superuser(user) {
        return Ok(());
    }
    for c in checks {
        let who = c.as_user.as_deref().unwrap_or(user);
        if c.as_user.is_none() {
            check_schema_usage(cat, user, c.rel.namespace())?;
        }
        if !c.rel.access().allows(cat, c.rel.kind(), who, c.privs, false) {
            bail!(
                InsufficientPrivilege,
                "permission denied for {} {}",
                c.rel.kind().noun(),
                c.rel.name()
            );
        }
    }
    Ok(())
}

/// Fails with 42501 unless `user` may use (look objects up in) schema `ns`.
pub fn check_schema_usage(cat: &Catalog, user: &str, ns: u32) -> Result<()> {
    schema_privilege(cat, user, ns, USAGE)
}

/// Fails with 42501 unless `user` holds `privs` on schema `ns` (CREATE to
/// make objects in it).
pub fn schema_privilege(cat: &Catalog, user: &str, ns: u32, privs: u16) -> Result<()> {
    let Some(access) = cat.schema_access(ns) else { return Ok(()) };
    if access.allows(cat, ObjKind::Schema, user, privs, false) {
        return Ok(());
    }
    let name = cat.namespace_name(ns).unwrap_or_default();
    bail!(InsufficientPrivilege, "permission denied for schema {name}")
}

/// Fails with 42501 unless `user` holds `privs` on the database.
pub fn database_privilege(cat: &Catalog, user: &str, privs: u16) -> Result<()> {
    if cat.database_access.allows(cat, ObjKind::Database, user, privs, false) {
        return Ok(());
    }
    bail!(InsufficientPrivilege, "permission denied for database postgres")
}

impl Ownership {
    /// Fails with 42501 (`must be owner of table t`) unless `user` may act
    /// as the owner.
    pub fn must_own(&self, cat: &Catalog, user: &str, kind: ObjKind, name: &str) -> Result<()> {
        if self.owned_by(cat, user) {
            return Ok(());
        }
        bail!(InsufficientPrivilege, "must be owner of {} {name}", kind.noun())
    }
}

/// What one GRANT or REVOKE changes on one object.
#[derive(Debug, Clone)]
pub struct Change<'a> {
    /// GRANT (else REVOKE).
    pub grant: bool,
    /// The privileges named (the kind's all for ALL).
    pub privs: u16,
    /// WITH GRANT OPTION / GRANT OPTION FOR.
    pub option: bool,
    /// The roles, "" for PUBLIC.
    pub grantees: &'a [String],
    /// REVOKE ... CASCADE.
    pub cascade: bool,
}

/// Applies `change`, made by `user`, to an object's ACL. Returns the
/// warning PostgreSQL gives when only some or none of the privileges could
/// be granted or revoked; fails when `user` holds nothing on the object.
pub fn apply(
    cat: &Catalog,
    own: &mut Ownership,
    kind: ObjKind,
    name: &str,
    user: &str,
    change: &Change<'_>,
) -> Result<Option<String>> {
    let (grantor, options) = best_grantor(cat, own, kind, user, change.privs);
    let mut warning = None;
    let effective = change.privs & options;
    if effective != change.privs {
        if own.held(cat, kind, user).privs == 0 && !own.owned_by(cat, user) {
            bail!(InsufficientPrivilege, "permission denied for {} {name}", kind.noun());
        }
        warning = Some(match (change.grant, effective == 0) {
            (true, true) => format!("no privileges were granted for \"{name}\""),
            (true, false) => format!("not all privileges were granted for \"{name}\""),
            (false, true) => format!("no privileges could be revoked for \"{name}\""),
            (false, false) => format!("not all privileges could be revoked for \"{name}\""),
        });
    }
    let mut items = own.items(kind).into_owned();
    edit(&mut items, &grantor, effective, change)?;
    own.acl = Some(items);
    Ok(warning)
}

/// Grants or revokes `privs` (of `change`'s) as `grantor` in `items`.
pub fn edit(
    items: &mut Vec<AclItem>,
    grantor: &str,
    privs: u16,
    change: &Change<'_>,
) -> Result<()> {
    for grantee in change.grantees {
        if change.grant {
            if change.option && grantee.is_empty() {
                bail!(InvalidGrantOperation, "grant options can only be granted to roles");
            }
            let grantable = if change.option { privs } else { 0 };
            match items.iter_mut().find(|i| i.grantee == *grantee && i.grantor == grantor) {
                Some(i) => {
                    i.privs |= privs;
                    i.grantable |= grantable;
                }
                None if privs != 0 => items.push(AclItem {
                    grantee: grantee.clone(),
                    grantor: grantor.to_string(),
                    privs,
                    grantable,
                }),
                None => {}
            }
        } else {
            revoke(items, grantee, grantor, privs, change.option, change.cascade)?;
        }
    }
    items.retain(|i| i.privs != 0);
    Ok(())
}

/// Takes `bits` (their grant options only, with `option_only`) from what
/// `grantor` gave `grantee`. Privileges the grantee passed on with those
/// grant options go too with `cascade`; without it they are an error.
fn revoke(
    items: &mut [AclItem],
    grantee: &str,
    grantor: &str,
    bits: u16,
    option_only: bool,
    cascade: bool,
) -> Result<()> {
    let Some(i) = items.iter().position(|i| i.grantee == grantee && i.grantor == grantor) else {
        return Ok(());
    };
    let lost_options = items[i].grantable & bits;
    items[i].grantable &= !bits;
    if !option_only {
        items[i].privs &= !bits;
    }
    if lost_options == 0 || grantee.is_empty() {
        return Ok(());
    }
    // What the grantee granted with the options it lost.
    let dependents: Vec<String> = items
        .iter()
        .filter(|d| d.grantor == grantee && d.grantee != grantee && d.privs & lost_options != 0)
        .map(|d| d.grantee.clone())
        .collect();
    if dependents.is_empty() {
        return Ok(());
    }
    if !cascade {
        return Err(err!(DependentObjectsStillExist, "dependent privileges exist")
            .with_hint("Use CASCADE to revoke them too."));
    }
    for d in dependents {
        revoke(items, &d, grantee, lost_options, false, true)?;
    }
    Ok(())
}

/// Whom a GRANT or REVOKE by `user` is recorded as coming from, and the
/// grant options that role holds: the owner when `user` may act as it
/// (superusers always), else the role `user` has the privileges of that
/// holds the most of the grant options asked for (PostgreSQL's
/// select_best_grantor).
fn best_grantor(
    cat: &Catalog,
    own: &Ownership,
    kind: ObjKind,
    user: &str,
    wanted: u16,
) -> (String, u16) {
    if own.owned_by(cat, user) {
        return (own.owner.clone(), kind.all());
    }
    let items = own.items(kind);
    let mut best = (user.to_string(), 0u16);
    for role in cat.roles_of(user) {
        let options: u16 =
            items.iter().filter(|i| i.grantee == role).fold(0, |acc, i| acc | i.grantable);
        let have = (options & wanted).count_ones();
        if have > (best.1 & wanted).count_ones() {
            best = (role, options);
        }
    }
    best
}

/// The privilege bits a GRANT or REVOKE names: 0LP01 (`invalid privilege
/// type X for <noun>`) for one outside `allowed`.
pub fn privilege_bits(names: &[&str], allowed: u16, noun: &str) -> Result<u16> {
    let mut bits = 0;
    for n in names {
        let b = privilege_bit(n)?;
        if allowed & b == 0 {
            bail!(InvalidGrantOperation, "invalid privilege type {} for {noun}", n.to_uppercase());
        }
        bits |= b;
    }
    Ok(bits)
}

/// The bit of a privilege named in lower case.
pub fn privilege_bit(name: &str) -> Result<u16> {
    Ok(match name {
        "insert" => INSERT,
        "select" => SELECT,
        "update" => UPDATE,
        "delete" => DELETE,
        "truncate" => TRUNCATE,
        "references" => REFERENCES,
        "trigger" => TRIGGER,
        "execute" => EXECUTE,
        "usage" => USAGE,
        "create" => CREATE,
        "temporary" | "temp" => TEMPORARY,
        "connect" => CONNECT,
        other => bail!(SyntaxError, "unrecognized privilege type \"{other}\""),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aclitem_text_is_postgres_form() {
        let i = AclItem {
            grantee: "bob".into(),
            grantor: "postgres".into(),
            privs: SELECT | INSERT | UPDATE,
            grantable: SELECT,
        };
        assert_eq!(i.to_text(), "bob=ar*w/postgres");
        let p = AclItem {
            grantee: String::new(),
            grantor: "Al ice".into(),
            privs: USAGE,
            grantable: 0,
        };
        assert_eq!(p.to_text(), "=U/\"Al ice\"");
        let all = |k: ObjKind| AclItem {
            grantee: "o".into(),
            grantor: "o".into(),
            privs: k.all(),
            grantable: 0,
        };
        assert_eq!(all(ObjKind::Table).to_text(), "o=arwdDxt/o");
        assert_eq!(all(ObjKind::Database).to_text(), "o=CTc/o");
    }

    #[test]
    fn owner_change_rewrites_entries() {
        let mut o = Ownership::new("a");
        o.acl = Some(vec![
            AclItem { grantee: "a".into(), grantor: "a".into(), privs: SELECT, grantable: SELECT },
            AclItem { grantee: "b".into(), grantor: "a".into(), privs: UPDATE, grantable: 0 },
            AclItem { grantee: "c".into(), grantor: "c".into(), privs: INSERT, grantable: 0 },
        ]);
        o.set_owner("c");
        let texts: Vec<String> = o.acl.expect("an ACL").iter().map(AclItem::to_text).collect();
        assert_eq!(texts, ["c=ar*/c", "b=w/c"]);
    }

    #[test]
    fn revoke_needs_cascade_for_passed_on_privileges() {
        let mut items = vec![
            AclItem { grantee: "a".into(), grantor: "o".into(), privs: SELECT, grantable: SELECT },
            AclItem { grantee: "b".into(), grantor: "a".into(), privs: SELECT, grantable: SELECT },
            AclItem { grantee: "c".into(), grantor: "b".into(), privs: SELECT, grantable: 0 },
        ];
        assert!(revoke(&mut items.clone(), "a", "o", SELECT, false, false).is_err());
        revoke(&mut items, "a", "o", SELECT, false, true).expect("cascades");
        assert!(items.iter().all(|i| i.privs == 0));
    }
}
