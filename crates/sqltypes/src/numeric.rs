//! Arbitrary-precision decimals with PostgreSQL's `numeric` semantics.
//!
//! A [`Numeric`] is a big decimal that remembers its display scale (so
//! `1.50` prints as `1.50`) or NaN. NaN equals NaN and sorts above every
//! number, as in PostgreSQL. Division picks its result scale the way
//! PostgreSQL's `select_div_scale` does: at least 16 significant digits and
//! no less than either input's scale.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use bigdecimal::{BigDecimal, RoundingMode};
use num_bigint::Sign;
use num_traits::{ToPrimitive, Zero};

use crate::{err, Result};

/// Largest display scale PostgreSQL allows.
pub const MAX_SCALE: i64 = 1000;

/// A numeric value: a decimal with a display scale, or NaN.
#[derive(Debug, Clone)]
pub enum Numeric {
    /// Not a number.
    NaN,
    /// A finite decimal.
    Val(BigDecimal),
}

impl Numeric {
    /// Parses PostgreSQL numeric input (`1.50`, `-3`, `1e5`, ` NaN `).
    pub fn parse(s: &str) -> Result<Numeric> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("nan") {
            return Ok(Numeric::NaN);
        }
        let valid = !t.is_empty()
            && t.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
            && t.chars().any(|c| c.is_ascii_digit());
        let bad =
            || err!(InvalidTextRepresentation, "invalid input syntax for type numeric: \"{s}\"");
        if !valid {
            return Err(bad());
        }
        let d = BigDecimal::from_str(t).map_err(|_| bad())?;
        // `1e5` has a negative scale internally; PostgreSQL shows it as 100000.
        let d = if d.fractional_digit_count() < 0 { d.with_scale(0) } else { d };
        if d.fractional_digit_count() > MAX_SCALE || d.digits() > 131072 {
            return Err(err!(NumericValueOutOfRange, "value overflows numeric format"));
        }
        Ok(Numeric::Val(d))
    }

    /// An integer value.
    pub fn from_i64(i: i64) -> Numeric {
        Numeric::Val(BigDecimal::from(i))
    }

    /// Converts a float (NaN stays NaN; infinities are out of range).
    pub fn from_f64(f: f64) -> Result<Numeric> {
        if f.is_nan() {
            return Ok(Numeric::NaN);
        }
        if f.is_infinite() {
            return Err(err!(FeatureNotSupported, "cannot convert infinity to numeric"));
        }
        // Shortest round-trip text, then exact decimal parse: what PG shows.
        Numeric::parse(&format!("{f}"))
    }

    /// The value as f64 (NaN for NaN).
    pub fn to_f64(&self) -> f64 {
        match self {
            Numeric::NaN => f64::NAN,
            Numeric::Val(d) => d.to_f64().unwrap_or(f64::NAN),
        }
    }

    /// Rounds half away from zero to an integer; None if NaN or out of range.
    pub fn to_i64_round(&self) -> Option<i64> {
        match self {
            Numeric::NaN => None,
            Numeric::Val(d) => d.with_scale_round(0, RoundingMode::HalfUp).to_i64(),
        }
    }

    /// The display scale (digits after the point).
    pub fn scale(&self) -> i64 {
        match self {
            Numeric::NaN => 0,
            Numeric::Val(d) => d.fractional_digit_count().max(0),
        }
    }

    /// Rounds half away from zero to `scale` digits after the point.
    pub fn round(&self, scale: i64) -> Numeric {
        match self {
            Numeric::NaN => Numeric::NaN,
            Numeric::Val(d) => Numeric::Val(
                d.with_scale_round(scale.clamp(-MAX_SCALE, MAX_SCALE).max(0), RoundingMode::HalfUp),
            ),
        }
    }

    /// Largest integer not greater than the value.
    pub fn floor(&self) -> Numeric {
        match self {
            Numeric::NaN => Numeric::NaN,
            Numeric::Val(d) => Numeric::Val(d.with_scale_round(0, RoundingMode::Floor)),
        }
    }

    /// Smallest integer not less than the value.
    pub fn ceil(&self) -> Numeric {
        match self {
            Numeric::NaN => Numeric::NaN,
            Numeric::Val(d) => Numeric::Val(d.with_scale_round(0, RoundingMode::Ceiling)),
        }
    }

    /// Applies a `numeric(precision, scale)` modifier: rounds to `scale` and
    /// fails with 22003 if more than `precision - scale` integer digits remain.
    pub fn apply_typmod(&self, precision: u32, scale: u32) -> Result<Numeric> {
        let Numeric::Val(d) = self else { return Ok(Numeric::NaN) };
        let r = d.with_scale_round(scale as i64, RoundingMode::HalfUp);
        let int_digits = {
            let (int, _) = r.with_scale_round(0, RoundingMode::Down).as_bigint_and_exponent();
            if int.is_zero() {
                0
            } else {
                int.magnitude().to_string().len() as u32
            }
        };
        if int_digits > precision.saturating_sub(scale) {
            let lim = precision - scale;
            return Err(err!(NumericValueOutOfRange, "numeric field overflow").with_detail(format!(
                "A field with precision {precision}, scale {scale} must round to an absolute value less than {}.",
                if lim == 0 { "1".to_string() } else { format!("10^{lim}") }
            )));
        }
        Ok(Numeric::Val(r))
    }

    /// Sum.
    pub fn add(&self, o: &Numeric) -> Numeric {
        match (self, o) {
            (Numeric::Val(a), Numeric::Val(b)) => Numeric::Val(a + b),
            _ => Numeric::NaN,
        }
    }

    /// Difference.
    pub fn sub(&self, o: &Numeric) -> Numeric {
        match (self, o) {
            (Numeric::Val(a), Numeric::Val(b)) => Numeric::Val(a - b),
            _ => Numeric::NaN,
        }
    }

    /// Product.
    pub fn mul(&self, o: &Numeric) -> Numeric {
        match (self, o) {
            (Numeric::Val(a), Numeric::Val(b)) => Numeric::Val(a * b),
            _ => Numeric::NaN,
        }
    }

    /// Negation.
    pub fn neg(&self) -> Numeric {
        match self {
            Numeric::NaN => Numeric::NaN,
            Numeric::Val(a) => Numeric::Val(-a.clone()),
        }
    }

    /// Quotient with PostgreSQL's result scale; 22012 on division by zero.
    pub fn div(&self, o: &Numeric) -> Result<Numeric> {
        let (Numeric::Val(a), Numeric::Val(b)) = (self, o) else { return Ok(Numeric::NaN) };
        if b.is_zero() {
            return Err(err!(DivisionByZero, "division by zero"));
        }
        let scale = div_scale(a, b);
        let q = a / b;
        Ok(Numeric::Val(q.with_scale_round(scale, RoundingMode::HalfUp)))
    }

    /// Remainder (sign of the dividend); 22012 on division by zero.
    pub fn rem(&self, o: &Numeric) -> Result<Numeric> {
        let (Numeric::Val(a), Numeric::Val(b)) = (self, o) else { return Ok(Numeric::NaN) };
        if b.is_zero() {
            return Err(err!(DivisionByZero, "division by zero"));
        }
        Ok(Numeric::Val(a % b))
    }

    /// True for NaN.
    pub fn is_nan(&self) -> bool {
        matches!(self, Numeric::NaN)
    }

    /// The finite value, if any.
    pub fn value(&self) -> Option<&BigDecimal> {
        match self {
            Numeric::NaN => None,
            Numeric::Val(d) => Some(d),
        }
    }

    /// Sign and base-10 digits with the exponent of the first digit, for the
    /// order-preserving key encoding: value = 0.d1d2d3... * 10^exp.
    pub fn sign_digits_exponent(&self) -> Option<(Sign, Vec<u8>, i64)> {
        let Numeric::Val(d) = self else { return None };
        let n = d.normalized();
        let (int, scale) = n.as_bigint_and_exponent();
        if int.is_zero() {
            return Some((Sign::NoSign, vec![], 0));
        }
        let digits: Vec<u8> = int.magnitude().to_string().bytes().map(|b| b - b'0').collect();
        let exp = digits.len() as i64 - scale;
        Some((int.sign(), digits, exp))
    }
}

