//! Bound expressions and their evaluation.
//!
//! The binder turns sqlparser's syntax tree into an [`Expr`] whose column
//! references are positions in the input row and whose types are resolved, so
//! evaluation is a plain tree walk with no name lookups. NULL follows SQL's
//! three-valued logic: comparisons with NULL yield NULL, `AND`/`OR` use the
//! Kleene truth tables, and a WHERE clause keeps a row only if it is TRUE.

use sqltypes::{cast, ops, DataType, Value};

use crate::bail;
use crate::error::Result;
use crate::func::Func;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `=`
    Eq,
    /// `<>`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `AND`
    And,
    /// `OR`
    Or,
    /// `||`
    Concat,
    /// `&`, `|`, `#`, `<<`, `>>` on integers
    Bit(ops::BitOp),
}

impl BinOp {
    /// True for the comparison operators.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq)
    }

    /// The comparison that holds with the operands swapped (`a < b` is
    /// `b > a`); None for the other operators.
    pub fn flip(self) -> Option<BinOp> {
        Some(match self {
            BinOp::Eq | BinOp::NotEq => self,
            BinOp::Lt => BinOp::Gt,
            BinOp::LtEq => BinOp::GtEq,
            BinOp::Gt => BinOp::Lt,
            BinOp::GtEq => BinOp::LtEq,
            _ => return None,
        })
    }

    /// Whether a comparison operator holds for operands ordered `ord`
    /// (false for the other operators).
    pub fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            BinOp::Eq => ord == Equal,
            BinOp::NotEq => ord != Equal,
            BinOp::Lt => ord == Less,
            BinOp::LtEq => ord != Greater,
            BinOp::Gt => ord == Greater,
            BinOp::GtEq => ord != Less,
            _ => false,
        }
    }
}

/// A bound, typed expression over one input row.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A constant.
    Const(Value),
    /// The n-th (0-based) statement parameter ($n+1).
    Param(usize),
    /// The n-th column of the input row.
    Column(usize),
    /// A column of an enclosing query's current row: the n-th value of
    /// [`EvalContext::outer`] counted from its end (0 is the last), so the
    /// same expression reads the same column however deep the query it is
    /// in runs.
    Outer(usize),
    /// The value of the n-th uncorrelated subquery of the enclosing
    /// [`crate::plan::Plan::Init`] (scalar subquery or EXISTS).
    Subquery(usize),
    /// `x [NOT] IN (subquery)`, against the n-th subquery's first column.
    InSubquery(Box<Expr>, usize, bool),
    /// A binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `NOT x`
    Not(Box<Expr>),
    /// `-x`
    Neg(Box<Expr>),
    /// `x IS [NOT] NULL`
    IsNull(Box<Expr>, bool),
    /// `x IS [NOT] TRUE/FALSE` (value tested, negated)
    IsBool(Box<Expr>, bool, bool),
    /// A cast to a type.
    Cast(Box<Expr>, DataType),
    /// A scalar function call.
    Func(Func, Vec<Expr>),
    /// `CASE [operand] WHEN .. THEN .. ELSE .. END`
    Case(Option<Box<Expr>>, Vec<(Expr, Expr)>, Option<Box<Expr>>),
    /// `x [NOT] IN (list)`
    InList(Box<Expr>, Vec<Expr>, bool),
    /// `x [NOT] LIKE/ILIKE pattern` (negated, case-insensitive)
    Like(Box<Expr>, Box<Expr>, bool, bool),
    /// `x ~ pattern` and `~*`, `!~`, `!~*` (negated, case-insensitive)
    Regex(Box<Expr>, Box<Expr>, bool, bool),
    /// `ROW(a, b)`, `(a, b)` or a whole-row reference: a record of the
    /// fields' values.
    Row(std::sync::Arc<sqltypes::RecordType>, Vec<Expr>),
    /// `(x).field`: the n-th field of a record (NULL for a NULL record).
    Field(Box<Expr>, usize),
    /// `x::d` for a domain `d`: the value, once the domain's constraints
    /// hold for it (`x` is already of the domain's base type).
    Domain(Box<Expr>, std::sync::Arc<crate::catalog::Domain>),
}

