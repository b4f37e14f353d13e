//! Window functions: `f(args) OVER (PARTITION BY .. ORDER BY .. [frame])`.
//!
//! BINDING. While a query's select list and ORDER BY are bound, each window
//! call is collected in [`Binder::windows`] and replaced by a placeholder
//! column (`WINDOW_BASE + k`); once the level is bound, `select.rs` moves the
//! placeholders to their real positions behind the input columns and puts a
//! [`Plan::Window`](crate::plan::Plan::Window) under the projection. Window
//! calls may not nest, and (for now) a query with GROUP BY or aggregates
//! cannot use them: their arguments would have to read the grouped rows.
//!
//! EVALUATION. For each call the input rows are sorted by (partition,
//! order); within a partition, rows that compare equal on the ORDER BY are
//! *peers*. Ranking functions read positions and peer groups; value and
//! aggregate functions read the call's *frame*, by default PostgreSQL's
//! `RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW` (the partition up to
//! the current row's last peer; all of it without ORDER BY). A frame counts
//! rows (ROWS), peer groups (GROUPS) or, for RANGE, a distance in the one
//! ORDER BY key (a number, or an interval for dates and times), found by
//! binary search in the sorted partition. Aggregates over
//! frames that start at the partition's first row are computed incrementally;
//! other frames are recomputed per row. The result is appended to each row
//! in input order, so callers see one more column per call.

use std::cmp::Ordering;

use sqlparser::ast;
use sqltypes::{DataType, Value};

use crate::bail;
use crate::bind::{function_args, is_aggregate, Binder, Scope};
use crate::error::Result;
use crate::exec::{agg_final, agg_init, agg_input, agg_step, compare_keys, group_key, Row};
use crate::expr::{EvalContext, Expr};
use crate::plan::{AggCall, SortKey};

/// Placeholder columns for window results start here (see the module doc).
pub const WINDOW_BASE: usize = usize::MAX / 2;

/// What a window call computes.
#[derive(Debug, Clone, PartialEq)]
pub enum WinFunc {
    /// row_number(): 1, 2, 3, ... within the partition.
    RowNumber,
    /// rank(): position of the first peer (gaps after ties).
    Rank,
    /// dense_rank(): number of the peer group (no gaps).
    DenseRank,
    /// percent_rank(): (rank - 1) / (rows - 1).
    PercentRank,
    /// cume_dist(): (rows up to the last peer) / rows.
    CumeDist,
    /// ntile(n): bucket 1..n of (nearly) equal size.
    Ntile,
    /// lag(x [, offset [, default]]): x of the row `offset` before.
    Lag,
    /// lead(x [, offset [, default]]): x of the row `offset` after.
    Lead,
    /// first_value(x) over the frame.
    FirstValue,
    /// last_value(x) over the frame.
    LastValue,
    /// nth_value(x, n) over the frame.
    NthValue,
    /// An aggregate over the frame.
    Agg(AggCall),
}

/// One edge of a frame.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    /// The partition's first row.
    UnboundedPreceding,
    /// So far before the current row.
    Preceding(Offset),
    /// The current row (ROWS) or its first/last peer (RANGE, GROUPS).
    CurrentRow,
    /// So far after the current row.
    Following(Offset),
    /// The partition's last row.
    UnboundedFollowing,
}

/// How far a frame edge is from the current row: a number of rows (ROWS)
/// or peer groups (GROUPS), or a distance in the ORDER BY key (RANGE).
#[derive(Debug, Clone, PartialEq)]
pub enum Offset {
    /// Rows or peer groups.
    Count(usize),
    /// Added to or taken from the key (a number, or an interval for dates
    /// and times).
    Value(Value),
}

/// What a frame's offsets count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    /// Rows.
    Rows,
    /// Key values (the current row's peers for CURRENT ROW).
    Range,
    /// Peer groups.
    Groups,
}

/// A window frame: which rows of the partition an aggregate or value
/// function sees for the current row.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// What the offsets count.
    pub units: FrameUnits,
    /// Where the frame starts.
    pub start: FrameBound,
    /// Where the frame ends (inclusive).
    pub end: FrameBound,
}

