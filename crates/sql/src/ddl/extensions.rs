//! CREATE EXTENSION, DROP EXTENSION [CASCADE] and COMMENT ON EXTENSION
//! (what an extension is here: `extensions.rs`).
//!
//! Stored text names an extension function with its schema (deparse.rs),
//! so what uses one is found by reading the views, column defaults, CHECK
//! conditions and index expressions for calls of it. DROP EXTENSION
//! refuses while any exist, or with CASCADE drops them first: views go,
//! defaults are removed, constraints and indexes dropped, as in PostgreSQL.

use super::*;
use crate::extensions;
use crate::func::catalog_info::quote_ident;
use catalog::ExtensionDef;
use sqlstate::SqlState;

/// CREATE EXTENSION \[IF NOT EXISTS\] name \[WITH\] \[SCHEMA s\] \[VERSION v\]
/// \[CASCADE\].
pub async fn create_extension<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    c: &ast::CreateExtension,
    user: &str,
) -> Result<DdlResult> {
    let name = bind::ident(&c.name);
    let mut r = DdlResult::tag("CREATE EXTENSION");
    if name == "plpgsql" || cat.extensions.contains_key(&name) {
        if c.if_not_exists {
            let msg = format!("extension \"{name}\" already exists, skipping");
            r.notices.push(notice_code(SqlState::DuplicateObject, msg));
            return Ok(r);
        }
        bail!(DuplicateObject, "extension \"{name}\" already exists");
    }
    let Some(x) = extensions::find(&name) else {
        let names: Vec<&str> = extensions::AVAILABLE.iter().map(|x| x.name).collect();
        return Err(err!(FeatureNotSupported, "extension \"{name}\" is not available")
            .with_detail(format!("Strata has the extensions {}.", names.join(", "))));
    };
    if let Some(v) = &c.version {
        if v.value != x.version {
            bail!(
                InvalidParameterValue,
                "extension \"{name}\" has no installation script nor update path for version \"{}\"",
                v.value
            );
        }
    }
    let namespace = match &c.schema {
        Some(s) => {
            let s = bind::ident(s);
            match cat.namespace_oid(&s) {
                Some(catalog::TEMP_NAMESPACE_OID) => {
                    bail!(FeatureNotSupported, "cannot install an extension in a temporary schema")
                }
                Some(ns) => ns,
                None => bail!(InvalidSchemaName, "schema \"{s}\" does not exist"),
            }
        }
        None => cat.creation_namespace(&catalog::ObjName::bare(&name))?,
    };
    bump_version(txn, tenant).await?;
    let members = x.procs().len() as u32;
    let oid = alloc(txn, tenant, 1 + u64::from(members)).await? as u32;
    let def = ExtensionDef {
        oid,
        name,
        namespace,
        owner: user.to_string(),
        version: x.version.to_string(),
        members,
        comment: Some(x.comment.to_string()),
    };
    put(txn, tenant, &def).await?;
    Ok(r)
}

/// DROP EXTENSION \[IF EXISTS\] name, ... \[CASCADE | RESTRICT\].
pub async fn drop_extensions<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    names: &[ast::Ident],
    if_exists: bool,
    cascade: bool,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag("DROP EXTENSION");
    let mut going = Vec::new();
    for id in names {
        let name = bind::ident(id);
        if name == "plpgsql" {
            bail!(
                DependentObjectsStillExist,
                "cannot drop extension plpgsql because it is required by the database system"
            );
        }
        match cat.extensions.get(&name) {
            Some(x) => going.push(x.clone()),
            None => skip_missing(&mut r, if_exists, SqlState::UndefinedObject, "extension", &name)?,
        }
    }
    if going.is_empty() {
        return Ok(r);
    }
    let listed = drop_installed(txn, tenant, cat, &going, cascade).await?;
    r.notices.extend(view_deps::cascade_notice(&listed));
    Ok(r)
}