/// What expressions can see besides the row: parameters and the statement clock.
#[derive(Debug, Clone, Default)]
pub struct EvalContext {
    /// Bound parameter values.
    pub params: Vec<Value>,
    /// What stops the statement inside its row loops (a cancel,
    /// statement_timeout).
    pub interrupts: crate::interrupts::Interrupts,
    /// Transaction start time (now(), CURRENT_TIMESTAMP), microseconds since 2000.
    pub txn_time: i64,
    /// Statement start time (statement_timestamp()).
    pub stmt_time: i64,
    /// The transaction's id (txid_current; 0 outside a transaction).
    pub txid: i64,
    /// When the SQL process started (pg_postmaster_start_time), in
    /// microseconds since 2000.
    pub started: i64,
    /// The enclosing queries' current rows, outermost first (a correlated
    /// subquery or LATERAL item runs with its row appended): what
    /// [`Expr::Outer`] reads, from the end.
    pub outer: Vec<Value>,
    /// The current user (current_user), whose privileges apply.
    pub user: std::sync::Arc<str>,
    /// The session user (session_user).
    pub session_user: std::sync::Arc<str>,
    /// Results of the enclosing query's uncorrelated subqueries.
    pub subq: std::sync::Arc<Vec<SubqValue>>,
    /// The session's settings (current_setting), lower-case names.
    pub settings: std::sync::Arc<std::collections::BTreeMap<String, String>>,
    /// Sequences for nextval, currval, setval and lastval.
    pub seqs: crate::sequence::SeqContext,
    /// The session's open cursors (None outside a session).
    pub cursors: Option<std::sync::Arc<crate::cursor::Portals>>,
    /// The catalog the statement was planned against, for the system
    /// information functions (pg_get_constraintdef, ...).
    pub catalog: Option<std::sync::Arc<crate::catalog::Catalog>>,
    /// Settings changed by set_config() during the statement, applied to
    /// the session when it finishes.
    pub set_config: std::sync::Arc<parking_lot::Mutex<Vec<(String, String, bool)>>>,
    /// Work tables of the recursive CTEs being run (None outside them, so
    /// ordinary statements allocate nothing for it).
    pub work: Option<std::sync::Arc<Vec<WorkTable>>>,
    /// The session's TimeZone (None: UTC).
    pub zone: Option<std::sync::Arc<sqltypes::Zone>>,
    /// The session's advisory locks (None outside a session).
    pub advisory: Option<std::sync::Arc<crate::advisory::SessionLocks>>,
    /// The session's pid (pg_backend_pid; the BackendKeyData pid).
    pub pid: i32,
    /// The row locks of the statement (FOR UPDATE; None outside a session).
    pub row_locks: Option<std::sync::Arc<crate::rowlock::StatementLocks>>,
    /// The tenant's sessions (pg_stat_activity, pg_cancel_backend; None
    /// for a session not attached to a connection).
    pub backends: Option<std::sync::Arc<crate::backends::View>>,
    /// The session's LISTEN/NOTIFY state (pg_notify; None outside a session).
    pub listener: Option<std::sync::Arc<crate::notify::Listener>>,
    /// The statement's waited calls (pg_sleep; None outside a session).
    pub waits: Option<std::sync::Arc<crate::waits::StatementWaits>>,
    /// The statement's relation sizes (pg_relation_size; None outside a
    /// session).
    pub sizes: Option<std::sync::Arc<crate::sizes::StatementSizes>>,
    /// Hashed scans shared by the runs of a correlated subquery or
    /// LATERAL item (see exec/memo.rs; None elsewhere).
    pub memo: Option<std::sync::Arc<crate::exec::memo::ScanMemo>>,
    /// Warnings raised by functions during the statement, which the
    /// session sends as notices.
    pub warnings: std::sync::Arc<parking_lot::Mutex<Vec<sqlstate::ErrorReport>>>,
    /// The transaction's deferred constraint checks (None outside a
    /// session: every check runs at once).
    pub deferred: Option<std::sync::Arc<crate::deferred::Deferred>>,
    /// The session's parsed PL/pgSQL bodies (None outside a session: each
    /// call parses its body).
    pub pl: Option<std::sync::Arc<crate::plpgsql::Cache>>,
    /// How many PL/pgSQL calls and trigger firings this statement runs
    /// inside (see [`crate::plpgsql::MAX_DEPTH`]).
    pub depth: u32,
    /// The session's random() sequence, which setseed() restarts (None
    /// outside a session: a sequence per thread).
    pub random: Option<std::sync::Arc<crate::func::SessionRandom>>,
}

