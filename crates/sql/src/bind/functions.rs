//! Binding function calls: built-in scalar functions (resolved once, see
//! `func.rs`), aggregates (collected into the query level's [`AggState`]),
//! and window calls (handed to `window.rs`).

use super::*;

impl Binder<'_> {
    pub(super) fn function(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        if let [part] = f.name.0.as_slice() {
            let marker = part
                .as_ident()
                .is_some_and(|i| i.quote_style == Some('"') && i.value == crate::parse::FIELDS);
            if marker {
                bail!(FeatureNotSupported, "row expansion via \"*\" is not supported here");
            }
        }
        let name = object_name(&f.name)?;
        if let ast::FunctionArguments::List(list) = &f.args {
            if let Some(args) = self.named_user_call(&f.name, &list.args)? {
                let mut call = f.clone();
                call.args = ast::FunctionArguments::List(ast::FunctionArgumentList {
                    args,
                    ..list.clone()
                });
                return self.function(&call, scope, agg);
            }
        }
        if let Some(call) = positional_call(&name, f)? {
            return self.function(&call, scope, agg);
        }
        if let ast::FunctionArguments::List(list) = &f.args {
            if let Some(given) = named_args(&list.args)? {
                let mut shown = Vec::with_capacity(given.len());
                for (key, e) in &given {
                    let t = self.expr_in(e, scope, agg)?.1;
                    shown.push(match key {
                        Some(k) => format!("{k} => {t}"),
                        None => t.to_string(),
                    });
                }
                return Err(crate::func::no_such_call(&name, &shown));
            }
        }
        let normalized;
        let f = match name.as_str() {
            "normalize" => match normalize_call(f)? {
                Some(call) => {
                    normalized = call;
                    &normalized
                }
                None => f,
            },
            _ => f,
        };
        if f.over.is_some() {
            return self.window_function(f, &name, scope, agg);
        }
        if is_aggregate(&name) {
            bail!(GroupingError, "aggregate functions are not allowed here");
        }
        if f.filter.is_some() {
            bail!(WrongObjectType, "FILTER specified, but {name} is not an aggregate function");
        }
        if let ("array", ast::FunctionArguments::Subquery(q)) = (name.as_str(), &f.args) {
            return self.array_subquery(q, scope, agg);
        }
        let args = function_args(f)?;
        if name == crate::parse::MULTI_ASSIGN {
            return self.multi_assign(&args, scope, agg);
        }
        if let [Some(a)] = args.as_slice() {
            if name == crate::parse::VARIADIC {
                // The array itself, where a variadic parameter takes it.
                return self.expr_in(a, scope, agg);
            }
        }
        if name == "pg_typeof" {
            let a = only_argument(&name, &args)?;
            // regtype's output: format_type without a modifier.
            let (_, t) = self.expr_in(a, scope, agg)?;
            let shown = match crate::deparse::unmodified(&t) {
                DataType::Char(_) => "character".to_string(),
                DataType::Array(e) if matches!(*e, DataType::Char(_)) => "character[]".to_string(),
                t => t.to_string(),
            };
            return Ok((Expr::Const(Value::Text(shown)), DataType::Text));
        }
        if name == crate::parse::SUBSCRIPT_ASSIGN {
            return self.subscript_assign(&args, scope, agg);
        }
        if name == "pg_collation_for" {
            return self.collation_for(only_argument(&name, &args)?, scope, agg);
        }
        if let Some(r) = self.sql_function_call(f, &args, scope, agg)? {
            return Ok(r);
        }
        let spread = args.last().copied().flatten().and_then(super::variadic_argument);
        let fixed = &args[..args.len() - spread.map_or(0, |_| 1)];
        let mut bound = Vec::with_capacity(args.len());
        for a in fixed {
            match a {
                Some(a) => bound.push(self.expr_in(a, scope, agg)?),
                None => bail!(SyntaxError, "syntax error at or near \"*\""),
            }
        }
        if let Some(whole) = spread {
            return self.spread_call(f, &name, bound, whole, scope, agg);
        }
        if let Some(r) = enum_function(&name, &bound) {
            return Ok(r);
        }
        self.call_named(object_schema(&f.name).as_deref(), &name, bound)
    }

    /// `COLLATION FOR (x)`, pg_collation_for(x): the name of x's
    /// collation, quoted as an identifier; NULL for an unknown literal.
    fn collation_for(
        &mut self,
        x: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let (_, t) = self.expr_in(x, scope, agg)?;
        let mut written = x;
        while let ast::Expr::Nested(inner) = written {
            written = inner;
        }
        let oid = match written {
            ast::Expr::Collate { collation, .. } => crate::bind::collation(collation)?,
            _ => match self.column_collation(written, scope) {
                Some(oid) => oid,
                None => crate::system::collation(&t) as u32,
            },
        };
        let name = match crate::system::collation_name(oid) {
            Some(name) => Some(name),
            None if t == DataType::Unknown => None,
            None => bail!(DatatypeMismatch, "collations are not supported by type {t}"),
        };
        let shown = name.map(|n| Value::Text(crate::builtins::quote_identifier(n)));
        Ok((Expr::Const(shown.unwrap_or(Value::Null)), DataType::Text))
    }

    /// The collation of its own (see `ColumnDef::collation`) of the table
    /// column `x` names, if it is one that has one.
    fn column_collation(&self, x: &ast::Expr, scope: &Scope) -> Option<u32> {
        let (q, name) = match x {
            ast::Expr::Identifier(i) => (None, ident(i)),
            ast::Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [.., q, c] => (Some(ident(q)), ident(c)),
                _ => return None,
            },
            _ => return None,
        };
        let col = &scope.cols[scope.resolve(q.as_deref(), &name).ok()?];
        let table = self.catalog.table_by_oid(col.table_oid)?;
        let column = table.columns.get(usize::try_from(col.column_id).ok()?.checked_sub(1)?)?;
        column.collation
    }

    /// A built-in variadic call whose last argument is `VARIADIC array`
    /// (`bound` are the others): resolved as if the array's elements were
    /// its last arguments, which they become when it runs.
    fn spread_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        bound: Vec<(Expr, DataType)>,
        whole: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let (array, t) = self.expr_in(whole, scope, agg)?;
        let (array, t) = match t {
            DataType::Unknown => {
                let t = DataType::Text.array_of();
                (self.coerce(array, &DataType::Unknown, &t)?, t)
            }
            t => (array, t),
        };
        let mut types: Vec<DataType> = bound.iter().map(|(_, t)| t.clone()).collect();
        // The built-ins whose variadic parameter is "any" (pg_proc's
        // provariadic 2276).
        let spreadable =
            crate::builtins::procs().iter().any(|p| p.name == name && p.variadic == 2276);
        if !spreadable || object_schema(&f.name).is_some_and(|s| s != "pg_catalog") {
            types.push(t);
            return Err(crate::func::no_such_function(name, &types));
        }
        let Some(elem) = t.elem().cloned() else {
            bail!(DatatypeMismatch, "VARIADIC argument must be an array");
        };
        // Elements pass to a variadic built-in as "any"; two stand for
        // however many the array has (json_build_object takes pairs).
        types.extend([elem.clone(), elem]);
        let n = bound.len();
        let (func, ty, targets) = builtin(name, &types)?;
        let (Expr::Func(func, mut out), ty) =
            self.apply((func, ty, targets.into_iter().take(n).collect()), bound)?
        else {
            bail!(InternalError, "a built-in call bound to no function");
        };
        out.push(Expr::Func(crate::func::Func::Spread, vec![array]));
        Ok((Expr::Func(func, out), ty))
    }

    /// Resolves built-in `name` for bound arguments and coerces them to the
    /// parameter types.
    pub(super) fn call(
        &mut self,
        name: &str,
        bound: Vec<(Expr, DataType)>,
    ) -> Result<(Expr, DataType)> {
        let types: Vec<DataType> = bound.iter().map(|(_, t)| t.clone()).collect();
        let resolved = builtin(name, &types)?;
        self.apply(resolved, bound)
    }

    /// Resolves `schema.name` (schema optional) for bound arguments: a
    /// built-in function, or one of an installed extension (the built-ins,
    /// in pg_catalog, come first on the search path), and coerces the
    /// arguments to its parameter types.
    fn call_named(
        &mut self,
        schema: Option<&str>,
        name: &str,
        bound: Vec<(Expr, DataType)>,
    ) -> Result<(Expr, DataType)> {
        let types: Vec<DataType> = bound.iter().map(|(_, t)| t.clone()).collect();
        let cat = self.catalog;
        let found = match schema {
            Some(s) if s != "pg_catalog" => crate::extensions::resolve(cat, Some(s), name, &types)
                .unwrap_or_else(|| builtin(name, &types)),
            _ => match builtin(name, &types) {
                Err(e) if e.code == sqlstate::SqlState::UndefinedFunction && schema.is_none() => {
                    crate::extensions::resolve(cat, None, name, &types).unwrap_or(Err(e))
                }
                r => r,
            },
        };
        match found {
            Err(e) if e.code == sqlstate::SqlState::UndefinedFunction && bound.len() == 1 => {
                match self.type_named(schema, name) {
                    Some(target) => self.function_style_cast(bound, target),
                    None => Err(e),
                }
            }
            found => self.apply(found?, bound),
        }
    }

    /// The type a function name names, for a call that is a cast written
    /// as a function (`int8(x)`, `text(x)`, `"timestamp"(x)`), as
    /// PostgreSQL reads a one-argument call no function matches.
    /// Gives the name as a type name and the type it resolves to.
    fn type_named(&self, schema: Option<&str>, name: &str) -> Option<(ast::DataType, DataType)> {
        let mut parts: Vec<ast::Ident> = schema.map(ast::Ident::new).into_iter().collect();
        parts.push(ast::Ident::with_quote('"', name));
        let dt = ast::DataType::Custom(ast::ObjectName::from(parts), Vec::new());
        match catalog_type(self.catalog, &dt) {
            Ok(DataType::Record(_)) | Err(_) => None,
            Ok(to) => Some((dt, to)),
        }
    }

    /// `bound`'s one argument cast to the type `dt` names (`to`).
    fn function_style_cast(
        &mut self,
        mut bound: Vec<(Expr, DataType)>,
        (dt, to): (ast::DataType, DataType),
    ) -> Result<(Expr, DataType)> {
        let (x, from) = bound.remove(0);
        let x = self.explicit_cast(x, &from, &to)?;
        Ok((self.to_domain(x, &dt)?, to))
    }

    /// A resolved call with its arguments coerced to the parameter types.
    fn apply(
        &mut self,
        (func, ty, targets): crate::extensions::Resolved,
        bound: Vec<(Expr, DataType)>,
    ) -> Result<(Expr, DataType)> {
        let mut out = Vec::with_capacity(bound.len());
        for (i, (x, t)) in bound.into_iter().enumerate() {
            out.push(match targets.get(i).cloned().flatten() {
                Some(target) => self.coerce(x, &t, &target)?,
                None => x,
            });
        }
        Ok((Expr::Func(func, out), ty))
    }

    pub(super) fn aggregate(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
        state: &mut AggState,
    ) -> Result<Option<(Expr, DataType)>> {
        let name = object_name(&f.name)?;
        if !is_aggregate(&name) || f.over.is_some() {
            return Ok(None);
        }
        if name == "grouping" {
            return self.grouping(f, scope, state).map(Some);
        }
        let key = ast::Expr::Function(f.clone());
        let ng = state.group.len();
        if let Some(i) = state.agg_asts.iter().position(|a| *a == key) {
            return Ok(Some((Expr::Column(ng + i), state.aggs[i].ty.clone())));
        }
        let call = self.agg_call(f, &name, scope, &mut None)?;
        let ty = call.ty.clone();
        state.aggs.push(call);
        state.agg_asts.push(key);
        Ok(Some((Expr::Column(ng + state.aggs.len() - 1), ty)))
    }

    /// GROUPING(args): one bit per argument, the first the most
    /// significant, set where the row's grouping set does not group by
    /// it. Each argument must be one of the query's grouping expressions.
    /// The value depends only on the set, so it is read from the set's
    /// position, which the Aggregate node emits as a hidden aggregate.
    fn grouping(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
        state: &mut AggState,
    ) -> Result<(Expr, DataType)> {
        let args = function_args(f)?;
        if args.is_empty() {
            bail!(SyntaxError, "syntax error at or near \")\"");
        }
        if args.len() > 31 {
            bail!(TooManyArguments, "GROUPING must have fewer than 32 arguments");
        }
        let mut positions = Vec::with_capacity(args.len());
        for a in args {
            let Some(a) = a else { bail!(SyntaxError, "syntax error at or near \"*\"") };
            let found = match state.group_asts.iter().position(|g| g == a) {
                Some(p) => Some(p),
                None => {
                    let (x, _) = self.expr(a, scope)?;
                    state.group.iter().position(|(g, _)| *g == x)
                }
            };
            match found {
                Some(p) if !state.is_dependent(p) => positions.push(p),
                _ => bail!(
                    GroupingError,
                    "arguments to GROUPING must be grouping expressions of the associated query level"
                ),
            }
        }
        let bits = |set: &[usize]| {
            positions.iter().fold(0i32, |acc, p| acc << 1 | i32::from(!set.contains(p)))
        };
        let int = |v: i32| Expr::Const(Value::Int4(v));
        let Some(sets) = &state.sets else { return Ok((int(0), DataType::Int4)) };
        let values: Vec<i32> = sets.iter().map(|s| bits(s)).collect();
        if values.iter().all(|v| *v == values[0]) {
            return Ok((int(values[0]), DataType::Int4));
        }
        let set = Expr::Column(state.group.len() + state.set_position());
        let whens = values.into_iter().enumerate().map(|(i, v)| (int(i as i32), int(v))).collect();
        Ok((Expr::Case(Some(Box::new(set)), whens, None), DataType::Int4))
    }

    /// Binds aggregate `name`'s call: FILTER, DISTINCT, the argument over the
    /// rows it aggregates (`over`: None for the input rows, the grouping
    /// state for a window aggregate over grouped rows), and the result type.
    pub(crate) fn agg_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &Scope,
        over: &mut Option<&mut AggState>,
    ) -> Result<AggCall> {
        if !f.within_group.is_empty()
            || matches!(name, "percentile_cont" | "percentile_disc" | "mode")
        {
            return self.ordered_set_call(f, name, scope, over);
        }
        let mut order = Vec::new();
        if let ast::FunctionArguments::List(l) = &f.args {
            for clause in &l.clauses {
                let ast::FunctionArgumentClause::OrderBy(keys) = clause else {
                    bail!(
                        FeatureNotSupported,
                        "{clause} inside aggregate calls is not supported yet"
                    );
                };
                for o in keys {
                    let (expr, _) = self.expr_in(&o.expr, scope, over)?;
                    order.push(crate::select::sort_key(expr, o));
                }
            }
        }
        let filter = self.agg_filter(f, scope, over)?;
        let distinct = matches!(&f.args, ast::FunctionArguments::List(l) if matches!(l.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct)));
        let args = function_args(f)?;
        let mut call = match (name, args.as_slice()) {
            ("count", [None]) | ("count", []) => AggCall {
                func: AggFunc::CountStar,
                arg: None,
                distinct: false,
                filter,
                extra: None,
                order,
                ty: DataType::Int8,
            },
            ("string_agg", [Some(a), Some(d)]) => {
                let (x, t) = self.expr_in(a, scope, over)?;
                let (dx, dt) = self.expr_in(d, scope, over)?;
                let t = if t == DataType::Unknown { DataType::Text } else { t };
                if !t.is_string() {
                    bail!(UndefinedFunction, "function string_agg({t}, {dt}) does not exist");
                }
                let extra = Some(self.coerce(dx, &dt, &DataType::Text)?);
                AggCall {
                    func: AggFunc::StringAgg,
                    arg: Some(x),
                    distinct,
                    filter,
                    extra,
                    order,
                    ty: DataType::Text,
                }
            }
            ("json_object_agg" | "jsonb_object_agg", [Some(k), Some(v)]) => {
                let (kx, kt) = self.expr_in(k, scope, over)?;
                let (vx, vt) = self.expr_in(v, scope, over)?;
                let kx = if kt == DataType::Unknown {
                    self.coerce(kx, &kt, &DataType::Text)?
                } else {
                    kx
                };
                let vx = if vt == DataType::Unknown {
                    self.coerce(vx, &vt, &DataType::Text)?
                } else {
                    vx
                };
                let jsonb = name == "jsonb_object_agg";
                AggCall {
                    func: AggFunc::JsonObjectAgg(jsonb),
                    arg: Some(kx),
                    distinct,
                    filter,
                    extra: Some(vx),
                    order,
                    ty: if jsonb { DataType::Jsonb } else { DataType::Json },
                }
            }
            (_, [Some(y), Some(x)]) if crate::plan::Regr::named(name).is_some() => {
                let regr = crate::plan::Regr::named(name).unwrap_or(crate::plan::Regr::Count);
                let (yx, yt) = self.expr_in(y, scope, over)?;
                let (xx, xt) = self.expr_in(x, scope, over)?;
                for t in [&yt, &xt] {
                    if !(t.is_numeric() || *t == DataType::Unknown) {
                        return Err(func::no_such_function(name, &[yt.clone(), xt.clone()]));
                    }
                }
                let y = self.coerce(yx, &yt, &DataType::Float8)?;
                let x = self.coerce(xx, &xt, &DataType::Float8)?;
                let ty = if regr == crate::plan::Regr::Count {
                    DataType::Int8
                } else {
                    DataType::Float8
                };
                AggCall {
                    func: AggFunc::Regr(regr),
                    arg: Some(y),
                    distinct,
                    filter,
                    extra: Some(x),
                    order,
                    ty,
                }
            }
            (_, [Some(a)]) => {
                // Aggregate arguments see the raw input row (a window
                // aggregate over grouped rows: the groups).
                let (x, t) = self.expr_in(a, scope, over)?;
                let unknown = t == DataType::Unknown;
                let t = if unknown { DataType::Text } else { t };
                let (func, ty) = match name {
                    "count" => (AggFunc::Count, DataType::Int8),
                    "sum" => (AggFunc::Sum, sum_type(&t)?),
                    "avg" => (AggFunc::Avg, avg_type(&t)?),
                    "min" | "max" if !has_min_max(&t) => {
                        return Err(func::no_such_function(name, &[t]))
                    }
                    "min" => (AggFunc::Min, t.clone()),
                    "max" => (AggFunc::Max, t.clone()),
                    "bool_and" | "every" => (AggFunc::BoolAnd, DataType::Bool),
                    "bool_or" => (AggFunc::BoolOr, DataType::Bool),
                    "variance" | "var_samp" | "var_pop" | "stddev" | "stddev_samp"
                    | "stddev_pop" => {
                        let spread = Spread {
                            population: name.ends_with("_pop"),
                            root: name.starts_with("stddev"),
                        };
                        let ty = match &t {
                            DataType::Int2 | DataType::Int4 | DataType::Int8 => {
                                DataType::Numeric(None)
                            }
                            DataType::Numeric(_) => DataType::Numeric(None),
                            DataType::Float4 | DataType::Float8 => DataType::Float8,
                            // A literal is read as double precision.
                            _ if unknown => DataType::Float8,
                            other => {
                                bail!(UndefinedFunction, "function {name}({other}) does not exist")
                            }
                        };
                        (AggFunc::Spread(spread), ty)
                    }
                    "bit_and" | "bit_or"
                        if matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8) =>
                    {
                        (AggFunc::Bits(name == "bit_and"), t.clone())
                    }
                    "array_agg" if t.elem().is_none() => {
                        (AggFunc::ArrayAgg, strip_mod(&t).array_of())
                    }
                    "json_agg" => (AggFunc::JsonAgg(false), DataType::Json),
                    "jsonb_agg" => (AggFunc::JsonAgg(true), DataType::Jsonb),
                    _ => bail!(UndefinedFunction, "function {name}({t}) does not exist"),
                };
                AggCall { func, arg: Some(x), distinct, filter, extra: None, order, ty }
            }
            _ => bail!(
                UndefinedFunction,
                "function {name} with {} arguments does not exist",
                args.len()
            ),
        };
        // DISTINCT sorts the values first, so an order-sensitive aggregate
        // without ORDER BY sees them in order, as in PostgreSQL.
        let ordered =
            matches!(call.func, AggFunc::StringAgg | AggFunc::ArrayAgg | AggFunc::JsonAgg(_));
        if call.distinct && call.order.is_empty() && ordered {
            if let Some(arg) = &call.arg {
                call.order.push(crate::plan::SortKey {
                    expr: arg.clone(),
                    desc: false,
                    nulls_first: false,
                });
            }
        }
        Ok(call)
    }
}

