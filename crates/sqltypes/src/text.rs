//! Text-format input and output, exactly as PostgreSQL spells values.
//!
//! Input follows each type's `*in` function in PostgreSQL 15: integers allow
//! surrounding whitespace (and no `_` separators, which came in 16), `bool`
//! accepts t/true/yes/on/1 and f/false/no/off/0 in any case and any unique
//! prefix, floats accept NaN and [-]Infinity/inf, numeric also accepts
//! [-]Infinity, bytea takes hex (`\x0102`) or escape format, and dates and
//! timestamps are parsed by [`crate::datetime`]. Output follows the `*out`
//! functions with PostgreSQL 12+ defaults: shortest round-trip floats
//! (extra_float_digits = 1), ISO dates, `bytea_output = hex`, session time
//! zone UTC.
//!
//! The output functions write into any [`TextOut`] so the same code serves
//! a `Vec<u8>` (COPY, messages) and the wire's `BytesMut` (DataRow fields)
//! without an intermediate allocation for fixed-size types.

use std::fmt::Write as _;

use bytes::{BufMut, BytesMut};

use crate::datetime;
use crate::numeric::Numeric;
use crate::{err, DataType, RegValue, Result, Value};

/// A byte sink text output is written into.
pub trait TextOut {
    /// Appends bytes.
    fn put(&mut self, b: &[u8]);
}

impl TextOut for Vec<u8> {
    fn put(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
}

impl TextOut for BytesMut {
    fn put(&mut self, b: &[u8]) {
        self.put_slice(b);
    }
}

/// Whitespace as C's isspace() sees it, which PostgreSQL's input functions trim.
pub(crate) fn c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

fn parse_int(s: &str, ty: &str, min: i64, max: i64) -> Result<i64> {
    let t = s.trim_matches(c_space);
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err!(InvalidTextRepresentation, "invalid input syntax for type {ty}: \"{s}\""));
    }
    // Any digit string parses into i128 unless it has ~39 digits; those are
    // out of range for every type anyway.
    match t.parse::<i128>() {
        Ok(v) if v >= min as i128 && v <= max as i128 => Ok(v as i64),
        _ => Err(err!(NumericValueOutOfRange, "value \"{s}\" is out of range for type {ty}")),
    }
}

fn parse_bool(s: &str) -> Result<bool> {
    let t = s.trim_matches(c_space).to_ascii_lowercase();
    let bad = || err!(InvalidTextRepresentation, "invalid input syntax for type boolean: \"{s}\"");
    if t.is_empty() {
        return Err(bad());
    }
    let is_prefix = |word: &str| word.starts_with(t.as_str());
    Ok(match t.as_str() {
        "1" => true,
        "0" => false,
        // "o" alone is ambiguous between on and off.
        "o" => return Err(bad()),
        _ if is_prefix("on") => true,
        _ if is_prefix("off") && t.len() >= 2 => false,
        _ if is_prefix("true") || is_prefix("yes") => true,
        _ if is_prefix("false") || is_prefix("no") => false,
        _ => return Err(bad()),
    })
}

/// Parses float8 input as float8in does (strtod plus NaN/Infinity words);
/// values that overflow or underflow to zero are 22003.
pub fn parse_float(s: &str) -> Result<f64> {
    parse_float_as(s, "double precision")
}

/// Parses float4 input as float4in does: the float8 grammar, then a range
/// check for real.
pub fn parse_float4(s: &str) -> Result<f32> {
    let f = parse_float_as(s, "real")?;
    let r = f as f32;
    if (r.is_infinite() && f.is_finite()) || (r == 0.0 && f != 0.0) {
        return Err(err!(NumericValueOutOfRange, "\"{s}\" is out of range for type real"));
    }
    Ok(r)
}

