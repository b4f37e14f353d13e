//! The PL/pgSQL interpreter: runs a parsed body against an [`Spi`].
//!
//! Variables live on one stack; a block pushes its declarations and pops
//! them when it ends, so every name in a body always resolves to the same
//! stack slot and a statement's variable references are resolved once
//! ([`Compiled`] keeps them with the statement's parsed SQL). Each time a
//! statement runs, its variables' current types key its plan, and their
//! values are its parameters.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use parking_lot::Mutex;
use sqlparser::ast::{self, VisitMut};
use sqlstate::{ErrorReport, Severity, SqlState};
use sqltypes::record::{RecordType, RecordValue};
use sqltypes::{DataType, Value};

use super::parse::{self, Block, Condition, Dynamic, Level, Source, Sql, Stmt, Target};
use super::{BoxFut, Done, Spi, Statement};
use crate::catalog::{Catalog, FunctionDef, FunctionReturns, ParamMode};
use crate::error::Result;
use crate::parse::Stmt as ParsedStmt;
use crate::planner::Bound;
use crate::{bail, err};

/// A parsed body, with the parsed SQL of its statements and their plans.
pub struct Compiled {
    /// Its statement tree.
    pub block: Block,
    /// Its `#variable_conflict` option.
    conflict: parse::Conflict,
    /// Where the outermost block starts.
    top: parse::Place,
    /// Where each statement (and nested block) is, by its address.
    places: HashMap<usize, parse::Place>,
    /// How error CONTEXT lines name the function (`f(integer)`), made at
    /// its first call.
    sig: Mutex<Option<Arc<str>>>,
    fragments: Mutex<HashMap<usize, Arc<Fragment>>>,
    plans: Mutex<HashMap<(usize, Vec<DataType>), PlanEntry>>,
    /// The tests of simple CASE arms (`subject IN (values)`), by the
    /// values' fragment.
    case_arms: Mutex<HashMap<usize, Arc<Sql>>>,
}

/// One expression or statement of the body, parsed, with its variables
/// replaced by `$1`, `$2`, ... (`refs` says which variable each is).
struct Fragment {
    stmt: ParsedStmt,
    refs: Vec<VarRef>,
}

/// A fragment ready to run: parsed, planned for its variables' current
/// types, with those types and the variables' values.
struct Ready {
    frag: Arc<Fragment>,
    bound: Arc<Bound>,
    types: Vec<DataType>,
    params: Vec<Value>,
}

struct PlanEntry {
    catalog: Arc<Catalog>,
    user: Arc<str>,
    bound: Arc<Bound>,
}

/// A variable, or a field of a record variable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct VarRef {
    slot: usize,
    field: Option<String>,
}

impl Compiled {
    /// Parses a body; the SQL inside it is parsed too, so that a syntax
    /// error anywhere shows when the function is created.
    pub fn new(source: &str) -> Result<Compiled> {
        let (source, conflict) = parse::options(source)?;
        let (block, places) = parse::parse_with_places(&source)?;
        check_block(&block)?;
        // The places come in the order walk_block visits the statements.
        // The statements' addresses stay put: they live in the lists'
        // heap buffers, which moving the block does not move.
        let mut places = places.into_iter();
        let top = places.next().unwrap_or(parse::Place { line: 1, text: String::new() });
        let mut at = HashMap::new();
        parse::walk_block(&block, &mut |s| {
            if let Some(p) = places.next() {
                if let Stmt::Block(b) = s {
                    at.insert(b as *const Block as usize, p.clone());
                }
                at.insert(s as *const Stmt as usize, p);
            }
            Ok(())
        })?;
        Ok(Compiled {
            block,
            conflict,
            top,
            places: at,
            sig: Mutex::default(),
            fragments: Mutex::default(),
            plans: Mutex::default(),
            case_arms: Mutex::default(),
        })
    }
}

/// Parses every SQL fragment of a block (for its syntax errors).
fn check_block(b: &Block) -> Result<()> {
    let defaults = |b: &Block| {
        b.decls.iter().try_for_each(|d| match (&d.kind, &d.default) {
            (parse::DeclKind::Cursor(c), _) => check_sql(&c.query, false),
            (_, Some(e)) => check_sql(e, true),
            _ => Ok(()),
        })
    };
    defaults(b)?;
    parse::walk_block(b, &mut |s| {
        match s {
            Stmt::Block(inner) => defaults(inner)?,
            Stmt::Assign(_, e) | Stmt::While(_, e, _) | Stmt::Foreach(_, _, _, e, _) => {
                check_sql(e, true)?
            }
            Stmt::AssignElement(_, subscripts, e) => {
                subscripts.iter().chain([e]).try_for_each(|x| check_sql(x, true))?
            }
            Stmt::Perform(q) | Stmt::Sql(q, _) => check_sql(q, false)?,
            Stmt::If(arms, _) | Stmt::Case(None, arms, _) => {
                arms.iter().try_for_each(|(c, _)| check_sql(c, true))?
            }
            Stmt::Case(Some(subject), arms, _) => {
                check_sql(subject, true)?;
                for (c, _) in arms {
                    check_sql(&Sql { text: format!("1 IN ({})", c.text), line: c.line }, true)?;
                }
            }
            Stmt::ForRange(f) => {
                for e in [Some(&f.from), Some(&f.to), f.step.as_ref()].into_iter().flatten() {
                    check_sql(e, true)?;
                }
            }
            Stmt::ForQuery(_, _, src, _) | Stmt::ReturnQuery(src) => check_source(src)?,
            Stmt::Exit(_, Some(e), _) | Stmt::Return(Some(e)) | Stmt::ReturnNext(Some(e)) => {
                check_sql(e, true)?
            }
            Stmt::Raise(Some(r)) => {
                for a in r.args.iter().chain(r.options.iter().map(|(_, v)| v)) {
                    check_sql(a, true)?;
                }
            }
            Stmt::Execute(d, _) => check_dynamic(d)?,
            Stmt::Open(_, o) => match o.as_ref() {
                parse::Open::Bound(args) => args.iter().try_for_each(|a| check_sql(a, true))?,
                parse::Open::Query(_, src) => check_source(src)?,
            },
            Stmt::Fetch(f) => f.count.iter().try_for_each(|c| check_sql(c, true))?,
            Stmt::ForCursor(f) => f.args.iter().try_for_each(|a| check_sql(a, true))?,
            Stmt::Assert(c, m) => {
                check_sql(c, true)?;
                if let Some(m) = m {
                    check_sql(m, true)?;
                }
            }
            _ => {}
        }
        Ok(())
    })
}

fn check_sql(s: &Sql, expr: bool) -> Result<()> {
    let text = if expr { format!("SELECT {}", s.text) } else { s.text.clone() };
    crate::parse::parse(&text).map(|_| ())
}

fn check_source(s: &Source) -> Result<()> {
    match s {
        Source::Query(q) => check_sql(q, false),
        Source::Execute(d) => check_dynamic(d),
    }
}

fn check_dynamic(d: &Dynamic) -> Result<()> {
    check_sql(&d.command, true)?;
    d.using.iter().try_for_each(|u| check_sql(u, true))
}

/// Checks the RETURN statements of a function's body against what it
/// returns, as PostgreSQL does when the function is created.
pub fn check_returns(b: &Block, def: &FunctionDef) -> Result<()> {
    let set = def.returns_set();
    let outs = def.outputs().next().is_some();
    let void =
        matches!(&def.returns, FunctionReturns::Value(t, _) if t.oid == DataType::Void.oid());
    parse::walk_block(b, &mut |s| {
        match s {
            Stmt::Return(Some(_)) if set => {
                return Err(err!(
                    DatatypeMismatch,
                    "RETURN cannot have a parameter in function returning set"
                )
                .with_hint("Use RETURN NEXT or RETURN QUERY."))
            }
            Stmt::Return(Some(_)) if outs => bail!(
                DatatypeMismatch,
                "RETURN cannot have a parameter in function with OUT parameters"
            ),
            Stmt::ReturnNext(Some(_)) if outs && set => bail!(
                DatatypeMismatch,
                "RETURN NEXT cannot have a parameter in function with OUT parameters"
            ),
            Stmt::Return(Some(_)) if void => {
                bail!(DatatypeMismatch, "RETURN cannot have a parameter in function returning void")
            }
            Stmt::Return(None) if !set && !void && !outs => {
                bail!(SyntaxError, "missing expression at or near \";\"")
            }
            Stmt::ReturnNext(_) if !set => {
                bail!(DatatypeMismatch, "cannot use RETURN NEXT in a non-SETOF function")
            }
            Stmt::ReturnQuery(_) if !set => {
                bail!(DatatypeMismatch, "cannot use RETURN QUERY in a non-SETOF function")
            }
            _ => {}
        }
        Ok(())
    })
}

/// What kind of variable a slot holds.
#[derive(Debug, Clone)]
enum VarType {
    Scalar(DataType),
    /// A row: of a known type (`t%ROWTYPE`, NEW, OLD), or `record`, which
    /// takes the type of whatever is assigned to it.
    Record(Option<Arc<RecordType>>),
}

#[derive(Debug, Clone)]
struct Var {
    name: String,
    ty: VarType,
    value: Value,
    constant: bool,
    not_null: bool,
    /// For `name ALIAS FOR other`: the slot of the variable it names,
    /// which holds the value (both names read and write it).
    alias_of: Option<usize>,
    /// A bound cursor variable's declaration.
    cursor: Option<Arc<parse::CursorDecl>>,
    /// A bound cursor's argument: the cursor variable's slot. Only that
    /// cursor's query sees it.
    arg_of: Option<usize>,
}

struct Scope {
    label: Option<String>,
    first: usize,
}

/// How a statement list ended.
enum Flow {
    Normal,
    Exit(Option<String>),
    Continue(Option<String>),
    Return,
}