impl EvalContext {
    /// The session's time zone.
    pub fn zone(&self) -> &sqltypes::Zone {
        self.zone.as_deref().unwrap_or(sqltypes::Zone::utc_ref())
    }

    /// The context a correlated subquery or LATERAL item runs in for
    /// `row`: the enclosing rows with `row` after them.
    pub fn with_row(&self, row: &[Value]) -> EvalContext {
        let outer = self.outer.iter().chain(row).cloned().collect();
        EvalContext { outer, ..self.clone() }
    }
}

/// An open cursor as pg_cursors shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CursorInfo {
    /// Cursor name.
    pub name: String,
    /// The DECLARE statement's text.
    pub statement: String,
    /// WITH HOLD.
    pub holdable: bool,
    /// SCROLL.
    pub scrollable: bool,
    /// When it was declared (microseconds since 2000).
    pub created: i64,
}

/// A recursive CTE's rows from its previous iteration: (CTE id, rows).
pub type WorkTable = (usize, std::sync::Arc<Vec<Vec<Value>>>);

/// The result of an uncorrelated subquery, computed once per statement.
#[derive(Debug, Clone, PartialEq)]
pub enum SubqValue {
    /// A scalar subquery's value, or EXISTS's boolean.
    Value(Value),
    /// The first column of every row (for IN).
    List(ValueList),
}

/// The values of an `IN (subquery)`, hashed when there are many of one
/// hashable kind, so each test is one lookup instead of a pass.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueList {
    values: Vec<Value>,
    /// (the values' hash class, their hash keys, whether one is NULL).
    hashed: Option<(DataType, std::collections::HashSet<Vec<u8>>, bool)>,
}

impl ValueList {
    /// Lists at least this long are hashed.
    const HASH_FROM: usize = 16;

    /// The list of `values`.
    pub fn new(values: Vec<Value>) -> ValueList {
        let hashed = (values.len() >= Self::HASH_FROM).then(|| Self::hash(&values)).flatten();
        ValueList { values, hashed }
    }

    fn hash(values: &[Value]) -> Option<(DataType, std::collections::HashSet<Vec<u8>>, bool)> {
        let class = values.iter().find(|v| !v.is_null()).and_then(crate::select::value_class)?;
        let mut set = std::collections::HashSet::with_capacity(values.len());
        let mut has_null = false;
        for v in values {
            if v.is_null() {
                has_null = true;
            } else if !crate::select::fits_class(v, &class) {
                return None;
            } else {
                set.insert(crate::select::hash_key(vec![v.clone()], std::slice::from_ref(&class))?);
            }
        }
        Some((class, set, has_null))
    }

    /// `v [NOT] IN` the list, with SQL's NULL rules.
    pub fn test(&self, v: &Value, negated: bool) -> Result<Value> {
        if let Some((class, set, has_null)) = &self.hashed {
            if !v.is_null() && crate::select::fits_class(v, class) {
                let key = crate::select::hash_key(vec![v.clone()], std::slice::from_ref(class));
                return Ok(match key.is_some_and(|k| set.contains(&k)) {
                    true => Value::Bool(!negated),
                    false if *has_null => Value::Null,
                    false => Value::Bool(negated),
                });
            }
        }
        in_list(v, &self.values, negated)
    }
}

impl Expr {
    /// The input column this expression is, if it is just one.
    pub fn as_column(&self) -> Option<usize> {
        match self {
            Expr::Column(c) => Some(*c),
            _ => None,
        }
    }

    /// True if the expression reads column `c` of its row.
    pub fn reads_column(&self, c: usize) -> bool {
        let mut reads = false;
        self.walk(&mut |x| reads |= x.as_column() == Some(c));
        reads
    }

    /// The columns of its row the expression reads, in the order they first
    /// appear.
    pub fn columns_read(&self) -> Vec<usize> {
        let mut cols = Vec::new();
        self.walk(&mut |x| {
            if let Some(c) = x.as_column().filter(|c| !cols.contains(c)) {
                cols.push(c);
            }
        });
        cols
    }

