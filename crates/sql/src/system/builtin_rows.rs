//! Catalogs whose rows come from built-in data rather than the catalog:
//! pg_proc and pg_language (from [`crate::builtins`]) and pg_settings (the
//! session's settings).

use sqltypes::{DataType, RegKind, RegValue, Value};

use crate::builtins::{self, Proc};
use crate::catalog::{Catalog, PG_CATALOG_NAMESPACE_OID};

/// pg_proc's columns (PostgreSQL 15's, in its order).
pub fn proc_columns() -> Vec<(&'static str, DataType)> {
    use DataType::{Bool, Float4, Int2, Name, Oid, OidVector, QChar, Text};
    vec![
        ("oid", Oid),
        ("proname", Name),
        ("pronamespace", Oid),
        ("proowner", Oid),
        ("prolang", Oid),
        ("procost", Float4),
        ("prorows", Float4),
        ("provariadic", Oid),
        ("prosupport", DataType::Reg(RegKind::Proc)),
        ("prokind", QChar),
        ("prosecdef", Bool),
        ("proleakproof", Bool),
        ("proisstrict", Bool),
        ("proretset", Bool),
        ("provolatile", QChar),
        ("proparallel", QChar),
        ("pronargs", Int2),
        ("pronargdefaults", Int2),
        ("prorettype", Oid),
        ("proargtypes", OidVector),
        ("proallargtypes", Oid.array_of()),
        ("proargmodes", QChar.array_of()),
        ("proargnames", Text.array_of()),
        ("proargdefaults", Text),
        ("protrftypes", Oid.array_of()),
        ("prosrc", Text),
        ("probin", Text),
        ("prosqlbody", Text),
        ("proconfig", Text.array_of()),
        ("proacl", Text.array_of()),
    ]
}

/// pg_proc's rows: the built-in functions, then the installed extensions'.
pub fn proc_rows(cat: &Catalog) -> Vec<Vec<Value>> {
    let builtin =
        builtins::procs().iter().map(|p| proc_row(p, p.oid, PG_CATALOG_NAMESPACE_OID, 10));
    // Each extension's owner is looked up once, not per function.
    let owners: std::collections::HashMap<u32, u32> =
        cat.extensions.values().map(|x| (x.oid, super::role_oid(cat, &x.owner))).collect();
    let members = crate::extensions::members(cat).map(|m| {
        let owner = owners.get(&m.ext.oid).copied().unwrap_or(10);
        proc_row(m.proc, m.oid, m.ext.namespace, owner)
    });
    let user = cat.functions.values().flatten().map(|f| {
        let owner = super::role_oid(cat, &f.access.owner);
        proc_row(&sql_function_proc(cat, f), f.oid, f.namespace, owner)
    });
    builtin.chain(members).chain(user).collect()
}

/// The name of a parameter's table row type as PostgreSQL prints it (bare
/// where the search path finds the table); None for other types.
fn arg_type_name(cat: &Catalog, a: &crate::catalog::FunctionArg) -> Option<String> {
    use crate::func::catalog_info::{relation_display_name, split_name};
    if a.ty.oid != 2249 {
        return None;
    }
    let (schema, name) = split_name(&a.type_sql);
    let ns = cat.namespace_oid(schema.as_deref()?)?;
    Some(relation_display_name(cat, ns, &name))
}

