//! numeric's square root, exponential, logarithms and power, computed in
//! decimal to the result scale PostgreSQL 15's numeric.c picks for each:
//! at least 16 significant digits (NUMERIC_MIN_SIG_DIGITS), no fewer
//! digits after the point than the inputs have, at most 1000. So
//! `sqrt(2::numeric)` is 1.414213562373095 and `2::numeric ^ 10` is
//! 1024.0000000000000000, as in PostgreSQL.
//!
//! The work is done on big integers at a fixed scale with guard digits
//! (a [`Fixed`]), and the result is rounded half away from zero at the
//! end: ln by halving the argument's logarithm with square roots until it
//! is near 1 and summing the atanh series, exp by halving the argument
//! and squaring a Taylor sum back up, power through exp(ln(x) * y) or by
//! repeated squaring for integer exponents. The special values follow
//! PostgreSQL's rules (`exp('-Infinity')` is 0, `power(x, 'NaN')` is NaN
//! unless x is 1, and so on), and so do the errors: 2201E for logarithms
//! of zero or negatives, 2201F for powers without a real result, 22003
//! when the result would not fit the numeric format.

use super::*;

/// Largest |x| whose exp() PostgreSQL computes (3 * NUMERIC_MAX_RESULT_SCALE);
/// beyond it the result overflows or underflows to zero.
const EXP_LIMIT: f64 = 6000.0;

use std::f64::consts::{LN_10, LOG10_E};

/// A finite decimal `m * 10^-s` while computing (`s` may be negative).
#[derive(Clone, Debug)]
struct Fixed {
    m: BigInt,
    s: i64,
}

impl Fixed {
    fn of(d: &BigDecimal) -> Fixed {
        let (m, s) = parts(d);
        Fixed { m, s }
    }

    fn int(i: i64) -> Fixed {
        Fixed { m: i.into(), s: 0 }
    }

    /// The unscaled value at scale `to`, rounded half away from zero.
    fn at(&self, to: i64) -> BigInt {
        if to >= self.s {
            &self.m * pow10(to - self.s)
        } else {
            div_round(&self.m, &pow10(self.s - to))
        }
    }

    fn rescaled(&self, to: i64) -> Fixed {
        Fixed { m: self.at(to), s: to }
    }

    fn mul(&self, o: &Fixed, to: i64) -> Fixed {
        Fixed { m: &self.m * &o.m, s: self.s + o.s }.rescaled(to)
    }

    /// self / o at scale `to` (o != 0).
    fn div(&self, o: &Fixed, to: i64) -> Fixed {
        Fixed { m: div_parts((&self.m, self.s), (&o.m, o.s), to), s: to }
    }

    fn add(&self, o: &Fixed) -> Fixed {
        let s = self.s.max(o.s);
        Fixed { m: self.at(s) + o.at(s), s }
    }

    fn sub(&self, o: &Fixed) -> Fixed {
        self.add(&Fixed { m: -o.m.clone(), s: o.s })
    }

    fn abs(&self) -> Fixed {
        Fixed { m: self.m.abs(), s: self.s }
    }

    fn is_zero(&self) -> bool {
        self.m.is_zero()
    }

    fn is_negative(&self) -> bool {
        self.m.sign() == Sign::Minus
    }

    /// floor(log10(|x|)), the power of ten of the first digit (x != 0).
    fn exponent(&self) -> i64 {
        digit_count(&self.m) - 1 - self.s
    }

    /// Keeps `sig` significant digits (at least one).
    fn round_sig(&self, sig: i64) -> Fixed {
        let extra = digit_count(&self.m) - sig.max(1);
        if extra > 0 {
            self.rescaled(self.s - extra)
        } else {
            self.clone()
        }
    }

    /// An f64 near the value (infinite beyond f64's range).
    fn to_f64(&self) -> f64 {
        format!("{}e{}", self.m, -self.s).parse().unwrap_or(f64::NAN)
    }

    /// An f64 near ln(|x|) (x != 0), for any magnitude.
    fn ln_f64(&self) -> f64 {
        let lead = Fixed { m: self.m.abs(), s: self.s + self.exponent() }; // in [1, 10)
        lead.to_f64().ln() + self.exponent() as f64 * LN_10
    }

    /// The result at scale `rscale` as a numeric, with the format's limits.
    fn numeric(&self, rscale: i64) -> Result<Numeric> {
        Numeric::from_parts(self.at(rscale), rscale).checked()
    }
}