/// Resolves a WINDOW clause, checked as PostgreSQL checks it even for
/// windows no call uses: each name once, each copied window defined before
/// the one copying it. Each window comes out with its copied parts filled
/// in, by name (one pass, so a long clause costs no recursion).
pub fn resolve_window_clause(
    defs: &[ast::NamedWindowDefinition],
) -> Result<Vec<(String, ast::WindowSpec)>> {
    let mut done: Vec<(String, ast::WindowSpec)> = Vec::with_capacity(defs.len());
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    for def in defs {
        let name = crate::bind::ident(&def.0);
        if index.contains_key(&name) {
            bail!(WindowingError, "window \"{name}\" is already defined");
        }
        let spec = match &def.1 {
            ast::NamedWindowExpr::NamedWindow(other) => {
                bail!(SyntaxError, "syntax error at or near \"{other}\"")
            }
            ast::NamedWindowExpr::WindowSpec(spec) => match &spec.window_name {
                None => spec.clone(),
                Some(base) => copy_window(base, lookup(&done, &index, base)?, spec, false)?,
            },
        };
        index.insert(name.clone(), done.len());
        done.push((name, spec));
    }
    Ok(done)
}

/// Window `name` among the resolved windows.
fn lookup(
    done: &[(String, ast::WindowSpec)],
    index: &std::collections::HashMap<String, usize>,
    name: &ast::Ident,
) -> Result<ast::WindowSpec> {
    let key = crate::bind::ident(name);
    match index.get(&key) {
        Some(&i) => Ok(done[i].1.clone()),
        None => bail!(UndefinedObject, "window \"{key}\" does not exist"),
    }
}

/// `spec` built on window `base` (`(w ORDER BY x ROWS ...)`): it keeps the
/// base's PARTITION BY and adds an ORDER BY or a frame the base lacks.
/// `in_over`: the copy is an OVER clause's (PostgreSQL's hint then
/// suggests `OVER w`).
fn copy_window(
    name: &ast::Ident,
    base: ast::WindowSpec,
    spec: &ast::WindowSpec,
    in_over: bool,
) -> Result<ast::WindowSpec> {
    let name = crate::bind::ident(name);
    if !spec.partition_by.is_empty() {
        bail!(WindowingError, "cannot override PARTITION BY clause of window \"{name}\"");
    }
    if !spec.order_by.is_empty() && !base.order_by.is_empty() {
        bail!(WindowingError, "cannot override ORDER BY clause of window \"{name}\"");
    }
    if base.window_frame.is_some() {
        let e = crate::err!(
            WindowingError,
            "cannot copy window \"{name}\" because it has a frame clause"
        );
        let bare = in_over && spec.order_by.is_empty() && spec.window_frame.is_none();
        return Err(if bare {
            e.with_hint("Omit the parentheses in this OVER clause.")
        } else {
            e
        });
    }
    let order_by = if spec.order_by.is_empty() { base.order_by } else { spec.order_by.clone() };
    Ok(ast::WindowSpec {
        window_name: None,
        partition_by: base.partition_by,
        order_by,
        window_frame: spec.window_frame.clone(),
    })
}

impl Frame {
    /// PostgreSQL's default: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW.
    pub const DEFAULT: Frame = Frame {
        units: FrameUnits::Range,
        start: FrameBound::UnboundedPreceding,
        end: FrameBound::CurrentRow,
    };
}

/// A bound window function call.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCall {
    /// The function.
    pub func: WinFunc,
    /// Arguments over the input row (aggregates keep theirs in the AggCall).
    pub args: Vec<Expr>,
    /// PARTITION BY expressions.
    pub partition: Vec<Expr>,
    /// ORDER BY keys within a partition.
    pub order: Vec<SortKey>,
    /// The frame (value and aggregate functions).
    pub frame: Frame,
    /// Result type.
    pub ty: DataType,
}

