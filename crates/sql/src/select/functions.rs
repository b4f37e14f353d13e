//! Functions in FROM: generate_series, unnest (of one or more arrays),
//! generate_subscripts, the json and regexp set-returning functions and a
//! few catalog helpers, optionally WITH ORDINALITY. Their arguments may read
//! the FROM items before them (PostgreSQL's implicit LATERAL); the caller
//! then runs the function once per row of those items.

use crate::interrupts::Interrupts;
use std::sync::Arc;

use sqlparser::ast;
use sqltypes::{cast, DataType, RecordType, RecordValue, Value};

use crate::bind::{self, Binder, Reach, Scope, ScopeCol};
use crate::error::Result;
use crate::exec::MAX_ROWS;
use crate::expr::{EvalContext, Expr};
use crate::plan::Plan;
use crate::{bail, err};

/// Which set-returning function.
#[derive(Debug, Clone, PartialEq)]
pub enum TableFunc {
    /// generate_series(start, stop [, step]) over this integer or numeric type.
    Series(DataType),
    /// unnest(array, ...): one column per array, as long as the longest.
    Unnest,
    /// generate_subscripts(array, dim [, reverse]).
    Subscripts,
    /// pg_partition_ancestors(regclass): the relation, then the table it
    /// is a partition of, and so on up.
    PartitionAncestors,
    /// generate_series(start, stop, step interval) over timestamp or timestamptz.
    TimeSeries,
    /// json(b)_each(_text): (key, value) per object member; the flag: as text.
    JsonEach(bool),
    /// json(b)_array_elements(_text): value per array element.
    JsonElements(bool),
    /// json(b)_object_keys: key per object member.
    JsonKeys,
    /// pg_options_to_table(text[]): (option_name, option_value) per
    /// `name=value` element.
    OptionsToTable,
    /// information_schema._pg_expandarray(anyarray): (x, n) per element of
    /// the first dimension, n counting from 1 (pgjdbc's getPrimaryKeys
    /// reads index keys with it).
    ExpandArray,
    /// regexp_matches(string, pattern [, flags]): a text[] per match.
    RegexMatches,
    /// regexp_split_to_table(string, pattern [, flags]): a text per piece.
    RegexSplit,
    /// string_to_table(s, delimiter [, null])
    StringSplit,
    /// pg_listening_channels(): the session's LISTEN channels.
    ListeningChannels,
    /// pg_get_keywords(): PostgreSQL 15's SQL keywords (word, catcode,
    /// barelabel, catdesc, baredesc), from `catalog_data/keywords.tsv`.
    Keywords,
    /// json(b)_to_record(set)(json): the members of one object (of each
    /// object of an array, with `set`) named by the column definition list,
    /// converted to its types. json(b)_populate_record(set)(base, json)
    /// takes the columns from the base row's type, and a member the
    /// object lacks from the base row.
    JsonToRecord {
        /// The function's name, for errors.
        name: String,
        /// An array of objects, one row each.
        set: bool,
        /// The column definition list, or the base row's fields.
        columns: Vec<(String, DataType)>,
        /// The first argument is a base row (json(b)_populate_record(set)).
        base: bool,
    },
}

/// One set-returning call of a [`FromFunction`].
#[derive(Debug, Clone, PartialEq)]
pub struct SetCall {
    /// The function.
    pub func: TableFunc,
    /// Its arguments (evaluated with no input row; outer references read
    /// the current row of the FROM items before).
    pub args: Vec<Expr>,
    /// In a select list, a function with several OUT columns gives one
    /// record of this type per row instead of its columns.
    pub record: Option<Arc<RecordType>>,
}

/// Set-returning function calls run side by side (one in FROM; all of a
/// select list's), their rows zipped: row i holds every call's i-th row,
/// NULLs for a call that ran out.
#[derive(Debug, Clone, PartialEq)]
pub struct FromFunction {
    /// The calls.
    pub calls: Vec<SetCall>,
    /// WITH ORDINALITY: a last bigint column numbering the rows from 1.
    pub ordinality: bool,
}

/// A FROM item that calls a function.
pub struct FromCall<'a> {
    name: String,
    args: Vec<&'a ast::Expr>,
    alias: &'a Option<ast::TableAlias>,
    ordinality: bool,
}

/// The function call a FROM item makes, if it is one.
pub fn call_of(f: &ast::TableFactor) -> Option<Result<FromCall<'_>>> {
    fn exprs(args: &[ast::FunctionArg]) -> Result<Vec<&ast::Expr>> {
        args.iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
                other => bail!(FeatureNotSupported, "argument not supported: {other}"),
            })
            .collect()
    }
    fn call<'a>(
        name: &ast::ObjectName,
        args: Vec<&'a ast::Expr>,
        alias: &'a Option<ast::TableAlias>,
        ordinality: bool,
    ) -> Result<FromCall<'a>> {
        Ok(FromCall { name: bind::object_name(name)?, args, alias, ordinality })
    }
    Some(match f {
        ast::TableFactor::Table { name, alias, args: Some(args), with_ordinality, .. } => {
            exprs(&args.args).and_then(|a| call(name, a, alias, *with_ordinality))
        }
        ast::TableFactor::Function { name, args, alias, .. } => {
            exprs(args).and_then(|a| call(name, a, alias, false))
        }
        // `FROM current_user`: the SQL value functions are key words, not
        // table names.
        ast::TableFactor::Table { name, alias, args: None, with_ordinality, .. }
            if sql_value_function(name) =>
        {
            call(name, Vec::new(), alias, *with_ordinality)
        }
        ast::TableFactor::UNNEST {
            alias,
            array_exprs,
            with_ordinality,
            with_offset: false,
            ..
        } => Ok(FromCall {
            name: "unnest".into(),
            args: array_exprs.iter().collect(),
            alias,
            ordinality: *with_ordinality,
        }),
        _ => return None,
    })
}

