//! DDL: CREATE/DROP TABLE, TRUNCATE, CREATE/DROP INDEX, ALTER TABLE, CHECK
//! constraints; roles, sequences and views live in the submodules.
//!
//! Every DDL statement first locks the catalog version key and bumps it, so
//! DDL transactions are serialized and every session notices the change at
//! its next statement. DDL on a table also takes the table's lock
//! exclusively (`lock_table`), so it waits for the table's writers. Catalog
//! rows are written in the same transaction as any data rewrite, so a DDL
//! statement is atomic with its effects.
//!
//! Operations that change how rows are keyed (TRUNCATE, ADD PRIMARY KEY, ADD
//! COLUMN with a default) write a fresh storage id and schedule the old one
//! for range deletion after commit; nothing is rewritten in place.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use kvapi::{KeyRange, LockMode, TenantId, Txn};
use sqlparser::ast;
use sqltypes::{rowcodec, DataType, Value};

use crate::bind::{self, Binder, Scope};
use crate::catalog::{self, keys, Catalog, CheckDef, ColumnDef, IndexDef, TableDef, TypeDef};
use crate::dml;
use crate::error::{from_kv, ErrorReport, Result};
use crate::exec::{after, SCAN_BATCH};
use crate::sequence::{self, SequenceDef};
use crate::{bail, err};

/// Index access methods and operator classes.
pub mod access_methods;
/// ALTER TABLE column and name changes.
mod alter;
/// ATTACH / DETACH PARTITION; a partitioned table's keys on its partitions.
mod attach;
/// Who may run which DDL.
mod authorize;
/// CREATE / ALTER / DROP DOMAIN.
mod domains;
/// CREATE / DROP / COMMENT ON EXTENSION.
mod extensions;
/// FOREIGN KEY definitions, validation and dependencies.
mod foreign_keys;
/// CREATE FUNCTION ... LANGUAGE sql and DROP FUNCTION.
mod functions;
/// GRANT and REVOKE.
mod grants;
/// CREATE TABLE ... (LIKE source INCLUDING ...).
pub mod like;
/// Renames and schema moves, which reach stored text.
mod names;
/// REASSIGN OWNED and DROP OWNED.
mod owned;
/// OWNER TO.
mod owner;
/// PARTITION BY and PARTITION OF.
mod partitions;
/// CREATE/ALTER/DROP ROLE.
mod roles;
mod schemas;
/// CREATE/DROP SEQUENCE and owned sequences.
mod sequences;
/// CREATE / DROP TRIGGER.
mod triggers;
/// CREATE/ALTER/DROP TYPE (enums; DROP TYPE drops domains too).
mod types;
/// What views depend on; keeping them right through DDL.
mod view_deps;
/// CREATE/DROP VIEW.
mod views;

pub use attach::partition_cmd;
pub use authorize::{authorize, authorize_statement};
pub use domains::{alter_domain, create_domain, drop_domains};
pub use extensions::{create_extension, drop_extensions};
pub use functions::{alter_function, comment_function, create_function, drop_function};
pub use grants::{default_privileges, privileges, role_membership, type_privileges, Privileges};
pub use names::alter_name;
pub use owned::{owned_objects, owned_roles, reassign_owned, revoke_owned, OwnedKind};
pub use owner::{alter_owner, owner_only};
pub use roles::{alter_role, create_role, drop_role};
pub use schemas::{alter_schema, create_schema, drop_schemas};
pub use sequences::{alter_identity, alter_sequence, create_sequence};
use sequences::{delete_sequence, drop_sequences, owned_sequence, serial_type};
pub use triggers::{create_trigger, drop_trigger, rename_trigger};
pub use types::{alter_type, create_type};
use types::{comment_type, drop_types};
use views::drop_views;
pub use views::{alter_view, create_view};

/// A sequence a DDL statement changed, with the position to store (see
/// [`DdlResult::sequences`]).
pub type SequenceUpdate = (Arc<SequenceDef>, Option<(i64, bool)>);

/// What a DDL statement did: its command tag, notices, and the storage ids it
/// created (bulk loads into those may skip row locks).
#[derive(Debug, Default)]
pub struct DdlResult {
    /// CommandComplete tag.
    pub tag: String,
    /// Notices (e.g. "relation already exists, skipping").
    pub notices: Vec<ErrorReport>,
    /// Storage ids created by this statement.
    pub fresh: Vec<u64>,
    /// A temporary table this statement created: the session keeps it.
    pub temp_table: Option<TableDef>,
    /// Temporary tables this statement dropped: the session forgets them.
    pub dropped_temp: Vec<String>,
    /// Sequences the statement redefined (ALTER SEQUENCE) or numbered rows
    /// with (ADD COLUMN of a SERIAL or IDENTITY). The session drops the
    /// values it reserved under the old definition and, with a position
    /// (`(v, false)` for RESTART v, `(last, true)` after numbering rows),
    /// stores it.
    pub sequences: Vec<SequenceUpdate>,
}

impl DdlResult {
    fn tag(tag: &str) -> DdlResult {
        DdlResult { tag: tag.to_string(), ..Default::default() }
    }
}

/// A DROP of an object that does not exist: with IF EXISTS a notice (the
/// caller then skips the name), else the error with `code`.
fn skip_missing(
    r: &mut DdlResult,
    if_exists: bool,
    code: sqlstate::SqlState,
    what: &str,
    name: &str,
) -> Result<()> {
    if !if_exists {
        return Err(ErrorReport::new(code, format!("{what} \"{name}\" does not exist")));
    }
    r.notices.push(notice(format!("{what} \"{name}\" does not exist, skipping")));
    Ok(())
}

fn notice(msg: String) -> ErrorReport {
    ErrorReport { severity: sqlstate::Severity::Notice, ..err!(SuccessfulCompletion, "{msg}") }
}

/// A NOTICE with a SQLSTATE, as IF NOT EXISTS gives when it skips
/// (`relation "t" already exists, skipping` is 42P07).
fn notice_code(code: sqlstate::SqlState, msg: String) -> ErrorReport {
    ErrorReport { severity: sqlstate::Severity::Notice, ..ErrorReport::new(code, msg) }
}

/// Locks the catalog version and increments it. Called first by every DDL.
pub async fn bump_version<T: Txn>(txn: &mut T, tenant: TenantId) -> Result<u64> {
    let key = keys::version(tenant);
    let locked = txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
    let cur =
        locked.first().and_then(|l| l.latest.as_deref()).map(decode_u64).transpose()?.unwrap_or(0);
    txn.put(key, (cur + 1).to_be_bytes().to_vec(), LockMode::Locked).map_err(from_kv)?;
    Ok(cur + 1)
}

/// [`bump_version`] for the first object a multi-object DDL statement
/// changes: `bumped` records that it was done.
async fn bump_once<T: Txn>(txn: &mut T, tenant: TenantId, bumped: &mut bool) -> Result<()> {
    if !*bumped {
        bump_version(txn, tenant).await?;
        *bumped = true;
    }
    Ok(())
}

/// Takes table `oid`'s lock exclusively: waits for the transactions writing
/// the table to end and keeps new writers out until this one ends (they hold
/// it shared, see `Session::lock_table_for_write`). The snapshot then moves
/// forward, whatever the isolation level, so an index build or a rewrite
/// into new storage sees every row those writers committed; PostgreSQL's
/// DDL likewise reads the newest rows rather than the transaction snapshot.
async fn lock_table<T: Txn>(txn: &mut T, tenant: TenantId, oid: u32) -> Result<()> {
    txn.lock(std::slice::from_ref(&keys::table(tenant, oid))).await.map_err(from_kv)?;
    txn.refresh_snapshot();
    Ok(())
}

/// Decodes a big-endian u64 counter value.
pub fn decode_u64(b: &[u8]) -> Result<u64> {
    match <[u8; 8]>::try_from(b) {
        Ok(a) => Ok(u64::from_be_bytes(a)),
        Err(_) => bail!(DataCorrupted, "corrupt counter value"),
    }
}

/// Allocates `n` consecutive OIDs (also used as storage ids).
async fn alloc<T: Txn>(txn: &mut T, tenant: TenantId, n: u64) -> Result<u64> {
    let key = keys::next_oid(tenant);
    let locked = txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
    let cur = locked
        .first()
        .and_then(|l| l.latest.as_deref())
        .map(decode_u64)
        .transpose()?
        .unwrap_or(catalog::FIRST_USER_OID as u64);
    txn.put(key, (cur + n).to_be_bytes().to_vec(), LockMode::Locked).map_err(from_kv)?;
    Ok(cur)
}

/// Locks and deletes one catalog entry (a table, sequence, view or role).
/// Locks `key` and writes a catalog entry there.
async fn put_entry<T: Txn>(txn: &mut T, key: kvapi::Key, bytes: Vec<u8>) -> Result<()> {
    txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
    txn.put(key, bytes, LockMode::Locked).map_err(from_kv)
}

/// A catalog entry stored as JSON (a view, role or enum type).
fn json_entry<V: serde::Serialize>(v: &V) -> Vec<u8> {
    serde_json::to_vec(v).expect("catalog entries always serialize")
}

/// Reads a JSON catalog entry (`what` names it in the corruption error).
fn read_json_entry<V: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<V> {
    serde_json::from_slice(bytes).map_err(|e| err!(DataCorrupted, "corrupt {what} entry: {e}"))
}

async fn delete_key<T: Txn>(txn: &mut T, key: kvapi::Key) -> Result<()> {
    txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
    txn.delete(key, LockMode::Locked).map_err(from_kv)
}

async fn write_table<T: Txn>(txn: &mut T, tenant: TenantId, t: &TableDef) -> Result<()> {
    let key = keys::table(tenant, t.oid);
    txn.lock(std::slice::from_ref(&key)).await.map_err(from_kv)?;
    txn.put(key, catalog::encode_table(t), LockMode::Locked).map_err(from_kv)
}