impl Binder<'_> {
    /// An aggregate call's FILTER condition, bound as a boolean.
    fn agg_filter(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
        over: &mut Option<&mut AggState>,
    ) -> Result<Option<Expr>> {
        let Some(w) = &f.filter else { return Ok(None) };
        let (x, t) = self.expr_in(w, scope, over)?;
        Ok(Some(self.coerce(x, &t, &DataType::Bool)?))
    }

    /// An ordered-set aggregate: percentile_cont(f), percentile_disc(f) or
    /// mode() WITHIN GROUP (ORDER BY x). The rows' values of x are
    /// aggregated in that order; the fraction, the same for every row of a
    /// group, rides along as the extra argument.
    fn ordered_set_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &Scope,
        over: &mut Option<&mut AggState>,
    ) -> Result<AggCall> {
        // PostgreSQL's error names the direct arguments' and the ordering
        // columns' types.
        let args = function_args(f)?;
        let mut types = Vec::new();
        for a in args.iter().flatten() {
            types.push(self.expr_in(a, scope, over)?.1);
        }
        for k in &f.within_group {
            types.push(self.expr_in(&k.expr, scope, over)?.1);
        }
        let ordered_set = matches!(name, "percentile_cont" | "percentile_disc" | "mode");
        let [key] = f.within_group.as_slice() else {
            return Err(func::no_such_function(name, &types));
        };
        if !ordered_set {
            return Err(func::no_such_function(name, &types));
        }
        let filter = self.agg_filter(f, scope, over)?;
        let (x, t) = self.expr_in(&key.expr, scope, over)?;
        let t = if t == DataType::Unknown { DataType::Text } else { t };
        let (func, ty, extra, x) = match (name, args.as_slice()) {
            ("mode", []) => (AggFunc::Mode, t.clone(), None, x),
            ("percentile_cont" | "percentile_disc", [Some(a)]) => {
                let (fx, ft) = self.expr_in(a, scope, over)?;
                if ft.elem().is_some() {
                    bail!(
                        FeatureNotSupported,
                        "{name} over an array of fractions is not supported yet"
                    );
                }
                let fraction = Some(self.coerce(fx, &ft, &DataType::Float8)?);
                match name {
                    "percentile_disc" => (AggFunc::Percentile(false), t.clone(), fraction, x),
                    _ if t.is_numeric() => {
                        let x = self.coerce(x, &t, &DataType::Float8)?;
                        (AggFunc::Percentile(true), DataType::Float8, fraction, x)
                    }
                    _ => return Err(func::no_such_function(name, &types)),
                }
            }
            _ => return Err(func::no_such_function(name, &types)),
        };
        let order = vec![crate::select::sort_key(x.clone(), key)];
        Ok(AggCall { func, arg: Some(x), distinct: false, filter, extra, order, ty })
    }
}

