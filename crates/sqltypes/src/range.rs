//! Range types: int4range, int8range, numrange, tsrange, tstzrange and
//! daterange, PostgreSQL's six built-in ones.
//!
//! A range is empty or has a lower and an upper bound, each either
//! infinite or a value of the subtype with a flag for whether the bound
//! includes it. Values are always kept in canonical form, as PostgreSQL's
//! `range_serialize` leaves them: an infinite bound is never inclusive,
//! equal bounds that are not both inclusive make the range empty, and the
//! discrete ranges (of integers and dates) have an inclusive lower and an
//! exclusive upper bound (`[1,5]` is `[1,6)`). Because of that, equality
//! is equality of bounds and two ranges never differ only in form.
//!
//! Text I/O is `range_in`/`range_out` (`[1,5)`, `(,"2024-01-01 00:00:00")`,
//! `empty`); binary I/O is `range_recv`/`range_send` (a flags byte, then
//! each finite bound length-prefixed in the subtype's binary form).
//! Ranges order as `range_cmp` does: empty first, then by lower bound, then
//! by upper bound. The operators are here too (`@>`, `&&`, `<<`, `-|-`,
//! `+`, `*`, `-` ...), with PostgreSQL's bound arithmetic.

use std::cmp::Ordering;

use bytes::{BufMut, BytesMut};

use crate::{err, DataType, ErrorReport, Result, Value};

/// One of the built-in range types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RangeKind {
    /// int4range (3904)
    Int4,
    /// int8range (3926)
    Int8,
    /// numrange (3906)
    Num,
    /// tsrange (3908)
    Ts,
    /// tstzrange (3910)
    TsTz,
    /// daterange (3912)
    Date,
}

/// Every range kind, in OID order.
pub const RANGE_KINDS: [RangeKind; 6] = [
    RangeKind::Int4,
    RangeKind::Num,
    RangeKind::Ts,
    RangeKind::TsTz,
    RangeKind::Date,
    RangeKind::Int8,
];

impl RangeKind {
    /// The range type's OID (its array type's is one more).
    pub fn oid(self) -> u32 {
        match self {
            RangeKind::Int4 => 3904,
            RangeKind::Num => 3906,
            RangeKind::Ts => 3908,
            RangeKind::TsTz => 3910,
            RangeKind::Date => 3912,
            RangeKind::Int8 => 3926,
        }
    }

    /// The kind with this type OID.
    pub fn from_oid(oid: u32) -> Option<RangeKind> {
        RANGE_KINDS.into_iter().find(|k| k.oid() == oid)
    }

    /// pg_type.typname (also the constructor function's name).
    pub fn name(self) -> &'static str {
        match self {
            RangeKind::Int4 => "int4range",
            RangeKind::Int8 => "int8range",
            RangeKind::Num => "numrange",
            RangeKind::Ts => "tsrange",
            RangeKind::TsTz => "tstzrange",
            RangeKind::Date => "daterange",
        }
    }

    /// The array type's pg_type.typname.
    pub fn array_name(self) -> &'static str {
        match self {
            RangeKind::Int4 => "_int4range",
            RangeKind::Int8 => "_int8range",
            RangeKind::Num => "_numrange",
            RangeKind::Ts => "_tsrange",
            RangeKind::TsTz => "_tstzrange",
            RangeKind::Date => "_daterange",
        }
    }

    /// The type of the bounds.
    pub fn subtype(self) -> DataType {
        match self {
            RangeKind::Int4 => DataType::Int4,
            RangeKind::Int8 => DataType::Int8,
            RangeKind::Num => DataType::Numeric(None),
            RangeKind::Ts => DataType::Timestamp,
            RangeKind::TsTz => DataType::TimestampTz,
            RangeKind::Date => DataType::Date,
        }
    }

    /// pg_range's row: rngsubtype, rngmultitypid, rngsubopc (the
    /// subtype's default btree operator class), rngcanonical and
    /// rngsubdiff (function OIDs, 0 for none).
    pub fn pg_range(self) -> [u32; 5] {
        match self {
            RangeKind::Int4 => [23, 4451, 1978, 3914, 3922],
            RangeKind::Num => [1700, 4532, 3125, 0, 3924],
            RangeKind::Ts => [1114, 4533, 3128, 0, 3929],
            RangeKind::TsTz => [1184, 4534, 3127, 0, 3930],
            RangeKind::Date => [1082, 4535, 3122, 3915, 3925],
            RangeKind::Int8 => [20, 4536, 3124, 3928, 3923],
        }
    }

    /// True for the discrete ranges, which are kept as `[lower,upper)`.
    fn discrete(self) -> bool {
        matches!(self, RangeKind::Int4 | RangeKind::Int8 | RangeKind::Date)
    }
}

