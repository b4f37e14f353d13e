//! ATTACH and DETACH PARTITION, ALTER INDEX ... ATTACH PARTITION, and how a
//! partitioned table's primary key and indexes reach its partitions.
//!
//! A partitioned table's primary key and indexes hold no entries: each
//! partition has an index of its own *attached* to the parent's one
//! ([`IndexDef::parent`], [`TableDef::pkey_parent`]; pg_inherits shows the
//! link), which holds that partition's entries. Uniqueness per partition is
//! uniqueness overall, since a unique key must contain the partition key.
//! A parent's index is valid (pg_index.indisvalid) once every partition has
//! one attached. A partitioned table's foreign keys likewise have a copy on
//! each partition ([`catalog::ForeignKeyDef::parent`], pg_constraint's
//! conparentid), which checks the partition's rows and acts on them.
//!
//! pg_dump restores a partition tree in the steps this module takes one
//! at a time: each partition is created as a plain table and attached
//! (`ALTER TABLE ONLY parent ATTACH PARTITION p FOR VALUES ...`), the
//! parent's keys are added to the parent only (`ALTER TABLE ONLY parent ADD
//! CONSTRAINT ... PRIMARY KEY`, `CREATE INDEX ... ON ONLY parent`), each
//! partition's own likewise, and then linked (`ALTER INDEX parent_idx ATTACH
//! PARTITION p_idx`). Without ONLY, adding a key to a partitioned table,
//! creating an index on it or attaching a partition gives each partition an
//! attached index: an equivalent one it already has, or a new one built
//! from its rows ([`adopt_keys`]).
//!
//! Not done: partitions whose columns are in another order than their
//! parent's (Strata's partitions share their parent's row layout), DETACH
//! CONCURRENTLY's two steps (after PostgreSQL's checks it detaches at once,
//! as the plain form does).

use super::*;
use crate::parse::{PartitionAction, PartitionCmd};
use crate::partition::PartitionOf;

/// Which of a parent's keys [`adopt_keys`] hands to a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keys {
    /// The primary key, every index and every foreign key.
    All,
    /// The primary key.
    Primary,
    /// The index with this OID.
    Index(u32),
    /// The foreign key with this OID.
    ForeignKey(u32),
}

/// ALTER TABLE ... ATTACH / DETACH PARTITION, ALTER INDEX ... ATTACH
/// PARTITION.
pub async fn partition_cmd<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    c: &PartitionCmd,
) -> Result<DdlResult> {
    if c.action == PartitionAction::AttachIndex {
        return attach_index(txn, tenant, cat, c).await;
    }
    let name = bind::obj_name(&c.parent)?;
    let Some(parent) = cat.table(&name)? else {
        if c.if_exists {
            let mut r = DdlResult::tag("ALTER TABLE");
            r.notices.push(notice(format!("relation \"{name}\" does not exist, skipping")));
            return Ok(r);
        }
        bail!(UndefinedTable, "relation \"{name}\" does not exist");
    };
    let child = cat.must_table(&bind::obj_name(&c.partition)?)?;
    match &c.action {
        PartitionAction::Attach(fv) => attach(txn, tenant, cat, &parent, &child, fv).await,
        PartitionAction::Detach(mode) => detach(txn, tenant, cat, &parent, &child, *mode).await,
        PartitionAction::AttachIndex => bail!(InternalError, "ALTER INDEX reached ALTER TABLE"),
    }
}