fn parse_float_as(s: &str, ty: &str) -> Result<f64> {
    let t = s.trim_matches(c_space);
    let syntax = || err!(InvalidTextRepresentation, "invalid input syntax for type {ty}: \"{s}\"");
    let lower = t.to_ascii_lowercase();
    let body = lower.strip_prefix(['+', '-']).unwrap_or(&lower);
    let negative = lower.starts_with('-');
    match body {
        "nan" => return Ok(f64::NAN),
        "inf" | "infinity" => return Ok(if negative { f64::NEG_INFINITY } else { f64::INFINITY }),
        _ => {}
    }
    let (mant, exp) = body.split_once('e').unwrap_or((body, ""));
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    if (int.is_empty() && frac.is_empty())
        || !digits(int)
        || !digits(frac)
        || (body.contains('e') && (exp_digits.is_empty() || !digits(exp_digits)))
    {
        return Err(syntax());
    }
    let v: f64 = t.parse().map_err(|_| syntax())?;
    let nonzero_mantissa = int.bytes().chain(frac.bytes()).any(|b| b != b'0');
    if v.is_infinite() || (v == 0.0 && nonzero_mantissa) {
        return Err(err!(NumericValueOutOfRange, "\"{s}\" is out of range for type {ty}"));
    }
    Ok(v)
}

fn hex_digit(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The (possibly multibyte) character starting at byte `i` of `s`, for
/// error messages.
fn char_at(s: &str, i: usize) -> &str {
    let end = (i + 1..=s.len()).find(|&e| s.is_char_boundary(e)).unwrap_or(s.len());
    s.get(i..end).unwrap_or("")
}

/// Reads hex digit pairs, blanks allowed between pairs, as bytea's hex
/// input after `\x` and decode(s, 'hex') do.
pub fn parse_hex(s: &str) -> Result<Vec<u8>> {
    parse_bytea_hex(s, s)
}

fn parse_bytea_hex(s: &str, hex: &str) -> Result<Vec<u8>> {
    let offset = s.len() - hex.len();
    let b = hex.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 2);
    let mut i = 0;
    let bad_digit = |i: usize| {
        err!(InvalidParameterValue, "invalid hexadecimal digit: \"{}\"", char_at(s, offset + i))
    };
    while i < b.len() {
        if matches!(b[i], b' ' | b'\n' | b'\t' | b'\r') {
            i += 1;
            continue;
        }
        let hi = hex_digit(b[i]).ok_or_else(|| bad_digit(i))?;
        let Some(&lo) = b.get(i + 1) else {
            return Err(err!(
                InvalidParameterValue,
                "invalid hexadecimal data: odd number of digits"
            ));
        };
        let lo = hex_digit(lo).ok_or_else(|| bad_digit(i + 1))?;
        out.push(hi << 4 | lo);
        i += 2;
    }
    Ok(out)
}

/// Parses bytea input in hex (`\x...`) or escape format, as byteain does.
pub fn parse_bytea(s: &str) -> Result<Vec<u8>> {
    if let Some(hex) = s.strip_prefix("\\x") {
        return parse_bytea_hex(s, hex);
    }
    parse_bytea_escape(s)
}

/// Parses bytea's escape format: `\\` is a backslash, `\ooo` an octal
/// byte, another backslash an error (also decode(s, 'escape')).
pub fn parse_bytea_escape(s: &str) -> Result<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let octal = |c: u8, max: u8| (b'0'..=max).contains(&c);
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if i + 3 < b.len()
            && octal(b[i + 1], b'3')
            && octal(b[i + 2], b'7')
            && octal(b[i + 3], b'7')
        {
            out.push(((b[i + 1] - b'0') << 6) | ((b[i + 2] - b'0') << 3) | (b[i + 3] - b'0'));
            i += 4;
        } else {
            return Err(err!(InvalidTextRepresentation, "invalid input syntax for type bytea"));
        }
    }
    Ok(out)
}

/// Applies a varchar(n)/char(n) length limit to input being stored, as the
/// types' input and assignment casts do: too long is 22001 unless only
/// spaces are cut off; char(n) is blank-padded to n characters. Other types
/// pass through.
pub fn fit_string(s: &str, ty: &DataType) -> Result<String> {
    let n = match ty {
        DataType::Varchar(Some(n)) | DataType::Char(n) if *n > 0 => *n as usize,
        _ => return Ok(s.to_string()),
    };
    // Fast path: byte length bounds the character count.
    if s.len() <= n && !matches!(ty, DataType::Char(_)) {
        return Ok(s.to_string());
    }
    let cut = s.char_indices().nth(n).map(|(i, _)| i);
    if let Some(cut) = cut {
        if !s[cut..].bytes().all(|b| b == b' ') {
            return Err(err!(StringDataRightTruncation, "value too long for type {ty}"));
        }
        return Ok(s[..cut].to_string());
    }
    let len = s.chars().count();
    let mut out = String::with_capacity(s.len() + n - len);
    out.push_str(s);
    if matches!(ty, DataType::Char(_)) {
        out.extend(std::iter::repeat_n(' ', n - len));
    }
    Ok(out)
}

