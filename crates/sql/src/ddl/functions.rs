//! CREATE [OR REPLACE] FUNCTION ... LANGUAGE sql and DROP FUNCTION. A
//! function is one catalog row ([`catalog::FunctionDef`]); its body is
//! checked here by binding it with its parameters, and bound again into
//! each calling query (bind/user_functions.rs).

use super::*;
use crate::bind::user_functions::body_types;
use crate::catalog::{FunctionArg, FunctionDef, FunctionReturns, ParamMode};
use crate::parse::Stmt;

/// CREATE [OR REPLACE] FUNCTION (the body checked unless
/// check_function_bodies is off).
pub async fn create_function<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    cf: &ast::CreateFunction,
    owner: &str,
    settings: &crate::settings::Settings,
    procedure: bool,
) -> Result<DdlResult> {
    let (namespace, name) = new_name(cat, &cf.name)?;
    let mut def = definition(cat, cf, namespace, name, owner, procedure)?;
    set_clauses(&cf.set_params, settings, &mut def.config)?;
    // Row types of different tables share the `record` OID: their names
    // tell them apart.
    let key = |a: &crate::catalog::FunctionArg| {
        (a.ty.oid, (a.ty.oid == 2249).then(|| a.type_sql.clone()))
    };
    let same_args = |d: &FunctionDef| d.args.iter().map(key).eq(def.args.iter().map(key));
    let existing = cat
        .functions
        .get(&(namespace, def.name.clone()))
        .and_then(|fs| fs.iter().find(|d| same_args(d)).cloned());
    if let Some(old) = &existing {
        if !cf.or_replace {
            bail!(
                DuplicateFunction,
                "function \"{}\" already exists with same argument types",
                def.name
            );
        }
        old.access.must_own(cat, owner, crate::acl::ObjKind::Function, &def.name)?;
        if old.procedure != def.procedure {
            let kind = if old.procedure { "procedure" } else { "function" };
            return Err(err!(WrongObjectType, "cannot change routine kind")
                .with_detail(format!("\"{}\" is a {kind}.", def.name)));
        }
        if old.returns != def.returns {
            return Err(err!(
                InvalidFunctionDefinition,
                "cannot change return type of existing function"
            )
            .with_hint(format!("Use DROP FUNCTION {} first.", signature(old))));
        }
        for (o, n) in old.args.iter().zip(&def.args) {
            if o.name.is_some() && o.name != n.name {
                return Err(err!(
                    InvalidFunctionDefinition,
                    "cannot change name of input parameter \"{}\"",
                    o.name.as_deref().unwrap_or_default()
                )
                .with_hint(format!("Use DROP FUNCTION {} first.", signature(old))));
            }
        }
        def.oid = old.oid;
        def.access = old.access.clone();
        def.comment = old.comment.clone();
    }
    // pg_dump turns the check off: its functions come before the tables
    // their bodies read.
    if def.plpgsql || def.procedure || def.block {
        // Parsed, not bound: PL/pgSQL checks names when a statement runs.
        crate::plpgsql::check(&def)?;
    } else if settings.check_function_bodies() {
        // Names in the body resolve under the function's own search path.
        match def.config.iter().find(|(n, _)| n == "search_path") {
            Some((_, path)) => {
                let path = cat.resolve_path(path, owner);
                check_body(&Catalog { path, ..cat.clone() }, &def)?
            }
            None => check_body(cat, &def)?,
        }
    }
    bump_version(txn, tenant).await?;
    if existing.is_none() {
        def.oid = alloc(txn, tenant, 1).await? as u32;
    }
    put_entry(txn, keys::function(tenant, def.oid), json_entry(&def)).await?;
    let mut done = DdlResult::tag(if procedure { "CREATE PROCEDURE" } else { "CREATE FUNCTION" });
    done.notices = type_reference_notices(cat, cf)?;
    Ok(done)
}