impl Binder<'_> {
    /// Binds `f OVER (...)` where window functions are allowed; returns the
    /// placeholder column of its result. In a grouped query (`agg` given)
    /// its arguments, PARTITION BY and ORDER BY read the grouped rows.
    pub(crate) fn window_function(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &Scope,
        agg: &mut Option<&mut crate::bind::AggState>,
    ) -> Result<(Expr, DataType)> {
        if self.in_window {
            bail!(WindowingError, "window function calls cannot be nested");
        }
        let Some(mark) = self.win else {
            bail!(WindowingError, "window functions are not allowed here");
        };
        self.in_window = true;
        let call = self.window_call(f, name, scope, agg);
        self.in_window = false;
        let call = call?;
        let ty = call.ty.clone();
        self.windows.push(call);
        Ok((Expr::Column(WINDOW_BASE + self.windows.len() - 1 - mark), ty))
    }

    fn window_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &Scope,
        agg: &mut Option<&mut crate::bind::AggState>,
    ) -> Result<WindowCall> {
        let Some(over) = &f.over else {
            bail!(WindowingError, "window function {name} requires an OVER clause");
        };
        let spec = &self.window_spec(over)?;
        let partition = spec
            .partition_by
            .iter()
            .map(|e| self.expr_in(e, scope, agg).map(|(x, _)| x))
            .collect::<Result<Vec<_>>>()?;
        let mut order = Vec::with_capacity(spec.order_by.len());
        let mut key_type = None;
        for o in &spec.order_by {
            let (expr, t) = self.expr_in(&o.expr, scope, agg)?;
            key_type.get_or_insert(t);
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            order.push(SortKey { expr, desc, nulls_first: o.options.nulls_first.unwrap_or(desc) });
        }
        let frame = match &spec.window_frame {
            Some(fr) => {
                let keys = (order.len(), key_type.unwrap_or(DataType::Unknown));
                self.frame(fr, keys, scope)?
            }
            None => Frame::DEFAULT,
        };
        let (func, args, ty) = if is_aggregate(name) {
            let call = self.agg_call(f, name, scope, agg)?;
            if call.distinct {
                bail!(FeatureNotSupported, "DISTINCT is not implemented for window functions");
            }
            let ty = call.ty.clone();
            (WinFunc::Agg(call), vec![], ty)
        } else {
            self.ranking_or_value(f, name, scope, agg)?
        };
        Ok(WindowCall { func, args, partition, order, frame, ty })
    }

    /// The window an OVER clause describes, with the parts of the named
    /// window it refers to (`OVER w`, `OVER (w ORDER BY x)`) filled in.
    fn window_spec(&self, over: &ast::WindowType) -> Result<ast::WindowSpec> {
        let named = |name: &ast::Ident| {
            let key = crate::bind::ident(name);
            match self.named_windows.iter().find(|(n, _)| *n == key) {
                Some((_, spec)) => Ok(spec.clone()),
                None => bail!(UndefinedObject, "window \"{key}\" does not exist"),
            }
        };
        match over {
            ast::WindowType::NamedWindow(name) => named(name),
            ast::WindowType::WindowSpec(spec) => match &spec.window_name {
                None => Ok(spec.clone()),
                Some(base) => copy_window(base, named(base)?, spec, true),
            },
        }
    }

    /// Binds the non-aggregate window functions' arguments and result type.
    fn ranking_or_value(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &Scope,
        agg: &mut Option<&mut crate::bind::AggState>,
    ) -> Result<(WinFunc, Vec<Expr>, DataType)> {
        if f.filter.is_some() {
            bail!(
                FeatureNotSupported,
                "FILTER is not implemented for non-aggregate window functions"
            );
        }
        let mut bound = Vec::new();
        for a in function_args(f)? {
            let Some(a) = a else { bail!(SyntaxError, "syntax error at or near \"*\"") };
            bound.push(self.expr_in(a, scope, agg)?);
        }
        let n = bound.len();
        let (func, ty) = match (name, n) {
            ("row_number", 0) => (WinFunc::RowNumber, DataType::Int8),
            ("rank", 0) => (WinFunc::Rank, DataType::Int8),
            ("dense_rank", 0) => (WinFunc::DenseRank, DataType::Int8),
            ("percent_rank", 0) => (WinFunc::PercentRank, DataType::Float8),
            ("cume_dist", 0) => (WinFunc::CumeDist, DataType::Float8),
            ("ntile", 1) => (WinFunc::Ntile, DataType::Int4),
            ("lag", 1..=3) => (WinFunc::Lag, bound[0].1.clone()),
            ("lead", 1..=3) => (WinFunc::Lead, bound[0].1.clone()),
            ("first_value", 1) => (WinFunc::FirstValue, bound[0].1.clone()),
            ("last_value", 1) => (WinFunc::LastValue, bound[0].1.clone()),
            ("nth_value", 2) => (WinFunc::NthValue, bound[0].1.clone()),
            _ => {
                let types: Vec<String> = bound.iter().map(|(_, t)| t.to_string()).collect();
                bail!(UndefinedFunction, "function {name}({}) does not exist", types.join(", "))
            }
        };
        let mut ty = if ty == DataType::Unknown { DataType::Text } else { ty };
        // lag/lead's default and value share a type (anycompatible): a
        // typed default may widen it, and a different modifier drops it.
        if let (WinFunc::Lag | WinFunc::Lead, Some((_, dt))) = (&func, bound.get(2)) {
            if *dt != DataType::Unknown && *dt != ty {
                ty = match sqltypes::cast::common_type(&ty, dt) {
                    Some(c) => crate::deparse::unmodified(&c),
                    None => {
                        let types: Vec<DataType> = bound.iter().map(|(_, t)| t.clone()).collect();
                        return Err(crate::func::no_such_function(name, &types));
                    }
                };
            }
        }
        let mut args = Vec::with_capacity(n);
        for (i, (x, t)) in bound.into_iter().enumerate() {
            let target = match (&func, i) {
                (WinFunc::Ntile, _) => DataType::Int4,
                (_, 0) | (WinFunc::Lag | WinFunc::Lead, 2) => ty.clone(),
                _ => DataType::Int4,
            };
            args.push(self.coerce(x, &t, &target)?);
        }
        Ok((func, args, ty))
    }

    /// A frame clause; `keys` are the window's ORDER BY key count and the
    /// first key's type, which a RANGE offset is a distance in.
    fn frame(
        &mut self,
        fr: &ast::WindowFrame,
        keys: (usize, DataType),
        scope: &Scope,
    ) -> Result<Frame> {
        let units = match fr.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        let start = self.frame_bound(&fr.start_bound, units, &keys, scope, "starting")?;
        let end = match &fr.end_bound {
            Some(b) => self.frame_bound(b, units, &keys, scope, "ending")?,
            None => FrameBound::CurrentRow,
        };
        if start == FrameBound::UnboundedFollowing {
            bail!(WindowingError, "frame start cannot be UNBOUNDED FOLLOWING");
        }
        if end == FrameBound::UnboundedPreceding {
            bail!(WindowingError, "frame end cannot be UNBOUNDED PRECEDING");
        }
        if units == FrameUnits::Groups && keys.0 == 0 {
            bail!(WindowingError, "GROUPS mode requires an ORDER BY clause");
        }
        Ok(Frame { units, start, end })
    }

    fn frame_bound(
        &mut self,
        b: &ast::WindowFrameBound,
        units: FrameUnits,
        (keys, key_type): &(usize, DataType),
        scope: &Scope,
        edge: &str,
    ) -> Result<FrameBound> {
        use ast::WindowFrameBound as B;
        let offset = |this: &mut Self, e: &ast::Expr| -> Result<Offset> {
            let (x, t) = this.expr_in(e, scope, &mut None)?;
            let negative = || {
                crate::err!(
                    InvalidPrecedingOrFollowingSize,
                    "frame {edge} offset must not be negative"
                )
            };
            if units != FrameUnits::Range {
                let x = this.coerce(x, &t, &DataType::Int8)?;
                return match x {
                    Expr::Const(Value::Int8(n)) if n >= 0 => Ok(Offset::Count(n as usize)),
                    Expr::Const(Value::Int8(_)) => Err(negative()),
                    Expr::Const(Value::Null) => {
                        bail!(NullValueNotAllowed, "frame {edge} offset must not be null")
                    }
                    _ => bail!(FeatureNotSupported, "frame offsets must be constants"),
                };
            }
            if *keys != 1 {
                bail!(
                    WindowingError,
                    "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"
                );
            }
            let distance = match key_type {
                DataType::Int2 | DataType::Int4 | DataType::Int8 => DataType::Int8,
                DataType::Numeric(_) => DataType::Numeric(None),
                DataType::Float4 | DataType::Float8 => DataType::Float8,
                DataType::Date
                | DataType::Timestamp
                | DataType::TimestampTz
                | DataType::Time
                | DataType::TimeTz
                | DataType::Interval => DataType::Interval,
                other => bail!(
                    FeatureNotSupported,
                    "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {other}"
                ),
            };
            let x = this.coerce(x, &t, &distance)?;
            let Expr::Const(v) = x else {
                bail!(FeatureNotSupported, "frame offsets must be constants");
            };
            if v.is_null() {
                bail!(NullValueNotAllowed, "frame {edge} offset must not be null");
            }
            let zero = match distance {
                DataType::Interval => Value::Interval(Default::default()),
                other => sqltypes::cast::cast(Value::Int4(0), &other)?,
            };
            if sqltypes::ops::compare(&v, &zero)? == Some(Ordering::Less) {
                bail!(
                    InvalidPrecedingOrFollowingSize,
                    "invalid preceding or following size in window function"
                );
            }
            Ok(Offset::Value(v))
        };
        Ok(match b {
            B::CurrentRow => FrameBound::CurrentRow,
            B::Preceding(None) => FrameBound::UnboundedPreceding,
            B::Following(None) => FrameBound::UnboundedFollowing,
            B::Preceding(Some(e)) => FrameBound::Preceding(offset(self, e)?),
            B::Following(Some(e)) => FrameBound::Following(offset(self, e)?),
        })
    }
}