/// The pg_proc facts of a SQL function (CREATE FUNCTION ... LANGUAGE sql),
/// as PostgreSQL records and prints them.
pub fn sql_function_proc(cat: &Catalog, f: &crate::catalog::FunctionDef) -> Proc {
    use crate::catalog::FunctionReturns;
    use crate::func::catalog_info::{format_type, quote_ident};
    let type_name = |t: &crate::catalog::TypeDef| format_type(Some(cat), t.oid, Some(t.typmod));
    let arg = |a: &crate::catalog::FunctionArg, defaults: bool| {
        // A procedure's IN parameters say so.
        let mut s = match (f.procedure, a.mode) {
            (true, crate::catalog::ParamMode::In) => "IN ".to_string(),
            _ => a.mode.keyword().0.to_string(),
        };
        if let Some(n) = &a.name {
            s.push_str(&quote_ident(n));
            s.push(' ');
        }
        s.push_str(&arg_type_name(cat, a).unwrap_or_else(|| type_name(&a.ty)));
        if let (true, Some(d)) = (defaults, &a.default) {
            s.push_str(&format!(" DEFAULT {d}"));
        }
        s
    };
    let params: Vec<_> = f.all_params().collect();
    let has_outputs = params.iter().any(|a| !a.mode.is_in());
    // proargtypes leaves out a procedure's OUT parameters, which CALL
    // passes all the same.
    let inputs: Vec<_> =
        f.args.iter().filter(|a| a.mode != crate::catalog::ParamMode::Out).collect();
    // pg_get_function_arguments lists every parameter with its defaults,
    // pg_get_function_identity_arguments without.
    let list =
        |defaults: bool| params.iter().map(|a| arg(a, defaults)).collect::<Vec<_>>().join(", ");
    let (rettype, retset, result) = match &f.returns {
        FunctionReturns::Value(t, _) => (t.oid, false, type_name(t)),
        FunctionReturns::SetOf(t, _) => (t.oid, true, format!("SETOF {}", type_name(t))),
        FunctionReturns::Rows { row_type: Some(oid), single, .. } => {
            let name = cat.table_by_oid(*oid).map(|t| quote_ident(&t.name)).unwrap_or_default();
            match single {
                true => (2249, false, name),
                false => (2249, true, format!("SETOF {name}")),
            }
        }
        FunctionReturns::Rows { single: true, .. } => (2249, false, "record".into()),
        FunctionReturns::Rows { .. } if has_outputs => (2249, true, "SETOF record".into()),
        FunctionReturns::Rows { columns, .. } => {
            let cols: Vec<String> = columns
                .iter()
                .map(|(n, t, _)| format!("{} {}", quote_ident(n), type_name(t)))
                .collect();
            (2249, true, format!("TABLE({})", cols.join(", ")))
        }
    };
    let table_columns = match &f.returns {
        FunctionReturns::Rows { columns, row_type: None, .. } if !has_outputs => columns.as_slice(),
        _ => &[],
    };
    let quote_elem = |n: &str| match n.is_empty() || n.contains([',', '{', '}', '"', ' ', '\\']) {
        true => format!("\"{}\"", n.replace('\\', "\\\\").replace('"', "\\\"")),
        false => n.to_string(),
    };
    let mut names: Vec<String> =
        params.iter().map(|a| quote_elem(a.name.as_deref().unwrap_or(""))).collect();
    names.extend(table_columns.iter().map(|(n, ..)| quote_elem(n)));
    let any_named = params.iter().any(|a| a.name.is_some()) || !table_columns.is_empty();
    let all_in = params.iter().all(|a| a.mode.is_plain());
    let (allargtypes, argmodes) = match table_columns.is_empty() && all_in {
        true => (None, None),
        false => {
            let oids =
                params.iter().map(|a| a.ty.oid).chain(table_columns.iter().map(|(_, t, _)| t.oid));
            let modes =
                params.iter().map(|a| a.mode.keyword().1).chain(table_columns.iter().map(|_| "t"));
            (
                Some(format!("{{{}}}", oids.map(|o| o.to_string()).collect::<Vec<_>>().join(","))),
                Some(format!("{{{}}}", modes.collect::<Vec<_>>().join(","))),
            )
        }
    };
    Proc {
        oid: f.oid,
        name: f.name.clone(),
        kind: if f.procedure { "p" } else { "f" }.into(),
        retset,
        volatile: f.volatility.to_string(),
        strict: f.strict,
        nargs: inputs.len() as i16,
        nargdefaults: f.args.iter().filter(|a| a.default.is_some()).count() as i16,
        rettype,
        argtypes: inputs.iter().map(|a| a.ty.oid).collect(),
        allargtypes,
        argmodes,
        argnames: any_named.then(|| format!("{{{}}}", names.join(","))),
        src: match f.returns_expr {
            true => format!("SELECT {}", f.body),
            false => f.body.clone(),
        },
        result,
        arguments: list(true),
        identity_arguments: list(false),
        description: f.comment.clone(),
        lang: if f.plpgsql { 13563 } else { 14 },
        parallel: "u".into(),
        secdef: f.security_definer,
        config: f.config.clone(),
        leakproof: false,
        variadic: f.variadic().map_or(0, |t| t.oid()),
        cost: 100.0,
        rows: if retset { 1000.0 } else { 0.0 },
    }
}

/// The row of `p` with its OID, schema and owner in this database.
fn proc_row(p: &Proc, oid: u32, namespace: u32, owner: u32) -> Vec<Value> {
    let t = |s: &str| Value::Text(s.to_string());
    let array = |elem: DataType, text: &Option<String>| match text {
        Some(s) => sqltypes::array::parse_array(&elem, s).unwrap_or(Value::Null),
        None => Value::Null,
    };
    vec![
        Value::Oid(oid),
        t(&p.name),
        Value::Oid(namespace),
        Value::Oid(owner),
        Value::Oid(p.lang),
        Value::Float4(p.cost),
        Value::Float4(p.rows),
        Value::Oid(p.variadic),
        regproc(0),
        t(&p.kind),
        Value::Bool(p.secdef),
        Value::Bool(p.leakproof),
        Value::Bool(p.strict),
        Value::Bool(p.retset),
        t(&p.volatile),
        t(&p.parallel),
        Value::Int2(p.nargs),
        Value::Int2(p.nargdefaults),
        Value::Oid(p.rettype),
        sqltypes::array::vector(DataType::Oid, p.argtypes.iter().map(|&o| Value::Oid(o)).collect()),
        array(DataType::Oid, &p.allargtypes),
        array(DataType::QChar, &p.argmodes),
        array(DataType::Text, &p.argnames),
        Value::Null,
        Value::Null,
        t(&p.src),
        Value::Null,
        Value::Null,
        match p.config.is_empty() {
            true => Value::Null,
            false => {
                let items = p.config.iter().map(|(k, v)| Value::Text(format!("{k}={v}")));
                sqltypes::array::ArrayValue::new(DataType::Text, items.collect()).into_value()
            }
        },
        Value::Null,
    ]
}