/// True if min and max take `t`: not bool, bytea, json, jsonb, records or
/// ranges, which have an order but no such aggregate in PostgreSQL (uuid
/// has them here, an extension: see datetime_types.slt).
fn has_min_max(t: &DataType) -> bool {
    !matches!(
        t,
        DataType::Bool
            | DataType::Bytea
            | DataType::Json
            | DataType::Jsonb
            | DataType::Record(_)
            | DataType::Range(_)
    )
}

/// The one argument of a call of `name` that takes one (42883 otherwise).
fn only_argument<'e>(name: &str, args: &[Option<&'e ast::Expr>]) -> Result<&'e ast::Expr> {
    match args {
        [Some(a)] => Ok(a),
        _ => {
            bail!(UndefinedFunction, "function {name} with {} arguments does not exist", args.len())
        }
    }
}

fn sum_type(t: &DataType) -> Result<DataType> {
    Ok(match t {
        DataType::Int2 | DataType::Int4 => DataType::Int8,
        DataType::Int8 | DataType::Numeric(_) => DataType::Numeric(None),
        DataType::Float8 => DataType::Float8,
        DataType::Float4 => DataType::Float4,
        DataType::Interval => DataType::Interval,
        other => bail!(UndefinedFunction, "function sum({other}) does not exist"),
    })
}

