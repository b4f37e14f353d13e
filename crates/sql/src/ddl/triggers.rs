//! CREATE TRIGGER, DROP TRIGGER and ALTER TABLE ... ENABLE | DISABLE
//! TRIGGER. A trigger is stored on its table or view
//! ([`catalog::TriggerDef`]); triggers.rs fires them.

use super::*;
use crate::catalog::TriggerDef;

/// The relation a trigger is on: a table, or a view (INSTEAD OF row
/// triggers, statement triggers).
enum On {
    Table(Arc<TableDef>),
    View(Arc<catalog::ViewDef>),
}

impl On {
    /// The table or view `n` names, if it names one.
    fn find(cat: &Catalog, n: &catalog::ObjName) -> Result<Option<On>> {
        Ok(match cat.relation(n)? {
            Some(catalog::Relation::Table(t)) if t.matview.is_none() => Some(On::Table(t)),
            Some(catalog::Relation::View(v)) => Some(On::View(v)),
            _ => None,
        })
    }

    fn name(&self) -> &str {
        match self {
            On::Table(t) => &t.name,
            On::View(v) => &v.name,
        }
    }

    fn triggers(&self) -> &[TriggerDef] {
        match self {
            On::Table(t) => &t.triggers,
            On::View(v) => &v.triggers,
        }
    }

    /// Stores the relation with `triggers` in place of its own.
    async fn store<T: Txn>(
        &self,
        txn: &mut T,
        tenant: TenantId,
        triggers: Vec<TriggerDef>,
    ) -> Result<()> {
        bump_version(txn, tenant).await?;
        match self {
            On::Table(t) => {
                lock_table(txn, tenant, t.oid).await?;
                write_table(txn, tenant, &TableDef { triggers, ..(**t).clone() }).await
            }
            On::View(v) => {
                let view = catalog::ViewDef { triggers, ..(**v).clone() };
                put_entry(txn, keys::view(tenant, v.oid), json_entry(&view)).await
            }
        }
    }
}