/// The definition CREATE FUNCTION describes (OID 0), checked for what
/// Strata runs: LANGUAGE sql with one query or RETURN expression.
fn definition(
    cat: &Catalog,
    cf: &ast::CreateFunction,
    namespace: u32,
    name: String,
    owner: &str,
    procedure: bool,
) -> Result<FunctionDef> {
    let language = match &cf.language {
        Some(l) => bind::ident(l),
        None => bail!(InvalidFunctionDefinition, "no language specified"),
    };
    let plpgsql = match language.as_str() {
        "sql" => false,
        "plpgsql" => true,
        "internal" | "c" => {
            bail!(FeatureNotSupported, "functions in language {language} cannot be created")
        }
        other => bail!(UndefinedObject, "language \"{other}\" does not exist"),
    };
    if cf.temporary || cf.or_alter || cf.if_not_exists {
        bail!(SyntaxError, "syntax error at or near \"FUNCTION\"");
    }
    let mut params: Vec<FunctionArg> = Vec::new();
    // Whether an input parameter before this one has a default.
    let mut defaulted = false;
    for a in cf.args.iter().flatten() {
        let mode = match a.mode {
            None | Some(ast::ArgMode::In) => ParamMode::In,
            Some(ast::ArgMode::Out) => ParamMode::Out,
            Some(ast::ArgMode::InOut) => ParamMode::InOut,
            Some(ast::ArgMode::Variadic) => ParamMode::Variadic,
        };
        if is_named(&a.data_type, "trigger") {
            match plpgsql {
                true => bail!(FeatureNotSupported, "PL/pgSQL functions cannot accept type trigger"),
                false => bail!(
                    InvalidFunctionDefinition,
                    "SQL functions cannot have arguments of type trigger"
                ),
            }
        }
        let arg_name = a.name.as_ref().map(bind::ident);
        if let Some(n) = &arg_name {
            if params.iter().any(|x| x.name.as_ref() == Some(n)) {
                bail!(InvalidFunctionDefinition, "parameter name \"{n}\" used more than once");
            }
        }
        let ty = param_type(cat, &a.data_type)?;
        if mode == ParamMode::Variadic && !matches!(ty, DataType::Array(_)) {
            bail!(InvalidFunctionDefinition, "VARIADIC parameter must be an array");
        }
        if mode.is_in() && params.iter().any(|p| p.mode == ParamMode::Variadic) {
            bail!(InvalidFunctionDefinition, "VARIADIC parameter must be the last input parameter");
        }
        let default = match &a.default_expr {
            Some(_) if mode == ParamMode::Out => {
                bail!(InvalidFunctionDefinition, "only input parameters can have default values")
            }
            Some(e) => {
                // Checked only: the text is bound again at each call.
                Binder::new(cat, vec![]).assign(e, &Scope::default(), &ty).map_err(|e| {
                    if e.code == sqlstate::SqlState::UndefinedColumn {
                        err!(
                            InvalidColumnReference,
                            "cannot use column reference in DEFAULT expression"
                        )
                    } else {
                        e
                    }
                })?;
                // PostgreSQL keeps a NULL default's type: `NULL::integer`.
                Some(match e {
                    ast::Expr::Value(v) if matches!(v.value, ast::Value::Null) => {
                        format!("NULL::{}", crate::deparse::type_sql(cat, &ty))
                    }
                    e => crate::deparse::stored_default(cat, e, &ty),
                })
            }
            None if defaulted && mode != ParamMode::Out => bail!(
                InvalidFunctionDefinition,
                "input parameters after one with a default value must also have defaults"
            ),
            None => None,
        };
        defaulted |= default.is_some();
        // A table's row type is named by the table.
        let type_sql = match (&ty, row_type(cat, &a.data_type)?) {
            (DataType::Record(_), Some(t)) => {
                crate::func::catalog_info::qualified_name(cat, t.namespace, &t.name)
            }
            _ => crate::deparse::type_sql(cat, &ty),
        };
        params.push(FunctionArg {
            name: arg_name,
            type_sql,
            ty: TypeDef::from_type(&ty),
            default,
            mode,
        });
    }
    let outputs: Vec<&FunctionArg> = params.iter().filter(|a| !a.mode.is_in()).collect();
    let returns = match (procedure, outputs.is_empty()) {
        // A procedure returns nothing, or one row of its outputs.
        (true, true) => FunctionReturns::Value(TypeDef::from_type(&DataType::Void), "void".into()),
        (true, false) => {
            FunctionReturns::Rows { columns: out_columns(&outputs), row_type: None, single: true }
        }
        (false, true) => declared_returns(cat, cf, plpgsql)?,
        (false, false) => out_returns(cat, cf, &outputs)?,
    };
    let mut args = Vec::new();
    let mut outs = Vec::new();
    for (at, a) in params.into_iter().enumerate() {
        match a.mode {
            // CALL passes a procedure's OUT parameters too.
            ParamMode::Out if !procedure => outs.push((at, a)),
            _ => args.push(a),
        }
    }
    let (body, returns_expr) = match &cf.function_body {
        Some(ast::CreateFunctionBody::AsBeforeOptions { body, link_symbol: None })
        | Some(ast::CreateFunctionBody::AsAfterOptions(body)) => match body {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) => (s.clone(), false),
                ast::Value::DollarQuotedString(d) => (d.value.clone(), false),
                _ => {
                    bail!(InvalidFunctionDefinition, "only one AS item needed for language \"sql\"")
                }
            },
            _ => bail!(InvalidFunctionDefinition, "only one AS item needed for language \"sql\""),
        },
        Some(ast::CreateFunctionBody::Return(e)) if !plpgsql => (e.to_string(), true),
        Some(_) => bail!(InvalidFunctionDefinition, "only one AS item needed for language \"sql\""),
        None => bail!(InvalidFunctionDefinition, "no function body specified"),
    };
    let volatility = match cf.behavior {
        Some(ast::FunctionBehavior::Immutable) => 'i',
        Some(ast::FunctionBehavior::Stable) => 's',
        _ => 'v',
    };
    let strict = matches!(
        cf.called_on_null,
        Some(ast::FunctionCalledOnNull::Strict | ast::FunctionCalledOnNull::ReturnsNullOnNullInput)
    );
    let block = !plpgsql && !procedure && !returns_expr && !one_query(&body, &returns)?;
    Ok(FunctionDef {
        oid: 0,
        namespace,
        access: crate::acl::Ownership::created(
            cat,
            owner,
            crate::acl::ObjKind::Function,
            namespace,
        ),
        name,
        args,
        outs,
        returns,
        body,
        returns_expr,
        plpgsql,
        procedure,
        volatility,
        strict,
        block,
        security_definer: matches!(cf.security, Some(ast::FunctionSecurity::Definer)),
        config: Vec::new(),
        comment: None,
    })
}