fn avg_type(t: &DataType) -> Result<DataType> {
    Ok(match t {
        DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Numeric(_) => {
            DataType::Numeric(None)
        }
        DataType::Float8 | DataType::Float4 => DataType::Float8,
        DataType::Interval => DataType::Interval,
        other => bail!(UndefinedFunction, "function avg({other}) does not exist"),
    })
}

/// The built-in function `name` names for arguments of these types.
fn builtin(name: &str, types: &[DataType]) -> Result<crate::extensions::Resolved> {
    // Each family's resolver answers for its own names only.
    macro_rules! families {
        ($($module:ident => $variant:ident),+ $(,)?) => {
            None $(.or_else(|| {
                func::$module::resolve(name, types)
                    .map(|r| r.map(|(f, ty, t)| (func::Func::$variant(f), ty, t)))
            }))+
        };
    }
    let resolved = families!(
        arrays => Array,
        json => Json,
        datetime => Date,
        regex => Regex,
        advisory => Advisory,
        server => Server,
        digests => Digest,
        privileges => Privilege,
        strings => Str,
        network => Net,
        ranges => Range,
        math => Math,
    );
    match resolved {
        Some(resolved) => resolved,
        None => {
            let (f, ty) = func::resolve(name, types)?;
            let targets = (0..types.len()).map(|i| func::arg_target(f, &ty, i)).collect();
            Ok((f, ty, targets))
        }
    }
}