/// Appends one column per window call to every row (input order kept).
pub fn window(mut rows: Vec<Row>, calls: &[WindowCall], ctx: &EvalContext) -> Result<Vec<Row>> {
    for call in calls {
        let values = evaluate(&rows, call, ctx)?;
        for (r, v) in rows.iter_mut().zip(values) {
            r.push(v);
        }
    }
    Ok(rows)
}

/// One row's place: partition key, ORDER BY values, index in the input.
type Placed = (Vec<u8>, Vec<Value>, usize);

/// Computes `call` for every row; results are in input order.
fn evaluate(rows: &[Row], call: &WindowCall, ctx: &EvalContext) -> Result<Vec<Value>> {
    let mut placed: Vec<Placed> = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        ctx.interrupts.tick(i)?;
        let part = call.partition.iter().map(|e| e.eval(r, ctx)).collect::<Result<Vec<_>>>()?;
        let ord = call.order.iter().map(|k| k.expr.eval(r, ctx)).collect::<Result<Vec<_>>>()?;
        placed.push((group_key(&part), ord, i));
    }
    placed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| compare_keys(&call.order, &a.1, &b.1)));
    let mut out = vec![Value::Null; rows.len()];
    let mut start = 0;
    while start < placed.len() {
        let end = start + placed[start..].iter().take_while(|p| p.0 == placed[start].0).count();
        Partition::new(&placed[start..end], rows, call, ctx).fill(&mut out)?;
        start = end;
    }
    Ok(out)
}