/// ATTACH PARTITION: `child` becomes the partition of `parent` with bound
/// `fv`, checked as PostgreSQL checks it (columns, bound, NOT NULL,
/// generated columns, CHECK constraints, every row inside the bound), and
/// is given the parent's keys.
async fn attach<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    parent: &Arc<TableDef>,
    child: &Arc<TableDef>,
    fv: &ast::ForValues,
) -> Result<DdlResult> {
    if let Some(mv) = [parent, child].into_iter().find(|t| t.matview.is_some()) {
        bail!(
            WrongObjectType,
            "ALTER action ATTACH PARTITION cannot be performed on relation \"{}\"",
            mv.name
        );
    }
    if !parent.is_partitioned() {
        bail!(InvalidObjectDefinition, "table \"{}\" is not partitioned", parent.name);
    }
    if child.partition_of.is_some() {
        bail!(WrongObjectType, "\"{}\" is already a partition", child.name);
    }
    if child.temporary || parent.temporary {
        bail!(FeatureNotSupported, "temporary partitions are not supported yet");
    }
    let circular = child.oid == parent.oid
        || crate::partition::descendants(&cat.partitions, child)
            .iter()
            .any(|d| d.oid == parent.oid);
    if circular {
        return Err(err!(DuplicateTable, "circular inheritance not allowed").with_detail(format!(
            "\"{}\" is already a child of \"{}\".",
            child.name, parent.name
        )));
    }
    if let Some(extra) = child.columns.iter().find(|c| parent.column_index(&c.name).is_none()) {
        return Err(err!(
            DatatypeMismatch,
            "table \"{}\" contains column \"{}\" not found in parent \"{}\"",
            child.name,
            extra.name,
            parent.name
        )
        .with_detail("The new partition may contain only the columns present in parent."));
    }
    let bound = super::partitions::bound(cat, parent, &child.name, fv)?;
    same_columns(parent, child)?;
    same_checks(parent, child)?;
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, parent.oid).await?;
    lock_table(txn, tenant, child.oid).await?;
    rows_inside(txn, tenant, cat, parent, child, &bound).await?;
    super::partitions::default_keeps_rows(txn, tenant, cat, parent, &bound).await?;
    let mut cur = (**child).clone();
    cur.partition_of = Some(PartitionOf { parent: parent.oid, bound });
    let fresh = adopt_keys(txn, tenant, cat, parent, &mut cur, Keys::All).await?;
    write_table(txn, tenant, &cur).await?;
    Ok(DdlResult { tag: "ALTER TABLE".into(), fresh, ..Default::default() })
}

/// The columns checks of ATTACH PARTITION after the extra-column one: each
/// of the parent's columns in the child, of the same type and collation,
/// NOT NULL where the parent's is, generated by the same expression; and
/// (Strata's own rule) in the parent's order.
fn same_columns(parent: &TableDef, child: &TableDef) -> Result<()> {
    let mismatch = |m: String| Err(err!(DatatypeMismatch, "{m}"));
    for (i, pc) in parent.columns.iter().enumerate() {
        let Some(j) = child.column_index(&pc.name) else {
            return mismatch(format!("child table is missing column \"{}\"", pc.name));
        };
        let cc = &child.columns[j];
        if (cc.ty.oid, cc.ty.typmod) != (pc.ty.oid, pc.ty.typmod) {
            return mismatch(format!(
                "child table \"{}\" has different type for column \"{}\"",
                child.name, pc.name
            ));
        }
        if cc.collation != pc.collation {
            return mismatch(format!(
                "child table \"{}\" has different collation for column \"{}\"",
                child.name, pc.name
            ));
        }
        if !pc.nullable && cc.nullable {
            return mismatch(format!(
                "column \"{}\" in child table must be marked NOT NULL",
                pc.name
            ));
        }
        if pc.generated && !cc.generated {
            return mismatch(format!(
                "column \"{}\" in child table must be a generated column",
                pc.name
            ));
        }
        if pc.generated && cc.default != pc.default {
            return mismatch(format!(
                "column \"{}\" in child table has a conflicting generation expression",
                pc.name
            ));
        }
        if i != j {
            bail!(
                FeatureNotSupported,
                "partitions whose columns are in another order than their parent's are not supported yet"
            );
        }
    }
    Ok(())
}

/// Each of the parent's CHECK constraints must be the child's too, with
/// the same condition.
fn same_checks(parent: &TableDef, child: &TableDef) -> Result<()> {
    for pc in &parent.checks {
        match child.checks.iter().find(|c| c.name == pc.name) {
            None => bail!(DatatypeMismatch, "child table is missing constraint \"{}\"", pc.name),
            Some(c) if c.expr != pc.expr => bail!(
                DatatypeMismatch,
                "child table \"{}\" has different definition for check constraint \"{}\"",
                child.name,
                pc.name
            ),
            Some(_) => {}
        }
    }
    Ok(())
}

/// 23514 unless every row of `child` (of its leaves, when partitioned) is
/// inside `bound` under `parent` and inside the parent's own constraint.
async fn rows_inside<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    parent: &TableDef,
    child: &TableDef,
    bound: &crate::partition::Bound<String>,
) -> Result<()> {
    let Some(key) = &parent.partition_key else { return Ok(()) };
    let types = crate::partition::key_types(parent);
    let new = crate::partition::typed(bound, &types)?;
    let mut siblings = Vec::new();
    if new.is_default() {
        for s in cat.partitions.get(&parent.oid).into_iter().flatten() {
            if let Some(of) = s.partition_of.as_ref().filter(|o| !o.bound.is_default()) {
                siblings.push(crate::partition::typed(&of.bound, &types)?);
            }
        }
    }
    let inside = |row: &[Value]| {
        let vals: Vec<&Value> = key.columns.iter().map(|&c| &row[c]).collect();
        let own = match new.is_default() {
            true => !siblings.iter().any(|b| crate::partition::takes(b, key.strategy, &vals)),
            false => crate::partition::takes(&new, key.strategy, &vals),
        };
        own && parent.partition_check.as_ref().is_none_or(|c| c.accepts(row))
    };
    if super::partitions::any_row(txn, tenant, cat, child, &|row| !inside(row)).await? {
        return Err(err!(
            CheckViolation,
            "partition constraint of relation \"{}\" is violated by some row",
            child.name
        )
        .with_table(&child.name));
    }
    Ok(())
}