/// One bound: its value (None when infinite) and whether it includes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The value, None for an infinite bound.
    pub value: Option<Value>,
    /// True if the range includes the value (never for an infinite bound).
    pub inclusive: bool,
}

impl Bound {
    /// An infinite bound.
    pub fn infinite() -> Bound {
        Bound { value: None, inclusive: false }
    }
}

/// A range value in canonical form (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeValue {
    /// Which range type.
    pub kind: RangeKind,
    /// The lower and upper bound; None for the empty range.
    pub bounds: Option<(Bound, Bound)>,
}

// range_send's flag bits.
const EMPTY: u8 = 0x01;
const LB_INC: u8 = 0x02;
const UB_INC: u8 = 0x04;
const LB_INF: u8 = 0x08;
const UB_INF: u8 = 0x10;

impl RangeValue {
    /// The empty range of `kind`.
    pub fn empty(kind: RangeKind) -> RangeValue {
        RangeValue { kind, bounds: None }
    }

    /// True for the empty range.
    pub fn is_empty(&self) -> bool {
        self.bounds.is_none()
    }

    /// The lower bound (None when empty).
    pub fn lower(&self) -> Option<&Bound> {
        self.bounds.as_ref().map(|(l, _)| l)
    }

    /// The upper bound (None when empty).
    pub fn upper(&self) -> Option<&Bound> {
        self.bounds.as_ref().map(|(_, u)| u)
    }

    /// The flags byte of the binary and stored forms.
    pub fn flags(&self) -> u8 {
        let Some((l, u)) = &self.bounds else { return EMPTY };
        let mut f = 0;
        f |= if l.value.is_none() {
            LB_INF
        } else if l.inclusive {
            LB_INC
        } else {
            0
        };
        f |= if u.value.is_none() {
            UB_INF
        } else if u.inclusive {
            UB_INC
        } else {
            0
        };
        f
    }

    /// Wraps the range as a value.
    pub fn into_value(self) -> Value {
        Value::Range(Box::new(self))
    }
}

/// Builds a range as PostgreSQL's `make_range` does: the lower bound may
/// not exceed the upper (22000), equal bounds not both inclusive make it
/// empty, infinite bounds are exclusive, and discrete ranges become
/// `[lower,upper)`. `empty` asks for the empty range outright.
pub fn make(kind: RangeKind, lower: Bound, upper: Bound, empty: bool) -> Result<RangeValue> {
    let mut lower = Bound { inclusive: lower.inclusive && lower.value.is_some(), ..lower };
    let mut upper = Bound { inclusive: upper.inclusive && upper.value.is_some(), ..upper };
    if empty {
        return Ok(RangeValue::empty(kind));
    }
    if let (Some(l), Some(u)) = (&lower.value, &upper.value) {
        match value_cmp(l, u)? {
            Ordering::Greater => {
                return Err(err!(
                    DataException,
                    "range lower bound must be less than or equal to range upper bound"
                ))
            }
            Ordering::Equal if !(lower.inclusive && upper.inclusive) => {
                return Ok(RangeValue::empty(kind))
            }
            _ => {}
        }
    }
    if kind.discrete() {
        if let Some(v) = lower.value.as_mut().filter(|_| !lower.inclusive) {
            if let Some(next) = successor(v)? {
                *v = next;
                lower.inclusive = true;
            }
        }
        if let Some(v) = upper.value.as_mut().filter(|_| upper.inclusive) {
            if let Some(next) = successor(v)? {
                *v = next;
                upper.inclusive = false;
            }
        }
        // (1,2) became [2,2): empty.
        if let (Some(l), Some(u)) = (&lower.value, &upper.value) {
            if value_cmp(l, u)? == Ordering::Equal && !(lower.inclusive && upper.inclusive) {
                return Ok(RangeValue::empty(kind));
            }
        }
    }
    Ok(RangeValue { kind, bounds: Some((lower, upper)) })
}

