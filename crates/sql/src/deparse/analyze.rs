//! Parse analysis of a stored expression as PostgreSQL 15 does it, to
//! learn the tree PostgreSQL would have stored for the same text: which
//! operator and function each name resolves to (parse_oper.c,
//! parse_func.c), which implicit coercions that puts on the arguments, and
//! what the parser rewrites (BETWEEN into two comparisons, IN lists into
//! `= ANY (ARRAY[...])`, LIKE into `~~`, `-1` into a negative constant).
//! [`super::print`] then prints the tree as ruleutils.c does.
//!
//! Only what changes the printed text is modelled. An expression using
//! something outside the model (a subquery, an operator on a type the
//! tables do not list) gives None, and the caller prints the stored text.

use sqlparser::ast::{self, BinaryOperator as B, Expr as E};

use crate::builtins::pgcat::{pgcat, FuncSig, Oper, TypeInfo, ANY, BOOL, JSONB, TEXT, UNKNOWN};
use crate::catalog::{Catalog, UserTypeKind};

/// A type and its modifier (-1: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ty {
    /// pg_type OID
    pub oid: u32,
    /// typmod
    pub typmod: i32,
}

impl Ty {
    /// `oid` without a modifier.
    pub fn of(oid: u32) -> Ty {
        Ty { oid, typmod: -1 }
    }
}

/// The node a coercion makes, which decides how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coercion {
    /// A cast function (FuncExpr): a simple node wherever it stands.
    Func,
    /// Binary coercible (RelabelType), I/O conversion (CoerceViaIO),
    /// element-wise (ArrayCoerceExpr) or to a domain (CoerceToDomain):
    /// as simple as its argument.
    Wrap,
}

/// A call written in SQL's own syntax (COERCE_SQL_SYNTAX).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Syntax {
    /// `EXTRACT(field FROM x)`
    Extract(String),
    /// `x AT TIME ZONE zone`: arguments (zone, x)
    AtTimeZone,
    /// `SUBSTRING(x FROM a [FOR b])`
    Substring,
    /// `TRIM(BOTH|LEADING|TRAILING [chars] FROM x)`: arguments (x [, chars])
    Trim(&'static str),
    /// `POSITION(a IN b)`: arguments (b, a)
    Position,
    /// `OVERLAY(x PLACING y FROM a [FOR b])`
    Overlay,
}

/// An analysed expression: PostgreSQL's node types, as far as printing
/// tells them apart.
#[derive(Debug, Clone)]
pub enum Node {
    /// A column of the relation.
    Var(String, Ty),
    /// A constant in its type's output form (None: NULL).
    Const(Option<String>, Ty),
    /// An operator call: one argument (prefix) or two.
    Op(String, Vec<Node>, Ty),
    /// AND of the arguments.
    And(Vec<Node>),
    /// OR of the arguments.
    Or(Vec<Node>),
    /// NOT
    Not(Box<Node>),
    /// A function called by name.
    Call(String, Vec<Node>, Ty),
    /// A function written in SQL syntax.
    Syntax(Syntax, Vec<Node>, Ty),
    /// A coercion to `ty`; `explicit` when written as a cast.
    Coerce { arg: Box<Node>, ty: Ty, kind: Coercion, explicit: bool },
    /// `x op ANY (array)` (`any` false: ALL).
    AnyAll { op: String, any: bool, args: Vec<Node> },
    /// `ARRAY[...]` of type `ty`.
    Array(Vec<Node>, Ty),
    /// `a[i]` and `a[i:j]`: for each subscript, (lower, upper, slice).
    Subscript(Box<Node>, Vec<(Option<Node>, Option<Node>, bool)>, Ty),
    /// `x IS [NOT] NULL`
    NullTest(Box<Node>, bool),
    /// `x IS [NOT] TRUE/FALSE/UNKNOWN`, the words after IS.
    BoolTest(Box<Node>, &'static str),
    /// `a IS DISTINCT FROM b`
    Distinct(Box<Node>, Box<Node>),
    /// `NULLIF(a, b)`
    NullIf(Box<Node>, Box<Node>, Ty),
    /// `COALESCE(...)`
    Coalesce(Vec<Node>, Ty),
    /// `GREATEST(...)` or `LEAST(...)`, the word.
    MinMax(&'static str, Vec<Node>, Ty),
    /// `CASE [operand] WHEN ... THEN ... ELSE ... END`; with an operand,
    /// each WHEN is `CaseTest = value`.
    Case { operand: Option<Box<Node>>, whens: Vec<(Node, Node)>, default: Box<Node>, ty: Ty },
    /// The operand of a CASE as its WHEN comparisons read it.
    CaseTest(Ty),
    /// CURRENT_DATE and the other SQL value functions, as printed.
    SqlValue(String, Ty),
    /// `x COLLATE name`, the name as printed.
    Collate(Box<Node>, String),
}

impl Node {
    /// The node's result type.
    pub fn ty(&self) -> Ty {
        match self {
            Node::Var(_, t)
            | Node::Const(_, t)
            | Node::Op(_, _, t)
            | Node::Call(_, _, t)
            | Node::Syntax(_, _, t)
            | Node::Coerce { ty: t, .. }
            | Node::Array(_, t)
            | Node::Subscript(_, _, t)
            | Node::NullIf(_, _, t)
            | Node::Coalesce(_, t)
            | Node::MinMax(_, _, t)
            | Node::Case { ty: t, .. }
            | Node::CaseTest(t)
            | Node::SqlValue(_, t) => *t,
            Node::Collate(x, _) => x.ty(),
            Node::And(_)
            | Node::Or(_)
            | Node::Not(_)
            | Node::AnyAll { .. }
            | Node::NullTest(..)
            | Node::BoolTest(..)
            | Node::Distinct(..) => Ty::of(BOOL),
        }
    }
}

/// Where a coercion may apply (CoercionContext).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ctx {
    /// In an expression.
    Implicit,
    /// In an assignment to a column.
    Assignment,
    /// In a cast.
    Explicit,
}

/// What a coercion from one type to another takes (find_coercion_pathway).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Relabel,
    Func,
    Io,
    Array,
}

/// The polymorphic pseudo-types.
const ANYELEMENT: u32 = 2283;
const ANYARRAY: u32 = 2277;
const ANYNONARRAY: u32 = 2776;
const ANYENUM: u32 = 3500;
const ANYCOMPATIBLE: u32 = 5077;
const ANYCOMPATIBLEARRAY: u32 = 5078;
const ANYCOMPATIBLENONARRAY: u32 = 5079;
const ANYRANGE: u32 = 3831;

/// The subtype of the built-in range type `oid`.
fn range_subtype(oid: u32) -> R<u32> {
    sqltypes::RangeKind::from_oid(oid).map(|k| k.subtype().oid())
}

/// The built-in range type over `subtype`.
fn range_over(subtype: u32) -> R<u32> {
    let mut kinds = sqltypes::range::RANGE_KINDS.into_iter();
    kinds.find(|k| k.subtype().oid() == subtype).map(|k| k.oid())
}