/// Loads the whole catalog as the transaction sees it.
pub async fn load_catalog<T: Txn>(txn: &T, tenant: TenantId) -> Result<Catalog> {
    let version = match txn.get(&keys::version(tenant)).await.map_err(from_kv)? {
        Some(b) => decode_u64(&b)?,
        None => 0,
    };
    let public_dropped = txn.get(&keys::public_dropped(tenant)).await.map_err(from_kv)?.is_some();
    let mut cat = Catalog { version, public_dropped, ..Default::default() };
    if let Some(b) = txn.get(&keys::database(tenant)).await.map_err(from_kv)? {
        cat.database_access = read_json_entry(&b, "database")?;
    }
    for (_, v) in scan_all(txn, keys::schemas(tenant)).await? {
        let s: catalog::SchemaDef = read_json_entry(&v, "schema")?;
        // The built-in public schema's row holds only its owner and ACL.
        if s.oid == catalog::PUBLIC_NAMESPACE_OID && !public_dropped {
            cat.public_access = Some(s.access);
            continue;
        }
        cat.schemas.insert(s.name.clone(), Arc::new(s));
    }
    for (_, v) in scan_all(txn, keys::extensions(tenant)).await? {
        let x: catalog::ExtensionDef = read_json_entry(&v, "extension")?;
        cat.extensions.insert(x.name.clone(), Arc::new(x));
    }
    // Stored expressions are bound with `public` alone on the path (a
    // session lays its own path over this catalog).
    cat.path = cat.resolve_path("public", "");
    let mut domains = Vec::new();
    let mut composites = Vec::new();
    for (_, v) in scan_all(txn, keys::user_types(tenant)).await? {
        let e: catalog::UserTypeDef = read_json_entry(&v, "type")?;
        if e.domain.is_some() {
            domains.push(e);
            continue;
        }
        if e.composite.is_some() {
            composites.push(e);
            continue;
        }
        let ty = catalog::UserTypeKind::Enum(Arc::new(e.to_type()));
        cat.user_types.insert((e.namespace, e.name.clone()), (Arc::new(e), ty));
    }
    // A composite type's attributes may be of enum types and of composite
    // types made before it.
    composites.sort_by_key(|d| d.oid);
    for d in composites {
        let Some(spec) = &d.composite else { continue };
        let row = catalog::UserTypeKind::Composite(spec.row_type(&cat, &d));
        cat.user_types.insert((d.namespace, d.name.clone()), (Arc::new(d), row));
    }
    // A domain over another was made after it: in OID order, each finds
    // the one it is over.
    domains.sort_by_key(|d| d.oid);
    for d in domains {
        let d = Arc::new(d);
        let kind = catalog::UserTypeKind::Domain(Arc::new(catalog::Domain::bind(&cat, d.clone())?));
        cat.user_types.insert((d.namespace, d.name.clone()), (d, kind));
    }
    let mut tables = BTreeMap::new();
    for (_, v) in scan_all(txn, keys::tables(tenant)).await? {
        let mut t = catalog::decode_table(&v)?;
        if !cat.user_types.is_empty() {
            for c in &mut t.columns {
                cat.resolve(&mut c.ty);
            }
        }
        tables.insert(t.qual_name(), t);
    }
    // Each table learns which foreign keys reference it.
    let mut refs: Vec<(u32, catalog::QualName, usize)> = Vec::new();
    for t in tables.values() {
        for (i, fk) in t.foreign_keys.iter().enumerate() {
            refs.push((fk.ref_table, t.qual_name(), i));
        }
    }
    for (parent, child, i) in refs {
        if let Some(p) = tables.values_mut().find(|t| t.oid == parent) {
            p.referenced_by.push((child, i));
        }
    }
    crate::partition::bind(&mut tables)?;
    let mut with_checks = Vec::new();
    for (name, t) in tables {
        let computed = t.columns.iter().any(|c| c.generated);
        if t.checks.is_empty() && t.indexes.iter().all(|i| i.is_plain()) && !computed {
            cat.tables.insert(name, Arc::new(t));
        } else {
            with_checks.push(t);
        }
    }
    for (_, v) in scan_all(txn, keys::sequences(tenant)).await? {
        let s = sequence::decode(&v)?;
        cat.sequences.insert((s.namespace, s.name.clone()), Arc::new(s));
    }
    for (_, v) in scan_all(txn, keys::views(tenant)).await? {
        let view: catalog::ViewDef = read_json_entry(&v, "view")?;
        cat.views.insert((view.namespace, view.name.clone()), Arc::new(view));
    }
    // CHECK expressions are bound once the rest of the catalog is known.
    for mut t in with_checks {
        catalog::bind_checks(&cat, &mut t)?;
        cat.tables.insert(t.qual_name(), Arc::new(t));
    }
    cat.partitions = crate::partition::children(&cat.tables);
    for (_, v) in scan_all(txn, keys::functions(tenant)).await? {
        let f: catalog::FunctionDef = read_json_entry(&v, "function")?;
        cat.functions.entry((f.namespace, f.name.clone())).or_default().push(Arc::new(f));
    }
    for (_, v) in scan_all(txn, keys::default_acls(tenant)).await? {
        cat.default_acls.push(Arc::new(read_json_entry(&v, "default privileges")?));
    }
    for (_, v) in scan_all(txn, keys::roles(tenant)).await? {
        let role: catalog::RoleDef = read_json_entry(&v, "role")?;
        cat.roles.insert(role.name.clone(), role);
    }
    Ok(cat)
}

/// Every live pair in a (small) range, fetched in pages.
async fn scan_all<T: Txn>(txn: &T, range: KeyRange) -> Result<Vec<(kvapi::Key, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut start = range.start.clone();
    loop {
        let r = KeyRange { start, end: range.end.clone() };
        let batch = txn.scan(&r, SCAN_BATCH).await.map_err(from_kv)?;
        let full = batch.len() == SCAN_BATCH;
        let next = batch.last().map(|(k, _)| after(k));
        out.extend(batch);
        match next {
            Some(k) if full => start = k,
            _ => return Ok(out),
        }
    }
}

/// Turns a cleartext password into the stored verifier (the SQL layer does
/// not know the hashing scheme; the server wiring supplies it).
pub type PasswordHasher = fn(&str) -> String;

/// COMMENT ON TABLE / COLUMN (IS NULL removes the comment).
pub async fn comment<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    object_type: &ast::CommentObject,
    name: &ast::ObjectName,
    text: &Option<String>,
) -> Result<DdlResult> {
    if matches!(object_type, ast::CommentObject::Type | ast::CommentObject::Domain) {
        let domain = *object_type == ast::CommentObject::Domain;
        return comment_type(txn, tenant, cat, name, text.clone(), domain).await;
    }
    if *object_type == ast::CommentObject::Schema {
        return schemas::comment(txn, tenant, cat, name, text.clone()).await;
    }
    if *object_type == ast::CommentObject::Extension {
        return extensions::comment(txn, tenant, cat, name, text.clone()).await;
    }
    let Some(names) =
        name.0.iter().map(|p| p.as_ident().map(bind::ident)).collect::<Option<Vec<String>>>()
    else {
        bail!(SyntaxError, "syntax error at or near \"{name}\"");
    };
    let (table, column) = match (object_type, names.as_slice()) {
        (ast::CommentObject::Table | ast::CommentObject::MaterializedView, [.., _])
            if names.len() <= 3 =>
        {
            (name.clone(), None)
        }
        (ast::CommentObject::Column, [.., c]) if (2..=4).contains(&names.len()) => {
            let parts = name.0[..name.0.len() - 1].to_vec();
            (ast::ObjectName(parts), Some(c.as_str()))
        }
        (
            ast::CommentObject::View | ast::CommentObject::Sequence | ast::CommentObject::Index,
            _,
        ) => {
            return comment_relation(txn, tenant, cat, object_type, name, text.clone()).await;
        }
        (ast::CommentObject::Column, [_]) => bail!(SyntaxError, "column name must be qualified"),
        (ast::CommentObject::Table | ast::CommentObject::Column, _) => {
            bail!(SyntaxError, "improper qualified name (too many dotted names): {name}")
        }
        (other, _) => bail!(FeatureNotSupported, "COMMENT ON {other} is not supported yet"),
    };
    let table = bind::obj_name(&table)?;
    let t = cat.must_table(&table)?;
    refuse_temporary(&t, "COMMENT")?;
    match (object_type, t.matview.is_some()) {
        (ast::CommentObject::Table, true) => {
            bail!(WrongObjectType, "\"{}\" is not a table", t.name)
        }
        (ast::CommentObject::MaterializedView, false) => {
            bail!(WrongObjectType, "\"{}\" is not a materialized view", t.name)
        }
        _ => {}
    }
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, t.oid).await?;
    let mut nt = (*t).clone();
    match column {
        None => nt.comment = text.clone(),
        Some(c) => {
            let Some(i) = nt.column_index(c) else {
                bail!(UndefinedColumn, "column \"{c}\" of relation \"{}\" does not exist", t.name);
            };
            nt.columns[i].comment = text.clone();
        }
    }
    write_table(txn, tenant, &nt).await?;
    Ok(DdlResult::tag("COMMENT"))
}

/// COMMENT ON VIEW, SEQUENCE or INDEX.
async fn comment_relation<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    kind: &ast::CommentObject,
    name: &ast::ObjectName,
    text: Option<String>,
) -> Result<DdlResult> {
    let n = bind::obj_name(name)?;
    let rel = cat.relation(&n)?;
    let what = match kind {
        ast::CommentObject::View => "a view",
        ast::CommentObject::Sequence => "a sequence",
        _ => "an index",
    };
    bump_version(txn, tenant).await?;
    match (kind, rel) {
        (ast::CommentObject::View, Some(catalog::Relation::View(v))) => {
            let v = catalog::ViewDef { comment: text, ..(*v).clone() };
            put_entry(txn, keys::view(tenant, v.oid), json_entry(&v)).await?;
        }
        (ast::CommentObject::Sequence, Some(catalog::Relation::Sequence(s))) => {
            let s = SequenceDef { comment: text, ..(*s).clone() };
            sequences::write_sequence(txn, tenant, &s).await?;
        }
        (ast::CommentObject::Index, Some(catalog::Relation::Index(t, Some(i)))) => {
            refuse_temporary(&t, "COMMENT")?;
            lock_table(txn, tenant, t.oid).await?;
            let mut nt = (*t).clone();
            nt.indexes[i].comment = text;
            write_table(txn, tenant, &nt).await?;
        }
        (ast::CommentObject::Index, Some(catalog::Relation::Index(_, None))) => {
            bail!(FeatureNotSupported, "COMMENT ON a primary key's index is not supported yet")
        }
        (_, Some(_)) => bail!(WrongObjectType, "\"{}\" is not {what}", n.name),
        (_, None) => bail!(UndefinedTable, "relation \"{n}\" does not exist"),
    }
    Ok(DdlResult::tag("COMMENT"))
}

/// A generated name: `base`, or `base` numbered 1, 2, ... until `taken` is
/// false for it, as PostgreSQL chooses constraint and index names.
fn free_name(base: String, taken: impl Fn(&str) -> bool) -> String {
    let mut n = base.clone();
    let mut k = 0;
    while taken(&n) {
        k += 1;
        n = format!("{base}{k}");
    }
    n
}

/// 0A000 for DDL that would write a temporary table's definition into the
/// shared catalog.
fn refuse_temporary(t: &TableDef, what: &str) -> Result<()> {
    if t.temporary {
        bail!(FeatureNotSupported, "{what} on a temporary table is not supported yet");
    }
    Ok(())
}