/// DETACH PARTITION: `child` becomes a table of its own, keeping its rows,
/// constraints and indexes (no longer attached to the parent's).
/// CONCURRENTLY is checked as PostgreSQL checks it (outside a transaction
/// block, no DEFAULT partition) and then detaches at once; FINALIZE finds
/// no pending detach.
async fn detach<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    parent: &TableDef,
    child: &TableDef,
    mode: Option<bool>,
) -> Result<DdlResult> {
    if child.partition_of.as_ref().is_none_or(|o| o.parent != parent.oid) {
        bail!(
            UndefinedTable,
            "relation \"{}\" is not a partition of relation \"{}\"",
            child.name,
            parent.name
        );
    }
    let has_default = cat
        .partitions
        .get(&parent.oid)
        .into_iter()
        .flatten()
        .any(|p| p.partition_of.as_ref().is_some_and(|o| o.bound.is_default()));
    if mode == Some(true) && has_default {
        bail!(
            ObjectNotInPrerequisiteState,
            "cannot detach partitions concurrently when a default partition exists"
        );
    }
    if mode == Some(false) {
        return Err(err!(
            ObjectNotInPrerequisiteState,
            "cannot complete detaching partition \"{}\"",
            child.name
        )
        .with_detail("There's no pending concurrent detach."));
    }
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, parent.oid).await?;
    lock_table(txn, tenant, child.oid).await?;
    let mut cur = child.clone();
    cur.partition_of = None;
    cur.pkey_parent = None;
    for idx in &mut cur.indexes {
        idx.parent = None;
    }
    for fk in &mut cur.foreign_keys {
        fk.parent = None;
    }
    write_table(txn, tenant, &cur).await?;
    Ok(DdlResult::tag("ALTER TABLE"))
}

/// Gives partition `child` of `parent` the parent's keys `which`, each
/// attached to an equivalent index the child has of its own, or else made
/// on the child (its entries built from the child's rows). A partitioned
/// child hands them on to its partitions, which are written here; `child`
/// is the caller's to write. Returns the storage ids made.
pub(super) async fn adopt_keys<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    parent: &TableDef,
    child: &mut TableDef,
    which: Keys,
) -> Result<Vec<u64>> {
    let mut fresh = Vec::new();
    // The child's keys to hand on to its own partitions.
    let mut handed = Vec::new();
    let wants_pk = matches!(which, Keys::All | Keys::Primary);
    if wants_pk && parent.pkey_oid != 0 && !parent.primary_key.is_empty() {
        fresh.extend(adopt_primary_key(txn, tenant, cat, parent, child).await?);
        handed.push(Keys::Primary);
    }
    for idx in &parent.indexes {
        if !matches!(which, Keys::All) && which != Keys::Index(idx.oid) {
            continue;
        }
        let (oid, made) = adopt_index(txn, tenant, cat, child, idx).await?;
        fresh.extend(made);
        handed.push(Keys::Index(oid));
    }
    for fk in &parent.foreign_keys {
        if !matches!(which, Keys::All) && which != Keys::ForeignKey(fk.oid) {
            continue;
        }
        handed.push(Keys::ForeignKey(adopt_foreign_key(txn, tenant, cat, child, fk).await?));
    }
    if !child.is_partitioned() || handed.is_empty() {
        return Ok(fresh);
    }
    for g in cat.partitions.get(&child.oid).cloned().unwrap_or_default() {
        let mut g = (*g).clone();
        lock_table(txn, tenant, g.oid).await?;
        for &k in &handed {
            fresh.extend(Box::pin(adopt_keys(txn, tenant, cat, child, &mut g, k)).await?);
        }
        write_table(txn, tenant, &g).await?;
    }
    Ok(fresh)
}