/// What a body is run as.
pub enum Call<'a> {
    /// A DO block.
    Do,
    /// A function call with its argument values.
    Function(&'a FunctionDef, Vec<Value>),
    /// A trigger firing.
    Trigger(&'a TriggerCall),
    /// A trigger's WHEN condition (a body returning it), with the
    /// firing's NEW and OLD.
    Condition(&'a TriggerCall),
}

/// A trigger firing, as TG_* variables, NEW and OLD show it.
pub struct TriggerCall {
    /// TG_NAME.
    pub name: String,
    /// The trigger function's name (for error CONTEXT lines).
    pub function: String,
    /// TG_WHEN: BEFORE, AFTER or INSTEAD OF.
    pub when: &'static str,
    /// TG_LEVEL: ROW or STATEMENT.
    pub level: &'static str,
    /// TG_OP: INSERT, UPDATE, DELETE or TRUNCATE.
    pub op: &'static str,
    /// TG_RELID.
    pub relid: u32,
    /// TG_TABLE_NAME.
    pub table: String,
    /// TG_TABLE_SCHEMA.
    pub schema: String,
    /// TG_ARGV.
    pub args: Vec<String>,
    /// The table's row type.
    pub row_type: Arc<RecordType>,
    /// NEW (INSERT and UPDATE row triggers).
    pub new: Option<Vec<Value>>,
    /// OLD (UPDATE and DELETE row triggers).
    pub old: Option<Vec<Value>>,
}

/// The function's name in CONTEXT lines, kept with its parsed body (made
/// again if the function was renamed since).
fn signature(code: &Compiled, name: &str, make: impl FnOnce() -> String) -> Arc<str> {
    let mut sig = code.sig.lock();
    match &*sig {
        Some(s) if s.strip_prefix(name).is_some_and(|r| r.starts_with('(')) => s.clone(),
        _ => {
            let s: Arc<str> = make().into();
            *sig = Some(s.clone());
            s
        }
    }
}

/// What a run returned.
pub enum Returned {
    /// A function's value (NULL for void), or a trigger's row (a record,
    /// or NULL).
    Value(Value),
    /// A set-returning function's rows.
    Rows(Vec<Vec<Value>>),
}

/// Runs a body.
pub async fn run<S: Spi>(spi: &mut S, code: Arc<Compiled>, call: Call<'_>) -> Result<Returned> {
    let mut i = Interp {
        spi,
        code: code.clone(),
        vars: Vec::new(),
        scopes: Vec::new(),
        caught: Vec::new(),
        result: Value::Null,
        rows: Vec::new(),
        returns: Returns::None,
        row_count: 0,
        out_vars: Vec::new(),
        iterations: 0,
        sig: None,
        sql_function: None,
        annotated: false,
        args_of: None,
    };
    if let Call::Function(def, _) = &call {
        i.sql_function = (!def.plpgsql).then(|| def.name.clone());
    }
    i.sig = match &call {
        Call::Do => Some("inline_code_block".into()),
        Call::Function(def, _) => {
            // Qualified where the search path would not find it, as
            // PostgreSQL's format_procedure writes it.
            let cat = i.spi.catalog();
            let name = match cat.function_visible(def) {
                true => def.name.clone(),
                false => format!(
                    "{}.{}",
                    crate::func::catalog_info::quote_ident(
                        cat.namespace_name(def.namespace).unwrap_or_default()
                    ),
                    crate::func::catalog_info::quote_ident(&def.name)
                ),
            };
            Some(signature(&code, &name, || {
                let types: Vec<String> = def
                    .args
                    .iter()
                    .map(|a| {
                        crate::func::catalog_info::format_type(
                            Some(&cat),
                            a.ty.oid,
                            Some(a.ty.typmod),
                        )
                    })
                    .collect();
                format!("{name}({})", types.join(","))
            }))
        }
        Call::Trigger(t) => Some(signature(&code, &t.function, || format!("{}()", t.function))),
        // A WHEN condition is no function of its own.
        Call::Condition(_) => None,
    };
    // FOUND lives in the outermost scope, with the parameters.
    let label = match &call {
        Call::Function(def, _) => Some(def.name.clone()),
        _ => None,
    };
    i.scopes.push(Scope { label, first: 0 });
    i.declare("found", VarType::Scalar(DataType::Bool), Value::Bool(false));
    match call {
        Call::Do => {}
        Call::Function(def, args) => {
            // Every parameter is a variable, in declared order ($n counts
            // them all); the outputs' ones make the result.
            let mut args = args.into_iter();
            for (n, a) in def.all_params().enumerate() {
                let name = a.name.clone().unwrap_or_else(|| format!("${}", n + 1));
                let v = match a.mode {
                    // CALL passes a procedure's OUT parameters, unread.
                    ParamMode::Out if def.procedure => args.next().map(|_| Value::Null),
                    ParamMode::Out => None,
                    _ => args.next(),
                };
                let v = v.unwrap_or(Value::Null);
                if !a.mode.is_in() {
                    i.out_vars.push(i.vars.len());
                }
                let (ty, v) = match a.ty.to_type() {
                    // A table's row type, named by the table; a row of
                    // another type passed in takes its fields by position.
                    DataType::Record(_) => {
                        let cat = i.spi.catalog();
                        let rt = table_named(&cat, &a.type_sql).ok().map(|t| t.row_type());
                        let v = match (v, &rt) {
                            (Value::Record(r), Some(rt)) if r.ty != *rt => {
                                let zone = i.spi.context().zone.clone();
                                let zone = zone.as_deref().unwrap_or(sqltypes::Zone::utc_ref());
                                RecordValue::value(rt.clone(), conform(r.values, rt, zone)?)
                            }
                            (v, _) => v,
                        };
                        (VarType::Record(rt), v)
                    }
                    t => (VarType::Scalar(t), v),
                };
                i.declare(&name, ty, v);
            }
            let outs = !i.out_vars.is_empty();
            i.returns = match &def.returns {
                FunctionReturns::Value(t, _) if t.oid == 2278 => Returns::Void,
                FunctionReturns::Value(t, _) if outs => Returns::Out(vec![t.to_type()], false),
                FunctionReturns::Value(t, _) => Returns::Value(t.to_type()),
                FunctionReturns::SetOf(t, _) => Returns::SetOf(vec![t.to_type()], outs),
                FunctionReturns::Rows { columns, row_type, single } => {
                    let types: Vec<DataType> = columns.iter().map(|c| c.1.to_type()).collect();
                    if row_type.is_none() && !outs {
                        // RETURNS TABLE's columns are variables RETURN NEXT
                        // reads.
                        for (name, t, _) in columns {
                            let slot = i.vars.len();
                            i.declare(name, VarType::Scalar(t.to_type()), Value::Null);
                            i.out_vars.push(slot);
                        }
                    }
                    match (single, row_type.is_some()) {
                        (true, true) => Returns::Row(types),
                        (true, false) => Returns::Out(types, true),
                        (false, _) => Returns::SetOf(types, true),
                    }
                }
            };
        }
        Call::Trigger(t) | Call::Condition(t) => {
            let rt = t.row_type.clone();
            let row = |v: &Option<Vec<Value>>| match v {
                Some(vals) => RecordValue::value(rt.clone(), vals.clone()),
                None => Value::Null,
            };
            i.declare("new", VarType::Record(Some(rt.clone())), row(&t.new));
            i.declare("old", VarType::Record(Some(rt.clone())), row(&t.old));
            let text = |s: &str| Value::Text(s.to_string());
            i.declare("tg_name", VarType::Scalar(DataType::Text), text(&t.name));
            i.declare("tg_when", VarType::Scalar(DataType::Text), text(t.when));
            i.declare("tg_level", VarType::Scalar(DataType::Text), text(t.level));
            i.declare("tg_op", VarType::Scalar(DataType::Text), text(t.op));
            i.declare("tg_relid", VarType::Scalar(DataType::Oid), Value::Oid(t.relid));
            i.declare("tg_relname", VarType::Scalar(DataType::Text), text(&t.table));
            i.declare("tg_table_name", VarType::Scalar(DataType::Text), text(&t.table));
            i.declare("tg_table_schema", VarType::Scalar(DataType::Text), text(&t.schema));
            i.declare(
                "tg_nargs",
                VarType::Scalar(DataType::Int4),
                Value::Int4(t.args.len() as i32),
            );
            let argv = t.args.iter().map(|a| Value::Text(a.clone())).collect();
            // TG_ARGV counts from 0.
            let mut argv = sqltypes::array::ArrayValue::new(DataType::Text, argv);
            argv.dims.iter_mut().for_each(|d| d.lower = 0);
            let argv = argv.into_value();
            i.declare("tg_argv", VarType::Scalar(DataType::Array(Box::new(DataType::Text))), argv);
            i.returns = match call {
                Call::Condition(_) => Returns::Value(DataType::Bool),
                _ => Returns::Trigger,
            };
        }
    }
    let sig = i.sig.clone();
    let sql_function = i.sql_function.clone();
    let end = |mut e: ErrorReport, annotated: bool| {
        // An error outside any statement names the function alone.
        match (annotated, &sql_function, &sig) {
            (false, Some(name), _) => e.push_context(format!("SQL function \"{name}\"")),
            (false, None, Some(sig)) => e.push_context(format!("PL/pgSQL function {sig}")),
            _ => {}
        }
        e
    };
    let flow = match i.block(&code.block).await {
        Ok(f) => f,
        Err(e) => return Err(end(e, i.annotated)),
    };
    i.finish(flow).map_err(|e| end(e, false))
}

impl<S: Spi> Interp<'_, S> {
    /// What the body returned, once it ended with `flow`.
    fn finish(&mut self, flow: Flow) -> Result<Returned> {
        let i = self;
        match (&i.returns, flow) {
            (Returns::SetOf(..), _) => Ok(Returned::Rows(std::mem::take(&mut i.rows))),
            (Returns::Out(types, row), _) => {
                let (types, row) = (types.clone(), *row);
                let mut values = i.conform_row(i.out_values(), &types)?;
                match row {
                    true => Ok(Returned::Rows(vec![values])),
                    false => Ok(Returned::Value(values.pop().unwrap_or(Value::Null))),
                }
            }
            (Returns::Void, _) => Ok(Returned::Value(Value::Text(String::new()))),
            (Returns::Row(types), Flow::Return) => {
                let types = types.clone();
                let values = match std::mem::replace(&mut i.result, Value::Null) {
                    Value::Record(r) => r.values,
                    _ => vec![Value::Null; types.len()],
                };
                Ok(Returned::Rows(vec![i.conform_row(values, &types)?]))
            }
            (_, Flow::Return) => Ok(Returned::Value(std::mem::replace(&mut i.result, Value::Null))),
            (Returns::Trigger, _) => bail!(
                FunctionExecutedNoReturnStatement,
                "control reached end of trigger procedure without RETURN"
            ),
            (Returns::Value(_) | Returns::Row(_), _) => {
                bail!(
                    FunctionExecutedNoReturnStatement,
                    "control reached end of function without RETURN"
                )
            }
            (Returns::None, _) => Ok(Returned::Value(Value::Null)),
        }
    }
}

enum Returns {
    /// A DO block.
    None,
    Void,
    Value(DataType),
    /// Rows of these columns; true if they are named (a row type, or
    /// RETURNS TABLE).
    SetOf(Vec<DataType>, bool),
    /// The output parameters' values: one row of them (true), or the one
    /// output's value.
    Out(Vec<DataType>, bool),
    /// A value of a table's row type (RETURNS table), as one row of its
    /// columns.
    Row(Vec<DataType>),
    Trigger,
}

struct Interp<'s, S: Spi> {
    spi: &'s mut S,
    code: Arc<Compiled>,
    vars: Vec<Var>,
    scopes: Vec<Scope>,
    /// The errors being handled, innermost last (`RAISE;`, SQLSTATE,
    /// GET STACKED DIAGNOSTICS).
    caught: Vec<ErrorReport>,
    /// RETURN's value.
    result: Value,
    /// RETURN NEXT / RETURN QUERY's rows.
    rows: Vec<Vec<Value>>,
    returns: Returns,
    /// GET DIAGNOSTICS ROW_COUNT.
    row_count: u64,
    /// RETURNS TABLE's column variables.
    out_vars: Vec<usize>,
    /// Loop iterations run (see [`Interp::iteration`]).
    iterations: u64,
    /// How error CONTEXT lines name the body (`f(integer)`,
    /// `inline_code_block`); None for a trigger's WHEN condition.
    sig: Option<Arc<str>>,
    /// A SQL function's name: its body is a block of its statements,
    /// named `SQL function "f" statement 2` in CONTEXT lines.
    sql_function: Option<String>,
    /// True once the error on its way out has this body's CONTEXT line
    /// (the innermost statement's; an exception handler that catches it
    /// clears this).
    annotated: bool,
    /// While a bound cursor's query is read: the cursor variable's slot
    /// (its arguments are variables then).
    args_of: Option<usize>,
}

fn custom(code: &str, message: String) -> ErrorReport {
    ErrorReport::new(SqlState::from_code(code).unwrap_or(SqlState::InternalError), message)
}

/// A record variable that holds no row yet.
fn unassigned(name: &str) -> ErrorReport {
    err!(ObjectNotInPrerequisiteState, "record \"{name}\" is not assigned yet")
        .with_detail("The tuple structure of a not-yet-assigned record is indeterminate.")
}