/// Where a table being created goes: (namespace, name). `pg_temp.x`
/// makes it temporary, as in PostgreSQL.
pub(crate) fn new_table_name(
    cat: &Catalog,
    name: &ast::ObjectName,
    temporary: bool,
) -> Result<(u32, String, bool)> {
    let n = bind::obj_name(name)?;
    if temporary {
        if n.schema.is_some()
            && cat.namespace_oid(n.schema.as_deref().unwrap_or_default())
                != Some(catalog::TEMP_NAMESPACE_OID)
        {
            bail!(
                InvalidTableDefinition,
                "cannot create temporary relation in non-temporary schema"
            );
        }
        return Ok((catalog::TEMP_NAMESPACE_OID, n.name, true));
    }
    if n.schema
        .as_deref()
        .is_some_and(|s| cat.namespace_oid(s) == Some(catalog::TEMP_NAMESPACE_OID))
    {
        return Ok((catalog::TEMP_NAMESPACE_OID, n.name, true));
    }
    let (ns, name) = new_name(cat, name)?;
    Ok((ns, name, false))
}

/// Where a new object named `name` goes: (namespace, name).
fn new_name(cat: &Catalog, name: &ast::ObjectName) -> Result<(u32, String)> {
    let n = bind::obj_name(name)?;
    Ok((cat.creation_namespace(&n)?, n.name))
}

/// CREATE INDEX's keys: each a column, or an expression (stored as text)
/// bound over the table's row; with the name part each gives a generated
/// index name (the column's, the function's, else `expr`).
/// CREATE INDEX's keys: (column positions, [`catalog::EXPRESSION_KEY`]
/// for an expression; the expressions' stored text; the names the index's
/// own name is made of; each key's type).
type IndexKeys = (Vec<usize>, Vec<String>, Vec<String>, Vec<DataType>);

fn index_keys(
    cat: &Catalog,
    t: &TableDef,
    cols: &[ast::IndexColumn],
    scope: &Scope,
) -> Result<IndexKeys> {
    let (mut columns, mut exprs, mut names, mut types) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in cols {
        let mut e = &c.column.expr;
        while let ast::Expr::Nested(inner) = e {
            e = inner;
        }
        if let ast::Expr::Identifier(i) = e {
            let n = bind::ident(i);
            let col = column_named(t, &n)?;
            columns.push(col);
            names.push(n);
            types.push(t.columns[col].ty.to_type());
            continue;
        }
        types.push(catalog::index_expr(cat, e, scope, false)?.1);
        columns.push(catalog::EXPRESSION_KEY);
        exprs.push(crate::deparse::stored_text(cat, e));
        let name = match crate::select::derive_name(e) {
            n if n == "?column?" => "expr".to_string(),
            n => n,
        };
        names.push(name);
    }
    Ok((columns, exprs, names, types))
}

/// The position of `t`'s column `n` (42703 if there is none), as CREATE
/// INDEX names a key or INCLUDE column.
fn column_named(t: &TableDef, n: &str) -> Result<usize> {
    t.column_index(n).ok_or_else(|| err!(UndefinedColumn, "column \"{n}\" does not exist"))
}

/// CREATE INDEX's ASC/DESC and NULLS FIRST/LAST per key, as
/// pg_index.indoption bits (empty when all are the defaults).
fn index_options(cols: &[ast::IndexColumn]) -> Vec<i16> {
    let options: Vec<i16> = cols
        .iter()
        .map(|c| {
            let desc = matches!(c.column.options.sort, Some(ast::OrderBySort::Desc));
            let nulls_first = c.column.options.nulls_first.unwrap_or(desc);
            i16::from(desc) | (i16::from(nulls_first) << 1)
        })
        .collect();
    if options.iter().all(|&o| o == 0) {
        return Vec::new();
    }
    options
}

fn index_columns(t: &TableDef, cols: &[ast::IndexColumn]) -> Result<Vec<usize>> {
    cols.iter()
        .map(|c| match &c.column.expr {
            ast::Expr::Identifier(i) => {
                let n = bind::ident(i);
                t.column_index(&n)
                    .ok_or_else(|| err!(UndefinedColumn, "column \"{n}\" does not exist"))
            }
            other => bail!(FeatureNotSupported, "index expressions are not supported yet: {other}"),
        })
        .collect()
}

/// The definition CREATE TABLE ... AS (and SELECT ... INTO) creates: `ct`
/// without its query, with a column per result column of it. A column of
/// unknown type (a bare string literal) becomes text, as in PostgreSQL;
/// pseudo-types cannot be stored.
pub fn table_as(ct: &ast::CreateTable, cols: &[crate::plan::Column]) -> Result<ast::CreateTable> {
    let mut def = ct.clone();
    def.query = None;
    def.columns = Vec::with_capacity(cols.len());
    for c in cols {
        let ty = match &c.ty {
            DataType::Unknown => DataType::Text,
            t @ (DataType::Void | DataType::Record(_)) => {
                bail!(InvalidTableDefinition, "column \"{}\" has pseudo-type {t}", c.name)
            }
            t => t.clone(),
        };
        let data_type = crate::parse::type_text(&ty.to_string())
            .map_err(|e| err!(FeatureNotSupported, "a column of type {ty}: {e}"))?;
        def.columns.push(ast::ColumnDef {
            name: ast::Ident::with_quote('"', c.name.clone()),
            data_type,
            options: vec![],
        });
    }
    Ok(def)
}

/// CREATE TABLE; a LIKE clause is expanded into the definitions it copies
/// first (see like.rs), and the source's other indexes are created after.
pub async fn create_table<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    ct: &ast::CreateTable,
    owner: &str,
) -> Result<DdlResult> {
    let Some(like) = like::expand(cat, ct)? else {
        return create_table_from(txn, tenant, cat, ct, owner, &[]).await;
    };
    let mut r = create_table_from(txn, tenant, cat, &like.create, owner, &like.comments).await?;
    // Nothing more when IF NOT EXISTS found the table.
    if like.indexes.is_empty() || r.fresh.is_empty() {
        return Ok(r);
    }
    if r.temp_table.is_some() {
        bail!(FeatureNotSupported, "indexes on temporary tables are not supported yet");
    }
    for ci in &like.indexes {
        let cat = load_catalog(txn, tenant).await?;
        r.fresh.extend(create_index(txn, tenant, &cat, ci).await?.fresh);
    }
    Ok(r)
}

async fn create_table_from<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    ct: &ast::CreateTable,
    owner: &str,
    comments: &[(String, String)],
) -> Result<DdlResult> {
    let (ns, name, temporary) = new_table_name(cat, &ct.name, ct.temporary)?;
    if cat.relation_exists(ns, &name) {
        if ct.if_not_exists {
            let mut r = DdlResult::tag("CREATE TABLE");
            r.notices.push(notice_code(
                sqlstate::SqlState::DuplicateTable,
                format!("relation \"{name}\" already exists, skipping"),
            ));
            return Ok(r);
        }
        bail!(DuplicateTable, "relation \"{name}\" already exists");
    }
    if ct.query.is_some() {
        bail!(InternalError, "CREATE TABLE AS reached create_table with its query");
    }
    if ct.partition_of.is_some() {
        return partitions::create_partition(txn, tenant, cat, ct, (ns, name), owner).await;
    }
    // sqlparser reads INHERITS; Strata has no inheritance, so it is
    // refused rather than ignored.
    if ct.inherits.is_some() {
        bail!(FeatureNotSupported, "table inheritance (INHERITS) is not supported yet");
    }
    let on_commit = match &ct.on_commit {
        None | Some(ast::OnCommit::PreserveRows) => None,
        Some(ast::OnCommit::DeleteRows) => Some(catalog::OnCommit::DeleteRows),
        Some(ast::OnCommit::Drop) => Some(catalog::OnCommit::Drop),
    };
    if !temporary {
        if ct.on_commit.is_some() {
            bail!(InvalidTableDefinition, "ON COMMIT can only be used on temporary tables");
        }
        bump_version(txn, tenant).await?;
    }
    let mut t = TableDef::new(name.clone());
    t.namespace = ns;
    t.temporary = temporary;
    t.on_commit = on_commit;
    t.access = crate::acl::Ownership::created(cat, owner, crate::acl::ObjKind::Table, ns);
    // (name, columns, deferral)
    let mut uniques: Vec<(Option<String>, Vec<usize>, Option<bool>)> = Vec::new();
    let mut fks: Vec<foreign_keys::PendingFk> = Vec::new();
    // CHECK constraints: (name if given, condition, column it was declared on).
    let mut checks: Vec<(Option<String>, ast::Expr, Option<String>)> = Vec::new();
    // Columns that own a sequence (SERIAL, IDENTITY), with its options.
    let mut owned: Vec<(usize, Vec<ast::SequenceOptions>)> = Vec::new();
    let mut seen = HashSet::new();
    for (i, c) in ct.columns.iter().enumerate() {
        let cname = bind::ident(&c.name);
        if !seen.insert(cname.clone()) {
            bail!(DuplicateColumn, "column \"{cname}\" specified more than once");
        }
        let serial = serial_type(&c.data_type);
        let def = match &serial {
            Some(t) => TypeDef::from_type(t),
            None => bind::column_type(cat, &c.data_type)?,
        };
        let ty = def.to_type();
        let mut col = ColumnDef::new(cname, def);
        if serial.is_some() {
            owned.push((i, vec![]));
        }
        for opt in &c.options {
            match &opt.option {
                ast::ColumnOption::NotNull => col.nullable = false,
                ast::ColumnOption::Null => {}
                ast::ColumnOption::Default(_) if serial.is_some() => {
                    return Err(multiple_defaults(&col.name, &name))
                }
                ast::ColumnOption::Default(_) if col.generated => {
                    return Err(both_default_and_generated(&col.name, &name))
                }
                ast::ColumnOption::Default(e) => {
                    col.default = crate::deparse::keeps_default(e, &col.ty)
                        .then(|| crate::deparse::stored_default(cat, e, &ty))
                }
                ast::ColumnOption::Generated { generation_expr: Some(e), .. } => {
                    generated_column(cat, &mut col, e, &name)?
                }
                ast::ColumnOption::Generated {
                    generated_as,
                    sequence_options,
                    generation_expr: None,
                    ..
                } => {
                    col.identity = Some(identity_kind(generated_as)?);
                    owned.push((i, sequence_options.clone().unwrap_or_default()));
                }
                ast::ColumnOption::PrimaryKey(pk) => {
                    if !t.primary_key.is_empty() {
                        bail!(
                            InvalidTableDefinition,
                            "multiple primary keys for table \"{name}\" are not allowed"
                        );
                    }
                    t.primary_key = vec![i];
                    t.pkey_deferral = deferral(&pk.characteristics)?;
                }
                ast::ColumnOption::Unique(u) => {
                    uniques.push((None, vec![i], deferral(&u.characteristics)?))
                }
                ast::ColumnOption::ForeignKey(fk) => {
                    fks.push((opt.name.as_ref().map(bind::ident), vec![i], fk.clone()))
                }
                ast::ColumnOption::Check(c) => checks.push((
                    c.name.as_ref().map(bind::ident),
                    (*c.expr).clone(),
                    Some(col.name.clone()),
                )),
                ast::ColumnOption::Collation(c) => col.collation = bind::column_collation(c, &ty)?,
                other => bail!(FeatureNotSupported, "column option not supported yet: {other}"),
            }
        }
        t.columns.push(col);
    }
    for con in &ct.constraints {
        match con {
            ast::TableConstraint::PrimaryKey(pk) => {
                if !t.primary_key.is_empty() {
                    bail!(
                        InvalidTableDefinition,
                        "multiple primary keys for table \"{name}\" are not allowed"
                    );
                }
                t.primary_key = index_columns(&t, &pk.columns)?;
                t.pkey_name = pk.name.as_ref().map(bind::ident);
                t.pkey_deferral = deferral(&pk.characteristics)?;
            }
            ast::TableConstraint::Unique(u) => uniques.push((
                u.name.as_ref().map(bind::ident),
                index_columns(&t, &u.columns)?,
                deferral(&u.characteristics)?,
            )),
            ast::TableConstraint::Check(c) => {
                checks.push((c.name.as_ref().map(bind::ident), (*c.expr).clone(), None))
            }
            ast::TableConstraint::ForeignKey(fk) => fks.push((
                fk.name.as_ref().map(bind::ident),
                foreign_keys::columns(&t, fk)?,
                fk.clone(),
            )),
            other => bail!(FeatureNotSupported, "table constraint not supported yet: {other}"),
        }
    }
    for &c in &t.primary_key {
        t.columns[c].nullable = false;
    }
    if let Some(by) = &ct.partition_by {
        t.partition_key = Some(partitions::key(&t, by)?);
        if !t.primary_key.is_empty() {
            partitions::unique_covers_key(&t, "PRIMARY KEY", &t.primary_key)?;
        }
        for (_, cols, _) in &uniques {
            partitions::unique_covers_key(&t, "UNIQUE", cols)?;
        }
    }
    let n = 3 + uniques.len() as u64 + fks.len() as u64;
    let base = alloc(txn, tenant, n).await?;
    t.oid = base as u32;
    t.storage = base + 1;
    if !t.primary_key.is_empty() {
        t.pkey_oid = (base + 2) as u32;
        t.pkey_name.get_or_insert_with(|| format!("{name}_pkey"));
    }
    let mut fresh = vec![t.storage];
    for (i, (uname, cols, deferral)) in uniques.into_iter().enumerate() {
        let id = base + 3 + i as u64;
        let colnames: Vec<&str> = cols.iter().map(|&c| t.columns[c].name.as_str()).collect();
        let iname = uname.unwrap_or_else(|| format!("{name}_{}_key", colnames.join("_")));
        t.indexes.push(IndexDef {
            constraint: true,
            deferral,
            ..IndexDef::new(id, iname, cols, true)
        });
        fresh.push(id);
    }
    if t.temporary && (!fks.is_empty() || !owned.is_empty()) {
        // Both would put session-local objects into the shared catalog.
        bail!(
            FeatureNotSupported,
            "foreign keys, SERIAL and IDENTITY columns in temporary tables are not supported yet"
        );
    }
    let first_fk = base + 3 + t.indexes.len() as u64;
    for (j, pending) in fks.iter().enumerate() {
        let def = foreign_keys::define(txn, tenant, cat, &t, pending, (first_fk + j as u64) as u32)
            .await?;
        t.foreign_keys.push(def);
    }
    let mut with_seqs = cat.clone();
    for (i, options) in owned {
        let seq = owned_sequence(txn, tenant, &with_seqs, &mut t, i, (&options, None)).await?;
        with_seqs.sequences.insert((seq.namespace, seq.name.clone()), Arc::new(seq));
    }
    let cat = &with_seqs;
    add_checks(cat, &mut t, checks)?;
    // Validate DEFAULT expressions now, as PostgreSQL does at CREATE time.
    for c in &t.columns {
        column_default(cat, c)?;
    }
    for (column, comment) in comments {
        if let Some(c) = t.columns.iter_mut().find(|c| c.name == *column) {
            c.comment = Some(comment.clone());
        }
    }
    if t.temporary {
        return Ok(DdlResult {
            tag: "CREATE TABLE".into(),
            fresh,
            temp_table: Some(t),
            ..Default::default()
        });
    }
    write_table(txn, tenant, &t).await?;
    Ok(DdlResult { tag: "CREATE TABLE".into(), fresh, ..Default::default() })
}

