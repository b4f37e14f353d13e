//! CREATE TABLE ... PARTITION BY and PARTITION OF, ALTER TABLE ... ATTACH
//! and DETACH PARTITION: partition keys and bounds checked as PostgreSQL
//! checks them (see partition.rs for what they mean).

use super::*;
use crate::partition::{Bound, Datum, PartitionKey, PartitionOf, Strategy};

/// The PARTITION BY clause of table `t` (whose columns are known), as
/// sqlparser reads it: a call `RANGE(a, b)`, `LIST(a)` or `HASH(a)`.
pub(super) fn key(t: &TableDef, by: &ast::Expr) -> Result<PartitionKey> {
    let ast::Expr::Function(f) = by else {
        bail!(SyntaxError, "syntax error at or near \"{by}\"");
    };
    let word = f.name.to_string().to_lowercase();
    let strategy = match word.as_str() {
        "range" => Strategy::Range,
        "list" => Strategy::List,
        "hash" => Strategy::Hash,
        _ => bail!(InvalidParameterValue, "unrecognized partitioning strategy \"{word}\""),
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        bail!(SyntaxError, "syntax error at or near \"{by}\"");
    };
    let mut columns = Vec::with_capacity(list.args.len());
    for a in &list.args {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
            bail!(SyntaxError, "syntax error at or near \"{a}\"");
        };
        let ast::Expr::Identifier(id) = e else {
            bail!(FeatureNotSupported, "partition keys on expressions are not supported yet");
        };
        let name = bind::ident(id);
        let Some(c) = t.column_index(&name) else {
            bail!(UndefinedColumn, "column \"{name}\" named in partition key does not exist");
        };
        let ty = t.columns[c].ty.to_type();
        if strategy == Strategy::Hash && !crate::partition::hash::supported(&ty) {
            bail!(FeatureNotSupported, "hash partitioning on type {ty} is not supported yet");
        }
        if t.columns[c].generated {
            bail!(InvalidObjectDefinition, "cannot use generated column in partition key");
        }
        columns.push(c);
    }
    if columns.is_empty() {
        bail!(SyntaxError, "syntax error at or near \")\"");
    }
    if strategy == Strategy::List && columns.len() > 1 {
        bail!(
            InvalidObjectDefinition,
            "cannot use \"list\" partition strategy with more than one column"
        );
    }
    if t.temporary {
        bail!(FeatureNotSupported, "temporary partitioned tables are not supported yet");
    }
    Ok(PartitionKey { strategy, columns })
}

/// 0A000 unless a PRIMARY KEY or UNIQUE constraint (`what`) on columns
/// `cols` of partitioned table `t` covers its partition key.
pub(super) fn unique_covers_key(t: &TableDef, what: &str, cols: &[usize]) -> Result<()> {
    let Some(k) = &t.partition_key else { return Ok(()) };
    if let Some(&c) = k.columns.iter().find(|c| !cols.contains(c)) {
        return Err(err!(
            FeatureNotSupported,
            "unique constraint on partitioned table must include all partitioning columns"
        )
        .with_detail(format!(
            "{what} constraint on table \"{}\" lacks column \"{}\" which is part of the partition key.",
            t.name, t.columns[c].name
        )));
    }
    Ok(())
}

/// 0A000 for what partitioned tables cannot have yet.
pub(super) fn refuse_partitioned(t: &TableDef, what: &str) -> Result<()> {
    if t.is_partitioned() {
        bail!(FeatureNotSupported, "{what} on partitioned tables are not supported yet");
    }
    Ok(())
}

/// 0A000 for the ALTER TABLE actions on a partitioned table or a partition
/// that would make their columns differ (a partition has its parent's
/// columns in its parent's order) or that would have to reach every
/// partition.
pub(super) fn refuse_alter(t: &TableDef, ops: &[ast::AlterTableOperation]) -> Result<()> {
    use ast::AlterTableOperation as Op;
    if !t.is_partitioned() && t.partition_of.is_none() {
        return Ok(());
    }
    for op in ops {
        let fine = match op {
            Op::RenameTable { .. }
            | Op::OwnerTo { .. }
            | Op::EnableTrigger { .. }
            | Op::DisableTrigger { .. }
            | Op::SetOptionsParens { .. }
            | Op::ReplicaIdentity { .. }
            | Op::RenameConstraint { .. }
            | Op::ValidateConstraint { .. } => true,
            Op::AlterColumn {
                op:
                    ast::AlterColumnOperation::SetDefault { .. }
                    | ast::AlterColumnOperation::DropDefault,
                ..
            } => true,
            // The parent's keys reach its partitions (attach.rs).
            Op::AddConstraint {
                constraint:
                    ast::TableConstraint::PrimaryKey(_)
                    | ast::TableConstraint::Unique(_)
                    | ast::TableConstraint::ForeignKey(_),
                ..
            } => true,
            // A partition may have constraints of its own, but not drop
            // the ones attached to its parent's.
            Op::DropConstraint { name, .. } if !t.is_partitioned() => {
                attached_constraint(t, &bind::ident(name))?;
                true
            }
            Op::AddConstraint { .. } => !t.is_partitioned(),
            _ => false,
        };
        if !fine {
            let what = if t.is_partitioned() { "partitioned tables" } else { "partitions" };
            bail!(FeatureNotSupported, "ALTER TABLE ... {op} on {what} is not supported yet");
        }
    }
    Ok(())
}

