//! Sequence DDL: CREATE/ALTER/DROP SEQUENCE and the sequences SERIAL and
//! IDENTITY columns own (values and their reservation live in sequence.rs).
//!
//! ALTER SEQUENCE ... RESTART is not transactional here: the session stores
//! the new position in its own durable transaction, as setval does, so a
//! ROLLBACK does not undo it (PostgreSQL's does).

use super::*;

/// The integer type of a SERIAL pseudo-type, if `t` is one.
pub(super) fn serial_type(t: &ast::DataType) -> Option<DataType> {
    let ast::DataType::Custom(name, _) = t else { return None };
    match bind::object_name(name).ok()?.as_str() {
        "serial" | "serial4" => Some(DataType::Int4),
        "bigserial" | "serial8" => Some(DataType::Int8),
        "smallserial" | "serial2" => Some(DataType::Int2),
        _ => None,
    }
}

/// Creates the sequence behind SERIAL or IDENTITY column `col` of `t`
/// (named `named`, else `<table>_<column>_seq`, numbered if taken; owned
/// by the column) and makes it the column's NOT NULL default.
pub(super) async fn owned_sequence<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    t: &mut TableDef,
    col: usize,
    (options, named): (&[ast::SequenceOptions], Option<&ast::ObjectName>),
) -> Result<SequenceDef> {
    let (namespace, name) = match named {
        Some(n) => {
            // An unqualified name is in the table's schema.
            let (ns, name) = match n.0.len() {
                1 => (t.namespace, bind::object_name(n)?),
                _ => new_name(cat, n)?,
            };
            if cat.relation_exists(ns, &name) {
                bail!(DuplicateTable, "relation \"{name}\" already exists");
            }
            (ns, name)
        }
        None => {
            let base = format!("{}_{}_seq", t.name, t.columns[col].name);
            let mut name = base.clone();
            let mut n = 0;
            while cat.relation_exists(t.namespace, &name)
                || t.indexes.iter().any(|i| i.name == name)
            {
                n += 1;
                name = format!("{base}{n}");
            }
            (t.namespace, name)
        }
    };
    let oid = alloc(txn, tenant, 1).await? as u32;
    let mut seq = sequence::define(oid, name, &t.columns[col].ty.to_type(), options)?;
    seq.namespace = namespace;
    let kind = crate::acl::ObjKind::Sequence;
    seq.access = crate::acl::Ownership::created(cat, &t.access.owner, kind, namespace);
    seq.owned_by = Some((t.oid, t.columns[col].name.clone()));
    // Stored schema-qualified, as every name in stored text (deparse.rs).
    let qualified = crate::func::catalog_info::qualified_name(cat, seq.namespace, &seq.name);
    let c = &mut t.columns[col];
    c.default = Some(format!("nextval('{}'::regclass)", qualified.replace('\'', "''")));
    c.nullable = false;
    write_sequence(txn, tenant, &seq).await?;
    Ok(seq)
}

pub(super) async fn write_sequence<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    s: &SequenceDef,
) -> Result<()> {
    put_entry(txn, keys::sequence(tenant, s.oid), sequence::encode(s)).await
}

