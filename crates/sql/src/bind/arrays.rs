//! Binding array syntax: `ARRAY[...]` (and nested `[...]` for more
//! dimensions), `ARRAY(subquery)`, subscripts and slices, `op ANY/ALL
//! (array)`, and the array operators `||`, `@>`, `<@` and `&&`.

use super::*;
use crate::func::arrays::{ArrayFunc, PatternOp};
use crate::func::Func;

/// The LIKE or regular expression operator `op` is (None for others).
fn pattern_op(op: &ast::BinaryOperator) -> Option<PatternOp> {
    use ast::BinaryOperator as O;
    let (regex, negated, ci) = match op {
        O::PGLikeMatch => (false, false, false),
        O::PGILikeMatch => (false, false, true),
        O::PGNotLikeMatch => (false, true, false),
        O::PGNotILikeMatch => (false, true, true),
        O::PGRegexMatch => (true, false, false),
        O::PGRegexIMatch => (true, false, true),
        O::PGRegexNotMatch => (true, true, false),
        O::PGRegexNotIMatch => (true, true, true),
        _ => return None,
    };
    Some(PatternOp { regex, negated, ci })
}

fn array_call(f: ArrayFunc, args: Vec<Expr>) -> Expr {
    Expr::Func(Func::Array(f), args)
}