/// True if `name` is one of the SQL value functions PostgreSQL's grammar
/// reads without parentheses (CURRENT_USER, CURRENT_DATE, ...).
fn sql_value_function(name: &ast::ObjectName) -> bool {
    let [part] = name.0.as_slice() else { return false };
    part.as_ident().is_some_and(|i| {
        i.quote_style.is_none()
            && bind::SQL_VALUE_FUNCTIONS.iter().any(|k| i.value.eq_ignore_ascii_case(k))
    })
}

/// Plans a function in FROM; its arguments are bound in an empty scope, so
/// column references resolve against the binder's outer scopes.
pub fn plan_function(b: &mut Binder<'_>, call: &FromCall<'_>) -> Result<(Plan, Scope)> {
    let (fname, alias, ordinality) = (call.name.as_str(), call.alias, call.ordinality);
    let (func, exprs, types) = match fname {
        "json_to_record" | "jsonb_to_record" | "json_to_recordset" | "jsonb_to_recordset" => {
            if ordinality {
                let e = crate::err!(
                    SyntaxError,
                    "WITH ORDINALITY cannot be used with a column definition list"
                );
                return Err(e.with_hint("Put the column definition list inside ROWS FROM()."));
            }
            to_record(b, fname, &call.args, alias)?
        }
        // Not a table function: a scalar one gives one row.
        _ if !is_set_returning(fname) => {
            return scalar_item(b, call);
        }
        _ => bind_call(b, fname, &call.args)?,
    };
    let table = alias.as_ref().map(|a| bind::ident(&a.name)).unwrap_or_else(|| fname.to_string());
    let renames: Vec<String> = alias
        .as_ref()
        .map(|a| a.columns.iter().map(|c| bind::ident(&c.name)).collect())
        .unwrap_or_default();
    // A one-column function's column is named after the table alias (or
    // the function) unless the alias lists column names.
    let mut names: Vec<String> = match output_names(&func) {
        Some(cols) => cols,
        None if types.len() == 1 => vec![table.clone()],
        None => vec![fname.to_string(); types.len()],
    };
    let mut types = types;
    if ordinality {
        names.push("ordinality".into());
        types.push(DataType::Int8);
    }
    too_many_aliases(&table, types.len(), renames.len())?;
    let cols = types
        .into_iter()
        .enumerate()
        .map(|(i, ty)| ScopeCol {
            qualifier: Some(table.clone()),
            name: renames.get(i).cloned().unwrap_or_else(|| names[i].clone()),
            ty,
            table_oid: 0,
            column_id: 0,
            reach: Reach::Full,
        })
        .collect();
    let call = SetCall { func, args: exprs, record: None };
    let plan = Plan::Function(FromFunction { calls: vec![call], ordinality });
    Ok((plan, Scope { cols }))
}

/// A scalar function in FROM (`FROM current_schema()`, `FROM now() AS
/// t(x)`): one row of its value, in a column named after the alias (or
/// the function), with an ordinality of 1 if asked for.
fn scalar_item(b: &mut Binder<'_>, call: &FromCall<'_>) -> Result<(Plan, Scope)> {
    let args = call.args.iter().map(|e| (*e).clone()).collect();
    let f = crate::parse::quoted_call(&call.name, args);
    let (x, ty) = b.expr(&f, &Scope::default())?;
    let table = match call.alias {
        Some(a) => bind::ident(&a.name),
        None => call.name.clone(),
    };
    let named =
        |i: usize| call.alias.as_ref().and_then(|a| a.columns.get(i)).map(|c| bind::ident(&c.name));
    let col = |name: String, ty: DataType| ScopeCol {
        qualifier: Some(table.clone()),
        name,
        ty,
        table_oid: 0,
        column_id: 0,
        reach: Reach::Full,
    };
    let mut cols = vec![col(named(0).unwrap_or_else(|| table.clone()), ty)];
    let mut exprs = vec![x];
    if call.ordinality {
        cols.push(col(named(1).unwrap_or_else(|| "ordinality".into()), DataType::Int8));
        exprs.push(Expr::Const(Value::Int8(1)));
    }
    let given = call.alias.as_ref().map_or(0, |a| a.columns.len());
    too_many_aliases(&table, cols.len(), given)?;
    let plan = Plan::Project(Box::new(Plan::Values(vec![vec![]])), exprs);
    Ok((plan, Scope { cols }))
}

/// 42P10 when an alias names more columns than the FROM item has.
fn too_many_aliases(table: &str, available: usize, given: usize) -> Result<()> {
    if given > available {
        bail!(
            InvalidColumnReference,
            "table \"{table}\" has {available} columns available but {given} columns specified"
        );
    }
    Ok(())
}