/// The primary-key half of [`adopt_keys`]: the child's primary key on the
/// same columns is attached, a child without one gets one.
async fn adopt_primary_key<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    parent: &TableDef,
    child: &mut TableDef,
) -> Result<Vec<u64>> {
    if child.pkey_parent == Some(parent.pkey_oid) {
        return Ok(vec![]);
    }
    if !child.primary_key.is_empty() {
        if child.primary_key != parent.primary_key || child.pkey_parent.is_some() {
            bail!(
                InvalidTableDefinition,
                "multiple primary keys for table \"{}\" are not allowed",
                child.name
            );
        }
        child.pkey_parent = Some(parent.pkey_oid);
        return Ok(vec![]);
    }
    super::partitions::unique_covers_key(child, "PRIMARY KEY", &parent.primary_key)?;
    let taken = |n: &str| cat.relation_exists(child.namespace, n);
    let name = free_name(format!("{}_pkey", child.name), taken);
    let cols = parent.primary_key.clone();
    let fresh =
        super::add_primary_key(txn, tenant, child, cols, name, parent.pkey_deferral).await?;
    child.pkey_parent = Some(parent.pkey_oid);
    Ok(fresh)
}

/// The index half of [`adopt_keys`]: attaches the child's unattached
/// index of `idx`'s definition, or makes one. Returns the child's index's
/// OID and the storage made.
async fn adopt_index<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    child: &mut TableDef,
    idx: &IndexDef,
) -> Result<(u32, Vec<u64>)> {
    if let Some(own) = child.indexes.iter().find(|i| i.parent == Some(idx.oid)) {
        return Ok((own.oid, vec![]));
    }
    let same = child
        .indexes
        .iter_mut()
        .find(|i| i.parent.is_none() && i.constraint == idx.constraint && i.same_definition(idx));
    if let Some(own) = same {
        own.parent = Some(idx.oid);
        return Ok((own.oid, vec![]));
    }
    if idx.unique {
        super::partitions::unique_covers_key(child, "UNIQUE", &idx.columns)?;
    }
    let id = alloc(txn, tenant, 1).await?;
    let taken = |n: &str| {
        cat.relation_exists(child.namespace, n) || child.indexes.iter().any(|i| i.name == n)
    };
    let name = free_name(default_index_name(child, idx), taken);
    let made = IndexDef {
        oid: id as u32,
        name: name.clone(),
        storage: id,
        comment: None,
        parent: Some(idx.oid),
        ..idx.clone()
    };
    child.indexes.push(made);
    catalog::bind_checks(cat, child)?;
    let only_new =
        TableDef { indexes: vec![child.indexes[child.indexes.len() - 1].clone()], ..child.clone() };
    build_index(txn, tenant, &only_new, &name).await?;
    Ok((id as u32, vec![id]))
}

/// The foreign-key part of [`adopt_keys`]: the child's own foreign key of
/// `fk`'s definition stands for it, or a copy is made (under `fk`'s name
/// where the child has no constraint of that name) and checked against
/// the child's rows. Returns the child's foreign key's OID.
async fn adopt_foreign_key<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    child: &mut TableDef,
    fk: &catalog::ForeignKeyDef,
) -> Result<u32> {
    if let Some(own) = child.foreign_keys.iter().find(|f| f.parent == Some(fk.oid)) {
        return Ok(own.oid);
    }
    let same = child.foreign_keys.iter_mut().find(|f| f.parent.is_none() && f.same_definition(fk));
    if let Some(own) = same {
        own.parent = Some(fk.oid);
        return Ok(own.oid);
    }
    let taken = super::foreign_keys::constraint_names(child);
    let name = match taken.contains(&fk.name) {
        false => fk.name.clone(),
        true => {
            let cols: Vec<&str> =
                fk.columns.iter().map(|&c| child.columns[c].name.as_str()).collect();
            free_name(format!("{}_{}_fkey", child.name, cols.join("_")), |n| {
                taken.iter().any(|t| t == n)
            })
        }
    };
    let oid = alloc(txn, tenant, 1).await? as u32;
    let def =
        catalog::ForeignKeyDef { name, oid, parent: Some(fk.oid), not_valid: false, ..fk.clone() };
    super::foreign_keys::validate(txn, tenant, cat, child, &def).await?;
    child.foreign_keys.push(def);
    child.foreign_keys.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(oid)
}