/// 42P16 if `name` is a constraint of partition `t` attached to its
/// parent's (its primary key, a UNIQUE constraint's index, a foreign key).
fn attached_constraint(t: &TableDef, name: &str) -> Result<()> {
    let pkey = t.pkey_parent.is_some() && t.pkey_name.as_deref() == Some(name);
    let unique = t.indexes.iter().any(|i| i.constraint && i.parent.is_some() && i.name == name);
    let fk = t.foreign_keys.iter().any(|f| f.parent.is_some() && f.name == name);
    if pkey || unique || fk {
        bail!(
            InvalidTableDefinition,
            "cannot drop inherited constraint \"{name}\" of relation \"{}\"",
            t.name
        );
    }
    Ok(())
}

/// 2BP01 for DROP INDEX of index `idx` of partition `t` attached to its
/// parent's index, as PostgreSQL's dependency on the parent's reports it.
pub(super) fn refuse_attached_drop(cat: &Catalog, t: &TableDef, idx: &IndexDef) -> Result<()> {
    let Some(oid) = idx.parent else { return Ok(()) };
    let parent = t.partition_of.as_ref().and_then(|o| cat.table_by_oid(o.parent));
    let name = parent
        .and_then(|p| p.indexes.iter().find(|i| i.oid == oid).map(|i| i.name.clone()))
        .unwrap_or_default();
    Err(err!(
        DependentObjectsStillExist,
        "cannot drop index {} because index {name} requires it",
        idx.name
    )
    .with_hint(format!("You can drop index {name} instead.")))
}

/// Drops, with partitioned table `t`'s index `oid`, the indexes of its
/// partitions attached to it (and theirs, further down).
pub(super) async fn drop_attached<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    t: &TableDef,
    oid: u32,
) -> Result<()> {
    for p in cat.partitions.get(&t.oid).cloned().unwrap_or_default() {
        let Some(i) = p.indexes.iter().position(|x| x.parent == Some(oid)) else { continue };
        lock_table(txn, tenant, p.oid).await?;
        let mut np = (*p).clone();
        let removed = np.indexes.remove(i);
        txn.delete_range_after_commit(keys::storage(tenant, removed.storage)).map_err(from_kv)?;
        write_table(txn, tenant, &np).await?;
        Box::pin(drop_attached(txn, tenant, cat, &p, removed.oid)).await?;
    }
    Ok(())
}

/// The partitioned table named by PARTITION OF or ATTACH PARTITION.
fn parent_table(cat: &Catalog, name: &ast::ObjectName) -> Result<Arc<TableDef>> {
    let parent = cat.must_table(&bind::obj_name(name)?)?;
    if !parent.is_partitioned() {
        bail!(InvalidObjectDefinition, "\"{}\" is not partitioned", parent.name);
    }
    Ok(parent)
}