/// The next value of a discrete subtype (None for an infinite date, which
/// stays as it is); past the type's end is 22003 or 22008.
fn successor(v: &Value) -> Result<Option<Value>> {
    Ok(Some(match v {
        Value::Int4(i) => Value::Int4(
            i.checked_add(1).ok_or_else(|| err!(NumericValueOutOfRange, "integer out of range"))?,
        ),
        Value::Int8(i) => Value::Int8(
            i.checked_add(1).ok_or_else(|| err!(NumericValueOutOfRange, "bigint out of range"))?,
        ),
        Value::Date(d) if crate::datetime::date_is_finite(*d) => {
            Value::Date(crate::datetime::date_add_days(*d, 1)?)
        }
        _ => return Ok(None),
    }))
}

/// Compares two bound values of one subtype.
fn value_cmp(a: &Value, b: &Value) -> Result<Ordering> {
    crate::ops::compare(a, b)?
        .ok_or_else(|| err!(InternalError, "range bounds of different types: {a:?}, {b:?}"))
}

/// Compares two bounds as `range_cmp_bounds` does, each known to be a
/// lower (`true`) or an upper bound: an infinite lower bound is below
/// everything and an infinite upper above; at equal values an inclusive
/// lower bound is below an exclusive one, an exclusive upper below an
/// inclusive one, and an exclusive upper below an exclusive lower.
pub fn cmp_bounds(a: &Bound, a_lower: bool, b: &Bound, b_lower: bool) -> Ordering {
    let side = |lower: bool| if lower { Ordering::Less } else { Ordering::Greater };
    match (&a.value, &b.value) {
        (None, None) if a_lower == b_lower => Ordering::Equal,
        (None, _) => side(a_lower),
        (_, None) => side(b_lower).reverse(),
        (Some(x), Some(y)) => match crate::ops::compare(x, y).ok().flatten() {
            Some(Ordering::Equal) | None => match (a.inclusive, b.inclusive) {
                (true, true) => Ordering::Equal,
                (false, false) if a_lower == b_lower => Ordering::Equal,
                // An exclusive lower bound is just above its value, an
                // exclusive upper just below.
                (false, _) => side(a_lower).reverse(),
                (_, false) => side(b_lower),
            },
            Some(o) => o,
        },
    }
}

/// Orders two ranges as `range_cmp`: empty first, then by lower bound,
/// then by upper bound.
pub fn compare_ranges(a: &RangeValue, b: &RangeValue) -> Ordering {
    match (&a.bounds, &b.bounds) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((al, au)), Some((bl, bu))) => {
            cmp_bounds(al, true, bl, true).then_with(|| cmp_bounds(au, false, bu, false))
        }
    }
}

fn malformed(input: &str, detail: &str) -> ErrorReport {
    err!(InvalidTextRepresentation, "malformed range literal: \"{input}\"").with_detail(detail)
}

/// Reads one bound's text at `s` (`range_parse_bound`): None for an
/// infinite (empty, unquoted) bound. Double quotes group, `""` inside them
/// is a quote and a backslash takes the next character as it is.
fn parse_bound<'a>(input: &str, s: &'a str) -> Result<(Option<String>, &'a str)> {
    let mut chars = s.char_indices().peekable();
    if matches!(chars.peek(), Some((_, ',' | ')' | ']'))) {
        return Ok((None, s));
    }
    let end = || malformed(input, "Unexpected end of input.");
    let mut text = String::new();
    let mut quoted = false;
    loop {
        match chars.peek().copied() {
            None => return Err(end()),
            Some((i, ',' | ')' | ']')) if !quoted => return Ok((Some(text), &s[i..])),
            Some((_, '\\')) => {
                chars.next();
                text.push(chars.next().ok_or_else(end)?.1);
            }
            Some((_, '"')) => {
                chars.next();
                if !quoted {
                    quoted = true;
                } else if matches!(chars.peek(), Some((_, '"'))) {
                    chars.next();
                    text.push('"');
                } else {
                    quoted = false;
                }
            }
            Some((_, c)) => {
                chars.next();
                text.push(c);
            }
        }
    }
}

