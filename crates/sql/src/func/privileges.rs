//! The privilege inquiry functions: has_table_privilege,
//! has_column_privilege, has_any_column_privilege,
//! has_sequence_privilege, has_schema_privilege, has_database_privilege,
//! has_function_privilege, has_type_privilege, has_language_privilege and
//! pg_has_role, with an optional role first (by name or OID).
//!
//! The answer comes from the object's owner and ACL (`acl.rs`), as the
//! checks statements pass use them: true if the role holds any of the
//! privileges listed. Functions, types and languages have no ACL in
//! Strata: everyone may use them, as PostgreSQL's defaults say. The system
//! catalogs may be read by everyone and changed by superusers. What
//! PostgreSQL checks is checked as it does: the role, the object (a name
//! that names nothing is an error, an OID that names nothing gives NULL)
//! and the privilege names the object's kind has.

use sqltypes::{DataType, Value};

use crate::catalog::Catalog;
use crate::error::Result;
use crate::expr::EvalContext;
use crate::func::catalog_info;
use crate::{bail, err};

/// What the function asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    /// A table, view or sequence (has_table_privilege).
    Table,
    /// One column (has_column_privilege: the table, then the column).
    Column,
    /// Any column of a table (has_any_column_privilege).
    AnyColumn,
    /// A sequence (has_sequence_privilege).
    Sequence,
    /// A schema.
    Schema,
    /// The database.
    Database,
    /// A function, as `name(argtypes)` or OID.
    Function,
    /// A type.
    Type,
    /// A language.
    Language,
    /// A role (pg_has_role: membership).
    Role,
}

/// One function: the object kind and whether a role comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrivilegeFunc {
    /// What is asked about.
    pub object: Object,
    /// True if the first argument names the role asking.
    pub with_role: bool,
}

/// A resolved call: the function, its result type, its argument types.
pub type Resolved = (PrivilegeFunc, DataType, Vec<Option<DataType>>);

/// The function `name` names with these arguments; None if `name` is not
/// one of them.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    let object = match name {
        "has_table_privilege" => Object::Table,
        "has_column_privilege" => Object::Column,
        "has_any_column_privilege" => Object::AnyColumn,
        "has_sequence_privilege" => Object::Sequence,
        "has_schema_privilege" => Object::Schema,
        "has_database_privilege" => Object::Database,
        "has_function_privilege" => Object::Function,
        "has_type_privilege" => Object::Type,
        "has_language_privilege" => Object::Language,
        "pg_has_role" => Object::Role,
        _ => return None,
    };
    // The object (two arguments for a column), then the privilege.
    let own = if object == Object::Column { 3 } else { 2 };
    let with_role = match args.len() {
        n if n == own => false,
        n if n == own + 1 => true,
        _ => return Some(Err(super::no_such_function(name, args))),
    };
    // Names go in as text, OIDs as they are.
    let as_is = |t: &DataType| match t {
        DataType::Unknown | DataType::Varchar(_) | DataType::Char(_) => Some(DataType::Text),
        _ => None,
    };
    let params = args.iter().map(as_is).collect();
    Some(Ok((PrivilegeFunc { object, with_role }, DataType::Bool, params)))
}

/// Evaluates `f` (strict).
pub fn call(f: PrivilegeFunc, args: Vec<Value>, ctx: &EvalContext) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let Some(cat) = ctx.catalog.as_deref() else { return Ok(Value::Null) };
    let mut args = args.into_iter();
    // A role OID that names no role has no privileges.
    let mut role_known = true;
    let mut user =
        if ctx.user.is_empty() { crate::acl::BOOTSTRAP.to_string() } else { ctx.user.to_string() };
    if f.with_role {
        let role = args.next().unwrap_or(Value::Null);
        role_known = role_exists(cat, &role)?;
        user = match &role {
            Value::Text(name) => name.clone(),
            other => catalog_info::user_by_id(cat, other.as_oid().unwrap_or(0)),
        };
    }
    let rest: Vec<Value> = args.collect();
    let (object, privileges) = match rest.as_slice() {
        [object, column, Value::Text(p)] if f.object == Object::Column => {
            match column_exists(cat, object, column)? {
                true => (object, p),
                false => return Ok(Value::Null),
            }
        }
        [object, Value::Text(p)] => (object, p),
        _ => bail!(InternalError, "privilege function called with {rest:?}"),
    };
    let exists = match (f.object, object) {
        (Object::Column, _) => true,
        (kind, Value::Text(name)) => object_named(cat, kind, name)?,
        (kind, other) => match other.as_oid() {
            Some(oid) => object_with_oid(cat, kind, oid)?,
            None => bail!(InternalError, "privilege function given {other:?}"),
        },
    };
    let wanted = check_privileges(f.object, privileges)?;
    if !exists {
        return Ok(Value::Null);
    }
    Ok(Value::Bool(role_known && holds(cat, f.object, object, &user, &wanted)?))
}