/// name input: the text cut to at most 63 bytes (NAMEDATALEN - 1) at a
/// character boundary, as PostgreSQL's namein cuts it.
pub fn name(s: &str) -> String {
    const MAX: usize = 63;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut cut = MAX;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s[..cut].to_string()
}

/// Parses text-format input for `ty` (a literal, a text parameter, a COPY
/// field), applying the type's modifier as an assignment would.
pub fn parse_text(ty: &DataType, s: &str) -> Result<Value> {
    parse_text_in(ty, s, crate::Zone::utc_ref())
}

/// Parses text-format input for `ty`; a timestamptz (also inside arrays
/// and records) without an offset is local time in `zone`.
pub fn parse_text_in(ty: &DataType, s: &str, zone: &crate::Zone) -> Result<Value> {
    Ok(match ty {
        DataType::Bool => Value::Bool(parse_bool(s)?),
        DataType::Enum(t) => crate::enums::parse_enum(t, s)?,
        DataType::Int2 => {
            Value::Int2(parse_int(s, "smallint", i16::MIN as i64, i16::MAX as i64)? as i16)
        }
        DataType::Int4 => {
            Value::Int4(parse_int(s, "integer", i32::MIN as i64, i32::MAX as i64)? as i32)
        }
        DataType::Int8 => Value::Int8(parse_int(s, "bigint", i64::MIN, i64::MAX)?),
        DataType::Float4 => Value::Float4(parse_float4(s)?),
        DataType::Float8 => Value::Float8(parse_float(s)?),
        DataType::Time => Value::Time(crate::timeofday::parse_time(s)?),
        DataType::TimeTz => {
            let (t, z) = crate::timeofday::parse_timetz(s)?;
            Value::TimeTz(t, z)
        }
        DataType::Interval => Value::Interval(crate::interval::parse_interval(s)?),
        DataType::Uuid => Value::Uuid(crate::uuid::parse_uuid(s)?),
        DataType::Inet => Value::Inet(crate::inet::Inet::parse(s, false)?),
        DataType::Cidr => Value::Inet(crate::inet::Inet::parse(s, true)?),
        DataType::Json => {
            crate::json::validate_json(s)?;
            Value::Json(s.to_string())
        }
        DataType::Jsonb => Value::Jsonb(Box::new(crate::json::parse_jsonb(s)?)),
        DataType::Numeric(m) => {
            let n = Numeric::parse(s)?;
            Value::Numeric(match m {
                Some((p, sc)) => n.apply_typmod(*p, *sc)?,
                None => n,
            })
        }
        DataType::Text | DataType::Unknown | DataType::Refcursor => Value::Text(s.to_string()),
        DataType::QChar => Value::Text(qchar(s)),
        DataType::Name => Value::Text(name(s)),
        DataType::Varchar(_) | DataType::Char(_) => Value::Text(fit_string(s, ty)?),
        DataType::Date => Value::Date(datetime::parse_date(s)?),
        DataType::Timestamp => Value::Timestamp(datetime::parse_timestamp(s, false)?),
        DataType::TimestampTz => Value::TimestampTz(datetime::parse_timestamp_in(s, true, zone)?),
        DataType::Bytea => Value::Bytea(parse_bytea(s)?),
        DataType::Array(e) => crate::array::parse_array_in(e, s, zone)?,
        DataType::Record(t) => crate::record::parse_record_in(t, s, zone)?,
        DataType::Range(k) => crate::range::parse_range_in(*k, s, zone)?,
        // void_in accepts any text.
        DataType::Void => Value::Text(String::new()),
        DataType::Oid => Value::Oid(parse_oid(s)?),
        DataType::Int2Vector | DataType::OidVector => {
            let elem = ty.elem().cloned().unwrap_or(DataType::Int2);
            let mut items = Vec::new();
            // An empty vector prints as nothing; `{}` is read as empty too.
            let s = if s.trim() == "{}" { "" } else { s };
            for part in s.split_ascii_whitespace() {
                items.push(parse_text(&elem, part)?);
            }
            crate::array::vector(elem, items)
        }
        // Names need the catalog: the SQL layer resolves them before this;
        // here only the numeric form is accepted.
        DataType::Reg(kind) => {
            let kind = *kind;
            let oid = parse_oid(s)?;
            Value::Reg(Box::new(RegValue { kind, oid, name: oid.to_string() }))
        }
    })
}