impl<S: Spi> Interp<'_, S> {
    fn declare(&mut self, name: &str, ty: VarType, value: Value) {
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            value,
            constant: false,
            not_null: false,
            alias_of: None,
            cursor: None,
            arg_of: None,
        });
    }

    /// The slot of the variable `name` (innermost first); for an alias,
    /// the slot of the variable it names.
    fn lookup(&self, name: &str) -> Option<usize> {
        self.vars.iter().rposition(|v| v.name == name && self.visible(v)).map(|s| self.aliased(s))
    }

    /// False for a bound cursor's argument outside its query.
    fn visible(&self, v: &Var) -> bool {
        v.arg_of.is_none() || v.arg_of == self.args_of
    }

    /// The slot that holds `slot`'s value.
    fn aliased(&self, slot: usize) -> usize {
        self.vars.get(slot).and_then(|v| v.alias_of).unwrap_or(slot)
    }

    /// The variable a name in the body means: `v`, `rec.field`,
    /// `label.v`, `label.rec.field`.
    fn resolve(&self, parts: &[String]) -> Option<VarRef> {
        let is_record =
            |slot: usize| matches!(self.vars.get(slot).map(|v| &v.ty), Some(VarType::Record(_)));
        match parts {
            [v] => self.lookup(v).map(|slot| VarRef { slot, field: None }),
            [a, b] => {
                if let Some(slot) = self.lookup(a).filter(|s| is_record(*s)) {
                    return Some(VarRef { slot, field: Some(b.clone()) });
                }
                self.in_label(a, b).map(|slot| VarRef { slot, field: None })
            }
            [l, r, f] => self
                .in_label(l, r)
                .filter(|s| is_record(*s))
                .map(|slot| VarRef { slot, field: Some(f.clone()) }),
            _ => None,
        }
    }

    /// Variable `name` declared in the block labelled `label`.
    fn in_label(&self, label: &str, name: &str) -> Option<usize> {
        let i = self.scopes.iter().rposition(|s| s.label.as_deref() == Some(label))?;
        let first = self.scopes[i].first;
        let end = self.scopes.get(i + 1).map_or(self.vars.len(), |s| s.first);
        let slot = (first..end)
            .rev()
            .find(|&s| self.vars.get(s).is_some_and(|v| v.name == name && self.visible(v)));
        slot.map(|s| self.aliased(s))
    }

    fn target(&self, t: &Target) -> Result<VarRef> {
        match self.resolve(&t.parts) {
            Some(r) => Ok(r),
            None => bail!(SyntaxError, "\"{}\" is not a known variable", t.parts.join(".")),
        }
    }

    fn block<'a>(&'a mut self, b: &'a Block) -> BoxFut<'a, Flow> {
        Box::pin(async move {
            let depth = self.vars.len();
            self.scopes.push(Scope { label: b.label.clone(), first: depth });
            let r = self.block_inner(b).await;
            self.vars.truncate(depth);
            self.scopes.pop();
            match r? {
                Flow::Exit(Some(l)) if b.label.as_deref() == Some(l.as_str()) => Ok(Flow::Normal),
                f => Ok(f),
            }
        })
    }

    async fn block_inner(&mut self, b: &Block) -> Result<Flow> {
        for d in &b.decls {
            if let Err(e) = self.declare_var(d).await {
                let place = match std::ptr::eq(b, &self.code.block) {
                    true => Some(&self.code.top),
                    false => self.code.places.get(&(b as *const Block as usize)),
                };
                let line = place.map_or(0, |p| p.line);
                return Err(self.note(
                    e,
                    format!("line {line} during statement block local variable initialization"),
                ));
            }
        }
        let Some(handlers) = &b.handlers else {
            return self.stmts(&b.body).await;
        };
        let mark = self.spi.subtransaction().await?;
        let e = match self.stmts(&b.body).await {
            Ok(f) => {
                self.spi.release_subtransaction(mark);
                return Ok(f);
            }
            Err(e) => e,
        };
        let Some(h) = handlers.iter().find(|h| h.conditions.iter().any(|c| catches(c, &e))) else {
            return Err(e);
        };
        self.annotated = false;
        self.spi.rollback_subtransaction(mark).await?;
        let depth = self.vars.len();
        self.scopes.push(Scope { label: None, first: depth });
        self.declare(
            "sqlstate",
            VarType::Scalar(DataType::Text),
            Value::Text(e.code.code().to_string()),
        );
        self.declare("sqlerrm", VarType::Scalar(DataType::Text), Value::Text(e.message.clone()));
        self.caught.push(e);
        let r = self.stmts(&h.body).await;
        self.caught.pop();
        self.vars.truncate(depth);
        self.scopes.pop();
        r
    }

    async fn declare_var(&mut self, d: &parse::Decl) -> Result<()> {
        let ty = match &d.kind {
            parse::DeclKind::Alias(target) => {
                let slot = match target.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) => n,
                    None => self.target(&Target { parts: vec![target.clone()] })?.slot,
                };
                let slot = self.aliased(slot);
                let Some(v) = self.vars.get(slot) else {
                    bail!(SyntaxError, "\"{target}\" is not a known variable");
                };
                // The value stays in the named slot, where every use goes.
                let alias = Var {
                    name: d.name.clone(),
                    ty: v.ty.clone(),
                    value: Value::Null,
                    constant: v.constant,
                    not_null: v.not_null,
                    alias_of: Some(slot),
                    cursor: v.cursor.clone(),
                    arg_of: v.arg_of,
                };
                self.vars.push(alias);
                return Ok(());
            }
            parse::DeclKind::Cursor(c) => {
                // The variable holds the portal's name, its own by default;
                // its arguments follow it, seen only by its query.
                let slot = self.vars.len();
                self.declare(
                    &d.name,
                    VarType::Scalar(DataType::Refcursor),
                    Value::Text(d.name.clone()),
                );
                if let Some(v) = self.vars.get_mut(slot) {
                    v.cursor = Some(c.clone());
                }
                for (name, ty) in &c.args {
                    let ty = self.var_type(ty)?;
                    self.declare(name, ty, Value::Null);
                    if let Some(v) = self.vars.last_mut() {
                        v.arg_of = Some(slot);
                    }
                }
                return Ok(());
            }
            parse::DeclKind::Type(t) => self.var_type(t)?,
        };
        let slot = self.vars.len();
        self.declare(&d.name, ty, Value::Null);
        if let Some(e) = &d.default {
            let v = self.eval(e).await?;
            self.assign(&VarRef { slot, field: None }, v)?;
        } else if d.not_null {
            bail!(
                NullValueNotAllowed,
                "variable \"{}\" must have a default value, since it's declared NOT NULL",
                d.name
            );
        }
        if let Some(v) = self.vars.get_mut(slot) {
            v.constant = d.constant;
            v.not_null = d.not_null;
        }
        Ok(())
    }

    /// A declared type: a SQL type name, `record`, `t%ROWTYPE` or
    /// `t.c%TYPE` / `v%TYPE`.
    fn var_type(&self, text: &str) -> Result<VarType> {
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        if lower == "record" {
            return Ok(VarType::Record(None));
        }
        let cat = self.spi.catalog();
        if let Some(name) = lower.strip_suffix("%rowtype") {
            let table = table_named(&cat, name.trim())?;
            return Ok(VarType::Record(Some(table.row_type())));
        }
        if let Some(name) = lower.strip_suffix("%type") {
            let parts: Vec<String> = name.trim().split('.').map(|s| s.trim().to_string()).collect();
            if let Some(r) = self.resolve(&parts) {
                return Ok(match self.ref_type(&r)? {
                    DataType::Record(rt) => VarType::Record(Some(rt)),
                    t => VarType::Scalar(t),
                });
            }
            if let [table @ .., col] = parts.as_slice() {
                let table = table_named(&cat, &table.join("."))?;
                if let Some(c) = table.columns.iter().find(|c| &c.name == col) {
                    return Ok(VarType::Scalar(c.ty.to_type()));
                }
                bail!(
                    UndefinedColumn,
                    "column \"{col}\" of relation \"{}\" does not exist",
                    table.name
                );
            }
        }
        let parsed = crate::parse::expr_text(&format!("CAST(NULL AS {t})"))
            .map_err(|_| err!(SyntaxError, "syntax error at or near \"{t}\""))?;
        let ast::Expr::Cast { data_type, .. } = parsed else {
            bail!(SyntaxError, "syntax error at or near \"{t}\"");
        };
        if let Some(table) = custom_row_type(&cat, &data_type) {
            return Ok(VarType::Record(Some(table)));
        }
        Ok(VarType::Scalar(crate::bind::catalog_type(&cat, &data_type)?))
    }

    /// The type a reference has now.
    fn ref_type(&self, r: &VarRef) -> Result<DataType> {
        let Some(v) = self.vars.get(r.slot) else {
            bail!(InternalError, "PL/pgSQL variable slot {} out of range", r.slot)
        };
        let rt = match (&v.ty, &v.value) {
            (VarType::Scalar(t), _) => {
                if r.field.is_some() {
                    bail!(SyntaxError, "\"{}\" is not a record variable", v.name);
                }
                return Ok(t.clone());
            }
            (VarType::Record(_), Value::Record(rv)) => rv.ty.clone(),
            (VarType::Record(Some(rt)), _) => rt.clone(),
            (VarType::Record(None), _) => return Err(unassigned(&v.name)),
        };
        match &r.field {
            None => Ok(DataType::Record(rt)),
            Some(f) => match rt.field(f) {
                Some(i) => Ok(rt.fields[i].1.clone()),
                None => bail!(UndefinedColumn, "record \"{}\" has no field \"{f}\"", v.name),
            },
        }
    }

    /// A reference's current value.
    fn ref_value(&self, r: &VarRef) -> Result<Value> {
        let Some(v) = self.vars.get(r.slot) else {
            bail!(InternalError, "PL/pgSQL variable slot {} out of range", r.slot)
        };
        let Some(f) = &r.field else { return Ok(v.value.clone()) };
        match &v.value {
            Value::Record(rv) => match rv.ty.field(f) {
                Some(i) => Ok(rv.values.get(i).cloned().unwrap_or(Value::Null)),
                None => bail!(UndefinedColumn, "record \"{}\" has no field \"{f}\"", v.name),
            },
            _ => match &v.ty {
                VarType::Record(Some(rt)) if rt.field(f).is_some() => Ok(Value::Null),
                VarType::Record(Some(_)) => {
                    bail!(UndefinedColumn, "record \"{}\" has no field \"{f}\"", v.name)
                }
                _ => Err(unassigned(&v.name)),
            },
        }
    }

    /// Stores a value into a variable or field, converted to its type.
    fn assign(&mut self, r: &VarRef, value: Value) -> Result<()> {
        let zone = self.spi.context().zone.clone();
        let zone = zone.as_deref().unwrap_or(sqltypes::Zone::utc_ref());
        let Some(var) = self.vars.get_mut(r.slot) else {
            bail!(InternalError, "PL/pgSQL variable slot {} out of range", r.slot)
        };
        if var.constant {
            return Err(constant_assigned(&var.name));
        }
        match (&var.ty, &r.field) {
            (VarType::Scalar(t), None) => {
                if value.is_null() && var.not_null {
                    bail!(
                        NullValueNotAllowed,
                        "null value cannot be assigned to variable \"{}\" declared NOT NULL",
                        var.name
                    );
                }
                var.value = convert(value, t, zone)?;
            }
            (VarType::Scalar(_), Some(_)) => {
                bail!(SyntaxError, "\"{}\" is not a record variable", var.name)
            }
            (VarType::Record(fixed), None) => {
                var.value = match (value, fixed) {
                    (Value::Null, _) => Value::Null,
                    (Value::Record(rv), None) => Value::Record(rv),
                    (Value::Record(rv), Some(rt)) => {
                        let vals = conform(rv.values, rt, zone)?;
                        RecordValue::value(rt.clone(), vals)
                    }
                    (_, _) => bail!(
                        DatatypeMismatch,
                        "cannot assign non-composite value to a record variable"
                    ),
                };
            }
            (VarType::Record(fixed), Some(f)) => {
                let rt = match (&var.value, fixed) {
                    (Value::Record(rv), _) => rv.ty.clone(),
                    (_, Some(rt)) => rt.clone(),
                    (_, None) => return Err(unassigned(&var.name)),
                };
                let Some(i) = rt.field(f) else {
                    bail!(UndefinedColumn, "record \"{}\" has no field \"{f}\"", var.name)
                };
                let v = convert(value, &rt.fields[i].1, zone)?;
                if !matches!(var.value, Value::Record(_)) {
                    var.value = RecordValue::value(rt.clone(), vec![Value::Null; rt.fields.len()]);
                }
                if let Value::Record(rv) = &mut var.value {
                    if let Some(slot) = rv.values.get_mut(i) {
                        *slot = v;
                    }
                }
            }
        }
        Ok(())
    }

    fn set_found(&mut self, found: bool) {
        if let Some(v) = self.vars.first_mut() {
            v.value = Value::Bool(found);
        }
    }

    /// Parses (once) a fragment with its variables made parameters.
    fn fragment(&self, sql: &Sql, expr: bool) -> Result<Arc<Fragment>> {
        let key = sql as *const Sql as usize;
        if let Some(f) = self.code.fragments.lock().get(&key) {
            return Ok(f.clone());
        }
        let text = if expr { format!("SELECT {}", sql.text) } else { sql.text.clone() };
        let mut parsed = crate::parse::parse(&text)?;
        if parsed.len() != 1 {
            bail!(SyntaxError, "syntax error at or near \";\"");
        }
        let mut stmt = parsed.remove(0).stmt;
        let mut refs = Vec::new();
        if let ParsedStmt::Sql(s) = &mut stmt {
            if is_transaction_control(s) {
                bail!(FeatureNotSupported, "unsupported transaction command in PL/pgSQL");
            }
            if plannable(s) {
                self.substitute(s, &mut refs)?;
            }
        } else if stmt.own_command().is_none() || expr {
            bail!(FeatureNotSupported, "this statement is not supported in PL/pgSQL: {}", sql.text);
        }
        let f = Arc::new(Fragment { stmt, refs });
        self.code.fragments.lock().insert(key, f.clone());
        Ok(f)
    }

    /// Replaces the variables a statement names with `$n` parameters.
    fn substitute(&self, s: &mut ast::Statement, refs: &mut Vec<VarRef>) -> Result<()> {
        let mut problem = None;
        let _ = s.visit(&mut SubstituteVars { interp: self, refs, problem: &mut problem });
        match problem {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// A fragment parsed and planned for its variables' current types,
    /// with those types and the variables' values.
    fn prepare(&self, sql: &Sql, expr: bool) -> Result<Ready> {
        let shift = if expr { "SELECT ".len() as u32 } else { 0 };
        let frag = self.fragment(sql, expr).map_err(|e| self.locate(e, &sql.text, expr, shift))?;
        let types = frag.refs.iter().map(|r| self.ref_type(r)).collect::<Result<Vec<_>>>()?;
        let params = frag.refs.iter().map(|r| self.ref_value(r)).collect::<Result<Vec<_>>>()?;
        let key = (sql as *const Sql as usize, types.clone());
        let bound =
            self.plan(&frag.stmt, key).map_err(|e| self.locate(e, &sql.text, expr, shift))?;
        Ok(Ready { frag, bound, types, params })
    }

    /// Plans and runs a fragment.
    async fn query(&mut self, sql: &Sql, expr: bool) -> Result<(Done, Vec<crate::plan::Column>)> {
        let shift = if expr { "SELECT ".len() as u32 } else { 0 };
        let Ready { frag, bound, types, params } = self.prepare(sql, expr)?;
        // A CALL's row goes to its output arguments, not to a destination.
        let columns = match &*bound {
            Bound::Call(..) => Vec::new(),
            b => b.columns().unwrap_or_default(),
        };
        let ParsedStmt::Sql(ast) = &frag.stmt else {
            return self.own(frag.stmt.clone(), &sql.text).await.map(|d| (d, columns));
        };
        let dml = bound.writes();
        // A CALL's output parameters are assigned to the variables given
        // for them.
        let targets = match (&*bound, ast.as_ref()) {
            (Bound::Call(c, Some(_)), ast::Statement::Call(f)) => call_targets(c, f, &frag.refs)?,
            _ => Vec::new(),
        };
        let done = self.spi.execute(Statement { ast, bound, types: &types, params }).await;
        let done = done.map_err(|e| match expr && simple_runtime(&frag) {
            // PostgreSQL runs a simple expression outside SPI, so an error
            // there gets no line of its own (a constant one fails while
            // it is planned, and does).
            true => ErrorReport { position: None, ..e },
            false => self.locate(e, &sql.text, expr, shift),
        })?;
        if let Some(row) = done.rows.first().filter(|_| !targets.is_empty()) {
            for (t, v) in targets.iter().zip(row) {
                self.assign(t, v.clone())?;
            }
        }
        Ok((Done { dml, ..done }, columns))
    }

    /// The plan of a fragment for these parameter types (cached while
    /// the catalog and user stay the same).
    fn plan(&self, stmt: &ParsedStmt, key: (usize, Vec<DataType>)) -> Result<Arc<Bound>> {
        let cat = self.spi.catalog();
        let user = self.spi.context().user.clone();
        if let Some(e) = self.code.plans.lock().get(&key) {
            if Arc::ptr_eq(&e.catalog, &cat) && e.user == user {
                return Ok(e.bound.clone());
            }
        }
        let (bound, _) = crate::planner::plan(&cat, stmt, &key.1, &user)?;
        self.code.plans.lock().insert(key, PlanEntry { catalog: cat, user, bound: bound.clone() });
        Ok(bound)
    }

    /// An expression's value.
    async fn eval(&mut self, e: &Sql) -> Result<Value> {
        let (done, cols) = self.query(e, true).await?;
        if cols.len() != 1 {
            bail!(SyntaxError, "query \"SELECT {}\" returned {} columns", e.text, cols.len());
        }
        if done.rows.len() > 1 {
            bail!(CardinalityViolation, "query \"SELECT {}\" returned more than one row", e.text);
        }
        Ok(done.rows.into_iter().next().and_then(|r| r.into_iter().next()).unwrap_or(Value::Null))
    }

    async fn eval_bool(&mut self, e: &Sql) -> Result<bool> {
        Ok(match self.eval(e).await? {
            Value::Bool(b) => b,
            Value::Null => false,
            other => matches!(sqltypes::cast::cast(other, &DataType::Bool)?, Value::Bool(true)),
        })
    }

    async fn eval_int(&mut self, e: &Sql) -> Result<Option<i64>> {
        Ok(match sqltypes::cast::cast(self.eval(e).await?, &DataType::Int8)? {
            Value::Int8(n) => Some(n),
            _ => None,
        })
    }

    /// Adds this body's CONTEXT line for an error in statement `s`
    /// (`PL/pgSQL function f(integer) line 3 at RAISE`), once.
    fn annotate(&mut self, mut e: ErrorReport, s: &Stmt) -> ErrorReport {
        if self.annotated {
            return e;
        }
        let place = self.code.places.get(&(s as *const Stmt as usize));
        if let (Stmt::Assign(_, expr), Some(p)) = (s, place) {
            // An assignment's expression is shown as the whole assignment.
            let shown = format!("SQL expression \"{}\"", expr.text);
            if let Some(c) = &mut e.context {
                if c.starts_with(&shown) {
                    c.replace_range(..shown.len(), &format!("PL/pgSQL assignment \"{}\"", p.text));
                }
            }
            let before = p.text.strip_suffix(expr.text.as_str());
            if let (true, Some(before)) =
                (e.internal_query.as_deref() == Some(expr.text.as_str()), before)
            {
                let shift = before.chars().count() as u32;
                e.internal_position = e.internal_position.map(|n| n + shift);
                e.internal_query = Some(p.text.clone());
            }
        }
        if let Some(name) = &self.sql_function {
            // The statement's number among the function's.
            let n = self.code.block.body.iter().position(|x| std::ptr::eq(x, s)).unwrap_or(0);
            e.push_context(format!("SQL function \"{name}\" statement {}", n + 1));
            self.annotated = true;
            return e;
        }
        let line = place.map_or(0, |p| p.line);
        self.note(e, format!("line {line} at {}", stmt_kind(s)))
    }

    /// Adds `PL/pgSQL function <sig> <what>` to an error's CONTEXT, once.
    fn note(&mut self, mut e: ErrorReport, what: String) -> ErrorReport {
        if let (false, Some(sig)) = (self.annotated, &self.sig) {
            e.push_context(format!("PL/pgSQL function {sig} {what}"));
            self.annotated = true;
        }
        e
    }

    /// Says where in a statement of this body an error from running its
    /// SQL (`text`, an expression if `expr`) happened: a position in the
    /// text becomes the internal query's (psql's QUERY line), else the
    /// text is a CONTEXT line. `shift` is what precedes the text in the
    /// parsed form (`SELECT ` of an expression).
    fn locate(&self, mut e: ErrorReport, text: &str, expr: bool, shift: u32) -> ErrorReport {
        if self.sig.is_none() || self.sql_function.is_some() {
            // Positions point into the fragment, not the query.
            e.position = None;
            return e;
        }
        let nested = e.context.is_some() || e.internal_query.is_some();
        let at = match e.position.take() {
            Some(p) if !nested => Some(p.saturating_sub(shift).max(1)),
            _ if nested || crate::error::name_taken(&e.code) => None,
            // A variable's bare name, where a column's is the same.
            _ if e.code == sqlstate::SqlState::AmbiguousColumn => {
                crate::error::quoted_token(&e.message)
                    .and_then(|t| crate::error::bare_name_position(text, &t))
            }
            _ => crate::error::quoted_token(&e.message)
                .and_then(|t| crate::error::token_position(text, &t)),
        };
        match at {
            Some(p) => {
                e.internal_query = Some(text.to_string());
                e.internal_position = Some(p);
            }
            None => {
                let kind = if expr { "expression" } else { "statement" };
                e.push_context(format!("SQL {kind} \"{text}\""));
            }
        }
        e
    }

    fn stmts<'a>(&'a mut self, stmts: &'a [Stmt]) -> BoxFut<'a, Flow> {
        Box::pin(async move {
            for s in stmts {
                match self.stmt(s).await {
                    Ok(Flow::Normal) => {}
                    Ok(other) => return Ok(other),
                    Err(e) => return Err(self.annotate(e, s)),
                }
            }
            Ok(Flow::Normal)
        })
    }

    async fn stmt(&mut self, s: &Stmt) -> Result<Flow> {
        match s {
            Stmt::Block(b) => return self.block(b).await,
            Stmt::Null => {}
            Stmt::EndTransaction(commit) => self.spi.end_transaction(*commit).await?,
            Stmt::Assign(t, e) => {
                let r = self.target(t)?;
                let v = self.eval(e).await?;
                self.assign(&r, v)?;
            }
            Stmt::AssignElement(t, subscripts, e) => {
                let r = self.target(t)?;
                let mut at = Vec::with_capacity(subscripts.len());
                for x in subscripts {
                    match sqltypes::cast::cast(self.eval(x).await?, &DataType::Int4)? {
                        Value::Int4(i) => at.push(i),
                        _ => bail!(
                            NullValueNotAllowed,
                            "array subscript in assignment must not be null"
                        ),
                    }
                }
                let v = self.eval(e).await?;
                let Some(var) = self.vars.get(r.slot) else {
                    bail!(InternalError, "PL/pgSQL variable slot {} out of range", r.slot)
                };
                let (VarType::Scalar(DataType::Array(elem)), None) = (&var.ty, &r.field) else {
                    let ty = match &var.ty {
                        VarType::Scalar(t) if r.field.is_none() => t.to_string(),
                        _ => "record".to_string(),
                    };
                    bail!(
                        DatatypeMismatch,
                        "cannot subscript type {ty} because it does not support subscripting"
                    );
                };
                let v = convert(v, elem, self.spi.context().zone())?;
                if var.constant {
                    return Err(constant_assigned(&var.name));
                }
                let elem = (**elem).clone();
                // In place: the array is not copied for each element.
                let Some(var) = self.vars.get_mut(r.slot) else {
                    bail!(InternalError, "PL/pgSQL variable slot {} out of range", r.slot)
                };
                sqltypes::array::set_element(&mut var.value, &elem, &at, v)?;
            }
            Stmt::If(arms, otherwise) => {
                for (cond, body) in arms {
                    if self.eval_bool(cond).await? {
                        return self.stmts(body).await;
                    }
                }
                if let Some(body) = otherwise {
                    return self.stmts(body).await;
                }
            }
            Stmt::Case(subject, arms, otherwise) => {
                return self.case(subject.as_ref(), arms, otherwise).await
            }
            Stmt::Loop(label, body) => loop {
                if let Some(out) = self.iteration(body, label).await? {
                    return Ok(out);
                }
            },
            Stmt::While(label, cond, body) => {
                while self.eval_bool(cond).await? {
                    if let Some(out) = self.iteration(body, label).await? {
                        return Ok(out);
                    }
                }
            }
            Stmt::ForRange(f) => return self.for_range(f).await,
            Stmt::ForQuery(label, targets, source, body) => {
                let (done, cols) = self.source_rows(source).await?;
                self.set_found(!done.rows.is_empty());
                let depth = self.vars.len();
                self.scopes.push(Scope { label: None, first: depth });
                let r = async {
                    let refs = self.targets(targets)?;
                    for row in done.rows {
                        self.store_row(&refs, &cols, row)?;
                        if let Some(out) = self.iteration(body, label).await? {
                            return Ok(out);
                        }
                    }
                    Ok(Flow::Normal)
                }
                .await;
                self.vars.truncate(depth);
                self.scopes.pop();
                return r;
            }
            Stmt::Foreach(label, target, slice, array, body) => {
                if *slice != 0 {
                    bail!(FeatureNotSupported, "FOREACH ... SLICE is not supported");
                }
                let items = match self.eval(array).await? {
                    Value::Array(a) => a.items,
                    Value::Null => {
                        bail!(NullValueNotAllowed, "FOREACH expression must not be null")
                    }
                    _ => {
                        bail!(DatatypeMismatch, "FOREACH expression must yield an array, not type")
                    }
                };
                let r = self.target(target)?;
                for v in items {
                    self.assign(&r, v)?;
                    if let Some(out) = self.iteration(body, label).await? {
                        return Ok(out);
                    }
                }
            }
            Stmt::Exit(label, cond, cont) => {
                if let Some(c) = cond {
                    if !self.eval_bool(c).await? {
                        return Ok(Flow::Normal);
                    }
                }
                return Ok(if *cont {
                    Flow::Continue(label.clone())
                } else {
                    Flow::Exit(label.clone())
                });
            }
            Stmt::Return(e) => return self.ret(e.as_ref()).await,
            Stmt::ReturnNext(e) => self.return_next(e.as_ref()).await?,
            Stmt::ReturnQuery(source) => {
                let Returns::SetOf(types, _) = &self.returns else {
                    bail!(SyntaxError, "cannot use RETURN QUERY in a non-SETOF function");
                };
                let types = types.clone();
                let (done, _) = self.source_rows(source).await?;
                self.row_count = done.rows.len() as u64;
                self.set_found(!done.rows.is_empty());
                for row in done.rows {
                    let row = self.conform_row(row, &types)?;
                    self.rows.push(row);
                }
            }
            Stmt::Raise(r) => self.raise(r.as_deref()).await?,
            Stmt::Perform(q) => {
                let (done, _) = self.query(q, false).await?;
                self.row_count = done.rows.len() as u64;
                self.set_found(!done.rows.is_empty());
            }
            Stmt::Sql(q, into) => {
                let (done, cols) = self.query(q, false).await?;
                self.finish_sql(done, &cols, into.as_ref(), false)?;
            }
            Stmt::Execute(d, into) => {
                let (done, cols) = self.dynamic(d).await?;
                self.finish_sql(done, &cols, into.as_ref(), true)?;
            }
            Stmt::GetDiagnostics(stacked, items) => self.diagnostics(*stacked, items)?,
            Stmt::Open(cursor, how) => self.open(cursor, how).await?,
            Stmt::Fetch(f) => self.fetch(f).await?,
            Stmt::Close(cursor) => {
                let name = self.portal_name(cursor)?;
                self.portals()?.close(&name)?;
            }
            Stmt::ForCursor(f) => return self.for_cursor(f).await,
            Stmt::Assert(cond, message) => {
                if !self.eval_bool(cond).await? {
                    let msg = match message {
                        Some(m) => match self.eval(m).await? {
                            Value::Null => "assertion failed".to_string(),
                            v => self.text(&v),
                        },
                        None => "assertion failed".to_string(),
                    };
                    return Err(ErrorReport::new(SqlState::AssertFailure, msg));
                }
            }
        }
        Ok(Flow::Normal)
    }

    /// Runs a loop body once; Some(flow) if the loop ends with it.
    async fn iteration(&mut self, body: &[Stmt], label: &Option<String>) -> Result<Option<Flow>> {
        // A loop that runs no SQL never awaits: yield now and then, so
        // it neither holds a worker thread nor escapes cancellation.
        self.iterations += 1;
        if self.iterations.is_multiple_of(256) {
            tokio::task::yield_now().await;
        }
        match self.stmts(body).await? {
            Flow::Normal => Ok(None),
            f => Ok(loop_exit(f, label)),
        }
    }

    async fn case(
        &mut self,
        subject: Option<&Sql>,
        arms: &[(Sql, Vec<Stmt>)],
        otherwise: &Option<Vec<Stmt>>,
    ) -> Result<Flow> {
        let depth = self.vars.len();
        self.scopes.push(Scope { label: None, first: depth });
        let r = async {
            if let Some(s) = subject {
                let v = self.eval(s).await?;
                let ty = v.data_type().unwrap_or(DataType::Text);
                self.declare(CASE_SUBJECT, VarType::Scalar(ty), v);
            }
            for (cond, body) in arms {
                let hit = match subject {
                    Some(_) => {
                        let arm = self.case_arm(cond);
                        self.eval_bool(&arm).await?
                    }
                    None => self.eval_bool(cond).await?,
                };
                if hit {
                    return self.stmts(body).await;
                }
            }
            match otherwise {
                Some(body) => self.stmts(body).await,
                None => Err(ErrorReport::new(SqlState::CaseNotFound, "case not found")
                    .with_hint("CASE statement is missing ELSE part.")),
            }
        }
        .await;
        self.vars.truncate(depth);
        self.scopes.pop();
        r
    }

    /// The test of a simple CASE arm, `subject IN (values)`, kept in the
    /// compiled body so its plan is cached like any other fragment's.
    fn case_arm(&self, values: &Sql) -> Arc<Sql> {
        let key = values as *const Sql as usize;
        let mut arms = self.code.case_arms.lock();
        arms.entry(key)
            .or_insert_with(|| {
                let text = format!("\"{CASE_SUBJECT}\" IN ({})", values.text);
                Arc::new(Sql { text, line: values.line })
            })
            .clone()
    }

    async fn for_range(&mut self, f: &parse::ForRange) -> Result<Flow> {
        let from = self.eval_int(&f.from).await?;
        let to = self.eval_int(&f.to).await?;
        let step = match &f.step {
            Some(s) => self.eval_int(s).await?,
            None => Some(1),
        };
        let (Some(from), Some(to), Some(step)) = (from, to, step) else {
            bail!(NullValueNotAllowed, "lower bound of FOR loop cannot be null");
        };
        if step <= 0 {
            bail!(InvalidParameterValue, "BY value of FOR loop must be greater than zero");
        }
        let depth = self.vars.len();
        self.scopes.push(Scope { label: None, first: depth });
        self.declare(&f.var, VarType::Scalar(DataType::Int4), Value::Null);
        let r = async {
            let mut i = from;
            let mut ran = false;
            while if f.reverse { i >= to } else { i <= to } {
                ran = true;
                if let Some(v) = self.vars.get_mut(depth) {
                    v.value = Value::Int4(
                        i32::try_from(i)
                            .map_err(|_| err!(NumericValueOutOfRange, "integer out of range"))?,
                    );
                }
                if let Some(out) = self.iteration(&f.body, &f.label).await? {
                    self.set_found(true);
                    return Ok(out);
                }
                i = if f.reverse { i - step } else { i + step };
            }
            self.set_found(ran);
            Ok(Flow::Normal)
        }
        .await;
        self.vars.truncate(depth);
        self.scopes.pop();
        r
    }

    /// The rows a FOR loop or RETURN QUERY reads.
    async fn source_rows(&mut self, s: &Source) -> Result<(Done, Vec<crate::plan::Column>)> {
        match s {
            Source::Query(q) => self.query(q, false).await,
            Source::Execute(d) => self.dynamic(d).await,
        }
    }

    /// Runs EXECUTE's command text with its USING values as `$n`.
    async fn dynamic(&mut self, d: &Dynamic) -> Result<(Done, Vec<crate::plan::Column>)> {
        let (command, params, types) = self.dynamic_args(d).await?;
        let r = async {
            let p = dynamic_statement(&command)?;
            if p.stmt.own_command().is_some() {
                return Ok((self.own(p.stmt, &command).await?, Vec::new()));
            }
            let (ast, bound) = self.plan_dynamic(p, &command, &types)?;
            let columns = bound.columns().unwrap_or_default();
            let done =
                self.spi.execute(Statement { ast: &ast, bound, types: &types, params }).await?;
            Ok((done, columns))
        };
        r.await.map_err(|e| self.locate(e, &command, false, 0))
    }

    /// Runs a statement Strata parses itself (`text` for the error where
    /// this interpreter cannot).
    async fn own(&mut self, stmt: ParsedStmt, text: &str) -> Result<Done> {
        match self.spi.execute_own(stmt) {
            Some(run) => run.await,
            None => {
                bail!(FeatureNotSupported, "this statement is not supported in PL/pgSQL: {text}")
            }
        }
    }

    /// EXECUTE's command text, and its USING values and their types.
    async fn dynamic_args(&mut self, d: &Dynamic) -> Result<(String, Vec<Value>, Vec<DataType>)> {
        let command = match self.eval(&d.command).await? {
            Value::Null => bail!(NullValueNotAllowed, "query string argument of EXECUTE is null"),
            v => self.text(&v),
        };
        let mut params = Vec::with_capacity(d.using.len());
        let mut types = Vec::with_capacity(d.using.len());
        for u in &d.using {
            let v = self.eval(u).await?;
            types.push(v.data_type().unwrap_or(DataType::Text));
            params.push(v);
        }
        Ok((command, params, types))
    }

    /// EXECUTE's command parsed and planned for its USING values' types.
    fn plan_dynamic(
        &self,
        p: crate::parse::Parsed,
        command: &str,
        types: &[DataType],
    ) -> Result<(Box<ast::Statement>, Arc<Bound>)> {
        let ParsedStmt::Sql(ast) = &p.stmt else {
            // EXECUTE runs those before planning; OPEN cannot.
            if p.stmt.own_command().is_some() {
                return Err(not_a_cursor(&p.stmt));
            }
            bail!(FeatureNotSupported, "this statement is not supported in EXECUTE: {command}");
        };
        if is_transaction_control(ast) {
            bail!(FeatureNotSupported, "EXECUTE of transaction commands is not implemented");
        }
        let cat = self.spi.catalog();
        let user = self.spi.context().user.clone();
        let (bound, _) = crate::planner::plan(&cat, &p.stmt, types, &user)?;
        let ParsedStmt::Sql(ast) = p.stmt else {
            bail!(InternalError, "EXECUTE's statement changed kind");
        };
        Ok((ast, bound))
    }

    /// The session's cursors.
    fn portals(&self) -> Result<Arc<crate::cursor::Portals>> {
        match &self.spi.context().cursors {
            Some(p) => Ok(p.clone()),
            None => bail!(FeatureNotSupported, "cursors are not available here"),
        }
    }

    /// The slot of cursor variable `name`.
    fn cursor_slot(&self, name: &str) -> Result<usize> {
        let Some(slot) = self.lookup(name) else {
            bail!(SyntaxError, "\"{name}\" is not a known variable");
        };
        match self.vars.get(slot).map(|v| &v.ty) {
            Some(VarType::Scalar(DataType::Refcursor)) => Ok(slot),
            _ => bail!(DatatypeMismatch, "variable \"{name}\" must be of type cursor or refcursor"),
        }
    }

    /// The name of the portal cursor variable `name` holds.
    fn portal_name(&self, name: &str) -> Result<String> {
        let slot = self.cursor_slot(name)?;
        match self.vars.get(slot).map(|v| &v.value) {
            Some(Value::Text(t)) => Ok(t.clone()),
            _ => bail!(NullValueNotAllowed, "cursor variable \"{name}\" is null"),
        }
    }

    /// The portal an OPEN of the cursor variable in `slot` makes: the
    /// name it holds, or a new one (false: to be stored in it).
    fn opening(&self, slot: usize, portals: &crate::cursor::Portals) -> Result<(String, bool)> {
        let (name, named) = match self.vars.get(slot).map(|v| &v.value) {
            Some(Value::Text(t)) => (t.clone(), true),
            _ => (portals.unnamed(), false),
        };
        if portals.exists(&name) {
            bail!(DuplicateCursor, "cursor \"{name}\" already in use");
        }
        Ok((name, named))
    }

    /// OPEN.
    async fn open(&mut self, cursor: &str, how: &parse::Open) -> Result<()> {
        let slot = self.cursor_slot(cursor)?;
        let portals = self.portals()?;
        let (name, named) = self.opening(slot, &portals)?;
        match how {
            parse::Open::Bound(args) => self.open_bound(slot, args, &name).await?,
            parse::Open::Query(scroll, Source::Query(q)) => {
                let Ready { frag, bound, types, params } = self.prepare(q, false)?;
                let ParsedStmt::Sql(ast) = &frag.stmt else {
                    return Err(not_a_cursor(&frag.stmt));
                };
                let r = self.open_plan(
                    Statement { ast, bound, types: &types, params },
                    (*scroll, &name, &q.text),
                );
                r.await.map_err(|e| self.locate(e, &q.text, false, 0))?;
            }
            parse::Open::Query(scroll, Source::Execute(d)) => {
                let (command, params, types) = self.dynamic_args(d).await?;
                let r = async {
                    let p = dynamic_statement(&command)?;
                    let (ast, bound) = self.plan_dynamic(p, &command, &types)?;
                    let st = Statement { ast: &ast, bound, types: &types, params };
                    self.open_plan(st, (*scroll, &name, &command)).await
                };
                r.await.map_err(|e| self.locate(e, &command, false, 0))?;
            }
        }
        if !named {
            self.assign(&VarRef { slot, field: None }, Value::Text(name))?;
        }
        Ok(())
    }

    /// Opens portal `name` on the bound cursor in `slot`, its arguments
    /// given these values.
    async fn open_bound(&mut self, slot: usize, args: &[Sql], name: &str) -> Result<()> {
        let Some(decl) = self.vars.get(slot).and_then(|v| v.cursor.clone()) else {
            bail!(InternalError, "cursor variable without its declaration");
        };
        for (i, a) in args.iter().enumerate() {
            let v = self.eval(a).await?;
            self.assign(&VarRef { slot: slot + 1 + i, field: None }, v)?;
        }
        let outer = self.args_of.replace(slot);
        let prepared = self.prepare(&decl.query, false);
        self.args_of = outer;
        let Ready { frag, bound, types, params } = prepared?;
        let ParsedStmt::Sql(ast) = &frag.stmt else {
            return Err(not_a_cursor(&frag.stmt));
        };
        let st = Statement { ast, bound, types: &types, params };
        let r = self.open_plan(st, (decl.scroll, name, &decl.query.text)).await;
        r.map_err(|e| self.locate(e, &decl.query.text, false, 0))
    }

    /// Runs a cursor's query and opens portal `name` on its rows:
    /// (SCROLL option, name, the query's text).
    async fn open_plan(
        &mut self,
        st: Statement<'_>,
        (scroll, name, text): (Option<bool>, &str, &str),
    ) -> Result<()> {
        // A query under WITH queries that write runs whole, as a query
        // with no keys to update through.
        let (query, writing) = match &*st.bound {
            Bound::With(w) => (&w.main, true),
            b => (b, false),
        };
        let Bound::Query(plan, columns) = query else {
            let what = st.bound.write_command().unwrap_or("utility");
            bail!(InvalidCursorDefinition, "cannot open {what} query as cursor");
        };
        let columns = columns.clone();
        let scroll = scroll.unwrap_or_else(|| crate::cursor::scrollable(plan));
        let (bound, source) = match crate::cursor::keyed(plan).filter(|_| !writing) {
            Some((p, s)) => (Arc::new(Bound::Query(p, columns.clone())), Some(s)),
            None => (st.bound.clone(), None),
        };
        let done = self.spi.execute(Statement { bound, ..st }).await?;
        let c = crate::cursor::NewCursor {
            columns,
            rows: done.rows,
            scroll,
            hold: false,
            statement: text.to_string(),
            created: self.spi.context().stmt_time,
            source,
        };
        self.portals()?.open(name, c)
    }

    /// FETCH or MOVE.
    async fn fetch(&mut self, f: &parse::Fetch) -> Result<()> {
        let name = self.portal_name(&f.cursor)?;
        let mut dir = f.direction;
        if let Some(e) = &f.count {
            let Some(n) = self.eval_int(e).await? else {
                bail!(NullValueNotAllowed, "relative or absolute cursor position is null");
            };
            dir = dir.with_count(n);
        }
        let done = self.portals()?.fetch(&name, dir, f.into.is_some())?;
        if let Some(into) = &f.into {
            let refs = self.targets(&into.targets)?;
            let width = done.columns.len();
            let row = done.rows.into_iter().next().unwrap_or_else(|| vec![Value::Null; width]);
            self.store_row(&refs, &done.columns, row)?;
        }
        self.row_count = done.count;
        self.set_found(done.count > 0);
        Ok(())
    }

    /// A FOR loop over a bound cursor: opens it, reads it a row at a time
    /// (a FETCH in the body reads on from the same place) and closes it
    /// however the loop ends.
    async fn for_cursor(&mut self, f: &parse::ForCursor) -> Result<Flow> {
        let slot = self.cursor_slot(&f.cursor)?;
        let portals = self.portals()?;
        let (name, named) = self.opening(slot, &portals)?;
        self.open_bound(slot, &f.args, &name).await?;
        if !named {
            self.assign(&VarRef { slot, field: None }, Value::Text(name.clone()))?;
        }
        portals.pin(&name, true);
        let depth = self.vars.len();
        self.scopes.push(Scope { label: None, first: depth });
        self.declare(&f.var, VarType::Record(None), Value::Null);
        let target = [VarRef { slot: depth, field: None }];
        let r = async {
            let mut any = false;
            loop {
                let done = portals.fetch(&name, crate::cursor::Direction::Forward(1), true)?;
                let Some(row) = done.rows.into_iter().next() else { break };
                any = true;
                self.store_row(&target, &done.columns, row)?;
                if let Some(out) = self.iteration(&f.body, &f.label).await? {
                    return Ok((out, any));
                }
            }
            Ok((Flow::Normal, any))
        }
        .await;
        self.vars.truncate(depth);
        self.scopes.pop();
        portals.pin(&name, false);
        portals.drop_cursor(&name);
        if !named {
            if let Some(v) = self.vars.get_mut(slot) {
                v.value = Value::Null;
            }
        }
        let (flow, any) = r?;
        self.set_found(any);
        Ok(flow)
    }

    /// Sets FOUND and ROW_COUNT after a statement (EXECUTE, `dynamic`,
    /// leaves FOUND alone), and stores its row in the INTO targets.
    fn finish_sql(
        &mut self,
        done: Done,
        cols: &[crate::plan::Column],
        into: Option<&parse::Into>,
        dynamic: bool,
    ) -> Result<()> {
        let Some(into) = into else {
            if !dynamic && !cols.is_empty() {
                return Err(err!(SyntaxError, "query has no destination for result data")
                    .with_hint(
                        "If you want to discard the results of a SELECT, use PERFORM instead.",
                    ));
            }
            self.row_count = done.count;
            if !dynamic {
                self.set_found(done.count > 0);
            }
            return Ok(());
        };
        let n = done.rows.len();
        if n == 0 && into.strict {
            bail!(NoDataFound, "query returned no rows");
        }
        if n > 1 && (into.strict || done.dml) {
            bail!(TooManyRows, "query returned more than one row");
        }
        let refs = self.targets(&into.targets)?;
        let row_count = if done.dml { done.count } else { n.min(1) as u64 };
        let row = done.rows.into_iter().next();
        let found = row.is_some();
        let row = row.unwrap_or_else(|| vec![Value::Null; cols.len()]);
        self.store_row(&refs, cols, row)?;
        self.row_count = row_count;
        if !dynamic {
            self.set_found(found);
        }
        Ok(())
    }

    fn targets(&self, targets: &[Target]) -> Result<Vec<VarRef>> {
        targets.iter().map(|t| self.target(t)).collect()
    }

    /// Stores a row into targets: one record variable takes the whole row;
    /// otherwise the columns go to the targets in order.
    fn store_row(
        &mut self,
        refs: &[VarRef],
        cols: &[crate::plan::Column],
        row: Vec<Value>,
    ) -> Result<()> {
        if let [r] = refs {
            let is_record = r.field.is_none()
                && matches!(self.vars.get(r.slot).map(|v| &v.ty), Some(VarType::Record(_)));
            if is_record {
                let rt =
                    RecordType::new(cols.iter().map(|c| (c.name.clone(), c.ty.clone())).collect());
                return self.assign(r, RecordValue::value(rt, row));
            }
        }
        let mut values = row.into_iter();
        for r in refs {
            self.assign(r, values.next().unwrap_or(Value::Null))?;
        }
        Ok(())
    }

    /// A row converted to a set-returning function's column types.
    fn conform_row(&self, row: Vec<Value>, types: &[DataType]) -> Result<Vec<Value>> {
        if row.len() != types.len() {
            bail!(DatatypeMismatch, "structure of query does not match function result type");
        }
        let zone = self.spi.context().zone.clone();
        let zone = zone.as_deref().unwrap_or(sqltypes::Zone::utc_ref());
        row.into_iter().zip(types).map(|(v, t)| convert(v, t, zone)).collect()
    }

    async fn ret(&mut self, e: Option<&Sql>) -> Result<Flow> {
        match &self.returns {
            Returns::SetOf(..) => {
                if e.is_some() {
                    bail!(SyntaxError, "RETURN cannot have a parameter in function returning set");
                }
            }
            Returns::Out(..) => {
                if e.is_some() {
                    bail!(
                        DatatypeMismatch,
                        "RETURN cannot have a parameter in function with OUT parameters"
                    );
                }
            }
            Returns::Void | Returns::None => {
                if e.is_some() {
                    bail!(
                        DatatypeMismatch,
                        "RETURN cannot have a parameter in function returning void"
                    );
                }
            }
            Returns::Value(t) => {
                let t = t.clone();
                let v = match e {
                    Some(e) => self.eval(e).await?,
                    None => bail!(SyntaxError, "missing expression at or near \";\""),
                };
                let zone = self.spi.context().zone.clone();
                self.result = convert(v, &t, zone.as_deref().unwrap_or(sqltypes::Zone::utc_ref()))?;
            }
            Returns::Row(_) | Returns::Trigger => {
                let v = match e {
                    Some(e) => self.eval(e).await?,
                    None => bail!(SyntaxError, "missing expression at or near \";\""),
                };
                if !matches!(v, Value::Null | Value::Record(_)) {
                    bail!(
                        DatatypeMismatch,
                        "cannot return non-composite value from function returning composite type"
                    );
                }
                self.result = v;
            }
        }
        Ok(Flow::Return)
    }

    /// The output variables' values (OUT parameters, RETURNS TABLE's
    /// columns).
    fn out_values(&self) -> Vec<Value> {
        self.out_vars
            .iter()
            .map(|s| self.vars.get(*s).map_or(Value::Null, |v| v.value.clone()))
            .collect()
    }

    async fn return_next(&mut self, e: Option<&Sql>) -> Result<()> {
        let Returns::SetOf(types, named) = &self.returns else {
            bail!(SyntaxError, "cannot use RETURN NEXT in a non-SETOF function");
        };
        let (types, named) = (types.clone(), *named);
        let row = match e {
            None => {
                if self.out_vars.is_empty() {
                    bail!(SyntaxError, "RETURN NEXT must have a parameter");
                }
                self.out_values()
            }
            Some(e) => {
                if !self.out_vars.is_empty() {
                    bail!(
                        SyntaxError,
                        "RETURN NEXT cannot have a parameter in function with OUT parameters"
                    );
                }
                match self.eval(e).await? {
                    Value::Record(rv) if named => rv.values,
                    Value::Null if named => vec![Value::Null; types.len()],
                    v => vec![v],
                }
            }
        };
        let row = self.conform_row(row, &types)?;
        self.rows.push(row);
        Ok(())
    }

    /// A value as text (RAISE's `%`, EXECUTE's command).
    fn text(&self, v: &Value) -> String {
        match v {
            Value::Text(s) => s.clone(),
            v => {
                let zone = self.spi.context().zone.clone();
                sqltypes::text::to_text_in(v, zone.as_deref().unwrap_or(sqltypes::Zone::utc_ref()))
            }
        }
    }

    async fn raise(&mut self, r: Option<&parse::Raise>) -> Result<()> {
        let Some(r) = r else {
            return match self.caught.last() {
                Some(e) => Err(e.clone()),
                None => Err(custom(
                    "0Z002",
                    "RAISE without parameters cannot be used outside an exception handler".into(),
                )),
            };
        };
        let mut message = None;
        if let Some(f) = &r.format {
            let mut args = Vec::with_capacity(r.args.len());
            for a in &r.args {
                args.push(match self.eval(a).await? {
                    Value::Null => "<NULL>".to_string(),
                    v => self.text(&v),
                });
            }
            let mut out = String::new();
            let mut it = args.into_iter();
            let mut chars = f.chars().peekable();
            let mut placeholders = 0;
            while let Some(c) = chars.next() {
                if c == '%' {
                    if chars.peek() == Some(&'%') {
                        chars.next();
                        out.push('%');
                        continue;
                    }
                    placeholders += 1;
                    match it.next() {
                        Some(a) => out.push_str(&a),
                        None => bail!(SyntaxError, "too few parameters specified for RAISE"),
                    }
                } else {
                    out.push(c);
                }
            }
            if placeholders < r.args.len() {
                bail!(SyntaxError, "too many parameters specified for RAISE");
            }
            message = Some(out);
        }
        let mut code = match &r.condition {
            Some(Condition::Name(n)) => Some(condition_code(n)?),
            Some(Condition::Sqlstate(s)) => Some(sqlstate_code(s)?),
            None => None,
        };
        let (mut detail, mut hint) = (None, None);
        let mut fields: Vec<(String, String)> = Vec::new();
        for (opt, e) in &r.options {
            let v = match self.eval(e).await? {
                Value::Null => bail!(NullValueNotAllowed, "RAISE statement option cannot be null"),
                v => self.text(&v),
            };
            match opt.as_str() {
                "errcode" => {
                    if code.is_some() {
                        bail!(SyntaxError, "RAISE option already specified: ERRCODE");
                    }
                    code = Some(match SqlState::from_code(&v) {
                        Some(c) if v.len() == 5 && !v.chars().any(|c| c.is_ascii_lowercase()) => c,
                        _ => condition_code(&v)?,
                    });
                }
                "message" => {
                    if message.is_some() {
                        bail!(SyntaxError, "RAISE option already specified: MESSAGE");
                    }
                    message = Some(v);
                }
                "detail" => detail = Some(v),
                "hint" => hint = Some(v),
                "column" | "constraint" | "datatype" | "table" | "schema" => {
                    fields.push((opt.clone(), v))
                }
                other => bail!(SyntaxError, "unrecognized RAISE statement option \"{other}\""),
            }
        }
        let message = match (message, &r.condition) {
            (Some(m), _) => m,
            (None, Some(Condition::Name(n))) => n.clone(),
            (None, Some(Condition::Sqlstate(s))) => s.clone(),
            (None, None) => code.map(|c| c.code().to_string()).unwrap_or_else(|| "P0001".into()),
        };
        let default = match r.level {
            Level::Exception => SqlState::RaiseException,
            Level::Warning => SqlState::Warning,
            _ => SqlState::SuccessfulCompletion,
        };
        let mut report = ErrorReport::new(code.unwrap_or(default), message);
        report.detail = detail;
        report.hint = hint;
        for (k, v) in fields {
            match k.as_str() {
                "column" => report.column = Some(v),
                "constraint" => report.constraint = Some(v),
                "table" => report.table = Some(v),
                "schema" => report.schema = Some(v),
                _ => {}
            }
        }
        match r.level {
            Level::Exception => Err(report),
            Level::Debug | Level::Log => Ok(()),
            Level::Warning => {
                report.severity = Severity::Warning;
                self.spi.notice(report);
                Ok(())
            }
            Level::Info | Level::Notice => {
                report.severity = match r.level {
                    Level::Info => Severity::Info,
                    _ => Severity::Notice,
                };
                self.spi.notice(report);
                Ok(())
            }
        }
    }

    fn diagnostics(&mut self, stacked: bool, items: &[(Target, String)]) -> Result<()> {
        for (t, item) in items {
            let r = self.target(t)?;
            let v = if stacked {
                let Some(e) = self.caught.last() else {
                    return Err(custom(
                        "0Z002",
                        "GET STACKED DIAGNOSTICS cannot be used outside an exception handler"
                            .into(),
                    ));
                };
                let text = |s: &Option<String>| Value::Text(s.clone().unwrap_or_default());
                match item.as_str() {
                    "returned_sqlstate" => Value::Text(e.code.code().to_string()),
                    "message_text" => Value::Text(e.message.clone()),
                    "pg_exception_detail" => text(&e.detail),
                    "pg_exception_hint" => text(&e.hint),
                    "pg_exception_context" => text(&e.context),
                    "column_name" => text(&e.column),
                    "constraint_name" => text(&e.constraint),
                    "table_name" => text(&e.table),
                    "schema_name" => text(&e.schema),
                    "pg_datatype_name" => Value::Text(String::new()),
                    other => bail!(SyntaxError, "unrecognized GET DIAGNOSTICS item \"{other}\""),
                }
            } else {
                match item.as_str() {
                    "row_count" => Value::Int8(self.row_count as i64),
                    "pg_context" => Value::Text(String::new()),
                    other => bail!(SyntaxError, "unrecognized GET DIAGNOSTICS item \"{other}\""),
                }
            };
            self.assign(&r, v)?;
        }
        Ok(())
    }
}

/// The hidden variable a simple CASE's subject is kept in.
const CASE_SUBJECT: &str = "pl$case";

/// What ends a loop: EXIT or CONTINUE without a label or with its label
/// (CONTINUE goes on looping: None); anything else leaves it.
fn loop_exit(f: Flow, label: &Option<String>) -> Option<Flow> {
    let mine = |l: &Option<String>| l.is_none() || l == label;
    match f {
        Flow::Exit(l) if mine(&l) => Some(Flow::Normal),
        Flow::Continue(l) if mine(&l) => None,
        other => Some(other),
    }
}

/// 42P11 for a cursor opened for a statement that returns no rows.
fn not_a_cursor(stmt: &ParsedStmt) -> crate::error::Error {
    let command = stmt.own_command().unwrap_or("this");
    err!(InvalidCursorDefinition, "cannot open {command} query as cursor")
}

/// EXECUTE's (or OPEN ... FOR EXECUTE's) command parsed: one statement.
fn dynamic_statement(command: &str) -> Result<crate::parse::Parsed> {
    let mut parsed = crate::parse::parse(command)?;
    if parsed.len() > 1 {
        bail!(SyntaxError, "cannot insert multiple commands into a prepared statement");
    }
    match parsed.pop() {
        Some(p) => Ok(p),
        None => bail!(SyntaxError, "cannot execute an empty query string"),
    }
}

/// True for an expression PostgreSQL would evaluate as a simple one at
/// run time: no FROM, no subquery, and not constant (it reads a variable
/// or calls a function).
fn simple_runtime(frag: &Fragment) -> bool {
    let ParsedStmt::Sql(s) = &frag.stmt else { return false };
    let ast::Statement::Query(q) = s.as_ref() else { return false };
    let ast::SetExpr::Select(sel) = q.body.as_ref() else { return false };
    if !sel.from.is_empty() || q.with.is_some() {
        return false;
    }
    let mut subquery = false;
    let mut call = false;
    let _ = ast::visit_expressions(&sel.projection, |e| {
        match e {
            ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
                subquery = true
            }
            ast::Expr::Function(_) => call = true,
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    !subquery && (call || !frag.refs.is_empty())
}

/// How an error CONTEXT line names a statement, as PostgreSQL does.
fn stmt_kind(s: &Stmt) -> &'static str {
    match s {
        Stmt::Block(_) => "statement block",
        Stmt::Assign(..) | Stmt::AssignElement(..) => "assignment",
        Stmt::If(..) => "IF",
        Stmt::Case(..) => "CASE",
        Stmt::Loop(..) => "LOOP",
        Stmt::While(..) => "WHILE",
        Stmt::ForRange(_) => "FOR with integer loop variable",
        Stmt::ForQuery(_, _, Source::Query(_), _) => "FOR over SELECT rows",
        Stmt::ForQuery(..) => "FOR over EXECUTE statement",
        Stmt::Foreach(..) => "FOREACH over array",
        Stmt::Exit(_, _, false) => "EXIT",
        Stmt::Exit(_, _, true) => "CONTINUE",
        Stmt::Return(_) => "RETURN",
        Stmt::ReturnNext(_) => "RETURN NEXT",
        Stmt::ReturnQuery(_) => "RETURN QUERY",
        Stmt::Raise(_) => "RAISE",
        Stmt::Perform(_) => "PERFORM",
        Stmt::Sql(q, _)
            if q.text.trim_start().get(..4).is_some_and(|w| w.eq_ignore_ascii_case("call")) =>
        {
            "CALL"
        }
        Stmt::Sql(..) => "SQL statement",
        Stmt::Execute(..) => "EXECUTE",
        Stmt::GetDiagnostics(true, _) => "GET STACKED DIAGNOSTICS",
        Stmt::GetDiagnostics(false, _) => "GET DIAGNOSTICS",
        Stmt::Assert(..) => "ASSERT",
        Stmt::Open(..) => "OPEN",
        Stmt::Fetch(f) if f.into.is_none() => "MOVE",
        Stmt::Fetch(_) => "FETCH",
        Stmt::Close(_) => "CLOSE",
        Stmt::ForCursor(_) => "FOR over cursor",
        Stmt::Null => "NULL",
        Stmt::EndTransaction(true) => "COMMIT",
        Stmt::EndTransaction(false) => "ROLLBACK",
    }
}

/// The error for assigning to a CONSTANT variable.
fn constant_assigned(name: &str) -> ErrorReport {
    custom("22005", format!("variable \"{name}\" is declared CONSTANT"))
}

/// True for the statements the planner plans (the others are utility
/// statements, run as written, without variables).
fn plannable(s: &ast::Statement) -> bool {
    use ast::Statement as S;
    matches!(s, S::Query(_) | S::Insert(_) | S::Update(_) | S::Delete(_) | S::Merge(_) | S::Call(_))
}

/// The variables a CALL's output parameters go back to: the argument in
/// each one's place (by name or position) must be a variable, now a `$n`
/// parameter of the statement.
fn call_targets(
    c: &crate::plan::PlCall,
    f: &ast::Function,
    refs: &[VarRef],
) -> Result<Vec<VarRef>> {
    let ast::FunctionArguments::List(list) = &f.args else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (i, p) in c.def.args.iter().enumerate() {
        if p.mode.is_in() {
            continue;
        }
        let named = list.args.iter().find_map(|a| match a {
            ast::FunctionArg::Named { name, arg: ast::FunctionArgExpr::Expr(e), .. }
            | ast::FunctionArg::ExprNamed {
                name: ast::Expr::Identifier(name),
                arg: ast::FunctionArgExpr::Expr(e),
                ..
            } if p.name.as_deref() == Some(crate::bind::ident(name).as_str()) => Some(e),
            _ => None,
        });
        let arg = named.or_else(|| match list.args.get(i) {
            Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))) => Some(e),
            _ => None,
        });
        let var = match arg {
            Some(ast::Expr::Value(v)) => match &v.value {
                ast::Value::Placeholder(n) => {
                    crate::bind::placeholder(n).and_then(|(n, _)| refs.get(n.wrapping_sub(1)))
                }
                _ => None,
            },
            _ => None,
        };
        match var {
            Some(r) => out.push(r.clone()),
            None => bail!(
                SyntaxError,
                "procedure parameter \"{}\" is an output parameter but corresponding argument is not writable",
                p.name.as_deref().unwrap_or_default()
            ),
        }
    }
    Ok(out)
}