/// Plans a select list's set-returning calls, zipped, as one function whose
/// columns are named `c0`, `c1`, ... under `qualifier` (one column each).
pub fn plan_zipped(
    b: &mut Binder<'_>,
    calls: &[(String, Vec<ast::Expr>)],
    qualifier: &str,
) -> Result<(Plan, Scope)> {
    let user = |name: &str| {
        let n = ast::ObjectName::from(vec![ast::Ident::with_quote('"', name)]);
        b.is_user_srf(&n).then_some(n)
    };
    if let [(name, args)] = calls {
        if let Some(n) = user(name) {
            return user_srf(b, n, args, qualifier);
        }
    } else if let Some(name) = calls.iter().map(|(n, _)| n).find(|n| user(n).is_some()) {
        bail!(
            FeatureNotSupported,
            "{name} with other set-returning functions in a select list is not supported yet"
        );
    }
    let mut bound = Vec::new();
    let mut cols = Vec::new();
    for (name, args) in calls {
        let args: Vec<&ast::Expr> = args.iter().collect();
        let (func, exprs, types) = bind_call(b, name, &args)?;
        // One column is the value itself; OUT columns make a record.
        let (ty, record) = match (types.as_slice(), output_names(&func)) {
            ([one], _) if !matches!(func, TableFunc::JsonToRecord { .. }) => (one.clone(), None),
            (_, Some(names)) => {
                let fields = names.into_iter().zip(types).collect();
                let rt = RecordType::new(fields);
                (DataType::Record(rt.clone()), Some(rt))
            }
            _ => bail!(
                FeatureNotSupported,
                "{name} with several arguments in a select list is not supported yet"
            ),
        };
        cols.push(ScopeCol {
            qualifier: Some(qualifier.to_string()),
            name: format!("c{}", cols.len()),
            ty,
            table_oid: 0,
            column_id: 0,
            reach: Reach::Full,
        });
        bound.push(SetCall { func, args: exprs, record });
    }
    let plan = Plan::Function(FromFunction { calls: bound, ordinality: false });
    Ok((plan, Scope { cols }))
}

/// A user-defined set-returning function alone in a select list: its FROM
/// form, whose one column (or a record of its columns) is the value.
fn user_srf(
    b: &mut Binder<'_>,
    name: ast::ObjectName,
    args: &[ast::Expr],
    qualifier: &str,
) -> Result<(Plan, Scope)> {
    let item = ast::TableFactor::Function {
        lateral: true,
        name,
        args: args
            .iter()
            .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e.clone())))
            .collect(),
        with_ordinality: false,
        alias: None,
    };
    let (plan, scope) = super::plan_factor(b, &item)?;
    let (expr, ty) = match scope.cols.as_slice() {
        [one] => (Expr::Column(0), one.ty.clone()),
        cols => {
            let fields = cols.iter().map(|c| (c.name.clone(), c.ty.clone())).collect();
            let rt = RecordType::new(fields);
            let values = (0..cols.len()).map(Expr::Column).collect();
            (Expr::Row(rt.clone(), values), DataType::Record(rt))
        }
    };
    let col = ScopeCol {
        qualifier: Some(qualifier.to_string()),
        name: "c0".into(),
        ty,
        table_oid: 0,
        column_id: 0,
        reach: Reach::Full,
    };
    Ok((Plan::Project(Box::new(plan), vec![expr]), Scope { cols: vec![col] }))
}

/// True for the set-returning functions Strata has.
pub fn is_set_returning(name: &str) -> bool {
    matches!(
        name,
        "generate_series"
            | "unnest"
            | "generate_subscripts"
            | "pg_partition_ancestors"
            | "pg_options_to_table"
            | "_pg_expandarray"
            | "regexp_matches"
            | "regexp_split_to_table"
            | "string_to_table"
            | "pg_listening_channels"
            | "pg_get_keywords"
            // Not set-returning in PostgreSQL (except the -set forms), but
            // a row in a select list all the same.
            | "json_populate_record"
            | "jsonb_populate_record"
            | "json_populate_recordset"
            | "jsonb_populate_recordset"
    ) || JSON_FUNCTIONS.contains(&name)
}

/// The json set-returning functions.
const JSON_FUNCTIONS: &[&str] = &[
    "json_each",
    "jsonb_each",
    "json_each_text",
    "jsonb_each_text",
    "json_array_elements",
    "jsonb_array_elements",
    "json_array_elements_text",
    "jsonb_array_elements_text",
    "json_object_keys",
    "jsonb_object_keys",
];

/// The names of a function's output columns, if it names them: its OUT
/// parameters, or a populated row's fields.
fn output_names(f: &TableFunc) -> Option<Vec<String>> {
    match f {
        TableFunc::JsonToRecord { columns, base: true, .. } => {
            Some(columns.iter().map(|(n, _)| n.clone()).collect())
        }
        f => declared_columns(f).map(|c| c.iter().map(|n| n.to_string()).collect()),
    }
}

/// The output column names a function declares (OUT parameters), if any.
fn declared_columns(f: &TableFunc) -> Option<&'static [&'static str]> {
    match f {
        TableFunc::JsonEach(_) => Some(&["key", "value"]),
        TableFunc::JsonElements(_) => Some(&["value"]),
        TableFunc::OptionsToTable => Some(&["option_name", "option_value"]),
        TableFunc::ExpandArray => Some(&["x", "n"]),
        TableFunc::Keywords => Some(&["word", "catcode", "barelabel", "catdesc", "baredesc"]),
        TableFunc::PartitionAncestors => Some(&["relid"]),
        _ => None,
    }
}

