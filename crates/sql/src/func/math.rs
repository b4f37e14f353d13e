//! Mathematical functions beyond the basic ones in func.rs: sqrt, power,
//! exp, ln, log, log10, cbrt, pi, degrees, radians, the trigonometric and
//! hyperbolic functions, div, gcd, lcm, factorial, width_bucket, scale,
//! min_scale and trim_scale, with PostgreSQL 15's errors.
//!
//! sqrt, power, exp, ln, log and log10 come in double precision and in
//! numeric, chosen as PostgreSQL chooses: a numeric argument (and no
//! double precision one) calls the numeric version, which computes in
//! decimal with PostgreSQL's result scales (`sqrt(2.0)` is
//! 1.414213562373095); integers and unknown literals call the double
//! precision one. log(b, x) exists for numeric only.

use sqltypes::{cast, DataType, Numeric, Value};

use crate::error::Result;
use crate::{bail, err};

/// One function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathFunc {
    /// A function of one double precision value.
    Unary(Unary),
    /// power(x, y) in double precision
    Power,
    /// sqrt, exp, ln or log10 of one numeric value (the other unary
    /// functions have no numeric version).
    Numeric(Unary),
    /// power(x, y) in numeric
    NumericPower,
    /// log(b, x): the logarithm of x to base b, in numeric
    LogBase,
    /// atan2(y, x)
    Atan2,
    /// pi()
    Pi,
    /// div(y, x): the integer quotient, truncated
    Div,
    /// gcd(a, b)
    Gcd,
    /// lcm(a, b)
    Lcm,
    /// factorial(n)
    Factorial,
    /// width_bucket(operand, low, high, count)
    WidthBucket,
    /// scale(numeric): its digits after the point
    Scale,
    /// min_scale(numeric): the fewest digits after the point that keep
    /// its value
    MinScale,
    /// trim_scale(numeric): the value with min_scale digits
    TrimScale,
}

/// The double precision functions of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary {
    Sqrt,
    Exp,
    Ln,
    Log10,
    Cbrt,
    Degrees,
    Radians,
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
}

/// A resolved call: the function, its result type, its argument types.
pub type Resolved = (MathFunc, DataType, Vec<Option<DataType>>);

