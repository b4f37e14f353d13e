//! Arbitrary-precision decimals with PostgreSQL's `numeric` semantics.
//!
//! A [`Numeric`] is a big decimal that remembers its display scale (so
//! `1.50` prints as `1.50`), or one of the special values NaN, Infinity and
//! -Infinity (PostgreSQL 14+). The order is -Infinity < every number <
//! Infinity < NaN, and NaN equals NaN, as in PostgreSQL's btree ordering.
//!
//! Result scales follow PostgreSQL's numeric.c so results print the same:
//! addition and subtraction keep the larger scale, multiplication the sum of
//! the scales, the remainder the larger scale, and division picks its scale
//! with `select_div_scale` (at least 16 significant digits and no less than
//! either input's scale, capped at 1000). Rounding is half away from zero.
//! Arithmetic is done on the unscaled integers directly, so no intermediate
//! result is rounded to some library precision.
//!
//! Finite values always have a scale of at least 0 (`1e5` is stored as
//! 100000 with scale 0). Limits are PostgreSQL's: at most 131072 digits
//! before the point and 16383 after.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use bigdecimal::{BigDecimal, RoundingMode};
use num_bigint::{BigInt, Sign};
use num_traits::{Signed, ToPrimitive, Zero};

use crate::{err, ErrorReport, Result};

mod transcendental;

/// Largest result scale division picks (PostgreSQL's NUMERIC_MAX_DISPLAY_SCALE).
pub const MAX_SCALE: i64 = 1000;

/// Largest display scale a value may have (NUMERIC_DSCALE_MAX).
const MAX_DSCALE: i64 = 16383;

/// Most digits before the decimal point (NUMERIC_WEIGHT_MAX + 1 groups of 4).
const MAX_INT_DIGITS: i64 = 131_072;

/// Fewest significant digits a quotient gets (NUMERIC_MIN_SIG_DIGITS).
const MIN_SIG_DIGITS: i64 = 16;

/// A numeric value: a decimal with a display scale, an infinity, or NaN.
#[derive(Debug, Clone)]
pub enum Numeric {
    /// Not a number; equal to itself and greater than everything else.
    NaN,
    /// Infinity, greater than every finite value.
    PosInf,
    /// -Infinity, less than every finite value.
    NegInf,
    /// A finite decimal whose scale (digits after the point) is >= 0.
    Val(BigDecimal),
}

fn overflow() -> ErrorReport {
    err!(NumericValueOutOfRange, "value overflows numeric format")
}

fn division_by_zero() -> ErrorReport {
    err!(DivisionByZero, "division by zero")
}

/// The unscaled integer and scale of a finite value.
fn parts(d: &BigDecimal) -> (BigInt, i64) {
    d.as_bigint_and_exponent()
}

fn pow10(n: i64) -> BigInt {
    num_traits::pow(BigInt::from(10u8), usize::try_from(n).unwrap_or(0))
}

/// `i` rescaled from `from` to a larger or equal scale `to`.
fn upscale(i: BigInt, from: i64, to: i64) -> BigInt {
    if to > from {
        i * pow10(to - from)
    } else {
        i
    }
}

/// Number of decimal digits of |i| (0 for zero).
fn digit_count(i: &BigInt) -> i64 {
    if i.is_zero() {
        0
    } else {
        i.magnitude().to_string().len() as i64
    }
}

/// `n / d` rounded half away from zero (d != 0).
fn div_round(n: &BigInt, d: &BigInt) -> BigInt {
    let (q, r) = (n / d, n % d);
    if (r.abs() * 2u8) >= d.abs() {
        if n.sign() == d.sign() {
            q + 1u8
        } else {
            q - 1u8
        }
    } else {
        q
    }
}

/// (a / 10^sa) / (b / 10^sb) as an integer at scale `to`, rounded half
/// away from zero (b != 0): a * 10^(to + sb - sa) / b, scaling one side.
fn div_parts((a, sa): (&BigInt, i64), (b, sb): (&BigInt, i64), to: i64) -> BigInt {
    let shift = to + sb - sa;
    if shift >= 0 {
        div_round(&(a * pow10(shift)), b)
    } else {
        div_round(a, &(b * pow10(-shift)))
    }
}