/// Parses the text form of a range (`range_in`), timestamptz bounds read
/// in `zone`.
pub fn parse_range_in(kind: RangeKind, input: &str, zone: &crate::Zone) -> Result<Value> {
    let s = input.trim_start_matches(crate::text::c_space);
    if s.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("empty")) {
        if !s[5..].trim_matches(crate::text::c_space).is_empty() {
            return Err(malformed(input, "Junk after \"empty\" key word."));
        }
        return Ok(RangeValue::empty(kind).into_value());
    }
    let lower_inc = match s.as_bytes().first() {
        Some(b'[') => true,
        Some(b'(') => false,
        _ => return Err(malformed(input, "Missing left parenthesis or bracket.")),
    };
    let (lower, s) = parse_bound(input, &s[1..])?;
    let Some(s) = s.strip_prefix(',') else {
        return Err(malformed(input, "Missing comma after lower bound."));
    };
    let (upper, s) = parse_bound(input, s)?;
    let upper_inc = match s.as_bytes().first() {
        Some(b']') => true,
        Some(b')') => false,
        _ => return Err(malformed(input, "Too many commas.")),
    };
    if !s[1..].trim_matches(crate::text::c_space).is_empty() {
        return Err(malformed(input, "Junk after right parenthesis or bracket."));
    }
    let sub = kind.subtype();
    let bound = |text: Option<String>, inclusive: bool| -> Result<Bound> {
        Ok(Bound {
            value: match text {
                Some(t) => Some(crate::text::parse_text_in(&sub, &t, zone)?),
                None => None,
            },
            inclusive,
        })
    };
    let lower = bound(lower, lower_inc)?;
    let upper = bound(upper, upper_inc)?;
    Ok(make(kind, lower, upper, false)?.into_value())
}

/// Appends the text form of a range (`range_out`), timestamptz bounds in
/// `zone`: a bound is double-quoted when empty or holding a quote,
/// backslash, parenthesis, bracket, comma or white space, with `"` and `\`
/// doubled inside.
pub fn write_range_in(r: &RangeValue, zone: &crate::Zone, out: &mut Vec<u8>) {
    let Some((l, u)) = &r.bounds else {
        out.extend_from_slice(b"empty");
        return;
    };
    out.push(if l.inclusive { b'[' } else { b'(' });
    write_bound(l, zone, out);
    out.push(b',');
    write_bound(u, zone, out);
    out.push(if u.inclusive { b']' } else { b')' });
}

fn write_bound(b: &Bound, zone: &crate::Zone, out: &mut Vec<u8>) {
    let Some(v) = &b.value else { return };
    let mut text = Vec::new();
    crate::text::write_value_in(v, zone, &mut text);
    let quote = crate::array::quoted_between(&text, b'(', b')')
        || text.iter().any(|c| matches!(c, b'[' | b']'));
    if quote {
        crate::array::push_quoted_doubling(&text, out);
    } else {
        out.extend_from_slice(&text);
    }
}

/// Rebuilds a range from its flags byte (`range_send`'s), reading each
/// finite bound's value, lower first, with `read`.
pub fn from_flags(
    kind: RangeKind,
    flags: u8,
    mut read: impl FnMut() -> Result<Value>,
) -> Result<RangeValue> {
    if flags & !(EMPTY | LB_INC | UB_INC | LB_INF | UB_INF) != 0 {
        return Err(err!(InvalidBinaryRepresentation, "invalid range flags"));
    }
    let empty = flags & EMPTY != 0;
    let mut bound = |present: bool, inclusive: bool| -> Result<Bound> {
        Ok(Bound { value: if present { Some(read()?) } else { None }, inclusive })
    };
    let lower = bound(!empty && flags & LB_INF == 0, flags & LB_INC != 0)?;
    let upper = bound(!empty && flags & UB_INF == 0, flags & UB_INC != 0)?;
    make(kind, lower, upper, empty)
}

/// Decodes the binary form of a range (`range_recv`).
pub fn decode_range(kind: RangeKind, b: &[u8]) -> Result<Value> {
    let short = || err!(InvalidBinaryRepresentation, "insufficient data left in message");
    let (&flags, mut rest) = b.split_first().ok_or_else(short)?;
    let sub = kind.subtype();
    let range = from_flags(kind, flags, || {
        let len = rest.get(..4).ok_or_else(short)?;
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        let len = usize::try_from(len).map_err(|_| short())?;
        let data = rest.get(4..4 + len).ok_or_else(short)?;
        let value = crate::binary::decode_binary(&sub, data)?;
        rest = &rest[4 + len..];
        Ok(value)
    })?;
    if !rest.is_empty() {
        return Err(err!(InvalidBinaryRepresentation, "incorrect binary data format"));
    }
    Ok(range.into_value())
}

