//! Typing operators and casts: the common type of two operands, implicit
//! coercion (unknown literals and parameters take their context's type),
//! explicit casts, and the binary operators with their type rules.

use super::*;
use crate::error::SqlState;
use sqltypes::ops::BitOp;
use sqltypes::RecordType;
use std::sync::Arc;

impl Binder<'_> {
    /// The common type two operands are converted to.
    pub(crate) fn unify(&self, a: &DataType, b: &DataType) -> Result<DataType> {
        match cast::common_type(a, b) {
            Some(t) => Ok(t),
            None => bail!(UndefinedFunction, "operator does not exist: {a} = {b}"),
        }
    }

    /// Converts `x` of type `from` to `to` implicitly: unknown literals are
    /// parsed as `to`, unknown parameters take type `to`, other values get a
    /// run-time cast when the types differ.
    pub fn coerce(&mut self, x: Expr, from: &DataType, to: &DataType) -> Result<Expr> {
        if from == to || *to == DataType::Unknown {
            return Ok(x);
        }
        if let (DataType::Record(f), DataType::Record(t)) = (from, to) {
            return self.row_cast(x, f, t, false);
        }
        // char(n) -> text/varchar drops the padding, as PostgreSQL's bpchar cast does.
        if matches!(from, DataType::Char(_))
            && matches!(to, DataType::Text | DataType::Varchar(None))
        {
            return Ok(Expr::Func(func::Func::BpcharTrim, vec![x]));
        }
        match (&x, from) {
            (Expr::Const(Value::Null), _) => Ok(x),
            // Read in the session's zone when the statement runs.
            (Expr::Const(_), _) if cast::zone_sensitive(from, to) => zone_cast(x, from, to),
            (Expr::Const(Value::Text(s)), DataType::Unknown) => {
                Ok(Expr::Const(sqltypes::text::parse_text(to, s)?))
            }
            (Expr::Param(i), DataType::Unknown) => {
                if let Some(slot) = self.params.get_mut(*i) {
                    *slot = to.clone();
                }
                Ok(x)
            }
            (Expr::Const(v), _) => Ok(Expr::Const(cast::cast(v.clone(), to)?)),
            _ if from.oid() == to.oid()
                && !matches!(
                    to,
                    DataType::Char(_) | DataType::Varchar(Some(_)) | DataType::Numeric(Some(_))
                ) =>
            {
                Ok(x)
            }
            _ => Ok(Expr::Cast(Box::new(x), to.clone())),
        }
    }

    /// An explicit CAST: like [`Binder::coerce`] but any castable pair is allowed.
    pub(super) fn explicit_cast(
        &mut self,
        x: Expr,
        from: &DataType,
        to: &DataType,
    ) -> Result<Expr> {
        // Casts to regclass/regtype look names up in the catalog.
        let reg = match to {
            DataType::Reg(kind) => Some(*kind),
            _ => None,
        };
        if let Some(kind) = reg {
            if from == to {
                return Ok(x);
            }
            let arg = match from {
                DataType::Unknown => self.coerce(x, from, &DataType::Text)?,
                DataType::Char(_) => Expr::Func(func::Func::BpcharTrim, vec![x]),
                f if f.is_string() => x,
                DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Oid => x,
                DataType::Reg(_) => Expr::Cast(Box::new(x), DataType::Oid),
                other => bail!(CannotCoerce, "cannot cast type {other} to {to}"),
            };
            return Ok(Expr::Func(func::Func::ToReg(kind, false), vec![arg]));
        }
        if let (DataType::Record(f), DataType::Record(t)) = (from, to) {
            return self.row_cast(x, f, t, true);
        }
        // char(n) -> text/varchar drops the padding, as PostgreSQL's bpchar cast does.
        if matches!(from, DataType::Char(_)) && matches!(to, DataType::Text | DataType::Varchar(_))
        {
            let trimmed = Expr::Func(func::Func::BpcharTrim, vec![x]);
            return Ok(match to {
                DataType::Varchar(Some(_)) => Expr::Cast(Box::new(trimmed), to.clone()),
                _ => trimmed,
            });
        }
        match (&x, from) {
            (Expr::Param(i), DataType::Unknown) => {
                // The parameter takes the type without its modifier, and the
                // cast then applies it (`$1::varchar(3)` truncates, as in
                // PostgreSQL, instead of rejecting a longer value).
                let base = match to {
                    DataType::Varchar(_) => DataType::Varchar(None),
                    other => strip_mod(other),
                };
                if let Some(slot) = self.params.get_mut(*i) {
                    *slot = base.clone();
                }
                if base == *to {
                    return Ok(x);
                }
                Ok(Expr::Cast(Box::new(x), to.clone()))
            }
            (Expr::Const(v), _) if !v.is_null() && cast::zone_sensitive(from, to) => {
                zone_cast(x, from, to)
            }
            (Expr::Const(v), _) => Ok(Expr::Const(match v {
                // An explicit cast to varchar(n)/char(n) truncates instead of failing.
                Value::Text(s)
                    if *from == DataType::Unknown
                        && matches!(to, DataType::Varchar(Some(_)) | DataType::Char(_)) =>
                {
                    cast::cast(Value::Text(s.clone()), to)?
                }
                Value::Text(s) if *from == DataType::Unknown => sqltypes::text::parse_text(to, s)?,
                v => cast::cast(v.clone(), to)?,
            })),
            _ => Ok(Expr::Cast(Box::new(x), to.clone())),
        }
    }

    /// A record of row type `from` as row type `to` (a composite type or
    /// a table's row type), as PostgreSQL's coerce_record_to_complex: a
    /// ROW(...) converts field by field (`explicit`ly or implicitly), a
    /// record of the same fields is relabelled, and any other record
    /// converts when the statement runs. `to` without fields (the
    /// pseudo-type record) takes any record as it is.
    fn row_cast(
        &mut self,
        x: Expr,
        from: &Arc<RecordType>,
        to: &Arc<RecordType>,
        explicit: bool,
    ) -> Result<Expr> {
        if from == to || to.is_pseudo() {
            return Ok(x);
        }
        let refused = |detail: String| {
            let f = DataType::Record(from.clone());
            let t = DataType::Record(to.clone());
            err!(CannotCoerce, "cannot cast type {f} to {t}").with_detail(detail)
        };
        let Expr::Row(_, items) = x else {
            return Ok(Expr::Cast(Box::new(x), DataType::Record(to.clone())));
        };
        if items.len() > to.fields.len() {
            return Err(refused("Input has too many columns.".into()));
        }
        let mut out = Vec::with_capacity(items.len());
        let mut items = items.into_iter();
        for (i, (_, ft)) in to.fields.iter().enumerate() {
            // Fields convert in order: a bad one is found before a missing one.
            let Some(item) = items.next() else {
                return Err(refused("Input has too few columns.".into()));
            };
            let it = from.fields.get(i).map_or(DataType::Unknown, |f| f.1.clone());
            let cast = match explicit {
                true => self.explicit_cast(item, &it, ft),
                false => self.coerce(item, &it, ft),
            };
            out.push(cast.map_err(|e| match e.code {
                SqlState::CannotCoerce | SqlState::DatatypeMismatch => {
                    refused(format!("Cannot cast type {it} to {ft} in column {}.", i + 1))
                }
                _ => e,
            })?);
        }
        Ok(Expr::Row(to.clone(), out))
    }

    pub(super) fn compare(
        &mut self,
        l: &ast::Expr,
        op: BinOp,
        r: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<Expr> {
        if let (Some(li), Some(ri)) = (super::row_items(l), super::row_items(r)) {
            return self.row_compare(&li, op, &ri, scope, agg);
        }
        let (lx, lt) = self.expr_in(l, scope, agg)?;
        let (rx, rt) = self.expr_in(r, scope, agg)?;
        self.bind_binop(op, lx, lt, rx, rt).map(|(e, _)| e)
    }

    /// Row-constructor comparison, `(a, b) < (c, d)`, as SQL defines it:
    /// `=` holds when every pair is equal, `<>` when some pair differs, and
    /// an ordering is decided by the first pair that is not equal (NULL if
    /// a NULL comes first). Expanded into the pairwise comparisons.
    fn row_compare(
        &mut self,
        l: &[&ast::Expr],
        op: BinOp,
        r: &[&ast::Expr],
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<Expr> {
        if l.len() != r.len() {
            bail!(SyntaxError, "unequal number of entries in row expressions");
        }
        if l.is_empty() {
            bail!(FeatureNotSupported, "cannot compare rows of zero length");
        }
        let both = |op, a: Expr, b: Expr| Expr::Binary(op, Box::new(a), Box::new(b));
        if matches!(op, BinOp::Eq | BinOp::NotEq) {
            let join = if op == BinOp::Eq { BinOp::And } else { BinOp::Or };
            let mut out = None;
            for (a, b) in l.iter().zip(r) {
                let c = self.compare(a, op, b, scope, agg)?;
                out = Some(match out {
                    None => c,
                    Some(prev) => both(join, prev, c),
                });
            }
            return Ok(out.expect("rows are not empty"));
        }
        let strict = match op {
            BinOp::LtEq => BinOp::Lt,
            BinOp::GtEq => BinOp::Gt,
            BinOp::Lt | BinOp::Gt => op,
            _ => bail!(UndefinedFunction, "operator {} is not supported for rows", op_symbol(op)),
        };
        // From the last pair back: a_k <strict> b_k OR (a_k = b_k AND rest).
        let n = l.len();
        let mut out = self.compare(l[n - 1], op, r[n - 1], scope, agg)?;
        for k in (0..n - 1).rev() {
            let first = self.compare(l[k], strict, r[k], scope, agg)?;
            let equal = self.compare(l[k], BinOp::Eq, r[k], scope, agg)?;
            out = both(BinOp::Or, first, both(BinOp::And, equal, out));
        }
        Ok(out)
    }

    /// `a IS [NOT] DISTINCT FROM b`: equality where NULL equals NULL, as
    /// `CASE WHEN a IS NULL THEN b IS NULL WHEN b IS NULL THEN false ELSE a = b END`
    /// (negated for IS DISTINCT FROM).
    pub(super) fn is_distinct(
        &mut self,
        a: &ast::Expr,
        b: &ast::Expr,
        distinct: bool,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let (ax, at) = self.expr_in(a, scope, agg)?;
        let (bx, bt) = self.expr_in(b, scope, agg)?;
        let (eq, _) = self.bind_binop(BinOp::Eq, ax.clone(), at, bx.clone(), bt)?;
        let null = |x: &Expr| Expr::IsNull(Box::new(x.clone()), false);
        let same = Expr::Case(
            None,
            vec![(null(&ax), null(&bx)), (null(&bx), Expr::Const(Value::Bool(false)))],
            Some(Box::new(eq)),
        );
        Ok((if distinct { Expr::Not(Box::new(same)) } else { same }, DataType::Bool))
    }

    pub(super) fn binary(
        &mut self,
        l: &ast::Expr,
        op: &ast::BinaryOperator,
        r: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        use ast::BinaryOperator as O;
        if let O::PGLikeMatch | O::PGILikeMatch | O::PGNotLikeMatch | O::PGNotILikeMatch = op {
            let (x, p) = self.operands_as(l, r, &DataType::Text, scope, agg)?;
            let negated = matches!(op, O::PGNotLikeMatch | O::PGNotILikeMatch);
            let ci = matches!(op, O::PGILikeMatch | O::PGNotILikeMatch);
            return Ok((Expr::Like(Box::new(x), Box::new(p), negated, ci), DataType::Bool));
        }
        let regex = match op {
            O::PGRegexMatch => Some((false, false)),
            O::PGRegexIMatch => Some((false, true)),
            O::PGRegexNotMatch => Some((true, false)),
            O::PGRegexNotIMatch => Some((true, true)),
            _ => None,
        };
        if let Some((negated, ci)) = regex {
            let (x, p) = self.operands_as(l, r, &DataType::Text, scope, agg)?;
            return Ok((Expr::Regex(Box::new(x), Box::new(p), negated, ci), DataType::Bool));
        }
        let json_only = match op {
            O::Arrow => Some("->"),
            O::LongArrow => Some("->>"),
            O::HashArrow => Some("#>"),
            O::HashLongArrow => Some("#>>"),
            O::Question => Some("?"),
            O::QuestionAnd => Some("?&"),
            O::QuestionPipe => Some("?|"),
            O::HashMinus => Some("#-"),
            _ => None,
        };
        if let Some(sym) = json_only {
            let (lx, lt) = self.expr_in(l, scope, agg)?;
            let (rx, rt) = self.expr_in(r, scope, agg)?;
            if let Some(found) = self.json_operator(sym, lx, &lt, rx, &rt)? {
                return Ok(found);
            }
            return Err(no_operator(&lt, sym, &rt));
        }
        // inet containment: << <<= >> >>= (&& below).
        let net_sym = match op {
            O::PGBitwiseShiftLeft => Some("<<"),
            O::PGBitwiseShiftRight => Some(">>"),
            O::Custom(s) if s == "<<=" || s == ">>=" => Some(s.as_str()),
            _ => None,
        };
        if let Some(sym) = net_sym {
            let l = self.expr_in(l, scope, agg)?;
            let r = self.expr_in(r, scope, agg)?;
            if let Some(found) = self.network_operator(sym, l.clone(), r.clone())? {
                return Ok(found);
            }
            if let Some(found) = self.range_operator(sym, l.clone(), r.clone())? {
                return Ok(found);
            }
            // On integers, << and >> shift.
            let shift = match sym {
                "<<" => BinOp::Bit(BitOp::Shl),
                ">>" => BinOp::Bit(BitOp::Shr),
                _ => return Err(no_operator(&l.1, sym, &r.1)),
            };
            return self.bind_binop(shift, l.0, l.1, r.0, r.1);
        }
        let range_only = match op {
            O::AndLt => Some("&<"),
            O::AndGt => Some("&>"),
            O::Custom(s) if s == "-|-" => Some("-|-"),
            _ => None,
        };
        if let Some(sym) = range_only {
            let l = self.expr_in(l, scope, agg)?;
            let r = self.expr_in(r, scope, agg)?;
            let (lt, rt) = (l.1.clone(), r.1.clone());
            return self.range_operator(sym, l, r)?.ok_or_else(|| no_operator(&lt, sym, &rt));
        }
        if matches!(op, O::StringConcat | O::AtArrow | O::ArrowAt | O::PGOverlap) {
            let l = self.expr_in(l, scope, agg)?;
            let r = self.expr_in(r, scope, agg)?;
            let sym = match op {
                O::StringConcat => "||",
                O::AtArrow => "@>",
                O::ArrowAt => "<@",
                _ => "&&",
            };
            if let Some(found) = self.json_operator(sym, l.0.clone(), &l.1, r.0.clone(), &r.1)? {
                return Ok(found);
            }
            if let Some(found) = self.network_operator(sym, l.clone(), r.clone())? {
                return Ok(found);
            }
            if let Some(found) = self.range_operator(sym, l.clone(), r.clone())? {
                return Ok(found);
            }
            if let Some(found) = self.array_operator(op, l.clone(), r.clone())? {
                return Ok(found);
            }
            if !matches!(op, O::StringConcat) {
                return Err(no_operator(&l.1, sym, &r.1));
            }
            return self.bind_binop(BinOp::Concat, l.0, l.1, r.0, r.1);
        }
        if matches!(op, O::PGExp) {
            // power(), numeric or double precision as the operands choose.
            let (lb, rb) = (self.expr_in(l, scope, agg)?, self.expr_in(r, scope, agg)?);
            let no_operator =
                err!(UndefinedFunction, "operator does not exist: {} ^ {}", lb.1, rb.1);
            return self.call("power", vec![lb, rb]).map_err(|e| match e.code {
                sqlstate::SqlState::UndefinedFunction => no_operator,
                _ => e,
            });
        }
        if matches!(op, O::PGStartsWith) {
            let (x, p) = self.operands_as(l, r, &DataType::Text, scope, agg)?;
            return Ok((Expr::Func(func::Func::StartsWith, vec![x, p]), DataType::Bool));
        }
        if matches!(op, O::Overlaps) {
            return self.overlaps(l, r, scope, agg);
        }
        let Some(op) = bin_op(op) else {
            bail!(UndefinedFunction, "operator does not exist: {op}");
        };
        let comparison = matches!(
            op,
            BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq
        );
        if comparison && super::row_items(l).is_some() && super::row_items(r).is_some() {
            return Ok((self.compare(l, op, r, scope, agg)?, DataType::Bool));
        }
        let (lx, lt) = self.expr_in(l, scope, agg)?;
        let (rx, rt) = self.expr_in(r, scope, agg)?;
        self.bind_binop(op, lx, lt, rx, rt)
    }

    /// Both operands of an operator that takes them as `ty`.
    fn operands_as(
        &mut self,
        l: &ast::Expr,
        r: &ast::Expr,
        ty: &DataType,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, Expr)> {
        let (lx, lt) = self.expr_in(l, scope, agg)?;
        let (rx, rt) = self.expr_in(r, scope, agg)?;
        Ok((self.coerce(lx, &lt, ty)?, self.coerce(rx, &rt, ty)?))
    }

    /// `(s1, e1) OVERLAPS (s2, e2)`: each end may be an interval, which is
    /// added to its start; the four values take one type (a date is a
    /// timestamp), as PostgreSQL's overlaps functions do.
    fn overlaps(
        &mut self,
        l: &ast::Expr,
        r: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        fn pair<'a>(e: &'a ast::Expr, side: &str) -> Result<(&'a ast::Expr, &'a ast::Expr)> {
            match super::row_items(e) {
                Some(items) if items.len() == 2 => Ok((items[0], items[1])),
                _ => Err(err!(
                    SyntaxError,
                    "wrong number of parameters on {side} side of OVERLAPS expression"
                )),
            }
        }
        let mut ends = Vec::with_capacity(4);
        for (s, e) in [pair(l, "left")?, pair(r, "right")?] {
            let (sx, st) = self.expr_in(s, scope, agg)?;
            let (ex, et) = self.expr_in(e, scope, agg)?;
            ends.push((sx.clone(), st.clone()));
            ends.push(match et {
                DataType::Interval => self.bind_binop(BinOp::Add, sx, st, ex, et)?,
                _ => (ex, et),
            });
        }
        let mut ty = DataType::Unknown;
        for (_, t) in &ends {
            ty = self.unify(&ty, t)?;
        }
        ty = match ty {
            DataType::Date | DataType::Unknown => DataType::Timestamp,
            DataType::Timestamp | DataType::TimestampTz | DataType::Time | DataType::TimeTz => ty,
            other => {
                let e = err!(
                    UndefinedFunction,
                    "function pg_catalog.overlaps({other}, {other}, {other}, {other}) does not exist"
                );
                return Err(e.with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
            }
        };
        let mut args = Vec::with_capacity(4);
        for (x, t) in ends {
            args.push(self.coerce(x, &t, &ty)?);
        }
        Ok((Expr::Func(func::Func::Overlaps, args), DataType::Bool))
    }

    /// A json operator call when an operand is json or jsonb (None
    /// otherwise).
    fn json_operator(
        &mut self,
        sym: &str,
        lx: Expr,
        lt: &DataType,
        rx: Expr,
        rt: &DataType,
    ) -> Result<Option<(Expr, DataType)>> {
        let Some(resolved) = func::json::resolve_operator(sym, lt, rt) else {
            return Ok(None);
        };
        let (f, ty, targets) = resolved?;
        let coerce = |b: &mut Self, x: Expr, t: &DataType, i: usize| match targets.get(i) {
            Some(Some(to)) => b.coerce(x, t, to),
            _ => Ok(x),
        };
        let lx = coerce(self, lx, lt, 0)?;
        let rx = coerce(self, rx, rt, 1)?;
        Ok(Some((Expr::Func(func::Func::Json(f), vec![lx, rx]), ty)))
    }

    /// An inet containment operator call when an operand is inet or cidr
    /// (None otherwise); an untyped literal beside it is inet.
    fn network_operator(
        &mut self,
        sym: &str,
        (lx, lt): (Expr, DataType),
        (rx, rt): (Expr, DataType),
    ) -> Result<Option<(Expr, DataType)>> {
        let Some((f, swap)) = func::network::operator(sym, &lt, &rt) else { return Ok(None) };
        let inet = [DataType::Inet, DataType::Inet];
        let args = self.operands(((lx, lt), (rx, rt)), &inet, swap)?;
        Ok(Some((Expr::Func(func::Func::Net(f), args), DataType::Bool)))
    }

    /// An operator's operands coerced to `targets` (left, right), in the
    /// called function's order: swapped when `swap`.
    fn operands(
        &mut self,
        ((lx, lt), (rx, rt)): ((Expr, DataType), (Expr, DataType)),
        targets: &[DataType; 2],
        swap: bool,
    ) -> Result<Vec<Expr>> {
        let lx = self.coerce(lx, &lt, &targets[0])?;
        let rx = self.coerce(rx, &rt, &targets[1])?;
        Ok(if swap { vec![rx, lx] } else { vec![lx, rx] })
    }

    /// A range operator call when an operand is a range (None otherwise).
    fn range_operator(
        &mut self,
        sym: &str,
        (lx, lt): (Expr, DataType),
        (rx, rt): (Expr, DataType),
    ) -> Result<Option<(Expr, DataType)>> {
        let Some((f, ty, targets, swap)) = func::ranges::operator(sym, &lt, &rt) else {
            return Ok(None);
        };
        let args = self.operands(((lx, lt), (rx, rt)), &targets, swap)?;
        Ok(Some((Expr::Func(func::Func::Range(f), args), ty)))
    }

    /// Types and coerces the operands of a binary operator.
    pub fn bind_binop(
        &mut self,
        op: BinOp,
        lx: Expr,
        lt: DataType,
        rx: Expr,
        rt: DataType,
    ) -> Result<(Expr, DataType)> {
        use DataType as T;
        let no_op = || no_operator(&lt, op_symbol(op), &rt);
        if matches!(op, BinOp::Add | BinOp::Mul | BinOp::Sub)
            && (matches!(lt, T::Range(_)) || matches!(rt, T::Range(_)))
        {
            let (l, r) = ((lx.clone(), lt.clone()), (rx.clone(), rt.clone()));
            if let Some(found) = self.range_operator(op_symbol(op), l, r)? {
                return Ok(found);
            }
        }
        if op == BinOp::Sub && lt == T::Jsonb {
            if let Some(found) = self.json_operator("-", lx.clone(), &lt, rx.clone(), &rt)? {
                return Ok(found);
            }
        }
        // Intervals, times of day and timestamp differences.
        if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) {
            let sym = op_symbol(op).chars().next().unwrap_or('+');
            // An unknown literal next to a timestamp or time in `+` (and
            // next to an interval anywhere) is an interval; next to a
            // number in `*`, `/` it is float8.
            let guess = |me: &T, other: &T| match (op, me, other) {
                (_, T::Unknown, T::Interval) if matches!(op, BinOp::Add | BinOp::Sub) => {
                    T::Interval
                }
                (BinOp::Mul | BinOp::Div, T::Unknown, T::Interval) => T::Float8,
                (BinOp::Mul, T::Unknown, t) if t.is_numeric() => T::Unknown,
                (BinOp::Add, T::Unknown, T::Timestamp | T::TimestampTz | T::Time | T::TimeTz) => {
                    T::Interval
                }
                (BinOp::Sub, T::Unknown, t @ (T::Timestamp | T::TimestampTz | T::Time)) => {
                    t.clone()
                }
                // A date beside a timestamp is one (midnight), a timestamp
                // beside a timestamptz one in the session's zone.
                (BinOp::Sub, T::Date, t @ (T::Timestamp | T::TimestampTz))
                | (BinOp::Sub, T::Timestamp, t @ T::TimestampTz) => t.clone(),
                (_, t, _) => t.clone(),
            };
            let (l2, r2) = (guess(&lt, &rt), guess(&rt, &lt));
            if let Some(ty) = sqltypes::ops::temporal_result_type(sym, &l2, &r2) {
                let lx = self.coerce(lx, &lt, &l2)?;
                let rx = self.coerce(rx, &rt, &r2)?;
                return Ok((Expr::Binary(op, Box::new(lx), Box::new(rx)), ty));
            }
        }
        // date + integer, integer + date, date - integer: a date.
        if matches!(op, BinOp::Add | BinOp::Sub) {
            let int = |t: &DataType| matches!(t, T::Int2 | T::Int4 | T::Int8 | T::Unknown);
            let date_int = lt == T::Date && int(&rt) && rt != T::Unknown;
            let int_date = op == BinOp::Add && rt == T::Date && int(&lt) && lt != T::Unknown;
            if date_int || int_date {
                let lx = if int_date { self.coerce(lx, &lt, &T::Int4)? } else { lx };
                let rx = if date_int { self.coerce(rx, &rt, &T::Int4)? } else { rx };
                return Ok((Expr::Binary(op, Box::new(lx), Box::new(rx)), T::Date));
            }
            if op == BinOp::Sub && lt == T::Date && rt == T::Date {
                return Ok((Expr::Binary(op, Box::new(lx), Box::new(rx)), T::Int4));
            }
        }
        // Integer bit operators: one integer type (a shift's count is int4).
        if let BinOp::Bit(b) = op {
            let int = |t: &DataType| matches!(t, T::Int2 | T::Int4 | T::Int8);
            let known = |t: &DataType, other: &DataType| match t {
                T::Unknown if int(other) => other.clone(),
                T::Unknown => T::Int4,
                t => t.clone(),
            };
            let (l2, r2) = match b {
                BitOp::Shl | BitOp::Shr => (known(&lt, &T::Int4), T::Int4),
                _ => {
                    let t = self.unify(&known(&lt, &rt), &known(&rt, &lt)).map_err(|_| no_op())?;
                    (t.clone(), t)
                }
            };
            if !int(&l2) || !int(&rt) && rt != T::Unknown {
                return Err(no_op());
            }
            let lx = self.coerce(lx, &lt, &l2)?;
            let rx = self.coerce(rx, &rt, &r2)?;
            return Ok((Expr::Binary(op, Box::new(lx), Box::new(rx)), l2));
        }
        let (operand, result) = match op {
            BinOp::And | BinOp::Or => (T::Bool, T::Bool),
            BinOp::Concat => {
                // text || anything (and anything || text) only.
                let texty = |t: &DataType| t.is_string() || *t == T::Unknown;
                if !texty(&lt) && !texty(&rt) {
                    return Err(no_op());
                }
                (T::Text, T::Text)
            }
            _ if op.is_comparison() => {
                let t = match (&lt, &rt) {
                    (T::Unknown, T::Unknown) => T::Text,
                    _ => self.unify(&lt, &rt).map_err(|_| no_op())?,
                };
                (t, T::Bool)
            }
            _ => {
                let t = match (&lt, &rt) {
                    (T::Unknown, T::Unknown) => T::Numeric(None),
                    _ => self.unify(&lt, &rt).map_err(|_| no_op())?,
                };
                let datetime_arith = matches!(t, T::Date | T::Timestamp | T::TimestampTz)
                    && matches!(op, BinOp::Add | BinOp::Sub);
                if !t.is_numeric() && !datetime_arith {
                    bail!(
                        UndefinedFunction,
                        "operator does not exist: {lt} {} {rt}",
                        op_symbol(op)
                    );
                }
                (t.clone(), t)
            }
        };
        // Keep char(n)/varchar comparisons on their own semantics.
        let (l_to, r_to) = if op.is_comparison() && lt.is_string() && rt.is_string() {
            (lt.clone(), rt.clone())
        } else if matches!(operand, T::Date | T::Timestamp | T::TimestampTz) {
            (lt.clone(), if rt == T::Unknown { lt.clone() } else { rt.clone() })
        } else {
            (strip_mod(&operand), strip_mod(&operand))
        };
        let l_to = if lt == T::Unknown && op.is_comparison() {
            strip_mod(&rt_or(&rt, &operand))
        } else {
            l_to
        };
        let r_to = if rt == T::Unknown && op.is_comparison() {
            strip_mod(&rt_or(&lt, &operand))
        } else {
            r_to
        };
        let lx = if op == BinOp::Concat {
            self.coerce_concat(lx, &lt)?
        } else {
            self.coerce(lx, &lt, &l_to)?
        };
        let rx = if op == BinOp::Concat {
            self.coerce_concat(rx, &rt)?
        } else {
            self.coerce(rx, &rt, &r_to)?
        };
        // char(n) compares with trailing blanks ignored (bpchar semantics).
        let bpchar = |t: &DataType| matches!(t, T::Char(_));
        if op.is_comparison()
            && (bpchar(&lt) || bpchar(&rt))
            && (lt.is_string() || lt == T::Unknown)
            && (rt.is_string() || rt == T::Unknown)
        {
            let trim = |x: Expr| Expr::Func(func::Func::BpcharTrim, vec![x]);
            return Ok((Expr::Binary(op, Box::new(trim(lx)), Box::new(trim(rx))), result));
        }
        Ok((Expr::Binary(op, Box::new(lx), Box::new(rx)), result))
    }

    pub(super) fn coerce_concat(&mut self, x: Expr, ty: &DataType) -> Result<Expr> {
        if matches!(ty, DataType::Char(_)) {
            return Ok(Expr::Func(func::Func::BpcharTrim, vec![x]));
        }
        if ty.is_string() {
            Ok(x)
        } else {
            self.coerce(x, ty, &DataType::Text)
        }
    }
}