fn polymorphic(t: u32) -> bool {
    matches!(
        t,
        ANYELEMENT
            | ANYARRAY
            | ANYNONARRAY
            | ANYENUM
            | ANYCOMPATIBLE
            | ANYCOMPATIBLEARRAY
            | ANYCOMPATIBLENONARRAY
            | ANYRANGE
    )
}

/// Types whose modifier a cast applies with a length-coercion function.
fn length_coercible(oid: u32) -> bool {
    matches!(oid, 1042 | 1043 | 1700 | 1083 | 1114 | 1184 | 1266 | 1186 | 1560 | 1562)
}

/// Analyses expressions over one relation's columns.
pub struct Analyzer<'a> {
    cat: &'a Catalog,
    columns: &'a [(String, Ty)],
}

/// A fallible step: None when the expression leaves the model.
type R<T> = Option<T>;

impl<'a> Analyzer<'a> {
    /// An analyser over `columns` (name and type each).
    pub fn new(cat: &'a Catalog, columns: &'a [(String, Ty)]) -> Self {
        Analyzer { cat, columns }
    }

    // ---- types -------------------------------------------------------

    /// Category, preference and shape of a type, user types included: an
    /// enum, a domain (its base type's category) or an array of either.
    fn info(&self, oid: u32) -> R<TypeInfo> {
        if let Some(t) = pgcat().type_info(oid) {
            return Some(t);
        }
        let (d, kind) =
            self.cat.user_types.values().find(|(d, _)| d.oid == oid || d.array_oid == oid)?;
        if oid == d.array_oid {
            return Some(TypeInfo {
                category: b'A',
                preferred: false,
                kind: b'b',
                elem: d.oid,
                array: 0,
            });
        }
        Some(match kind {
            UserTypeKind::Domain(dom) => {
                TypeInfo { kind: b'd', array: d.array_oid, ..self.info(dom.ty.oid())? }
            }
            _ => TypeInfo {
                category: b'E',
                preferred: false,
                kind: b'e',
                elem: 0,
                array: d.array_oid,
            },
        })
    }

    /// The type under a domain (the type itself if not one).
    fn base(&self, oid: u32) -> u32 {
        if pgcat().type_info(oid).is_some() {
            return oid;
        }
        self.cat
            .user_types
            .values()
            .find_map(|(u, k)| match k {
                UserTypeKind::Domain(dom) if u.oid == oid => Some(dom.ty.oid()),
                _ => None,
            })
            .unwrap_or(oid)
    }

    fn category(&self, oid: u32) -> u8 {
        self.info(oid).map_or(b'X', |t| t.category)
    }

    fn preferred(&self, category: u8, oid: u32) -> bool {
        self.info(oid).is_some_and(|t| t.preferred && t.category == category)
    }

    fn is_array(&self, oid: u32) -> bool {
        self.info(oid).is_some_and(|t| t.elem != 0 && t.category == b'A')
    }

    fn elem(&self, oid: u32) -> R<u32> {
        self.info(oid).filter(|t| t.category == b'A').map(|t| t.elem).filter(|&e| e != 0)
    }

    fn array_of(&self, oid: u32) -> R<u32> {
        self.info(oid).map(|t| t.array).filter(|&a| a != 0)
    }

    fn is_enum(&self, oid: u32) -> bool {
        self.info(oid).is_some_and(|t| t.kind == b'e')
    }

    // ---- coercion ----------------------------------------------------

    /// How `source` converts to `target` in `ctx` (None: it does not).
    fn pathway(&self, source: u32, target: u32, ctx: Ctx) -> R<Path> {
        let (s, t) = (self.base(source), self.base(target));
        if s == t {
            return Some(Path::Relabel);
        }
        if let Some(c) = pgcat().cast(s, t) {
            let allowed = match c.context {
                b'i' => true,
                b'a' => ctx >= Ctx::Assignment,
                _ => ctx == Ctx::Explicit,
            };
            return match (allowed, c.method) {
                (false, _) => None,
                (true, b'b') => Some(Path::Relabel),
                (true, b'i') => Some(Path::Io),
                (true, _) => Some(Path::Func),
            };
        }
        // int2vector and oidvector are arrays, but not array targets here.
        let vector = matches!(t, 22 | 30);
        if let (Some(se), Some(te), false) = (self.elem(s), self.elem(t), vector) {
            if self.pathway(se, te, ctx).is_some() {
                return Some(Path::Array);
            }
        }
        if ctx >= Ctx::Assignment && self.category(t) == b'S' {
            return Some(Path::Io);
        }
        if ctx == Ctx::Explicit && self.category(s) == b'S' {
            return Some(Path::Io);
        }
        None
    }

    /// can_coerce_type: whether every input converts to its target.
    fn can_coerce(&self, inputs: &[u32], targets: &[u32], ctx: Ctx) -> bool {
        let mut generic = false;
        for (&i, &t) in inputs.iter().zip(targets) {
            if i == t || t == ANY || i == UNKNOWN {
                generic |= polymorphic(t);
                continue;
            }
            if polymorphic(t) {
                generic = true;
                let fits = match t {
                    ANYARRAY | ANYCOMPATIBLEARRAY => self.is_array(i),
                    ANYNONARRAY | ANYCOMPATIBLENONARRAY => !self.is_array(i),
                    ANYENUM => self.is_enum(i),
                    ANYRANGE => range_subtype(i).is_some(),
                    _ => true,
                };
                if !fits {
                    return false;
                }
                continue;
            }
            if self.pathway(i, t, ctx).is_none() {
                return false;
            }
        }
        !generic || self.resolve_generic(inputs, targets, 0).is_some()
    }

    /// The declared types with the polymorphic ones replaced by what the
    /// inputs make them, and the result type likewise
    /// (enforce_generic_type_consistency).
    fn resolve_generic(&self, inputs: &[u32], declared: &[u32], result: u32) -> R<(Vec<u32>, u32)> {
        let mut elem: Option<u32> = None;
        let mut compatible: Vec<u32> = Vec::new();
        for (&i, &d) in inputs.iter().zip(declared) {
            if i == UNKNOWN {
                continue;
            }
            let i = self.base(i);
            let e = match d {
                ANYELEMENT | ANYNONARRAY | ANYENUM => i,
                ANYARRAY => self.elem(i)?,
                ANYRANGE => range_subtype(i)?,
                ANYCOMPATIBLE | ANYCOMPATIBLENONARRAY => {
                    compatible.push(i);
                    continue;
                }
                ANYCOMPATIBLEARRAY => {
                    compatible.push(self.elem(i)?);
                    continue;
                }
                _ => continue,
            };
            match elem {
                Some(x) if x != e => return None,
                _ => elem = Some(e),
            }
        }
        let common = match compatible.is_empty() {
            true => None,
            false => {
                let tys: Vec<Ty> = compatible.iter().map(|&t| Ty::of(t)).collect();
                Some(self.common_type(&tys)?)
            }
        };
        let sub = |d: u32| -> R<u32> {
            Some(match d {
                ANYELEMENT | ANYNONARRAY | ANYENUM => elem?,
                ANYARRAY => self.array_of(elem?)?,
                ANYRANGE => range_over(elem?)?,
                ANYCOMPATIBLE | ANYCOMPATIBLENONARRAY => common?,
                ANYCOMPATIBLEARRAY => self.array_of(common?)?,
                d => d,
            })
        };
        let args = declared.iter().map(|&d| sub(d)).collect::<R<Vec<u32>>>()?;
        let result = if result == 0 { 0 } else { sub(result)? };
        Some((args, result))
    }