/// A numeric result of zero with `rscale` digits after the point.
fn zero(rscale: i64) -> Numeric {
    Numeric::from_parts(BigInt::zero(), rscale)
}

fn log_of_zero() -> ErrorReport {
    err!(InvalidArgumentForLog, "cannot take logarithm of zero")
}

fn log_of_negative() -> ErrorReport {
    err!(InvalidArgumentForLog, "cannot take logarithm of a negative number")
}

/// Clamps a result scale to PostgreSQL's display limits (0..=1000).
fn display_scale(rscale: i64) -> i64 {
    rscale.clamp(0, MAX_SCALE)
}

/// The base-10000 weight of a nonzero value and its first one or two
/// base-10000 digits as one number, with the decimal weight of that
/// number's last digit: PostgreSQL's view of "the first couple of digits".
fn leading_nbase(x: &Fixed) -> (f64, i64) {
    let weight = x.exponent().div_euclid(4);
    // floor(|x| / 10^pos)
    let digits_above = |pos: i64| -> BigInt {
        let shift = x.s + pos;
        if shift >= 0 {
            x.m.abs() / pow10(shift)
        } else {
            x.m.abs() * pow10(-shift)
        }
    };
    let first = digits_above(4 * weight);
    let only_first = Fixed { m: first.clone(), s: -4 * weight }.sub(&x.abs()).is_zero();
    if only_first {
        (first.to_f64().unwrap_or(0.0), 4 * weight)
    } else {
        (digits_above(4 * weight - 4).to_f64().unwrap_or(0.0), 4 * weight - 4)
    }
}

/// PostgreSQL's estimate_ln_dweight: roughly floor(log10(|ln(x)|)) for
/// x > 0, used to pick result scales.
fn estimate_ln_dweight(x: &Fixed) -> i64 {
    let tenth = |n: i64| Fixed { m: n.into(), s: 1 };
    let low = x.sub(&tenth(9));
    let high = tenth(11).sub(x);
    if !low.is_negative() && !high.is_negative() {
        // 0.9 <= x <= 1.1: ln(x) is about x - 1.
        let d = x.sub(&Fixed::int(1));
        return if d.is_zero() { 0 } else { d.exponent() };
    }
    if x.is_zero() {
        return 0;
    }
    let (digits, dweight) = leading_nbase(x);
    let ln = digits.ln() + dweight as f64 * LN_10;
    if ln == 0.0 {
        return 0;
    }
    ln.abs().log10() as i64
}

/// ln(m) at scale `p` for 1 <= m < 10 (or m = 10): square roots bring m
/// within 1% of 1, then ln(y) = 2 atanh((y - 1) / (y + 1)).
fn ln_reduced(m: &Fixed, p: i64) -> Fixed {
    let wp = p + 8;
    let one = Fixed { m: pow10(wp), s: wp };
    let near = Fixed { m: BigInt::from(101) * pow10(wp - 2), s: wp };
    let mut y = m.rescaled(wp);
    let mut halvings = 0u32;
    while y.m > near.m {
        y = Fixed { m: (&y.m * pow10(wp)).sqrt(), s: wp };
        halvings += 1;
    }
    let z = y.sub(&one).div(&y.add(&one), wp);
    let z2 = z.mul(&z, wp);
    let mut power = z.clone();
    let mut sum = z;
    let mut n = 1u32;
    loop {
        power = power.mul(&z2, wp);
        n += 2;
        let term = Fixed { m: &power.m / n, s: wp };
        if term.is_zero() {
            break;
        }
        sum = sum.add(&term);
    }
    Fixed { m: sum.m << (halvings + 1), s: wp }.rescaled(p)
}

/// ln(x) at scale `rscale` for x > 0: ln(m) + e * ln(10) with x = m * 10^e.
fn ln_fixed(x: &Fixed, rscale: i64) -> Fixed {
    let e = x.exponent();
    let m = Fixed { m: x.m.clone(), s: x.s + e };
    let p = rscale.max(0) + 4;
    let ln_m = ln_reduced(&m, p);
    if e == 0 {
        return ln_m.rescaled(rscale);
    }
    let ln10 = ln_reduced(&Fixed::int(10), p + digit_count(&BigInt::from(e)));
    ln_m.add(&ln10.mul(&Fixed::int(e), p)).rescaled(rscale)
}