/// True for the names of aggregate functions (and of GROUPING, which
/// like them makes a query grouped and reads its groups).
pub fn is_aggregate(name: &str) -> bool {
    matches!(
        name,
        "count"
            | "grouping"
            | "sum"
            | "avg"
            | "min"
            | "max"
            | "bool_and"
            | "bool_or"
            | "every"
            | "variance"
            | "var_samp"
            | "var_pop"
            | "stddev"
            | "stddev_samp"
            | "stddev_pop"
            | "bit_and"
            | "bit_or"
            | "percentile_cont"
            | "percentile_disc"
            | "mode"
            | "corr"
            | "covar_pop"
            | "covar_samp"
            | "regr_count"
            | "regr_avgx"
            | "regr_avgy"
            | "regr_sxx"
            | "regr_syy"
            | "regr_sxy"
            | "regr_slope"
            | "regr_intercept"
            | "regr_r2"
            | "string_agg"
            | "array_agg"
            | "json_agg"
            | "jsonb_agg"
            | "json_object_agg"
            | "jsonb_object_agg"
    )
}

/// A call with named arguments (`make_interval(days => 3)`) rewritten
/// with every argument in its place, as the built-in function's pg_proc
/// row names and defaults its parameters; None for a call without names.
fn positional_call(name: &str, f: &ast::Function) -> Result<Option<ast::Function>> {
    let ast::FunctionArguments::List(list) = &f.args else { return Ok(None) };
    let Some(given) = named_args(&list.args)? else { return Ok(None) };
    let keys: Vec<&str> = given.iter().filter_map(|(k, _)| k.as_deref()).collect();
    let candidate = crate::builtins::procs().iter().filter(|p| p.name == name).find_map(|p| {
        let names = p.argnames.as_deref()?;
        let names: Vec<&str> = names.trim_matches(|c| c == '{' || c == '}').split(',').collect();
        keys.iter().all(|k| names.contains(k)).then_some((p, names))
    });
    let Some((p, names)) = candidate else { return Ok(None) };
    let defaults = parameter_defaults(&p.arguments);
    let args = place_args(name, &names, &defaults, given)?
        .into_iter()
        .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)))
        .collect();
    let mut call = f.clone();
    call.args = ast::FunctionArguments::List(ast::FunctionArgumentList { args, ..list.clone() });
    Ok(Some(call))
}