/// A parameter's or result's type: a `table.column%TYPE` reference (as
/// parse.rs passes it) is the column's type, without its modifier, as in
/// PostgreSQL.
fn param_type(cat: &Catalog, t: &ast::DataType) -> Result<DataType> {
    match type_reference(cat, t)? {
        Some((_, ty)) => Ok(ty),
        None => bind::catalog_type(cat, t),
    }
}

/// The column a `table.column%TYPE` reference names: the reference as
/// PostgreSQL prints it, and the column's type; None for another type.
fn type_reference(cat: &Catalog, t: &ast::DataType) -> Result<Option<(String, DataType)>> {
    let ast::DataType::Custom(name, mods) = t else { return Ok(None) };
    let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() else { return Ok(None) };
    let Some(path) = id.value.strip_suffix("%TYPE").filter(|_| mods.is_empty()) else {
        return Ok(None);
    };
    let parts: Vec<&str> = path.split('.').collect();
    let (table, column) = match parts.as_slice() {
        [t, c] => (catalog::ObjName::bare(t), *c),
        [s, t, c] => (catalog::ObjName { schema: Some(s.to_string()), name: t.to_string() }, *c),
        _ => return Ok(None),
    };
    let def = cat.query_table(&table)?;
    let Some(col) = def.columns.iter().find(|c| c.name == column) else {
        bail!(UndefinedColumn, "column \"{column}\" of relation \"{}\" does not exist", table.name);
    };
    let ty = match col.ty.to_type() {
        DataType::Numeric(_) => DataType::Numeric(None),
        DataType::Varchar(_) => DataType::Varchar(None),
        other => other,
    };
    Ok(Some((id.value.clone(), ty)))
}

/// The notices CREATE FUNCTION gives for the `%TYPE` references among its
/// parameter and result types.
fn type_reference_notices(cat: &Catalog, cf: &ast::CreateFunction) -> Result<Vec<ErrorReport>> {
    let result = match &cf.return_type {
        Some(ast::FunctionReturnType::DataType(t) | ast::FunctionReturnType::SetOf(t)) => Some(t),
        _ => None,
    };
    let mut out = Vec::new();
    for t in cf.args.iter().flatten().map(|a| &a.data_type).chain(result) {
        if let Some((name, ty)) = type_reference(cat, t)? {
            let ty = crate::deparse::type_sql(cat, &ty);
            out.push(notice(format!("type reference {name} converted to {ty}")));
        }
    }
    Ok(out)
}