/// exp(x) at scale `rscale`; 22003 when it overflows, 0 when it underflows.
fn exp_fixed(x: &Fixed, rscale: i64) -> Result<Fixed> {
    let v = x.to_f64();
    if v.abs() >= EXP_LIMIT {
        if v > 0.0 {
            return Err(overflow());
        }
        return Ok(Fixed { m: BigInt::zero(), s: rscale });
    }
    if x.is_zero() {
        return Ok(Fixed::int(1).rescaled(rscale));
    }
    let a = x.abs();
    let mut halvings = 0u32;
    let mut r = v.abs();
    while r > 0.01 {
        r /= 2.0;
        halvings += 1;
    }
    // Decimal digits before the point of exp(|x|), and the scale that
    // keeps the result's last digit after the squarings lose some.
    let w = (v.abs() * LOG10_E).ceil() as i64 + 1;
    let guard = 10 + i64::from(halvings) / 3;
    let p = if x.is_negative() { (rscale - w).max(0) + guard } else { rscale + w + guard };
    let r = a.div(&Fixed { m: BigInt::from(1u8) << halvings, s: 0 }, p);
    let one = Fixed { m: pow10(p), s: p };
    let mut sum = one.clone();
    let mut term = one;
    let mut i = 1u32;
    loop {
        term = term.mul(&r, p);
        term.m /= i;
        if term.is_zero() {
            break;
        }
        sum = sum.add(&term);
        i += 1;
    }
    for _ in 0..halvings {
        sum = sum.mul(&sum, p);
    }
    Ok(if x.is_negative() { Fixed::int(1).div(&sum, rscale) } else { sum.rescaled(rscale) })
}

/// base^exp for an integer exponent at scale `rscale`, by repeated
/// squaring with enough significant digits for the result (numeric.c's
/// power_var_int).
fn power_int(base: &Fixed, exp: i64, rscale: i64) -> Result<Fixed> {
    let zero = Fixed { m: BigInt::zero(), s: rscale };
    match exp {
        0 => return Ok(Fixed::int(1).rescaled(rscale)),
        1 => return Ok(base.rescaled(rscale)),
        -1 if base.is_zero() => return Err(division_by_zero()),
        -1 => return Ok(Fixed::int(1).div(base, rscale)),
        2 => return Ok(base.mul(base, rscale)),
        _ => {}
    }
    if base.is_zero() {
        return if exp < 0 { Err(division_by_zero()) } else { Ok(zero) };
    }
    let f = exp as f64 * (base.ln_f64() / LN_10);
    if f > 3.0 * f64::from(i16::MAX) * 4.0 {
        return Err(overflow());
    }
    if f + 1.0 < -(rscale as f64) || f + 1.0 < -(MAX_SCALE as f64) {
        return Ok(zero);
    }
    let sig = 1 + rscale + f as i64 + (exp.unsigned_abs() as f64).ln() as i64 + 8;
    let mut mask = exp.unsigned_abs();
    let mut prod = base.clone();
    let mut acc = if mask & 1 == 1 { base.clone() } else { Fixed::int(1) };
    let limit = MAX_INT_DIGITS + 4;
    while {
        mask >>= 1;
        mask > 0
    } {
        prod = Fixed { m: &prod.m * &prod.m, s: 2 * prod.s }.round_sig(sig);
        if mask & 1 == 1 {
            acc = Fixed { m: &prod.m * &acc.m, s: prod.s + acc.s }.round_sig(sig);
        }
        if prod.exponent() > limit || acc.exponent() > limit {
            return if exp < 0 { Ok(zero) } else { Err(overflow()) };
        }
    }
    Ok(if exp < 0 { Fixed::int(1).div(&acc, rscale) } else { acc.rescaled(rscale) })
}

impl Numeric {
    /// sqrt(x) with PostgreSQL's result scale: 16 significant digits or
    /// the input's scale if larger; 2201F for a negative value.
    pub fn sqrt(&self) -> Result<Numeric> {
        let Numeric::Val(d) = self else { return self.sqrt_scaled(0) };
        let (weight, _) = nbase_weight_first(d);
        let sweight = (weight + 1) * 4 / 2 - 1;
        let rscale = display_scale((MIN_SIG_DIGITS - sweight).max(self.scale()));
        self.sqrt_scaled(rscale)
    }