/// Appends the binary form of a range (`range_send`): the flags byte,
/// then each finite bound as a length and its binary form.
pub fn write_range_binary(r: &RangeValue, buf: &mut BytesMut) {
    buf.put_u8(r.flags());
    for b in [r.lower(), r.upper()].into_iter().flatten() {
        if let Some(v) = &b.value {
            crate::binary::write_field(v, buf);
        }
    }
}

/// `r @> v`: the range contains the element.
pub fn contains_elem(r: &RangeValue, v: &Value) -> Result<bool> {
    let Some((l, u)) = &r.bounds else { return Ok(false) };
    if let Some(lv) = &l.value {
        match value_cmp(lv, v)? {
            Ordering::Greater => return Ok(false),
            Ordering::Equal if !l.inclusive => return Ok(false),
            _ => {}
        }
    }
    if let Some(uv) = &u.value {
        match value_cmp(uv, v)? {
            Ordering::Less => return Ok(false),
            Ordering::Equal if !u.inclusive => return Ok(false),
            _ => {}
        }
    }
    Ok(true)
}

/// `a @> b`: every value of b is in a (the empty range is in every range).
pub fn contains(a: &RangeValue, b: &RangeValue) -> bool {
    match (&a.bounds, &b.bounds) {
        (_, None) => true,
        (None, _) => false,
        (Some((al, au)), Some((bl, bu))) => {
            cmp_bounds(al, true, bl, true).is_le() && cmp_bounds(au, false, bu, false).is_ge()
        }
    }
}

/// `a && b`: the ranges share a value.
pub fn overlaps(a: &RangeValue, b: &RangeValue) -> bool {
    let (Some((al, au)), Some((bl, bu))) = (&a.bounds, &b.bounds) else { return false };
    (cmp_bounds(al, true, bl, true).is_ge() && cmp_bounds(al, true, bu, false).is_le())
        || (cmp_bounds(bl, true, al, true).is_ge() && cmp_bounds(bl, true, au, false).is_le())
}

/// `a << b`: a lies wholly below b.
pub fn left_of(a: &RangeValue, b: &RangeValue) -> bool {
    let (Some((_, au)), Some((bl, _))) = (&a.bounds, &b.bounds) else { return false };
    cmp_bounds(au, false, bl, true).is_lt()
}

/// `a &< b`: a does not extend above b.
pub fn not_right_of(a: &RangeValue, b: &RangeValue) -> bool {
    let (Some((_, au)), Some((_, bu))) = (&a.bounds, &b.bounds) else { return false };
    cmp_bounds(au, false, bu, false).is_le()
}

/// `a &> b`: a does not extend below b.
pub fn not_left_of(a: &RangeValue, b: &RangeValue) -> bool {
    let (Some((al, _)), Some((bl, _))) = (&a.bounds, &b.bounds) else { return false };
    cmp_bounds(al, true, bl, true).is_ge()
}

/// True if upper bound `u` meets lower bound `l` with nothing between
/// (`bounds_adjacent`): the same value, included by exactly one of them.
/// Discrete ranges are canonical, so no values lie between unequal bounds.
fn bounds_adjacent(u: &Bound, l: &Bound) -> bool {
    match (&u.value, &l.value) {
        (Some(x), Some(y)) => {
            crate::ops::compare(x, y).ok().flatten() == Some(Ordering::Equal)
                && u.inclusive != l.inclusive
        }
        _ => false,
    }
}

/// `a -|- b`: the ranges meet without overlapping.
pub fn adjacent(a: &RangeValue, b: &RangeValue) -> bool {
    let (Some((al, au)), Some((bl, bu))) = (&a.bounds, &b.bounds) else { return false };
    bounds_adjacent(au, bl) || bounds_adjacent(bu, al)
}