/// CREATE TABLE name PARTITION OF parent FOR VALUES ... | DEFAULT: a table
/// with the parent's columns, constraints and indexes and the bound.
pub(super) async fn create_partition<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    ct: &ast::CreateTable,
    (ns, name): (u32, String),
    owner: &str,
) -> Result<DdlResult> {
    let Some(of) = &ct.partition_of else {
        bail!(InternalError, "create_partition without PARTITION OF");
    };
    let parent = parent_table(cat, of)?;
    if ct.temporary || parent.temporary {
        bail!(FeatureNotSupported, "temporary partitions are not supported yet");
    }
    if !ct.columns.is_empty() {
        bail!(FeatureNotSupported, "column definitions in PARTITION OF are not supported yet");
    }
    let Some(fv) = &ct.for_values else {
        bail!(SyntaxError, "syntax error: PARTITION OF needs FOR VALUES or DEFAULT");
    };
    let bound = bound(cat, &parent, &name, fv)?;
    bump_version(txn, tenant).await?;
    lock_table(txn, tenant, parent.oid).await?;
    let mut t = TableDef::new(name.clone());
    t.namespace = ns;
    t.access = crate::acl::Ownership::created(cat, owner, crate::acl::ObjKind::Table, ns);
    // A parent's identity column numbers the rows written through it; the
    // partition's column is a plain one, as in PostgreSQL 15.
    t.columns = parent
        .columns
        .iter()
        .map(|c| ColumnDef {
            comment: None,
            identity: None,
            // An identity column's default is its sequence's nextval.
            default: c.default.clone().filter(|_| c.identity.is_none()),
            ..c.clone()
        })
        .collect();
    let mut checks = Vec::new();
    for con in &ct.constraints {
        match con {
            ast::TableConstraint::Check(c) => {
                checks.push((c.name.as_ref().map(bind::ident), (*c.expr).clone(), None))
            }
            other => bail!(
                FeatureNotSupported,
                "constraints other than CHECK in PARTITION OF are not supported yet: {other}"
            ),
        }
    }
    let fresh = like_parent(txn, tenant, cat, &parent, &mut t).await?;
    add_checks(cat, &mut t, checks)?;
    if let Some(by) = &ct.partition_by {
        t.partition_key = Some(key(&t, by)?);
    }
    t.partition_of = Some(PartitionOf { parent: parent.oid, bound: bound.clone() });
    default_keeps_rows(txn, tenant, cat, &parent, &bound).await?;
    write_table(txn, tenant, &t).await?;
    Ok(DdlResult { tag: "CREATE TABLE".into(), fresh, ..Default::default() })
}

/// Gives new partition `t` (whose columns are its parent's) the parent's
/// CHECK constraints, primary key, unique and other indexes and foreign
/// keys, with OIDs and storage of its own; returns the storage ids made.
async fn like_parent<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    parent: &TableDef,
    t: &mut TableDef,
) -> Result<Vec<u64>> {
    let n = 3 + parent.indexes.len() as u64 + parent.foreign_keys.len() as u64;
    let base = alloc(txn, tenant, n).await?;
    t.oid = base as u32;
    t.storage = base + 1;
    let name = t.name.clone();
    let taken = |n: &str, made: &[IndexDef]| {
        cat.relation_exists(t.namespace, n) || made.iter().any(|i| i.name == n) || n == name
    };
    t.checks = parent.checks.clone();
    t.primary_key = parent.primary_key.clone();
    if !t.primary_key.is_empty() {
        t.pkey_oid = (base + 2) as u32;
        t.pkey_deferral = parent.pkey_deferral;
        t.pkey_parent = Some(parent.pkey_oid);
        t.pkey_name = Some(free_name(format!("{name}_pkey"), |n| taken(n, &[])));
    }
    let mut fresh = vec![t.storage];
    let mut made: Vec<IndexDef> = Vec::new();
    for (i, idx) in parent.indexes.iter().enumerate() {
        let id = base + 3 + i as u64;
        let base = super::attach::default_index_name(t, idx);
        let iname = free_name(base, |n| taken(n, &made));
        made.push(IndexDef {
            oid: id as u32,
            name: iname,
            storage: id,
            comment: None,
            parent: Some(idx.oid),
            ..idx.clone()
        });
        fresh.push(id);
    }
    t.indexes = made;
    let first_fk = base + 3 + parent.indexes.len() as u64;
    t.foreign_keys = parent.foreign_keys.clone();
    for (j, fk) in t.foreign_keys.iter_mut().enumerate() {
        fk.parent = Some(fk.oid);
        fk.oid = (first_fk + j as u64) as u32;
    }
    Ok(fresh)
}