/// Base-10000 weight and first base-10000 digit of a value, as PostgreSQL
/// stores numerics (value = digit * 10000^weight + ...).
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

/// PostgreSQL's select_div_scale: at least 16 significant digits.
fn div_scale(a: &BigDecimal, b: &BigDecimal) -> i64 {
    const MIN_SIG_DIGITS: i64 = 16;
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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Numeric::NaN => write!(f, "NaN"),
            Numeric::Val(d) => {
                let s = if d.fractional_digit_count() < 0 {
                    d.with_scale(0).to_plain_string()
                } else {
                    d.to_plain_string()
                };
                write!(f, "{s}")
            }
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
    fn cmp(&self, o: &Numeric) -> Ordering {
        match (self, o) {
            (Numeric::NaN, Numeric::NaN) => Ordering::Equal,
            (Numeric::NaN, _) => Ordering::Greater,
            (_, Numeric::NaN) => Ordering::Less,
            (Numeric::Val(a), Numeric::Val(b)) => a.cmp(b),
        }
    }
}

impl Hash for Numeric {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            Numeric::NaN => 0u8.hash(h),
            Numeric::Val(d) => d.normalized().to_string().hash(h),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).expect("valid numeric")
    }

    #[test]
    fn keeps_scale_on_display() {
        assert_eq!(n("1.50").to_string(), "1.50");
        assert_eq!(n("1e5").to_string(), "100000");
        assert_eq!(n("-0.001").to_string(), "-0.001");
        assert_eq!(n("nan").to_string(), "NaN");
    }

    #[test]
    fn arithmetic_scales() {
        assert_eq!(n("1.5").add(&n("2.25")).to_string(), "3.75");
        assert_eq!(n("1.5").mul(&n("2.25")).to_string(), "3.375");
        assert_eq!(n("1").div(&n("3")).expect("ok").to_string(), "0.33333333333333333333");
        assert_eq!(n("10").div(&n("4")).expect("ok").to_string(), "2.5000000000000000");
        assert!(n("1").div(&n("0")).is_err());
    }

    #[test]
    fn typmod() {
        assert_eq!(n("1.235").apply_typmod(5, 2).expect("fits").to_string(), "1.24");
        assert!(n("1234.5").apply_typmod(5, 2).is_err());
    }

    #[test]
    fn nan_sorts_last() {
        assert!(n("NaN") > n("1e100"));
        assert_eq!(n("NaN"), n("nan"));
        assert_eq!(n("1.0"), n("1"));
    }
}