/// True if a SQL function's body is one query whose result is the
/// function's, which callers inline (not one that writes, under WITH).
fn one_query(body: &str, returns: &FunctionReturns) -> Result<bool> {
    let void = returns.is_void();
    let mut stmts =
        crate::parse::parse(body)?.into_iter().filter(|p| !matches!(p.stmt, Stmt::Empty));
    Ok(match (stmts.next(), stmts.next()) {
        (Some(p), None) => {
            !void
                && matches!(&p.stmt, Stmt::Sql(s)
                    if matches!(&**s, ast::Statement::Query(q) if !crate::planner::modifying(q)))
        }
        _ => false,
    })
}

/// Applies a function's SET clauses to its settings, each checked as SET
/// checks it: a later clause for a name replaces an earlier one, and
/// `TO DEFAULT` removes it. FROM CURRENT takes the value in `current`.
fn set_clauses(
    params: &[ast::FunctionDefinitionSetParam],
    current: &crate::settings::Settings,
    config: &mut Vec<(String, String)>,
) -> Result<()> {
    for p in params {
        let name = crate::settings::setting_name(&p.name);
        let value = match &p.value {
            ast::FunctionSetValue::Default => None,
            ast::FunctionSetValue::FromCurrent => Some(current.get(&name)?),
            ast::FunctionSetValue::Values(v) => crate::settings::assigned(&name, v),
        };
        let key = crate::settings::Settings::canonical(&name);
        config.retain(|(n, _)| *n != key);
        if let Some(v) = value {
            current.clone().set(&name, &v)?;
            config.push((key, v));
        }
    }
    Ok(())
}

/// What a function without output parameters returns, as its RETURNS
/// clause says.
fn declared_returns(
    cat: &Catalog,
    cf: &ast::CreateFunction,
    plpgsql: bool,
) -> Result<FunctionReturns> {
    Ok(match &cf.return_type {
        None => bail!(InvalidFunctionDefinition, "function result type must be specified"),
        Some(ast::FunctionReturnType::DataType(ast::DataType::Table(Some(cols)))) => {
            let mut columns = Vec::new();
            for c in cols {
                let ty = param_type(cat, &c.data_type)?;
                columns.push((
                    bind::ident(&c.name),
                    TypeDef::from_type(&ty),
                    crate::deparse::type_sql(cat, &ty),
                ));
            }
            FunctionReturns::Rows { columns, row_type: None, single: false }
        }
        Some(ast::FunctionReturnType::DataType(t)) => {
            if let Some(table) = row_type(cat, t)? {
                // Unless a built-in or enum type of that name comes first.
                if matches!(param_type(cat, t)?, DataType::Record(_)) {
                    return Ok(table_rows(cat, &table, true));
                }
            }
            if is_named(t, "trigger") {
                if !plpgsql {
                    bail!(InvalidFunctionDefinition, "SQL functions cannot return type trigger");
                }
                let trigger = TypeDef::builtin(catalog::TRIGGER_TYPE_OID, -1);
                FunctionReturns::Value(trigger, "trigger".into())
            } else if is_named(t, "void") {
                FunctionReturns::Value(TypeDef::from_type(&DataType::Void), "void".into())
            } else {
                let ty = param_type(cat, t)?;
                FunctionReturns::Value(TypeDef::from_type(&ty), crate::deparse::type_sql(cat, &ty))
            }
        }
        Some(ast::FunctionReturnType::SetOf(t)) => match row_type(cat, t)? {
            Some(table) => table_rows(cat, &table, false),
            None => {
                let ty = param_type(cat, t)?;
                FunctionReturns::SetOf(TypeDef::from_type(&ty), crate::deparse::type_sql(cat, &ty))
            }
        },
    })
}

/// RETURNS [SETOF] table: rows (or one row) of the table's row type.
fn table_rows(cat: &Catalog, table: &TableDef, single: bool) -> FunctionReturns {
    let columns = table
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.ty.clone(), crate::deparse::type_sql(cat, &c.ty.to_type())))
        .collect();
    FunctionReturns::Rows { columns, row_type: Some(table.oid), single }
}