/// A regproc value: the function's name, `-` for 0.
pub fn regproc(oid: u32) -> Value {
    Value::Reg(Box::new(RegValue { kind: RegKind::Proc, oid, name: regproc_name(None, oid) }))
}

/// regproc output: the function's name, `-` for 0, the digits for an OID
/// that names no function. With the catalog, extension functions too,
/// schema-qualified where the search path does not find them.
pub fn regproc_name(cat: Option<&Catalog>, oid: u32) -> String {
    if oid == 0 {
        return "-".into();
    }
    if let Some(p) = builtins::proc_by_oid(oid) {
        return p.name.clone();
    }
    if let Some((c, f)) = cat.and_then(|c| Some((c, c.function_by_oid(oid)?))) {
        let quoted = crate::func::catalog_info::quote_ident(&f.name);
        return match c.function_visible(f) {
            true => quoted,
            false => {
                let schema = c.namespace_name(f.namespace).unwrap_or_default();
                format!("{}.{quoted}", crate::func::catalog_info::quote_ident(schema))
            }
        };
    }
    let Some((cat, m)) = cat.and_then(|c| Some((c, crate::extensions::member(c, oid)?))) else {
        return oid.to_string();
    };
    let quoted = crate::func::catalog_info::quote_ident(&m.proc.name);
    match crate::extensions::call_schema(cat, &m.proc.name) == Some(m.ext.namespace) {
        true => quoted,
        false => {
            let schema = cat.namespace_name(m.ext.namespace).unwrap_or_default();
            format!("{}.{quoted}", crate::func::catalog_info::quote_ident(schema))
        }
    }
}

/// pg_language's columns.
pub fn language_columns() -> Vec<(&'static str, DataType)> {
    use DataType::{Bool, Name, Oid, Text};
    vec![
        ("oid", Oid),
        ("lanname", Name),
        ("lanowner", Oid),
        ("lanispl", Bool),
        ("lanpltrusted", Bool),
        ("lanplcallfoid", Oid),
        ("laninline", Oid),
        ("lanvalidator", Oid),
        ("lanacl", Text.array_of()),
    ]
}

/// pg_language's rows: internal, c, sql and plpgsql.
pub fn language_rows() -> Vec<Vec<Value>> {
    builtins::LANGUAGES
        .iter()
        .map(|&(oid, name, procedural, trusted, [call, inline, validator])| {
            vec![
                Value::Oid(oid),
                Value::Text(name.into()),
                Value::Oid(10),
                Value::Bool(procedural),
                Value::Bool(trusted),
                Value::Oid(call),
                Value::Oid(inline),
                Value::Oid(validator),
                Value::Null,
            ]
        })
        .collect()
}

/// pg_settings' columns.
pub fn settings_columns() -> Vec<(&'static str, DataType)> {
    use DataType::{Bool, Int4, Text};
    vec![
        ("name", Text),
        ("setting", Text),
        ("unit", Text),
        ("category", Text),
        ("short_desc", Text),
        ("extra_desc", Text),
        ("context", Text),
        ("vartype", Text),
        ("source", Text),
        ("min_val", Text),
        ("max_val", Text),
        ("enumvals", Text.array_of()),
        ("boot_val", Text),
        ("reset_val", Text),
        ("sourcefile", Text),
        ("sourceline", Int4),
        ("pending_restart", Bool),
    ]
}

/// pg_settings' rows: one per setting of the session, by name.
pub fn settings_rows(values: &std::collections::BTreeMap<String, String>) -> Vec<Vec<Value>> {
    use crate::settings::duration;
    let t = |s: &str| Value::Text(s.to_string());
    let mut rows: Vec<Vec<Value>> = Vec::new();
    for (key, value) in values {
        let name = crate::settings::Settings::canonical(key);
        let boot = crate::settings::default_value(key);
        let vartype = match boot.unwrap_or(value) {
            "on" | "off" => "bool",
            v if v.parse::<i64>().is_ok() => "integer",
            _ => "string",
        };
        let source = if boot == Some(value.as_str()) { "default" } else { "session" };
        // A time is shown in milliseconds, with its unit and range.
        let (setting, unit, vartype, range) = match duration::slot(key).is_some() {
            true => {
                let ms = duration::parse(key, value).unwrap_or(0);
                (ms.to_string(), t("ms"), "integer", [t("0"), t(&duration::MAX.to_string())])
            }
            false => (value.clone(), Value::Null, vartype, [Value::Null, Value::Null]),
        };
        let [min_val, max_val] = range;
        rows.push(vec![
            t(&name),
            t(&setting),
            unit,
            Value::Null,
            Value::Null,
            Value::Null,
            t("user"),
            t(vartype),
            t(source),
            min_val,
            max_val,
            Value::Null,
            boot.map(t).unwrap_or(Value::Null),
            boot.map(t).unwrap_or(Value::Null),
            Value::Null,
            Value::Null,
            Value::Bool(false),
        ]);
    }
    rows
}