    /// coerce_type: `n` converted to `to` as PostgreSQL's parser does it.
    /// An unknown literal becomes a constant of the type; other values get
    /// a coercion node, `explicit` when written as a cast.
    pub fn coerce(&self, n: Node, to: Ty, ctx: Ctx, explicit: bool) -> R<Node> {
        let from = n.ty();
        let with_length = |n: Node| -> Node {
            let from = n.ty();
            if to.typmod >= 0 && length_coercible(to.oid) && from.typmod != to.typmod {
                let inner = match n {
                    Node::Coerce { arg, ty, kind, .. } => {
                        Node::Coerce { arg, ty, kind, explicit: false }
                    }
                    n => n,
                };
                Node::Coerce { arg: Box::new(inner), ty: to, kind: Coercion::Func, explicit }
            } else {
                n
            }
        };
        if from.oid == to.oid {
            // An explicit cast to the type with another modifier (or none)
            // stays, as PostgreSQL's RelabelType does.
            let relabel = ctx == Ctx::Explicit
                && from.typmod != to.typmod
                && !(to.typmod >= 0 && length_coercible(to.oid));
            return Some(match (ctx, relabel) {
                (Ctx::Implicit, _) => n,
                (_, true) => {
                    Node::Coerce { arg: Box::new(n), ty: to, kind: Coercion::Wrap, explicit }
                }
                _ => with_length(n),
            });
        }
        if to.oid == ANY || polymorphic(to.oid) {
            return Some(n);
        }
        if from.oid == UNKNOWN {
            let Node::Const(text, _) = n else { return None };
            let base = self.base(to.oid);
            let text = match text {
                Some(t) => Some(self.normalize(&t, base)?),
                None => None,
            };
            let c = Node::Const(text, Ty::of(base));
            let c = if base != to.oid {
                Node::Coerce {
                    arg: Box::new(c),
                    ty: Ty::of(to.oid),
                    kind: Coercion::Wrap,
                    explicit,
                }
            } else {
                c
            };
            return Some(with_length(c));
        }
        let kind = match self.pathway(from.oid, to.oid, ctx)? {
            Path::Func => Coercion::Func,
            _ => Coercion::Wrap,
        };
        let c = Node::Coerce { arg: Box::new(n), ty: Ty::of(to.oid), kind, explicit };
        Some(with_length(c))
    }

    /// A string literal as a constant of type `oid` prints: its value in
    /// the type's output form.
    fn normalize(&self, text: &str, oid: u32) -> R<String> {
        if oid == 2205 {
            // regclass: the name, schema-qualified only where the search
            // path does not find it.
            let (schema, name) = crate::func::catalog_info::split_name(text);
            let visible = schema
                .and_then(|s| self.cat.namespace_oid(&s))
                .is_some_and(|ns| self.cat.relation_visible(ns, &name));
            return Some(if visible {
                crate::func::catalog_info::quote_ident(&name)
            } else {
                text.to_string()
            });
        }
        if matches!(oid, 2202 | 2203 | 2204 | 2206 | 3734 | 3769 | 4089 | 4096 | 24) {
            return Some(text.to_string());
        }
        let ty = match self.cat.type_by_oid(oid) {
            Some(t) => t,
            None => self.cat.type_by_oid(self.elem(oid)?)?.array_of(),
        };
        match ty {
            sqltypes::DataType::Unknown | sqltypes::DataType::Text => Some(text.to_string()),
            sqltypes::DataType::Char(_) | sqltypes::DataType::Varchar(_) => Some(text.to_string()),
            ty => {
                let v = sqltypes::text::parse_text(&ty, text).ok()?;
                Some(sqltypes::text::to_text(&v))
            }
        }
    }

    /// select_common_type: the type a CASE, COALESCE, IN list or ARRAY
    /// converts its values to.
    pub fn common_type(&self, types: &[Ty]) -> R<u32> {
        let first = types.first()?.oid;
        if first != UNKNOWN && types.iter().all(|t| t.oid == first) {
            return Some(first);
        }
        let mut p = self.base(first);
        let (mut pcat, mut ppref) = (self.category(p), self.preferred(self.category(p), p));
        for t in &types[1..] {
            let n = self.base(t.oid);
            if n == UNKNOWN || n == p {
                continue;
            }
            let ncat = self.category(n);
            let npref = self.preferred(ncat, n);
            if p == UNKNOWN {
                (p, pcat, ppref) = (n, ncat, npref);
            } else if ncat != pcat {
                return None;
            } else if !ppref
                && self.can_coerce(&[p], &[n], Ctx::Implicit)
                && !self.can_coerce(&[n], &[p], Ctx::Implicit)
            {
                (p, pcat, ppref) = (n, ncat, npref);
            }
        }
        Some(if p == UNKNOWN { TEXT } else { p })
    }