/// CREATE SEQUENCE.
pub async fn create_sequence<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    stmt: &ast::Statement,
    owner: &str,
) -> Result<DdlResult> {
    let ast::Statement::CreateSequence {
        temporary,
        if_not_exists,
        name,
        data_type,
        sequence_options,
        owned_by,
    } = stmt
    else {
        bail!(InternalError, "not a CREATE SEQUENCE statement");
    };
    if *temporary {
        bail!(FeatureNotSupported, "temporary sequences are not supported yet");
    }
    let (namespace, name) = new_name(cat, name)?;
    if cat.relation_exists(namespace, &name) {
        if *if_not_exists {
            let mut r = DdlResult::tag("CREATE SEQUENCE");
            r.notices.push(super::notice_code(
                sqlstate::SqlState::DuplicateTable,
                format!("relation \"{name}\" already exists, skipping"),
            ));
            return Ok(r);
        }
        bail!(DuplicateTable, "relation \"{name}\" already exists");
    }
    let ty = match data_type {
        Some(t) => bind::data_type(t)?,
        None => DataType::Int8,
    };
    bump_version(txn, tenant).await?;
    let oid = alloc(txn, tenant, 1).await? as u32;
    let mut seq = sequence::define(oid, name, &ty, sequence_options)?;
    seq.namespace = namespace;
    seq.access =
        crate::acl::Ownership::created(cat, owner, crate::acl::ObjKind::Sequence, namespace);
    if let Some(owner) = owned_by {
        seq.owned_by = sequence_owner(cat, owner)?;
    }
    write_sequence(txn, tenant, &seq).await?;
    Ok(DdlResult::tag("CREATE SEQUENCE"))
}

/// ALTER SEQUENCE: new options over the old definition, OWNED BY, RESTART.
pub async fn alter_sequence<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    a: &crate::parse::AlterSequence,
) -> Result<DdlResult> {
    let obj = bind::obj_name(&a.name)?;
    let mut r = DdlResult::tag("ALTER SEQUENCE");
    let old = match cat.relation(&obj)? {
        Some(catalog::Relation::Sequence(s)) => s,
        Some(_) => bail!(WrongObjectType, "\"{}\" is not a sequence", obj.name),
        None => {
            let name = obj.to_string();
            let code = sqlstate::SqlState::UndefinedTable;
            skip_missing(&mut r, a.if_exists, code, "relation", &name)?;
            return Ok(r);
        }
    };
    let old = &old;
    if a.options.data_type.is_some() {
        bail!(FeatureNotSupported, "ALTER SEQUENCE ... AS is not supported yet");
    }
    let mut seq = sequence::redefine(old, &a.options.options)?;
    if let Some(owner) = &a.options.owned_by {
        seq.owned_by = sequence_owner(cat, owner)?;
    }
    let restart = restart_value(&seq, &a.options.restart)?;
    bump_version(txn, tenant).await?;
    write_sequence(txn, tenant, &seq).await?;
    r.sequences.push((Arc::new(seq), restart.map(|v| (v, false))));
    Ok(r)
}

/// Where RESTART (`Some(None)`: at START) puts sequence `seq`, checked
/// against its bounds.
fn restart_value(seq: &SequenceDef, restart: &Option<Option<ast::Expr>>) -> Result<Option<i64>> {
    let v = match restart {
        None => return Ok(None),
        Some(None) => seq.start,
        Some(Some(e)) => sequence::constant(e)?,
    };
    if v < seq.min {
        bail!(
            InvalidParameterValue,
            "RESTART value ({v}) cannot be less than MINVALUE ({})",
            seq.min
        );
    }
    if v > seq.max {
        bail!(
            InvalidParameterValue,
            "RESTART value ({v}) cannot be greater than MAXVALUE ({})",
            seq.max
        );
    }
    Ok(Some(v))
}