    /// e^x with PostgreSQL's result scale; 22003 when it overflows.
    pub fn exp(&self) -> Result<Numeric> {
        match self {
            Numeric::NaN | Numeric::PosInf => Ok(self.clone()),
            Numeric::NegInf => Ok(Numeric::from_i64(0)),
            Numeric::Val(d) => {
                let x = Fixed::of(d);
                let v = (x.to_f64() * LOG10_E).clamp(-2000.0, 2000.0);
                let rscale = display_scale((MIN_SIG_DIGITS - v as i64).max(self.scale()));
                exp_fixed(&x, rscale)?.numeric(rscale)
            }
        }
    }

    /// ln(x) with PostgreSQL's result scale; 2201E for zero or less.
    pub fn ln(&self) -> Result<Numeric> {
        match self {
            Numeric::NaN | Numeric::PosInf => Ok(self.clone()),
            Numeric::NegInf => Err(log_of_negative()),
            Numeric::Val(d) => {
                let x = Fixed::of(d);
                check_log_argument(&x)?;
                let rscale =
                    display_scale((MIN_SIG_DIGITS - estimate_ln_dweight(&x)).max(self.scale()));
                ln_fixed(&x, rscale).numeric(rscale)
            }
        }
    }

    /// log(b, x), the logarithm of `x` (self) to base `b`, with PostgreSQL's
    /// result scale; 2201E for zero or negative arguments, 22012 for base 1.
    pub fn log(&self, base: &Numeric) -> Result<Numeric> {
        use Numeric::*;
        match (base, self) {
            (NaN, _) | (_, NaN) => return Ok(NaN),
            (Val(b), Val(x)) => return log_finite(&Fixed::of(b), &Fixed::of(x), base, self),
            _ => {}
        }
        if base.sign() < 0 || self.sign() < 0 {
            return Err(log_of_negative());
        }
        if base.sign() == 0 || self.sign() == 0 {
            return Err(log_of_zero());
        }
        Ok(match (base, self) {
            (PosInf, PosInf) => NaN,
            (PosInf, _) => Numeric::from_i64(0),
            _ => PosInf,
        })
    }

    /// self ^ exp with PostgreSQL's rules and result scale: 2201F for zero
    /// to a negative power or a negative number to a non-integer power,
    /// 22003 when the result would not fit.
    pub fn power(&self, exp: &Numeric) -> Result<Numeric> {
        use Numeric::*;
        let one = Numeric::from_i64(1);
        match (self, exp) {
            (NaN, y) => return Ok(if y.is_zero() { one } else { NaN }),
            (x, NaN) => return Ok(if *x == one { one } else { NaN }),
            _ => {}
        }
        let (s1, s2) = (self.sign(), exp.sign());
        if s1 == 0 && s2 < 0 {
            return Err(err!(
                InvalidArgumentForPowerFunction,
                "zero raised to a negative power is undefined"
            ));
        }
        let exp_integral = match exp {
            Val(e) => e.is_integer(),
            _ => true,
        };
        if s1 < 0 && !exp_integral {
            return Err(err!(
                InvalidArgumentForPowerFunction,
                "a negative number raised to a non-integer power yields a complex result"
            ));
        }
        let (Val(b), Val(e)) = (self, exp) else { return Ok(power_infinite(self, exp)) };
        let (base, e_fixed) = (Fixed::of(b), Fixed::of(e));
        // An exponent that is an integer in int32's range: repeated squaring.
        if exp_integral {
            if let Some(n) = e_fixed.at(0).to_i32() {
                let rscale = display_scale(MIN_SIG_DIGITS.max(self.scale()));
                return power_int(&base, i64::from(n), rscale)?.numeric(rscale);
            }
        }
        if base.is_zero() {
            return Ok(zero(MIN_SIG_DIGITS));
        }
        // The sign of a negative base to an (even or odd) integer power.
        let negative = base.is_negative() && (&e_fixed.at(0) % 2u8) != BigInt::zero();
        let base = base.abs();
        let val = base.ln_f64() * e_fixed.to_f64();
        if val.abs() > 2000.0 * 3.01 {
            if val > 0.0 {
                return Err(overflow());
            }
            return Ok(zero(MAX_SCALE));
        }
        let v = (val * LOG10_E) as i64;
        let rscale = display_scale((MIN_SIG_DIGITS - v).max(self.scale()).max(exp.scale()));
        // Enough digits of ln(base) that ln(base) * exp keeps the result's.
        let sig = (rscale + v).max(0);
        let ln_scale = sig - estimate_ln_dweight(&base) + 8 + (e_fixed.exponent() + 1).max(0);
        let ln_scale = ln_scale.max(8);
        let t = ln_fixed(&base, ln_scale).mul(&e_fixed, ln_scale);
        let r = exp_fixed(&t, rscale)?;
        let r = if negative { Fixed { m: -r.m, s: r.s } } else { r };
        r.numeric(rscale)
    }
}