impl Numeric {
    /// Parses PostgreSQL numeric input (`1.50`, `-3`, `1e5`, ` NaN `,
    /// `-Infinity`): 22P02 for bad syntax, 22003 beyond the format's limits.
    pub fn parse(s: &str) -> Result<Numeric> {
        let t = s.trim();
        let bad =
            || err!(InvalidTextRepresentation, "invalid input syntax for type numeric: \"{s}\"");
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            "nan" => return Ok(Numeric::NaN),
            "infinity" | "+infinity" | "inf" | "+inf" => return Ok(Numeric::PosInf),
            "-infinity" | "-inf" => return Ok(Numeric::NegInf),
            _ => {}
        }
        let (mantissa, exp) = match t.find(['e', 'E']) {
            Some(i) => {
                let e = &t[i + 1..];
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                // Anything this large overflows once applied; don't build 10^huge.
                let e: i64 =
                    e.parse().unwrap_or(if e.starts_with('-') { i64::MIN } else { i64::MAX });
                if e.abs() > 2 * MAX_INT_DIGITS {
                    return Err(overflow());
                }
                (&t[..i], e)
            }
            None => (t, 0),
        };
        let body = mantissa.strip_prefix(['+', '-']).unwrap_or(mantissa);
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        let digits_ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !digits_ok(int) || !digits_ok(frac) {
            return Err(bad());
        }
        let unscaled = BigInt::from_str(&format!("{int}{frac}")).map_err(|_| bad())?;
        let unscaled = if mantissa.starts_with('-') { -unscaled } else { unscaled };
        let scale = frac.len() as i64 - exp;
        let n = if scale < 0 {
            Numeric::from_parts(unscaled * pow10(-scale), 0)
        } else {
            Numeric::from_parts(unscaled, scale)
        };
        n.checked()
    }

    /// Checks PostgreSQL's limits on digits before and after the point
    /// (22003 "value overflows numeric format" beyond them).
    pub fn checked(self) -> Result<Numeric> {
        if let Numeric::Val(d) = &self {
            let (i, scale) = parts(d);
            if scale > MAX_DSCALE || digit_count(&i) - scale > MAX_INT_DIGITS {
                return Err(overflow());
            }
        }
        Ok(self)
    }

    /// An integer value.
    pub fn from_i64(i: i64) -> Numeric {
        Numeric::Val(BigDecimal::from(i))
    }

    /// A finite value from an unscaled integer and a scale >= 0
    /// (`from_parts(150, 2)` is 1.50).
    pub fn from_parts(unscaled: BigInt, scale: i64) -> Numeric {
        Numeric::Val(BigDecimal::new(unscaled, scale.max(0)))
    }

    /// `unscaled * 10^-scale` from a machine integer (`from_scaled(150, 2)` is 1.50).
    pub fn from_scaled(unscaled: i128, scale: i64) -> Numeric {
        Numeric::from_parts(unscaled.into(), scale)
    }

    /// Converts a float as PostgreSQL's float8_numeric does: rounded to 15
    /// significant digits (DBL_DIG), so `0.1::float8::numeric` is 0.1.
    pub fn from_f64(f: f64) -> Result<Numeric> {
        if f.is_nan() {
            return Ok(Numeric::NaN);
        }
        if f.is_infinite() {
            return Ok(if f > 0.0 { Numeric::PosInf } else { Numeric::NegInf });
        }
        let sci = format!("{f:.14e}");
        let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let mant = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.')
        } else {
            mant
        };
        let n = Numeric::parse(&format!("{mant}e{exp}"))?;
        // -0 prints as 0.
        Ok(if n.is_zero() { Numeric::from_parts(BigInt::zero(), n.scale()) } else { n })
    }

    /// The value as f64, correctly rounded (NaN and infinities map to
    /// themselves; finite values too large become infinite).
    pub fn to_f64(&self) -> f64 {
        match self {
            Numeric::NaN => f64::NAN,
            Numeric::PosInf => f64::INFINITY,
            Numeric::NegInf => f64::NEG_INFINITY,
            Numeric::Val(d) => d.to_string().parse().unwrap_or(f64::NAN),
        }
    }

    /// Rounds half away from zero to an integer; None if not finite or out
    /// of the i64 range.
    pub fn to_i64_round(&self) -> Option<i64> {
        match self {
            Numeric::Val(d) => d.with_scale_round(0, RoundingMode::HalfUp).to_i64(),
            _ => None,
        }
    }

    /// The display scale (digits after the point; 0 for special values).
    pub fn scale(&self) -> i64 {
        match self {
            Numeric::Val(d) => d.fractional_digit_count().max(0),
            _ => 0,
        }
    }

    /// True for a finite zero of any scale.
    pub fn is_zero(&self) -> bool {
        matches!(self, Numeric::Val(d) if d.is_zero())
    }

    /// True for NaN.
    pub fn is_nan(&self) -> bool {
        matches!(self, Numeric::NaN)
    }

    /// True for Infinity and -Infinity.
    pub fn is_infinite(&self) -> bool {
        matches!(self, Numeric::PosInf | Numeric::NegInf)
    }

    /// The finite value, if any.
    pub fn value(&self) -> Option<&BigDecimal> {
        match self {
            Numeric::Val(d) => Some(d),
            _ => None,
        }
    }

    /// Rounds half away from zero to `scale` digits after the point (a
    /// negative scale rounds to tens, hundreds, ... as PostgreSQL's round()).
    pub fn round(&self, scale: i64) -> Numeric {
        let Numeric::Val(d) = self else { return self.clone() };
        let scale = scale.clamp(-MAX_SCALE, MAX_SCALE);
        let r = d.with_scale_round(scale, RoundingMode::HalfUp);
        Numeric::Val(if scale < 0 { r.with_scale(0) } else { r })
    }

    /// Truncates toward zero to `scale` digits after the point.
    pub fn trunc(&self, scale: i64) -> Numeric {
        let Numeric::Val(d) = self else { return self.clone() };
        let scale = scale.clamp(-MAX_SCALE, MAX_SCALE);
        let r = d.with_scale_round(scale, RoundingMode::Down);
        Numeric::Val(if scale < 0 { r.with_scale(0) } else { r })
    }

    /// Largest integer not greater than the value.
    pub fn floor(&self) -> Numeric {
        match self {
            Numeric::Val(d) => Numeric::Val(d.with_scale_round(0, RoundingMode::Floor)),
            _ => self.clone(),
        }
    }

    /// Smallest integer not less than the value.
    pub fn ceil(&self) -> Numeric {
        match self {
            Numeric::Val(d) => Numeric::Val(d.with_scale_round(0, RoundingMode::Ceiling)),
            _ => self.clone(),
        }
    }

    /// Applies a `numeric(precision, scale)` modifier: rounds to `scale` and
    /// fails with 22003 "numeric field overflow" if more than
    /// `precision - scale` integer digits remain or the value is infinite.
    pub fn apply_typmod(&self, precision: u32, scale: u32) -> Result<Numeric> {
        let d = match self {
            Numeric::NaN => return Ok(Numeric::NaN),
            Numeric::PosInf | Numeric::NegInf => {
                return Err(err!(NumericValueOutOfRange, "numeric field overflow").with_detail(
                    format!(
                "A field with precision {precision}, scale {scale} cannot hold an infinite value."
            ),
                ))
            }
            Numeric::Val(d) => d,
        };
        let r = d.with_scale_round(scale as i64, RoundingMode::HalfUp);
        let (int, sc) = parts(&r);
        let int_digits = digit_count(&int) - sc;
        let lim = precision.saturating_sub(scale);
        if int_digits > lim as i64 {
            let bound = if lim == 0 { "1".to_string() } else { format!("10^{lim}") };
            return Err(err!(NumericValueOutOfRange, "numeric field overflow").with_detail(format!(
                "A field with precision {precision}, scale {scale} must round to an absolute value less than {bound}."
            )));
        }
        Ok(Numeric::Val(r))
    }

    /// Applies an optional column modifier: `numeric(p,s)` rounds and checks
    /// the precision (see [`Numeric::apply_typmod`]); plain `numeric` keeps
    /// the value as is.
    pub fn round_to(&self, typmod: Option<(u32, u32)>) -> Result<Numeric> {
        match typmod {
            Some((p, s)) => self.apply_typmod(p, s),
            None => Ok(self.clone()),
        }
    }

    /// Sum; the scale is the larger input scale. Infinity + -Infinity is NaN.
    pub fn add(&self, o: &Numeric) -> Numeric {
        use Numeric::*;
        match (self, o) {
            (NaN, _) | (_, NaN) | (PosInf, NegInf) | (NegInf, PosInf) => NaN,
            (PosInf, _) | (_, PosInf) => PosInf,
            (NegInf, _) | (_, NegInf) => NegInf,
            (Val(a), Val(b)) => {
                let ((ia, sa), (ib, sb)) = (parts(a), parts(b));
                let s = sa.max(sb);
                Numeric::from_parts(upscale(ia, sa, s) + upscale(ib, sb, s), s)
            }
        }
    }

    /// Difference; the scale is the larger input scale.
    pub fn sub(&self, o: &Numeric) -> Numeric {
        self.add(&o.neg())
    }

    /// Product; the scale is the sum of the input scales. An infinity times
    /// zero is NaN.
    pub fn mul(&self, o: &Numeric) -> Numeric {
        use Numeric::*;
        match (self, o) {
            (NaN, _) | (_, NaN) => NaN,
            (Val(a), Val(b)) => {
                let ((ia, sa), (ib, sb)) = (parts(a), parts(b));
                Numeric::from_parts(ia * ib, sa + sb)
            }
            (x, y) => match x.sign() * y.sign() {
                0 => NaN,
                s if s > 0 => PosInf,
                _ => NegInf,
            },
        }
    }

    /// -1, 0 or 1 (0 for NaN).
    pub fn sign(&self) -> i32 {
        match self {
            Numeric::NaN => 0,
            Numeric::PosInf => 1,
            Numeric::NegInf => -1,
            Numeric::Val(d) => match d.sign() {
                Sign::Minus => -1,
                Sign::NoSign => 0,
                Sign::Plus => 1,
            },
        }
    }

    /// Negation.
    pub fn neg(&self) -> Numeric {
        match self {
            Numeric::NaN => Numeric::NaN,
            Numeric::PosInf => Numeric::NegInf,
            Numeric::NegInf => Numeric::PosInf,
            Numeric::Val(a) => Numeric::Val(-a.clone()),
        }
    }

    /// Absolute value.
    pub fn abs(&self) -> Numeric {
        match self {
            Numeric::NegInf => Numeric::PosInf,
            Numeric::Val(a) => Numeric::Val(a.abs()),
            other => other.clone(),
        }
    }

    /// Quotient with PostgreSQL's result scale (see the module docs),
    /// rounded half away from zero; 22012 on division by zero.
    pub fn div(&self, o: &Numeric) -> Result<Numeric> {
        use Numeric::*;
        match (self, o) {
            (NaN, _) | (_, NaN) => Ok(NaN),
            (PosInf | NegInf, PosInf | NegInf) => Ok(NaN),
            (PosInf | NegInf, y) => match y.sign() {
                0 => Err(division_by_zero()),
                s if s * self.sign() > 0 => Ok(PosInf),
                _ => Ok(NegInf),
            },
            (Val(_), PosInf | NegInf) => Ok(Numeric::from_i64(0)),
            (Val(a), Val(b)) => {
                if b.is_zero() {
                    return Err(division_by_zero());
                }
                let rscale = div_scale(a, b);
                self.div_scaled(o, rscale)
            }
        }
    }

    /// Finite quotient rounded to exactly `rscale` digits after the point.
    fn div_scaled(&self, o: &Numeric, rscale: i64) -> Result<Numeric> {
        let (Numeric::Val(a), Numeric::Val(b)) = (self, o) else { return Ok(Numeric::NaN) };
        let ((ia, sa), (ib, sb)) = (parts(a), parts(b));
        if ib.is_zero() {
            return Err(division_by_zero());
        }
        Numeric::from_parts(div_parts((&ia, sa), (&ib, sb), rscale), rscale).checked()
    }

    /// Remainder with the sign of the dividend and the larger input scale;
    /// 22012 on division by zero. `x % Infinity` is x; `Infinity % x` NaN.
    pub fn rem(&self, o: &Numeric) -> Result<Numeric> {
        use Numeric::*;
        match (self, o) {
            (NaN, _) | (_, NaN) => Ok(NaN),
            (PosInf | NegInf, y) if y.is_zero() => Err(division_by_zero()),
            (PosInf | NegInf, _) => Ok(NaN),
            (Val(_), PosInf | NegInf) => Ok(self.clone()),
            (Val(a), Val(b)) => {
                let ((ia, sa), (ib, sb)) = (parts(a), parts(b));
                if ib.is_zero() {
                    return Err(division_by_zero());
                }
                let s = sa.max(sb);
                Ok(Numeric::from_parts(upscale(ia, sa, s) % upscale(ib, sb, s), s))
            }
        }
    }

    /// Square root rounded half up to `rscale` digits after the point;
    /// 2201F for a negative value (NaN and Infinity map to themselves).
    pub fn sqrt_scaled(&self, rscale: i64) -> Result<Numeric> {
        use Numeric::*;
        match self {
            NaN | PosInf => Ok(self.clone()),
            NegInf => Err(err!(
                InvalidArgumentForPowerFunction,
                "cannot take square root of a negative number"
            )),
            Val(v) => {
                let (i, s) = parts(v);
                if i.sign() == num_bigint::Sign::Minus {
                    return Err(err!(
                        InvalidArgumentForPowerFunction,
                        "cannot take square root of a negative number"
                    ));
                }
                // sqrt(i / 10^s) * 10^(rscale+1) = sqrt(i * 10^(2*rscale+2-s)).
                let shift = 2 * rscale + 2 - s;
                let radicand = if shift >= 0 { i * pow10(shift) } else { i / pow10(-shift) };
                let root = radicand.sqrt();
                let rounded = (root + 5u8) / 10u8;
                Ok(Numeric::from_parts(rounded, rscale))
            }
        }
    }

    /// Average of `sum` over `count` rows, as PostgreSQL's avg() over
    /// integers or numerics computes it (numeric division of the sum).
    pub fn avg(sum: &Numeric, count: i64) -> Result<Numeric> {
        sum.div(&Numeric::from_i64(count))
    }

    /// Sign and base-10 digits with the exponent of the first digit, for the
    /// order-preserving key encoding: value = 0.d1d2d3... * 10^exp, trailing
    /// zero digits removed. None for NaN and the infinities.
    pub fn sign_digits_exponent(&self) -> Option<(Sign, Vec<u8>, i64)> {
        let Numeric::Val(d) = self else { return None };
        let (int, scale) = parts(d);
        if int.is_zero() {
            return Some((Sign::NoSign, vec![], 0));
        }
        let text = int.magnitude().to_string();
        let all = text.len() as i64;
        let digits: Vec<u8> = text.trim_end_matches('0').bytes().map(|b| b - b'0').collect();
        Some((int.sign(), digits, all - scale))
    }
}