/// Validates and names CHECK constraints (PostgreSQL's rule: `<table>_<col>_check`
/// when the condition reads one column, else `<table>_check`, numbered if
/// taken) and stores them on `t` sorted by name.
fn add_checks(
    cat: &Catalog,
    t: &mut TableDef,
    checks: Vec<(Option<String>, ast::Expr, Option<String>)>,
) -> Result<()> {
    let scope = crate::select::table_scope(t, &t.name, &None);
    for (name, e, declared_on) in checks {
        let bound = catalog::check_expr(cat, &e, &scope)?;
        let name = match name {
            Some(n) => n,
            None => {
                let cols = bound.columns_read();
                let base = match (cols.as_slice(), declared_on) {
                    ([c], _) => format!("{}_{}_check", t.name, t.columns[*c].name),
                    (_, Some(col)) if cols.is_empty() => format!("{}_{col}_check", t.name),
                    _ => format!("{}_check", t.name),
                };
                free_name(base, |n| t.checks.iter().any(|c| c.name == n))
            }
        };
        if t.checks.iter().any(|c| c.name == name) {
            bail!(
                DuplicateObject,
                "constraint \"{name}\" for relation \"{}\" already exists",
                t.name
            );
        }
        let expr = crate::deparse::stored_text(cat, &e);
        t.checks.push(CheckDef { name, expr, not_valid: false });
    }
    t.checks.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(())
}

/// Binds the DEFAULT expression `text` of column `column` of type `ty`
/// (PostgreSQL's 42804 names the column when the type does not fit).
pub fn default_expr(
    cat: &Catalog,
    column: &str,
    text: &str,
    ty: &DataType,
) -> Result<crate::expr::Expr> {
    let e = crate::parse::expr_text(text)
        .map_err(|e| err!(SyntaxError, "invalid DEFAULT expression: {e}"))?;
    let mut b = Binder::new(cat, vec![]);
    b.stored = true;
    if bind::contains_aggregate(&e) {
        bail!(GroupingError, "aggregate functions are not allowed in DEFAULT expressions");
    }
    let subquery = ast::visit_expressions(&e, |x| match x {
        ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
            std::ops::ControlFlow::Break(())
        }
        _ => std::ops::ControlFlow::Continue(()),
    });
    if subquery.is_break() {
        bail!(FeatureNotSupported, "cannot use subquery in DEFAULT expression");
    }
    b.assign_with(&e, &Scope::default(), ty, |t| {
        err!(
            DatatypeMismatch,
            "column \"{column}\" is of type {ty} but default expression is of type {t}"
        )
        .with_hint("You will need to rewrite or cast the expression.")
    })
    .map_err(|e| {
        // There are no columns to read.
        let column = e.code == sqlstate::SqlState::UndefinedColumn
            || e.message.starts_with("missing FROM-clause entry");
        match column {
            true => err!(FeatureNotSupported, "cannot use column reference in DEFAULT expression"),
            false => e,
        }
    })
}

/// Makes `col` (of table `table`) generated from `e` (GENERATED ALWAYS AS
/// (e) STORED); the expression is checked once the table's columns are
/// known ([`catalog::bind_checks`]).
fn generated_column(cat: &Catalog, col: &mut ColumnDef, e: &ast::Expr, table: &str) -> Result<()> {
    if col.default.is_some() {
        return Err(both_default_and_generated(&col.name, table));
    }
    if col.identity.is_some() {
        bail!(
            SyntaxError,
            "both identity and generation expression specified for column \"{}\" of table \"{table}\"",
            col.name
        );
    }
    col.generated = true;
    col.default = Some(crate::deparse::stored_text(cat, e));
    Ok(())
}

/// An IDENTITY column's kind: `a` (ALWAYS) or `d` (BY DEFAULT).
fn identity_kind(g: &ast::GeneratedAs) -> Result<char> {
    Ok(match g {
        ast::GeneratedAs::Always => 'a',
        ast::GeneratedAs::ByDefault => 'd',
        ast::GeneratedAs::ExpStored => {
            bail!(FeatureNotSupported, "generated columns are not supported yet")
        }
    })
}

fn multiple_defaults(column: &str, table: &str) -> ErrorReport {
    err!(
        SyntaxError,
        "multiple default values specified for column \"{column}\" of table \"{table}\""
    )
}

fn both_default_and_generated(column: &str, table: &str) -> ErrorReport {
    err!(
        SyntaxError,
        "both default and generation expression specified for column \"{column}\" of table \"{table}\""
    )
}

/// PostgreSQL's 2BP01 for dropping `what` (`column x of table t`) while
/// other objects depend on it: `uses` are the DETAIL lines (`view v
/// depends on ...`).
pub(crate) fn still_depended_on(what: &str, uses: &[String]) -> ErrorReport {
    err!(DependentObjectsStillExist, "cannot drop {what} because other objects depend on it")
        .with_detail(uses.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
}

/// Before column `c` of `cur` is dropped: the generated columns that read
/// it, which only CASCADE drops too (2BP01 otherwise, as in PostgreSQL).
async fn drop_generated_users<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cur: &mut TableDef,
    c: usize,
    cascade: bool,
    notices: &mut Vec<ErrorReport>,
) -> Result<Vec<u64>> {
    if !cur.columns.iter().any(|g| g.generated) {
        return Ok(Vec::new());
    }
    catalog::bind_checks(cat, cur)?;
    let users: Vec<String> =
        alter::generated_users(cur, c).iter().map(|&g| cur.columns[g].name.clone()).collect();
    let (n, tname) = (cur.columns[c].name.clone(), cur.name.clone());
    let mut fresh = Vec::new();
    for g in users {
        if !cascade {
            let what = format!("column {n} of table {tname}");
            let uses = [format!("column {g} of table {tname} depends on {what}")];
            return Err(still_depended_on(&what, &uses));
        }
        notices.push(notice(format!("drop cascades to column {g} of table {tname}")));
        let ident = ast::Ident::with_quote('"', g);
        fresh.extend(alter::drop_column(txn, tenant, cat, cur, &ident, false, notices).await?);
    }
    Ok(fresh)
}

/// Column `col`'s DEFAULT bound, if it has one.
/// (A generated column has none: its value comes from the row.)
pub fn column_default(cat: &Catalog, col: &ColumnDef) -> Result<Option<crate::expr::Expr>> {
    // A column of a domain without a default of its own takes the domain's.
    let domain = || col.ty.domain.as_ref().filter(|_| col.identity.is_none())?.default();
    match col.default.as_deref().or_else(domain) {
        Some(text) if !col.generated => {
            default_expr(cat, &col.name, text, &col.ty.to_type()).map(Some)
        }
        _ => Ok(None),
    }
}