/// Drops the installed extensions `going` and, with `cascade`, what uses
/// their functions (else that is an error); returns what went with them,
/// as DROP's notice lists it.
pub(super) async fn drop_installed<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    going: &[Arc<ExtensionDef>],
    cascade: bool,
) -> Result<Vec<String>> {
    let users = users(cat, going);
    if !users.is_empty() && !cascade {
        let detail = lines(&users);
        let shown: Vec<&str> = going.iter().map(|x| x.name.as_str()).collect();
        let what = format!("extension {}", shown.join(", "));
        return Err(super::still_depended_on(&what, &detail));
    }
    bump_version(txn, tenant).await?;
    let mut d = Dropping::new(true);
    let views: Vec<ast::ObjectName> = users
        .iter()
        .filter_map(|u| match &u.object {
            User::View(qn) => Some(ast::ObjectName::from(vec![
                crate::deparse::ident_of(cat.namespace_name(qn.0).unwrap_or_default()),
                crate::deparse::ident_of(&qn.1),
            ])),
            _ => None,
        })
        .collect();
    if !views.is_empty() {
        drop_views(txn, tenant, cat, &views, false, &mut d).await?;
    }
    // Defaults, constraints and indexes: one new definition per table.
    let mut changed: BTreeMap<u32, TableDef> = BTreeMap::new();
    let mut garbage = Vec::new();
    for u in &users {
        let oid = match &u.object {
            User::View(_) => continue,
            User::Default(t, _) | User::Check(t, _) | User::Index(t, _) => *t,
        };
        let Some(t) = cat.table_by_oid(oid) else { continue };
        let t = changed.entry(oid).or_insert_with(|| (*t).clone());
        match &u.object {
            User::View(_) => {}
            User::Default(_, c) => t.columns[*c].default = None,
            User::Check(_, name) => t.checks.retain(|k| k.name != *name),
            User::Index(_, name) => {
                if let Some(i) = t.indexes.iter().position(|i| i.name == *name) {
                    garbage.push(t.indexes.remove(i).storage);
                }
            }
        }
    }
    for storage in garbage {
        txn.delete_range_after_commit(keys::storage(tenant, storage)).map_err(from_kv)?;
    }
    for t in changed.values() {
        lock_table(txn, tenant, t.oid).await?;
        write_table(txn, tenant, t).await?;
    }
    let listed: Vec<String> = users.iter().map(|u| u.what.clone()).chain(d.cascaded).collect();
    for x in going {
        delete_key(txn, keys::extension(tenant, x.oid)).await?;
    }
    Ok(listed)
}

/// What uses the functions of `going`, as a DROP's DETAIL lists it
/// (`default value for column id of table t depends on function ...`).
pub(super) fn user_lines(cat: &Catalog, going: &[Arc<ExtensionDef>]) -> Vec<String> {
    lines(&users(cat, going))
}

fn lines(users: &[Use]) -> Vec<String> {
    users.iter().map(|u| format!("{} depends on function {}", u.what, u.function)).collect()
}

/// COMMENT ON EXTENSION name IS ... (plpgsql's comment is PostgreSQL's
/// and stays).
pub(super) async fn comment<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    name: &ast::ObjectName,
    text: Option<String>,
) -> Result<DdlResult> {
    let name = bind::object_name(name)?;
    let r = DdlResult::tag("COMMENT");
    let Some(def) = cat.extensions.get(&name) else {
        if name == "plpgsql" {
            return Ok(r);
        }
        bail!(UndefinedObject, "extension \"{name}\" does not exist");
    };
    let def = ExtensionDef { comment: text, ..(**def).clone() };
    bump_version(txn, tenant).await?;
    put(txn, tenant, &def).await?;
    Ok(r)
}

/// A stored object that calls an extension's function.
enum User {
    /// A view, by schema and name.
    View(catalog::QualName),
    /// A column default: (table OID, column position).
    Default(u32, usize),
    /// A CHECK constraint: (table OID, constraint name).
    Check(u32, String),
    /// An expression or partial index: (table OID, index name).
    Index(u32, String),
}

/// One use, as the DETAIL of DROP's error describes it.
struct Use {
    object: User,
    /// `view v`, `default value for column id of table t`, ...
    what: String,
    /// The function used: `uuid_generate_v4()`, `digest(bytea,text)`.
    function: String,
}