/// Binds json(b)_to_record(set), whose columns the FROM item's column
/// definition list gives: `AS x(a int, b text)`.
fn to_record(
    b: &mut Binder<'_>,
    fname: &str,
    args: &[&ast::Expr],
    alias: &Option<ast::TableAlias>,
) -> Result<(TableFunc, Vec<Expr>, Vec<DataType>)> {
    let own = if fname.starts_with("jsonb") { DataType::Jsonb } else { DataType::Json };
    let [arg] = args else {
        let mut types = Vec::new();
        for a in args {
            types.push(b.expr(a, &Scope::default())?.1);
        }
        return Err(crate::func::no_such_function(fname, &types));
    };
    let (x, t) = b.expr(arg, &Scope::default())?;
    if !matches!(t, DataType::Unknown) && t != own {
        return Err(crate::func::no_such_function(fname, &[t]));
    }
    let x = b.coerce(x, &t, &own)?;
    let defs = alias.as_ref().map(|a| a.columns.as_slice()).unwrap_or_default();
    if defs.is_empty() || defs.iter().any(|c| c.data_type.is_none()) {
        bail!(
            SyntaxError,
            "a column definition list is required for functions returning \"record\""
        );
    }
    let mut columns = Vec::with_capacity(defs.len());
    for c in defs {
        let Some(t) = &c.data_type else { continue };
        columns.push((bind::ident(&c.name), bind::catalog_type(b.catalog, t)?));
    }
    let types = columns.iter().map(|(_, t)| t.clone()).collect();
    let func = TableFunc::JsonToRecord {
        name: fname.to_string(),
        set: fname.ends_with("set"),
        columns,
        base: false,
    };
    Ok((func, vec![x], types))
}

/// Binds json(b)_populate_record(set)(base, json): the columns are the
/// fields of the base argument's row type.
fn populate_record(
    b: &mut Binder<'_>,
    fname: &str,
    bound: Vec<(Expr, DataType)>,
) -> Result<(TableFunc, Vec<Expr>, Vec<DataType>)> {
    let own = if fname.starts_with("jsonb") { DataType::Jsonb } else { DataType::Json };
    let types: Vec<DataType> = bound.iter().map(|(_, t)| t.clone()).collect();
    let [(base, base_ty), (json, json_ty)] =
        <[_; 2]>::try_from(bound).map_err(|_| crate::func::no_such_function(fname, &types))?;
    if !matches!(json_ty, DataType::Unknown) && json_ty != own {
        return Err(crate::func::no_such_function(fname, &types));
    }
    let rt = match &base_ty {
        DataType::Record(rt) if !rt.fields.is_empty() => rt.clone(),
        DataType::Record(_) => bail!(
            SyntaxError,
            "a column definition list is required for functions returning \"record\""
        ),
        _ => bail!(DatatypeMismatch, "first argument of {fname} must be a row type"),
    };
    let json = b.coerce(json, &json_ty, &own)?;
    let columns = rt.fields.clone();
    let types = columns.iter().map(|(_, t)| t.clone()).collect();
    let set = fname.ends_with("set");
    let func = TableFunc::JsonToRecord { name: fname.to_string(), set, columns, base: true };
    Ok((func, vec![base, json], types))
}

/// Binds one set-returning call: the function, its coerced arguments and
/// its column types.
fn bind_call(
    b: &mut Binder<'_>,
    fname: &str,
    args: &[&ast::Expr],
) -> Result<(TableFunc, Vec<Expr>, Vec<DataType>)> {
    let empty = Scope::default();
    let mut bound = Vec::new();
    for e in args {
        bound.push(b.expr(e, &empty)?);
    }
    let no_such = |bound: &[(Expr, DataType)]| {
        let types: Vec<DataType> = bound.iter().map(|(_, t)| t.clone()).collect();
        crate::func::no_such_function(fname, &types)
    };
    let (func, exprs, types) = match fname {
        "json_populate_record"
        | "jsonb_populate_record"
        | "json_populate_recordset"
        | "jsonb_populate_recordset" => populate_record(b, fname, bound)?,
        "generate_series"
            if bound.len() == 3
                && bound.iter().take(2).any(|(_, t)| {
                    matches!(t, DataType::Timestamp | DataType::TimestampTz | DataType::Date)
                }) =>
        {
            // Dates go to timestamptz, the datetime category's preferred
            // type, unless a plain timestamp argument picks that overload.
            let plain = |t: &DataType| *t == DataType::Timestamp;
            let zoned = |t: &DataType| *t == DataType::TimestampTz;
            let ty = if bound.iter().any(|(_, t)| plain(t)) && !bound.iter().any(|(_, t)| zoned(t))
            {
                DataType::Timestamp
            } else {
                DataType::TimestampTz
            };
            let mut exprs = Vec::new();
            for (i, (x, t)) in bound.into_iter().enumerate() {
                let to = if i < 2 { ty.clone() } else { DataType::Interval };
                exprs.push(b.coerce(x, &t, &to)?);
            }
            (TableFunc::TimeSeries, exprs, vec![ty])
        }
        "generate_series" => {
            if !(2..=3).contains(&bound.len()) {
                return Err(no_such(&bound));
            }
            let mut ty = DataType::Int4;
            for (_, t) in &bound {
                ty = cast::common_type(&ty, t).unwrap_or(DataType::Int8);
            }
            if !matches!(ty, DataType::Int4 | DataType::Int8 | DataType::Numeric(_)) {
                bail!(FeatureNotSupported, "generate_series over {ty} is not supported yet");
            }
            let mut exprs = Vec::new();
            for (x, t) in bound {
                exprs.push(b.coerce(x, &t, &ty)?);
            }
            (TableFunc::Series(ty.clone()), exprs, vec![ty])
        }
        "unnest" => {
            if bound.is_empty() || bound.iter().any(|(_, t)| t.elem().is_none()) {
                return Err(no_such(&bound));
            }
            let types = bound.iter().filter_map(|(_, t)| t.elem().cloned()).collect();
            (TableFunc::Unnest, bound.into_iter().map(|(x, _)| x).collect(), types)
        }
        "generate_subscripts" => {
            if !(2..=3).contains(&bound.len()) || bound[0].1.elem().is_none() {
                return Err(no_such(&bound));
            }
            let mut exprs = Vec::new();
            for (i, (x, t)) in bound.into_iter().enumerate() {
                let to = match i {
                    0 => t.clone(),
                    1 => DataType::Int4,
                    _ => DataType::Bool,
                };
                exprs.push(b.coerce(x, &t, &to)?);
            }
            (TableFunc::Subscripts, exprs, vec![DataType::Int4])
        }
        name if JSON_FUNCTIONS.contains(&name) => {
            let own = if fname.starts_with("jsonb") { DataType::Jsonb } else { DataType::Json };
            let [(x, t)] = <[_; 1]>::try_from(bound).map_err(|b: Vec<_>| no_such(&b))?;
            if !matches!(t, DataType::Unknown) && t != own {
                return Err(no_such(&[(x, t)]));
            }
            let x = b.coerce(x, &t, &own)?;
            let as_text = fname.ends_with("_text");
            let value = if as_text { DataType::Text } else { own };
            let (func, types) = if fname.contains("_each") {
                (TableFunc::JsonEach(as_text), vec![DataType::Text, value])
            } else if fname.contains("_array_elements") {
                (TableFunc::JsonElements(as_text), vec![value])
            } else {
                (TableFunc::JsonKeys, vec![DataType::Text])
            };
            (func, vec![x], types)
        }
        "pg_options_to_table" => {
            let [(x, t)] = <[_; 1]>::try_from(bound).map_err(|b: Vec<_>| no_such(&b))?;
            let x = b.coerce(x, &t, &DataType::Text.array_of())?;
            (TableFunc::OptionsToTable, vec![x], vec![DataType::Text, DataType::Text])
        }
        "_pg_expandarray" => {
            let [(x, t)] = <[_; 1]>::try_from(bound).map_err(|b: Vec<_>| no_such(&b))?;
            let Some(elem) = t.elem().cloned() else { return Err(no_such(&[(x, t)])) };
            (TableFunc::ExpandArray, vec![x], vec![elem, DataType::Int4])
        }
        "regexp_matches" | "regexp_split_to_table" | "string_to_table" => {
            if !(2..=3).contains(&bound.len()) {
                return Err(no_such(&bound));
            }
            let mut exprs = Vec::new();
            for (x, t) in bound {
                exprs.push(b.coerce(x, &t, &DataType::Text)?);
            }
            match fname {
                "regexp_matches" => {
                    (TableFunc::RegexMatches, exprs, vec![DataType::Text.array_of()])
                }
                "string_to_table" => (TableFunc::StringSplit, exprs, vec![DataType::Text]),
                _ => (TableFunc::RegexSplit, exprs, vec![DataType::Text]),
            }
        }
        "pg_listening_channels" if bound.is_empty() => {
            (TableFunc::ListeningChannels, vec![], vec![DataType::Text])
        }
        "pg_get_keywords" if bound.is_empty() => {
            use DataType::{Bool, QChar, Text};
            (TableFunc::Keywords, vec![], vec![Text, QChar, Bool, Text, Text])
        }
        "pg_partition_ancestors" => {
            let [(x, t)] = <[_; 1]>::try_from(bound).map_err(|b: Vec<_>| no_such(&b))?;
            let reg = DataType::Reg(sqltypes::RegKind::Class);
            let x = b.coerce(x, &t, &reg)?;
            (TableFunc::PartitionAncestors, vec![x], vec![reg])
        }
        _ => return Err(no_such(&bound)),
    };
    Ok((func, exprs, types))
}