/// Base-10000 weight and first base-10000 digit of a nonzero value, as
/// PostgreSQL stores numerics (value = digit * 10000^weight + ...).
fn nbase_weight_first(d: &BigDecimal) -> (i64, u32) {
    let Some((_, digits, exp)) = Numeric::Val(d.clone()).sign_digits_exponent() else {
        return (0, 0);
    };
    if digits.is_empty() {
        return (0, 0);
    }
    let weight = (exp - 1).div_euclid(4);
    let lead = (exp - 4 * weight) as usize; // 1..=4 decimal digits in the first group
    let first = (0..lead).fold(0u32, |acc, i| acc * 10 + *digits.get(i).unwrap_or(&0) as u32);
    (weight, first)
}

/// PostgreSQL's select_div_scale: at least 16 significant digits, no less
/// than either input's scale, at most 1000.
fn div_scale(a: &BigDecimal, b: &BigDecimal) -> i64 {
    let (w1, f1) = nbase_weight_first(a);
    let (w2, f2) = nbase_weight_first(b);
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    let rscale = MIN_SIG_DIGITS - qweight * 4;
    rscale
        .max(a.fractional_digit_count().max(0))
        .max(b.fractional_digit_count().max(0))
        .clamp(0, MAX_SCALE)
}

impl fmt::Display for Numeric {
    /// Prints as numeric_out: plain digits with the display scale kept.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Numeric::NaN => f.write_str("NaN"),
            Numeric::PosInf => f.write_str("Infinity"),
            Numeric::NegInf => f.write_str("-Infinity"),
            Numeric::Val(d) if d.fractional_digit_count() < 0 => {
                f.write_str(&d.with_scale(0).to_plain_string())
            }
            Numeric::Val(d) => f.write_str(&d.to_plain_string()),
        }
    }
}