/// The arguments of a call with named ones (`named_args`) in their
/// parameters' places, up to the last one given; a gap takes its
/// parameter's default.
pub(crate) fn place_args(
    name: &str,
    names: &[&str],
    defaults: &[Option<ast::Expr>],
    given: NamedArgs,
) -> Result<Vec<ast::Expr>> {
    let mut slots: Vec<Option<ast::Expr>> = vec![None; names.len()];
    for (i, (key, e)) in given.into_iter().enumerate() {
        let at = match key {
            Some(k) => names.iter().position(|n| *n == k).unwrap_or(i),
            None => i,
        };
        if at >= slots.len() {
            bail!(UndefinedFunction, "function {name} with {} arguments does not exist", at + 1);
        }
        if slots[at].is_some() {
            bail!(SyntaxError, "argument name \"{}\" used more than once", names[at]);
        }
        slots[at] = Some(e);
    }
    let last = slots.iter().rposition(Option::is_some).unwrap_or(0);
    let mut args = Vec::with_capacity(last + 1);
    for (i, slot) in slots.into_iter().take(last + 1).enumerate() {
        args.push(match (slot, defaults.get(i).cloned().flatten()) {
            (Some(e), _) => e,
            (None, Some(d)) => d,
            (None, None) => bail!(
                UndefinedFunction,
                "function {name} has no default for parameter {}",
                names[i]
            ),
        });
    }
    Ok(args)
}