/// DROP TABLE, INDEX, VIEW, SEQUENCE or TYPE; with CASCADE, the views that
/// read a dropped relation go too (one notice names all CASCADE took).
pub async fn drop<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    kind: &ast::ObjectType,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> Result<DdlResult> {
    let mut d = Dropping::new(cascade);
    let mut r = match kind {
        ast::ObjectType::View => drop_views(txn, tenant, cat, names, if_exists, &mut d).await?,
        _ => drop_relations(txn, tenant, cat, kind, names, if_exists, &mut d).await?,
    };
    r.notices.extend(view_deps::cascade_notice(&d.cascaded));
    Ok(r)
}

/// How a DROP goes on: with CASCADE or not, the views it has dropped so
/// far, what CASCADE took along (for the notice), and the views' traces
/// (computed once, at the first need).
struct Dropping {
    cascade: bool,
    views: HashSet<u32>,
    cascaded: Vec<String>,
    traces: Option<view_deps::ViewTraces>,
}

impl Dropping {
    fn new(cascade: bool) -> Dropping {
        Dropping { cascade, views: HashSet::new(), cascaded: Vec::new(), traces: None }
    }
}

/// DROP TABLE, INDEX, SEQUENCE or TYPE.
async fn drop_relations<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    kind: &ast::ObjectType,
    names: &[ast::ObjectName],
    if_exists: bool,
    d: &mut Dropping,
) -> Result<DdlResult> {
    let cascade = d.cascade;
    let (tag, what) = match kind {
        ast::ObjectType::Sequence => {
            return drop_sequences(txn, tenant, cat, names, if_exists, (cascade, &HashSet::new()))
                .await
        }
        ast::ObjectType::Type => return drop_types(txn, tenant, cat, names, if_exists).await,
        ast::ObjectType::Table => ("DROP TABLE", "table"),
        ast::ObjectType::MaterializedView => ("DROP MATERIALIZED VIEW", "materialized view"),
        ast::ObjectType::Index => ("DROP INDEX", "index"),
        other => bail!(FeatureNotSupported, "DROP {other} is not supported yet"),
    };
    let mut r = DdlResult::tag(tag);
    let mut bumped = false;
    let mut found = Vec::new();
    for n in names {
        let name = bind::obj_name(n)?;
        if let Some(s) = name.schema.as_deref().filter(|s| cat.namespace_oid(s).is_none()) {
            let code = sqlstate::SqlState::InvalidSchemaName;
            skip_missing(&mut r, if_exists, code, "schema", s)?;
            continue;
        }
        let found_rel = cat.relation(&name)?;
        if *kind == ast::ObjectType::Table && found_rel.is_none() {
            if let Some((d, catalog::UserTypeKind::Composite(_))) = cat.user_type_named(&name)? {
                return Err(err!(WrongObjectType, "\"{}\" is not a table", d.name)
                    .with_hint("Use DROP TYPE to remove a type."));
            }
        }
        let rel = match (kind, found_rel) {
            (ast::ObjectType::Table, Some(catalog::Relation::Table(t))) if t.matview.is_some() => {
                return Err(err!(WrongObjectType, "\"{}\" is not a table", t.name)
                    .with_hint("Use DROP MATERIALIZED VIEW to remove a materialized view."));
            }
            (ast::ObjectType::MaterializedView, Some(catalog::Relation::Table(t)))
                if t.matview.is_none() =>
            {
                return Err(err!(WrongObjectType, "\"{}\" is not a materialized view", t.name)
                    .with_hint("Use DROP TABLE to remove a table."));
            }
            (
                ast::ObjectType::Table | ast::ObjectType::MaterializedView,
                Some(catalog::Relation::Table(t)),
            ) => Some((t, None)),
            (ast::ObjectType::Index, Some(catalog::Relation::Index(t, i))) => Some((t, Some(i))),
            _ => None,
        };
        // A partitioned table's partitions go with it.
        let parts = match &rel {
            Some((t, None)) => crate::partition::descendants(&cat.partitions, t),
            _ => Vec::new(),
        };
        found.push((name, rel));
        for p in parts {
            if !found
                .iter()
                .any(|(_, r)| r.as_ref().is_some_and(|(t, i)| i.is_none() && t.oid == p.oid))
            {
                let name = catalog::ObjName {
                    schema: cat.namespace_name(p.namespace).map(str::to_string),
                    name: p.name.clone(),
                };
                found.push((name, Some((p, None))));
            }
        }
    }
    let going: Vec<catalog::QualName> = found
        .iter()
        .filter_map(|(_, r)| r.as_ref().filter(|(_, i)| i.is_none()).map(|(t, _)| t.qual_name()))
        .collect();
    // Constraints of surviving tables that DROP ... CASCADE removes, by table.
    let mut unhooked: BTreeMap<catalog::QualName, TableDef> = BTreeMap::new();
    for (name, rel) in found {
        let Some((t, idx)) = rel else {
            let code = match what {
                "index" => sqlstate::SqlState::UndefinedObject,
                _ => sqlstate::SqlState::UndefinedTable,
            };
            skip_missing(&mut r, if_exists, code, what, &name.to_string())?;
            continue;
        };
        let idx = match idx {
            None => None,
            Some(None) => {
                let pk = t.pkey_name.clone().unwrap_or_default();
                return Err(err!(
                    DependentObjectsStillExist,
                    "cannot drop index {pk} because constraint {pk} on table {} requires it",
                    t.name
                )
                .with_hint(format!("You can drop constraint {pk} on table {} instead.", t.name)));
            }
            Some(Some(i)) => Some(i),
        };
        if t.temporary {
            // Only the session knows it: no catalog change, just the rows.
            if idx.is_some() {
                bail!(FeatureNotSupported, "DROP INDEX on a temporary table is not supported yet");
            }
            purge_storage(txn, tenant, &t)?;
            r.dropped_temp.push(t.name.clone());
            continue;
        }
        bump_once(txn, tenant, &mut bumped).await?;
        lock_table(txn, tenant, t.oid).await?;
        match idx {
            None => {
                let refs = foreign_keys::references_from_outside(cat, &t, &going)?;
                let kind = if t.matview.is_some() { "materialized view" } else { "table" };
                let what = format!("{kind} {}", t.name);
                if !refs.is_empty() && !cascade {
                    // The views that read the table are listed first.
                    let mut e = foreign_keys::still_referenced(&t, &refs);
                    let views =
                        view_deps::drop_dependents(txn, tenant, cat, (t.oid, None, &what), d).await;
                    if let Err(v) = views {
                        let (Some(vd), Some(fd)) = (&v.detail, &e.detail) else { return Err(v) };
                        e.detail = Some(format!("{vd}\n{fd}"));
                    }
                    return Err(e);
                }
                view_deps::drop_dependents(txn, tenant, cat, (t.oid, None, &what), d).await?;
                drop_matview_users(txn, tenant, cat, &t, &what, d).await?;
                for (child, i) in refs {
                    let fk = &child.foreign_keys[i];
                    if fk.parent.is_none() {
                        d.cascaded.push(format!("constraint {} on table {}", fk.name, child.name));
                    }
                    let c = unhooked.entry(child.qual_name()).or_insert_with(|| (*child).clone());
                    c.foreign_keys.retain(|f| f.name != fk.name);
                }
                delete_key(txn, keys::table(tenant, t.oid)).await?;
                purge_storage(txn, tenant, &t)?;
                // Sequences owned by the table's columns go with it.
                for s in cat.sequences.values() {
                    if s.owned_by.as_ref().is_some_and(|(o, _)| *o == t.oid) {
                        delete_sequence(txn, tenant, s.oid).await?;
                    }
                }
            }
            Some(i) => {
                let iname = &t.indexes[i].name;
                if t.indexes[i].constraint {
                    return Err(err!(
                        DependentObjectsStillExist,
                        "cannot drop index {iname} because constraint {iname} on table {} requires it",
                        t.name
                    )
                    .with_hint(format!(
                        "You can drop constraint {iname} on table {} instead.",
                        t.name
                    )));
                }
                if let Some((child, fk)) = foreign_keys::index_user(cat, &t, i)? {
                    let uses =
                        [format!("constraint {fk} on table {child} depends on index {iname}")];
                    return Err(still_depended_on(&format!("index {iname}"), &uses));
                }
                partitions::refuse_attached_drop(cat, &t, &t.indexes[i])?;
                let mut nt = (*t).clone();
                let removed = nt.indexes.remove(i);
                txn.delete_range_after_commit(keys::storage(tenant, removed.storage))
                    .map_err(from_kv)?;
                write_table(txn, tenant, &nt).await?;
                partitions::drop_attached(txn, tenant, cat, &t, removed.oid).await?;
            }
        }
    }
    for c in unhooked.values() {
        lock_table(txn, tenant, c.oid).await?;
        write_table(txn, tenant, c).await?;
    }
    Ok(r)
}

/// Refuses (without CASCADE) or carries out dropping the materialized
/// views whose query reads `t`, which `what` names (views on those go
/// with them).
async fn drop_matview_users<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    t: &TableDef,
    what: &str,
    d: &mut Dropping,
) -> Result<()> {
    let reads = |query: &str| {
        let Ok(q) = crate::parse::query_text(query) else { return false };
        let mut found = false;
        let _ = ast::visit_relations(&q, |name| {
            let rel = bind::obj_name(name).ok().and_then(|n| cat.relation(&n).ok().flatten());
            found |= rel.is_some_and(|r| r.oid() == t.oid);
            std::ops::ControlFlow::<()>::Continue(())
        });
        found
    };
    let users: Vec<Arc<TableDef>> = cat
        .tables
        .values()
        .filter(|m| m.oid != t.oid && m.matview.as_ref().is_some_and(|mv| reads(&mv.query)))
        .cloned()
        .collect();
    if users.is_empty() {
        return Ok(());
    }
    if !d.cascade {
        let uses: Vec<String> = users
            .iter()
            .map(|m| format!("materialized view {} depends on {what}", m.name))
            .collect();
        return Err(still_depended_on(what, &uses));
    }
    for m in users {
        let name = format!("materialized view {}", m.name);
        d.cascaded.push(name.clone());
        view_deps::drop_dependents(txn, tenant, cat, (m.oid, None, &name), d).await?;
        lock_table(txn, tenant, m.oid).await?;
        delete_key(txn, keys::table(tenant, m.oid)).await?;
        purge_storage(txn, tenant, &m)?;
    }
    Ok(())
}