/// What a function with output parameters (OUT, INOUT) returns: the one
/// output's type, or a row of them (`record`); its RETURNS clause, if
/// any, must say the same.
fn out_returns(
    cat: &Catalog,
    cf: &ast::CreateFunction,
    outputs: &[&FunctionArg],
) -> Result<FunctionReturns> {
    let (setof, declared) = match &cf.return_type {
        None => (false, None),
        Some(ast::FunctionReturnType::SetOf(t)) => (true, Some(t)),
        Some(ast::FunctionReturnType::DataType(ast::DataType::Table(_))) => bail!(
            InvalidFunctionDefinition,
            "OUT and INOUT arguments aren't allowed in TABLE functions"
        ),
        Some(ast::FunctionReturnType::DataType(t)) => (false, Some(t)),
    };
    if let [one] = outputs {
        if let Some(t) = declared {
            if is_named(t, "record") || param_type(cat, t)?.oid() != one.ty.oid {
                bail!(
                    InvalidFunctionDefinition,
                    "function result type must be {} because of OUT parameters",
                    crate::func::catalog_info::format_type(
                        Some(cat),
                        one.ty.oid,
                        Some(one.ty.typmod)
                    )
                );
            }
        }
        return Ok(match setof {
            true => FunctionReturns::SetOf(one.ty.clone(), one.type_sql.clone()),
            false => FunctionReturns::Value(one.ty.clone(), one.type_sql.clone()),
        });
    }
    if declared.is_some_and(|t| !is_named(t, "record")) {
        bail!(
            InvalidFunctionDefinition,
            "function result type must be record because of OUT parameters"
        );
    }
    Ok(FunctionReturns::Rows { columns: out_columns(outputs), row_type: None, single: !setof })
}

/// The columns of a row of output parameters (unnamed ones are
/// `columnN`).
fn out_columns(outputs: &[&FunctionArg]) -> Vec<(String, TypeDef, String)> {
    outputs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let name = o.name.clone().unwrap_or_else(|| format!("column{}", i + 1));
            (name, o.ty.clone(), o.type_sql.clone())
        })
        .collect()
}

/// True if `t` is the (pseudo-)type `name` (`void`, `trigger`).
fn is_named(t: &ast::DataType, name: &str) -> bool {
    match t {
        ast::DataType::Trigger => name == "trigger",
        ast::DataType::Custom(n, m) => {
            m.is_empty() && bind::object_name(n).is_ok_and(|n| n == name)
        }
        _ => false,
    }
}

/// The table whose row type `t` names, if it names one.
fn row_type(cat: &Catalog, t: &ast::DataType) -> Result<Option<Arc<TableDef>>> {
    let ast::DataType::Custom(n, m) = t else { return Ok(None) };
    if !m.is_empty() {
        return Ok(None);
    }
    Ok(match cat.relation(&bind::obj_name(n)?)? {
        Some(catalog::Relation::Table(t)) => Some(t),
        _ => None,
    })
}

/// Checks that the body reads what it may and returns what the function
/// declares, with PostgreSQL's messages.
fn check_body(cat: &Catalog, def: &FunctionDef) -> Result<()> {
    let context = format!("SQL function \"{}\"", def.name);
    let types = body_types(cat, def)?;
    let declared: Vec<DataType> = match &def.returns {
        FunctionReturns::Value(t, _) | FunctionReturns::SetOf(t, _) => vec![t.to_type()],
        FunctionReturns::Rows { columns, .. } => {
            columns.iter().map(|(_, t, _)| t.to_type()).collect()
        }
    };
    let shown = match &def.returns {
        FunctionReturns::Value(_, t) | FunctionReturns::SetOf(_, t) => t.clone(),
        FunctionReturns::Rows { row_type: Some(oid), .. } => {
            cat.table_by_oid(*oid).map_or_else(|| "record".into(), |t| t.name.clone())
        }
        FunctionReturns::Rows { .. } => "record".into(),
    };
    let mismatch = |detail: String| {
        let e = err!(
            InvalidFunctionDefinition,
            "return type mismatch in function declared to return {shown}"
        );
        with_context(e.with_detail(detail), &context)
    };
    if declared.len() == 1 && types.len() != 1 {
        return Err(mismatch("Final statement must return exactly one column.".into()));
    }
    if types.len() != declared.len() {
        let which = if types.len() < declared.len() { "few" } else { "many" };
        return Err(mismatch(format!("Final statement returns too {which} columns.")));
    }
    for (t, d) in types.iter().zip(&declared) {
        if !sqltypes::cast::can_assign(t, d) {
            return Err(mismatch(format!("Actual return type is {t}.")));
        }
    }
    Ok(())
}

