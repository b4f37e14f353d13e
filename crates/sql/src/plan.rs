//! Query plans: the tree of operators the executor runs.
//!
//! A plan is produced by the binder (`bind.rs`) from a parsed statement and a
//! catalog snapshot, then cached in the prepared statement until the catalog
//! version changes. Every node's output is a row of values whose layout is
//! fixed at plan time; expressions refer to input columns by position.
//!
//! Access paths are chosen here too: a scan whose WHERE clause pins every
//! primary-key column with `=` becomes a point lookup ([`Access::Point`]); a
//! pinned prefix of the key becomes a range scan; otherwise the whole table
//! is scanned. The filter is always re-applied, so the access path only
//! narrows what is read and never decides correctness.

use std::sync::Arc;

use sqltypes::DataType;

use crate::catalog::TableDef;
use crate::expr::Expr;

/// A result column as described to the client.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column name (`?column?` when none can be derived).
    pub name: String,
    /// Result type.
    pub ty: DataType,
    /// Source table OID, or 0.
    pub table_oid: u32,
    /// Source column number (1-based), or 0.
    pub column_id: i16,
}

impl Column {
    /// A computed column with no source table.
    pub fn computed(name: impl Into<String>, ty: DataType) -> Column {
        Column { name: name.into(), ty, table_oid: 0, column_id: 0 }
    }
}

/// How a table scan reaches its rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Access {
    /// Every row.
    Full,
    /// Exactly one primary key (values in key order, already of the key types).
    Point(Vec<Expr>),
    /// A key range: rows whose key (the primary key when `index` is None,
    /// else that secondary index) starts with the `eq` values and whose next
    /// key column lies within `lo`/`hi`.
    Range {
        /// None: the primary key; Some(i): `TableDef.indexes[i]`.
        index: Option<usize>,
        /// Values pinning the leading key columns.
        eq: Vec<Expr>,
        /// Lower bound on the next key column.
        lo: Option<KeyBound>,
        /// Upper bound on the next key column.
        hi: Option<KeyBound>,
    },
    /// `first key column IN (list)` or `= ANY(array)`: the rows whose key
    /// (primary when `index` is None) starts with one of the values.
    In {
        /// None: the primary key; Some(i): `TableDef.indexes[i]`.
        index: Option<usize>,
        /// The values (row-independent), or with `array` one array of them.
        values: Vec<Expr>,
        /// `values` is one array expression (`= ANY`).
        array: bool,
    },
    /// `WHERE CURRENT OF cursor`: the row the cursor (named by the
    /// expression's value) is on.
    Current(Expr),
    /// No row: a partition whose bound the filter excludes.
    Nothing,
}

/// One end of a key range.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyBound {
    /// The bound's value (row-independent).
    pub value: Expr,
    /// True for `<=`/`>=`.
    pub inclusive: bool,
}

/// A scan of one table.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    /// The table (as of planning).
    pub table: Arc<TableDef>,
    /// How rows are reached.
    pub access: Access,
    /// Predicate over the table's columns; rows failing it are skipped.
    pub filter: Option<Expr>,
    /// Each row also carries its storage key, as a trailing bytea column
    /// (for FOR UPDATE; see rowlock.rs).
    pub keyed: bool,
    /// The order the rows must come in: set when an ORDER BY is served by
    /// the access path's key order instead of a sort (select/order.rs).
    pub order: KeyOrder,
    /// With `order`, for an index range whose first ordered column may be
    /// NULL: its NULL entries are read after the others forwards and before
    /// them backwards (`ASC NULLS LAST`, `DESC NULLS FIRST`), where keys
    /// order NULL below every value.
    pub nulls_moved: bool,
    /// Stop after this many rows pass the filter (a LIMIT pushed down).
    pub cap: Option<RowCap>,
}

impl Scan {
    /// A scan of every row of `table`, in no particular order.
    pub fn full(table: Arc<TableDef>, keyed: bool) -> Scan {
        Scan {
            table,
            access: Access::Full,
            filter: None,
            keyed,
            order: KeyOrder::Any,
            nulls_moved: false,
            cap: None,
        }
    }
}

/// The order a [`Scan`] returns its rows in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyOrder {
    /// Whatever order the access path reads in (no one depends on it).
    #[default]
    Any,
    /// Ascending key order (of the primary key or the index read).
    Ascending,
    /// Descending key order.
    Descending,
}