/// One partition of one window call, in window order.
struct Partition<'a> {
    rows: Vec<&'a Row>,
    /// Input index of each row (where its result goes).
    index: Vec<usize>,
    /// Each row's peer group.
    group_of: Vec<usize>,
    /// Each peer group's first row and one past its last.
    groups: Vec<(usize, usize)>,
    /// Each row's first ORDER BY key (RANGE offsets), a date as the
    /// timestamp it compares as.
    keys: Vec<Value>,
    /// Where the non-NULL `keys` are (they sit together at one end).
    non_null: (usize, usize),
    call: &'a WindowCall,
    ctx: &'a EvalContext,
}

impl<'a> Partition<'a> {
    fn new(placed: &[Placed], all: &'a [Row], call: &'a WindowCall, ctx: &'a EvalContext) -> Self {
        let m = placed.len();
        let (mut group_of, mut groups) = (vec![0; m], Vec::new());
        let mut g = 0;
        while g < m {
            let same =
                |p: &Placed| compare_keys(&call.order, &p.1, &placed[g].1) == Ordering::Equal;
            let h = g + placed[g..].iter().take_while(|p| same(p)).count();
            group_of[g..h].fill(groups.len());
            groups.push((g, h));
            g = h;
        }
        let ranged = |b: &FrameBound| {
            matches!(
                b,
                FrameBound::Preceding(Offset::Value(_)) | FrameBound::Following(Offset::Value(_))
            )
        };
        let keys: Vec<Value> = if ranged(&call.frame.start) || ranged(&call.frame.end) {
            let key = |p: &Placed| match p.1.first() {
                Some(Value::Date(d)) => sqltypes::cast::cast(Value::Date(*d), &DataType::Timestamp)
                    .unwrap_or(Value::Null),
                Some(v) => v.clone(),
                None => Value::Null,
            };
            placed.iter().map(key).collect()
        } else {
            Vec::new()
        };
        let lo = keys.iter().position(|k| !k.is_null()).unwrap_or(0);
        let non_null = (lo, lo + keys[lo..].iter().take_while(|k| !k.is_null()).count());
        Partition {
            rows: placed.iter().map(|p| &all[p.2]).collect(),
            index: placed.iter().map(|p| p.2).collect(),
            group_of,
            non_null,
            groups,
            keys,
            call,
            ctx,
        }
    }