/// A call's arguments, each with its name if it is given one.
pub(crate) type NamedArgs = Vec<(Option<String>, ast::Expr)>;

/// A call's arguments as (name, value) when at least one is named
/// (`f(1, b => 2)`, or `b := 2`); None when none is.
pub(crate) fn named_args(args: &[ast::FunctionArg]) -> Result<Option<NamedArgs>> {
    // `name := value` reaches here as an assignment expression.
    let assignment = |a: &ast::FunctionArg| match a {
        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::Assignment,
            right,
        })) => match left.as_ref() {
            ast::Expr::Identifier(id) => Some((ident(id), right.as_ref().clone())),
            _ => None,
        },
        _ => None,
    };
    let named = |a: &ast::FunctionArg| {
        matches!(a, ast::FunctionArg::Named { .. } | ast::FunctionArg::ExprNamed { .. })
            || assignment(a).is_some()
    };
    if !args.iter().any(named) {
        return Ok(None);
    }
    let mut given: NamedArgs = Vec::new();
    for a in args {
        if let Some((key, e)) = assignment(a) {
            given.push((Some(key), e));
            continue;
        }
        let (key, arg) = match a {
            ast::FunctionArg::Named { name, arg, .. } => (Some(ident(name)), arg),
            ast::FunctionArg::ExprNamed { name: ast::Expr::Identifier(id), arg, .. } => {
                (Some(ident(id)), arg)
            }
            ast::FunctionArg::Unnamed(arg) => (None, arg),
            other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
        };
        let ast::FunctionArgExpr::Expr(e) = arg else {
            bail!(SyntaxError, "syntax error at or near \"*\"")
        };
        if key.is_none() && given.iter().any(|(k, _)| k.is_some()) {
            bail!(SyntaxError, "positional argument cannot follow named argument");
        }
        if let Some(k) = &key {
            if given.iter().any(|(g, _)| g.as_ref() == Some(k)) {
                bail!(SyntaxError, "argument name \"{k}\" used more than once");
            }
        }
        given.push((key, e.clone()));
    }
    Ok(Some(given))
}

/// Each parameter's DEFAULT expression in pg_get_function_arguments text
/// (`years integer DEFAULT 0, ...`), None where it has none.
fn parameter_defaults(arguments: &str) -> Vec<Option<ast::Expr>> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0usize);
    for (i, c) in arguments.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(&arguments[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&arguments[start..]);
    parts
        .into_iter()
        .map(|p| {
            p.split_once(" DEFAULT ").and_then(|(_, d)| crate::parse::expr_text(d.trim()).ok())
        })
        .collect()
}