/// A LIMIT pushed into a scan: the scan may stop once `limit` plus
/// `offset` rows passed its filter, because nothing above it drops rows
/// before the LIMIT counts them.
#[derive(Debug, Clone, PartialEq)]
pub struct RowCap {
    /// The LIMIT's count.
    pub limit: Expr,
    /// The OFFSET's count.
    pub offset: Option<Expr>,
}

/// An aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    /// count(*)
    CountStar,
    /// count(x)
    Count,
    /// sum(x)
    Sum,
    /// avg(x)
    Avg,
    /// min(x)
    Min,
    /// max(x)
    Max,
    /// bool_and(x)
    BoolAnd,
    /// bool_or(x)
    BoolOr,
    /// string_agg(x, delimiter)
    StringAgg,
    /// array_agg(x)
    ArrayAgg,
    /// json_agg(x), jsonb_agg(x) (the flag: jsonb)
    JsonAgg(bool),
    /// json_object_agg(k, v), jsonb_object_agg(k, v): key in `arg`, value
    /// in `extra`
    JsonObjectAgg(bool),
    /// variance, var_samp, var_pop, stddev, stddev_samp, stddev_pop
    Spread(Spread),
    /// bit_and(x), bit_or(x) (the flag: and)
    Bits(bool),
    /// percentile_cont(f) / percentile_disc(f) WITHIN GROUP (ORDER BY x)
    /// (the flag: continuous); f in `extra`
    Percentile(bool),
    /// mode() WITHIN GROUP (ORDER BY x)
    Mode,
    /// corr, covar_pop, covar_samp and the regr_* aggregates of (y, x):
    /// y in `arg`, x in `extra`
    Regr(Regr),
    /// A value that is the same on every row of a group (a correlated
    /// subquery's result over grouped columns): the first non-null one.
    AnyValue,
    /// The position of the grouping set a row's group belongs to (what
    /// GROUPING() reads); 0 without grouping sets.
    GroupingSet,
}

/// Which measure of spread a variance or standard deviation aggregate
/// computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spread {
    /// Over the population (N) rather than the sample (N - 1).
    pub population: bool,
    /// The standard deviation (the variance's square root).
    pub root: bool,
}

/// The two-variable statistics of (y, x) pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regr {
    /// corr: the correlation coefficient
    Corr,
    /// covar_pop
    CovarPop,
    /// covar_samp
    CovarSamp,
    /// regr_count: the pairs with neither value NULL
    Count,
    /// regr_avgx
    AvgX,
    /// regr_avgy
    AvgY,
    /// regr_sxx
    Sxx,
    /// regr_syy
    Syy,
    /// regr_sxy
    Sxy,
    /// regr_slope
    Slope,
    /// regr_intercept
    Intercept,
    /// regr_r2
    R2,
}

impl Regr {
    /// The aggregate called `name`.
    pub fn named(name: &str) -> Option<Regr> {
        Some(match name {
            "corr" => Regr::Corr,
            "covar_pop" => Regr::CovarPop,
            "covar_samp" => Regr::CovarSamp,
            "regr_count" => Regr::Count,
            "regr_avgx" => Regr::AvgX,
            "regr_avgy" => Regr::AvgY,
            "regr_sxx" => Regr::Sxx,
            "regr_syy" => Regr::Syy,
            "regr_sxy" => Regr::Sxy,
            "regr_slope" => Regr::Slope,
            "regr_intercept" => Regr::Intercept,
            "regr_r2" => Regr::R2,
            _ => return None,
        })
    }
}

/// One aggregate computed by an [`Plan::Aggregate`] node.
#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    /// Which aggregate.
    pub func: AggFunc,
    /// Argument over the input row (None for count(*)).
    pub arg: Option<Expr>,
    /// Aggregate over distinct argument values only.
    pub distinct: bool,
    /// `FILTER (WHERE ...)`: only input rows where this is true are aggregated.
    pub filter: Option<Expr>,
    /// A second argument over the input row (string_agg's delimiter).
    pub extra: Option<Expr>,
    /// `ORDER BY` inside the call: the order the inputs are aggregated in.
    pub order: Vec<SortKey>,
    /// Result type.
    pub ty: DataType,
}

/// One ORDER BY key.
#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    /// Expression over the input row.
    pub expr: Expr,
    /// DESC.
    pub desc: bool,
    /// NULLS FIRST (default: first for DESC, last for ASC).
    pub nulls_first: bool,
}

