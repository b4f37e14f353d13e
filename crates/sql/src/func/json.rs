//! json and jsonb functions and operators: `->`, `->>`, `#>`, `#>>`,
//! `@>`, `<@`, `?`, `?|`, `?&`, `||`, `-`, `#-`, the builders
//! (json(b)_build_object/array, to_json(b), array_to_json), and
//! json(b)_typeof, _array_length, _extract_path(_text), jsonb_set,
//! jsonb_pretty, json(b)_strip_nulls. Values convert to JSON as
//! PostgreSQL's datum_to_json does: numbers and booleans bare, timestamps
//! in ISO 8601 with `T`, arrays as JSON arrays, everything else as a string
//! of its text form.

use sqltypes::json::{self, Json};
use sqltypes::{datetime, text, DataType, Numeric, Value, Zone};

use crate::error::Result;
use crate::{bail, err};

/// A resolved json function or operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonFunc {
    /// `->` (false) or `->>` (true): a field by key or an element by index
    Get(bool),
    /// `#>` / `#>>`, json(b)_extract_path(_text): a path given as text[] or
    /// as the remaining arguments (the flag: as text)
    Path(bool),
    /// `@>`
    Contains,
    /// `<@`
    ContainedBy,
    /// `?`
    Exists,
    /// `?|` (false) / `?&` (true)
    ExistsMany(bool),
    /// jsonb `||`
    Concat,
    /// jsonb `-` key, index or text[] of keys
    Delete,
    /// `#-`
    DeletePath,
    /// json(b)_build_object (the flag: jsonb)
    BuildObject(bool),
    /// json(b)_build_array
    BuildArray(bool),
    /// to_json / to_jsonb / array_to_json / row_to_json(record)
    To(bool),
    /// row_to_json(record, pretty)
    RowToJson,
    /// json(b)_typeof
    TypeOf,
    /// json(b)_array_length
    ArrayLength,
    /// jsonb_set(target, path, value [, create_missing])
    Set,
    /// jsonb_set_lax(target, path, value [, create_missing [,
    /// null_value_treatment]]): jsonb_set, with an SQL NULL value handled
    /// as the treatment says
    SetLax,
    /// jsonb_insert(target, path, value [, insert_after])
    Insert,
    /// `SET j[k1][k2]... = x`: (jsonb, x, k1, k2, ...), the jsonb with
    /// that path set (see `Json::assign_path`); the binder makes a NULL
    /// jsonb an empty object or array, and x NULL is json's null.
    Assign,
    /// json_object / jsonb_object (the flag: jsonb) of one text array of
    /// keys and values, or of a key array and a value array
    Object(bool),
    /// jsonb_pretty
    Pretty,
    /// json(b)_strip_nulls
    StripNulls,
}

/// A resolution: function, result type, argument coercions.
pub type Resolved = (JsonFunc, DataType, Vec<Option<DataType>>);

fn is_json(t: &DataType) -> bool {
    matches!(t, DataType::Json | DataType::Jsonb)
}

/// The json type an argument is taken as (an unknown literal: `default`).
fn json_arg(t: &DataType, default: DataType) -> Option<DataType> {
    match t {
        DataType::Json | DataType::Jsonb => Some(t.clone()),
        DataType::Unknown => Some(default),
        _ => None,
    }
}