/// `a + b` (`strict` true) or range_merge(a, b): the smallest range
/// covering both; for `+` they must overlap or meet (22000 otherwise).
pub fn union(a: &RangeValue, b: &RangeValue, strict: bool) -> Result<RangeValue> {
    let (Some((al, au)), Some((bl, bu))) = (&a.bounds, &b.bounds) else {
        return Ok(if a.is_empty() { b.clone() } else { a.clone() });
    };
    if strict && !overlaps(a, b) && !adjacent(a, b) {
        return Err(err!(DataException, "result of range union would not be contiguous"));
    }
    let lower = if cmp_bounds(al, true, bl, true).is_lt() { al } else { bl };
    let upper = if cmp_bounds(au, false, bu, false).is_gt() { au } else { bu };
    make(a.kind, lower.clone(), upper.clone(), false)
}

/// `a * b`: the values in both.
pub fn intersection(a: &RangeValue, b: &RangeValue) -> Result<RangeValue> {
    match (&a.bounds, &b.bounds) {
        (Some((al, au)), Some((bl, bu))) if overlaps(a, b) => {
            let lower = if cmp_bounds(al, true, bl, true).is_ge() { al } else { bl };
            let upper = if cmp_bounds(au, false, bu, false).is_le() { au } else { bu };
            make(a.kind, lower.clone(), upper.clone(), false)
        }
        _ => Ok(RangeValue::empty(a.kind)),
    }
}