    /// func_select_candidate: the one candidate that fits the inputs best,
    /// by PostgreSQL's heuristics (exact matches, preferred types, the
    /// category of unknown inputs, unknowns taking the known type).
    fn select<'c>(&self, inputs: &[u32], cands: Vec<&'c [u32]>) -> R<&'c [u32]> {
        let input: Vec<u32> = inputs.iter().map(|&t| self.base(t)).collect();
        let keep_best = |cands: Vec<&'c [u32]>, score: &dyn Fn(&[u32]) -> usize| {
            let best = cands.iter().map(|c| score(c)).max().unwrap_or(0);
            cands.into_iter().filter(|c| score(c) == best).collect::<Vec<_>>()
        };
        let exact =
            |c: &[u32]| c.iter().zip(&input).filter(|(&a, &i)| i != UNKNOWN && a == i).count();
        let cands = keep_best(cands, &exact);
        if cands.len() == 1 {
            return Some(cands[0]);
        }
        let cats: Vec<u8> = input.iter().map(|&i| self.category(i)).collect();
        let pref = |c: &[u32]| {
            c.iter()
                .zip(&input)
                .zip(&cats)
                .filter(|((&a, &i), &k)| i != UNKNOWN && (a == i || self.preferred(k, a)))
                .count()
        };
        let mut cands = keep_best(cands, &pref);
        if cands.len() == 1 {
            return Some(cands[0]);
        }
        let unknowns: Vec<usize> = (0..input.len()).filter(|&i| input[i] == UNKNOWN).collect();
        if unknowns.is_empty() {
            return None;
        }
        // The category of each unknown position: string if any candidate
        // takes one there, else the one all candidates agree on.
        let mut resolved = true;
        let mut slots = Vec::new();
        for &i in &unknowns {
            let mut slot: Option<(u8, bool)> = None;
            let mut conflict = false;
            for c in &cands {
                let k = self.category(c[i]);
                let p = self.preferred(k, c[i]);
                slot = match slot {
                    None => Some((k, p)),
                    Some((sk, sp)) if sk == k => Some((sk, sp || p)),
                    Some(_) if k == b'S' => Some((k, p)),
                    Some(s) => {
                        conflict = true;
                        Some(s)
                    }
                };
            }
            match slot {
                Some((k, _)) if conflict && k != b'S' => {
                    resolved = false;
                    break;
                }
                Some(s) => slots.push((i, s)),
                None => resolved = false,
            }
        }
        if resolved {
            let kept: Vec<&[u32]> = cands
                .iter()
                .copied()
                .filter(|c| {
                    slots.iter().all(|&(i, (k, p))| {
                        let ck = self.category(c[i]);
                        ck == k && (!p || self.preferred(ck, c[i]))
                    })
                })
                .collect();
            if !kept.is_empty() {
                cands = kept;
            }
            if cands.len() == 1 {
                return Some(cands[0]);
            }
        }
        // Unknowns take the one type all known inputs have.
        let mut known = input.iter().filter(|&&t| t != UNKNOWN);
        let first = *known.next()?;
        if known.all(|&t| t == first) {
            let all = vec![first; input.len()];
            let fits: Vec<&[u32]> =
                cands.iter().copied().filter(|c| self.can_coerce(&all, c, Ctx::Implicit)).collect();
            if fits.len() == 1 {
                return Some(fits[0]);
            }
        }
        None
    }

    /// The operator `name` resolves to for these operand types (left None
    /// for a prefix operator): its (left, right) types and result.
    fn operator(&self, name: &str, left: Option<u32>, right: u32) -> R<(Vec<u32>, u32)> {
        let cat = pgcat();
        let prefix = left.is_none();
        let inputs: Vec<u32> = left.into_iter().chain([right]).collect();
        let decl = |o: &Oper| -> Vec<u32> {
            if prefix {
                vec![o.right]
            } else {
                vec![o.left, o.right]
            }
        };
        // Exact match, an unknown operand taking the other's type.
        let mut exact = inputs.clone();
        if exact.len() == 2 {
            if exact[0] == UNKNOWN {
                exact[0] = exact[1];
            } else if exact[1] == UNKNOWN {
                exact[1] = exact[0];
            }
        }
        let was_unknown = exact != inputs;
        let find = |want: &[u32]| cat.operators(name, prefix).find(|o| decl(o) == want);
        let mut hit = find(&exact);
        if hit.is_none() && was_unknown {
            let base = self.base(exact[0]);
            if base != exact[0] {
                hit = find(&[base, base]);
            }
        }
        let oper = match hit {
            Some(o) => o,
            None => {
                let cands: Vec<&Oper> = cat
                    .operators(name, prefix)
                    .filter(|o| self.can_coerce(&inputs, &decl(o), Ctx::Implicit))
                    .collect();
                match cands.len() {
                    0 => return None,
                    1 => cands[0],
                    _ => {
                        let sigs: Vec<Vec<u32>> = cands.iter().map(|o| decl(o)).collect();
                        let chosen = self.select(&inputs, sigs.iter().map(|s| &s[..]).collect())?;
                        let i = sigs.iter().position(|s| s.as_slice() == chosen)?;
                        cands[i]
                    }
                }
            }
        };
        self.resolve_generic(&inputs, &decl(oper), oper.result)
    }

    /// `name` applied to `args`: the operator resolved and the arguments
    /// coerced to its operand types.
    pub fn op(&self, name: &str, args: Vec<Node>) -> R<Node> {
        let types: Vec<u32> = args.iter().map(|a| a.ty().oid).collect();
        let (left, right) = match types.as_slice() {
            [r] => (None, *r),
            [l, r] => (Some(*l), *r),
            _ => return None,
        };
        let (decl, result) = self.operator(name, left, right)?;
        let args = self.coerce_args(args, &decl)?;
        Some(Node::Op(name.to_string(), args, Ty::of(result)))
    }

    fn coerce_args(&self, args: Vec<Node>, decl: &[u32]) -> R<Vec<Node>> {
        args.into_iter()
            .zip(decl)
            .map(|(a, &d)| self.coerce(a, Ty::of(d), Ctx::Implicit, false))
            .collect()
    }

    /// The candidate signatures of function `name` for `n` arguments:
    /// defaults dropped and VARIADIC expanded.
    fn signatures(sigs: &[FuncSig], n: usize) -> Vec<(Vec<u32>, &FuncSig)> {
        let mut out = Vec::new();
        for s in sigs {
            let len = s.args.len();
            if s.variadic != 0 && n + 1 >= len {
                let mut a = s.args[..len - 1].to_vec();
                a.resize(n, s.variadic);
                out.push((a, s));
            } else if n <= len && n + s.defaults >= len {
                out.push((s.args[..n].to_vec(), s));
            }
        }
        out
    }

    /// A call of built-in function `name`, resolved as func_get_detail does.
    pub fn call(&self, name: &str, args: Vec<Node>) -> R<Node> {
        let inputs: Vec<u32> = args.iter().map(|a| a.ty().oid).collect();
        let sigs = Self::signatures(pgcat().functions(name), args.len());
        let exact = sigs.iter().find(|(a, _)| *a == inputs);
        let (decl, sig) = match exact {
            Some(e) => e,
            None => {
                let fits: Vec<&(Vec<u32>, &FuncSig)> = sigs
                    .iter()
                    .filter(|(a, _)| self.can_coerce(&inputs, a, Ctx::Implicit))
                    .collect();
                match fits.len() {
                    0 => return None,
                    1 => fits[0],
                    _ => {
                        let chosen =
                            self.select(&inputs, fits.iter().map(|(a, _)| a.as_slice()).collect())?;
                        fits.into_iter().find(|(a, _)| a.as_slice() == chosen)?
                    }
                }
            }
        };
        let (decl, result) = self.resolve_generic(&inputs, decl, sig.result)?;
        let args = self.coerce_args(args, &decl)?;
        Some(Node::Call(name.to_string(), args, Ty::of(result)))
    }
}

// ---- from the parsed text ------------------------------------------------

/// The SQL value functions (written without parentheses), as printed.
const SQL_VALUES: &[(&str, &str, u32)] = &[
    ("current_date", "CURRENT_DATE", 1082),
    ("current_timestamp", "CURRENT_TIMESTAMP", 1184),
    ("current_time", "CURRENT_TIME", 1266),
    ("localtimestamp", "LOCALTIMESTAMP", 1114),
    ("localtime", "LOCALTIME", 1083),
    ("current_user", "CURRENT_USER", 19),
    ("current_role", "CURRENT_ROLE", 19),
    ("session_user", "SESSION_USER", 19),
    ("user", "USER", 19),
    ("current_catalog", "CURRENT_CATALOG", 19),
    ("current_schema", "CURRENT_SCHEMA", 19),
];