    /// Evaluates the expression against `row`.
    pub fn eval(&self, row: &[Value], ctx: &EvalContext) -> Result<Value> {
        Ok(match self {
            Expr::Const(v) => v.clone(),
            Expr::Param(i) => ctx.params.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Column(i) => row.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Outer(i) => match ctx.outer.len().checked_sub(i + 1) {
                Some(at) => ctx.outer[at].clone(),
                None => Value::Null,
            },
            Expr::Subquery(i) => match ctx.subq.get(*i) {
                Some(SubqValue::Value(v)) => v.clone(),
                _ => Value::Null,
            },
            Expr::InSubquery(e, i, negated) => {
                let v = e.eval(row, ctx)?;
                let Some(SubqValue::List(list)) = ctx.subq.get(*i) else { return Ok(Value::Null) };
                list.test(&v, *negated)?
            }
            Expr::Binary(op, l, r) => return eval_binary(*op, l, r, row, ctx),
            Expr::Not(e) => match e.eval(row, ctx)? {
                Value::Null => Value::Null,
                v => Value::Bool(!truthy(&v)?),
            },
            Expr::Neg(e) => ops::neg(&e.eval(row, ctx)?)?,
            Expr::IsNull(e, negated) => match e.eval(row, ctx)? {
                // A row IS NULL when every field is, IS NOT NULL when none is.
                Value::Record(r) => Value::Bool(r.values.iter().all(|v| v.is_null() != *negated)),
                v => Value::Bool(v.is_null() != *negated),
            },
            Expr::IsBool(e, want, negated) => {
                let v = e.eval(row, ctx)?;
                let is = !v.is_null() && truthy(&v)? == *want;
                Value::Bool(is != *negated)
            }
            Expr::Cast(e, ty) => cast::cast_in(e.eval(row, ctx)?, ty, ctx.zone())?,
            Expr::Func(f, args) => {
                // (Only the last argument can be `VARIADIC array`.)
                if let Some(Expr::Func(Func::Spread, _)) = args.last() {
                    return spread_call(*f, args, row, ctx);
                }
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(a.eval(row, ctx)?);
                }
                f.call(vals, ctx)?
            }
            Expr::Case(operand, whens, else_) => return eval_case(operand, whens, else_, row, ctx),
            Expr::InList(e, list, negated) => return eval_in(e, list, *negated, row, ctx),
            Expr::Like(e, pat, negated, ci) => {
                let (v, p) = (e.eval(row, ctx)?, pat.eval(row, ctx)?);
                match (v, p) {
                    (Value::Text(s), Value::Text(p)) => Value::Bool(like(&s, &p, *ci)? != *negated),
                    (Value::Null, _) | (_, Value::Null) => Value::Null,
                    _ => bail!(UndefinedFunction, "operator does not exist for LIKE"),
                }
            }
            Expr::Regex(e, pat, negated, ci) => {
                let (v, p) = (e.eval(row, ctx)?, pat.eval(row, ctx)?);
                match (v, p) {
                    (Value::Text(s), Value::Text(p)) => {
                        Value::Bool(crate::func::regex::is_match(&s, &p, *ci)? != *negated)
                    }
                    (Value::Null, _) | (_, Value::Null) => Value::Null,
                    _ => bail!(UndefinedFunction, "operator does not exist for ~"),
                }
            }
            Expr::Row(ty, fields) => {
                let mut vals = Vec::with_capacity(fields.len());
                for f in fields {
                    vals.push(f.eval(row, ctx)?);
                }
                sqltypes::RecordValue::value(ty.clone(), vals)
            }
            Expr::Field(e, i) => match e.eval(row, ctx)? {
                Value::Record(mut r) if *i < r.values.len() => r.values.swap_remove(*i),
                _ => Value::Null,
            },
            Expr::Domain(e, d) => {
                let v = e.eval(row, ctx)?;
                d.check(&v)?;
                v
            }
        })
    }

    /// Evaluates a predicate: true only if the result is TRUE (not NULL).
    pub fn eval_pred(&self, row: &[Value], ctx: &EvalContext) -> Result<bool> {
        match self.eval(row, ctx)? {
            Value::Null => Ok(false),
            v => truthy(&v),
        }
    }

    /// True if the expression reads no column (constant for one execution).
    pub fn is_row_independent(&self) -> bool {
        let mut indep = true;
        self.walk(&mut |e| {
            if matches!(e, Expr::Column(_) | Expr::Outer(_)) {
                indep = false;
            }
        });
        indep
    }

    /// True if the expression reads no column of its input row (it may
    /// read the enclosing query's row).
    pub fn reads_no_column(&self) -> bool {
        let mut none = true;
        self.walk(&mut |e| none &= !matches!(e, Expr::Column(_)));
        none
    }

    /// Calls `f` on every node, parents first.
    pub fn walk(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Const(_)
            | Expr::Param(_)
            | Expr::Column(_)
            | Expr::Outer(_)
            | Expr::Subquery(_) => {}
            Expr::InSubquery(e, _, _) => e.walk(f),
            Expr::Binary(_, l, r) | Expr::Like(l, r, _, _) | Expr::Regex(l, r, _, _) => {
                l.walk(f);
                r.walk(f);
            }
            Expr::Not(e) | Expr::Neg(e) | Expr::IsNull(e, _) | Expr::IsBool(e, _, _) => e.walk(f),
            Expr::Cast(e, _) | Expr::Field(e, _) | Expr::Domain(e, _) => e.walk(f),
            Expr::Func(_, args) | Expr::Row(_, args) => args.iter().for_each(|a| a.walk(f)),
            Expr::Case(op, whens, else_) => {
                if let Some(op) = op {
                    op.walk(f);
                }
                for (w, t) in whens {
                    w.walk(f);
                    t.walk(f);
                }
                if let Some(e) = else_ {
                    e.walk(f);
                }
            }
            Expr::InList(e, list, _) => {
                e.walk(f);
                list.iter().for_each(|a| a.walk(f));
            }
        }
    }

    /// Rewrites column references through `map` (old position -> new expr).
    pub fn remap_columns(&self, map: &impl Fn(usize) -> Expr) -> Expr {
        let re = |e: &Expr| Box::new(e.remap_columns(map));
        match self {
            Expr::Column(i) => map(*i),
            Expr::Const(_) | Expr::Param(_) | Expr::Outer(_) | Expr::Subquery(_) => self.clone(),
            Expr::InSubquery(e, i, n) => Expr::InSubquery(re(e), *i, *n),
            Expr::Binary(op, l, r) => Expr::Binary(*op, re(l), re(r)),
            Expr::Like(l, r, n, ci) => Expr::Like(re(l), re(r), *n, *ci),
            Expr::Regex(l, r, n, ci) => Expr::Regex(re(l), re(r), *n, *ci),
            Expr::Not(e) => Expr::Not(re(e)),
            Expr::Neg(e) => Expr::Neg(re(e)),
            Expr::IsNull(e, n) => Expr::IsNull(re(e), *n),
            Expr::IsBool(e, w, n) => Expr::IsBool(re(e), *w, *n),
            Expr::Cast(e, t) => Expr::Cast(re(e), t.clone()),
            Expr::Func(f, args) => {
                Expr::Func(*f, args.iter().map(|a| a.remap_columns(map)).collect())
            }
            Expr::Row(t, args) => {
                Expr::Row(t.clone(), args.iter().map(|a| a.remap_columns(map)).collect())
            }
            Expr::Field(e, i) => Expr::Field(re(e), *i),
            Expr::Domain(e, d) => Expr::Domain(re(e), d.clone()),
            Expr::Case(op, whens, else_) => Expr::Case(
                op.as_ref().map(|o| re(o)),
                whens.iter().map(|(w, t)| (w.remap_columns(map), t.remap_columns(map))).collect(),
                else_.as_ref().map(|e| re(e)),
            ),
            Expr::InList(e, list, n) => {
                Expr::InList(re(e), list.iter().map(|a| a.remap_columns(map)).collect(), *n)
            }
        }
    }
}