/// The function `name` names with these arguments; None if `name` is not
/// one of them.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    use DataType::{Float8, Int4, Int8, Numeric as Num};
    let unary = match name {
        "sqrt" => Some(Unary::Sqrt),
        "exp" => Some(Unary::Exp),
        "ln" => Some(Unary::Ln),
        "log" | "log10" => Some(Unary::Log10),
        "cbrt" => Some(Unary::Cbrt),
        "degrees" => Some(Unary::Degrees),
        "radians" => Some(Unary::Radians),
        "sin" => Some(Unary::Sin),
        "cos" => Some(Unary::Cos),
        "tan" => Some(Unary::Tan),
        "cot" => Some(Unary::Cot),
        "asin" => Some(Unary::Asin),
        "acos" => Some(Unary::Acos),
        "atan" => Some(Unary::Atan),
        "sinh" => Some(Unary::Sinh),
        "cosh" => Some(Unary::Cosh),
        "tanh" => Some(Unary::Tanh),
        "asinh" => Some(Unary::Asinh),
        "acosh" => Some(Unary::Acosh),
        "atanh" => Some(Unary::Atanh),
        _ => None,
    };
    let number = |t: &DataType| t.is_numeric() || *t == DataType::Unknown;
    let integer = |t: &DataType| matches!(t, DataType::Int2 | DataType::Int4 | DataType::Unknown);
    let f8 = Some(Float8);
    let num = Some(Num(None));
    // The numeric version where an argument is numeric and none is a float.
    let numeric = args.iter().any(|t| matches!(t, Num(_))) && !args.iter().any(is_float);
    let has_numeric = matches!(unary, Some(Unary::Sqrt | Unary::Exp | Unary::Ln | Unary::Log10));
    let r = match (name, args) {
        (_, [t]) if numeric && number(t) && has_numeric => {
            (MathFunc::Numeric(unary?), Num(None), vec![num])
        }
        (_, [t]) if unary.is_some() && number(t) => {
            (MathFunc::Unary(unary.unwrap_or(Unary::Exp)), Float8, vec![f8])
        }
        ("power" | "pow", [a, b]) if number(a) && number(b) => {
            if numeric {
                (MathFunc::NumericPower, Num(None), vec![num.clone(), num])
            } else {
                (MathFunc::Power, Float8, vec![f8.clone(), f8])
            }
        }
        ("log", [a, b]) if number(a) && number(b) => {
            (MathFunc::LogBase, Num(None), vec![num.clone(), num])
        }
        ("atan2", [a, b]) if number(a) && number(b) => {
            (MathFunc::Atan2, Float8, vec![f8.clone(), f8])
        }
        ("pi", []) => (MathFunc::Pi, Float8, vec![]),
        ("div", [a, b]) if number(a) && number(b) => {
            (MathFunc::Div, Num(None), vec![num.clone(), num])
        }
        ("gcd" | "lcm", [a, b]) if integer(a) && integer(b) => {
            let f = if name == "gcd" { MathFunc::Gcd } else { MathFunc::Lcm };
            (f, Int4, vec![Some(Int4), Some(Int4)])
        }
        ("gcd" | "lcm", [a, b]) if number(a) && number(b) && !is_float(a) && !is_float(b) => {
            let f = if name == "gcd" { MathFunc::Gcd } else { MathFunc::Lcm };
            match (a, b) {
                (Num(_), _) | (_, Num(_)) => (f, Num(None), vec![num.clone(), num]),
                _ => (f, Int8, vec![Some(Int8), Some(Int8)]),
            }
        }
        ("factorial", [t]) if number(t) && !is_float(t) => {
            (MathFunc::Factorial, Num(None), vec![Some(Int8)])
        }
        ("width_bucket", [a, b, c, d]) if [a, b, c].into_iter().all(number) && number(d) => {
            (MathFunc::WidthBucket, Int4, vec![f8.clone(), f8.clone(), f8, Some(Int4)])
        }
        ("scale" | "min_scale", [t]) if number(t) => {
            let f = if name == "scale" { MathFunc::Scale } else { MathFunc::MinScale };
            (f, Int4, vec![num])
        }
        ("trim_scale", [t]) if number(t) => (MathFunc::TrimScale, Num(None), vec![num]),
        _ if unary.is_some() => return Some(Err(super::no_such_function(name, args))),
        (
            "power" | "pow" | "atan2" | "pi" | "div" | "gcd" | "lcm" | "factorial" | "width_bucket"
            | "scale" | "min_scale" | "trim_scale",
            _,
        ) => return Some(Err(super::no_such_function(name, args))),
        _ => return None,
    };
    Some(Ok(r))
}

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float4 | DataType::Float8)
}