/// Fails while a view or materialized view calls `d` (their stored text
/// names it schema-qualified); CASCADE, which would drop them, is not
/// supported yet.
fn refuse_dependents(cat: &Catalog, d: &FunctionDef, cascade: bool) -> Result<()> {
    if let Some((trigger, table)) = super::triggers::triggers_calling(cat, d.oid).first() {
        if cascade {
            // drop_function drops the triggers.
            return Ok(());
        }
        let sig = signature(d);
        let uses = [format!("trigger {trigger} on table {table} depends on function {sig}")];
        return Err(super::still_depended_on(&format!("function {sig}"), &uses));
    }
    let Some((kind, name)) = dependent(cat, d) else { return Ok(()) };
    if cascade {
        bail!(FeatureNotSupported, "DROP FUNCTION ... CASCADE is not supported yet");
    }
    let sig = signature(d);
    let uses = [format!("{kind} {name} depends on function {sig}")];
    Err(super::still_depended_on(&format!("function {sig}"), &uses))
}

/// A view or materialized view that calls `d` (kind, name), if any.
fn dependent<'a>(cat: &'a Catalog, d: &FunctionDef) -> Option<(&'static str, &'a String)> {
    use crate::func::catalog_info::quote_ident;
    let schema = cat.namespace_name(d.namespace).unwrap_or_default();
    let call = format!("{}.{}(", quote_ident(schema), quote_ident(&d.name));
    let views = cat.views.values().filter(|v| v.query.contains(&call)).map(|v| ("view", &v.name));
    let matviews = cat
        .tables
        .values()
        .filter(|t| t.matview.as_ref().is_some_and(|m| m.query.contains(&call)))
        .map(|t| ("materialized view", &t.name));
    views.chain(matviews).next()
}

fn with_context(mut e: ErrorReport, context: &str) -> ErrorReport {
    e.context = Some(context.to_string());
    e
}

/// `name(type, ...)` as DROP FUNCTION's HINT writes a function.
pub(super) fn signature(d: &FunctionDef) -> String {
    let types: Vec<String> = d.args.iter().map(|a| a.ty.to_type().to_string()).collect();
    format!("{}({})", d.name, types.join(", "))
}

/// The function `desc` names (with its argument types, or by name alone
/// when one function has it); None when there is none and `if_exists`.
fn resolve(
    cat: &Catalog,
    desc: &ast::FunctionDesc,
    if_exists: bool,
    procedure: Option<bool>,
) -> Result<Option<Arc<FunctionDef>>> {
    let n = bind::obj_name(&desc.name)?;
    let path = cat.lookup_path(&n, false)?;
    let named: Vec<Arc<FunctionDef>> = path
        .iter()
        .filter_map(|ns| cat.functions.get(&(*ns, n.name.clone())))
        .flatten()
        .cloned()
        .collect();
    let Some(args) = &desc.args else {
        // By name alone, only routines of the kind the statement drops.
        let named: Vec<_> =
            named.into_iter().filter(|d| procedure.is_none_or(|p| d.procedure == p)).collect();
        if named.len() > 1 {
            return Err(err!(AmbiguousFunction, "function name \"{n}\" is not unique")
                .with_hint("Specify the argument list to select the function unambiguously."));
        }
        if named.is_empty() && !if_exists {
            let kind = if procedure == Some(true) { "procedure" } else { "function" };
            bail!(UndefinedFunction, "could not find a {kind} named \"{n}\"");
        }
        return Ok(named.into_iter().next());
    };
    let mut oids = Vec::new();
    let mut inputs = Vec::new();
    for a in args {
        let oid = param_type(cat, &a.data_type)?.oid();
        oids.push(oid);
        if !matches!(a.mode, Some(ast::ArgMode::Out)) {
            inputs.push(oid);
        }
    }
    // A function is named by its inputs; a procedure by all its
    // parameters (as CALL passes them), or by its inputs.
    let same = |d: &&Arc<FunctionDef>| {
        let mine = || d.args.iter().map(|a| a.ty.oid);
        mine().eq(inputs.iter().copied())
            || (d.procedure && mine().eq(oids.iter().copied()))
            || (d.procedure
                && d.args
                    .iter()
                    .filter(|a| a.mode != ParamMode::Out)
                    .map(|a| a.ty.oid)
                    .eq(inputs.iter().copied()))
    };
    let hit = named.iter().find(same).cloned();
    if hit.is_none() && !if_exists {
        let types = arg_type_names(cat, desc)?;
        let kind = if procedure == Some(true) { "procedure" } else { "function" };
        bail!(UndefinedFunction, "{kind} {n}({}) does not exist", types.join(", "));
    }
    Ok(hit)
}