/// Splits a predicate into its AND-ed parts.
pub fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary(BinOp::And, l, r) => {
            conjuncts(*l, out);
            conjuncts(*r, out);
        }
        other => out.push(other),
    }
}

/// `v [NOT] IN (list)` with SQL's NULL rules: NULL if nothing matched but a
/// NULL was involved (in `v` or the list), false/true otherwise.
pub fn in_list(v: &Value, list: &[Value], negated: bool) -> Result<Value> {
    if v.is_null() {
        return Ok(if list.is_empty() { Value::Bool(negated) } else { Value::Null });
    }
    let mut saw_null = false;
    for item in list {
        let equal = match (v, item) {
            (Value::Record(a), Value::Record(b)) => rows_equal(&a.values, &b.values)?,
            _ => ops::compare(v, item)?.map(|o| o == std::cmp::Ordering::Equal),
        };
        match equal {
            Some(true) => return Ok(Value::Bool(!negated)),
            None => saw_null = true,
            Some(false) => {}
        }
    }
    Ok(if saw_null { Value::Null } else { Value::Bool(negated) })
}

/// Row equality as SQL compares row constructors: false if a pair of
/// fields differs, else unknown (None) if a field is NULL, else true.
fn rows_equal(a: &[Value], b: &[Value]) -> Result<Option<bool>> {
    let mut unknown = false;
    for (x, y) in a.iter().zip(b) {
        match ops::compare(x, y)? {
            None => unknown = true,
            Some(std::cmp::Ordering::Equal) => {}
            Some(_) => return Ok(Some(false)),
        }
    }
    Ok(if unknown { None } else { Some(true) })
}