fn is_transaction_control(s: &ast::Statement) -> bool {
    use ast::Statement as S;
    matches!(
        s,
        S::StartTransaction { .. }
            | S::Commit { .. }
            | S::Rollback { .. }
            | S::Savepoint { .. }
            | S::ReleaseSavepoint { .. }
    )
}

/// The SQLSTATE a condition name stands for.
fn condition_code(name: &str) -> Result<SqlState> {
    SqlState::from_condition(&name.to_ascii_lowercase())
        .ok_or_else(|| err!(UndefinedObject, "unrecognized exception condition \"{name}\""))
}

fn sqlstate_code(code: &str) -> Result<SqlState> {
    match SqlState::from_code(code) {
        Some(c) if code != "00000" => Ok(c),
        _ => bail!(SyntaxError, "invalid SQLSTATE code"),
    }
}

/// True if an EXCEPTION clause's condition catches the error.
fn catches(c: &Condition, e: &ErrorReport) -> bool {
    let code = e.code.code();
    let matches = |want: &str| {
        // A class's code (`22000`) catches every error of the class.
        want == code || (want.ends_with("000") && want.get(..2) == code.get(..2))
    };
    match c {
        Condition::Name(n) if n == "others" => {
            !matches!(e.code, SqlState::QueryCanceled | SqlState::AssertFailure)
        }
        Condition::Name(n) => SqlState::from_condition(n).is_some_and(|s| matches(s.code())),
        Condition::Sqlstate(s) => matches(s),
    }
}