/// The argument types a function description lists, as format_type names.
fn arg_type_names(cat: &Catalog, desc: &ast::FunctionDesc) -> Result<Vec<String>> {
    let args = desc.args.iter().flatten().filter(|a| !matches!(a.mode, Some(ast::ArgMode::Out)));
    args.map(|a| param_type(cat, &a.data_type).map(|t| t.to_string())).collect()
}

/// COMMENT ON FUNCTION | PROCEDURE name\[(types)\] IS text | NULL.
pub async fn comment_function<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    desc: &ast::FunctionDesc,
    procedure: bool,
    text: Option<String>,
    user: &str,
) -> Result<DdlResult> {
    let Some(def) = resolve(cat, desc, false, Some(procedure))? else {
        bail!(UndefinedFunction, "function does not exist");
    };
    def.access.must_own(cat, user, crate::acl::ObjKind::Function, &def.name)?;
    let mut new = (*def).clone();
    new.comment = text.filter(|t| !t.is_empty());
    bump_version(txn, tenant).await?;
    put_entry(txn, keys::function(tenant, new.oid), json_entry(&new)).await?;
    Ok(DdlResult::tag("COMMENT"))
}

/// ALTER FUNCTION name[(types)] OWNER TO role | RENAME TO name.
pub async fn alter_function<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    af: &ast::AlterFunction,
    user: &str,
    settings: &crate::settings::Settings,
) -> Result<DdlResult> {
    if af.kind != ast::AlterFunctionKind::Function {
        bail!(FeatureNotSupported, "ALTER {} is not supported", af.kind);
    }
    let Some(def) = resolve(cat, &af.function, false, None)? else {
        bail!(UndefinedFunction, "function does not exist");
    };
    let mut new = (*def).clone();
    match &af.operation {
        ast::AlterFunctionOperation::OwnerTo(o) => {
            let owner = super::owner::owner_name(cat, o, user)?;
            let kind = crate::acl::ObjKind::Function;
            let Some(access) = super::owner::changed(
                cat,
                user,
                &def.access,
                kind,
                &def.name,
                def.namespace,
                &owner,
            )?
            else {
                return Ok(DdlResult::tag(alter_tag(&def)));
            };
            new.access = access;
        }
        ast::AlterFunctionOperation::RenameTo { new_name } => {
            def.access.must_own(cat, user, crate::acl::ObjKind::Function, &def.name)?;
            new.name = bind::ident(new_name);
            let clash = cat.functions.get(&(def.namespace, new.name.clone())).is_some_and(|fs| {
                fs.iter()
                    .any(|f| f.args.iter().map(|a| a.ty.oid).eq(def.args.iter().map(|a| a.ty.oid)))
            });
            if clash {
                let schema = cat.namespace_name(def.namespace).unwrap_or_default();
                bail!(
                    DuplicateFunction,
                    "function {} already exists in schema \"{schema}\"",
                    signature(&new)
                );
            }
            if let Some((kind, name)) = dependent(cat, &def) {
                bail!(
                    FeatureNotSupported,
                    "cannot rename function {} while {kind} {name} calls it (not supported yet)",
                    def.name
                );
            }
        }
        ast::AlterFunctionOperation::Actions { actions, .. } => {
            def.access.must_own(cat, user, crate::acl::ObjKind::Function, &def.name)?;
            for a in actions {
                alter_action(&mut new, a, settings)?;
            }
        }
        _ => bail!(FeatureNotSupported, "this form of ALTER FUNCTION is not supported yet"),
    }
    bump_version(txn, tenant).await?;
    put_entry(txn, keys::function(tenant, new.oid), json_entry(&new)).await?;
    Ok(DdlResult::tag(alter_tag(&def)))
}