/// Joins predicates with AND (None if empty).
pub fn and_all(mut parts: Vec<Expr>) -> Option<Expr> {
    let first = parts.pop()?;
    Some(
        parts
            .into_iter()
            .rev()
            .fold(first, |acc, p| Expr::Binary(BinOp::And, Box::new(p), Box::new(acc))),
    )
}

fn truthy(v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => {
            bail!(DatatypeMismatch, "argument must be type boolean, not {:?}", other.data_type())
        }
    }
}

fn eval_binary(op: BinOp, l: &Expr, r: &Expr, row: &[Value], ctx: &EvalContext) -> Result<Value> {
    // AND/OR short-circuit with three-valued logic.
    if matches!(op, BinOp::And | BinOp::Or) {
        let lv = l.eval(row, ctx)?;
        let short = op == BinOp::Or;
        if !lv.is_null() && truthy(&lv)? == short {
            return Ok(Value::Bool(short));
        }
        let rv = r.eval(row, ctx)?;
        if !rv.is_null() && truthy(&rv)? == short {
            return Ok(Value::Bool(short));
        }
        if lv.is_null() || rv.is_null() {
            return Ok(Value::Null);
        }
        return Ok(Value::Bool(!short));
    }
    let lv = l.eval(row, ctx)?;
    let rv = r.eval(row, ctx)?;
    if lv.is_null() || rv.is_null() {
        return Ok(Value::Null);
    }
    // timestamptz ± interval counts days and months on the session's clock.
    match (op, &lv, &rv) {
        (BinOp::Add, Value::TimestampTz(t), Value::Interval(iv))
        | (BinOp::Add, Value::Interval(iv), Value::TimestampTz(t)) => {
            let t = sqltypes::interval::timestamptz_add(*t, iv, ctx.zone())?;
            return Ok(Value::TimestampTz(t));
        }
        (BinOp::Sub, Value::TimestampTz(t), Value::Interval(iv)) => {
            let t = sqltypes::interval::timestamptz_add(*t, &iv.neg()?, ctx.zone())?;
            return Ok(Value::TimestampTz(t));
        }
        _ => {}
    }
    Ok(match op {
        BinOp::Add => ops::add(&lv, &rv)?,
        BinOp::Sub => ops::sub(&lv, &rv)?,
        BinOp::Mul => ops::mul(&lv, &rv)?,
        BinOp::Div => ops::div(&lv, &rv)?,
        BinOp::Mod => ops::rem(&lv, &rv)?,
        BinOp::Concat => ops::concat(&lv, &rv)?,
        BinOp::Bit(b) => ops::bit(b, &lv, &rv)?,
        cmp => {
            let Some(ord) = ops::compare(&lv, &rv)? else { return Ok(Value::Null) };
            Value::Bool(cmp.holds(ord))
        }
    })
}

fn eval_case(
    operand: &Option<Box<Expr>>,
    whens: &[(Expr, Expr)],
    else_: &Option<Box<Expr>>,
    row: &[Value],
    ctx: &EvalContext,
) -> Result<Value> {
    let op = match operand {
        Some(o) => Some(o.eval(row, ctx)?),
        None => None,
    };
    for (w, then) in whens {
        let hit = match &op {
            Some(v) => {
                let wv = w.eval(row, ctx)?;
                matches!(ops::compare(v, &wv)?, Some(std::cmp::Ordering::Equal))
            }
            None => w.eval_pred(row, ctx)?,
        };
        if hit {
            return then.eval(row, ctx);
        }
    }
    match else_ {
        Some(e) => e.eval(row, ctx),
        None => Ok(Value::Null),
    }
}