/// Converts a value to a variable's type as PL/pgSQL assigns.
fn convert(v: Value, ty: &DataType, zone: &sqltypes::Zone) -> Result<Value> {
    if v.is_null() {
        return Ok(v);
    }
    if matches!(ty, DataType::Record(_)) {
        return Ok(v);
    }
    let cast = match &v {
        Value::Text(s)
            if !matches!(ty, DataType::Text | DataType::Varchar(_) | DataType::Char(_)) =>
        {
            sqltypes::text::parse_text_in(ty, s, zone)?
        }
        _ => sqltypes::cast::cast_in(v, ty, zone)?,
    };
    crate::dml::enforce_type(cast, ty)
}

/// A row's values converted to a row type, by position.
fn conform(values: Vec<Value>, rt: &RecordType, zone: &sqltypes::Zone) -> Result<Vec<Value>> {
    let mut out = Vec::with_capacity(rt.fields.len());
    let mut it = values.into_iter();
    for (_, t) in &rt.fields {
        out.push(convert(it.next().unwrap_or(Value::Null), t, zone)?);
    }
    Ok(out)
}

fn table_named(cat: &Catalog, name: &str) -> Result<Arc<crate::catalog::TableDef>> {
    let (schema, table) = match name.rsplit_once('.') {
        Some((s, t)) => (Some(s.trim().trim_matches('"').to_string()), t.trim().trim_matches('"')),
        None => (None, name.trim().trim_matches('"')),
    };
    let n = crate::catalog::ObjName { schema, name: table.to_string() };
    match cat.table(&n)? {
        Some(t) => Ok(t),
        None => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
    }
}