/// DROP FUNCTION [IF EXISTS] name [(types)], ... [CASCADE | RESTRICT].
pub async fn drop_function<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    df: &ast::DropFunction,
    user: &str,
    procedure: bool,
) -> Result<DdlResult> {
    let kind = if procedure { "procedure" } else { "function" };
    let mut r = DdlResult::tag(&format!("DROP {}", kind.to_uppercase()));
    let mut doomed: Vec<Arc<FunctionDef>> = Vec::new();
    for desc in &df.func_desc {
        match resolve(cat, desc, df.if_exists, Some(procedure))? {
            Some(d) => {
                if d.procedure != procedure {
                    bail!(WrongObjectType, "{} is not a {kind}", signature(&d));
                }
                d.access.must_own(cat, user, crate::acl::ObjKind::Function, &d.name)?;
                doomed.push(d);
            }
            None => {
                let n = bind::obj_name(&desc.name)?;
                let types = arg_type_names(cat, desc)?;
                r.notices.push(notice(format!(
                    "{kind} {n}({}) does not exist, skipping",
                    types.join(", ")
                )));
            }
        }
    }
    if doomed.is_empty() {
        return Ok(r);
    }
    for d in &doomed {
        refuse_dependents(cat, d, df.drop_behavior == Some(ast::DropBehavior::Cascade))?;
    }
    bump_version(txn, tenant).await?;
    if df.drop_behavior == Some(ast::DropBehavior::Cascade) {
        let oids: Vec<u32> = doomed.iter().map(|d| d.oid).collect();
        for t in cat.tables.values() {
            let mut cur = (**t).clone();
            if drop_calling(&mut cur.triggers, &oids, &format!("table {}", t.name), &mut r) {
                lock_table(txn, tenant, cur.oid).await?;
                write_table(txn, tenant, &cur).await?;
            }
        }
        for v in cat.views.values() {
            let mut cur = (**v).clone();
            if drop_calling(&mut cur.triggers, &oids, &format!("view {}", v.name), &mut r) {
                put_entry(txn, keys::view(tenant, cur.oid), json_entry(&cur)).await?;
            }
        }
    }
    for d in doomed {
        delete_key(txn, keys::function(tenant, d.oid)).await?;
    }
    Ok(r)
}

/// ALTER FUNCTION's or ALTER PROCEDURE's tag, as the routine is.
fn alter_tag(def: &FunctionDef) -> &'static str {
    if def.procedure {
        "ALTER PROCEDURE"
    } else {
        "ALTER FUNCTION"
    }
}

/// One action of `ALTER FUNCTION f action ...` applied to `def`. COST,
/// ROWS, PARALLEL, LEAKPROOF and SUPPORT have no effect in Strata.
fn alter_action(
    def: &mut FunctionDef,
    a: &ast::AlterFunctionAction,
    settings: &crate::settings::Settings,
) -> Result<()> {
    use ast::AlterFunctionAction as A;
    match a {
        A::CalledOnNull(c) => {
            def.strict = !matches!(c, ast::FunctionCalledOnNull::CalledOnNullInput);
        }
        A::Behavior(b) => {
            def.volatility = match b {
                ast::FunctionBehavior::Immutable => 'i',
                ast::FunctionBehavior::Stable => 's',
                ast::FunctionBehavior::Volatile => 'v',
            };
        }
        A::Security { security, .. } => {
            def.security_definer = matches!(security, ast::FunctionSecurity::Definer);
        }
        A::Set(p) => set_clauses(std::slice::from_ref(p), settings, &mut def.config)?,
        A::Reset(ast::ResetConfig::ALL) => def.config.clear(),
        A::Reset(ast::ResetConfig::ConfigName(n)) => {
            let key = crate::settings::Settings::canonical(&crate::settings::setting_name(n));
            def.config.retain(|(k, _)| *k != key);
        }
        A::Leakproof(_) | A::Parallel(_) | A::Cost(_) | A::Rows(_) | A::Support(_) => {}
    }
    Ok(())
}

/// Drops the triggers (of `on`, "table t" or "view v") that call one of
/// the functions `oids`, with DROP ... CASCADE's notices; true if there
/// were any.
fn drop_calling(
    triggers: &mut Vec<crate::catalog::TriggerDef>,
    oids: &[u32],
    on: &str,
    r: &mut DdlResult,
) -> bool {
    let before = triggers.len();
    triggers.retain(|tr| {
        let keep = !oids.contains(&tr.function);
        if !keep {
            r.notices.push(notice(format!("drop cascades to trigger {} on {on}", tr.name)));
        }
        keep
    });
    triggers.len() < before
}