/// ALTER TABLE ... ALTER COLUMN's identity actions: ADD GENERATED ... AS
/// IDENTITY (a NOT NULL column without a default gets a sequence, named
/// by SEQUENCE NAME as pg_dump writes it), SET GENERATED / SET option /
/// RESTART (on its sequence), DROP IDENTITY (the sequence goes; NOT NULL
/// stays).
pub async fn alter_identity<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    a: &crate::parse::AlterIdentity,
) -> Result<DdlResult> {
    use crate::parse::IdentityAction;
    let mut r = DdlResult::tag("ALTER TABLE");
    let obj = bind::obj_name(&a.table)?;
    let Some(t) = cat.table(&obj)? else {
        let name = obj.to_string();
        skip_missing(&mut r, a.if_exists, sqlstate::SqlState::UndefinedTable, "relation", &name)?;
        return Ok(r);
    };
    super::refuse_temporary(&t, "ALTER TABLE")?;
    let cname = bind::ident(&a.column);
    let Some(c) = t.column_index(&cname) else {
        bail!(UndefinedColumn, "column \"{cname}\" of relation \"{}\" does not exist", t.name);
    };
    let state = |what: &str| {
        err!(ObjectNotInPrerequisiteState, "column \"{cname}\" of relation \"{}\" {what}", t.name)
    };
    let owned = cat.owned_sequence(t.oid, &cname);
    bump_version(txn, tenant).await?;
    super::lock_table(txn, tenant, t.oid).await?;
    let mut cur = (*t).clone();
    match &a.action {
        IdentityAction::Add(always, o) => {
            let col = &cur.columns[c];
            if col.identity.is_some() {
                return Err(state("is already an identity column"));
            }
            if col.default.is_some() {
                return Err(state("already has a default value"));
            }
            if col.nullable {
                return Err(state("must be declared NOT NULL before identity can be added"));
            }
            if sequence::type_range(&col.ty.to_type()).is_err() {
                bail!(
                    InvalidParameterValue,
                    "identity column type must be smallint, integer, or bigint"
                );
            }
            if o.data_type.is_some() || o.restart.is_some() || o.owned_by.is_some() {
                bail!(SyntaxError, "invalid sequence option for an identity column");
            }
            owned_sequence(txn, tenant, cat, &mut cur, c, (&o.options, o.name.as_ref())).await?;
            cur.columns[c].identity = Some(if *always { 'a' } else { 'd' });
        }
        IdentityAction::Set(always, o) => {
            let (Some(_), Some(s)) = (cur.columns[c].identity, owned) else {
                return Err(state("is not an identity column"));
            };
            if o.data_type.is_some() || o.owned_by.is_some() || o.name.is_some() {
                bail!(SyntaxError, "invalid sequence option for an identity column");
            }
            if let Some(always) = always {
                cur.columns[c].identity = Some(if *always { 'a' } else { 'd' });
            }
            let seq = sequence::redefine(s, &o.options)?;
            let restart = restart_value(&seq, &o.restart)?;
            write_sequence(txn, tenant, &seq).await?;
            r.sequences.push((Arc::new(seq), restart.map(|v| (v, false))));
        }
        IdentityAction::Drop(if_exists) => {
            let (Some(_), Some(s)) = (cur.columns[c].identity, owned) else {
                let e = state("is not an identity column");
                match if_exists {
                    true => {
                        r.notices.push(super::notice(format!("{}, skipping", e.message)));
                        return Ok(r);
                    }
                    false => return Err(e),
                }
            };
            cur.columns[c].identity = None;
            cur.columns[c].default = None;
            delete_sequence(txn, tenant, s.oid).await?;
        }
    }
    write_table(txn, tenant, &cur).await?;
    Ok(r)
}

/// OWNED BY table.column (or NONE).
pub(super) fn sequence_owner(
    cat: &Catalog,
    owner: &ast::ObjectName,
) -> Result<Option<(u32, String)>> {
    let parts: Vec<String> = owner.0.iter().filter_map(|p| p.as_ident().map(bind::ident)).collect();
    match parts.as_slice() {
        [none] if none == "none" => Ok(None),
        [schema @ .., table, column] if schema.len() <= 1 => {
            let name = catalog::ObjName { schema: schema.first().cloned(), name: table.clone() };
            let t = cat.must_table(&name)?;
            if t.column_index(column).is_none() {
                bail!(
                    UndefinedColumn,
                    "column \"{column}\" of relation \"{table}\" does not exist"
                );
            }
            Ok(Some((t.oid, column.clone())))
        }
        _ => Err(err!(SyntaxError, "invalid OWNED BY option")
            .with_hint("Specify OWNED BY table.column or OWNED BY NONE.")),
    }
}