/// normalize(s, NFKC): the form is a keyword in PostgreSQL's grammar, read
/// here as the text `'NFKC'`; anything else there is a syntax error. None
/// for normalize(s).
fn normalize_call(f: &ast::Function) -> Result<Option<ast::Function>> {
    let args = function_args(f)?;
    let [Some(_), Some(form)] = args.as_slice() else { return Ok(None) };
    let word = match form {
        ast::Expr::Identifier(i) if i.quote_style.is_none() => i.value.to_ascii_uppercase(),
        other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
    };
    if !matches!(word.as_str(), "NFC" | "NFD" | "NFKC" | "NFKD") {
        bail!(SyntaxError, "syntax error at or near \"{form}\"");
    }
    let mut call = f.clone();
    if let ast::FunctionArguments::List(list) = &mut call.args {
        let text = ast::Expr::Value(ast::Value::SingleQuotedString(word).into());
        list.args[1] = ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(text));
    }
    Ok(Some(call))
}

/// The plain arguments of a function call; `*` becomes None.
pub fn function_args(f: &ast::Function) -> Result<Vec<Option<&ast::Expr>>> {
    match &f.args {
        ast::FunctionArguments::None => Ok(vec![]),
        ast::FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(Some(e)),
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => Ok(None),
                other => bail!(FeatureNotSupported, "function argument not supported: {other}"),
            })
            .collect(),
        ast::FunctionArguments::Subquery(_) => {
            bail!(FeatureNotSupported, "subquery function arguments are not supported")
        }
    }
}

/// True if the expression contains an aggregate call of this query level
/// (aggregates inside subqueries belong to the subquery).
pub fn contains_aggregate(e: &ast::Expr) -> bool {
    contains_call(e, &is_aggregate)
}

/// True if the expression contains a GROUPING call of this query level.
pub fn contains_grouping(e: &ast::Expr) -> bool {
    contains_call(e, &|n| n == "grouping")
}

/// True if the expression contains a call, not over a window, of a
/// function whose name passes `named`, outside subqueries.
fn contains_call(e: &ast::Expr, named: &dyn Fn(&str) -> bool) -> bool {
    use ast::Expr as E;
    let contains_aggregate = |e: &ast::Expr| contains_call(e, named);
    let any = |v: &[&ast::Expr]| v.iter().any(|x| contains_aggregate(x));
    match e {
        E::Function(f) => {
            // A windowed aggregate is a window function, not an aggregate.
            if f.over.is_none() && object_name(&f.name).map(|n| named(&n)).unwrap_or(false) {
                return true;
            }
            function_args(f)
                .map(|args| args.into_iter().flatten().any(contains_aggregate))
                .unwrap_or(false)
        }
        E::BinaryOp { left, right, .. } => any(&[left, right]),
        E::UnaryOp { expr, .. } | E::Nested(expr) | E::Cast { expr, .. } => {
            contains_aggregate(expr)
        }
        E::IsNull(x)
        | E::IsNotNull(x)
        | E::IsTrue(x)
        | E::IsFalse(x)
        | E::IsNotTrue(x)
        | E::IsNotFalse(x) => contains_aggregate(x),
        E::Between { expr, low, high, .. } => any(&[expr, low, high]),
        E::InList { expr, list, .. } => {
            contains_aggregate(expr) || list.iter().any(contains_aggregate)
        }
        E::InSubquery { expr, .. } => contains_aggregate(expr),
        E::Like { expr, pattern, .. } | E::ILike { expr, pattern, .. } => any(&[expr, pattern]),
        E::Case { operand, conditions, else_result, .. } => {
            operand.as_deref().map(contains_aggregate).unwrap_or(false)
                || conditions
                    .iter()
                    .any(|c| contains_aggregate(&c.condition) || contains_aggregate(&c.result))
                || else_result.as_deref().map(contains_aggregate).unwrap_or(false)
        }
        _ => false,
    }
}

/// enum_first, enum_last and enum_range(x): only the argument's type
/// matters (its value may be NULL), so the result is a constant made from
/// the type's labels as bound. None for other calls, which resolve as usual.
fn enum_function(name: &str, bound: &[(Expr, DataType)]) -> Option<(Expr, DataType)> {
    let [(_, DataType::Enum(t))] = bound else { return None };
    let value = |l: &sqltypes::enums::EnumLabel| sqltypes::enums::from_label_oid(t, l.oid);
    let ty = DataType::Enum(t.clone());
    let v = match name {
        "enum_first" => t.labels.first().and_then(value).unwrap_or(Value::Null),
        "enum_last" => t.labels.last().and_then(value).unwrap_or(Value::Null),
        "enum_range" => {
            let items = t.labels.iter().filter_map(value).collect();
            let array = sqltypes::array::ArrayValue::new(ty.clone(), items).into_value();
            return Some((Expr::Const(array), ty.array_of()));
        }
        _ => return None,
    };
    Some((Expr::Const(v), ty))
}