/// The PostgreSQL name of a binary operator.
fn operator_name(op: &B) -> R<String> {
    Some(
        match op {
            B::Plus => "+",
            B::Minus => "-",
            B::Multiply => "*",
            B::Divide => "/",
            B::Modulo => "%",
            B::StringConcat => "||",
            B::Gt => ">",
            B::Lt => "<",
            B::GtEq => ">=",
            B::LtEq => "<=",
            B::Eq => "=",
            B::NotEq => "<>",
            B::BitwiseOr => "|",
            B::BitwiseAnd => "&",
            B::PGBitwiseXor => "#",
            B::PGBitwiseShiftLeft => "<<",
            B::PGBitwiseShiftRight => ">>",
            B::PGExp => "^",
            B::PGRegexMatch => "~",
            B::PGRegexIMatch => "~*",
            B::PGRegexNotMatch => "!~",
            B::PGRegexNotIMatch => "!~*",
            B::PGLikeMatch => "~~",
            B::PGILikeMatch => "~~*",
            B::PGNotLikeMatch => "!~~",
            B::PGNotILikeMatch => "!~~*",
            B::Arrow => "->",
            B::LongArrow => "->>",
            B::HashArrow => "#>",
            B::HashLongArrow => "#>>",
            B::AtArrow => "@>",
            B::ArrowAt => "<@",
            B::Question => "?",
            B::QuestionAnd => "?&",
            B::QuestionPipe => "?|",
            B::HashMinus => "#-",
            B::AtQuestion => "@?",
            B::AtAt => "@@",
            B::PGOverlap => "&&",
            B::AndLt => "&<",
            B::AndGt => "&>",
            B::Custom(s) if s == "-|-" => "-|-",
            B::PGCustomBinaryOperator(parts) => return parts.last().cloned(),
            _ => return None,
        }
        .to_string(),
    )
}