impl FromFunction {
    /// The function's SQL name (for EXPLAIN).
    pub fn name(&self) -> &str {
        match self.calls.first().map(|c| &c.func) {
            Some(TableFunc::Series(_)) => "generate_series",
            Some(TableFunc::Unnest) => "unnest",
            Some(TableFunc::PartitionAncestors) => "pg_partition_ancestors",
            Some(TableFunc::TimeSeries) => "generate_series",
            Some(TableFunc::JsonEach(_)) => "json_each",
            Some(TableFunc::JsonElements(_)) => "json_array_elements",
            Some(TableFunc::JsonKeys) => "json_object_keys",
            Some(TableFunc::OptionsToTable) => "pg_options_to_table",
            Some(TableFunc::ExpandArray) => "_pg_expandarray",
            Some(TableFunc::RegexMatches) => "regexp_matches",
            Some(TableFunc::RegexSplit) => "regexp_split_to_table",
            Some(TableFunc::StringSplit) => "string_to_table",
            Some(TableFunc::ListeningChannels) => "pg_listening_channels",
            Some(TableFunc::Keywords) => "pg_get_keywords",
            Some(TableFunc::JsonToRecord { name, .. }) => name,
            _ => "generate_subscripts",
        }
    }
}

/// pg_get_keywords' rows.
fn keyword_rows() -> Vec<Vec<Value>> {
    let t = |s: &str| Value::Text(s.to_string());
    crate::builtins::keywords()
        .iter()
        .map(|[word, code, bare, catdesc, baredesc]| {
            vec![t(word), t(code), Value::Bool(*bare == "t"), t(catdesc), t(baredesc)]
        })
        .collect()
}

/// _pg_expandarray's rows: (element, position from 1) over the first
/// dimension (an int2vector's from its lower bound 0).
fn expand_array(array: Option<Value>) -> Vec<Vec<Value>> {
    let Some(Value::Array(a)) = array else { return vec![] };
    let Some(first) = a.dims.first() else { return vec![] };
    // Elements of the first dimension only: a slice of a deeper array
    // is the first element of each sub-array, as $1[s] reads it.
    let stride: usize = a.dims[1..].iter().map(|d| d.len as usize).product();
    if stride != 1 {
        return (0..first.len as usize)
            .map(|i| vec![Value::Null, Value::Int4(i as i32 + 1)])
            .collect();
    }
    a.items.iter().enumerate().map(|(i, v)| vec![v.clone(), Value::Int4(i as i32 + 1)]).collect()
}