/// oid input: an integer in the unsigned 32-bit range; negative numbers
/// down to -2^31 wrap around as in PostgreSQL.
pub fn parse_oid(s: &str) -> Result<u32> {
    Ok(parse_int(s, "oid", i32::MIN as i64, u32::MAX as i64)? as u32)
}

/// "char" input keeps the first character (PostgreSQL keeps the first
/// byte; they differ only for non-ASCII input).
pub fn qchar(s: &str) -> String {
    s.chars().next().map(String::from).unwrap_or_default()
}

/// A fixed buffer for formatting floats without allocating.
struct StackBuf {
    buf: [u8; 48],
    len: usize,
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes a float as PostgreSQL 12+ does with extra_float_digits = 1: the
/// shortest digits that read back to the same value, in exponent form
/// (`1e+20`, `1.5e-07`) when the decimal exponent is below -4 or at least 15.
pub fn write_float<O: TextOut + ?Sized>(f: f64, out: &mut O) {
    if write_float_special(f, out) {
        return;
    }
    let mut digits = [0u8; 24];
    let (nd, exp) = shortest_digits(f.abs(), &mut digits);
    write_digits(&digits[..nd], exp, 15, out);
}

/// Writes a float4 as float4out does: shortest round-trip digits for
/// single precision, exponent form below 1e-4 or from 1e6 up.
pub fn write_float4<O: TextOut + ?Sized>(f: f32, out: &mut O) {
    if write_float_special(f as f64, out) {
        return;
    }
    let mut digits = [0u8; 24];
    let (nd, exp) = sci_digits(f.abs(), &mut digits);
    write_digits(&digits[..nd], exp, 6, out);
}

/// Writes NaN, the infinities and zeros whole (true), or a negative
/// number's sign (false: the digits follow).
fn write_float_special<O: TextOut + ?Sized>(f: f64, out: &mut O) -> bool {
    if f.is_nan() {
        out.put(b"NaN");
    } else if f.is_infinite() {
        out.put(if f > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else if f == 0.0 {
        out.put(if f.is_sign_negative() { b"-0" } else { b"0" });
    } else {
        if f < 0.0 {
            out.put(b"-");
        }
        return false;
    }
    true
}

/// Writes decimal `digits` with the first digit's exponent `exp`, in fixed
/// notation when `-4 <= exp < fixed_limit`, else as `d.ddde+XX`.
fn write_digits<O: TextOut + ?Sized>(digits: &[u8], exp: i32, fixed_limit: i32, out: &mut O) {
    if !(-4..fixed_limit).contains(&exp) {
        out.put(&digits[..1]);
        if digits.len() > 1 {
            out.put(b".");
            out.put(&digits[1..]);
        }
        out.put(if exp < 0 { b"e-" } else { b"e+" });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.put(b"0");
        }
        let mut tmp = [0u8; 4];
        let n = write_u64(a as u64, &mut tmp);
        return out.put(&tmp[4 - n..]);
    }
    if exp < 0 {
        out.put(b"0.");
        for _ in 0..(-exp - 1) {
            out.put(b"0");
        }
        return out.put(digits);
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        out.put(digits);
        for _ in digits.len()..int_len {
            out.put(b"0");
        }
    } else {
        out.put(&digits[..int_len]);
        out.put(b".");
        out.put(&digits[int_len..]);
    }
}

/// The shortest round-trip decimal digits of a finite positive `f` (ASCII,
/// no trailing zeros) and the decimal exponent of the first digit, as
/// PostgreSQL's Ryu-based float8out picks them.
///
/// Rust's `{:e}` gives the shortest digits too, but differs from
/// PostgreSQL's Ryu in two corner cases: PostgreSQL never accepts a digit
/// string lying exactly on the rounding boundary between two doubles, and
/// it breaks an exact tie between two equally close candidates toward the
/// even digit. Both need the value to have a very short exact binary
/// fraction, which only happens from about 2^49 up, so below 2^40 the fast
/// path is exact and above it [`ryu_like_digits`] decides with exact
/// integer arithmetic.
fn shortest_digits(f: f64, digits: &mut [u8; 24]) -> (usize, i32) {
    let (nd, exp) = sci_digits(f, digits);
    if f >= (1u64 << 40) as f64 {
        if let Some((d, e)) = ryu_like_digits(f, exp, nd as i32) {
            let text = d.to_string();
            let text = text.trim_end_matches('0');
            if text.len() <= digits.len() {
                digits[..text.len()].copy_from_slice(text.as_bytes());
                return (text.len(), e);
            }
        }
    }
    (nd, exp)
}

/// The digits and exponent of Rust's shortest `{:e}` form of a finite
/// positive float (f32 values give single-precision shortest digits).
fn sci_digits(f: impl std::fmt::LowerExp, digits: &mut [u8; 24]) -> (usize, i32) {
    let mut sb = StackBuf { buf: [0; 48], len: 0 };
    // Writing a finite float in `{:e}` form takes at most ~25 bytes.
    let _ = write!(sb, "{f:e}");
    let sci = &sb.buf[..sb.len];
    let e_pos = sci.iter().position(|&b| b == b'e').unwrap_or(sci.len());
    let exp: i32 = std::str::from_utf8(sci.get(e_pos + 1..).unwrap_or(b"0"))
        .ok()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let mut nd = 0;
    for &b in sci[..e_pos].iter().filter(|b| b.is_ascii_digit()) {
        digits[nd] = b;
        nd += 1;
    }
    (nd, exp)
}

/// Exact shortest-digits search for a finite positive `f`, excluding the
/// interval bounds and rounding ties to even, as PostgreSQL's Ryu does.
/// `exp_hint` is the decimal exponent of `f`'s first digit and `min_len`
/// the length of Rust's shortest digits (PostgreSQL's accepts fewer
/// candidates, so its answer is never shorter). Returns the digits as an
/// integer and the exponent of its first digit.
fn ryu_like_digits(f: f64, exp_hint: i32, min_len: i32) -> Option<(num_bigint::BigInt, i32)> {
    use num_bigint::BigInt;
    use num_traits::pow;
    let bits = f.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if biased == 0 { (frac, -1074) } else { (frac | (1 << 52), biased - 1075) };
    // V = 4m * 2^(e-2); the bounds are half an ulp away (a quarter below
    // at a power of two, where the gap below is half as wide).
    let mm_shift = frac != 0 || biased <= 1;
    let e2 = e - 2;
    let mv = BigInt::from(4 * m);
    let mp = BigInt::from(4 * m + 2);
    let mm = BigInt::from(4 * m - 1 - mm_shift as u64);
    for n in min_len.max(1)..=17 {
        let k = exp_hint - n + 1;
        let two = |x: i32| pow(BigInt::from(2u8), x.max(0) as usize);
        let ten = |x: i32| pow(BigInt::from(10u8), x.max(0) as usize);
        let scale_num = two(e2) * ten(-k);
        let den = two(-e2) * ten(k);
        let (vn, pn, mn) = (&mv * &scale_num, &mp * &scale_num, &mm * &scale_num);
        let lo = &mn / &den + 1u8;
        let hi = if (&pn % &den) == BigInt::from(0u8) { &pn / &den - 1u8 } else { &pn / &den };
        if lo > hi {
            continue;
        }
        // Closest to V, ties to even, kept inside the open interval.
        let (q, r) = (&vn / &den, &vn % &den);
        let twice = &r * 2u8;
        let round_up = twice > den || (twice == den && (&q % 2u8) == BigInt::from(1u8));
        let d = if round_up { q + 1u8 } else { q };
        let d = d.clamp(lo, hi);
        let len = d.to_string().len() as i32;
        return Some((d, k + len - 1));
    }
    None
}

/// Formats a float as PostgreSQL 12+ does (see [`write_float`]).
pub fn format_float(f: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_float(f, &mut out);
    String::from_utf8(out).expect("float output is ASCII")
}

/// Writes `v` right-aligned into `tmp`, returning the number of digits.
fn write_u64(mut v: u64, tmp: &mut [u8]) -> usize {
    let mut pos = tmp.len();
    loop {
        pos -= 1;
        tmp[pos] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    tmp.len() - pos
}

fn write_int<O: TextOut + ?Sized>(i: i64, out: &mut O) {
    let mut tmp = [0u8; 20];
    let n = write_u64(i.unsigned_abs(), &mut tmp);
    if i < 0 {
        out.put(b"-");
    }
    out.put(&tmp[20 - n..]);
}

fn write_hex<O: TextOut + ?Sized>(b: &[u8], out: &mut O) {
    out.put(b"\\x");
    put_hex_digits(b, out);
}

/// Writes `b` as lower-case hex digit pairs (bytea's hex output without
/// its `\x`, and encode(b, 'hex')).
pub fn put_hex_digits<O: TextOut + ?Sized>(b: &[u8], out: &mut O) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut chunk = [0u8; 64];
    for part in b.chunks(32) {
        for (i, &x) in part.iter().enumerate() {
            chunk[2 * i] = HEX[(x >> 4) as usize];
            chunk[2 * i + 1] = HEX[(x & 15) as usize];
        }
        out.put(&chunk[..2 * part.len()]);
    }
}

/// Writes the text form of a non-NULL value into any sink (NULL writes
/// nothing; the protocol marks NULL separately).
pub fn write_value<O: TextOut + ?Sized>(v: &Value, out: &mut O) {
    write_value_in(v, crate::Zone::utc_ref(), out)
}

/// Writes the text form of a non-NULL value with timestamptz values (also
/// inside arrays and records) shown in `zone`.
pub fn write_value_in<O: TextOut + ?Sized>(v: &Value, zone: &crate::Zone, out: &mut O) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.put(if *b { b"t" } else { b"f" }),
        Value::Int2(i) => write_int(*i as i64, out),
        Value::Int4(i) => write_int(*i as i64, out),
        Value::Int8(i) => write_int(*i, out),
        Value::Float4(f) => write_float4(*f, out),
        Value::Float8(f) => write_float(*f, out),
        Value::Numeric(n) => out.put(n.to_string().as_bytes()),
        Value::Time(t) => crate::timeofday::write_time(*t, out),
        Value::TimeTz(t, z) => crate::timeofday::write_timetz(*t, *z, out),
        Value::Interval(iv) => crate::interval::write_interval(iv, out),
        Value::Uuid(u) => crate::uuid::write_uuid(u, out),
        Value::Inet(i) => out.put(i.to_string().as_bytes()),
        Value::Json(s) => out.put(s.as_bytes()),
        Value::Enum(e) => out.put(e.label().as_bytes()),
        Value::Jsonb(j) => crate::json::write_jsonb(j, out),
        Value::Text(s) => out.put(s.as_bytes()),
        Value::Timestamp(t) => datetime::write_timestamp(*t, false, out),
        Value::TimestampTz(t) => datetime::write_timestamp_in(*t, Some(zone), out),
        Value::Date(d) => datetime::write_date(*d, out),
        Value::Bytea(b) => write_hex(b, out),
        Value::Array(a) => {
            let mut text = Vec::new();
            crate::array::write_array_in(a, zone, &mut text);
            out.put(&text);
        }
        Value::Oid(o) => write_int(*o as i64, out),
        Value::Reg(r) => out.put(r.name.as_bytes()),
        Value::Record(r) => {
            let mut text = Vec::new();
            crate::record::write_record_in(r, zone, &mut text);
            out.put(&text);
        }
        Value::Range(r) => {
            let mut text = Vec::new();
            crate::range::write_range_in(r, zone, &mut text);
            out.put(&text);
        }
    }
}