    /// The first peer of row `p` and one past its last.
    fn peers(&self, p: usize) -> (usize, usize) {
        self.groups[self.group_of[p]]
    }

    fn fill(&self, out: &mut [Value]) -> Result<()> {
        if let WinFunc::Agg(a) = &self.call.func {
            return self.aggregate(a, out);
        }
        let m = self.rows.len();
        let mut dense = 0;
        for p in 0..m {
            self.ctx.interrupts.tick(p)?;
            let (ps, pe) = self.peers(p);
            if ps == p {
                dense += 1;
            }
            let v = match &self.call.func {
                WinFunc::RowNumber => Value::Int8(p as i64 + 1),
                WinFunc::Rank => Value::Int8(ps as i64 + 1),
                WinFunc::DenseRank => Value::Int8(dense),
                WinFunc::PercentRank if m > 1 => Value::Float8(ps as f64 / (m - 1) as f64),
                WinFunc::PercentRank => Value::Float8(0.0),
                WinFunc::CumeDist => Value::Float8(pe as f64 / m as f64),
                WinFunc::Ntile => self.ntile(p)?,
                WinFunc::Lag | WinFunc::Lead => self.shifted(p)?,
                WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => self.nth(p)?,
                WinFunc::Agg(_) => unreachable!("handled above"),
            };
            out[self.index[p]] = v;
        }
        Ok(())
    }

    fn arg(&self, i: usize, p: usize) -> Result<Value> {
        match self.call.args.get(i) {
            Some(e) => e.eval(self.rows[p], self.ctx),
            None => Ok(Value::Null),
        }
    }

    fn ntile(&self, p: usize) -> Result<Value> {
        let n = match self.arg(0, p)? {
            Value::Null => return Ok(Value::Null),
            Value::Int4(n) if n > 0 => n as usize,
            _ => bail!(
                InvalidArgumentForNtileFunction,
                "argument of ntile must be greater than zero"
            ),
        };
        let m = self.rows.len();
        let (q, r) = (m / n, m % n);
        // The first r buckets hold q + 1 rows, the rest q.
        let big = r * (q + 1);
        let bucket = if p < big { p / (q + 1) } else { r + (p - big) / q.max(1) };
        Ok(Value::Int4(bucket as i32 + 1))
    }

    fn shifted(&self, p: usize) -> Result<Value> {
        let offset = match self.call.args.len() {
            1 => 1,
            _ => match self.arg(1, p)? {
                Value::Null => return Ok(Value::Null),
                Value::Int4(n) => n as i64,
                other => bail!(DatatypeMismatch, "bad lag/lead offset {other:?}"),
            },
        };
        let offset = if self.call.func == WinFunc::Lag { -offset } else { offset };
        let target = p as i64 + offset;
        if target < 0 || target >= self.rows.len() as i64 {
            return self.arg(2, p);
        }
        self.arg(0, target as usize)
    }

    fn nth(&self, p: usize) -> Result<Value> {
        let (lo, hi) = self.frame_of(p);
        let at = match self.call.func {
            WinFunc::FirstValue => Some(lo),
            WinFunc::LastValue => hi.checked_sub(1),
            _ => match self.arg(1, p)? {
                Value::Null => return Ok(Value::Null),
                Value::Int4(n) if n > 0 => Some(lo + n as usize - 1),
                _ => bail!(
                    InvalidArgumentForNthValue,
                    "argument of nth_value must be greater than zero"
                ),
            },
        };
        match at {
            Some(i) if lo < hi && i < hi => self.arg(0, i),
            _ => Ok(Value::Null),
        }
    }

    /// The frame of row `p` as a half-open range of partition positions.
    fn frame_of(&self, p: usize) -> (usize, usize) {
        let f = &self.call.frame;
        let lo = self.edge(p, &f.start, true);
        let hi = self.edge(p, &f.end, false);
        (lo, hi.max(lo))
    }