impl PartialEq for Numeric {
    fn eq(&self, o: &Numeric) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, o: &Numeric) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Numeric {
    /// -Infinity < numbers < Infinity < NaN; 1.0 equals 1.
    fn cmp(&self, o: &Numeric) -> Ordering {
        fn rank(n: &Numeric) -> u8 {
            match n {
                Numeric::NegInf => 0,
                Numeric::Val(_) => 1,
                Numeric::PosInf => 2,
                Numeric::NaN => 3,
            }
        }
        match (self, o) {
            (Numeric::Val(a), Numeric::Val(b)) => a.cmp(b),
            _ => rank(self).cmp(&rank(o)),
        }
    }
}

impl Hash for Numeric {
    /// Equal values hash alike whatever their scale (1.0 and 1).
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self.sign_digits_exponent() {
            Some((sign, digits, exp)) => {
                (sign == Sign::Minus).hash(h);
                digits.hash(h);
                exp.hash(h);
            }
            None => std::mem::discriminant(self).hash(h),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).expect("valid numeric")
    }

    fn div(a: &str, b: &str) -> String {
        n(a).div(&n(b)).expect("divides").to_string()
    }

    #[test]
    fn parses_and_displays_like_postgres() {
        assert_eq!(n("1.50").to_string(), "1.50");
        assert_eq!(n("1e5").to_string(), "100000");
        assert_eq!(n("1.23e3").to_string(), "1230");
        assert_eq!(n("1e-5").to_string(), "0.00001");
        assert_eq!(n("-0.001").to_string(), "-0.001");
        assert_eq!(n("-0.00").to_string(), "0.00");
        assert_eq!(n(" .5 ").to_string(), "0.5");
        assert_eq!(n("5.").to_string(), "5");
        assert_eq!(n("00012.50").to_string(), "12.50");
        assert_eq!(n("nan").to_string(), "NaN");
        assert_eq!(n("inf").to_string(), "Infinity");
        assert_eq!(n("-Infinity").to_string(), "-Infinity");
        for bad in ["", "abc", "1..2", "1e", "1e5.5", "1_000", "0x10", "--1", "."] {
            let e = Numeric::parse(bad).expect_err(bad);
            assert_eq!(e.message, format!("invalid input syntax for type numeric: \"{bad}\""));
        }
        for big in ["1e131072", "1e-16384", "1e1000000", "1e99999999999999999999"] {
            let e = Numeric::parse(big).expect_err(big);
            assert_eq!(e.message, "value overflows numeric format");
        }
        assert!(Numeric::parse("1e131071").is_ok());
    }

    #[test]
    fn arithmetic_scales() {
        assert_eq!(n("1.5").add(&n("2.25")).to_string(), "3.75");
        assert_eq!(n("1.50").sub(&n("1.50")).to_string(), "0.00");
        assert_eq!(n("1.5").mul(&n("2.25")).to_string(), "3.375");
        assert_eq!(n("1").mul(&n("1.0000")).to_string(), "1.0000");
        assert_eq!(n("1.0000").mul(&n("1.0000")).to_string(), "1.00000000");
        assert_eq!(n("-3.7").rem(&n("2")).expect("rem").to_string(), "-1.7");
        assert_eq!(n("10.5").rem(&n("3.25")).expect("rem").to_string(), "0.75");
    }

    #[test]
    fn division_like_postgres() {
        assert_eq!(div("1", "3"), "0.33333333333333333333");
        assert_eq!(div("10", "4"), "2.5000000000000000");
        assert_eq!(div("10.00", "3"), "3.3333333333333333");
        assert_eq!(div("1", "7"), "0.14285714285714285714");
        assert_eq!(div("100000", "3"), "33333.333333333333");
        assert_eq!(div("0.0001", "3"), "0.000033333333333333333333");
        assert_eq!(div("123456789", "0.000001"), "123456789000000.000000");
        assert_eq!(div("1", "99999"), "0.000010000100001000010000");
        assert_eq!(div("5.55555", "1.11111"), "5.0000000000000000");
        assert_eq!(div("-2", "3"), "-0.66666666666666666667");
        let e = n("1").div(&n("0")).expect_err("zero");
        assert_eq!(e.message, "division by zero");
        assert_eq!(e.code, crate::SqlState::DivisionByZero);
    }

    #[test]
    fn special_values() {
        assert_eq!(div("NaN", "0"), "NaN");
        assert_eq!(div("1.0", "Infinity"), "0");
        assert!(n("Infinity").div(&n("0")).is_err());
        assert_eq!(n("Infinity").mul(&n("0")).to_string(), "NaN");
        assert_eq!(n("inf").sub(&n("inf")).to_string(), "NaN");
        assert_eq!(n("Infinity").add(&n("1.50")).to_string(), "Infinity");
        assert_eq!(n("5").rem(&n("Infinity")).expect("rem").to_string(), "5");
        assert_eq!(n("Infinity").rem(&n("2")).expect("rem").to_string(), "NaN");
        assert_eq!(n("NaN").rem(&n("0")).expect("rem").to_string(), "NaN");
        assert!(n("-Infinity") < n("-1e100"));
        assert!(n("Infinity") > n("1e100"));
        assert!(n("NaN") > n("Infinity"));
        assert_eq!(n("NaN"), n("nan"));
        assert_eq!(n("1.0"), n("1"));
    }

    #[test]
    fn typmod() {
        assert_eq!(n("1.235").apply_typmod(5, 2).expect("fits").to_string(), "1.24");
        assert_eq!(n("-1.235").apply_typmod(5, 2).expect("fits").to_string(), "-1.24");
        assert_eq!(n("999.994").apply_typmod(5, 2).expect("fits").to_string(), "999.99");
        assert_eq!(n("12").apply_typmod(5, 2).expect("fits").to_string(), "12.00");
        assert_eq!(n("1234.5678").apply_typmod(6, 2).expect("fits").to_string(), "1234.57");
        let e = n("999.995").apply_typmod(5, 2).expect_err("overflow");
        assert_eq!(e.message, "numeric field overflow");
        assert_eq!(
            e.detail.as_deref(),
            Some(
                "A field with precision 5, scale 2 must round to an absolute value less than 10^3."
            )
        );
        let e = n("0.5").apply_typmod(2, 2).map(|v| v.to_string());
        assert_eq!(e.ok().as_deref(), Some("0.50"));
        let e = n("1").apply_typmod(2, 2).expect_err("overflow");
        assert_eq!(
            e.detail.as_deref(),
            Some("A field with precision 2, scale 2 must round to an absolute value less than 1.")
        );
        let e = n("Infinity").apply_typmod(5, 2).expect_err("infinite");
        assert_eq!(
            e.detail.as_deref(),
            Some("A field with precision 5, scale 2 cannot hold an infinite value.")
        );
    }

    #[test]
    fn float_conversions() {
        let f = |x: f64| Numeric::from_f64(x).expect("finite").to_string();
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(1.0 / 3.0), "0.333333333333333");
        assert_eq!(f(1e20), "100000000000000000000");
        assert_eq!(f(1.5e-7), "0.00000015");
        assert_eq!(f(9.223372036854776e18), "9223372036854780000");
        assert_eq!(f(-0.0), "0");
        assert_eq!(n("0.1").to_f64(), 0.1);
        assert_eq!(n("-Infinity").to_f64(), f64::NEG_INFINITY);
        assert_eq!(n("2.5").to_i64_round(), Some(3));
        assert_eq!(n("-2.5").to_i64_round(), Some(-3));
    }

    #[test]
    fn hash_ignores_scale() {
        use std::collections::hash_map::DefaultHasher;
        let h = |x: &Numeric| {
            let mut s = DefaultHasher::new();
            x.hash(&mut s);
            s.finish()
        };
        assert_eq!(h(&n("1.500")), h(&n("1.5")));
        assert_eq!(h(&n("0.00")), h(&n("0")));
        assert_ne!(h(&n("15")), h(&n("1.5")));
    }
}