impl Binder<'_> {
    /// `ARRAY[a, b, ...]`: the elements' common type; elements that are
    /// arrays themselves (inner `[...]`) make a multidimensional array.
    pub(super) fn array_constructor(
        &mut self,
        arr: &ast::Array,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let mut bound = Vec::with_capacity(arr.elem.len());
        for e in &arr.elem {
            bound.push(match e {
                ast::Expr::Array(inner) => self.array_constructor(inner, scope, agg)?,
                other => self.expr_in(other, scope, agg)?,
            });
        }
        if bound.is_empty() {
            return Err(err!(IndeterminateDatatype, "cannot determine type of empty array")
                .with_hint(
                    "Explicitly cast to the desired type, for example ARRAY[]::integer[].",
                ));
        }
        let nested = bound.iter().any(|(_, t)| matches!(t, DataType::Array(_)));
        let mut ty = DataType::Unknown;
        for (_, t) in &bound {
            ty = cast::common_type(&ty, t).ok_or_else(|| {
                err!(DatatypeMismatch, "ARRAY types {ty} and {t} cannot be matched")
            })?;
        }
        let item_ty = match (&ty, nested) {
            (DataType::Unknown, false) => DataType::Text,
            (DataType::Unknown, true) => DataType::Text.array_of(),
            _ => ty,
        };
        let mut items = Vec::with_capacity(bound.len());
        for (x, t) in bound {
            items.push(self.coerce(x, &t, &item_ty)?);
        }
        let array_ty = item_ty.array_of();
        let x = array_call(ArrayFunc::Construct(nested), items);
        // The cast gives the array its exact element type (varchar(n),
        // char(n), an all-NULL array's type).
        Ok((Expr::Cast(Box::new(x), array_ty.clone()), array_ty))
    }

    /// `ARRAY(subquery)`: the subquery's only column, as an array.
    pub(super) fn array_subquery(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let (x, cols) = self.subquery(q, scope, SubqKind::Array, agg, None)?;
        if cols.len() != 1 {
            bail!(SyntaxError, "subquery must return only one column");
        }
        let ty = strip_mod(&cols[0].ty).array_of();
        Ok((Expr::Cast(Box::new(x), ty.clone()), ty))
    }

    /// `a[i]`, `a[i][j]`, `a[lo:hi]`.
    pub(super) fn subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        // `t.col[i]` arrives as `t` with `.col` and `[i]` in the chain.
        let dots = chain
            .iter()
            .take_while(|a| matches!(a, ast::AccessExpr::Dot(ast::Expr::Identifier(_))))
            .count();
        let qualified;
        let (root, chain) = match (root, dots) {
            (ast::Expr::Identifier(first), 1..) => {
                let mut parts = vec![first.clone()];
                for a in &chain[..dots] {
                    if let ast::AccessExpr::Dot(ast::Expr::Identifier(i)) = a {
                        parts.push(i.clone());
                    }
                }
                qualified = ast::Expr::CompoundIdentifier(parts);
                (&qualified, &chain[dots..])
            }
            _ => (root, chain),
        };
        let (mut x, mut ty) = self.expr_in(root, scope, agg)?;
        // `(rec).field` and subscripts, left to right: runs of subscripts
        // index one array; a dot selects a record's field.
        let mut chain = chain;
        while let Some(first) = chain.first() {
            if let ast::AccessExpr::Dot(field) = first {
                (x, ty) = field_of(x, &ty, field)?;
                chain = &chain[1..];
                continue;
            }
            let n = chain.iter().take_while(|a| matches!(a, ast::AccessExpr::Subscript(_))).count();
            (x, ty) = self.subscript_run(x, ty, &chain[..n], scope, agg)?;
            chain = &chain[n..];
        }
        Ok((x, ty))
    }

    /// Subscripts `chain` (all subscripts) applied to `x` of type `ty`.
    fn subscript_run(
        &mut self,
        x: Expr,
        ty: DataType,
        chain: &[ast::AccessExpr],
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        // A subscript of a name reads one of its bytes, 0-based, as a
        // "char" (pg_dump tests `typname[0] = '_'`).
        if let (DataType::Name, [ast::AccessExpr::Subscript(ast::Subscript::Index { index })]) =
            (&ty, chain)
        {
            let (i, it) = self.expr_in(index, scope, agg)?;
            let i = self.coerce(i, &it, &DataType::Int4)?;
            let from = Expr::Binary(BinOp::Add, Box::new(i), Box::new(Expr::Const(Value::Int4(1))));
            let args = vec![x, from, Expr::Const(Value::Int4(1))];
            let byte = Expr::Func(Func::Substr, args);
            return Ok((Expr::Cast(Box::new(byte), DataType::QChar), DataType::QChar));
        }
        // jsonb: each subscript is `->` with a key or an index.
        if ty == DataType::Jsonb {
            let mut x = x;
            for a in chain {
                let (key, _) = self.jsonb_subscript(a, scope, agg)?;
                let get = func::json::JsonFunc::Get(false);
                x = Expr::Func(Func::Json(get), vec![x, key]);
            }
            return Ok((x, ty));
        }
        let Some(elem) = ty.elem().cloned() else {
            bail!(
                DatatypeMismatch,
                "cannot subscript type {ty} because it does not support subscripting"
            );
        };
        let mut int = |b: &mut Self, e: &ast::Expr| -> Result<Expr> {
            let (i, it) = b.expr_in(e, scope, agg)?;
            b.coerce(i, &it, &DataType::Int4)
                .map_err(|_| err!(DatatypeMismatch, "array subscript must have type integer"))
        };
        let mut indexes = Vec::new();
        for a in chain {
            match a {
                ast::AccessExpr::Subscript(ast::Subscript::Index { index }) => {
                    indexes.push(int(self, index)?)
                }
                ast::AccessExpr::Subscript(ast::Subscript::Slice {
                    lower_bound,
                    upper_bound,
                    stride: None,
                }) if chain.len() == 1 => {
                    let mut args = vec![x];
                    if let Some(l) = lower_bound {
                        args.push(int(self, l)?);
                    }
                    if let Some(u) = upper_bound {
                        args.push(int(self, u)?);
                    }
                    let f = ArrayFunc::Slice(lower_bound.is_some(), upper_bound.is_some());
                    return Ok((array_call(f, args), ty));
                }
                other => bail!(FeatureNotSupported, "subscript {other} is not supported yet"),
            }
        }
        let mut args = vec![x];
        args.extend(indexes);
        Ok((array_call(ArrayFunc::Subscript, args), elem))
    }

    /// One jsonb subscript: an integer (an array index; true) or text (a
    /// key).
    fn jsonb_subscript(
        &mut self,
        a: &ast::AccessExpr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, bool)> {
        let index = match a {
            ast::AccessExpr::Subscript(ast::Subscript::Index { index }) => index,
            ast::AccessExpr::Subscript(ast::Subscript::Slice { .. }) => {
                bail!(DatatypeMismatch, "jsonb subscript does not support slices")
            }
            ast::AccessExpr::Dot(_) => bail!(SyntaxError, "syntax error at or near \".\""),
        };
        let (k, kt) = self.expr_in(index, scope, agg)?;
        match &kt {
            DataType::Int2 | DataType::Int4 | DataType::Int8 => {
                Ok((self.coerce(k, &kt, &DataType::Int4)?, true))
            }
            t if t.is_string() || *t == DataType::Unknown => {
                Ok((self.coerce(k, &kt, &DataType::Text)?, false))
            }
            t => Err(err!(DatatypeMismatch, "subscript type {t} is not supported")
                .with_hint("jsonb subscript must be coercible to either integer or text.")),
        }
    }

    /// `"pg_subscript_assign"(base, value, column[subscripts])`, which a
    /// subscripted SET target becomes (see `parse::subscripted_sets`):
    /// `base` with the element the subscripts name set to `value`: an
    /// array's element (a NULL array is an empty one) or a jsonb path (a
    /// NULL jsonb an empty object, or array if the first subscript is an
    /// integer).
    pub(super) fn subscript_assign(
        &mut self,
        args: &[Option<&ast::Expr>],
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let [Some(base), Some(value), Some(ast::Expr::CompoundFieldAccess { root, access_chain })] =
            args
        else {
            bail!(InternalError, "a subscripted assignment without its parts");
        };
        let column = match root.as_ref() {
            ast::Expr::Identifier(i) => ident(i),
            other => other.to_string(),
        };
        let (b, bt) = self.expr_in(base, scope, agg)?;
        let (v, vt) = self.expr_in(value, scope, agg)?;
        let mismatch = |want: &DataType| {
            err!(
                DatatypeMismatch,
                "subscripted assignment to \"{column}\" requires type {want} but expression is of type {vt}"
            )
            .with_hint("You will need to rewrite or cast the expression.")
        };
        if bt == DataType::Jsonb {
            let mut keys = Vec::with_capacity(access_chain.len());
            let mut by_index = None;
            for a in access_chain {
                let (key, int) = self.jsonb_subscript(a, scope, agg)?;
                by_index.get_or_insert(int);
                keys.push(key);
            }
            if !matches!(vt, DataType::Jsonb | DataType::Unknown) {
                return Err(mismatch(&bt));
            }
            let v = self.coerce(v, &vt, &DataType::Jsonb)?;
            let empty = match by_index.unwrap_or(false) {
                true => sqltypes::json::Json::Array(Vec::new()),
                false => sqltypes::json::Json::Object(Vec::new()),
            };
            let empty = Expr::Const(Value::Jsonb(Box::new(empty)));
            let mut args = vec![Expr::Func(Func::Coalesce, vec![b, empty]), v];
            args.extend(keys);
            let assign = func::json::JsonFunc::Assign;
            return Ok((Expr::Func(Func::Json(assign), args), bt));
        }
        let Some(elem) = bt.elem().cloned().filter(|_| matches!(bt, DataType::Array(_))) else {
            bail!(
                DatatypeMismatch,
                "cannot subscript type {bt} because it does not support subscripting"
            );
        };
        let mut at = Vec::with_capacity(access_chain.len());
        for a in access_chain {
            let ast::AccessExpr::Subscript(ast::Subscript::Index { index }) = a else {
                bail!(FeatureNotSupported, "assignment to an array slice is not supported");
            };
            let (i, it) = self.expr_in(index, scope, agg)?;
            at.push(
                self.coerce(i, &it, &DataType::Int4).map_err(|_| {
                    err!(DatatypeMismatch, "array subscript must have type integer")
                })?,
            );
        }
        let v = match vt {
            DataType::Unknown => self.coerce(v, &vt, &elem)?,
            _ => self.coerce(v, &vt, &elem).map_err(|_| mismatch(&elem))?,
        };
        let empty = sqltypes::array::ArrayValue::new(elem, Vec::new()).into_value();
        let mut args = vec![Expr::Func(Func::Coalesce, vec![b, Expr::Const(empty)]), v];
        args.extend(at);
        Ok((array_call(ArrayFunc::Assign, args), bt))
    }

    /// `x op ANY (array)` / `x op ALL (array)`; with a subquery on the
    /// right, `= ANY` is IN and `<> ALL` is NOT IN.
    pub(super) fn any_all(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        if let Some(p) = pattern_op(op) {
            return self.match_any_all(left, p, right, all, scope, agg);
        }
        let Some(cmp) = operators::bin_op(op).filter(|o| o.is_comparison()) else {
            bail!(FeatureNotSupported, "operator {op} with ANY/ALL is not supported yet");
        };
        let mut inner = right;
        while let ast::Expr::Nested(e) = inner {
            inner = e;
        }
        if let ast::Expr::Subquery(q) = inner {
            let negated = match (cmp, all) {
                (BinOp::Eq, false) => false,
                (BinOp::NotEq, true) => true,
                _ => bail!(
                    FeatureNotSupported,
                    "{op} {} (subquery) is not supported yet",
                    if all { "ALL" } else { "ANY" }
                ),
            };
            let (x, xt) = self.expr_in(left, scope, agg)?;
            let (e, _) = self.subquery(q, scope, SubqKind::List, agg, Some((x, xt, negated)))?;
            return Ok((e, DataType::Bool));
        }
        let (lx, lt) = self.expr_in(left, scope, agg)?;
        let (rx, rt) = self.expr_in(right, scope, agg)?;
        let array_ty = match &rt {
            DataType::Array(_) | DataType::Int2Vector | DataType::OidVector => rt.clone(),
            DataType::Unknown if lt == DataType::Unknown => DataType::Text.array_of(),
            DataType::Unknown => strip_mod(&lt).array_of(),
            _ => bail!(WrongObjectType, "op ANY/ALL (array) requires array on right side"),
        };
        let elem = array_ty.elem().cloned().unwrap_or(DataType::Text);
        let t = match (&lt, &elem) {
            (DataType::Unknown, e) => e.clone(),
            _ => self
                .unify(&lt, &elem)
                .map_err(|_| operators::no_operator(&lt, &op.to_string(), &elem))?,
        };
        let lx = self.coerce(lx, &lt, &strip_mod(&t))?;
        let rx = self.coerce(rx, &rt, &array_ty)?;
        Ok((array_call(ArrayFunc::AnyAll(cmp, all), vec![lx, rx]), DataType::Bool))
    }

    /// `x LIKE ANY (array)`, `x ~ ALL (array)`, ...: x and the patterns
    /// are text.
    pub(super) fn match_any_all(
        &mut self,
        left: &ast::Expr,
        op: PatternOp,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let mut inner = right;
        while let ast::Expr::Nested(e) = inner {
            inner = e;
        }
        if let ast::Expr::Subquery(_) = inner {
            bail!(
                FeatureNotSupported,
                "pattern matching against ANY/ALL (subquery) is not supported yet"
            );
        }
        let (lx, lt) = self.expr_in(left, scope, agg)?;
        let (rx, rt) = self.expr_in(right, scope, agg)?;
        let text = DataType::Text;
        let elem = match &rt {
            DataType::Unknown => DataType::Unknown,
            DataType::Array(e) => (**e).clone(),
            _ => bail!(WrongObjectType, "op ANY/ALL (array) requires array on right side"),
        };
        let stringy = |t: &DataType| t.is_string() || *t == DataType::Unknown;
        if !stringy(&lt) || !stringy(&elem) {
            return Err(operators::no_operator(&lt, op.symbol(), &elem));
        }
        let patterns = text.array_of();
        let lx = self.coerce(lx, &lt, &text)?;
        let rx = self.coerce(rx, &rt, &patterns)?;
        Ok((array_call(ArrayFunc::MatchAnyAll(op, all), vec![lx, rx]), DataType::Bool))
    }

    /// The array operators `||`, `@>`, `<@` and `&&`, if an operand is an
    /// array (None: not an array operation).
    pub(super) fn array_operator(
        &mut self,
        op: &ast::BinaryOperator,
        (lx, lt): (Expr, DataType),
        (rx, rt): (Expr, DataType),
    ) -> Result<Option<(Expr, DataType)>> {
        use ast::BinaryOperator as O;
        let (la, ra) = (lt.elem().is_some(), rt.elem().is_some());
        if !la && !ra {
            return Ok(None);
        }
        let unknown = |t: &DataType| *t == DataType::Unknown;
        let (f, ty, l_to, r_to) = match op {
            O::StringConcat if (la && (ra || unknown(&rt))) || (ra && unknown(&lt)) => {
                let t = if la && ra {
                    self.unify(&lt, &rt)?
                } else if la {
                    lt.clone()
                } else {
                    rt.clone()
                };
                (ArrayFunc::Cat, t.clone(), t.clone(), t)
            }
            O::StringConcat if la => {
                let e = lt.elem().cloned().unwrap_or(DataType::Text);
                (ArrayFunc::Append, lt.clone(), lt.clone(), e)
            }
            O::StringConcat => {
                let e = rt.elem().cloned().unwrap_or(DataType::Text);
                (ArrayFunc::Prepend, rt.clone(), e, rt.clone())
            }
            O::AtArrow | O::ArrowAt | O::PGOverlap => {
                let t = match (la, ra) {
                    (true, true) => self.unify(&lt, &rt)?,
                    (true, false) if unknown(&rt) => lt.clone(),
                    (false, true) if unknown(&lt) => rt.clone(),
                    _ => bail!(UndefinedFunction, "operator does not exist: {lt} {op} {rt}"),
                };
                let f = match op {
                    O::AtArrow => ArrayFunc::Contains,
                    O::ArrowAt => ArrayFunc::ContainedBy,
                    _ => ArrayFunc::Overlaps,
                };
                (f, DataType::Bool, t.clone(), t)
            }
            _ => return Ok(None),
        };
        let lx = self.coerce(lx, &lt, &l_to)?;
        let rx = self.coerce(rx, &rt, &r_to)?;
        Ok(Some((array_call(f, vec![lx, rx]), ty)))
    }
}

/// `(x).field`: the field of a record-valued `x`.
fn field_of(x: Expr, ty: &DataType, field: &ast::Expr) -> Result<(Expr, DataType)> {
    let name = match field {
        ast::Expr::Identifier(i) => super::ident(i),
        other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
    };
    let DataType::Record(rt) = ty else {
        bail!(
            WrongObjectType,
            "column notation .{name} applied to type {ty}, which is not a composite type"
        );
    };
    match rt.field(&name) {
        Some(i) => Ok((Expr::Field(Box::new(x), i), rt.fields[i].1.clone())),
        None => bail!(UndefinedColumn, "could not identify column \"{name}\" in record data type"),
    }
}