/// PostgreSQL's 42883 for operands no operator `symbol` takes.
pub(super) fn no_operator(l: &DataType, symbol: &str, r: &DataType) -> crate::error::Error {
    err!(UndefinedFunction, "operator does not exist: {l} {symbol} {r}").with_hint(
        "No operator matches the given name and argument types. You might need to add explicit type casts.",
    )
}

/// The [`BinOp`] of a sqlparser operator, if it is one of ours.
pub(super) fn bin_op(op: &ast::BinaryOperator) -> Option<BinOp> {
    use ast::BinaryOperator as O;
    Some(match op {
        O::Plus => BinOp::Add,
        O::Minus => BinOp::Sub,
        O::Multiply => BinOp::Mul,
        O::Divide => BinOp::Div,
        O::Modulo => BinOp::Mod,
        O::Eq => BinOp::Eq,
        O::NotEq => BinOp::NotEq,
        O::Lt => BinOp::Lt,
        O::LtEq => BinOp::LtEq,
        O::Gt => BinOp::Gt,
        O::GtEq => BinOp::GtEq,
        O::And => BinOp::And,
        O::Or => BinOp::Or,
        O::StringConcat => BinOp::Concat,
        O::BitwiseAnd => BinOp::Bit(BitOp::And),
        O::BitwiseOr => BinOp::Bit(BitOp::Or),
        O::PGBitwiseXor => BinOp::Bit(BitOp::Xor),
        _ => return None,
    })
}

fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Bit(b) => b.symbol(),
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::Eq => "=",
        BinOp::NotEq => "<>",
        BinOp::Lt => "<",
        BinOp::LtEq => "<=",
        BinOp::Gt => ">",
        BinOp::GtEq => ">=",
        BinOp::And => "AND",
        BinOp::Or => "OR",
        BinOp::Concat => "||",
    }
}

/// A cast of a constant that depends on the session's time zone: checked
/// now (in UTC, so a malformed literal fails at once) and run when the
/// statement executes.
fn zone_cast(x: Expr, from: &DataType, to: &DataType) -> Result<Expr> {
    if let Expr::Const(v) = &x {
        match (v, from) {
            (Value::Text(s), DataType::Unknown) => drop(sqltypes::text::parse_text(to, s)?),
            (v, _) => drop(cast::cast(v.clone(), to)?),
        }
    }
    Ok(Expr::Cast(Box::new(x), to.clone()))
}