/// True when `user` holds any of `wanted` (privilege, with grant option)
/// on the object.
fn holds(
    cat: &Catalog,
    kind: Object,
    object: &Value,
    user: &str,
    wanted: &[(String, bool)],
) -> Result<bool> {
    use crate::acl::ObjKind;
    let superuser = cat.is_superuser(user);
    let (access, acl_kind) = match kind {
        Object::Table | Object::Column | Object::AnyColumn | Object::Sequence => {
            let oid = match object {
                Value::Text(name) => catalog_info::class_oid(cat, name).unwrap_or(0),
                other => other.as_oid().unwrap_or(0),
            };
            let rel = cat
                .relations()
                .find(|(o, ..)| *o == oid)
                .and_then(|(_, ns, name, _)| cat.relation_in(ns, name));
            match rel {
                Some(rel) => (std::borrow::Cow::Owned(rel.access().clone()), rel.kind()),
                // A system catalog: everyone reads, superusers change.
                None => return Ok(superuser || wanted.iter().all(|(p, _)| p == "select")),
            }
        }
        Object::Schema => {
            let oid = match object {
                Value::Text(name) => cat.namespace_oid(name).unwrap_or(0),
                other => other.as_oid().unwrap_or(0),
            };
            match cat.schema_access(oid) {
                Some(a) => (a, ObjKind::Schema),
                None => return Ok(superuser),
            }
        }
        Object::Database => (std::borrow::Cow::Borrowed(&cat.database_access), ObjKind::Database),
        Object::Role => {
            let role = match object {
                Value::Text(name) => name.clone(),
                other => catalog_info::user_by_id(cat, other.as_oid().unwrap_or(0)),
            };
            return Ok(wanted.iter().any(|(p, admin)| {
                let member = match p.as_str() {
                    "member" => cat.may_become(user, &role),
                    _ => cat.has_privs_of(user, &role),
                };
                let admin_ok = !admin
                    || superuser
                    || cat
                        .role(user)
                        .is_some_and(|r| r.member_of.iter().any(|m| m.role == role && m.admin));
                member && admin_ok
            }));
        }
        Object::Function | Object::Type | Object::Language => return Ok(true),
    };
    let held = access.held(cat, acl_kind, user);
    for (p, option) in wanted {
        let bit = crate::acl::privilege_bit(p)?;
        let have = if *option { held.grantable } else { held.privs };
        if have & bit != 0 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the role exists: an error for a name that names none, false
/// for an OID.
fn role_exists(cat: &Catalog, role: &Value) -> Result<bool> {
    let roles = crate::system::roles_with_oids(cat);
    let predefined = crate::system::PREDEFINED_ROLES;
    match role {
        Value::Text(name) => {
            match roles.iter().any(|(_, r)| r.name == *name)
                || predefined.iter().any(|(p, _)| p == name)
            {
                true => Ok(true),
                false => bail!(UndefinedObject, "role \"{name}\" does not exist"),
            }
        }
        other => Ok(other.as_oid().is_some_and(|o| {
            roles.iter().any(|(oid, _)| *oid == o as i64) || predefined.iter().any(|(_, p)| *p == o)
        })),
    }
}

/// Whether the table has the column: an error for names that name
/// nothing, false for an OID or column number that does not.
fn column_exists(cat: &Catalog, table: &Value, column: &Value) -> Result<bool> {
    let oid = match table {
        Value::Text(name) => match catalog_info::class_oid(cat, name) {
            Some(oid) => oid,
            None => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
        },
        other => other.as_oid().unwrap_or(0),
    };
    let columns: Vec<String> =
        match (cat.table_by_oid(oid), cat.views.values().find(|v| v.oid == oid)) {
            (Some(t), _) => t.columns.iter().map(|c| c.name.clone()).collect(),
            (None, Some(v)) => v.columns.clone(),
            (None, None) if matches!(table, Value::Text(_)) => return Ok(true),
            (None, None) => return Ok(false),
        };
    match column {
        Value::Text(c) => match columns.contains(c) {
            true => Ok(true),
            false => {
                let rel = catalog_info::class_name(cat, oid);
                bail!(UndefinedColumn, "column \"{c}\" of relation \"{rel}\" does not exist")
            }
        },
        Value::Int2(n) => Ok(*n >= 1 && (*n as usize) <= columns.len()),
        _ => Ok(false),
    }
}

/// Whether an object of `kind` has this name; an error if none has.
fn object_named(cat: &Catalog, kind: Object, name: &str) -> Result<bool> {
    let found = match kind {
        Object::Table | Object::AnyColumn | Object::Column | Object::Sequence => {
            let Some(oid) = catalog_info::class_oid(cat, name) else {
                bail!(UndefinedTable, "relation \"{name}\" does not exist");
            };
            if kind == Object::Sequence && !cat.sequences.values().any(|s| s.oid == oid) {
                bail!(WrongObjectType, "\"{name}\" is not a sequence");
            }
            true
        }
        Object::Schema => match cat.namespace_oid(name) {
            Some(_) => true,
            None => bail!(InvalidSchemaName, "schema \"{name}\" does not exist"),
        },
        Object::Database => match name == "postgres" {
            true => true,
            false => bail!(InvalidCatalogName, "database \"{name}\" does not exist"),
        },
        Object::Function => {
            let bare = name.split('(').next().unwrap_or_default();
            let value = Value::Text(bare.to_string());
            let as_proc = catalog_info::to_reg(cat, sqltypes::RegKind::Proc, true, value);
            match as_proc {
                Ok(v) if !v.is_null() => true,
                // Overloaded names (several rows) are still functions.
                Err(e) if e.code == sqlstate::SqlState::AmbiguousFunction => true,
                _ => bail!(UndefinedFunction, "function \"{name}\" does not exist"),
            }
        }
        Object::Type => match catalog_info::type_oid(cat, name) {
            Some(_) => true,
            None => bail!(UndefinedObject, "type \"{name}\" does not exist"),
        },
        Object::Language => match crate::builtins::LANGUAGES.iter().any(|l| l.1 == name) {
            true => true,
            false => bail!(UndefinedObject, "language \"{name}\" does not exist"),
        },
        Object::Role => role_exists(cat, &Value::Text(name.to_string()))?,
    };
    Ok(found)
}

/// Whether an object of `kind` has this OID.
fn object_with_oid(cat: &Catalog, kind: Object, oid: u32) -> Result<bool> {
    Ok(match kind {
        Object::Table | Object::AnyColumn | Object::Column => {
            cat.relations().any(|(o, ..)| o == oid)
                || crate::system::CATALOG_RELATIONS.iter().any(|(_, o)| *o == oid)
        }
        Object::Sequence => cat.sequences.values().any(|s| s.oid == oid),
        Object::Schema => cat.namespace_name(oid).is_some(),
        Object::Database => oid == crate::catalog::DATABASE_OID,
        Object::Function => {
            crate::builtins::proc_by_oid(oid).is_some()
                || crate::extensions::member(cat, oid).is_some()
        }
        Object::Type => cat.type_by_oid(oid).is_some(),
        Object::Language => crate::builtins::LANGUAGES.iter().any(|l| l.0 == oid),
        Object::Role => role_exists(cat, &Value::Oid(oid))?,
    })
}

/// Checks a comma-separated privilege list (each optionally `WITH GRANT
/// OPTION`, or for roles `WITH ADMIN OPTION`) against the kind's
/// privileges.
fn check_privileges(kind: Object, list: &str) -> Result<Vec<(String, bool)>> {
    let mut out = Vec::new();
    let allowed: &[&str] = match kind {
        Object::Table => {
            &["select", "insert", "update", "delete", "truncate", "references", "trigger"]
        }
        Object::Column | Object::AnyColumn => &["select", "insert", "update", "references"],
        Object::Sequence => &["usage", "select", "update"],
        Object::Schema => &["create", "usage"],
        Object::Database => &["create", "connect", "temporary", "temp"],
        Object::Function => &["execute"],
        Object::Type | Object::Language => &["usage"],
        Object::Role => &["member", "usage"],
    };
    for item in list.split(',') {
        let words: Vec<String> = item.split_whitespace().map(str::to_lowercase).collect();
        let option = match kind {
            Object::Role => ["with", "admin", "option"],
            _ => ["with", "grant", "option"],
        };
        let ok = match words.as_slice() {
            [p] => allowed.contains(&p.as_str()),
            [p, rest @ ..] if rest.len() == 3 => {
                allowed.contains(&p.as_str()) && rest.iter().map(String::as_str).eq(option)
            }
            _ => false,
        };
        if ok {
            out.push((words[0].clone(), words.len() > 1));
        }
        if !ok {
            return Err(err!(
                InvalidParameterValue,
                "unrecognized privilege type: \"{}\"",
                item.trim()
            ));
        }
    }
    Ok(out)
}
