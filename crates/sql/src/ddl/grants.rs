//! GRANT and REVOKE: privileges on tables, views, sequences, schemas and
//! the database (stored as the object's ACL, see `acl.rs`), and role
//! membership (GRANT role TO role).

use super::*;
use crate::acl::{self, ObjKind, Ownership};
use crate::parse::GrantRole;

/// What a GRANT or REVOKE statement says, whichever it was.
pub struct Privileges<'a> {
    /// GRANT (else REVOKE).
    pub grant: bool,
    /// The privileges.
    pub privileges: &'a ast::Privileges,
    /// The objects.
    pub objects: Option<&'a ast::GrantObjects>,
    /// The grantees.
    pub grantees: &'a [ast::Grantee],
    /// WITH GRANT OPTION, or GRANT OPTION FOR.
    pub option: bool,
    /// REVOKE ... CASCADE.
    pub cascade: bool,
}

impl<'a> Privileges<'a> {
    /// A GRANT statement's.
    pub fn of_grant(g: &'a ast::Grant) -> Privileges<'a> {
        Privileges {
            grant: true,
            privileges: &g.privileges,
            objects: g.objects.as_ref(),
            grantees: &g.grantees,
            option: g.with_grant_option,
            cascade: false,
        }
    }

    /// A REVOKE statement's.
    pub fn of_revoke(r: &'a ast::Revoke) -> Privileges<'a> {
        Privileges {
            grant: false,
            privileges: &r.privileges,
            objects: r.objects.as_ref(),
            grantees: &r.grantees,
            option: r.grant_option_for,
            cascade: r.cascade == Some(ast::CascadeOption::Cascade),
        }
    }
}

/// An object a GRANT names, found.
enum Target {
    Relation(catalog::Relation),
    Schema(u32, String),
    Database,
}

/// GRANT privileges ON objects TO roles, REVOKE privileges ON objects FROM
/// roles, made by `user`.
pub async fn privileges<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    user: &str,
    g: &Privileges<'_>,
) -> Result<DdlResult> {
    let tag = if g.grant { "GRANT" } else { "REVOKE" };
    let mut r = DdlResult::tag(tag);
    let Some(objects) = g.objects else {
        bail!(SyntaxError, "syntax error at or near \"{}\"", if g.grant { "TO" } else { "FROM" });
    };
    let grantees = grantees(cat, user, g.grantees)?;
    let (targets, sequences_only) = targets(cat, objects)?;
    bump_version(txn, tenant).await?;
    for target in targets {
        let (kind, name, mut own) = match &target {
            Target::Relation(rel) => (rel.kind(), rel.name().to_string(), rel.access().clone()),
            Target::Schema(ns, name) => {
                let access = cat.schema_access(*ns).map(|a| a.into_owned()).unwrap_or_default();
                (ObjKind::Schema, name.clone(), access)
            }
            Target::Database => (ObjKind::Database, "postgres".into(), cat.database_access.clone()),
        };
        let (privs, dropped) = bits(g.privileges, kind, sequences_only)?;
        if dropped {
            r.notices.push(warning(format!(
                "sequence \"{name}\" only supports USAGE, SELECT, and UPDATE privileges"
            )));
        }
        let change = acl::Change {
            grant: g.grant,
            privs,
            option: g.option,
            grantees: &grantees,
            cascade: g.cascade,
        };
        if let Some(w) = acl::apply(cat, &mut own, kind, &name, user, &change)? {
            r.notices.push(warning(w));
        }
        write_access(txn, tenant, cat, &target, own).await?;
    }
    Ok(r)
}

fn warning(msg: String) -> ErrorReport {
    ErrorReport::warning(sqlstate::SqlState::Warning, msg)
}

/// The roles a GRANT names: "" for PUBLIC; CURRENT_USER and friends are
/// `user`.
fn grantees(cat: &Catalog, user: &str, gs: &[ast::Grantee]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for g in gs {
        if g.grantee_type == ast::GranteesType::Public {
            out.push(String::new());
            continue;
        }
        let Some(ast::GranteeName::ObjectName(n)) = &g.name else {
            bail!(SyntaxError, "syntax error at or near \"{g}\"");
        };
        let name = role_spec(cat, user, n)?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// A role named in GRANT or REVOKE (PUBLIC spelled as a name too).
fn role_spec(cat: &Catalog, user: &str, n: &ast::ObjectName) -> Result<String> {
    let ident =
        n.0.last().and_then(|p| p.as_ident()).cloned().unwrap_or_else(|| ast::Ident::new(""));
    let name = bind::ident(&ident);
    if ident.quote_style.is_none() {
        match name.as_str() {
            "public" => return Ok(String::new()),
            "current_user" | "current_role" | "session_user" => return Ok(user.to_string()),
            _ => {}
        }
    }
    if cat.role(&name).is_none() {
        bail!(UndefinedObject, "role \"{name}\" does not exist");
    }
    Ok(name)
}

/// The objects a GRANT names, and whether they were named as sequences
/// (GRANT ... ON SEQUENCE).
fn targets(cat: &Catalog, objects: &ast::GrantObjects) -> Result<(Vec<Target>, bool)> {
    use ast::GrantObjects as G;
    let mut out = Vec::new();
    let in_schemas = |schemas: &[ast::ObjectName]| -> Result<Vec<u32>> {
        schemas
            .iter()
            .map(|s| {
                let name = bind::object_name(s)?;
                cat.namespace_oid(&name)
                    .ok_or_else(|| err!(InvalidSchemaName, "schema \"{name}\" does not exist"))
            })
            .collect()
    };
    let sequences = matches!(objects, G::Sequences(_) | G::AllSequencesInSchema { .. });
    match objects {
        G::Tables(names) | G::Views(names) | G::Sequences(names) => {
            for n in names {
                let obj = bind::obj_name(n)?;
                let rel = match cat.relation(&obj)? {
                    Some(catalog::Relation::Index(..)) => {
                        bail!(WrongObjectType, "\"{}\" is an index", obj.name)
                    }
                    Some(r) => r,
                    None => bail!(UndefinedTable, "relation \"{obj}\" does not exist"),
                };
                if sequences && !matches!(rel, catalog::Relation::Sequence(_)) {
                    bail!(WrongObjectType, "\"{}\" is not a sequence", obj.name);
                }
                out.push(Target::Relation(rel));
            }
        }
        G::AllTablesInSchema { schemas } => {
            for ns in in_schemas(schemas)? {
                let tables = cat.tables.values().filter(|t| t.namespace == ns && !t.temporary);
                out.extend(tables.map(|t| Target::Relation(catalog::Relation::Table(t.clone()))));
                let views = cat.views.values().filter(|v| v.namespace == ns);
                out.extend(views.map(|v| Target::Relation(catalog::Relation::View(v.clone()))));
            }
        }
        G::AllSequencesInSchema { schemas } => {
            for ns in in_schemas(schemas)? {
                let seqs = cat.sequences.values().filter(|s| s.namespace == ns);
                out.extend(seqs.map(|s| Target::Relation(catalog::Relation::Sequence(s.clone()))));
            }
        }
        G::Schemas(names) => {
            for (ns, n) in in_schemas(names)?.into_iter().zip(names) {
                if ns != catalog::PUBLIC_NAMESPACE_OID && !cat.schemas.values().any(|s| s.oid == ns)
                {
                    bail!(FeatureNotSupported, "privileges on system schemas cannot be changed");
                }
                out.push(Target::Schema(ns, bind::object_name(n)?));
            }
        }
        G::Databases(names) => {
            for n in names {
                let name = bind::object_name(n)?;
                if name != "postgres" {
                    bail!(InvalidCatalogName, "database \"{name}\" does not exist");
                }
                out.push(Target::Database);
            }
        }
        other => bail!(FeatureNotSupported, "GRANT and REVOKE ON {other} are not supported yet"),
    }
    Ok((out, sequences))
}

/// The privilege bits a GRANT names for an object of `kind`. On a
/// sequence named as a table, privileges sequences lack are dropped (the
/// flag says so: PostgreSQL warns); named as a sequence, they are an
/// error.
fn bits(p: &ast::Privileges, kind: ObjKind, as_sequence: bool) -> Result<(u16, bool)> {
    let actions = match p {
        ast::Privileges::All { .. } => return Ok((kind.all(), false)),
        ast::Privileges::Actions(a) => a,
    };
    let mut names = Vec::new();
    for a in actions {
        use ast::Action as A;
        let (name, cols) = match a {
            A::Select { columns } => ("select", columns.is_some()),
            A::Insert { columns } => ("insert", columns.is_some()),
            A::Update { columns } => ("update", columns.is_some()),
            A::References { columns } => ("references", columns.is_some()),
            A::Delete => ("delete", false),
            A::Truncate => ("truncate", false),
            A::Trigger => ("trigger", false),
            A::Usage => ("usage", false),
            A::Create { obj_type: None } => ("create", false),
            A::Connect => ("connect", false),
            A::Temporary => ("temporary", false),
            A::Execute { obj_type: None } => ("execute", false),
            other => bail!(SyntaxError, "unrecognized privilege type \"{other}\""),
        };
        if cols {
            bail!(FeatureNotSupported, "column privileges are not supported yet");
        }
        names.push(name);
    }
    let relation = matches!(kind, ObjKind::Table | ObjKind::View | ObjKind::MatView);
    if relation || (kind == ObjKind::Sequence && !as_sequence) {
        // GRANT ... ON TABLE checks against what relations of any kind
        // have first, then against the object's own kind.
        let any = ObjKind::Table.all() | ObjKind::Sequence.all();
        acl::privilege_bits(&names, any, "relation")?;
    }
    if kind != ObjKind::Sequence {
        return Ok((acl::privilege_bits(&names, kind.all(), kind.noun())?, false));
    }
    let mut kept = 0;
    let mut dropped = false;
    for n in names {
        let bit = acl::privilege_bit(n)?;
        if bit & kind.all() != 0 {
            kept |= bit;
        } else if as_sequence {
            bail!(
                InvalidGrantOperation,
                "invalid privilege type {} for sequence",
                n.to_uppercase()
            );
        } else {
            dropped = true;
        }
    }
    Ok((kept, dropped))
}

/// Stores an object's changed owner and ACL.
async fn write_access<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    target: &Target,
    access: Ownership,
) -> Result<()> {
    match target {
        Target::Relation(rel) => write_relation_access(txn, tenant, rel, access).await,
        Target::Schema(ns, _) => schemas::put_access(txn, tenant, cat, *ns, access).await,
        Target::Database => put_entry(txn, keys::database(tenant), json_entry(&access)).await,
    }
}

/// Stores a relation's changed owner and ACL (an index's are its table's).
pub(super) async fn write_relation_access<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    rel: &catalog::Relation,
    access: Ownership,
) -> Result<()> {
    match rel {
        catalog::Relation::Table(t) | catalog::Relation::Index(t, _) => {
            refuse_temporary(t, "changing owners and privileges")?;
            write_table(txn, tenant, &TableDef { access, ..(**t).clone() }).await
        }
        catalog::Relation::View(v) => {
            let v = catalog::ViewDef { access, ..(**v).clone() };
            put_entry(txn, keys::view(tenant, v.oid), json_entry(&v)).await
        }
        catalog::Relation::Sequence(s) => {
            let s = SequenceDef { access, ..(**s).clone() };
            sequences::write_sequence(txn, tenant, &s).await
        }
    }
}

/// GRANT role TO member, REVOKE role FROM member, made by `user`.
pub async fn role_membership<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    user: &str,
    g: &GrantRole,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag(if g.grant { "GRANT ROLE" } else { "REVOKE ROLE" });
    // A role, never PUBLIC; the granted ones may be predefined roles
    // (pg_signal_backend, ...) too.
    let role_named = |i: &ast::Ident, predefined_ok: bool| -> Result<String> {
        let n = bind::ident(i);
        if predefined_ok && crate::system::PREDEFINED_ROLES.iter().any(|(p, _)| *p == n) {
            return Ok(n);
        }
        match role_spec(cat, user, &ident_name(i))? {
            p if p.is_empty() => bail!(UndefinedObject, "role \"public\" does not exist"),
            p => Ok(p),
        }
    };
    let roles = g.roles.iter().map(|i| role_named(i, true)).collect::<Result<Vec<_>>>()?;
    let members = g.members.iter().map(|i| role_named(i, false)).collect::<Result<Vec<_>>>()?;
    bump_version(txn, tenant).await?;
    let mut changed: BTreeMap<String, catalog::RoleDef> = BTreeMap::new();
    for role in &roles {
        let admin_of = |u: &str| {
            cat.role(u).is_some_and(|d| d.member_of.iter().any(|m| m.role == *role && m.admin))
        };
        let may = cat.is_superuser(user)
            || (!cat.is_superuser(role) && cat.role(user).is_some_and(|d| d.createrole))
            || admin_of(user);
        if !may {
            if cat.is_superuser(role) {
                bail!(InsufficientPrivilege, "must be superuser to alter superusers");
            }
            bail!(InsufficientPrivilege, "must have admin option on role \"{role}\"");
        }
        for member in &members {
            let mut def = match changed.get(member).cloned().or_else(|| cat.role(member)) {
                Some(d) => d,
                // CURRENT_USER whose role another session dropped.
                None => bail!(UndefinedObject, "role \"{member}\" does not exist"),
            };
            let at = def.member_of.iter().position(|m| m.role == *role);
            if g.grant {
                if cat.is_member_of(role, member) {
                    bail!(
                        InvalidGrantOperation,
                        "role \"{role}\" is a member of role \"{member}\""
                    );
                }
                match at {
                    Some(i) if def.member_of[i].admin || !g.admin => {
                        r.notices.push(notice(format!(
                            "role \"{member}\" is already a member of role \"{role}\""
                        )));
                        continue;
                    }
                    Some(i) => def.member_of[i].admin = true,
                    None => def.member_of.push(catalog::Membership {
                        role: role.clone(),
                        grantor: user.to_string(),
                        admin: g.admin,
                    }),
                }
            } else {
                match at {
                    None => {
                        r.notices.push(warning(format!(
                            "role \"{member}\" is not a member of role \"{role}\""
                        )));
                        continue;
                    }
                    Some(i) if g.admin => def.member_of[i].admin = false,
                    Some(i) => {
                        def.member_of.remove(i);
                    }
                }
            }
            changed.insert(member.clone(), def);
        }
    }
    for def in changed.values() {
        roles::write_role(txn, tenant, def).await?;
    }
    Ok(r)
}