/// Resolves a json function by name, or None if `name` is not one.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    use DataType as T;
    use JsonFunc as F;
    let n = args.len();
    let first = args.first().cloned().unwrap_or(T::Unknown);
    let jsonb = name.starts_with("jsonb") || name == "to_jsonb";
    let own = if jsonb { T::Jsonb } else { T::Json };
    let no = || Some(Err(super::no_such_function(name, args)));
    let own_first = own.clone();
    let typed_first = |f: F, ty: DataType| -> Option<Result<Resolved>> {
        match json_arg(&first, own_first.clone()) {
            Some(t) if t == own_first => Some(Ok((f, ty, vec![Some(t)]))),
            _ => Some(Err(super::no_such_function(name, args))),
        }
    };
    Some(Ok(match (name, n) {
        ("json_build_object" | "jsonb_build_object", n) => {
            if n % 2 != 0 {
                return Some(Err(odd_pairs(name)));
            }
            (F::BuildObject(jsonb), own, unknown_as_text(args))
        }
        ("json_build_array" | "jsonb_build_array", _) => {
            (F::BuildArray(jsonb), own, unknown_as_text(args))
        }
        ("to_json" | "to_jsonb", 1) => (F::To(jsonb), own, unknown_as_text(args)),
        ("array_to_json", 1) if first.elem().is_some() => (F::To(false), T::Json, vec![None]),
        ("row_to_json", 1) if matches!(first, T::Record(_)) => (F::To(false), T::Json, vec![None]),
        ("row_to_json", 2) if matches!(first, T::Record(_)) => {
            (F::RowToJson, T::Json, vec![None, Some(T::Bool)])
        }
        ("json_typeof" | "jsonb_typeof", 1) => return typed_first(F::TypeOf, T::Text),
        ("json_array_length" | "jsonb_array_length", 1) => {
            return typed_first(F::ArrayLength, T::Int4)
        }
        ("json_strip_nulls" | "jsonb_strip_nulls", 1) => return typed_first(F::StripNulls, own),
        ("jsonb_pretty", 1) => return typed_first(F::Pretty, T::Text),
        (
            "json_extract_path"
            | "jsonb_extract_path"
            | "json_extract_path_text"
            | "jsonb_extract_path_text",
            1..,
        ) => {
            let as_text = name.ends_with("_text");
            match json_arg(&first, own.clone()) {
                Some(t) if t == own => {}
                _ => return no(),
            }
            let mut targets = vec![Some(own.clone())];
            targets.extend(std::iter::repeat_n(Some(T::Text), n - 1));
            (F::Path(as_text), if as_text { T::Text } else { own }, targets)
        }
        ("jsonb_insert", 3 | 4) => (
            F::Insert,
            T::Jsonb,
            vec![Some(T::Jsonb), Some(T::Text.array_of()), Some(T::Jsonb), Some(T::Bool)],
        ),
        ("json_object" | "jsonb_object", 1 | 2) => {
            let jsonb = name == "jsonb_object";
            (
                F::Object(jsonb),
                if jsonb { T::Jsonb } else { T::Json },
                vec![Some(T::Text.array_of()); n],
            )
        }
        ("jsonb_set", 3 | 4) => (
            F::Set,
            T::Jsonb,
            vec![Some(T::Jsonb), Some(T::Text.array_of()), Some(T::Jsonb), Some(T::Bool)],
        ),
        ("jsonb_set_lax", 3..=5) => {
            let mut params =
                vec![Some(T::Jsonb), Some(T::Text.array_of()), Some(T::Jsonb), Some(T::Bool)];
            params.push(Some(T::Text));
            (F::SetLax, T::Jsonb, params)
        }
        _ => return None,
    }))
}