/// A variable declared with a table's name as its type has its row type.
fn custom_row_type(cat: &Catalog, t: &ast::DataType) -> Option<Arc<RecordType>> {
    let ast::DataType::Custom(name, mods) = t else { return None };
    if !mods.is_empty() {
        return None;
    }
    let n = crate::bind::obj_name(name).ok()?;
    cat.table(&n).ok().flatten().map(|t| t.row_type())
}

/// The visitor that turns variable names into `$n` parameters.
struct SubstituteVars<'a, 'i, S: Spi> {
    interp: &'a Interp<'i, S>,
    refs: &'a mut Vec<VarRef>,
    problem: &'a mut Option<ErrorReport>,
}

impl<S: Spi> SubstituteVars<'_, '_, S> {
    /// The parameter for variable `r`; `bare` is the name it was written
    /// as, alone (see [`crate::bind::placeholder`]: the planner checks it
    /// against the columns).
    fn param(&mut self, r: VarRef, bare: Option<&str>) -> ast::Expr {
        let n = match self.refs.iter().position(|x| *x == r) {
            Some(i) => i + 1,
            None => {
                self.refs.push(r);
                self.refs.len()
            }
        };
        // A SQL function's parameter yields to a column.
        let conflict = match self.interp.sql_function {
            Some(_) => parse::Conflict::UseColumn,
            None => self.interp.code.conflict,
        };
        let p = match (bare, conflict) {
            (Some(name), parse::Conflict::Error) => format!("${n}?{name}"),
            (Some(name), parse::Conflict::UseColumn) => format!("${n}!{name}"),
            _ => format!("${n}"),
        };
        ast::Expr::Value(ast::Value::Placeholder(p).into())
    }
}