/// ALTER DEFAULT PRIVILEGES, made by `user`: changes the pg_default_acl
/// entry of each role (and schema) named, which new objects start from.
pub async fn default_privileges<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    user: &str,
    a: &crate::parse::AlterDefaultPrivileges,
) -> Result<DdlResult> {
    let r = DdlResult::tag("ALTER DEFAULT PRIVILEGES");
    let Some(kind) = ObjKind::from_defacl_code(a.objtype) else {
        bail!(InternalError, "unknown default privileges kind {}", a.objtype);
    };
    // PostgreSQL's order of checks: grantees, privileges, target roles,
    // then schemas.
    let noun = if kind == ObjKind::Table { "relation" } else { kind.noun() };
    let (grantees, privs) = change_parts(cat, user, &a.change, kind, noun)?;
    let spec = |i: &ast::Ident| role_spec(cat, user, &ident_name(i));
    let roles = match a.roles.is_empty() {
        true => vec![user.to_string()],
        false => a.roles.iter().map(spec).collect::<Result<Vec<_>>>()?,
    };
    for role in &roles {
        authorize::must_be_member(cat, user, role)?;
    }
    if kind == ObjKind::Schema && !a.schemas.is_empty() {
        bail!(
            InvalidGrantOperation,
            "cannot use IN SCHEMA clause when using GRANT/REVOKE ON SCHEMAS"
        );
    }
    let namespaces = match a.schemas.is_empty() {
        true => vec![0],
        false => a
            .schemas
            .iter()
            .map(|s| {
                let name = bind::ident(s);
                cat.namespace_oid(&name)
                    .ok_or_else(|| err!(InvalidSchemaName, "schema \"{name}\" does not exist"))
            })
            .collect::<Result<Vec<u32>>>()?,
    };
    let change = acl_change(&a.change, privs, &grantees);
    bump_version(txn, tenant).await?;
    for role in &roles {
        for &ns in &namespaces {
            let existing = cat
                .default_acls
                .iter()
                .find(|d| d.role == *role && d.namespace == ns && d.objtype == a.objtype);
            let default = if ns == 0 { acl::default_acl(kind, role) } else { Vec::new() };
            let mut items = existing.map_or_else(|| default.clone(), |d| d.acl.clone());
            acl::edit(&mut items, role, privs, &change)?;
            acl::sort_items(cat, &mut items);
            let mut sorted_default = default;
            acl::sort_items(cat, &mut sorted_default);
            // Back to the default: the entry goes.
            if items == sorted_default {
                if let Some(d) = existing {
                    delete_key(txn, keys::default_acl(tenant, d.oid)).await?;
                }
                continue;
            }
            let oid = match existing {
                Some(d) => d.oid,
                None => alloc(txn, tenant, 1).await? as u32,
            };
            let def = catalog::DefaultAclDef {
                oid,
                role: role.clone(),
                namespace: ns,
                objtype: a.objtype,
                acl: items,
            };
            put_entry(txn, keys::default_acl(tenant, oid), json_entry(&def)).await?;
        }
    }
    Ok(r)
}