impl Analyzer<'_> {
    /// Analyses `e`.
    pub fn expr(&self, e: &E) -> R<Node> {
        match e {
            E::Nested(x) => self.expr(x),
            E::Identifier(i) => self.name(&i.value, i.quote_style.is_some()),
            E::CompoundIdentifier(parts) => {
                let last = parts.last()?;
                self.column(&crate::bind::ident(last))
            }
            E::Value(v) => self.literal(&v.value),
            E::TypedString(ts) => {
                let s = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    _ => return None,
                };
                let to = self.type_of(&ts.data_type)?;
                self.coerce(Node::Const(Some(s), Ty::of(UNKNOWN)), to, Ctx::Explicit, true)
            }
            E::Interval(iv) => {
                let v = crate::bind::interval_constant(iv)?.ok()?;
                Some(Node::Const(Some(sqltypes::text::to_text(&v)), Ty::of(1186)))
            }
            E::UnaryOp { op, expr } => match op {
                ast::UnaryOperator::Not => Some(Node::Not(Box::new(self.boolean(expr)?))),
                ast::UnaryOperator::Minus => match signed_number(e) {
                    Some(n) => Some(number(&n)),
                    None => self.op("-", vec![self.expr(expr)?]),
                },
                ast::UnaryOperator::Plus => self.op("+", vec![self.expr(expr)?]),
                ast::UnaryOperator::BitwiseNot => self.op("~", vec![self.expr(expr)?]),
                ast::UnaryOperator::PGAbs => self.op("@", vec![self.expr(expr)?]),
                ast::UnaryOperator::PGSquareRoot => self.op("|/", vec![self.expr(expr)?]),
                ast::UnaryOperator::PGCubeRoot => self.op("||/", vec![self.expr(expr)?]),
                _ => None,
            },
            E::BinaryOp { left, op: op @ (B::And | B::Or), right } => {
                // The grammar joins a left operand written with the same
                // connective into one list (not an AND made of BETWEEN or
                // NOT IN).
                let same = matches!(strip(left), E::BinaryOp { op: o, .. } if o == op);
                let mut args = match (self.boolean(left)?, same) {
                    (Node::And(a) | Node::Or(a), true) => a,
                    (n, _) => vec![n],
                };
                args.push(self.boolean(right)?);
                Some(if *op == B::And { Node::And(args) } else { Node::Or(args) })
            }
            E::BinaryOp { left, op, right } => {
                let name = match op {
                    B::Custom(s) if s == "!=" => "<>".to_string(),
                    op => operator_name(op)?,
                };
                self.op(&name, vec![self.expr(left)?, self.expr(right)?])
            }
            E::IsNull(x) => Some(Node::NullTest(Box::new(self.expr(x)?), false)),
            E::IsNotNull(x) => Some(Node::NullTest(Box::new(self.expr(x)?), true)),
            E::IsTrue(x) => self.bool_test(x, "TRUE"),
            E::IsNotTrue(x) => self.bool_test(x, "NOT TRUE"),
            E::IsFalse(x) => self.bool_test(x, "FALSE"),
            E::IsNotFalse(x) => self.bool_test(x, "NOT FALSE"),
            E::IsUnknown(x) => self.bool_test(x, "UNKNOWN"),
            E::IsNotUnknown(x) => self.bool_test(x, "NOT UNKNOWN"),
            E::IsDistinctFrom(a, b) => self.distinct(a, b),
            E::IsNotDistinctFrom(a, b) => Some(match self.distinct(a, b)? {
                Node::NullTest(x, true) => Node::NullTest(x, false),
                d => Node::Not(Box::new(d)),
            }),
            E::Between { expr, negated, low, high } => {
                let x = self.expr(expr)?;
                type Connective = fn(Vec<Node>) -> Node;
                let (lo, hi, join, outer): (_, _, Connective, Connective) = match negated {
                    false => (">=", "<=", Node::And, Node::Or),
                    true => ("<", ">", Node::Or, Node::And),
                };
                let within = |low: &E, high: &E| -> R<Node> {
                    let a = self.op(lo, vec![x.clone(), self.expr(low)?])?;
                    let b = self.op(hi, vec![x.clone(), self.expr(high)?])?;
                    Some(join(vec![a, b]))
                };
                // BETWEEN SYMMETRIC tests both orders of the bounds.
                match crate::bind::marker_arg(low, crate::parse::SYMMETRIC) {
                    Some(low) => Some(outer(vec![within(low, high)?, within(high, low)?])),
                    None => within(low, high),
                }
            }
            E::InList { expr, list, negated } => self.in_list(expr, list, *negated),
            E::Like { negated, expr, pattern, escape_char, any: false }
            | E::ILike { negated, expr, pattern, escape_char, any: false } => {
                let name = like_operator(*negated, matches!(e, E::ILike { .. }));
                let mut pat = self.expr(pattern)?;
                if let Some(esc) = escape_char {
                    pat = self.call("like_escape", vec![pat, self.expr(esc)?])?;
                }
                self.op(name, vec![self.expr(expr)?, pat])
            }
            E::Like { negated, expr, pattern, escape_char: None, any: true }
            | E::ILike { negated, expr, pattern, escape_char: None, any: true } => {
                let name = like_operator(*negated, matches!(e, E::ILike { .. }));
                self.any_all_node(name, self.expr(expr)?, self.expr(pattern)?, true)
            }
            E::SimilarTo { negated, expr, pattern, escape_char } => {
                let mut args = vec![self.expr(pattern)?];
                if let Some(esc) = escape_char {
                    args.push(self.expr(esc)?);
                }
                let pat = self.call("similar_to_escape", args)?;
                self.op(if *negated { "!~" } else { "~" }, vec![self.expr(expr)?, pat])
            }
            E::Cast { expr, data_type, .. } => {
                let to = self.type_of(data_type)?;
                // ARRAY[...]::t[] converts the elements themselves.
                if let (E::Array(a), Some(elem)) = (strip(expr), self.elem(to.oid)) {
                    let elems = a.elem.iter().map(|x| self.expr(x)).collect::<R<Vec<Node>>>()?;
                    let elem = Ty { oid: elem, typmod: to.typmod };
                    let elems = elems
                        .into_iter()
                        .map(|x| self.coerce(x, elem, Ctx::Explicit, true))
                        .collect::<R<Vec<Node>>>()?;
                    return Some(Node::Array(elems, Ty::of(to.oid)));
                }
                self.coerce(self.expr(expr)?, to, Ctx::Explicit, true)
            }
            E::AtTimeZone { timestamp, time_zone } => {
                let args = vec![self.expr(time_zone)?, self.expr(timestamp)?];
                self.syntax(Syntax::AtTimeZone, "timezone", args)
            }
            E::Extract { field, expr, .. } => {
                let name = match field {
                    ast::DateTimeField::Custom(id) => id.value.to_lowercase(),
                    other => other.to_string().to_lowercase(),
                };
                let args = vec![Node::Const(Some(name.clone()), Ty::of(TEXT)), self.expr(expr)?];
                self.syntax(Syntax::Extract(name), "extract", args)
            }
            E::Function(f) => self.function(f),
            E::Ceil {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            }
            | E::Floor {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => {
                let name = if matches!(e, E::Ceil { .. }) { "ceil" } else { "floor" };
                self.call(name, vec![self.expr(expr)?])
            }
            E::Substring { expr, substring_from, substring_for, special, shorthand } => {
                let mut args = vec![self.expr(expr)?];
                for x in [substring_from, substring_for].into_iter().flatten() {
                    args.push(self.expr(x)?);
                }
                match (shorthand, special) {
                    (true, _) => self.call("substr", args),
                    (false, true) => self.call("substring", args),
                    (false, false) => match self.call("substring", args)? {
                        Node::Call(_, args, ty)
                            if args.get(1).is_some_and(|a| a.ty().oid == 23) =>
                        {
                            Some(Node::Syntax(Syntax::Substring, args, ty))
                        }
                        call => Some(call),
                    },
                }
            }
            E::Trim { expr, trim_where, trim_what, trim_characters: None } => {
                let (word, name) = match trim_where {
                    None | Some(ast::TrimWhereField::Both) => ("BOTH", "btrim"),
                    Some(ast::TrimWhereField::Leading) => ("LEADING", "ltrim"),
                    Some(ast::TrimWhereField::Trailing) => ("TRAILING", "rtrim"),
                };
                let mut args = vec![self.expr(expr)?];
                if let Some(w) = trim_what {
                    args.push(self.expr(w)?);
                }
                self.syntax(Syntax::Trim(word), name, args)
            }
            E::Position { expr, r#in } => {
                let args = vec![self.expr(r#in)?, self.expr(expr)?];
                self.syntax(Syntax::Position, "position", args)
            }
            E::Overlay { expr, overlay_what, overlay_from, overlay_for } => {
                let mut args =
                    vec![self.expr(expr)?, self.expr(overlay_what)?, self.expr(overlay_from)?];
                if let Some(f) = overlay_for {
                    args.push(self.expr(f)?);
                }
                self.syntax(Syntax::Overlay, "overlay", args)
            }
            E::Collate { expr, collation } => {
                let name = crate::bind::object_name(collation).ok()?;
                let shown =
                    name.split('.').map(crate::builtins::quote_identifier).collect::<Vec<_>>();
                let mut x = self.expr(expr)?;
                if x.ty().oid == UNKNOWN {
                    x = self.coerce(x, Ty::of(TEXT), Ctx::Implicit, false)?;
                }
                Some(Node::Collate(Box::new(x), shown.join(".")))
            }
            E::Case { operand, conditions, else_result, .. } => {
                self.case(operand.as_deref(), conditions, else_result.as_deref())
            }
            E::Array(a) => {
                let elems = a.elem.iter().map(|x| self.expr(x)).collect::<R<Vec<Node>>>()?;
                self.array(elems, None)
            }
            E::AnyOp { left, compare_op, right, .. } => self.any_all(left, compare_op, right, true),
            E::AllOp { left, compare_op, right } => self.any_all(left, compare_op, right, false),
            E::CompoundFieldAccess { root, access_chain } => {
                let mut base = self.expr(root)?;
                let jsonb = base.ty().oid == JSONB;
                let mut subs = Vec::new();
                for a in access_chain {
                    let ast::AccessExpr::Subscript(s) = a else { return None };
                    subs.push(match s {
                        // A jsonb subscript is an integer or text.
                        ast::Subscript::Index { index } if jsonb => {
                            let k = self.expr(index)?;
                            let k = match k.ty().oid {
                                21 | 23 | 20 => self.int4(k)?,
                                _ => self.coerce(k, Ty::of(TEXT), Ctx::Implicit, false)?,
                            };
                            (None, Some(k), false)
                        }
                        ast::Subscript::Index { index } => {
                            (None, Some(self.int4(self.expr(index)?)?), false)
                        }
                        ast::Subscript::Slice { lower_bound, upper_bound, stride: None } => {
                            let b = |x: &Option<E>| match x {
                                Some(x) => self.expr(x).and_then(|n| self.int4(n)).map(Some),
                                None => Some(None),
                            };
                            (b(lower_bound)?, b(upper_bound)?, true)
                        }
                        _ => return None,
                    });
                }
                let slice = subs.iter().any(|s| s.2);
                let ty = match jsonb || slice {
                    true if jsonb && slice => return None,
                    true => base.ty(),
                    false => Ty::of(self.elem(base.ty().oid)?),
                };
                base = Node::Subscript(Box::new(base), subs, ty);
                Some(base)
            }
            _ => None,
        }
    }

    /// A call of function `name` written in SQL syntax `form`.
    fn syntax(&self, form: Syntax, name: &str, args: Vec<Node>) -> R<Node> {
        let Node::Call(_, args, ty) = self.call(name, args)? else { return None };
        Some(Node::Syntax(form, args, ty))
    }

    /// An expression coerced to boolean (a condition).
    pub fn boolean(&self, e: &E) -> R<Node> {
        let n = self.expr(e)?;
        self.coerce(n, Ty::of(BOOL), Ctx::Assignment, false)
    }

    fn int4(&self, n: Node) -> R<Node> {
        self.coerce(n, Ty::of(23), Ctx::Implicit, false)
    }

    fn bool_test(&self, x: &E, words: &'static str) -> R<Node> {
        Some(Node::BoolTest(Box::new(self.boolean(x)?), words))
    }

    fn distinct(&self, a: &E, b: &E) -> R<Node> {
        // Against a NULL constant it is a NULL test.
        let null = |e: &E| matches!(strip(e), E::Value(v) if v.value == ast::Value::Null);
        if null(b) || null(a) {
            let x = if null(b) { a } else { b };
            return Some(Node::NullTest(Box::new(self.expr(x)?), true));
        }
        let Node::Op(_, mut args, _) = self.op("=", vec![self.expr(a)?, self.expr(b)?])? else {
            return None;
        };
        let r = args.pop()?;
        let l = args.pop()?;
        Some(Node::Distinct(Box::new(l), Box::new(r)))
    }

    /// A name alone: a column, or a SQL value function such as CURRENT_DATE.
    fn name(&self, name: &str, quoted: bool) -> R<Node> {
        let folded = if quoted { name.to_string() } else { name.to_lowercase() };
        if let Some(n) = self.column(&folded) {
            return Some(n);
        }
        let (_, shown, ty) = SQL_VALUES.iter().find(|(n, ..)| *n == folded && !quoted)?;
        Some(Node::SqlValue(shown.to_string(), Ty::of(*ty)))
    }

    fn column(&self, name: &str) -> R<Node> {
        let (n, t) = self.columns.iter().find(|(n, _)| n == name)?;
        Some(Node::Var(n.clone(), *t))
    }

    fn literal(&self, v: &ast::Value) -> R<Node> {
        Some(match v {
            ast::Value::Number(n, _) => number(n),
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::DollarQuotedString(ast::DollarQuotedString { value: s, .. }) => {
                Node::Const(Some(s.clone()), Ty::of(UNKNOWN))
            }
            ast::Value::Boolean(b) => {
                Node::Const(Some(if *b { "t" } else { "f" }.to_string()), Ty::of(BOOL))
            }
            ast::Value::Null => Node::Const(None, Ty::of(UNKNOWN)),
            _ => return None,
        })
    }

    /// The type a type name in the text means.
    fn type_of(&self, dt: &ast::DataType) -> R<Ty> {
        let def = crate::bind::column_type(self.cat, dt).ok()?;
        Some(Ty { oid: def.oid, typmod: def.typmod })
    }

    fn function(&self, f: &ast::Function) -> R<Node> {
        if f.filter.is_some() || f.over.is_some() || !f.within_group.is_empty() {
            return None;
        }
        let name = crate::bind::object_name(&f.name).ok()?;
        let name = name.strip_prefix("pg_catalog.").unwrap_or(&name).to_string();
        if matches!(f.args, ast::FunctionArguments::None) {
            if let Some((_, shown, ty)) = SQL_VALUES.iter().find(|(n, ..)| *n == name) {
                return Some(Node::SqlValue(shown.to_string(), Ty::of(*ty)));
            }
        }
        let args = crate::bind::function_args(f).ok()?;
        let args = args.into_iter().map(|a| self.expr(a?)).collect::<R<Vec<Node>>>()?;
        if let (Some((_, shown, ty)), [Node::Const(Some(p), t)]) =
            (SQL_VALUES.iter().find(|(n, ..)| *n == name), args.as_slice())
        {
            if t.oid == 23 && name.contains("time") {
                return Some(Node::SqlValue(format!("{shown}({p})"), Ty::of(*ty)));
            }
        }
        match name.as_str() {
            "coalesce" => {
                let ty = self.common(&args)?;
                let args = self.all_to(args, ty)?;
                return Some(Node::Coalesce(args, ty));
            }
            "greatest" | "least" => {
                let ty = self.common(&args)?;
                let args = self.all_to(args, ty)?;
                let word = if name == "greatest" { "GREATEST" } else { "LEAST" };
                return Some(Node::MinMax(word, args, ty));
            }
            "nullif" => {
                let [a, b]: [Node; 2] = args.try_into().ok()?;
                let Node::Op(_, args, _) = self.op("=", vec![a, b])? else { return None };
                let [a, b]: [Node; 2] = args.try_into().ok()?;
                let ty = a.ty();
                return Some(Node::NullIf(Box::new(a), Box::new(b), ty));
            }
            _ => {}
        }
        self.call(&name, args)
    }

    /// The common type of `nodes`.
    fn common(&self, nodes: &[Node]) -> R<Ty> {
        let types: Vec<Ty> = nodes.iter().map(Node::ty).collect();
        self.common_type(&types).map(Ty::of)
    }

    fn all_to(&self, nodes: Vec<Node>, ty: Ty) -> R<Vec<Node>> {
        nodes.into_iter().map(|n| self.coerce(n, ty, Ctx::Implicit, false)).collect()
    }

    /// `ARRAY[...]`, its elements converted to their common type (or to
    /// `elem`).
    fn array(&self, elems: Vec<Node>, elem: Option<Ty>) -> R<Node> {
        let elem = match elem {
            Some(t) => t,
            None => self.common(&elems)?,
        };
        // ARRAY[ARRAY[...], ...] is one array of more dimensions.
        let nested = !elems.is_empty() && elems.iter().all(|e| matches!(e, Node::Array(..)));
        let array = if nested { elem.oid } else { self.array_of(elem.oid)? };
        let elems = self.all_to(elems, elem)?;
        Some(Node::Array(elems, Ty::of(array)))
    }

    /// `x [NOT] IN (list)` as transformAExprIn makes it: the items that
    /// read no column go into one `x = ANY (ARRAY[...])` of their common
    /// type with `x`; each other item, and a lone constant, is compared on
    /// its own, the comparisons joined by OR (AND for NOT IN) two at a time.
    fn in_list(&self, x: &E, list: &[E], negated: bool) -> R<Node> {
        let x = self.expr(x)?;
        let items = list.iter().map(|i| self.expr(i)).collect::<R<Vec<Node>>>()?;
        let op = if negated { "<>" } else { "=" };
        let mut parts = Vec::new();
        let mut rest = items.clone();
        let consts: Vec<Node> = items.iter().filter(|n| !reads_column(n)).cloned().collect();
        if consts.len() > 1 {
            let mut all = vec![x.clone()];
            all.extend(consts.iter().cloned());
            let common = self.common(&all);
            if let Some(ty) = common.filter(|t| self.array_of(t.oid).is_some()) {
                let arr = self.array(consts, Some(ty))?;
                parts.push(self.any_all_node(op, x.clone(), arr, !negated)?);
                rest.retain(reads_column);
            }
        }
        for r in rest {
            parts.push(self.op(op, vec![x.clone(), r])?);
        }
        // Joined two at a time, left-deep.
        let mut parts = parts.into_iter();
        let mut out = parts.next()?;
        for p in parts {
            out = if negated { Node::And(vec![out, p]) } else { Node::Or(vec![out, p]) };
        }
        Some(out)
    }

    fn any_all(&self, left: &E, op: &B, right: &E, any: bool) -> R<Node> {
        let name = operator_name(op)?;
        self.any_all_node(&name, self.expr(left)?, self.expr(right)?, any)
    }

    /// `l op ANY/ALL (r)`: the operator resolved between `l` and `r`'s
    /// element type (make_scalar_array_op).
    fn any_all_node(&self, name: &str, l: Node, r: Node, any: bool) -> R<Node> {
        let rt = r.ty().oid;
        let elem = if rt == UNKNOWN { UNKNOWN } else { self.elem(self.base(rt))? };
        let (decl, _) = self.operator(name, Some(l.ty().oid), elem)?;
        let array = if decl[1] == UNKNOWN { UNKNOWN } else { self.array_of(decl[1])? };
        let l = self.coerce(l, Ty::of(decl[0]), Ctx::Implicit, false)?;
        let r = self.coerce(r, Ty::of(array), Ctx::Implicit, false)?;
        Some(Node::AnyAll { op: name.to_string(), any, args: vec![l, r] })
    }

    fn case(
        &self,
        operand: Option<&E>,
        conditions: &[ast::CaseWhen],
        else_: Option<&E>,
    ) -> R<Node> {
        let operand = match operand {
            Some(o) => Some(self.expr(o)?),
            None => None,
        };
        let mut whens = Vec::new();
        for w in conditions {
            let cond = match &operand {
                Some(o) => {
                    let test = Node::CaseTest(o.ty());
                    self.op("=", vec![test, self.expr(&w.condition)?])?
                }
                None => self.boolean(&w.condition)?,
            };
            whens.push((cond, self.expr(&w.result)?));
        }
        let default = match else_ {
            Some(e) => self.expr(e)?,
            None => Node::Const(None, Ty::of(UNKNOWN)),
        };
        let mut results: Vec<Node> = whens.iter().map(|(_, r)| r.clone()).collect();
        results.insert(0, default.clone());
        let ty = self.common(&results)?;
        let whens = whens
            .into_iter()
            .map(|(c, r)| Some((c, self.coerce(r, ty, Ctx::Implicit, false)?)))
            .collect::<R<Vec<_>>>()?;
        let default = self.coerce(default, ty, Ctx::Implicit, false)?;
        Some(Node::Case { operand: operand.map(Box::new), whens, default: Box::new(default), ty })
    }
}

/// The operator [NOT] LIKE or ILIKE (`ci`) stands for.
fn like_operator(negated: bool, ci: bool) -> &'static str {
    match (negated, ci) {
        (false, false) => "~~",
        (true, false) => "!~~",
        (false, true) => "~~*",
        (true, true) => "!~~*",
    }
}