/// Appends the text form of a non-NULL value (NULL appends nothing).
pub fn format_text(v: &Value, out: &mut Vec<u8>) {
    write_value(v, out);
}

/// Appends the text form to a wire buffer; integers, floats and text avoid
/// any allocation.
pub fn write_text(v: &Value, buf: &mut BytesMut) {
    write_value(v, buf);
}

/// Appends the text form to a wire buffer, timestamptz shown in `zone`.
pub fn write_text_in(v: &Value, zone: &crate::Zone, buf: &mut BytesMut) {
    write_value_in(v, zone, buf);
}

/// The text form as a String, timestamptz shown in `zone`.
pub fn to_text_in(v: &Value, zone: &crate::Zone) -> String {
    if zone.is_utc() {
        return to_text(v);
    }
    let mut out = Vec::new();
    write_value_in(v, zone, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// The text form as a String (for messages and casts).
pub fn to_text(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        _ => {
            let mut out = Vec::new();
            format_text(v, &mut out);
            String::from_utf8(out).unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqlState;

    fn txt(v: Value) -> String {
        to_text(&v)
    }

    fn parse(ty: DataType, s: &str) -> String {
        match parse_text(&ty, s) {
            Ok(v) => to_text(&v),
            Err(e) => format!("{} {}", e.code.code(), e.message),
        }
    }

    #[test]
    fn floats_like_postgres() {
        let cases = [
            (0.1, "0.1"),
            (1e20, "1e+20"),
            (1.5e-7, "1.5e-07"),
            (123456789012345.0, "123456789012345"),
            (1234567890123456.0, "1.234567890123456e+15"),
            (1e15, "1e+15"),
            (1e14, "100000000000000"),
            (-0.0, "-0"),
            (0.0, "0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-1.5, "-1.5"),
            (100.0, "100"),
            (std::f64::consts::PI, "3.141592653589793"),
            (0.30000000000000004, "0.30000000000000004"),
            (1e308, "1e+308"),
            (4.9e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            // PostgreSQL's Ryu rejects boundary digits and breaks ties to even.
            (f64::from_bits(0xc364_fdd1_a8ce_5a66), "-4.7268611650409264e+16"),
            (f64::from_bits(0xc31e_24f4_aa2c_8241), "-2.1212206367458722e+15"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (f, s) in cases {
            assert_eq!(format_float(f), s, "{f:e}");
            let mut b = BytesMut::new();
            write_text(&Value::Float8(f), &mut b);
            assert_eq!(&b[..], s.as_bytes());
        }
    }

    #[test]
    fn float_input() {
        assert_eq!(parse(DataType::Float8, " 1.5 "), "1.5");
        assert_eq!(parse(DataType::Float8, "-inf"), "-Infinity");
        assert_eq!(parse(DataType::Float8, "+Infinity"), "Infinity");
        assert_eq!(parse(DataType::Float8, "nan"), "NaN");
        assert_eq!(parse(DataType::Float8, ".5"), "0.5");
        assert_eq!(parse(DataType::Float8, "5."), "5");
        assert_eq!(parse(DataType::Float8, "1e-310"), "1e-310");
        assert_eq!(
            parse(DataType::Float8, "1e309"),
            "22003 \"1e309\" is out of range for type double precision"
        );
        assert_eq!(
            parse(DataType::Float8, "1e-400"),
            "22003 \"1e-400\" is out of range for type double precision"
        );
        for bad in ["", "abc", "1.5.5", "1e", "1_000", "--1", "in"] {
            assert_eq!(
                parse(DataType::Float8, bad),
                format!("22P02 invalid input syntax for type double precision: \"{bad}\"")
            );
        }
    }

    #[test]
    fn ints_like_postgres() {
        assert_eq!(parse_text(&DataType::Int4, " 42 ").ok(), Some(Value::Int4(42)));
        assert_eq!(parse(DataType::Int4, "+7"), "7");
        assert_eq!(parse(DataType::Int4, "-0"), "0");
        assert_eq!(
            parse(DataType::Int4, "abc"),
            "22P02 invalid input syntax for type integer: \"abc\""
        );
        for bad in ["", "1_000", "1.5", "1e3", "0x1F", "- 5", "12 34"] {
            assert_eq!(
                parse(DataType::Int8, bad),
                format!("22P02 invalid input syntax for type bigint: \"{bad}\"")
            );
        }
        assert_eq!(parse(DataType::Int2, "-32768"), "-32768");
        assert_eq!(
            parse(DataType::Int2, "32768"),
            "22003 value \"32768\" is out of range for type smallint"
        );
        assert_eq!(
            parse(DataType::Int4, "2147483648"),
            "22003 value \"2147483648\" is out of range for type integer"
        );
        assert_eq!(
            parse(DataType::Int8, "99999999999999999999999999999999999999999"),
            "22003 value \"99999999999999999999999999999999999999999\" is out of range for type bigint"
        );
        let mut b = BytesMut::new();
        write_text(&Value::Int8(i64::MIN), &mut b);
        assert_eq!(&b[..], i64::MIN.to_string().as_bytes());
    }

    #[test]
    fn bools_like_postgres() {
        for t in ["t", "TRUE", "yes", "y", "on", "1", "  true  ", "tr", "ye"] {
            assert_eq!(parse(DataType::Bool, t), "t", "{t}");
        }
        for f in ["f", "false", "no", "n", "off", "of", "0", "fa"] {
            assert_eq!(parse(DataType::Bool, f), "f", "{f}");
        }
        for bad in ["o", "maybe", "", "offf", "2", "11", "tru e"] {
            assert_eq!(
                parse(DataType::Bool, bad),
                format!("22P02 invalid input syntax for type boolean: \"{bad}\"")
            );
        }
    }

    #[test]
    fn strings_like_postgres() {
        assert_eq!(parse_text(&DataType::Char(3), "a").ok(), Some(Value::Text("a  ".into())));
        assert_eq!(parse(DataType::Char(3), "abc  "), "abc");
        assert_eq!(
            parse(DataType::Varchar(Some(3)), "abcd"),
            "22001 value too long for type character varying(3)"
        );
        assert_eq!(parse(DataType::Char(3), "ab c"), "22001 value too long for type character(3)");
        assert_eq!(parse(DataType::Varchar(Some(2)), "ab  "), "ab");
        assert_eq!(parse(DataType::Varchar(Some(3)), "hél"), "hél");
        assert_eq!(parse(DataType::Char(3), "é"), "é  ");
    }

    #[test]
    fn bytea_like_postgres() {
        assert_eq!(txt(Value::Bytea(vec![1, 0xab])), "\\x01ab");
        assert_eq!(txt(Value::Bytea(vec![])), "\\x");
        assert_eq!(parse_text(&DataType::Bytea, "\\x01AB").ok(), Some(Value::Bytea(vec![1, 0xab])));
        assert_eq!(parse(DataType::Bytea, "\\x 01 02"), "\\x0102");
        assert_eq!(parse(DataType::Bytea, "abc"), "\\x616263");
        assert_eq!(parse(DataType::Bytea, "a\\\\b"), "\\x615c62");
        assert_eq!(parse(DataType::Bytea, "\\001\\377"), "\\x01ff");
        assert_eq!(
            parse(DataType::Bytea, "\\x0"),
            "22023 invalid hexadecimal data: odd number of digits"
        );
        assert_eq!(parse(DataType::Bytea, "\\x0G"), "22023 invalid hexadecimal digit: \"G\"");
        assert_eq!(parse(DataType::Bytea, "\\xé"), "22023 invalid hexadecimal digit: \"é\"");
        for bad in ["\\9", "\\", "a\\", "\\400"] {
            assert_eq!(parse(DataType::Bytea, bad), "22P02 invalid input syntax for type bytea");
        }
        let long: Vec<u8> = (0..=255).collect();
        let mut b = BytesMut::new();
        write_text(&Value::Bytea(long.clone()), &mut b);
        assert_eq!(
            parse_text(&DataType::Bytea, std::str::from_utf8(&b).expect("ascii")).ok(),
            Some(Value::Bytea(long))
        );
    }

    #[test]
    fn numeric_and_datetime_output() {
        assert_eq!(parse(DataType::Numeric(None), "1.50"), "1.50");
        assert_eq!(parse(DataType::Numeric(Some((5, 2))), "1.235"), "1.24");
        assert_eq!(parse(DataType::Numeric(None), "-inf"), "-Infinity");
        assert_eq!(parse(DataType::Date, "2024-01-02"), "2024-01-02");
        assert_eq!(parse(DataType::Timestamp, "2024-01-02 03:04:05.120"), "2024-01-02 03:04:05.12");
        assert_eq!(
            parse(DataType::TimestampTz, "2024-01-02 03:04:05+01"),
            "2024-01-02 02:04:05+00"
        );
        assert_eq!(txt(Value::Bool(true)), "t");
        let e = parse_text(&DataType::Date, "nope").expect_err("bad date");
        assert_eq!(e.code, SqlState::InvalidDatetimeFormat);
    }

    proptest::proptest! {
        /// No input makes any parser panic; the date/time alphabet drives
        /// the datetime parser deep into its branches.
        #[test]
        fn parsers_never_panic(
            ty in crate::arb::data_type(),
            junk in "\\PC{0,12}",
            dt in "[0-9 :.+-TtZzBCbcADUTC/é]{0,24}",
        ) {
            let _ = parse_text(&ty, &junk);
            let _ = parse_text(&ty, &dt);
        }

        /// Every value reads back from its own text form (floats print
        /// their shortest round-trip digits, dates and timestamps their
        /// full range including BC years and infinities).
        #[test]
        fn text_round_trips((ty, v, _) in crate::arb::typed_pair()) {
            if !v.is_null() {
                let s = to_text(&v);
                let back = parse_text(&ty, &s).expect("own output parses");
                proptest::prop_assert!(crate::arb::same(&back, &v), "{:?} -> {} -> {:?}", v, s, back);
            }
        }
    }
}