/// pg_options_to_table's rows: each `name=value` element split at its
/// first `=` (a value of NULL where there is none).
fn options_rows(options: Option<Value>) -> Vec<Vec<Value>> {
    let Some(Value::Array(a)) = options else { return vec![] };
    a.items
        .iter()
        .filter_map(|v| match v {
            Value::Text(s) => Some(match s.split_once('=') {
                Some((k, v)) => vec![Value::Text(k.into()), Value::Text(v.into())],
                None => vec![Value::Text(s.clone()), Value::Null],
            }),
            _ => None,
        })
        .collect()
}

/// Runs a function in FROM.
pub fn rows(f: &FromFunction, ctx: &EvalContext) -> Result<Vec<Vec<Value>>> {
    let mut results = Vec::with_capacity(f.calls.len());
    for SetCall { func, args, record } in &f.calls {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(a.eval(&[], ctx)?);
        }
        let rows = match func {
            TableFunc::Series(ty) => series(&vals, ty, &ctx.interrupts)?,
            TableFunc::Unnest => unnest(vals),
            TableFunc::Subscripts => subscripts(&vals),
            TableFunc::PartitionAncestors => {
                let mut out: Vec<Vec<Value>> =
                    vals.into_iter().filter(|v| !v.is_null()).map(|v| vec![v]).collect();
                if let (Some(cat), Some(oid)) =
                    (&ctx.catalog, out.first().and_then(|r| r[0].as_oid()))
                {
                    let mut at = cat.table_by_oid(oid);
                    while let Some(of) = at.as_ref().and_then(|t| t.partition_of.as_ref()) {
                        let name = crate::func::catalog_info::class_name(cat, of.parent);
                        let kind = sqltypes::RegKind::Class;
                        let reg = sqltypes::RegValue { kind, oid: of.parent, name };
                        out.push(vec![Value::Reg(Box::new(reg))]);
                        at = cat.table_by_oid(of.parent);
                    }
                }
                out
            }
            TableFunc::TimeSeries => time_series(&vals, ctx.zone(), &ctx.interrupts)?,
            TableFunc::OptionsToTable => options_rows(vals.into_iter().next()),
            TableFunc::JsonEach(_) | TableFunc::JsonElements(_) | TableFunc::JsonKeys => {
                json_rows(func, vals.into_iter().next().unwrap_or(Value::Null))?
            }
            TableFunc::ExpandArray => expand_array(vals.into_iter().next()),
            TableFunc::RegexMatches => crate::func::regex::matches_rows(&vals)?,
            TableFunc::RegexSplit => crate::func::regex::split_rows(&vals)?,
            TableFunc::StringSplit => {
                let arg = |i: usize| vals.get(i).unwrap_or(&Value::Null);
                crate::func::arrays::split_string(arg(0), arg(1), arg(2))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|v| vec![v])
                    .collect()
            }
            TableFunc::ListeningChannels => match &ctx.listener {
                Some(l) => l.channels().into_iter().map(|c| vec![Value::Text(c)]).collect(),
                None => Vec::new(),
            },
            TableFunc::Keywords => keyword_rows(),
            TableFunc::JsonToRecord { name, set, columns, base } => {
                let mut vals = vals.into_iter();
                let base = match base {
                    true => match vals.next() {
                        Some(Value::Record(r)) => Some(r.values),
                        _ => Some(vec![Value::Null; columns.len()]),
                    },
                    false => None,
                };
                let arg = vals.next().unwrap_or(Value::Null);
                to_record_rows(name, *set, columns, base.as_deref(), arg, ctx)?
            }
        };
        results.push(match record {
            Some(rt) => rows.into_iter().map(|r| vec![RecordValue::value(rt.clone(), r)]).collect(),
            None => rows,
        });
    }
    let mut out = if results.len() == 1 {
        results.pop().unwrap_or_default()
    } else {
        let widths: Vec<usize> = results
            .iter()
            .zip(&f.calls)
            .map(|(r, call)| match (r.first(), &call.func) {
                (Some(row), _) => row.len(),
                (None, _) if call.record.is_some() => 1,
                (None, TableFunc::Unnest) => call.args.len(),
                (None, func) => declared_columns(func).map_or(1, <[_]>::len),
            })
            .collect();
        let n = results.iter().map(Vec::len).max().unwrap_or(0);
        let mut iters: Vec<_> = results.into_iter().map(|r| r.into_iter()).collect();
        (0..n)
            .map(|_| {
                let mut row = Vec::new();
                for (it, w) in iters.iter_mut().zip(&widths) {
                    match it.next() {
                        Some(r) => row.extend(r),
                        None => row.extend(std::iter::repeat_n(Value::Null, *w)),
                    }
                }
                row
            })
            .collect()
    };
    if f.ordinality {
        for (i, row) in out.iter_mut().enumerate() {
            row.push(Value::Int8(i as i64 + 1));
        }
    }
    Ok(out)
}