/// Evaluates `f` (all are strict).
pub fn call(f: MathFunc, args: Vec<Value>) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let float = |i: usize| -> Result<f64> {
        match cast::cast(args[i].clone(), &DataType::Float8)? {
            Value::Float8(x) => Ok(x),
            other => bail!(InternalError, "expected a double, got {other:?}"),
        }
    };
    let numeric = |i: usize| -> Result<Numeric> {
        match cast::cast(args[i].clone(), &DataType::Numeric(None))? {
            Value::Numeric(x) => Ok(x),
            other => bail!(InternalError, "expected a numeric, got {other:?}"),
        }
    };
    Ok(match f {
        MathFunc::Unary(u) => Value::Float8(unary(u, float(0)?)?),
        MathFunc::Pi => Value::Float8(std::f64::consts::PI),
        MathFunc::Atan2 => Value::Float8(float(0)?.atan2(float(1)?)),
        MathFunc::Power => Value::Float8(power(float(0)?, float(1)?)?),
        MathFunc::Numeric(f) => {
            let x = numeric(0)?;
            Value::Numeric(match f {
                Unary::Sqrt => x.sqrt()?,
                Unary::Exp => x.exp()?,
                Unary::Ln => x.ln()?,
                Unary::Log10 => x.log(&Numeric::from_i64(10))?,
                other => bail!(InternalError, "no numeric {other:?}"),
            })
        }
        MathFunc::NumericPower => Value::Numeric(numeric(0)?.power(&numeric(1)?)?),
        MathFunc::LogBase => Value::Numeric(numeric(1)?.log(&numeric(0)?)?),
        MathFunc::Div => {
            let (y, x) = (numeric(0)?, numeric(1)?);
            if x.is_zero() {
                bail!(DivisionByZero, "division by zero");
            }
            let q = y.div(&x)?;
            Value::Numeric(q.trunc(0))
        }
        MathFunc::Gcd | MathFunc::Lcm => match (&args[0], &args[1]) {
            (Value::Int4(a), Value::Int4(b)) => {
                let r = gcd_lcm(f, i64::from(*a), i64::from(*b))?;
                Value::Int4(i32::try_from(r).map_err(|_| out_of_range("integer"))?)
            }
            (Value::Int8(a), Value::Int8(b)) => Value::Int8(gcd_lcm(f, *a, *b)?),
            _ => {
                let (a, b) = (numeric(0)?, numeric(1)?);
                let (Some(a), Some(b)) = (a.to_i64_round(), b.to_i64_round()) else {
                    bail!(
                        FeatureNotSupported,
                        "gcd and lcm of non-integral numerics are not supported"
                    );
                };
                Value::Numeric(Numeric::from_i64(gcd_lcm(f, a, b)?))
            }
        },
        MathFunc::Factorial => {
            let Value::Int8(n) = args[0] else {
                bail!(InternalError, "factorial of {:?}", args[0])
            };
            if n < 0 {
                bail!(NumericValueOutOfRange, "factorial of a negative number is undefined");
            }
            if n > 32177 {
                bail!(NumericValueOutOfRange, "value overflows numeric format");
            }
            let mut acc = Numeric::from_i64(1);
            for i in 2..=n {
                acc = acc.mul(&Numeric::from_i64(i));
            }
            Value::Numeric(acc)
        }
        MathFunc::WidthBucket => {
            let (x, low, high) = (float(0)?, float(1)?, float(2)?);
            let Value::Int4(count) = args[3] else { bail!(InternalError, "width_bucket count") };
            Value::Int4(width_bucket(x, low, high, count)?)
        }
        MathFunc::Scale => Value::Int4(numeric(0)?.scale() as i32),
        MathFunc::MinScale => Value::Int4(min_scale(&numeric(0)?) as i32),
        MathFunc::TrimScale => {
            let x = numeric(0)?;
            let s = min_scale(&x);
            Value::Numeric(x.round(s))
        }
    })
}

fn out_of_range(ty: &str) -> crate::error::Error {
    err!(NumericValueOutOfRange, "{ty} out of range")
}

/// One double precision function, with PostgreSQL's domain errors.
fn unary(u: Unary, x: f64) -> Result<f64> {
    let out_of_range = || err!(NumericValueOutOfRange, "input is out of range");
    Ok(match u {
        Unary::Sqrt if x < 0.0 => {
            bail!(InvalidArgumentForPowerFunction, "cannot take square root of a negative number")
        }
        Unary::Sqrt => x.sqrt(),
        Unary::Exp => {
            let r = x.exp();
            if r.is_infinite() && x.is_finite() {
                bail!(NumericValueOutOfRange, "value out of range: overflow");
            }
            r
        }
        Unary::Ln | Unary::Log10 => {
            if x == 0.0 {
                bail!(InvalidArgumentForLog, "cannot take logarithm of zero");
            }
            if x < 0.0 {
                bail!(InvalidArgumentForLog, "cannot take logarithm of a negative number");
            }
            if u == Unary::Ln {
                x.ln()
            } else {
                x.log10()
            }
        }
        Unary::Cbrt => x.cbrt(),
        Unary::Degrees => x.to_degrees(),
        Unary::Radians => x.to_radians(),
        Unary::Sin | Unary::Cos | Unary::Tan | Unary::Cot if x.is_infinite() => {
            return Err(out_of_range())
        }
        Unary::Sin => x.sin(),
        Unary::Cos => x.cos(),
        Unary::Tan => x.tan(),
        Unary::Cot => 1.0 / x.tan(),
        Unary::Asin | Unary::Acos if !(-1.0..=1.0).contains(&x) => return Err(out_of_range()),
        Unary::Asin => x.asin(),
        Unary::Acos => x.acos(),
        Unary::Atan => x.atan(),
        Unary::Sinh => x.sinh(),
        Unary::Cosh => x.cosh(),
        Unary::Tanh => x.tanh(),
        Unary::Asinh => x.asinh(),
        Unary::Acosh if x < 1.0 => return Err(out_of_range()),
        Unary::Acosh => x.acosh(),
        Unary::Atanh if !(-1.0..=1.0).contains(&x) => return Err(out_of_range()),
        Unary::Atanh => x.atanh(),
    })
}