/// 2201E unless x > 0.
fn check_log_argument(x: &Fixed) -> Result<()> {
    if x.is_zero() {
        return Err(log_of_zero());
    }
    if x.is_negative() {
        return Err(log_of_negative());
    }
    Ok(())
}

/// log(b, x) of finite values: ln(x) / ln(b), each computed with the digits
/// the quotient needs (numeric.c's log_var).
fn log_finite(b: &Fixed, x: &Fixed, base: &Numeric, num: &Numeric) -> Result<Numeric> {
    check_log_argument(b)?;
    check_log_argument(x)?;
    let (db, dx) = (estimate_ln_dweight(b), estimate_ln_dweight(x));
    let result_dweight = dx - db;
    let rscale =
        display_scale((MIN_SIG_DIGITS - result_dweight).max(base.scale()).max(num.scale()));
    let ln_b = ln_fixed(b, (rscale + result_dweight - db + 8).max(8));
    let ln_x = ln_fixed(x, (rscale + result_dweight - dx + 8).max(8));
    if ln_b.is_zero() {
        return Err(division_by_zero());
    }
    ln_x.div(&ln_b, rscale).numeric(rscale)
}

/// x ^ y where x or y is infinite (neither NaN), as POSIX pow() defines it.
fn power_infinite(x: &Numeric, y: &Numeric) -> Numeric {
    use Numeric::*;
    let one = Numeric::from_i64(1);
    if y.is_infinite() {
        if *x == one || *x == one.neg() {
            return one;
        }
        let x_above_one = x.is_infinite() || x.abs() > one;
        return if x_above_one == (y.sign() > 0) { PosInf } else { Numeric::from_i64(0) };
    }
    // x is infinite and y finite.
    match y.sign() {
        0 => one,
        s if s < 0 => Numeric::from_i64(0),
        _ if matches!(x, PosInf) => PosInf,
        _ => {
            let odd = match y {
                Val(e) => e.is_integer() && (&Fixed::of(e).at(0) % 2u8) != BigInt::zero(),
                _ => false,
            };
            if odd {
                NegInf
            } else {
                PosInf
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(r: Result<Numeric>) -> Numeric {
        r.expect("computes")
    }

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).expect("valid numeric")
    }

    #[test]
    fn result_scales_follow_postgresql() {
        assert_eq!(ok(n("2").sqrt()).to_string(), "1.414213562373095");
        assert_eq!(ok(n("16").sqrt()).to_string(), "4.000000000000000");
        assert_eq!(ok(n("1").exp()).to_string(), "2.7182818284590452");
        assert_eq!(ok(n("10").ln()).to_string(), "2.3025850929940457");
        assert_eq!(ok(n("100").log(&n("10"))).to_string(), "2.0000000000000000");
        assert_eq!(ok(n("2").power(&n("0.5"))).to_string(), "1.4142135623730950");
        assert_eq!(ok(n("2").power(&n("10"))).to_string(), "1024.0000000000000000");
    }

    #[test]
    fn errors_and_special_values() {
        assert!(n("0").ln().is_err());
        assert!(n("-1").ln().is_err());
        assert!(n("0").power(&n("-1")).is_err());
        assert!(n("-8").power(&n("0.5")).is_err());
        assert!(n("10").exp().is_ok());
        assert!(n("7000").exp().is_err());
        assert!(ok(n("-7000").exp()).is_zero());
        assert!(n("1").log(&n("1")).is_err());
        assert_eq!(ok(Numeric::NegInf.exp()).to_string(), "0");
        assert_eq!(ok(n("1").power(&Numeric::NaN)).to_string(), "1");
        assert_eq!(ok(Numeric::NegInf.power(&n("3"))).to_string(), "-Infinity");
    }

    #[test]
    fn ln_and_exp_invert_each_other() {
        for s in ["0.001", "0.5", "1.5", "7", "12345.678", "1e50", "3e-40"] {
            let x = n(s);
            let back = ok(ok(x.ln()).exp());
            let diff = back.sub(&x).abs();
            let tolerance = x.mul(&n("1e-14"));
            assert!(diff <= tolerance, "{s}: {back}");
        }
    }
}