/// jsonb_set_lax: NULL for a NULL target, path or create_missing; an SQL
/// NULL value is a JSON null (`use_json_null`, the default), deletes the
/// path (`delete_key`), leaves the target (`return_target`) or is an error
/// (`raise_exception`).
fn set_lax(mut args: Vec<Value>, zone: &sqltypes::Zone) -> Result<Value> {
    // The defaults of the arguments not given.
    let given = args.len();
    args.extend(
        [Value::Bool(true), Value::Text("use_json_null".into())].into_iter().skip(given - 3),
    );
    let [target, path, new, create, treatment] = <[Value; 5]>::try_from(args)
        .map_err(|_| crate::err!(InternalError, "jsonb_set_lax arguments"))?;
    let (Value::Bool(create), false, false) = (create, target.is_null(), path.is_null()) else {
        return Ok(Value::Null);
    };
    let treatment = match &treatment {
        Value::Text(t) => t.as_str(),
        _ => "",
    };
    let bad = || {
        crate::err!(
            InvalidParameterValue,
            "null_value_treatment must be \"delete_key\", \"return_target\", \"use_json_null\", or \"raise_exception\""
        )
    };
    if !matches!(treatment, "delete_key" | "return_target" | "use_json_null" | "raise_exception") {
        return Err(bad());
    }
    let steps: Vec<String> = texts(&path).into_iter().flatten().collect();
    let doc = tree(&target, zone)?;
    let new = match new {
        Value::Null => match treatment {
            "raise_exception" => {
                return Err(crate::err!(NullValueNotAllowed, "JSON value must not be null")
                    .with_detail("Exception was raised because null_value_treatment is \"raise_exception\".")
                    .with_hint("To avoid, either change the null_value_treatment argument or ensure that an SQL NULL is not passed."))
            }
            "delete_key" => return Ok(jsonb(doc.remove_path(&steps)?)),
            "return_target" => return Ok(jsonb(doc)),
            _ => Json::Null,
        },
        v => tree(&v, zone)?,
    };
    Ok(jsonb(doc.set_path(&steps, &new, create)?))
}

fn unknown_as_text(args: &[DataType]) -> Vec<Option<DataType>> {
    args.iter().map(|t| (*t == DataType::Unknown).then_some(DataType::Text)).collect()
}

/// Resolves a json operator for operand types, or None when neither side
/// is json. Returns the function, result type and operand coercions.
pub fn resolve_operator(op: &str, l: &DataType, r: &DataType) -> Option<Result<Resolved>> {
    use DataType as T;
    use JsonFunc as F;
    if !(is_json(l) || (is_json(r) && matches!(op, "@>" | "<@" | "||"))) {
        return None;
    }
    let lt = if is_json(l) { l.clone() } else { json_arg(r, T::Jsonb).unwrap_or(T::Jsonb) };
    let jsonb = lt == T::Jsonb;
    let text_arr = T::Text.array_of();
    let int = |t: &DataType| matches!(t, T::Int2 | T::Int4 | T::Int8);
    let fail = || {
        Some(Err(err!(UndefinedFunction, "operator does not exist: {l} {op} {r}").with_hint(
            "No operator matches the given name and argument types. You might need to add explicit type casts.",
        )))
    };
    Some(Ok(match op {
        "->" | "->>" => {
            let key = if int(r) {
                T::Int4
            } else if r.is_string() || *r == T::Unknown {
                T::Text
            } else {
                return fail();
            };
            let ty = if op == "->>" { T::Text } else { lt.clone() };
            (F::Get(op == "->>"), ty, vec![Some(lt), Some(key)])
        }
        "#>" | "#>>" => {
            let ty = if op == "#>>" { T::Text } else { lt.clone() };
            (F::Path(op == "#>>"), ty, vec![Some(lt), Some(text_arr)])
        }
        "@>" | "<@" if jsonb && (is_json(r) || *r == T::Unknown || is_json(l)) => {
            let f = if op == "@>" { F::Contains } else { F::ContainedBy };
            (f, T::Bool, vec![Some(T::Jsonb), Some(T::Jsonb)])
        }
        "?" if jsonb => (F::Exists, T::Bool, vec![Some(T::Jsonb), Some(T::Text)]),
        "?|" | "?&" if jsonb => {
            (F::ExistsMany(op == "?&"), T::Bool, vec![Some(T::Jsonb), Some(text_arr)])
        }
        "||" if jsonb => (F::Concat, T::Jsonb, vec![Some(T::Jsonb), Some(T::Jsonb)]),
        "-" if jsonb => {
            let k = match r {
                t if int(t) => T::Int4,
                T::Array(_) => text_arr,
                _ => T::Text,
            };
            (F::Delete, T::Jsonb, vec![Some(T::Jsonb), Some(k)])
        }
        "#-" if jsonb => (F::DeletePath, T::Jsonb, vec![Some(T::Jsonb), Some(text_arr)]),
        _ => return fail(),
    }))
}