/// x ^ y in double precision with PostgreSQL's rules (float.c's dpow):
/// 1 for NaN ^ 0 and 1 ^ NaN, 2201F where there is no real result, 22003
/// where a finite result overflows or underflows.
pub fn power(x: f64, y: f64) -> Result<f64> {
    if x.is_nan() {
        return Ok(if y == 0.0 { 1.0 } else { f64::NAN });
    }
    if y.is_nan() {
        return Ok(if x == 1.0 { 1.0 } else { f64::NAN });
    }
    if x == 0.0 && y < 0.0 {
        bail!(InvalidArgumentForPowerFunction, "zero raised to a negative power is undefined");
    }
    if x < 0.0 && y.is_finite() && y.floor() != y {
        bail!(
            InvalidArgumentForPowerFunction,
            "a negative number raised to a non-integer power yields a complex result"
        );
    }
    let r = x.powf(y);
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        bail!(NumericValueOutOfRange, "value out of range: overflow");
    }
    if r == 0.0 && x != 0.0 && x.is_finite() && y.is_finite() {
        bail!(NumericValueOutOfRange, "value out of range: underflow");
    }
    Ok(r)
}

/// gcd or lcm of two integers (gcd's result is never negative; 22003
/// where it does not fit).
fn gcd_lcm(f: MathFunc, a: i64, b: i64) -> Result<i64> {
    let gcd = {
        let (mut x, mut y) = (a.unsigned_abs(), b.unsigned_abs());
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    let too_big = || out_of_range("bigint");
    if f == MathFunc::Gcd {
        return i64::try_from(gcd).map_err(|_| too_big());
    }
    if a == 0 || b == 0 {
        return Ok(0);
    }
    let lcm = (a.unsigned_abs() / gcd).checked_mul(b.unsigned_abs()).ok_or_else(too_big)?;
    i64::try_from(lcm).map_err(|_| too_big())
}

/// The bucket of `x` among `count` equal buckets from `low` to `high`
/// (0 below, count + 1 above; the buckets run downward when high < low).
fn width_bucket(x: f64, low: f64, high: f64, count: i32) -> Result<i32> {
    if count <= 0 {
        bail!(InvalidArgumentForWidthBucketFunction, "count must be greater than zero");
    }
    if x.is_nan() || low.is_nan() || high.is_nan() {
        bail!(
            InvalidArgumentForWidthBucketFunction,
            "operand, lower bound, and upper bound cannot be NaN"
        );
    }
    if low.is_infinite() || high.is_infinite() {
        bail!(InvalidArgumentForWidthBucketFunction, "lower and upper bounds must be finite");
    }
    if low == high {
        bail!(InvalidArgumentForWidthBucketFunction, "lower bound cannot equal upper bound");
    }
    let n = f64::from(count);
    let bucket = if low < high {
        if x < low {
            0.0
        } else if x >= high {
            n + 1.0
        } else {
            (n * ((x - low) / (high - low))).floor() + 1.0
        }
    } else if x > low {
        0.0
    } else if x <= high {
        n + 1.0
    } else {
        (n * ((low - x) / (low - high))).floor() + 1.0
    };
    i32::try_from(bucket as i64).map_err(|_| out_of_range("integer"))
}

/// The fewest digits after the point that represent `x` exactly.
fn min_scale(x: &Numeric) -> i64 {
    let text = x.to_string();
    match text.split_once('.') {
        Some((_, frac)) => frac.trim_end_matches('0').len() as i64,
        None => 0,
    }
}