fn eval_in(
    e: &Expr,
    list: &[Expr],
    negated: bool,
    row: &[Value],
    ctx: &EvalContext,
) -> Result<Value> {
    let v = e.eval(row, ctx)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let mut saw_null = false;
    for item in list {
        let iv = item.eval(row, ctx)?;
        match ops::compare(&v, &iv)? {
            Some(std::cmp::Ordering::Equal) => return Ok(Value::Bool(!negated)),
            None => saw_null = true,
            _ => {}
        }
    }
    Ok(if saw_null { Value::Null } else { Value::Bool(negated) })
}

/// SQL LIKE matching (`%` any run, `_` one character, `\` makes the next
/// character literal). A pattern ending in a lone backslash is an error
/// once the match reaches it, as in PostgreSQL.
pub fn like(s: &str, pattern: &str, case_insensitive: bool) -> Result<bool> {
    let (s, p): (Vec<char>, Vec<char>) = if case_insensitive {
        (s.to_lowercase().chars().collect(), pattern.to_lowercase().chars().collect())
    } else {
        (s.chars().collect(), pattern.chars().collect())
    };
    like_at(&s, &p)
}

fn like_at(s: &[char], p: &[char]) -> Result<bool> {
    // Iterative matcher with backtracking on the last '%'.
    let (mut si, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                '%' => {
                    star = Some((pi, si));
                    pi += 1;
                    continue;
                }
                '_' => {
                    si += 1;
                    pi += 1;
                    continue;
                }
                '\\' => {
                    let Some(&lit) = p.get(pi + 1) else {
                        bail!(
                            InvalidEscapeSequence,
                            "LIKE pattern must not end with escape character"
                        );
                    };
                    if lit == s[si] {
                        si += 1;
                        pi += 2;
                        continue;
                    }
                }
                c if c == s[si] => {
                    si += 1;
                    pi += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return Ok(false),
        }
    }
    Ok(p[pi..].iter().all(|&c| c == '%'))
}

/// A variadic built-in call whose last argument is `VARIADIC array`
/// (`Func::Spread`'s): the array's elements are its last arguments. A
/// NULL array makes the call NULL, except that format() reads it as an
/// empty one.
fn spread_call(f: Func, args: &[Expr], row: &[Value], ctx: &EvalContext) -> Result<Value> {
    let Some((Expr::Func(_, whole), fixed)) = args.split_last() else {
        bail!(InternalError, "a VARIADIC call without its array");
    };
    let mut vals = Vec::with_capacity(args.len());
    for a in fixed {
        vals.push(a.eval(row, ctx)?);
    }
    let array = match whole.first() {
        Some(e) => e.eval(row, ctx)?,
        None => Value::Null,
    };
    match array {
        Value::Array(a) => vals.extend(a.items),
        Value::Null if f == Func::Str(crate::func::strings::StringFunc::Format) => {}
        Value::Null => return Ok(Value::Null),
        _ => bail!(DatatypeMismatch, "VARIADIC argument must be an array"),
    }
    f.call(vals, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        let m = |s: &str, p: &str, ci: bool| like(s, p, ci).expect("a valid pattern");
        assert!(m("hello", "h%o", false));
        assert!(m("hello", "_ello", false));
        assert!(!m("hello", "h_o", false));
        assert!(m("HeLLo", "hello", true));
        assert!(m("a%b", "a\\%b", false));
        assert!(!m("axb", "a\\%b", false));
        assert!(m("", "%", false));
        assert!(m("abcabc", "%abc", false));
        // A trailing escape is an error only where the match reaches it.
        assert!(like("abc", "ab\\", false).is_err());
        assert!(!m("xy", "ab\\", false));
    }

    #[test]
    fn three_valued_and_or() {
        let ctx = EvalContext::default();
        let t = Expr::Const(Value::Bool(true));
        let f = Expr::Const(Value::Bool(false));
        let n = Expr::Const(Value::Null);
        let and =
            |a: &Expr, b: &Expr| Expr::Binary(BinOp::And, Box::new(a.clone()), Box::new(b.clone()));
        let or =
            |a: &Expr, b: &Expr| Expr::Binary(BinOp::Or, Box::new(a.clone()), Box::new(b.clone()));
        assert_eq!(and(&n, &f).eval(&[], &ctx).ok(), Some(Value::Bool(false)));
        assert_eq!(and(&n, &t).eval(&[], &ctx).ok(), Some(Value::Null));
        assert_eq!(or(&n, &t).eval(&[], &ctx).ok(), Some(Value::Bool(true)));
        assert_eq!(or(&n, &f).eval(&[], &ctx).ok(), Some(Value::Null));
    }
}