/// GRANT or REVOKE privileges ON TYPE | DOMAIN, made by `user`: USAGE on
/// enum types.
pub async fn type_privileges<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    user: &str,
    g: &crate::parse::GrantOnType,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag(if g.change.grant { "GRANT" } else { "REVOKE" });
    let (grantees, privs) = change_parts(cat, user, &g.change, ObjKind::Type, "type")?;
    let change = acl_change(&g.change, privs, &grantees);
    let mut defs = Vec::new();
    for n in &g.types {
        let obj = bind::obj_name(n)?;
        match cat.user_type_named(&obj)? {
            Some((d, _)) if g.domain && d.domain.is_none() => {
                bail!(WrongObjectType, "\"{}\" is not a domain", d.name)
            }
            Some((d, _)) => defs.push(d.clone()),
            None if types::must_get(cat, &obj, false).is_err() => {
                bail!(UndefinedObject, "type \"{obj}\" does not exist")
            }
            None => bail!(FeatureNotSupported, "privileges of built-in types cannot be changed"),
        }
    }
    bump_version(txn, tenant).await?;
    for d in defs {
        let mut own = d.access.clone();
        if let Some(w) = acl::apply(cat, &mut own, ObjKind::Type, &d.name, user, &change)? {
            r.notices.push(warning(w));
        }
        types::put(txn, tenant, &catalog::UserTypeDef { access: own, ..(*d).clone() }).await?;
    }
    Ok(r)
}

/// A GRANT's grantees (PUBLIC as "") and privilege bits for an object of
/// `kind`, whose name in errors is `noun`.
fn change_parts(
    cat: &Catalog,
    user: &str,
    c: &crate::parse::PrivilegeChange,
    kind: ObjKind,
    noun: &str,
) -> Result<(Vec<String>, u16)> {
    let grantees = c
        .grantees
        .iter()
        .map(|g| g.as_ref().map_or(Ok(String::new()), |i| role_spec(cat, user, &ident_name(i))))
        .collect::<Result<Vec<String>>>()?;
    let privs = match &c.privileges {
        None => kind.all(),
        Some(names) => {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            acl::privilege_bits(&names, kind.all(), noun)?
        }
    };
    Ok((grantees, privs))
}

fn acl_change<'a>(
    c: &crate::parse::PrivilegeChange,
    privs: u16,
    grantees: &'a [String],
) -> acl::Change<'a> {
    acl::Change { grant: c.grant, privs, option: c.option, grantees, cascade: c.cascade }
}

/// A one-part name.
fn ident_name(i: &ast::Ident) -> ast::ObjectName {
    ast::ObjectName(vec![ast::ObjectNamePart::Identifier(i.clone())])
}