/// CREATE [OR REPLACE] TRIGGER, with its function's arguments.
pub async fn create_trigger<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    ct: &ast::CreateTrigger,
    args: &[String],
) -> Result<DdlResult> {
    let name = bind::object_name(&ct.name)?;
    if ct.is_constraint {
        bail!(FeatureNotSupported, "constraint triggers are not supported");
    }
    if !ct.referencing.is_empty() {
        bail!(FeatureNotSupported, "transition tables (REFERENCING) are not supported");
    }
    let tname = bind::obj_name(&ct.table_name)?;
    let Some(on) = On::find(cat, &tname)? else {
        if cat.relation(&tname)?.is_some() {
            return Err(err!(WrongObjectType, "\"{}\" is not a table or view", tname.name)
                .with_detail("This operation is not supported for this kind of relation."));
        }
        bail!(UndefinedTable, "relation \"{tname}\" does not exist")
    };
    let instead = matches!(ct.period, Some(ast::TriggerPeriod::InsteadOf));
    let row = matches!(
        ct.trigger_object,
        Some(ast::TriggerObjectKind::ForEach(ast::TriggerObject::Row))
            | Some(ast::TriggerObjectKind::For(ast::TriggerObject::Row))
    );
    let truncate = ct.events.iter().any(|e| matches!(e, ast::TriggerEvent::Truncate));
    // PostgreSQL's checks, in its order.
    let columns_named: Vec<String> = match &on {
        On::Table(t) => {
            refuse_temporary(t, "CREATE TRIGGER")?;
            if row {
                super::partitions::refuse_partitioned(t, "row-level triggers")?;
            }
            if instead {
                return Err(err!(WrongObjectType, "\"{}\" is a table", t.name)
                    .with_detail("Tables cannot have INSTEAD OF triggers."));
            }
            t.columns.iter().map(|c| c.name.clone()).collect()
        }
        On::View(v) => {
            if !instead && row {
                return Err(err!(WrongObjectType, "\"{}\" is a view", v.name)
                    .with_detail("Views cannot have row-level BEFORE or AFTER triggers."));
            }
            if truncate {
                return Err(err!(WrongObjectType, "\"{}\" is a view", v.name)
                    .with_detail("Views cannot have TRUNCATE triggers."));
            }
            v.columns.clone()
        }
    };
    let mut tgtype = match ct.period {
        Some(ast::TriggerPeriod::Before) => TriggerDef::BEFORE,
        Some(ast::TriggerPeriod::After) => 0,
        Some(ast::TriggerPeriod::InsteadOf) => TriggerDef::INSTEAD,
        _ => bail!(SyntaxError, "syntax error at or near \"ON\""),
    };
    if row {
        tgtype |= TriggerDef::ROW;
    }
    let mut columns = Vec::new();
    for e in &ct.events {
        tgtype |= match e {
            ast::TriggerEvent::Insert => TriggerDef::INSERT,
            ast::TriggerEvent::Delete => TriggerDef::DELETE,
            ast::TriggerEvent::Update(cols) => {
                for c in cols {
                    let c = bind::ident(c);
                    match columns_named.iter().position(|x| *x == c) {
                        Some(i) if !columns.contains(&i) => columns.push(i),
                        Some(_) => {}
                        None => bail!(
                            UndefinedColumn,
                            "column \"{c}\" of relation \"{}\" does not exist",
                            on.name()
                        ),
                    }
                }
                TriggerDef::UPDATE
            }
            ast::TriggerEvent::Truncate if row => {
                bail!(FeatureNotSupported, "TRUNCATE FOR EACH ROW triggers are not supported")
            }
            ast::TriggerEvent::Truncate => TriggerDef::TRUNCATE,
        };
    }
    if instead {
        if !row {
            bail!(FeatureNotSupported, "INSTEAD OF triggers must be FOR EACH ROW");
        }
        if ct.condition.is_some() {
            bail!(FeatureNotSupported, "INSTEAD OF triggers cannot have WHEN conditions");
        }
        if !columns.is_empty() {
            bail!(FeatureNotSupported, "INSTEAD OF triggers cannot have column lists");
        }
    }
    let when = match &ct.condition {
        Some(c) => Some(check_when(c, tgtype)?),
        None => None,
    };
    let Some(exec) = &ct.exec_body else {
        bail!(SyntaxError, "syntax error at or near \"EXECUTE\"");
    };
    let function = trigger_function(cat, &exec.func_desc.name)?;
    let mut def = TriggerDef {
        oid: 0,
        name: name.clone(),
        tgtype,
        columns,
        when,
        function,
        args: args.to_vec(),
        enabled: 'O',
    };
    let mut triggers = on.triggers().to_vec();
    match triggers.iter().position(|t| t.name == name) {
        Some(i) if ct.or_replace => {
            def.oid = triggers[i].oid;
            triggers[i] = def;
        }
        Some(_) => bail!(
            DuplicateObject,
            "trigger \"{name}\" for relation \"{}\" already exists",
            on.name()
        ),
        None => {
            def.oid = alloc(txn, tenant, 1).await? as u32;
            triggers.push(def);
            triggers.sort_by(|a, b| a.name.cmp(&b.name));
        }
    }
    on.store(txn, tenant, triggers).await?;
    Ok(DdlResult::tag("CREATE TRIGGER"))
}

/// The OID of the trigger function `name()`, which must return trigger.
fn trigger_function(cat: &Catalog, name: &ast::ObjectName) -> Result<u32> {
    let n = bind::obj_name(name)?;
    let path = cat.lookup_path(&n, false)?;
    for ns in path.iter() {
        let found = cat.functions.get(&(*ns, n.name.clone())).into_iter().flatten();
        if let Some(f) = found.into_iter().find(|f| f.args.is_empty()) {
            if !f.returns_trigger() {
                bail!(InvalidObjectDefinition, "function {} must return type trigger", n.name);
            }
            return Ok(f.oid);
        }
    }
    bail!(UndefinedFunction, "function {n}() does not exist")
}

/// Checks a WHEN condition's references to NEW and OLD against the
/// trigger's level and events, and returns its text.
fn check_when(cond: &ast::Expr, tgtype: i16) -> Result<String> {
    use sqlparser::ast::Visit;
    let (mut new, mut old) = (false, false);
    let _ = cond.visit(&mut RecordRefs { new: &mut new, old: &mut old });
    if (new || old) && tgtype & TriggerDef::ROW == 0 {
        bail!(
            InvalidObjectDefinition,
            "statement trigger's WHEN condition cannot reference column values"
        );
    }
    if old && tgtype & TriggerDef::INSERT != 0 {
        bail!(
            InvalidObjectDefinition,
            "INSERT trigger's WHEN condition cannot reference OLD values"
        );
    }
    if new && tgtype & TriggerDef::DELETE != 0 {
        bail!(
            InvalidObjectDefinition,
            "DELETE trigger's WHEN condition cannot reference NEW values"
        );
    }
    // WHEN's own parentheses are not part of the condition (nor are the
    // extra ones pg_get_triggerdef prints, which a restored dump has).
    let mut c = cond;
    while let ast::Expr::Nested(inner) = c {
        c = inner;
    }
    Ok(c.to_string())
}