/// TRUNCATE's tables: those named, and (CASCADE) those referencing them;
/// `user` needs the TRUNCATE privilege on the tables CASCADE adds (the
/// named ones were checked by `authorize`). Its notices go in the result
/// [`truncate`] takes.
pub fn truncated(
    cat: &Catalog,
    targets: &[ast::TruncateTableTarget],
    cascade: bool,
    user: &str,
) -> Result<(Vec<Arc<TableDef>>, DdlResult)> {
    let mut tables = Vec::new();
    for n in targets {
        let t = cat.must_table(&bind::obj_name(&n.name)?)?;
        refuse_temporary(&t, "TRUNCATE")?;
        if t.matview.is_some() {
            bail!(WrongObjectType, "\"{}\" is not a table", t.name);
        }
        if n.only && t.is_partitioned() {
            return Err(err!(WrongObjectType, "cannot truncate only a partitioned table")
                .with_hint(
                "Do not specify the ONLY keyword, or use TRUNCATE ONLY on the partitions directly.",
            ));
        }
        // A partitioned table's rows are its partitions'.
        let parts = crate::partition::descendants(&cat.partitions, &t);
        tables.push(t);
        for p in parts {
            if !tables.iter().any(|x| x.oid == p.oid) {
                tables.push(p);
            }
        }
    }
    let mut r = DdlResult::tag("TRUNCATE TABLE");
    // Tables referencing a truncated one are truncated too (CASCADE) or
    // make the statement fail.
    let mut i = 0;
    while i < tables.len() {
        let going: Vec<catalog::QualName> = tables.iter().map(|t| t.qual_name()).collect();
        for (child, _) in foreign_keys::references_from_outside(cat, &tables[i], &going)? {
            if !cascade {
                return Err(foreign_keys::truncate_referenced(&tables[i], &child));
            }
            if !tables.iter().any(|t| t.oid == child.oid) {
                r.notices.push(notice(format!("truncate cascades to table \"{}\"", child.name)));
                let kind = crate::acl::ObjKind::Table;
                if !child.access.allows(cat, kind, user, crate::acl::TRUNCATE, false) {
                    bail!(InsufficientPrivilege, "permission denied for table {}", child.name);
                }
                tables.push(child);
            }
        }
        i += 1;
    }
    Ok((tables, r))
}

/// TRUNCATE: switches each of the [`truncated`] tables (and its indexes)
/// to fresh, empty storage.
pub async fn truncate<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    (tables, mut r): (Vec<Arc<TableDef>>, DdlResult),
) -> Result<DdlResult> {
    bump_version(txn, tenant).await?;
    for t in &tables {
        lock_table(txn, tenant, t.oid).await?;
    }
    for t in tables {
        let mut nt = (*t).clone();
        swap_storage(txn, tenant, &mut nt, &mut r).await?;
        write_table(txn, tenant, &nt).await?;
    }
    Ok(r)
}

/// Moves `t` and its indexes to fresh, empty storage (the old is deleted
/// once no snapshot can see it), recording the new ids in `r`.
/// Deletes table `t`'s rows and index entries when the transaction commits.
fn purge_storage<T: Txn>(txn: &mut T, tenant: TenantId, t: &TableDef) -> Result<()> {
    txn.delete_range_after_commit(keys::storage(tenant, t.storage)).map_err(from_kv)?;
    for i in &t.indexes {
        txn.delete_range_after_commit(keys::storage(tenant, i.storage)).map_err(from_kv)?;
    }
    Ok(())
}

async fn swap_storage<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    t: &mut TableDef,
    r: &mut DdlResult,
) -> Result<()> {
    purge_storage(txn, tenant, t)?;
    let (_, fresh) = fresh_storage(txn, tenant, t, 0).await?;
    r.fresh.extend(fresh);
    Ok(())
}

/// Makes table `t` a materialized view of `query` (stored text): the last
/// step of CREATE MATERIALIZED VIEW, which made and filled it as a table.
pub async fn mark_matview<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    t: &TableDef,
    query: String,
    populated: bool,
) -> Result<DdlResult> {
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, t.oid).await?;
    let def = TableDef { matview: Some(catalog::MatViewDef { query, populated }), ..t.clone() };
    write_table(txn, tenant, &def).await?;
    Ok(DdlResult::tag("CREATE MATERIALIZED VIEW"))
}

/// REFRESH MATERIALIZED VIEW's storage step: empties the view (fresh
/// storage, as TRUNCATE) and records whether it will hold rows; the
/// caller then fills it from its query.
pub async fn empty_matview<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    t: &TableDef,
    populated: bool,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag("REFRESH MATERIALIZED VIEW");
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, t.oid).await?;
    let mut def = t.clone();
    if let Some(m) = &mut def.matview {
        m.populated = populated;
    }
    swap_storage(txn, tenant, &mut def, &mut r).await?;
    write_table(txn, tenant, &def).await?;
    Ok(r)
}

/// ADD PRIMARY KEY (`cols`, named `name`) to `cur`: the rows are
/// rewritten under their new keys (nothing to rewrite for a partitioned
/// table, whose partitions hold the rows). Returns the fresh storage ids.
async fn add_primary_key<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cur: &mut TableDef,
    cols: Vec<usize>,
    name: String,
    pkey_deferral: Option<bool>,
) -> Result<Vec<u64>> {
    let tname = cur.name.clone();
    let old = cur.clone();
    for &c in &cols {
        cur.columns[c].nullable = false;
    }
    cur.primary_key = cols;
    cur.pkey_deferral = pkey_deferral;
    cur.pkey_name = Some(name.clone());
    if cur.is_partitioned() {
        cur.pkey_oid = alloc(txn, tenant, 1).await? as u32;
        return Ok(vec![]);
    }
    let (next, fresh) = fresh_storage(txn, tenant, cur, 1).await?;
    cur.pkey_oid = next as u32;
    let pk_cols = cur.primary_key.clone();
    let cols_def = cur.columns.clone();
    let res = rewrite(txn, tenant, &old, cur, &|row: &mut Vec<Value>| {
        for &c in &pk_cols {
            if row[c].is_null() {
                bail!(
                    NotNullViolation,
                    "column \"{}\" of relation \"{tname}\" contains null values",
                    cols_def[c].name
                );
            }
        }
        Ok(())
    })
    .await;
    match res {
        Err(e) if e.code == sqlstate::SqlState::UniqueViolation => Err(ErrorReport {
            message: format!("could not create unique index \"{name}\""),
            detail: e.detail.map(|d| d.replace("already exists", "is duplicated")),
            ..e
        }),
        Err(e) => Err(e),
        Ok(()) => Ok(fresh),
    }
}

/// Gives each partition of partitioned table `t` the key `which` just
/// added to `t` ([`attach::adopt_keys`]), writing the partitions.
async fn partition_keys<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    t: &TableDef,
    which: attach::Keys,
) -> Result<Vec<u64>> {
    let mut fresh = Vec::new();
    for p in cat.partitions.get(&t.oid).cloned().unwrap_or_default() {
        let mut p = (*p).clone();
        lock_table(txn, tenant, p.oid).await?;
        fresh.extend(attach::adopt_keys(txn, tenant, cat, t, &mut p, which).await?);
        write_table(txn, tenant, &p).await?;
    }
    Ok(fresh)
}

/// Copies every row of `old` into the fresh storages of `new` (after
/// `transform`), checking keys and constraints, and schedules the old storage
/// for deletion.
async fn rewrite<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    old: &TableDef,
    new: &TableDef,
    transform: &(dyn Fn(&mut Vec<Value>) -> Result<()> + Sync),
) -> Result<()> {
    let mut next = Some(keys::storage(tenant, old.storage).start);
    while let Some(start) = next {
        let (batch, n) = table_batch(txn, tenant, old, start).await?;
        next = n;
        let mut rows = Vec::with_capacity(batch.len());
        for (_, mut row) in batch {
            transform(&mut row)?;
            row.resize(new.columns.len(), Value::Null);
            dml::check_row(new, &mut row)?;
            rows.push(row);
        }
        dml::insert_rows(txn, tenant, new, &rows, true).await?;
    }
    purge_storage(txn, tenant, old)
}

/// Gives `t` and its indexes fresh storage ids.
async fn fresh_storage<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    t: &mut TableDef,
    extra: u64,
) -> Result<(u64, Vec<u64>)> {
    let base = alloc(txn, tenant, 1 + t.indexes.len() as u64 + extra).await?;
    t.storage = base;
    let mut fresh = vec![base];
    for (i, idx) in t.indexes.iter_mut().enumerate() {
        idx.storage = base + 1 + i as u64;
        fresh.push(idx.storage);
    }
    Ok((base + 1 + t.indexes.len() as u64, fresh))
}

/// One batch of `t`'s rows (at the snapshot) from key `start` on, and where
/// the next batch starts (None after the last).
async fn table_batch<T: Txn>(
    txn: &T,
    tenant: TenantId,
    t: &TableDef,
    start: kvapi::Key,
) -> Result<(Vec<(kvapi::Key, Vec<Value>)>, Option<kvapi::Key>)> {
    let r = KeyRange { start, end: keys::storage(tenant, t.storage).end };
    let batch = txn.scan(&r, SCAN_BATCH).await.map_err(from_kv)?;
    let next = match batch.last() {
        Some((k, _)) if batch.len() == SCAN_BATCH => Some(after(k)),
        _ => None,
    };
    let types = t.types();
    let mut rows = Vec::with_capacity(batch.len());
    for (k, bytes) in batch {
        rows.push((k, rowcodec::decode_row(&bytes, &types)?));
    }
    Ok((rows, next))
}

/// Checks the rows already in `t` against its (one, new) CHECK constraint.
async fn validate_check<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    mut t: TableDef,
) -> Result<()> {
    catalog::bind_checks(cat, &mut t)?;
    let mut next = Some(keys::storage(tenant, t.storage).start);
    while let Some(start) = next {
        let (rows, n) = table_batch(txn, tenant, &t, start).await?;
        next = n;
        for (_, mut row) in rows {
            if let Err(e) = dml::check_row(&t, &mut row) {
                if e.code == sqlstate::SqlState::CheckViolation {
                    let name = t.checks.first().map(|c| c.name.clone()).unwrap_or_default();
                    return Err(ErrorReport {
                        message: format!(
                            "check constraint \"{name}\" of relation \"{}\" is violated by some row",
                            t.name
                        ),
                        detail: None,
                        ..e
                    });
                }
                return Err(e);
            }
        }
    }
    Ok(())
}