fn tree(v: &Value, zone: &Zone) -> Result<Json> {
    match v {
        Value::Jsonb(j) => Ok((**j).clone()),
        Value::Json(s) => json::parse_json(s),
        other => to_jsonb(other, zone),
    }
}

fn texts(v: &Value) -> Vec<Option<String>> {
    match v {
        Value::Array(a) => a
            .items
            .iter()
            .map(|x| match x {
                Value::Text(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Evaluates a json function. Builders and to_json are not strict; the
/// rest return NULL on a NULL argument.
pub fn call(f: JsonFunc, args: Vec<Value>, zone: &Zone) -> Result<Value> {
    use JsonFunc as F;
    if f == F::Assign {
        let mut path = Vec::with_capacity(args.len().saturating_sub(2));
        for k in args.iter().skip(2) {
            path.push(match k {
                Value::Text(s) => s.clone(),
                Value::Int4(i) => i.to_string(),
                Value::Null => {
                    bail!(NullValueNotAllowed, "jsonb subscript in assignment must not be null")
                }
                other => bail!(InternalError, "a jsonb subscript {other:?}"),
            });
        }
        let new = match args.get(1) {
            None | Some(Value::Null) => Json::Null,
            Some(v) => tree(v, zone)?,
        };
        let Some(Value::Jsonb(j)) = args.first() else { return Ok(Value::Null) };
        return Ok(jsonb(j.assign_path(&path, &new)?));
    }
    if f == F::SetLax {
        return set_lax(args, zone);
    }
    let strict = !matches!(f, F::BuildObject(_) | F::BuildArray(_) | F::To(_));
    if strict && args.iter().any(Value::is_null) {
        // jsonb_set's create_missing NULL still gives NULL, as in PostgreSQL.
        return Ok(Value::Null);
    }
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
    Ok(match f {
        F::Get(as_text) => {
            let step = match arg(1) {
                Value::Int4(i) => Step::Index(i as i64),
                Value::Text(k) => Step::Key(k),
                _ => return Ok(Value::Null),
            };
            get(&arg(0), &[step], as_text)?
        }
        F::Path(as_text) => {
            let steps: Vec<Step> = if args.len() == 2 && matches!(arg(1), Value::Array(_)) {
                match texts(&arg(1)).into_iter().collect::<Option<Vec<String>>>() {
                    Some(p) => p.into_iter().map(Step::Path).collect(),
                    None => return Ok(Value::Null),
                }
            } else {
                args[1..]
                    .iter()
                    .map(|v| match v {
                        Value::Text(s) => Step::Path(s.clone()),
                        _ => Step::Path(String::new()),
                    })
                    .collect()
            };
            get(&arg(0), &steps, as_text)?
        }
        F::Contains => Value::Bool(tree(&arg(0), zone)?.contains(&tree(&arg(1), zone)?)),
        F::ContainedBy => Value::Bool(tree(&arg(1), zone)?.contains(&tree(&arg(0), zone)?)),
        F::Exists => match arg(1) {
            Value::Text(k) => Value::Bool(tree(&arg(0), zone)?.exists(&k)),
            _ => Value::Null,
        },
        F::ExistsMany(all) => {
            let j = tree(&arg(0), zone)?;
            let keys: Vec<String> = texts(&arg(1)).into_iter().flatten().collect();
            Value::Bool(if all {
                keys.iter().all(|k| j.exists(k))
            } else {
                keys.iter().any(|k| j.exists(k))
            })
        }
        F::Concat => jsonb(tree(&arg(0), zone)?.concat(&tree(&arg(1), zone)?)),
        F::Delete => {
            let j = tree(&arg(0), zone)?;
            jsonb(match arg(1) {
                Value::Text(k) => j.remove_key(&k)?,
                Value::Int4(i) => j.remove_index(i as i64)?,
                a @ Value::Array(_) => {
                    let mut out = j;
                    for k in texts(&a).into_iter().flatten() {
                        out = out.remove_key(&k)?;
                    }
                    out
                }
                _ => j,
            })
        }
        F::DeletePath => {
            let path: Vec<String> = texts(&arg(1)).into_iter().flatten().collect();
            jsonb(tree(&arg(0), zone)?.remove_path(&path)?)
        }
        F::BuildObject(as_jsonb) => build_object(&args, as_jsonb, zone)?,
        F::BuildArray(true) => {
            jsonb(Json::Array(args.iter().map(|v| to_jsonb(v, zone)).collect::<Result<Vec<_>>>()?))
        }
        F::BuildArray(false) => {
            let mut out = String::from("[");
            for (i, v) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(v, zone, &mut out);
            }
            out.push(']');
            Value::Json(out)
        }
        F::To(true) if arg(0).is_null() => Value::Null,
        F::To(true) => jsonb(to_jsonb(&arg(0), zone)?),
        F::RowToJson => {
            let Value::Record(r) = arg(0) else { return Ok(Value::Null) };
            let sep = if arg(1) == Value::Bool(true) { ",\n " } else { "," };
            let mut out = String::new();
            write_record(&r, sep, zone, &mut out);
            Value::Json(out)
        }
        F::To(false) if arg(0).is_null() => Value::Null,
        F::To(false) => {
            let mut out = String::new();
            write_json(&arg(0), zone, &mut out);
            Value::Json(out)
        }
        F::TypeOf => Value::Text(tree(&arg(0), zone)?.type_name().to_string()),
        F::ArrayLength => match tree(&arg(0), zone)? {
            Json::Array(items) => Value::Int4(items.len() as i32),
            Json::Object(_) => {
                bail!(InvalidParameterValue, "cannot get array length of a non-array")
            }
            _ => bail!(InvalidParameterValue, "cannot get array length of a scalar"),
        },
        F::Assign | F::SetLax => bail!(InternalError, "{f:?} is evaluated above"),
        F::Set => {
            let path: Vec<String> = texts(&arg(1)).into_iter().flatten().collect();
            let create = !matches!(args.get(3), Some(Value::Bool(false)));
            jsonb(tree(&arg(0), zone)?.set_path(&path, &tree(&arg(2), zone)?, create)?)
        }
        F::Insert => {
            let path: Vec<String> = texts(&arg(1)).into_iter().flatten().collect();
            let after = matches!(args.get(3), Some(Value::Bool(true)));
            jsonb(tree(&arg(0), zone)?.insert_path(&path, &tree(&arg(2), zone)?, after)?)
        }
        F::Object(as_jsonb) => {
            let pairs = object_pairs(&arg(0), args.get(1))?;
            let members: Vec<(String, Json)> =
                pairs.into_iter().map(|(k, v)| (k, v.map_or(Json::Null, Json::String))).collect();
            match as_jsonb {
                true => {
                    let mut members = members;
                    json::canonicalize(&mut members);
                    jsonb(Json::Object(members))
                }
                // json keeps the pairs as given, written as PostgreSQL
                // writes json_object's result.
                false => {
                    let mut out = String::from("{");
                    for (i, (k, v)) in members.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        Json::String(k.clone()).render_with(&mut out, ", ", " : ");
                        out.push_str(" : ");
                        v.render_with(&mut out, ", ", " : ");
                    }
                    out.push('}');
                    Value::Json(out)
                }
            }
        }
        F::Pretty => Value::Text(tree(&arg(0), zone)?.pretty()),
        F::StripNulls => match arg(0) {
            Value::Json(s) => {
                let mut out = String::new();
                json::parse_json(&s)?.strip_nulls().render_with(&mut out, ",", ":");
                Value::Json(out)
            }
            other => jsonb(tree(&other, zone)?.strip_nulls()),
        },
    })
}

/// json_object's (key, value) pairs: from one one-dimensional array of
/// alternating keys and values, or a two-dimensional array of pairs, or
/// from a key array and a value array. Keys may not be NULL.
fn object_pairs(first: &Value, values: Option<&Value>) -> Result<Vec<(String, Option<String>)>> {
    let Value::Array(a) = first else { return Ok(Vec::new()) };
    let text = |v: &Value| match v {
        Value::Text(s) => Some(s.clone()),
        _ => None,
    };
    let key = |v: &Value| {
        text(v).ok_or_else(|| err!(NullValueNotAllowed, "null value not allowed for object key"))
    };
    if let Some(values) = values {
        let Value::Array(b) = values else { return Ok(Vec::new()) };
        if a.dims.len() > 1 || b.dims.len() > 1 {
            bail!(ArraySubscriptError, "wrong number of array subscripts");
        }
        if a.items.len() != b.items.len() {
            bail!(ArraySubscriptError, "mismatched array dimensions");
        }
        return a.items.iter().zip(&b.items).map(|(k, v)| Ok((key(k)?, text(v)))).collect();
    }
    match a.dims.as_slice() {
        [] => Ok(Vec::new()),
        [d] if d.len % 2 != 0 => {
            bail!(ArraySubscriptError, "array must have even number of elements")
        }
        [_] => a.items.chunks(2).map(|p| Ok((key(&p[0])?, text(&p[1])))).collect(),
        [_, inner] if inner.len == 2 => {
            a.items.chunks(2).map(|p| Ok((key(&p[0])?, text(&p[1])))).collect()
        }
        [_, _] => bail!(ArraySubscriptError, "array must have two columns"),
        _ => bail!(ArraySubscriptError, "wrong number of array subscripts"),
    }
}

fn jsonb(j: Json) -> Value {
    Value::Jsonb(Box::new(j))
}

/// One navigation step: `->` with a key or index, or a `#>` path element
/// (a key, or an index written as text).
enum Step {
    Key(String),
    Index(i64),
    Path(String),
}

/// Navigates json or jsonb; json keeps the member's text as written.
fn get(v: &Value, steps: &[Step], as_text: bool) -> Result<Value> {
    match v {
        Value::Json(src) => {
            let mut cur: &str = src;
            for s in steps {
                let found = match s {
                    Step::Key(k) => json::json_member(cur, Some(k), None)?,
                    Step::Index(i) => json::json_member(cur, None, Some(*i))?,
                    Step::Path(p) => match p.trim().parse::<i64>() {
                        Ok(i) => match json::json_member(cur, None, Some(i))? {
                            Some(m) => Some(m),
                            None => json::json_member(cur, Some(p), None)?,
                        },
                        Err(_) => json::json_member(cur, Some(p), None)?,
                    },
                };
                match found {
                    Some(m) => cur = m,
                    None => return Ok(Value::Null),
                }
            }
            if as_text {
                Ok(json::json_text(cur)?.map(Value::Text).unwrap_or(Value::Null))
            } else {
                Ok(Value::Json(cur.trim().to_string()))
            }
        }
        Value::Jsonb(j) => {
            let mut cur: &Json = j;
            for s in steps {
                let next = match s {
                    Step::Key(k) => cur.field(k),
                    Step::Index(i) => cur.element(*i),
                    Step::Path(p) => cur.step(p),
                };
                match next {
                    Some(n) => cur = n,
                    None => return Ok(Value::Null),
                }
            }
            if as_text {
                Ok(cur.as_text().map(Value::Text).unwrap_or(Value::Null))
            } else {
                Ok(jsonb(cur.clone()))
            }
        }
        _ => Ok(Value::Null),
    }
}

fn object_key(v: &Value) -> Result<String> {
    if v.is_null() {
        bail!(NullValueNotAllowed, "null value not allowed for object key");
    }
    Ok(text::to_text(v))
}

/// json_build_object's error for an odd number of arguments.
fn odd_pairs(name: &str) -> crate::error::ErrorReport {
    err!(InvalidParameterValue, "argument list must have even number of elements").with_hint(
        format!("The arguments of {name}() must consist of alternating keys and values."),
    )
}

fn build_object(args: &[Value], as_jsonb: bool, zone: &Zone) -> Result<Value> {
    // (A VARIADIC array's length is known only here.)
    if !args.len().is_multiple_of(2) {
        return Err(odd_pairs(if as_jsonb { "jsonb_build_object" } else { "json_build_object" }));
    }
    if as_jsonb {
        let mut pairs = Vec::with_capacity(args.len() / 2);
        for kv in args.chunks(2) {
            pairs.push((object_key(&kv[0])?, to_jsonb(&kv[1], zone)?));
        }
        json::canonicalize(&mut pairs);
        return Ok(jsonb(Json::Object(pairs)));
    }
    let mut out = String::from("{");
    for (i, kv) in args.chunks(2).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        json::write_string(&object_key(&kv[0])?, &mut out);
        out.push_str(" : ");
        write_json(&kv[1], zone, &mut out);
    }
    out.push('}');
    Ok(Value::Json(out))
}

/// A timestamp in JSON's ISO 8601 form (`2024-01-02T03:04:05`, with
/// `+00:00` for timestamptz).
fn iso_timestamp(t: i64, zone: Option<&Zone>) -> String {
    if !datetime::timestamp_is_finite(t) {
        return datetime::format_timestamp(t, false);
    }
    let Some(zone) = zone else {
        return datetime::format_timestamp(t, false).replacen(' ', "T", 1);
    };
    // The session's clock with its offset as +hh:mm.
    let east = zone.offset_at(t);
    let s = datetime::format_timestamp(zone.utc_to_local(t), false).replacen(' ', "T", 1);
    let a = east.unsigned_abs();
    let mut s =
        format!("{s}{}{:02}:{:02}", if east < 0 { '-' } else { '+' }, a / 3600, a / 60 % 60);
    if a % 60 != 0 {
        s.push_str(&format!(":{:02}", a % 60));
    }
    s
}

/// Appends a value as datum_to_json writes it.
pub fn write_json(v: &Value, zone: &Zone, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Oid(_) => {
            out.push_str(&text::to_text(v))
        }
        Value::Float4(_) | Value::Float8(_) | Value::Numeric(_) => {
            let t = text::to_text(v);
            if matches!(t.as_str(), "NaN" | "Infinity" | "-Infinity") {
                json::write_string(&t, out);
            } else {
                out.push_str(&t);
            }
        }
        Value::Json(s) => out.push_str(s),
        Value::Jsonb(j) => j.render(out),
        Value::Timestamp(t) => json::write_string(&iso_timestamp(*t, None), out),
        Value::TimestampTz(t) => json::write_string(&iso_timestamp(*t, Some(zone)), out),
        Value::Array(a) => write_array(
            &a.items,
            &a.dims.iter().map(|d| d.len as usize).collect::<Vec<_>>(),
            zone,
            out,
        ),
        Value::Record(r) => write_record(r, ",", zone, out),
        other => json::write_string(&text::to_text(other), out),
    }
}

/// A record as a json object of its fields (row_to_json; `sep` between
/// fields: "," or, pretty, ",\n ").
fn write_record(r: &sqltypes::RecordValue, sep: &str, zone: &Zone, out: &mut String) {
    out.push('{');
    for (i, ((name, _), v)) in r.ty.fields.iter().zip(&r.values).enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        json::write_string(name, out);
        out.push(':');
        write_json(v, zone, out);
    }
    out.push('}');
}