/// ALTER INDEX parent_index ATTACH PARTITION index: links a partition's
/// index to its parent's index of the same definition.
async fn attach_index<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    c: &PartitionCmd,
) -> Result<DdlResult> {
    let name = bind::obj_name(&c.parent)?;
    let parent = match cat.relation(&name)? {
        Some(catalog::Relation::Index(t, i)) => (t, i),
        Some(_) => bail!(WrongObjectType, "\"{}\" is not an index", name.name),
        None if c.if_exists => {
            let mut r = DdlResult::tag("ALTER INDEX");
            r.notices.push(notice(format!("relation \"{name}\" does not exist, skipping")));
            return Ok(r);
        }
        None => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
    };
    let pname = bind::obj_name(&c.partition)?;
    let (child, ci) = match cat.relation(&pname)? {
        Some(catalog::Relation::Index(t, i)) => (t, i),
        Some(_) => bail!(InvalidObjectDefinition, "\"{}\" is not an index", pname.name),
        None => bail!(UndefinedTable, "relation \"{pname}\" does not exist"),
    };
    let (pt, pi) = parent;
    let pidx_name = index_name(&pt, pi);
    let cidx_name = index_name(&child, ci);
    let refuse = |detail: String| {
        err!(
            InvalidObjectDefinition,
            "cannot attach index \"{cidx_name}\" as a partition of index \"{pidx_name}\""
        )
        .with_detail(detail)
    };
    if !pt.is_partitioned() {
        bail!(WrongObjectType, "\"{pidx_name}\" is not a partitioned index");
    }
    if child.partition_of.as_ref().is_none_or(|o| o.parent != pt.oid) {
        return Err(refuse(format!(
            "Index \"{cidx_name}\" is not an index on any partition of table \"{}\".",
            pt.name
        )));
    }
    let poid = index_oid(&pt, pi);
    let linked = match ci {
        None => child.pkey_parent,
        Some(i) => child.indexes[i].parent,
    };
    if linked == Some(poid) {
        return Ok(DdlResult::tag("ALTER INDEX"));
    }
    if linked.is_some() {
        let e = refuse(format!("Index \"{cidx_name}\" is already attached to another index."));
        return Err(ErrorReport { code: sqlstate::SqlState::ObjectNotInPrerequisiteState, ..e });
    }
    let same = match (pi, ci) {
        (None, None) => pt.primary_key == child.primary_key,
        (Some(p), Some(i)) => pt.indexes[p].same_definition(&child.indexes[i]),
        _ => false,
    };
    if !same {
        return Err(refuse("The index definitions do not match.".into()));
    }
    let taken = match pi {
        None => child.pkey_parent.is_some(),
        Some(_) => child.indexes.iter().any(|i| i.parent == Some(poid)),
    };
    if taken {
        return Err(refuse(format!(
            "Another index is already attached for partition \"{}\".",
            child.name
        )));
    }
    let constraint = |t: &TableDef, i: Option<usize>| i.is_none_or(|i| t.indexes[i].constraint);
    if constraint(&pt, pi) && !constraint(&child, ci) {
        return Err(refuse(format!(
            "The index \"{pidx_name}\" belongs to a constraint in table \"{}\" but no constraint exists for index \"{cidx_name}\".",
            pt.name
        )));
    }
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, child.oid).await?;
    let mut cur = (*child).clone();
    match ci {
        None => cur.pkey_parent = Some(poid),
        Some(i) => cur.indexes[i].parent = Some(poid),
    }
    write_table(txn, tenant, &cur).await?;
    Ok(DdlResult::tag("ALTER INDEX"))
}

/// The name PostgreSQL gives index `idx` made on table `t` for its
/// parent's: `<table>_<key names>_idx` (`_key` for a UNIQUE constraint's),
/// an expression key named as a result column would be.
pub(super) fn default_index_name(t: &TableDef, idx: &IndexDef) -> String {
    let mut exprs = idx.exprs.iter();
    let mut names: Vec<String> = Vec::new();
    for &c in idx.columns.iter().chain(&idx.include) {
        let name = match c {
            catalog::EXPRESSION_KEY => {
                let e = exprs.next().and_then(|x| crate::parse::expr_text(x).ok());
                match e.map(|e| crate::select::derive_name(&e)) {
                    Some(n) if n != "?column?" => n,
                    _ => "expr".to_string(),
                }
            }
            c => t.columns[c].name.clone(),
        };
        names.push(name);
    }
    let suffix = if idx.constraint { "key" } else { "idx" };
    format!("{}_{}_{suffix}", t.name, names.join("_"))
}

/// The name of table `t`'s primary key index (None) or `indexes[i]`.
fn index_name(t: &TableDef, i: Option<usize>) -> String {
    match i {
        None => t.pkey_name.clone().unwrap_or_default(),
        Some(i) => t.indexes[i].name.clone(),
    }
}

/// The OID of table `t`'s primary key index (None) or `indexes[i]`.
fn index_oid(t: &TableDef, i: Option<usize>) -> u32 {
    match i {
        None => t.pkey_oid,
        Some(i) => t.indexes[i].oid,
    }
}