/// `e` without the parentheses around it.
fn strip(e: &E) -> &E {
    match e {
        E::Nested(x) => strip(x),
        e => e,
    }
}

/// The text of a number literal under unary minuses (`-1`, `-(-1)`), as
/// the grammar folds them into the constant.
fn signed_number(e: &E) -> Option<String> {
    match strip(e) {
        E::Value(v) => match &v.value {
            ast::Value::Number(n, _) => Some(n.clone()),
            _ => None,
        },
        E::UnaryOp { op: ast::UnaryOperator::Minus, expr } => {
            let inner = signed_number(expr)?;
            Some(match inner.strip_prefix('-') {
                Some(pos) => pos.to_string(),
                None => format!("-{inner}"),
            })
        }
        _ => None,
    }
}

/// An integer or decimal literal's constant: int4, int8 or numeric by
/// its size and form, as the grammar types it.
fn number(n: &str) -> Node {
    if let Ok(i) = n.parse::<i32>() {
        return Node::Const(Some(i.to_string()), Ty::of(23));
    }
    if let Ok(i) = n.parse::<i64>() {
        return Node::Const(Some(i.to_string()), Ty::of(20));
    }
    let text = sqltypes::text::parse_text(&sqltypes::DataType::Numeric(None), n)
        .map(|v| sqltypes::text::to_text(&v))
        .unwrap_or_else(|_| n.to_string());
    Node::Const(Some(text), Ty::of(1700))
}