/// DROP SEQUENCE: refused while a column default (of a table or view
/// this statement does not drop, by OID in `dropped`) calls nextval on
/// it; with `cascade`, those defaults go.
pub(super) async fn drop_sequences<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    names: &[ast::ObjectName],
    if_exists: bool,
    (cascade, dropped): (bool, &HashSet<u32>),
) -> Result<DdlResult> {
    let mut r = DdlResult::tag("DROP SEQUENCE");
    let mut bumped = false;
    let mut tables: BTreeMap<u32, TableDef> = BTreeMap::new();
    let mut views: BTreeMap<u32, catalog::ViewDef> = BTreeMap::new();
    let mut cascaded = Vec::new();
    for n in names {
        let obj = bind::obj_name(n)?;
        let Some(catalog::Relation::Sequence(seq)) = cat.relation(&obj)? else {
            let name = obj.to_string();
            skip_missing(&mut r, if_exists, sqlstate::SqlState::UndefinedTable, "sequence", &name)?;
            continue;
        };
        let name = &seq.name;
        // An identity column's sequence is part of the column.
        let identity = seq.owned_by.as_ref().and_then(|(t, c)| {
            let t = cat.table_by_oid(*t).filter(|t| !dropped.contains(&t.oid))?;
            t.columns.iter().any(|col| col.name == *c && col.identity.is_some()).then_some((t, c))
        });
        if let Some((t, c)) = identity {
            return Err(err!(
                DependentObjectsStillExist,
                "cannot drop sequence {name} because column {c} of table {} requires it",
                t.name
            )
            .with_hint(format!("You can drop column {c} of table {} instead.", t.name)));
        }
        let users = default_users(cat, seq.oid, dropped);
        if !users.is_empty() && !cascade {
            let uses: Vec<String> = users
                .iter()
                .map(|(.., what)| format!("{what} depends on sequence {name}"))
                .collect();
            return Err(super::still_depended_on(&format!("sequence {name}"), &uses));
        }
        for (oid, column, what) in users {
            if let Some(t) = cat.table_by_oid(oid) {
                let t = tables.entry(oid).or_insert_with(|| (*t).clone());
                t.columns[column].default = None;
            } else if let Some(v) = cat.views.values().find(|v| v.oid == oid) {
                let v = views.entry(oid).or_insert_with(|| (**v).clone());
                v.defaults[column] = None;
            }
            cascaded.push(what);
        }
        bump_once(txn, tenant, &mut bumped).await?;
        delete_sequence(txn, tenant, seq.oid).await?;
    }
    for t in tables.values() {
        write_table(txn, tenant, t).await?;
    }
    for v in views.values() {
        put_entry(txn, keys::view(tenant, v.oid), json_entry(v)).await?;
    }
    r.notices.extend(view_deps::cascade_notice(&cascaded));
    Ok(r)
}

/// The column defaults that call nextval on sequence `seq`, but for those
/// of relations in `dropped`: (table or view OID, column position, how
/// PostgreSQL names the default).
fn default_users(cat: &Catalog, seq: u32, dropped: &HashSet<u32>) -> Vec<(u32, usize, String)> {
    let calls = |text: &str| {
        crate::system::depend::nextval_names(text)
            .iter()
            .any(|(_, n)| crate::func::catalog_info::class_oid(cat, n) == Some(seq))
    };
    cat.column_defaults()
        .filter(|d| !dropped.contains(&d.relation) && calls(d.text))
        .map(|d| {
            let what =
                format!("default value for column {} of {} {}", d.column, d.kind, d.relation_name);
            (d.relation, d.position, what)
        })
        .collect()
}

pub(super) async fn delete_sequence<T: Txn>(txn: &mut T, tenant: TenantId, oid: u32) -> Result<()> {
    delete_key(txn, keys::sequence(tenant, oid)).await
}