/// Notes whether an expression names NEW or OLD.
struct RecordRefs<'a> {
    new: &'a mut bool,
    old: &'a mut bool,
}

impl ast::Visitor for RecordRefs<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &ast::Expr) -> std::ops::ControlFlow<()> {
        let first = match e {
            ast::Expr::CompoundIdentifier(parts) => parts.first().map(bind::ident),
            ast::Expr::Identifier(i) => Some(bind::ident(i)),
            _ => None,
        };
        match first.as_deref() {
            Some("new") => *self.new = true,
            Some("old") => *self.old = true,
            _ => {}
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// DROP TRIGGER [IF EXISTS] name ON table.
pub async fn drop_trigger<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    dt: &ast::DropTrigger,
) -> Result<DdlResult> {
    let mut r = DdlResult::tag("DROP TRIGGER");
    let name = bind::object_name(&dt.trigger_name)?;
    let Some(tname) = &dt.table_name else {
        bail!(SyntaxError, "syntax error at end of input");
    };
    let tname = bind::obj_name(tname)?;
    let on = match On::find(cat, &tname)? {
        Some(on) => on,
        None if dt.if_exists => {
            r.notices.push(notice(format!("relation \"{tname}\" does not exist, skipping")));
            return Ok(r);
        }
        None => bail!(UndefinedTable, "relation \"{tname}\" does not exist"),
    };
    let Some(i) = on.triggers().iter().position(|t| t.name == name) else {
        if dt.if_exists {
            r.notices.push(notice(format!(
                "trigger \"{name}\" for relation \"{}\" does not exist, skipping",
                on.name()
            )));
            return Ok(r);
        }
        bail!(UndefinedObject, "trigger \"{name}\" for table \"{}\" does not exist", on.name());
    };
    let mut triggers = on.triggers().to_vec();
    triggers.remove(i);
    on.store(txn, tenant, triggers).await?;
    Ok(r)
}

/// ALTER TRIGGER name ON table RENAME TO new_name.
pub async fn rename_trigger<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    r: &crate::parse::RenameTrigger,
) -> Result<DdlResult> {
    let tname = bind::obj_name(&r.table)?;
    let Some(on) = On::find(cat, &tname)? else {
        bail!(UndefinedTable, "relation \"{tname}\" does not exist")
    };
    let Some(i) = on.triggers().iter().position(|t| t.name == r.name) else {
        bail!(UndefinedObject, "trigger \"{}\" for table \"{}\" does not exist", r.name, on.name());
    };
    if on.triggers().iter().any(|t| t.name == r.new_name) {
        bail!(
            DuplicateObject,
            "trigger \"{}\" for relation \"{}\" already exists",
            r.new_name,
            on.name()
        );
    }
    let mut triggers = on.triggers().to_vec();
    triggers[i].name = r.new_name.clone();
    triggers.sort_by(|a, b| a.name.cmp(&b.name));
    on.store(txn, tenant, triggers).await?;
    Ok(DdlResult::tag("ALTER TRIGGER"))
}

/// ALTER TABLE ... ENABLE | DISABLE TRIGGER name | ALL | USER, on the
/// table definition being altered.
pub fn set_enabled(t: &mut TableDef, name: &ast::Ident, enabled: bool) -> Result<()> {
    let n = bind::ident(name);
    let state = if enabled { 'O' } else { 'D' };
    if name.quote_style.is_none() && (n == "all" || n == "user") {
        t.triggers.iter_mut().for_each(|tr| tr.enabled = state);
        return Ok(());
    }
    match t.triggers.iter_mut().find(|tr| tr.name == n) {
        Some(tr) => {
            tr.enabled = state;
            Ok(())
        }
        None => bail!(UndefinedObject, "trigger \"{n}\" for table \"{}\" does not exist", t.name),
    }
}

/// The triggers that call function `oid`, as (trigger, table) names.
pub fn triggers_calling(cat: &Catalog, oid: u32) -> Vec<(String, String)> {
    let tables = cat.tables.values().map(|t| (&t.triggers, &t.name));
    let views = cat.views.values().map(|v| (&v.triggers, &v.name));
    tables
        .chain(views)
        .flat_map(|(triggers, on)| {
            triggers.iter().filter(|tr| tr.function == oid).map(|tr| (tr.name.clone(), on.clone()))
        })
        .collect()
}