/// Join flavours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// INNER JOIN / comma join.
    Inner,
    /// LEFT OUTER JOIN.
    Left,
    /// RIGHT OUTER JOIN; the left side's width, for NULL padding.
    Right(usize),
    /// FULL OUTER JOIN; the left side's width, for NULL padding.
    Full(usize),
}

/// A join of two inputs: a hash join when it has keys, else a nested loop.
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    /// The left input.
    pub left: Box<Plan>,
    /// The right input.
    pub right: Box<Plan>,
    /// Inner or outer.
    pub kind: JoinKind,
    /// The join condition, checked on every pair of rows tried.
    pub on: Option<Expr>,
    /// The right input's width (NULL padding for LEFT and FULL joins).
    pub width: usize,
    /// Equality keys that narrow the pairs tried (see select/joins.rs).
    pub hash: Option<crate::select::HashKeys>,
}

/// A PL/pgSQL function call in FROM (a call in an expression is planned
/// as a scalar subquery reading one).
#[derive(Debug, Clone, PartialEq)]
pub struct PlCall {
    /// The function.
    pub def: std::sync::Arc<crate::catalog::FunctionDef>,
    /// Its arguments, of its parameters' types (they read only outer
    /// columns).
    pub args: Vec<Expr>,
}

/// A node of the operator tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Literal rows (VALUES, or one empty row for SELECT without FROM).
    Values(Vec<Vec<Expr>>),
    /// A table scan.
    Scan(Scan),
    /// A set-returning function in FROM (generate_series, unnest, ...).
    Function(crate::select::functions::FromFunction),
    /// A call of a PL/pgSQL function: its rows (one for a function
    /// returning a value).
    PlCall(Box<PlCall>),
    /// The rows of recursive CTE `id`'s previous iteration (its work table).
    WorkTable(usize),
    /// WITH RECURSIVE: the base rows, then the recursive step run again and
    /// again over the rows the previous run added, until it adds none;
    /// `bool` is UNION ALL (keep duplicates).
    Recursive { id: usize, base: Box<Plan>, step: Box<Plan>, all: bool },
    /// Rows of a system catalog view, produced from the catalog at run time.
    System(crate::system::SystemTable),
    /// A sequence read as a relation: one row (last_value, log_cnt,
    /// is_called) from its stored position.
    Sequence(std::sync::Arc<crate::sequence::SequenceDef>),
    /// Keeps rows for which the predicate is TRUE.
    Filter(Box<Plan>, Expr),
    /// Computes one output column per expression.
    Project(Box<Plan>, Vec<Expr>),
    /// A join; output = left columns ++ right columns.
    Join(Join),
    /// For each left row, runs the right plan with that row as its outer
    /// row (LATERAL); output = left columns ++ right columns. A left join
    /// keeps left rows with no right rows, padded with `usize` NULLs.
    Lateral(Box<Plan>, Box<Plan>, JoinKind, usize),
    /// For each input row, runs each correlated subquery with that row as
    /// its outer row; output = input columns ++ one column per subquery
    /// (its value, EXISTS's boolean, or the IN test's result).
    Apply(Box<Plan>, Vec<Correlated>),
    /// Computes window functions; output = input columns ++ one column per
    /// call (see `window.rs`).
    Window(Box<Plan>, Vec<crate::window::WindowCall>),
    /// Groups by the expressions and computes aggregates; output = group
    /// values ++ aggregate results. With grouping sets (ROLLUP, CUBE,
    /// GROUPING SETS), each set groups by its positions among the
    /// expressions only, and its rows hold NULL for the others.
    Aggregate(Box<Plan>, Vec<Expr>, Vec<AggCall>, Option<Vec<Vec<usize>>>),
    /// Sorts by the keys.
    Sort(Box<Plan>, Vec<SortKey>),
    /// FOR UPDATE / SHARE: keeps the input rows whose row keys this
    /// statement holds locked (see rowlock.rs).
    LockRows(Box<Plan>, crate::rowlock::RowLocking),
    /// Skips `offset` rows, then returns at most `limit`.
    Limit(Box<Plan>, Option<Expr>, Option<Expr>),
    /// FETCH FIRST `count` ROWS WITH TIES: skips `offset` rows, returns
    /// `count`, then the rows after them that equal the last on `keys` (the
    /// ORDER BY's, over this node's rows).
    LimitTies(Box<Plan>, Expr, Option<Expr>, Vec<SortKey>),
    /// Removes duplicate rows.
    Distinct(Box<Plan>),
    /// DISTINCT ON: keeps the first row of each value of the expressions
    /// (the input is sorted so that the wanted row comes first).
    DistinctOn(Box<Plan>, Vec<Expr>),
    /// UNION / INTERSECT / EXCEPT of two inputs with the same column count;
    /// `bool` is ALL (keep duplicates).
    SetOp(SetOpKind, bool, Box<Plan>, Box<Plan>),
    /// Runs uncorrelated subqueries once, then the input with their results
    /// visible to [`crate::expr::Expr::Subquery`] / `InSubquery`.
    Init(Vec<(Plan, SubqKind)>, Box<Plan>),
}