/// Whether the node reads a column (a Var), which keeps an IN item out of
/// the array.
fn reads_column(n: &Node) -> bool {
    match n {
        Node::Var(..) => true,
        Node::Const(..) | Node::SqlValue(..) | Node::CaseTest(_) => false,
        Node::Op(_, a, _)
        | Node::And(a)
        | Node::Or(a)
        | Node::Call(_, a, _)
        | Node::Syntax(_, a, _)
        | Node::AnyAll { args: a, .. }
        | Node::Array(a, _)
        | Node::Coalesce(a, _)
        | Node::MinMax(_, a, _) => a.iter().any(reads_column),
        Node::Not(x) | Node::NullTest(x, _) | Node::BoolTest(x, _) | Node::Collate(x, _) => {
            reads_column(x)
        }
        Node::Coerce { arg, .. } => reads_column(arg),
        Node::Distinct(a, b) | Node::NullIf(a, b, _) => reads_column(a) || reads_column(b),
        Node::Subscript(x, subs, _) => {
            reads_column(x)
                || subs.iter().any(|(l, u, _)| {
                    l.as_ref().is_some_and(reads_column) || u.as_ref().is_some_and(reads_column)
                })
        }
        Node::Case { operand, whens, default, .. } => {
            operand.as_deref().is_some_and(reads_column)
                || whens.iter().any(|(c, r)| reads_column(c) || reads_column(r))
                || reads_column(default)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str, pretty: bool) -> Option<String> {
        let cat = Catalog::default();
        let cols: Vec<(String, Ty)> = [("a", 23), ("z", 1007), ("v", 1043), ("n", 1700)]
            .iter()
            .map(|(n, t)| (n.to_string(), Ty::of(*t)))
            .collect();
        let e = crate::parse::expr_text(text).ok()?;
        let n = Analyzer::new(&cat, &cols).boolean(&e)?;
        Some(super::super::print::print(&cat, &n, pretty))
    }

    #[test]
    fn arrays() {
        assert_eq!(shown("z = array[1, a + 1]", false).as_deref(), Some("(z = ARRAY[1, (a + 1)])"));
        assert_eq!(shown("z = z", true).as_deref(), Some("z = z"));
        assert_eq!(shown("z <> '{}'", false).as_deref(), Some("(z <> '{}'::integer[])"));
    }

    #[test]
    fn connectives_flatten_as_the_grammar_does() {
        let plain = |t| shown(t, false);
        assert_eq!(
            plain("a > 0 and a < 9 and a <> 5").as_deref(),
            Some("((a > 0) AND (a < 9) AND (a <> 5))")
        );
        assert_eq!(
            plain("(a > 0 or a < 9) or a = 5").as_deref(),
            Some("((a > 0) OR (a < 9) OR (a = 5))")
        );
        assert_eq!(
            plain("a > 0 or (a < 9 or a = 5)").as_deref(),
            Some("((a > 0) OR ((a < 9) OR (a = 5)))")
        );
        assert_eq!(
            plain("a between 1 and 2 and a <> 5").as_deref(),
            Some("(((a >= 1) AND (a <= 2)) AND (a <> 5))")
        );
        assert_eq!(
            shown("(a + 1) * 2 > a - (a - 1)", true).as_deref(),
            Some("((a + 1) * 2) > (a - (a - 1))")
        );
        assert_eq!(shown("v = 'x'", false).as_deref(), Some("((v)::text = 'x'::text)"));
        assert_eq!(shown("n >= 0", true).as_deref(), Some("n >= 0::numeric"));
    }
}