fn series(vals: &[Value], ty: &DataType, interrupts: &Interrupts) -> Result<Vec<Vec<Value>>> {
    if vals.iter().any(Value::is_null) {
        return Ok(vec![]);
    }
    let as_i64 = |v: &Value| -> Result<i64> {
        match cast::cast(v.clone(), &DataType::Int8)? {
            Value::Int8(i) => Ok(i),
            _ => bail!(DatatypeMismatch, "generate_series needs integers"),
        }
    };
    let start = as_i64(&vals[0])?;
    let stop = as_i64(&vals[1])?;
    let step = match vals.get(2) {
        Some(s) => as_i64(s)?,
        None => 1,
    };
    if step == 0 {
        bail!(InvalidParameterValue, "step size cannot equal zero");
    }
    let count = if (step > 0 && stop < start) || (step < 0 && stop > start) {
        0
    } else {
        ((stop as i128 - start as i128) / step as i128 + 1) as u128
    };
    if count > MAX_ROWS as u128 {
        bail!(
            ProgramLimitExceeded,
            "generate_series would produce {count} rows, more than {MAX_ROWS}"
        );
    }
    let mut out = Vec::with_capacity(count as usize);
    let mut cur = start as i128;
    for i in 0..count as usize {
        interrupts.tick(i)?;
        let v = Value::Int8(cur as i64);
        out.push(vec![if *ty == DataType::Int8 { v } else { cast::cast(v, ty)? }]);
        cur += step as i128;
    }
    Ok(out)
}

/// unnest of several arrays: row i holds each array's i-th element (NULL
/// past an array's end); a NULL array contributes no rows.
fn unnest(vals: Vec<Value>) -> Vec<Vec<Value>> {
    let arrays: Vec<Vec<Value>> = vals
        .into_iter()
        .map(|v| match v {
            Value::Array(a) => a.items,
            _ => Vec::new(),
        })
        .collect();
    let n = arrays.iter().map(Vec::len).max().unwrap_or(0);
    let mut iters: Vec<_> = arrays.into_iter().map(|a| a.into_iter()).collect();
    (0..n).map(|_| iters.iter_mut().map(|it| it.next().unwrap_or(Value::Null)).collect()).collect()
}

/// generate_series over timestamps with an interval step.
fn time_series(
    vals: &[Value],
    zone: &sqltypes::Zone,
    interrupts: &Interrupts,
) -> Result<Vec<Vec<Value>>> {
    let ts = |v: &Value| match v {
        Value::Timestamp(t) | Value::TimestampTz(t) => Some(*t),
        _ => None,
    };
    let (Some(start), Some(stop), Some(Value::Interval(step))) =
        (vals.first().and_then(ts), vals.get(1).and_then(ts), vals.get(2))
    else {
        return Ok(vec![]);
    };
    let tz = matches!(vals.first(), Some(Value::TimestampTz(_)));
    let zero = step.span() == 0;
    if zero {
        bail!(InvalidParameterValue, "step size cannot equal zero");
    }
    let up = step.span() > 0;
    let mut out = Vec::new();
    let mut cur = start;
    while (up && cur <= stop) || (!up && cur >= stop) {
        if out.len() >= MAX_ROWS {
            bail!(ProgramLimitExceeded, "generate_series would produce more than {MAX_ROWS} rows");
        }
        interrupts.tick(out.len())?;
        out.push(vec![if tz { Value::TimestampTz(cur) } else { Value::Timestamp(cur) }]);
        let next = if tz {
            sqltypes::interval::timestamptz_add(cur, step, zone)
        } else {
            sqltypes::interval::timestamp_add(cur, step)
        };
        match next {
            Ok(next) => cur = next,
            Err(_) => break,
        }
    }
    Ok(out)
}

/// The rows of json(b)_each, _array_elements and _object_keys.
fn json_rows(func: &TableFunc, v: Value) -> Result<Vec<Vec<Value>>> {
    use sqltypes::json::{self, Json};
    let (tree, is_json) = match &v {
        Value::Null => return Ok(vec![]),
        Value::Jsonb(j) => ((**j).clone(), false),
        Value::Json(s) => (json::parse_json(s)?, true),
        _ => return Ok(vec![]),
    };
    let wrap = |j: &Json, as_text: bool| -> Value {
        if as_text {
            j.as_text().map(Value::Text).unwrap_or(Value::Null)
        } else if is_json {
            Value::Json(j.to_text())
        } else {
            Value::Jsonb(Box::new(j.clone()))
        }
    };
    let kind = if is_json { "json" } else { "jsonb" };
    Ok(match (func, &tree) {
        (TableFunc::JsonEach(t), Json::Object(pairs)) => {
            pairs.iter().map(|(k, val)| vec![Value::Text(k.clone()), wrap(val, *t)]).collect()
        }
        (TableFunc::JsonKeys, Json::Object(pairs)) => {
            pairs.iter().map(|(k, _)| vec![Value::Text(k.clone())]).collect()
        }
        (TableFunc::JsonElements(t), Json::Array(items)) => {
            items.iter().map(|val| vec![wrap(val, *t)]).collect()
        }
        (TableFunc::JsonElements(_), Json::Object(_)) => {
            bail!(InvalidParameterValue, "cannot extract elements from an object")
        }
        (TableFunc::JsonElements(_), _) => {
            bail!(InvalidParameterValue, "cannot extract elements from a scalar")
        }
        (TableFunc::JsonKeys, Json::Array(_)) => {
            bail!(InvalidParameterValue, "cannot call {kind}_object_keys on an array")
        }
        (TableFunc::JsonKeys, _) => {
            bail!(InvalidParameterValue, "cannot call {kind}_object_keys on a scalar")
        }
        (_, Json::Array(_)) => bail!(InvalidParameterValue, "cannot call {kind}_each on an array"),
        _ => bail!(InvalidParameterValue, "cannot deconstruct a scalar"),
    })
}