/// An array as nested JSON arrays (array_to_json: no spaces).
fn write_array(items: &[Value], dims: &[usize], zone: &Zone, out: &mut String) {
    out.push('[');
    match dims.split_first() {
        Some((_, rest)) if !rest.is_empty() => {
            let per: usize = rest.iter().product();
            for (i, chunk) in items.chunks(per.max(1)).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_array(chunk, rest, zone, out);
            }
        }
        _ => {
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(v, zone, out);
            }
        }
    }
    out.push(']');
}

/// A value as jsonb (to_jsonb).
pub fn to_jsonb(v: &Value, zone: &Zone) -> Result<Json> {
    Ok(match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Oid(_) => {
            Json::Number(Numeric::parse(&text::to_text(v))?)
        }
        Value::Float4(_) | Value::Float8(_) | Value::Numeric(_) => {
            let t = text::to_text(v);
            match t.as_str() {
                "NaN" | "Infinity" | "-Infinity" => Json::String(t),
                _ => Json::Number(Numeric::parse(&t)?),
            }
        }
        Value::Json(s) => json::parse_jsonb(s)?,
        Value::Jsonb(j) => (**j).clone(),
        Value::Timestamp(t) => Json::String(iso_timestamp(*t, None)),
        Value::TimestampTz(t) => Json::String(iso_timestamp(*t, Some(zone))),
        Value::Array(a) => {
            let dims: Vec<usize> = a.dims.iter().map(|d| d.len as usize).collect();
            array_to_jsonb(&a.items, &dims, zone)?
        }
        Value::Record(r) => {
            let mut pairs = Vec::with_capacity(r.values.len());
            for ((name, _), v) in r.ty.fields.iter().zip(&r.values) {
                pairs.push((name.clone(), to_jsonb(v, zone)?));
            }
            json::canonicalize(&mut pairs);
            Json::Object(pairs)
        }
        other => Json::String(text::to_text(other)),
    })
}