    /// Where frame edge `b` of row `p` falls: the first row in the frame
    /// (`start`), or one past the last.
    fn edge(&self, p: usize, b: &FrameBound, start: bool) -> usize {
        let m = self.rows.len();
        let (ps, pe) = self.peers(p);
        let g = self.group_of[p];
        let units = self.call.frame.units;
        match (b, units) {
            (FrameBound::UnboundedPreceding, _) => 0,
            (FrameBound::UnboundedFollowing, _) => m,
            (FrameBound::CurrentRow, FrameUnits::Rows) => p + usize::from(!start),
            (FrameBound::CurrentRow, _) => {
                if start {
                    ps
                } else {
                    pe
                }
            }
            (FrameBound::Preceding(Offset::Count(n)), FrameUnits::Rows) => {
                (p + usize::from(!start)).saturating_sub(*n)
            }
            (FrameBound::Following(Offset::Count(n)), FrameUnits::Rows) => {
                p.saturating_add(*n).saturating_add(usize::from(!start)).min(m)
            }
            (FrameBound::Preceding(Offset::Count(n)), _) => match g.checked_sub(*n) {
                Some(h) if start => self.groups[h].0,
                Some(h) => self.groups[h].1,
                None => 0,
            },
            (FrameBound::Following(Offset::Count(n)), _) => {
                match self.groups.get(g.saturating_add(*n)) {
                    Some(&(s, e)) => {
                        if start {
                            s
                        } else {
                            e
                        }
                    }
                    None => m,
                }
            }
            (FrameBound::Preceding(Offset::Value(d)), _) => self.range_edge(p, d, true, start),
            (FrameBound::Following(Offset::Value(d)), _) => self.range_edge(p, d, false, start),
        }
    }

    /// A RANGE edge `d` before (`preceding`) or after row `p`'s key: the
    /// first row whose key is not before that value (`start`), or the first
    /// whose key is after it. A row with a NULL key has its peers (the
    /// other NULLs) as the frame; NULL keys are outside anyone else's.
    fn range_edge(&self, p: usize, d: &Value, preceding: bool, start: bool) -> usize {
        let (ps, pe) = self.peers(p);
        let key = &self.keys[p];
        if key.is_null() {
            return if start { ps } else { pe };
        }
        let desc = self.call.order.first().is_some_and(|k| k.desc);
        let (lo, hi) = self.non_null;
        // Toward the partition's start is down for ASC, up for DESC.
        let target =
            if preceding != desc { sqltypes::ops::sub(key, d) } else { sqltypes::ops::add(key, d) };
        let Ok(target) = target else {
            // Past the type's range: beyond every key on that side.
            return if preceding { lo } else { hi };
        };
        // `before(k)`: k comes before the target in window order.
        let cmp = |k: &Value| {
            sqltypes::ops::compare(k, &target).ok().flatten().unwrap_or(Ordering::Equal)
        };
        let before =
            |k: &Value| if desc { cmp(k) == Ordering::Greater } else { cmp(k) == Ordering::Less };
        let after =
            |k: &Value| if desc { cmp(k) == Ordering::Less } else { cmp(k) == Ordering::Greater };
        let keys = &self.keys[lo..hi];
        lo + if start {
            keys.partition_point(|k| before(k))
        } else {
            keys.partition_point(|k| !after(k))
        }
    }

    /// Steps row `i` into an aggregate's state (respecting FILTER).
    fn step(&self, a: &AggCall, st: &mut crate::exec::AggState, i: usize) -> Result<()> {
        match agg_input(a, self.rows[i], self.ctx)? {
            Some(input) => agg_step(a, st, input),
            None => Ok(()),
        }
    }

    fn aggregate(&self, a: &AggCall, out: &mut [Value]) -> Result<()> {
        let incremental = self.call.frame.start == FrameBound::UnboundedPreceding;
        let mut running = agg_init(a);
        let mut added = 0;
        for p in 0..self.rows.len() {
            self.ctx.interrupts.tick(p)?;
            let (lo, hi) = self.frame_of(p);
            let v = if incremental {
                // Frames that start at row 0 only ever grow.
                while added < hi {
                    self.step(a, &mut running, added)?;
                    added += 1;
                }
                agg_final(a, running.clone(), self.ctx.zone())?
            } else {
                let mut st = agg_init(a);
                for i in lo..hi {
                    self.step(a, &mut st, i)?;
                }
                agg_final(a, st, self.ctx.zone())?
            };
            out[self.index[p]] = v;
        }
        Ok(())
    }
}