impl<S: Spi> SubstituteVars<'_, '_, S> {
    /// The fields of the record variable `name.*` names, as `name.field`
    /// expressions (None if `name` is no assigned record variable).
    fn star_fields(&self, name: &ast::ObjectName) -> Option<Vec<(ast::Expr, ast::Ident)>> {
        let [part] = name.0.as_slice() else { return None };
        let var = part.as_ident()?;
        let slot = self.interp.lookup(&crate::bind::ident(var))?;
        let Ok(DataType::Record(rt)) = self.interp.ref_type(&VarRef { slot, field: None }) else {
            return None;
        };
        let fields = rt.fields.iter().map(|(f, _)| {
            let field = ast::Ident::with_quote('"', f.clone());
            (ast::Expr::CompoundIdentifier(vec![var.clone(), field.clone()]), field)
        });
        Some(fields.collect())
    }
}

impl<S: Spi> ast::VisitorMut for SubstituteVars<'_, '_, S> {
    type Break = ();

    /// `rec.*` in a select list or a VALUES row stands for the record
    /// variable's fields.
    fn pre_visit_query(&mut self, q: &mut ast::Query) -> ControlFlow<()> {
        match q.body.as_mut() {
            ast::SetExpr::Select(sel) => {
                let mut items = Vec::with_capacity(sel.projection.len());
                for item in std::mem::take(&mut sel.projection) {
                    let fields = match &item {
                        ast::SelectItem::QualifiedWildcard(
                            ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                            _,
                        ) => self.star_fields(n),
                        _ => None,
                    };
                    match fields {
                        Some(fields) => {
                            items.extend(fields.into_iter().map(|(expr, alias)| {
                                ast::SelectItem::ExprWithAlias { expr, alias }
                            }))
                        }
                        None => items.push(item),
                    }
                }
                sel.projection = items;
            }
            ast::SetExpr::Values(v) => {
                for row in &mut v.rows {
                    let mut out = Vec::with_capacity(row.len());
                    for e in std::mem::take(&mut row.content) {
                        let fields = match &e {
                            ast::Expr::QualifiedWildcard(n, _) => self.star_fields(n),
                            _ => None,
                        };
                        match fields {
                            Some(fields) => out.extend(fields.into_iter().map(|(e, _)| e)),
                            None => out.push(e),
                        }
                    }
                    row.content = out;
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        let name = |i: &ast::Ident| match i.quote_style {
            Some(_) => i.value.clone(),
            None => i.value.to_lowercase(),
        };
        let mut bare = None;
        let r = match e {
            ast::Expr::Identifier(i) => {
                bare = Some(name(i));
                self.interp.resolve(&[name(i)])
            }
            ast::Expr::CompoundIdentifier(parts) => {
                let parts: Vec<String> = parts.iter().map(name).collect();
                self.interp.resolve(&parts)
            }
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Placeholder(p) => {
                    // `$n` in a function body is its n-th parameter (slot
                    // n: slot 0 is FOUND).
                    match p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
                        Some(n) if n >= 1 && self.interp.vars.get(n).is_some() => {
                            Some(VarRef { slot: n, field: None })
                        }
                        _ => {
                            *self.problem =
                                Some(err!(UndefinedParameter, "there is no parameter {p}"));
                            return ControlFlow::Break(());
                        }
                    }
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(r) = r {
            *e = self.param(r, bare.as_deref());
        }
        ControlFlow::Continue(())
    }
}