fn array_to_jsonb(items: &[Value], dims: &[usize], zone: &Zone) -> Result<Json> {
    Ok(Json::Array(match dims.split_first() {
        Some((_, rest)) if !rest.is_empty() => {
            let per: usize = rest.iter().product();
            items
                .chunks(per.max(1))
                .map(|c| array_to_jsonb(c, rest, zone))
                .collect::<Result<_>>()?
        }
        _ => items.iter().map(|v| to_jsonb(v, zone)).collect::<Result<_>>()?,
    }))
}

/// json_agg's text from the aggregated values: `[a, b]`.
pub fn agg_array(items: &[Value], as_jsonb: bool, zone: &Zone) -> Result<Value> {
    if as_jsonb {
        return Ok(jsonb(Json::Array(
            items.iter().map(|v| to_jsonb(v, zone)).collect::<Result<_>>()?,
        )));
    }
    let mut out = String::from("[");
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
            // PostgreSQL puts each array or row on its own line.
            if matches!(v, Value::Array(_) | Value::Record(_)) {
                out.push_str("\n ");
            }
        }
        write_json(v, zone, &mut out);
    }
    out.push(']');
    Ok(Value::Json(out))
}

/// json_object_agg's text from (key, value) pairs: `{ "a" : 1, "b" : 2 }`.
pub fn agg_object(pairs: &[(Value, Value)], as_jsonb: bool, zone: &Zone) -> Result<Value> {
    let key = |k: &Value| -> Result<String> {
        if k.is_null() {
            bail!(InvalidParameterValue, "field name must not be null");
        }
        Ok(text::to_text(k))
    };
    if as_jsonb {
        let mut out = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            out.push((key(k)?, to_jsonb(v, zone)?));
        }
        json::canonicalize(&mut out);
        return Ok(jsonb(Json::Object(out)));
    }
    let mut out = String::from("{ ");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        json::write_string(&key(k)?, &mut out);
        out.push_str(" : ");
        write_json(v, zone, &mut out);
    }
    out.push_str(" }");
    Ok(Value::Json(out))
}