/// A subquery that reads its enclosing query's current row, run once per
/// row by [`Plan::Apply`].
#[derive(Debug, Clone, PartialEq)]
pub struct Correlated {
    /// The subquery; its `Expr::Outer(k)` reads the enclosing rows (this
    /// row last), counted from the end.
    pub plan: Plan,
    /// What the subquery computes.
    pub kind: SubqKind,
    /// For `x [NOT] IN (subquery)`: x over the input row, and NOT.
    pub probe: Option<(Expr, bool)>,
    /// The type of the value it appends to the row.
    pub ty: DataType,
    /// The columns of the enclosing row it reads (not those of rows
    /// further out), which tell a join's ON condition the side it runs on.
    pub reads: Vec<usize>,
}

/// A set operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOpKind {
    /// UNION
    Union,
    /// INTERSECT
    Intersect,
    /// EXCEPT
    Except,
}

/// How a subquery's rows become a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubqKind {
    /// At most one row, one column: its value (NULL if no row).
    Scalar,
    /// True if any row.
    Exists,
    /// The first column of all rows.
    List,
    /// The first column of all rows, as an array (`ARRAY(subquery)`).
    Array,
    /// At most one row: all its columns as a record (NULL if no row), for
    /// `SET (a, b) = (SELECT ...)`.
    Row,
}

impl Plan {
    /// The plans this one runs directly (inputs and subplans).
    pub fn children(&self) -> Vec<&Plan> {
        match self {
            Plan::Values(_)
            | Plan::Scan(_)
            | Plan::Function(..)
            | Plan::PlCall(_)
            | Plan::System(_)
            | Plan::Sequence(_)
            | Plan::WorkTable(_) => vec![],
            Plan::Filter(i, _)
            | Plan::Project(i, _)
            | Plan::Aggregate(i, ..)
            | Plan::Sort(i, _)
            | Plan::LockRows(i, _)
            | Plan::Limit(i, _, _)
            | Plan::LimitTies(i, ..)
            | Plan::Distinct(i)
            | Plan::DistinctOn(i, _)
            | Plan::Window(i, _) => vec![i],
            Plan::Join(j) => vec![&j.left, &j.right],
            Plan::Lateral(l, r, ..) | Plan::SetOp(_, _, l, r) => vec![l, r],
            Plan::Recursive { base, step, .. } => vec![base, step],
            Plan::Apply(i, subs) => {
                std::iter::once(&**i).chain(subs.iter().map(|c| &c.plan)).collect()
            }
            Plan::Init(list, i) => {
                list.iter().map(|(p, _)| p).chain(std::iter::once(&**i)).collect()
            }
        }
    }

    /// [`Plan::children`], mutable.
    pub fn children_mut(&mut self) -> Vec<&mut Plan> {
        match self {
            Plan::Values(_)
            | Plan::Scan(_)
            | Plan::Function(..)
            | Plan::PlCall(_)
            | Plan::System(_)
            | Plan::Sequence(_)
            | Plan::WorkTable(_) => vec![],
            Plan::Filter(i, _)
            | Plan::Project(i, _)
            | Plan::Aggregate(i, ..)
            | Plan::Sort(i, _)
            | Plan::LockRows(i, _)
            | Plan::Limit(i, _, _)
            | Plan::LimitTies(i, ..)
            | Plan::Distinct(i)
            | Plan::DistinctOn(i, _)
            | Plan::Window(i, _) => vec![i],
            Plan::Join(j) => vec![&mut j.left, &mut j.right],
            Plan::Lateral(l, r, ..) | Plan::SetOp(_, _, l, r) => vec![l, r],
            Plan::Recursive { base, step, .. } => vec![base, step],
            Plan::Apply(i, subs) => {
                std::iter::once(&mut **i).chain(subs.iter_mut().map(|c| &mut c.plan)).collect()
            }
            Plan::Init(list, i) => {
                list.iter_mut().map(|(p, _)| p).chain(std::iter::once(&mut **i)).collect()
            }
        }
    }