/// The bound FOR VALUES gives partition `name` of `parent`, its values
/// in the key's types, checked against the parent's other partitions.
pub(super) fn bound(
    cat: &Catalog,
    parent: &TableDef,
    name: &str,
    fv: &ast::ForValues,
) -> Result<Bound<String>> {
    let Some(key) = &parent.partition_key else {
        bail!(WrongObjectType, "table \"{}\" is not partitioned", parent.name);
    };
    let types = crate::partition::key_types(parent);
    let names: Vec<&str> = key.columns.iter().map(|&c| parent.columns[c].name.as_str()).collect();
    let wrong = || {
        err!(
            InvalidTableDefinition,
            "invalid bound specification for a {} partition",
            key.strategy.sql().to_lowercase()
        )
    };
    let b = match (fv, key.strategy) {
        (ast::ForValues::Default, Strategy::Hash) => {
            bail!(
                InvalidTableDefinition,
                "a hash-partitioned table may not have a default partition"
            )
        }
        (ast::ForValues::Default, _) => Bound::Default,
        (ast::ForValues::In(vs), Strategy::List) => {
            let mut out: Vec<Option<String>> = Vec::with_capacity(vs.len());
            for e in vs {
                let v = value(cat, e, &types[0], names[0])?;
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            Bound::List(out)
        }
        (ast::ForValues::From { from, to }, Strategy::Range) => {
            let datums =
                |ds: &[ast::PartitionBoundValue], which: &str| -> Result<Vec<Datum<String>>> {
                    if ds.len() != types.len() {
                        bail!(
                            InvalidTableDefinition,
                            "{which} must specify exactly one value per partitioning column"
                        );
                    }
                    let mut out = Vec::with_capacity(ds.len());
                    for (i, d) in ds.iter().enumerate() {
                        out.push(match d {
                            ast::PartitionBoundValue::MinValue => Datum::Min,
                            ast::PartitionBoundValue::MaxValue => Datum::Max,
                            ast::PartitionBoundValue::Expr(e) => {
                                match value(cat, e, &types[i], names[i])? {
                                    Some(v) => Datum::Value(v),
                                    None => bail!(
                                        InvalidObjectDefinition,
                                        "cannot specify NULL in range bound"
                                    ),
                                }
                            }
                        });
                    }
                    infinite_bounds_last(&out)?;
                    Ok(out)
                };
            Bound::Range { from: datums(from, "FROM")?, to: datums(to, "TO")? }
        }
        (&ast::ForValues::With { modulus, remainder }, Strategy::Hash) => {
            if modulus == 0 || modulus > i32::MAX as u64 {
                bail!(
                    InvalidTableDefinition,
                    "modulus for hash partition must be an integer value greater than zero"
                );
            }
            if remainder >= modulus {
                bail!(
                    InvalidTableDefinition,
                    "remainder for hash partition must be less than modulus"
                );
            }
            Bound::Hash { modulus: modulus as u32, remainder: remainder as u32 }
        }
        _ => return Err(wrong()),
    };
    check_against_siblings(cat, parent, name, &b, &types)?;
    Ok(b)
}

/// PostgreSQL's rule that MINVALUE or MAXVALUE is followed by the same.
fn infinite_bounds_last(ds: &[Datum<String>]) -> Result<()> {
    let mut seen: Option<&Datum<String>> = None;
    for d in ds {
        match (seen, d) {
            (Some(Datum::Min), Datum::Min) | (Some(Datum::Max), Datum::Max) => {}
            (Some(Datum::Min), _) => {
                bail!(DatatypeMismatch, "every bound following MINVALUE must also be MINVALUE")
            }
            (Some(Datum::Max), _) => {
                bail!(DatatypeMismatch, "every bound following MAXVALUE must also be MAXVALUE")
            }
            (_, Datum::Min | Datum::Max) => seen = Some(d),
            _ => {}
        }
    }
    Ok(())
}

/// A bound value: the constant expression `e` in key column `column`'s
/// type `ty`, as text (None for NULL).
fn value(cat: &Catalog, e: &ast::Expr, ty: &DataType, column: &str) -> Result<Option<String>> {
    let mut b = Binder::new(cat, vec![]);
    let x = b
        .assign_with(e, &Scope::default(), ty, |_| {
            err!(
                DatatypeMismatch,
                "specified value cannot be cast to type {ty} for column \"{column}\""
            )
        })
        .map_err(|e| {
            let column = e.code == sqlstate::SqlState::UndefinedColumn
                || e.message.starts_with("missing FROM-clause entry");
            match column {
                true => err!(
                    FeatureNotSupported,
                    "cannot use column reference in partition bound expression"
                ),
                false => e,
            }
        })?;
    let v = x.eval(&[], &crate::expr::EvalContext::default())?;
    let v = dml::enforce_type(v, ty)?;
    if v.is_null() {
        return Ok(None);
    }
    let mut out = Vec::new();
    sqltypes::text::format_text(&v, &mut out);
    Ok(Some(String::from_utf8_lossy(&out).into_owned()))
}

/// PostgreSQL's checks of a new bound against the partitions `parent`
/// has: no overlap, one DEFAULT, moduli that divide each other.
fn check_against_siblings(
    cat: &Catalog,
    parent: &TableDef,
    name: &str,
    b: &Bound<String>,
    types: &[DataType],
) -> Result<()> {
    let new = crate::partition::typed(b, types)?;
    if let Bound::Range { from, to } = &new {
        if crate::partition::bound_cmp(from, to) != std::cmp::Ordering::Less {
            let show = |ds: &[Datum<String>]| {
                ds.iter()
                    .map(|d| match d {
                        Datum::Min => "MINVALUE".to_string(),
                        Datum::Max => "MAXVALUE".to_string(),
                        Datum::Value(v) => v.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let Bound::Range { from: f, to: t } = b else { unreachable!("range bound") };
            return Err(err!(
                InvalidObjectDefinition,
                "empty range bound specified for partition \"{name}\""
            )
            .with_detail(format!(
                "Specified lower bound ({}) is greater than or equal to upper bound ({}).",
                show(f),
                show(t)
            )));
        }
    }
    for sib in cat.partitions.get(&parent.oid).into_iter().flatten() {
        let Some(of) = &sib.partition_of else { continue };
        if sib.name == name && sib.namespace == parent.namespace {
            continue;
        }
        let old = crate::partition::typed(&of.bound, types)?;
        let clash = match (&new, &old) {
            (Bound::Default, Bound::Default) => {
                return Err(err!(
                    InvalidObjectDefinition,
                    "partition \"{name}\" conflicts with existing default partition \"{}\"",
                    sib.name
                ))
            }
            (Bound::List(a), Bound::List(b)) => a.iter().any(|v| b.iter().any(|w| same(v, w))),
            (Bound::Range { from: f, to: t }, Bound::Range { from: g, to: u }) => {
                crate::partition::bound_cmp(f, u).is_lt()
                    && crate::partition::bound_cmp(g, t).is_lt()
            }
            (
                &Bound::Hash { modulus: m, remainder: r },
                &Bound::Hash { modulus: n, remainder: s },
            ) => {
                let (small, large) = (m.min(n), m.max(n));
                if large % small != 0 {
                    let detail = if m < n {
                        format!(
                            "The new modulus {m} is not a factor of {n}, the modulus of existing partition \"{}\".",
                            sib.name
                        )
                    } else {
                        format!(
                            "The new modulus {m} is not divisible by {n}, the modulus of existing partition \"{}\".",
                            sib.name
                        )
                    };
                    return Err(err!(
                        InvalidObjectDefinition,
                        "every hash partition modulus must be a factor of the next larger modulus"
                    )
                    .with_detail(detail));
                }
                r % small == s % small
            }
            _ => false,
        };
        if clash {
            bail!(
                InvalidObjectDefinition,
                "partition \"{name}\" would overlap partition \"{}\"",
                sib.name
            );
        }
    }
    Ok(())
}

fn same(a: &Option<Value>, b: &Option<Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => sqltypes::ops::sort_cmp(x, y).is_eq(),
        _ => false,
    }
}

/// A new partition's bound must not take rows the DEFAULT partition of
/// `parent` already holds (23514 as in PostgreSQL).
pub(super) async fn default_keeps_rows<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    parent: &TableDef,
    b: &Bound<String>,
) -> Result<()> {
    if b.is_default() {
        return Ok(());
    }
    let Some(key) = &parent.partition_key else { return Ok(()) };
    let kids = cat.partitions.get(&parent.oid).cloned().unwrap_or_default();
    let Some(def) =
        kids.iter().find(|k| k.partition_of.as_ref().is_some_and(|o| o.bound.is_default()))
    else {
        return Ok(());
    };
    let types = crate::partition::key_types(parent);
    let new = crate::partition::typed(b, &types)?;
    let taken = |row: &[Value]| {
        let vals: Vec<&Value> = key.columns.iter().map(|&c| &row[c]).collect();
        crate::partition::takes(&new, key.strategy, &vals)
    };
    if any_row(txn, tenant, cat, def, &taken).await? {
        bail!(
            CheckViolation,
            "updated partition constraint for default partition \"{}\" would be violated by some row",
            def.name
        );
    }
    Ok(())
}

/// True if some row of table `t` (of its leaf partitions, when it is
/// partitioned) satisfies `pred`; reads until it finds one.
pub(super) async fn any_row<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    t: &TableDef,
    pred: &(dyn Fn(&[Value]) -> bool + Sync),
) -> Result<bool> {
    let leaves = match t.is_partitioned() {
        true => crate::partition::leaves(&cat.partitions, t),
        false => vec![Arc::new(t.clone())],
    };
    for leaf in leaves {
        let mut next = Some(keys::storage(tenant, leaf.storage).start);
        while let Some(start) = next {
            let (rows, n) = table_batch(txn, tenant, &leaf, start).await?;
            next = n;
            if rows.iter().any(|(_, row)| pred(row)) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}