/// What calls the functions of `going`: views first, then per table its
/// defaults, constraints and indexes.
fn users(cat: &Catalog, going: &[Arc<ExtensionDef>]) -> Vec<Use> {
    let called = |text: &str, query: bool| -> Option<String> {
        let mut found = None;
        let mut visit = |x: &ast::Expr| {
            if let ast::Expr::Function(f) = x {
                if let Ok(catalog::ObjName { schema: Some(s), name }) = bind::obj_name(&f.name) {
                    let ns = cat.namespace_oid(&s);
                    let hit = going.iter().any(|x| Some(x.namespace) == ns)
                        && extensions::members(cat).any(|m| {
                            m.proc.name == name && going.iter().any(|x| x.oid == m.ext.oid)
                        });
                    if hit && found.is_none() {
                        let nargs = match &f.args {
                            ast::FunctionArguments::List(l) => l.args.len(),
                            _ => 0,
                        };
                        found = Some(called_function(cat, going, &name, nargs));
                    }
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        };
        if query {
            let q = crate::parse::query_text(text).ok()?;
            let _ = ast::visit_expressions(&q, &mut visit);
        } else {
            let e = crate::parse::expr_text(text).ok()?;
            let _ = ast::visit_expressions(&e, &mut visit);
        }
        found
    };
    let mut out = Vec::new();
    for v in cat.views.values() {
        if let Some(function) = called(&v.query, true) {
            let what = format!("view {}", v.name);
            out.push(Use { object: User::View((v.namespace, v.name.clone())), what, function });
        }
    }
    // Temporary tables are the session's: dropping their defaults is not
    // supported, and a default that names a dropped function fails when
    // used, as it would in a table made before the extension.
    for t in cat.tables.values().filter(|t| !t.temporary) {
        for (i, c) in t.columns.iter().enumerate() {
            if let Some(function) = c.default.as_deref().and_then(|d| called(d, false)) {
                let what = format!("default value for column {} of table {}", c.name, t.name);
                out.push(Use { object: User::Default(t.oid, i), what, function });
            }
        }
        for k in &t.checks {
            if let Some(function) = called(&k.expr, false) {
                let what = format!("constraint {} on table {}", k.name, t.name);
                out.push(Use { object: User::Check(t.oid, k.name.clone()), what, function });
            }
        }
        for ix in &t.indexes {
            let texts = ix.exprs.iter().chain(ix.predicate.as_ref());
            if let Some(function) = texts.filter_map(|e| called(e, false)).next() {
                let what = format!("index {}", ix.name);
                out.push(Use { object: User::Index(t.oid, ix.name.clone()), what, function });
            }
        }
    }
    out
}

/// `name(argtypes)` of the first function of `going` named `name` that
/// takes `nargs` arguments, as PostgreSQL names a function in a
/// dependency. (Of overloads with as many arguments, such as digest's on
/// text and bytea, the first is named.)
fn called_function(cat: &Catalog, going: &[Arc<ExtensionDef>], name: &str, nargs: usize) -> String {
    let m = extensions::members(cat).find(|m| {
        m.proc.name == name
            && m.proc.argtypes.len() == nargs
            && going.iter().any(|x| x.oid == m.ext.oid)
    });
    let args: Vec<String> = m
        .map(|m| {
            m.proc
                .argtypes
                .iter()
                .filter_map(|&o| DataType::from_oid(o))
                .map(|t| t.to_string())
                .collect()
        })
        .unwrap_or_default();
    // Named as the search path finds it, like regprocedure output.
    let visible = m.is_some_and(|m| extensions::call_schema(cat, name) == Some(m.ext.namespace));
    let schema = m.and_then(|m| cat.namespace_name(m.ext.namespace)).filter(|_| !visible);
    let schema = schema.map(|s| format!("{}.", quote_ident(s))).unwrap_or_default();
    format!("{schema}{name}({})", args.join(","))
}

pub(super) async fn put<T: Txn>(txn: &mut T, tenant: TenantId, def: &ExtensionDef) -> Result<()> {
    put_entry(txn, keys::extension(tenant, def.oid), json_entry(def)).await
}