    /// True if this plan or any plan under it satisfies `f`.
    pub fn any(&self, f: &impl Fn(&Plan) -> bool) -> bool {
        f(self) || self.children().into_iter().any(|c| c.any(f))
    }

    /// Writes EXPLAIN lines for this plan and its children.
    pub fn explain(&self, out: &mut Vec<String>, depth: usize) {
        let pad = "  ".repeat(depth);
        let arrow = if depth == 0 { String::new() } else { format!("{pad}->  ") };
        let line = match self {
            Plan::Values(rows) => format!("Values ({} rows)", rows.len()),
            Plan::Scan(s) => {
                let (how, using) = match &s.access {
                    Access::Full if s.order == KeyOrder::Any => ("Seq Scan", None),
                    Access::Full => ("Primary Key Scan", None),
                    Access::Point(_) => ("Primary Key Lookup", None),
                    Access::Current(_) => ("Tid Scan", None),
                    Access::Nothing => ("Pruned Scan", None),
                    Access::Range { index: None, .. } => ("Primary Key Range Scan", None),
                    Access::In { index: None, .. } => ("Primary Key Lookups", None),
                    Access::Range { index: Some(i), .. } | Access::In { index: Some(i), .. } => {
                        ("Index Scan", Some(&s.table.indexes[*i].name))
                    }
                };
                let back = if s.order == KeyOrder::Descending { " Backward" } else { "" };
                let using = using.map(|n| format!(" using {n}")).unwrap_or_default();
                let f = if s.filter.is_some() { " (filtered)" } else { "" };
                let cap = if s.cap.is_some() { " (limited)" } else { "" };
                format!("{how}{back}{using} on {}{f}{cap}", s.table.name)
            }
            Plan::Function(f) => format!("Function Scan on {}", f.name()),
            Plan::PlCall(c) => format!("Function Scan on {}", c.def.name),
            Plan::WorkTable(_) => "WorkTable Scan".into(),
            Plan::Recursive { .. } => "Recursive Union".into(),
            Plan::System(t) => format!("System Scan on {}", t.name()),
            Plan::Sequence(s) => format!("Seq Scan on {}", s.name),
            Plan::Filter(..) => "Filter".into(),
            Plan::Project(..) => "Project".into(),
            Plan::Lateral(..) => "Nested Loop (lateral)".into(),
            Plan::Apply(_, subs) => format!("SubPlans ({}, per row)", subs.len()),
            Plan::Window(..) => "WindowAgg".into(),
            Plan::Join(j) => {
                let kind = match j.kind {
                    JoinKind::Inner => "",
                    JoinKind::Left => " Left",
                    JoinKind::Right(_) => " Right",
                    JoinKind::Full(_) => " Full",
                };
                match (&j.hash, j.kind) {
                    (Some(_), _) => format!("Hash{kind} Join"),
                    (None, JoinKind::Inner) => "Nested Loop".into(),
                    (None, _) => format!("Nested Loop{kind} Join"),
                }
            }
            Plan::Aggregate(_, _, _, Some(sets)) => format!("MixedAggregate ({} sets)", sets.len()),
            Plan::Aggregate(_, g, ..) => {
                if g.is_empty() {
                    "Aggregate".into()
                } else {
                    "HashAggregate".into()
                }
            }
            Plan::Sort(..) => "Sort".into(),
            Plan::LockRows(..) => "LockRows".into(),
            Plan::Limit(..) | Plan::LimitTies(..) => "Limit".into(),
            Plan::Distinct(..) | Plan::DistinctOn(..) => "Unique".into(),
            Plan::Init(list, _) => format!("InitPlans ({})", list.len()),
            Plan::SetOp(k, all, _, _) => format!("{k:?}{}", if *all { " All" } else { "" }),
        };
        out.push(format!("{arrow}{line}"));
        // Init plans print as a count on their line, not as subtrees.
        let children = match self {
            Plan::Init(_, i) => vec![&**i],
            _ => self.children(),
        };
        for c in children {
            c.explain(out, depth + 1);
        }
    }
}