/// The rows of json(b)_to_record(set): each object's members named by
/// `columns`, read as their types read text (a json or jsonb column takes
/// the member as it is, an array column a JSON array); a missing member is
/// NULL, or the base row's value (json(b)_populate_record(set)). A json
/// argument's members keep their text as written.
fn to_record_rows(
    name: &str,
    set: bool,
    columns: &[(String, DataType)],
    base: Option<&[Value]>,
    v: Value,
    ctx: &EvalContext,
) -> Result<Vec<Vec<Value>>> {
    let missing = |k: usize| base.and_then(|b| b.get(k)).cloned().unwrap_or(Value::Null);
    use sqltypes::json::{self, Json};
    /// One object, parsed (jsonb) or as written (json).
    enum Object<'a> {
        Tree(&'a Json),
        Text(&'a str),
    }
    let text;
    let tree;
    let objects: Vec<Object<'_>> = match v {
        // As for any function returning a row, NULL in is a row of NULLs
        // (or the base row).
        Value::Null if !set => return Ok(vec![(0..columns.len()).map(missing).collect()]),
        Value::Null => return Ok(vec![]),
        Value::Json(s) => {
            text = s;
            json::validate_json(&text)?;
            match (set, json::json_elements(&text)?) {
                (true, Some(items)) => items.into_iter().map(Object::Text).collect(),
                (false, None) => vec![Object::Text(text.as_str())],
                (true, None) => {
                    let kind =
                        if text.trim_start().starts_with('{') { "an object" } else { "a scalar" };
                    bail!(InvalidParameterValue, "cannot call {name} on {kind}")
                }
                (false, Some(_)) => {
                    bail!(InvalidParameterValue, "cannot call populate_composite on an array")
                }
            }
        }
        Value::Jsonb(j) => {
            tree = *j;
            match (set, &tree) {
                (true, Json::Array(items)) => items.iter().map(Object::Tree).collect(),
                (false, Json::Array(_)) => {
                    bail!(InvalidParameterValue, "cannot call populate_composite on an array")
                }
                (true, _) => bail!(InvalidParameterValue, "cannot call {name} on a non-array"),
                (false, o) => vec![Object::Tree(o)],
            }
        }
        _ => return Ok(vec![]),
    };
    let not_objects =
        || err!(InvalidParameterValue, "argument of {name} must be an array of objects");
    let scalar = || err!(InvalidParameterValue, "cannot call populate_composite on a scalar");
    let mut rows = Vec::with_capacity(objects.len());
    for (i, o) in objects.iter().enumerate() {
        ctx.interrupts.tick(i)?;
        let mut row = Vec::with_capacity(columns.len());
        match o {
            Object::Tree(o) => {
                if !matches!(o, Json::Object(_)) {
                    return Err(if set { not_objects() } else { scalar() });
                }
                for (k, (col, ty)) in columns.iter().enumerate() {
                    row.push(match o.field(col) {
                        Some(m) => member_value(Some(m), ty, ctx.zone())?,
                        None => missing(k),
                    });
                }
            }
            Object::Text(o) => {
                if !o.trim_start().starts_with('{') {
                    return Err(if set { not_objects() } else { scalar() });
                }
                for (k, (col, ty)) in columns.iter().enumerate() {
                    let member = json::json_member(o, Some(col), None)?;
                    row.push(match (member, ty) {
                        (Some(m), DataType::Json) if m != "null" => Value::Json(m.to_string()),
                        (Some(m), _) => {
                            let parsed = json::parse_json(m)?;
                            let written = match &parsed {
                                Json::String(_) | Json::Null => None,
                                _ if matches!(ty, DataType::Array(_) | DataType::Jsonb) => None,
                                _ => Some(m),
                            };
                            match written {
                                Some(m) => sqltypes::text::parse_text_in(ty, m, ctx.zone())?,
                                None => member_value(Some(&parsed), ty, ctx.zone())?,
                            }
                        }
                        (None, _) => missing(k),
                    });
                }
            }
        }
        rows.push(row);
    }
    Ok(rows)
}

/// One member as a value of column type `ty`.
fn member_value(
    j: Option<&sqltypes::json::Json>,
    ty: &DataType,
    zone: &sqltypes::Zone,
) -> Result<Value> {
    use sqltypes::json::Json;
    let Some(j) = j.filter(|j| **j != Json::Null) else { return Ok(Value::Null) };
    let text = match (ty, j) {
        (DataType::Json, j) => return Ok(Value::Json(j.to_text())),
        (DataType::Jsonb, j) => return Ok(Value::Jsonb(Box::new(j.clone()))),
        (DataType::Array(_), Json::Array(_)) => array_literal(j),
        (_, Json::String(s)) => s.clone(),
        (_, j) => j.to_text(),
    };
    sqltypes::text::parse_text_in(ty, &text, zone)
}

/// A JSON array (of arrays, for more dimensions) as an array literal:
/// `[[1, "a b"], [null, 2]]` is `{{1,"a b"},{NULL,2}}`.
fn array_literal(j: &sqltypes::json::Json) -> String {
    use sqltypes::json::Json;
    match j {
        Json::Array(items) => {
            let parts: Vec<String> = items.iter().map(array_literal).collect();
            format!("{{{}}}", parts.join(","))
        }
        Json::Null => "NULL".into(),
        other => {
            let text = match other {
                Json::String(s) => s.clone(),
                _ => other.to_text(),
            };
            format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
        }
    }
}

fn subscripts(vals: &[Value]) -> Vec<Vec<Value>> {
    let (Some(Value::Array(a)), Some(Value::Int4(dim))) = (vals.first(), vals.get(1)) else {
        return Vec::new();
    };
    let Some(d) = usize::try_from(dim - 1).ok().and_then(|i| a.dims.get(i)) else {
        return Vec::new();
    };
    let reverse = matches!(vals.get(2), Some(Value::Bool(true)));
    let mut subs: Vec<Vec<Value>> =
        (d.lower..d.lower + d.len).map(|i| vec![Value::Int4(i)]).collect();
    if reverse {
        subs.reverse();
    }
    subs
}