/// `a - b`: the values of a not in b, which must be one range (22000
/// when b splits a in two).
pub fn difference(a: &RangeValue, b: &RangeValue) -> Result<RangeValue> {
    let (Some((al, au)), Some((bl, bu))) = (&a.bounds, &b.bounds) else { return Ok(a.clone()) };
    let l1l2 = cmp_bounds(al, true, bl, true);
    let l1u2 = cmp_bounds(al, true, bu, false);
    let u1l2 = cmp_bounds(au, false, bl, true);
    let u1u2 = cmp_bounds(au, false, bu, false);
    if l1l2.is_lt() && u1u2.is_gt() {
        return Err(err!(DataException, "result of range difference would not be contiguous"));
    }
    if l1u2.is_gt() || u1l2.is_lt() {
        return Ok(a.clone());
    }
    if l1l2.is_ge() && u1u2.is_le() {
        return Ok(RangeValue::empty(a.kind));
    }
    if l1l2.is_le() && u1l2.is_ge() && u1u2.is_le() {
        // b cuts a's top: a's lower bound to just below b's.
        let upper = Bound { value: bl.value.clone(), inclusive: !bl.inclusive };
        return make(a.kind, al.clone(), upper, false);
    }
    // b cuts a's bottom: from just above b's upper bound to a's.
    let lower = Bound { value: bu.value.clone(), inclusive: !bu.inclusive };
    make(a.kind, lower, au.clone(), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::to_text;

    fn r(kind: RangeKind, s: &str) -> RangeValue {
        match parse_range_in(kind, s, crate::Zone::utc_ref()).expect(s) {
            Value::Range(r) => *r,
            other => panic!("{other:?}"),
        }
    }

    fn int(s: &str) -> RangeValue {
        r(RangeKind::Int4, s)
    }

    #[test]
    fn text_input_is_canonical() {
        let show = |s: &str| to_text(&int(s).into_value());
        assert_eq!(show("[1,5)"), "[1,5)");
        assert_eq!(show("[1,5]"), "[1,6)");
        assert_eq!(show("(1,5]"), "[2,6)");
        assert_eq!(show("(,5]"), "(,6)");
        assert_eq!(show("[,]"), "(,)");
        assert_eq!(show("[3,3)"), "empty");
        assert_eq!(show("(1,2)"), "empty");
        assert_eq!(show(" EMPTY "), "empty");
        assert_eq!(show(" [ 1 , 5 ) "), "[1,5)");
        let num = to_text(&r(RangeKind::Num, "[1.5,\"2.5\"]").into_value());
        assert_eq!(num, "[1.5,2.5]");
        let ts = to_text(&r(RangeKind::Ts, "[2024-01-01 10:00,2024-01-02)").into_value());
        assert_eq!(ts, "[\"2024-01-01 10:00:00\",\"2024-01-02 00:00:00\")");
    }

    #[test]
    fn text_input_errors_name_the_problem() {
        let detail = |s: &str| {
            parse_range_in(RangeKind::Int4, s, crate::Zone::utc_ref())
                .expect_err(s)
                .detail
                .unwrap_or_default()
        };
        assert_eq!(detail("1,5"), "Missing left parenthesis or bracket.");
        assert_eq!(detail("[1,5"), "Unexpected end of input.");
        assert_eq!(detail("[1"), "Unexpected end of input.");
        assert_eq!(detail("[1,5,6)"), "Too many commas.");
        assert_eq!(detail("[1,5) x"), "Junk after right parenthesis or bracket.");
        assert_eq!(detail("empty x"), "Junk after \"empty\" key word.");
        let e = parse_range_in(RangeKind::Int4, "[5,1)", crate::Zone::utc_ref()).expect_err("5,1");
        assert_eq!(e.message, "range lower bound must be less than or equal to range upper bound");
        let e = parse_range_in(RangeKind::Int4, "[1,2147483647]", crate::Zone::utc_ref());
        assert_eq!(e.expect_err("overflow").message, "integer out of range");
    }

    #[test]
    fn binary_round_trips() {
        for s in ["[1,5)", "(,3)", "[2,)", "(,)", "empty"] {
            let v = int(s);
            let mut buf = BytesMut::new();
            write_range_binary(&v, &mut buf);
            assert_eq!(decode_range(RangeKind::Int4, &buf).expect(s), v.clone().into_value());
        }
        let mut buf = BytesMut::new();
        write_range_binary(&int("[1,5)"), &mut buf);
        assert_eq!(buf[0], LB_INC);
        assert_eq!(buf.len(), 1 + 8 + 8);
        assert!(decode_range(RangeKind::Int4, &buf[..buf.len() - 1]).is_err());
        assert!(decode_range(RangeKind::Int4, &[0x40]).is_err());
    }

    #[test]
    fn order_is_range_cmp() {
        let mut v: Vec<RangeValue> =
            ["[2,3)", "empty", "(,3)", "[1,)", "[1,3)"].iter().map(|s| int(s)).collect();
        v.sort_by(compare_ranges);
        let shown: Vec<String> = v.into_iter().map(|x| to_text(&x.into_value())).collect();
        assert_eq!(shown, ["empty", "(,3)", "[1,3)", "[1,)", "[2,3)"]);
    }

    #[test]
    fn operators_follow_postgresql() {
        assert!(contains_elem(&int("[1,5)"), &Value::Int4(3)).expect("cmp"));
        assert!(!contains_elem(&int("[1,5)"), &Value::Int4(5)).expect("cmp"));
        assert!(contains(&int("[1,10)"), &int("[2,3)")));
        assert!(contains(&int("[1,10)"), &int("empty")));
        assert!(overlaps(&int("[1,5)"), &int("[4,8)")));
        assert!(!overlaps(&int("[1,5)"), &int("[5,8)")));
        assert!(left_of(&int("[1,5)"), &int("[5,8)")));
        assert!(not_right_of(&int("[1,5)"), &int("[2,8)")));
        assert!(not_left_of(&int("[3,5)"), &int("[2,8)")));
        assert!(adjacent(&int("[1,5)"), &int("[5,8)")));
        let num = |s: &str| r(RangeKind::Num, s);
        assert!(!adjacent(&num("[1,5)"), &num("(5,8)")));
        let show = |x: Result<RangeValue>| to_text(&x.expect("op").into_value());
        assert_eq!(show(union(&int("[1,5)"), &int("[5,8)"), true)), "[1,8)");
        assert!(union(&int("[1,5)"), &int("[6,8)"), true).is_err());
        assert_eq!(show(union(&int("[1,3)"), &int("[6,8)"), false)), "[1,8)");
        assert_eq!(show(intersection(&int("[1,5)"), &int("[3,8)"))), "[3,5)");
        assert_eq!(show(intersection(&int("[1,5)"), &int("[6,8)"))), "empty");
        assert_eq!(show(difference(&int("[1,8)"), &int("[3,9)"))), "[1,3)");
        assert_eq!(show(difference(&int("[1,8)"), &int("[0,3)"))), "[3,8)");
        assert_eq!(show(difference(&int("[1,8)"), &int("[0,9)"))), "empty");
        assert!(difference(&int("[1,8)"), &int("[3,5)")).is_err());
    }
}