/// CREATE INDEX.
pub async fn create_index<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    ci: &ast::CreateIndex,
) -> Result<DdlResult> {
    let t = cat.must_table(&bind::obj_name(&ci.table_name)?)?;
    let tname = t.name.clone();
    refuse_temporary(&t, "CREATE INDEX")?;
    if ci.nulls_distinct == Some(false) {
        bail!(FeatureNotSupported, "NULLS NOT DISTINCT indexes are not supported yet");
    }
    let scope = crate::select::table_scope(&t, &t.name, &None);
    let (cols, exprs, names, types) = index_keys(cat, &t, &ci.columns, &scope)?;
    let method = access_methods::method(ci.using.as_ref(), ci.unique, cols.len())?;
    let mut opclasses = Vec::with_capacity(cols.len());
    for (c, ty) in ci.columns.iter().zip(&types) {
        let class = c.operator_class.as_ref();
        opclasses.push(access_methods::opclass(method.as_deref(), ty, class)?);
    }
    if opclasses.iter().all(Option::is_none) {
        opclasses.clear();
    }
    // INCLUDE columns name the index too.
    let mut include = Vec::with_capacity(ci.include.len());
    let mut names = names;
    for i in &ci.include {
        let n = bind::ident(i);
        include.push(column_named(&t, &n)?);
        names.push(n);
    }
    let predicate = match &ci.predicate {
        Some(p) => {
            catalog::index_expr(cat, p, &scope, true)?;
            Some(crate::deparse::stored_text(cat, p))
        }
        None => None,
    };
    let iname = match &ci.name {
        Some(n) => bind::object_name(n)?,
        None => {
            let taken = |n: &str| cat.relation_exists(t.namespace, n);
            free_name(format!("{tname}_{}_idx", names.join("_")), taken)
        }
    };
    if cat.relation_exists(t.namespace, &iname) {
        if ci.if_not_exists {
            let mut r = DdlResult::tag("CREATE INDEX");
            r.notices.push(notice_code(
                sqlstate::SqlState::DuplicateTable,
                format!("relation \"{iname}\" already exists, skipping"),
            ));
            return Ok(r);
        }
        bail!(DuplicateTable, "relation \"{iname}\" already exists");
    }
    if ci.unique {
        partitions::unique_covers_key(&t, "UNIQUE", &cols)?;
    }
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, t.oid).await?;
    let id = alloc(txn, tenant, 1).await?;
    let mut nt = (*t).clone();
    nt.indexes.push(IndexDef {
        exprs,
        predicate,
        options: index_options(&ci.columns),
        method,
        opclasses,
        include,
        ..IndexDef::new(id, iname.clone(), cols, ci.unique)
    });
    catalog::bind_checks(cat, &mut nt)?;
    // Build the entries from the existing rows.
    let only_new =
        TableDef { indexes: vec![nt.indexes[nt.indexes.len() - 1].clone()], ..nt.clone() };
    build_index(txn, tenant, &only_new, &iname).await?;
    write_table(txn, tenant, &nt).await?;
    let mut fresh = vec![id];
    // An index on a partitioned table is made on each partition too
    // (or an equivalent one there attached), unless ON ONLY.
    if nt.is_partitioned() && !crate::parse::is_on_only(ci) {
        fresh.extend(partition_keys(txn, tenant, cat, &nt, attach::Keys::Index(id as u32)).await?);
    }
    Ok(DdlResult { tag: "CREATE INDEX".into(), fresh, ..Default::default() })
}

async fn build_index<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    t: &TableDef,
    iname: &str,
) -> Result<()> {
    let types = t.types();
    let range = keys::storage(tenant, t.storage);
    let mut start = range.start.clone();
    let mut seen = HashSet::new();
    let idx = &t.indexes[0];
    loop {
        let r = KeyRange { start, end: range.end.clone() };
        let batch = txn.scan(&r, SCAN_BATCH).await.map_err(from_kv)?;
        let n = batch.len();
        let last = batch.last().map(|(k, _)| k.clone());
        for (key, bytes) in batch {
            let row = rowcodec::decode_row(&bytes, &types)?;
            let Some((ik, vals, exact)) = dml::index_entry(tenant, t, idx, &row, &key)? else {
                continue;
            };
            if exact && !seen.insert(crate::exec::group_key(&vals)) {
                let detail = dml::index_key_detail(&idx.key_names(t), &vals, "is duplicated");
                return Err(err!(UniqueViolation, "could not create unique index \"{iname}\"")
                    .with_detail(detail));
            }
            txn.put(ik, key.rest().to_vec(), LockMode::Private).map_err(from_kv)?;
        }
        match last {
            Some(k) if n == SCAN_BATCH => start = after(&k),
            _ => return Ok(()),
        }
    }
}

/// ALTER TABLE. `eval` is the statement's context, in which the values a
/// new column's default or a changed type gives existing rows are
/// computed (nextval, current_setting, ...).
pub async fn alter_table<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    at: &ast::AlterTable,
    eval: &crate::expr::EvalContext,
) -> Result<DdlResult> {
    let oname = bind::obj_name(&at.name)?;
    match cat.relation(&oname)? {
        Some(catalog::Relation::View(v)) => {
            return views::alter_columns(txn, tenant, cat, &v, at, "ALTER TABLE").await;
        }
        // ALTER TABLE renames any relation; an index is renamed as ALTER
        // INDEX does.
        Some(catalog::Relation::Index(..)) => {
            let [ast::AlterTableOperation::RenameTable { table_name }] = at.operations.as_slice()
            else {
                bail!(WrongObjectType, "\"{}\" is not a table", oname.name);
            };
            let (ast::RenameTableNameKind::As(to) | ast::RenameTableNameKind::To(to)) = table_name;
            let Some(to) = to.0.last().and_then(|p| p.as_ident()) else {
                bail!(SyntaxError, "invalid name: {to}");
            };
            let a = crate::parse::AlterName {
                kind: crate::parse::RelationKind::Index,
                name: at.name.clone(),
                if_exists: at.if_exists,
                change: crate::parse::NameChange::Rename(to.clone()),
            };
            let mut r = names::alter_name(txn, tenant, cat, &a).await?;
            r.tag = "ALTER TABLE".into();
            return Ok(r);
        }
        _ => {}
    }
    let Some(t) = cat.table(&oname)? else {
        let tname = oname.to_string();
        if at.if_exists {
            let mut r = DdlResult::tag("ALTER TABLE");
            r.notices.push(notice(format!("relation \"{tname}\" does not exist, skipping")));
            return Ok(r);
        }
        bail!(UndefinedTable, "relation \"{tname}\" does not exist");
    };
    let tname = t.name.clone();
    refuse_temporary(&t, "ALTER TABLE")?;
    partitions::refuse_alter(&t, &at.operations)?;
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, t.oid).await?;
    let mut cur = (*t).clone();
    let mut fresh = Vec::new();
    let mut notices = Vec::new();
    let mut dropping = Dropping::new(false);
    let mut sequences = Vec::new();
    let mut skipped_column = false;
    for (op, from_column) in &alter::column_constraints(&at.operations) {
        if *from_column && skipped_column {
            continue;
        }
        match op {
            ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::PrimaryKey(pk),
                ..
            } => {
                if !cur.primary_key.is_empty() {
                    bail!(
                        InvalidTableDefinition,
                        "multiple primary keys for table \"{tname}\" are not allowed"
                    );
                }
                let cols = index_columns(&cur, &pk.columns)?;
                partitions::unique_covers_key(&cur, "PRIMARY KEY", &cols)?;
                let name =
                    pk.name.as_ref().map(bind::ident).unwrap_or_else(|| format!("{tname}_pkey"));
                if cat.relation_exists(cur.namespace, &name) {
                    bail!(DuplicateTable, "relation \"{name}\" already exists");
                }
                let deferral = deferral(&pk.characteristics)?;
                fresh.extend(add_primary_key(txn, tenant, &mut cur, cols, name, deferral).await?);
                if cur.is_partitioned() && !at.only {
                    fresh.extend(
                        partition_keys(txn, tenant, cat, &cur, attach::Keys::Primary).await?,
                    );
                }
            }
            ast::AlterTableOperation::AddColumn { column_def, if_not_exists, .. } => {
                let cname = bind::ident(&column_def.name);
                skipped_column = cur.column_index(&cname).is_some();
                if skipped_column {
                    if *if_not_exists {
                        notices.push(notice_code(
                            sqlstate::SqlState::DuplicateColumn,
                            format!("column \"{cname}\" of relation \"{tname}\" already exists, skipping"),
                        ));
                        continue;
                    }
                    bail!(
                        DuplicateColumn,
                        "column \"{cname}\" of relation \"{tname}\" already exists"
                    );
                }
                let serial = sequences::serial_type(&column_def.data_type);
                let def = match &serial {
                    Some(t) => TypeDef::from_type(t),
                    None => bind::column_type(cat, &column_def.data_type)?,
                };
                let ty = def.to_type();
                let mut col = ColumnDef::new(cname.clone(), def);
                // SERIAL and IDENTITY: the options of the sequence to create.
                let mut owns: Option<Vec<ast::SequenceOptions>> = serial.as_ref().map(|_| vec![]);
                for opt in &column_def.options {
                    match &opt.option {
                        ast::ColumnOption::NotNull => col.nullable = false,
                        ast::ColumnOption::Null => {}
                        ast::ColumnOption::Default(_) if owns.is_some() => {
                            return Err(multiple_defaults(&col.name, &tname))
                        }
                        ast::ColumnOption::Default(_) if col.generated => {
                            return Err(both_default_and_generated(&col.name, &tname))
                        }
                        ast::ColumnOption::Default(e) => {
                            col.default = crate::deparse::keeps_default(e, &col.ty)
                                .then(|| crate::deparse::stored_default(cat, e, &ty))
                        }
                        ast::ColumnOption::Generated { generation_expr: Some(e), .. } => {
                            generated_column(cat, &mut col, e, &tname)?
                        }
                        ast::ColumnOption::Generated {
                            generated_as,
                            sequence_options,
                            generation_expr: None,
                            ..
                        } => {
                            if col.default.is_some() || owns.is_some() {
                                return Err(multiple_defaults(&col.name, &tname));
                            }
                            col.identity = Some(identity_kind(generated_as)?);
                            owns = Some(sequence_options.clone().unwrap_or_default());
                        }
                        ast::ColumnOption::Collation(c) => {
                            col.collation = bind::column_collation(c, &ty)?
                        }
                        other => {
                            bail!(FeatureNotSupported, "column option not supported yet: {other}")
                        }
                    }
                }
                let old = cur.clone();
                let generated = col.generated;
                let domain = col.ty.domain.clone();
                cur.columns.push(col);
                let idx = cur.columns.len() - 1;
                let seq = match &owns {
                    Some(options) => Some(
                        owned_sequence(txn, tenant, cat, &mut cur, idx, (options, None)).await?,
                    ),
                    None => None,
                };
                // The default is computed for each existing row (a
                // volatile one, nextval, gives each its own value).
                let fill = match seq {
                    Some(_) => None,
                    None => column_default(cat, &cur.columns[idx])?,
                };
                if generated {
                    // Checks the expression; the rewrite computes it.
                    catalog::bind_checks(cat, &mut cur)?;
                }
                let rewritten = fill.is_some() || !cur.columns[idx].nullable;
                if rewritten || generated || domain.is_some() {
                    let (_, f) = fresh_storage(txn, tenant, &mut cur, 0).await?;
                    fresh.extend(f);
                    // A new sequence numbers the existing rows.
                    let numbers = seq.as_ref().map(|s| sequence::Numbering::new(s, ty.clone()));
                    rewrite(txn, tenant, &old, &cur, &|row: &mut Vec<Value>| {
                        let v = match (&numbers, &fill) {
                            (Some(n), _) => n.next()?,
                            (None, Some(d)) => d.eval(&[], eval)?,
                            (None, None) => Value::Null,
                        };
                        // Each existing row gets the value, which must
                        // suit the column's domain.
                        if let Some(d) = &domain {
                            d.check(&v)?;
                        }
                        row.truncate(idx);
                        row.push(v);
                        Ok(())
                    })
                    .await?;
                    let position = numbers.and_then(|n| n.position());
                    if let (Some(s), Some(pos)) = (&seq, position) {
                        sequences.push((Arc::new(s.clone()), Some(pos)));
                    }
                }
            }
            ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::ForeignKey(c),
                not_valid,
            } => {
                let pending =
                    (c.name.as_ref().map(bind::ident), foreign_keys::columns(&cur, c)?, c.clone());
                if cur.is_partitioned() && at.only {
                    bail!(
                        WrongObjectType,
                        "cannot use ONLY for foreign key on partitioned table \"{tname}\" referencing relation \"{}\"",
                        bind::obj_name(&c.foreign_table)?.name
                    );
                }
                let oid = alloc(txn, tenant, 1).await? as u32;
                let mut def = foreign_keys::define(txn, tenant, cat, &cur, &pending, oid).await?;
                def.not_valid = *not_valid;
                if !def.not_valid {
                    foreign_keys::validate(txn, tenant, cat, &cur, &def).await?;
                }
                cur.foreign_keys.push(def);
                if cur.is_partitioned() {
                    let which = attach::Keys::ForeignKey(oid);
                    fresh.extend(partition_keys(txn, tenant, cat, &cur, which).await?);
                }
            }
            ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::Check(c),
                not_valid,
            } => {
                let before: Vec<String> = cur.checks.iter().map(|c| c.name.clone()).collect();
                let check = (c.name.as_ref().map(bind::ident), (*c.expr).clone(), None);
                add_checks(cat, &mut cur, vec![check])?;
                let Some(added) = cur.checks.iter_mut().find(|c| !before.contains(&c.name)) else {
                    bail!(InternalError, "the new check constraint was not added");
                };
                added.not_valid = *not_valid;
                if !*not_valid {
                    let only = TableDef { checks: vec![added.clone()], ..cur.clone() };
                    validate_check(txn, tenant, cat, only).await?;
                }
            }
            ast::AlterTableOperation::ValidateConstraint { name } => {
                alter::validate_constraint(txn, tenant, cat, &mut cur, &bind::ident(name)).await?
            }
            ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::Unique(u),
                ..
            } => {
                if cur.is_partitioned() {
                    let cols = index_columns(&cur, &u.columns)?;
                    partitions::unique_covers_key(&cur, "UNIQUE", &cols)?;
                }
                let id = alter::add_unique(txn, tenant, cat, &mut cur, u).await?;
                fresh.push(id);
                if cur.is_partitioned() && !at.only {
                    let which = attach::Keys::Index(id as u32);
                    fresh.extend(partition_keys(txn, tenant, cat, &cur, which).await?);
                }
            }
            ast::AlterTableOperation::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::SetDataType { data_type, using, .. },
            } => {
                let change = (data_type, using.as_ref());
                let f =
                    alter::set_type(txn, tenant, cat, &mut cur, column_name, change, eval).await?;
                fresh.extend(f);
            }
            ast::AlterTableOperation::AlterColumn { column_name, op } => {
                alter::alter_column(txn, tenant, cat, &mut cur, column_name, op, &mut notices)
                    .await?
            }
            ast::AlterTableOperation::RenameTable { table_name } => {
                let old = cur.name.clone();
                alter::rename_table(cat, &mut cur, table_name)?;
                let schema = cat.namespace_name(cur.namespace).unwrap_or_default().to_string();
                let to = names::one((schema.clone(), old), (schema, cur.name.clone()));
                names::rename_everywhere(txn, tenant, cat, Some(&mut cur), &to, false).await?;
            }
            ast::AlterTableOperation::RenameColumn { old_column_name, new_column_name } => {
                let c = cur.column_index(&bind::ident(old_column_name));
                if let (Some(c), false) = (c, cat.views.is_empty()) {
                    let snap = view_deps::with_table(cat, &cur);
                    let to = bind::ident(new_column_name);
                    view_deps::rename_column(txn, tenant, &snap, &cur, c, &to).await?;
                }
                alter::rename_column(txn, tenant, cat, &mut cur, old_column_name, new_column_name)
                    .await?
            }
            ast::AlterTableOperation::DropColumn {
                column_names, if_exists, drop_behavior, ..
            } => {
                for name in column_names {
                    let c = cur.column_index(&bind::ident(name));
                    let cascade = *drop_behavior == Some(ast::DropBehavior::Cascade);
                    if let Some(c) = c {
                        let f = drop_generated_users(
                            txn,
                            tenant,
                            cat,
                            &mut cur,
                            c,
                            cascade,
                            &mut notices,
                        );
                        fresh.extend(f.await?);
                    }
                    let c = cur.column_index(&bind::ident(name));
                    if let (Some(c), false) = (c, cat.views.is_empty()) {
                        let snap = view_deps::with_table(cat, &cur);
                        let what = format!("column {} of table {tname}", cur.columns[c].name);
                        dropping.cascade = *drop_behavior == Some(ast::DropBehavior::Cascade);
                        // Traced against this column's table as it is now.
                        dropping.traces = None;
                        let on = (cur.oid, Some(c as i16 + 1), what.as_str());
                        view_deps::drop_dependents(txn, tenant, &snap, on, &mut dropping).await?;
                    }
                    let f = alter::drop_column(
                        txn,
                        tenant,
                        cat,
                        &mut cur,
                        name,
                        *if_exists,
                        &mut notices,
                    )
                    .await?;
                    fresh.extend(f);
                }
            }
            ast::AlterTableOperation::DropConstraint { if_exists, name, .. } => {
                let n = bind::ident(name);
                if let Some(p) = cur.foreign_keys.iter().position(|f| f.name == n) {
                    cur.foreign_keys.remove(p);
                } else if let Some(p) = cur.checks.iter().position(|c| c.name == n) {
                    cur.checks.remove(p);
                } else if let Some(p) = cur.indexes.iter().position(|i| i.constraint && i.name == n)
                {
                    if let Some((child, fk)) = foreign_keys::index_user(cat, &cur, p)? {
                        let what = format!("constraint {n} on table {tname}");
                        let uses =
                            [format!("constraint {fk} on table {child} depends on index {n}")];
                        return Err(still_depended_on(&what, &uses));
                    }
                    let removed = cur.indexes.remove(p);
                    txn.delete_range_after_commit(keys::storage(tenant, removed.storage))
                        .map_err(from_kv)?;
                } else if cur.pkey_name.as_deref() == Some(n.as_str()) {
                    bail!(
                        FeatureNotSupported,
                        "dropping a PRIMARY KEY constraint is not supported yet"
                    );
                } else if *if_exists {
                    notices.push(notice(format!(
                        "constraint \"{n}\" of relation \"{tname}\" does not exist, skipping"
                    )));
                } else {
                    bail!(
                        UndefinedObject,
                        "constraint \"{n}\" of relation \"{tname}\" does not exist"
                    );
                }
            }
            // Nothing to keep: Strata has no heap pages or autovacuum to
            // tune and no logical replication to identify rows for.
            ast::AlterTableOperation::SetOptionsParens { options } => {
                alter::storage_parameters(options)?
            }
            ast::AlterTableOperation::ReplicaIdentity { identity } => {
                if let ast::ReplicaIdentity::Index(i) = identity {
                    let name = bind::ident(i);
                    let pkey = cur.pkey_name.as_deref() == Some(name.as_str());
                    match cur.indexes.iter().find(|x| x.name == name) {
                        _ if pkey => {}
                        Some(x) if x.unique => {}
                        Some(_) => bail!(
                            WrongObjectType,
                            "cannot use non-unique index \"{name}\" as replica identity"
                        ),
                        None => bail!(
                            UndefinedObject,
                            "index \"{name}\" for table \"{tname}\" does not exist"
                        ),
                    }
                }
            }
            ast::AlterTableOperation::RenameConstraint { old_name, new_name } => {
                let (from, to) = (bind::ident(old_name), bind::ident(new_name));
                alter::rename_constraint(cat, &mut cur, &from, to)?
            }
            ast::AlterTableOperation::OwnerTo { .. } => {
                bail!(
                    FeatureNotSupported,
                    "OWNER TO beside other ALTER TABLE actions is not supported yet"
                )
            }
            ast::AlterTableOperation::EnableTrigger { name } => {
                triggers::set_enabled(&mut cur, name, true)?
            }
            ast::AlterTableOperation::DisableTrigger { name } => {
                triggers::set_enabled(&mut cur, name, false)?
            }
            other => bail!(FeatureNotSupported, "ALTER TABLE operation not supported yet: {other}"),
        }
    }
    write_table(txn, tenant, &cur).await?;
    notices.extend(view_deps::cascade_notice(&dropping.cascaded));
    Ok(DdlResult { tag: "ALTER TABLE".into(), notices, fresh, sequences, ..Default::default() })
}

/// A UNIQUE or PRIMARY KEY constraint's DEFERRABLE clause: Some(initially
/// deferred) when deferrable (see [`crate::catalog::IndexDef::deferral`]).
pub(crate) fn deferral(ch: &Option<ast::ConstraintCharacteristics>) -> Result<Option<bool>> {
    let Some(ch) = ch else { return Ok(None) };
    let deferred = ch.initially == Some(ast::DeferrableInitial::Deferred);
    if deferred && ch.deferrable == Some(false) {
        bail!(SyntaxError, "constraint declared INITIALLY DEFERRED must be DEFERRABLE");
    }
    if ch.enforced == Some(false) {
        bail!(
            FeatureNotSupported,
            "UNIQUE and PRIMARY KEY constraints cannot be marked NOT ENFORCED"
        );
    }
    Ok((deferred || ch.deferrable == Some(true)).then_some(deferred))
}

/// The ON COMMIT actions of the session's temporary tables `temp`, done in
/// the committing transaction: an ON COMMIT DROP table's rows are purged
/// after the commit, and an ON COMMIT DELETE ROWS table that has rows moves
/// to fresh, empty storage (the old is purged). Returns each changed table
/// by name: its new definition, or None when it is dropped.
pub async fn temp_on_commit<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    temp: &std::collections::BTreeMap<String, Arc<TableDef>>,
) -> Result<Vec<(String, Option<TableDef>)>> {
    let mut changed = Vec::new();
    for (name, t) in temp {
        let Some(action) = t.on_commit else { continue };
        match action {
            catalog::OnCommit::Drop => {
                purge_storage(txn, tenant, t)?;
                changed.push((name.clone(), None));
            }
            catalog::OnCommit::DeleteRows => {
                let rows = keys::storage(tenant, t.storage);
                if txn.scan(&rows, 1).await.map_err(from_kv)?.is_empty() {
                    continue;
                }
                purge_storage(txn, tenant, t)?;
                let mut emptied = (**t).clone();
                fresh_storage(txn, tenant, &mut emptied, 0).await?;
                changed.push((name.clone(), Some(emptied)));
            }
        }
    }
    Ok(changed)
}
