//! Arrays of a scalar element type, as PostgreSQL has them: up to six
//! dimensions, each with a length and a lower bound (1 unless given), the
//! elements stored flat in row-major order, any of them NULL.
//!
//! Text I/O follows `array_in`/`array_out` (`{1,2,NULL}`, `{{1,2},{3,4}}`,
//! `[0:1]={a,b}`, elements double-quoted when they need it), binary I/O
//! `array_recv`/`array_send` (dimension header, element OID, then each
//! element with its length). Comparison is element by element with NULL
//! elements greater than the rest, then by element count, dimension count
//! and dimensions, which is `array_cmp`'s order. An empty array has no
//! dimensions.

use std::cmp::Ordering;

use bytes::{BufMut, BytesMut};

use crate::binary::decode_binary;
use crate::text::write_value;
use crate::{err, DataType, ErrorReport, Result, Value};

/// The most dimensions an array may have (PostgreSQL's MAXDIM).
pub const MAXDIM: usize = 6;

/// The most elements an array may have (PostgreSQL's MaxArraySize).
pub const MAX_ELEMENTS: usize = (1 << 30) / 8;

/// One dimension: its length and lower bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim {
    /// Number of elements along this dimension.
    pub len: i32,
    /// Subscript of the first element (1 by default).
    pub lower: i32,
}

/// An array value: element type, dimensions and the elements in row-major order.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayValue {
    /// The element type (never itself an array).
    pub elem: DataType,
    /// The dimensions, outermost first; empty for an empty array.
    pub dims: Vec<Dim>,
    /// The elements, `product(dims.len)` of them.
    pub items: Vec<Value>,
    /// An int2vector or oidvector (one dimension from 0, shown
    /// space-separated) rather than an int2[]/oid[].
    pub vector: bool,
}

impl ArrayValue {
    /// A one-dimensional array with lower bound 1 (empty if `items` is).
    pub fn new(elem: DataType, items: Vec<Value>) -> ArrayValue {
        let dims = if items.is_empty() {
            Vec::new()
        } else {
            vec![Dim { len: items.len() as i32, lower: 1 }]
        };
        ArrayValue { elem, dims, items, vector: false }
    }

    /// Wraps the array into a [`Value`].
    pub fn into_value(self) -> Value {
        Value::Array(Box::new(self))
    }

    /// Number of dimensions (0 when empty).
    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// True if some element is NULL.
    pub fn has_nulls(&self) -> bool {
        self.items.iter().any(Value::is_null)
    }
}

/// The most elements an element assignment may grow an array to (less
/// than PostgreSQL's 134217727, to bound the memory one statement takes).
const MAX_ASSIGNED_ELEMENTS: i64 = 1 << 24;

/// `a[at] := v` as PostgreSQL assigns one element: a NULL or empty array
/// becomes one holding `v` at those subscripts; a one-dimensional array
/// grows, filling the gap with NULLs, to take a subscript outside its
/// bounds; a multi-dimensional one must already have the position. In
/// place: on an error `a` is as it was.
pub fn set_element(a: &mut Value, elem: &DataType, at: &[i32], v: Value) -> Result<()> {
    let arr = match a {
        Value::Array(arr) if !arr.dims.is_empty() => arr,
        Value::Null | Value::Array(_) => {
            if at.len() > MAXDIM {
                return Err(err!(
                    ProgramLimitExceeded,
                    "number of array dimensions ({}) exceeds the maximum allowed ({MAXDIM})",
                    at.len()
                ));
            }
            let dims = at.iter().map(|&i| Dim { len: 1, lower: i }).collect();
            let arr = ArrayValue { elem: elem.clone(), dims, items: vec![v], vector: false };
            *a = Value::Array(Box::new(arr));
            return Ok(());
        }
        other => return Err(err!(DatatypeMismatch, "cannot subscript {other:?} as an array")),
    };
    if at.len() != arr.dims.len() {
        return Err(err!(ArraySubscriptError, "wrong number of array subscripts"));
    }
    if let ([d], [i]) = (arr.dims.as_slice(), at) {
        let (d, i) = (*d, *i as i64);
        let lower = (d.lower as i64).min(i);
        let upper = (d.lower as i64 + d.len as i64 - 1).max(i);
        let len = upper - lower + 1;
        if len > MAX_ASSIGNED_ELEMENTS {
            return Err(err!(
                ProgramLimitExceeded,
                "array size exceeds the maximum allowed ({MAX_ASSIGNED_ELEMENTS})"
            ));
        }
        if lower < d.lower as i64 || upper > d.lower as i64 + d.len as i64 - 1 {
            let mut items = vec![Value::Null; len as usize];
            let offset = (d.lower as i64 - lower) as usize;
            for (k, x) in std::mem::take(&mut arr.items).into_iter().enumerate() {
                items[offset + k] = x;
            }
            arr.items = items;
            arr.dims[0] = Dim { len: len as i32, lower: lower as i32 };
        }
        arr.items[(i - lower) as usize] = v;
        return Ok(());
    }
    let mut flat = 0usize;
    for (d, &i) in arr.dims.iter().zip(at) {
        let k = i as i64 - d.lower as i64;
        if k < 0 || k >= d.len as i64 {
            return Err(err!(ArraySubscriptError, "array subscript out of range"));
        }
        flat = flat * d.len as usize + k as usize;
    }
    arr.items[flat] = v;
    Ok(())
}

/// An int2vector/oidvector value: one dimension with lower bound 0.
pub fn vector(elem: DataType, items: Vec<Value>) -> Value {
    let mut a = ArrayValue::new(elem, items);
    if let Some(d) = a.dims.first_mut() {
        d.lower = 0;
    }
    a.vector = true;
    a.into_value()
}

/// The array type OID for an element type OID (pg_type.typarray).
pub fn array_oid(elem_oid: u32) -> Option<u32> {
    Some(match elem_oid {
        16 => 1000,
        17 => 1001,
        18 => 1002,
        19 => 1003,
        20 => 1016,
        21 => 1005,
        // int2vector[] and oidvector[] (pg_type.typarray only: no
        // DataType::Array has these elements)
        22 => 1006,
        30 => 1013,
        23 => 1007,
        25 => 1009,
        26 => 1028,
        114 => 199,
        700 => 1021,
        701 => 1022,
        1042 => 1014,
        1043 => 1015,
        1082 => 1182,
        1083 => 1183,
        1114 => 1115,
        1184 => 1185,
        1186 => 1187,
        1266 => 1270,
        1700 => 1231,
        2950 => 2951,
        869 => 1041,
        650 => 651,
        3802 => 3807,
        24 => 1008,
        2205 => 2210,
        2206 => 2211,
        4089 => 4090,
        2202 => 2207,
        4096 => 4097,
        2249 => 2287,
        1790 => 2201,
        // The range types' arrays follow them.
        3904 | 3906 | 3908 | 3910 | 3912 | 3926 => elem_oid + 1,
        _ => return None,
    })
}

/// The element type OID of an array type OID (pg_type.typelem).
pub fn elem_oid(array_oid: u32) -> Option<u32> {
    Some(match array_oid {
        1000 => 16,
        2201 => 1790,
        1001 => 17,
        1002 => 18,
        1003 => 19,
        1016 => 20,
        1005 => 21,
        1007 => 23,
        1009 => 25,
        1028 => 26,
        199 => 114,
        1021 => 700,
        1022 => 701,
        1014 => 1042,
        1015 => 1043,
        1182 => 1082,
        1183 => 1083,
        1115 => 1114,
        1185 => 1184,
        1187 => 1186,
        1270 => 1266,
        1231 => 1700,
        2951 => 2950,
        1041 => 869,
        651 => 650,
        3807 => 3802,
        1008 => 24,
        2210 => 2205,
        2211 => 2206,
        4090 => 4089,
        2207 => 2202,
        4097 => 4096,
        2287 => 2249,
        3905 | 3907 | 3909 | 3911 | 3913 | 3927 => array_oid - 1,
        _ => return None,
    })
}

fn malformed(input: &str, detail: &str) -> ErrorReport {
    err!(InvalidTextRepresentation, "malformed array literal: \"{input}\"").with_detail(detail)
}

/// A parsed brace level: nested lists or elements (None = NULL).
enum Node {
    List(Vec<Node>),
    Elem(Option<String>),
}

struct Parser<'a> {
    input: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn fail(&self, detail: &str) -> ErrorReport {
        malformed(self.input, detail)
    }

    fn unexpected(&self) -> ErrorReport {
        match self.peek() {
            Some(c) => self.fail(&format!("Unexpected \"{c}\" character.")),
            None => self.fail("Unexpected end of input."),
        }
    }

    fn int(&mut self) -> Result<i32> {
        let start = self.pos;
        if matches!(self.peek(), Some('-' | '+')) {
            self.pos += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let s: String = self.chars[start..self.pos].iter().collect();
        s.parse::<i32>()
            .map_err(|_| self.fail("\"[\" must introduce explicitly-specified array dimensions."))
    }

    /// `[lo:hi][lo:hi]=` before the braces, if present.
    fn dims(&mut self) -> Result<Vec<Dim>> {
        let mut dims = Vec::new();
        while self.peek() == Some('[') {
            self.pos += 1;
            self.skip_ws();
            let first = self.int()?;
            self.skip_ws();
            let (lower, upper) = if self.peek() == Some(':') {
                self.pos += 1;
                self.skip_ws();
                (first, self.int()?)
            } else {
                (1, first)
            };
            self.skip_ws();
            if self.peek() != Some(']') {
                return Err(self.fail("Missing \"]\" after array dimensions."));
            }
            self.pos += 1;
            if upper < lower - 1 {
                return Err(err!(
                    ArraySubscriptError,
                    "upper bound cannot be less than lower bound"
                ));
            }
            if dims.len() == MAXDIM {
                return Err(err!(
                    ProgramLimitExceeded,
                    "number of array dimensions exceeds the maximum allowed ({MAXDIM})"
                ));
            }
            dims.push(Dim { len: upper - lower + 1, lower });
        }
        if !dims.is_empty() {
            self.skip_ws();
            if self.peek() != Some('=') {
                return Err(self.fail("Missing \"=\" after array dimensions."));
            }
            self.pos += 1;
            self.skip_ws();
        }
        Ok(dims)
    }

    /// One `{...}` level; the opening brace is current.
    fn level(&mut self, depth: usize) -> Result<Node> {
        if depth > MAXDIM {
            return Err(err!(
                ProgramLimitExceeded,
                "number of array dimensions exceeds the maximum allowed ({MAXDIM})"
            ));
        }
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(Node::List(items));
        }
        loop {
            self.skip_ws();
            let item = match self.peek() {
                Some('{') => self.level(depth + 1)?,
                Some('"') => Node::Elem(Some(self.quoted()?)),
                Some(',' | '}') | None => return Err(self.unexpected()),
                Some(_) => self.unquoted()?,
            };
            items.push(item);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {
                    self.pos += 1;
                    return Ok(Node::List(items));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn quoted(&mut self) -> Result<String> {
        self.pos += 1;
        let mut s = String::new();
        loop {
            match self.peek() {
                None => return Err(self.fail("Unexpected end of input.")),
                Some('"') => {
                    self.pos += 1;
                    return Ok(s);
                }
                Some('\\') => {
                    self.pos += 1;
                    let c = self.peek().ok_or_else(|| self.fail("Unexpected end of input."))?;
                    s.push(c);
                    self.pos += 1;
                }
                Some(c) => {
                    s.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn unquoted(&mut self) -> Result<Node> {
        let mut s = String::new();
        // Length of `s` up to its last character that is not unescaped
        // whitespace: trailing blanks are dropped, escaped ones kept.
        let mut keep = 0;
        let mut escaped = false;
        loop {
            match self.peek() {
                None => return Err(self.fail("Unexpected end of input.")),
                Some(',' | '}') => break,
                Some('{' | '"') => return Err(self.unexpected()),
                Some('\\') => {
                    self.pos += 1;
                    let c = self.peek().ok_or_else(|| self.fail("Unexpected end of input."))?;
                    s.push(c);
                    keep = s.len();
                    escaped = true;
                    self.pos += 1;
                }
                Some(c) => {
                    s.push(c);
                    if !c.is_whitespace() {
                        keep = s.len();
                    }
                    self.pos += 1;
                }
            }
        }
        s.truncate(keep);
        if !escaped && s.eq_ignore_ascii_case("null") {
            return Ok(Node::Elem(None));
        }
        Ok(Node::Elem(Some(s)))
    }
}

/// Flattens nested levels into dimension lengths and elements, checking
/// that the nesting is rectangular: the first list met at each depth fixes
/// that dimension's length, and elements appear only at the deepest level.
fn flatten(node: Node, depth: usize, dims: &mut Vec<i32>, out: &mut Vec<Option<String>>) -> bool {
    let items = match node {
        Node::Elem(e) => {
            out.push(e);
            return true;
        }
        Node::List(items) => items,
    };
    if depth == dims.len() {
        // A new, deeper dimension can only start before any element.
        if !out.is_empty() {
            return false;
        }
        dims.push(items.len() as i32);
    } else if dims[depth] != items.len() as i32 {
        return false;
    }
    for item in items {
        if matches!(item, Node::Elem(_)) && depth + 1 != dims.len() {
            return false;
        }
        if !flatten(item, depth + 1, dims, out) {
            return false;
        }
    }
    true
}

/// Parses the text form of an array of `elem` (PostgreSQL's `array_in`).
pub fn parse_array(elem: &DataType, input: &str) -> Result<Value> {
    parse_array_in(elem, input, crate::Zone::utc_ref())
}

/// Parses array input, timestamptz elements read in `zone`.
pub fn parse_array_in(elem: &DataType, input: &str, zone: &crate::Zone) -> Result<Value> {
    let mut p = Parser { input, chars: input.chars().collect(), pos: 0 };
    p.skip_ws();
    let given = p.dims()?;
    if p.peek() != Some('{') {
        return Err(p.fail("Array value must start with \"{\" or dimension information."));
    }
    let root = p.level(1)?;
    p.skip_ws();
    if p.pos != p.chars.len() {
        return Err(p.fail("Junk after closing right brace."));
    }
    let mut lens = Vec::new();
    let mut texts = Vec::new();
    if !flatten(root, 0, &mut lens, &mut texts) {
        return Err(
            p.fail("Multidimensional arrays must have sub-arrays with matching dimensions.")
        );
    }
    if texts.is_empty() {
        if given.iter().any(|d| d.len != 0) {
            return Err(p.fail("Specified array dimensions do not match array contents."));
        }
        return Ok(ArrayValue::new(elem.clone(), Vec::new()).into_value());
    }
    let dims = if given.is_empty() {
        lens.iter().map(|&len| Dim { len, lower: 1 }).collect()
    } else {
        if given.len() != lens.len() || given.iter().zip(&lens).any(|(d, l)| d.len != *l) {
            return Err(p.fail("Specified array dimensions do not match array contents."));
        }
        given
    };
    let mut items = Vec::with_capacity(texts.len());
    for t in texts {
        items.push(match t {
            None => Value::Null,
            Some(s) => crate::text::parse_text_in(elem, &s, zone)?,
        });
    }
    Ok(Value::Array(Box::new(ArrayValue { elem: elem.clone(), dims, items, vector: false })))
}

/// True if an element's text must be double-quoted in array output.
fn needs_quotes(s: &[u8]) -> bool {
    s.eq_ignore_ascii_case(b"null") || quoted_between(s, b'{', b'}')
}

/// True if a composite's part (an array element between `{` `}`, a record
/// field between `(` `)`) must be double-quoted in its text form: empty, or
/// holding a quote, a backslash, a delimiter or white space.
pub(crate) fn quoted_between(s: &[u8], open: u8, close: u8) -> bool {
    s.is_empty()
        || s.iter().any(|&c| {
            c == open
                || c == close
                || matches!(c, b'"' | b'\\' | b',' | b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
        })
}

/// Appends `text` double-quoted with `"` and `\` doubled inside, as
/// `record_out` and `range_out` quote a field or bound (`array_out`
/// escapes with backslashes instead).
pub(crate) fn push_quoted_doubling(text: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &c in text {
        if c == b'"' || c == b'\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push(b'"');
}

/// Appends the text form of an array (PostgreSQL's `array_out`).
pub fn write_array(a: &ArrayValue, out: &mut Vec<u8>) {
    write_array_in(a, crate::Zone::utc_ref(), out)
}

/// Appends the text form of an array, timestamptz elements shown in `zone`.
pub fn write_array_in(a: &ArrayValue, zone: &crate::Zone, out: &mut Vec<u8>) {
    if a.vector {
        for (i, v) in a.items.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            write_value(v, out);
        }
        return;
    }
    if a.dims.is_empty() {
        out.extend_from_slice(b"{}");
        return;
    }
    if a.dims.iter().any(|d| d.lower != 1) {
        for d in &a.dims {
            out.extend_from_slice(format!("[{}:{}]", d.lower, d.lower + d.len - 1).as_bytes());
        }
        out.push(b'=');
    }
    let mut next = 0;
    write_level(a, zone, 0, &mut next, out);
}

fn write_level(
    a: &ArrayValue,
    zone: &crate::Zone,
    depth: usize,
    next: &mut usize,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    for i in 0..a.dims[depth].len {
        if i > 0 {
            out.push(b',');
        }
        if depth + 1 < a.dims.len() {
            write_level(a, zone, depth + 1, next, out);
            continue;
        }
        let v = &a.items[*next];
        *next += 1;
        if v.is_null() {
            out.extend_from_slice(b"NULL");
            continue;
        }
        let mut text = Vec::new();
        crate::text::write_value_in(v, zone, &mut text);
        if needs_quotes(&text) {
            out.push(b'"');
            for &c in &text {
                if c == b'"' || c == b'\\' {
                    out.push(b'\\');
                }
                out.push(c);
            }
            out.push(b'"');
        } else {
            out.extend_from_slice(&text);
        }
    }
    out.push(b'}');
}

fn bad_binary(what: &str) -> ErrorReport {
    err!(InvalidBinaryRepresentation, "{what}")
}

/// Decodes the binary form of an array of `elem` (PostgreSQL's `array_recv`).
pub fn decode_array(elem: &DataType, b: &[u8]) -> Result<Value> {
    let mut cur = b;
    let mut i32_at = || -> Result<i32> {
        let (head, rest) = cur
            .split_first_chunk::<4>()
            .ok_or_else(|| bad_binary("insufficient data left in message"))?;
        cur = rest;
        Ok(i32::from_be_bytes(*head))
    };
    let ndim = i32_at()?;
    let flags = i32_at()?;
    let oid = i32_at()? as u32;
    if !(0..=MAXDIM as i32).contains(&ndim) {
        return Err(bad_binary(&format!("invalid number of dimensions: {ndim}")));
    }
    if flags != 0 && flags != 1 {
        return Err(bad_binary("invalid array flags"));
    }
    if oid != elem.oid() {
        let name = |o: u32| DataType::from_oid(o).map(|t| t.to_string()).unwrap_or("???".into());
        return Err(err!(
            DatatypeMismatch,
            "binary data has array element type {oid} ({}) instead of expected {} ({})",
            name(oid),
            elem.oid(),
            elem
        ));
    }
    let mut dims = Vec::with_capacity(ndim as usize);
    let mut count: usize = 1;
    for _ in 0..ndim {
        let len = i32_at()?;
        let lower = i32_at()?;
        if len < 0 {
            return Err(bad_binary("invalid array dimension"));
        }
        if lower.checked_add(len).is_none() {
            return Err(err!(ProgramLimitExceeded, "array lower bound is too large: {lower}"));
        }
        count = count.saturating_mul(len as usize);
        dims.push(Dim { len, lower });
    }
    if count > MAX_ELEMENTS {
        return Err(err!(
            ProgramLimitExceeded,
            "array size exceeds the maximum allowed ({MAX_ELEMENTS})"
        ));
    }
    if dims.is_empty() || count == 0 {
        if !cur.is_empty() {
            return Err(bad_binary("incorrect binary data format in array"));
        }
        return Ok(ArrayValue::new(elem.clone(), Vec::new()).into_value());
    }
    let mut items = Vec::with_capacity(count.min(cur.len() / 4 + 1));
    for n in 0..count {
        let (head, rest) = cur
            .split_first_chunk::<4>()
            .ok_or_else(|| bad_binary("insufficient data left in message"))?;
        let len = i32::from_be_bytes(*head);
        cur = rest;
        if len == -1 {
            items.push(Value::Null);
            continue;
        }
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= cur.len())
            .ok_or_else(|| bad_binary("insufficient data left in message"))?;
        let (data, rest) = cur.split_at(len);
        cur = rest;
        items.push(decode_binary(elem, data).map_err(|e| {
            if e.code == crate::SqlState::InvalidBinaryRepresentation {
                bad_binary(&format!("improper binary format in array element {}", n + 1))
            } else {
                e
            }
        })?);
    }
    if !cur.is_empty() {
        return Err(bad_binary("incorrect binary data format in array"));
    }
    Ok(Value::Array(Box::new(ArrayValue { elem: elem.clone(), dims, items, vector: false })))
}

/// Appends the binary form of an array (PostgreSQL's `array_send`).
pub fn write_array_binary(a: &ArrayValue, buf: &mut BytesMut) {
    buf.put_i32(a.dims.len() as i32);
    buf.put_i32(a.has_nulls() as i32);
    buf.put_u32(a.elem.oid());
    for d in &a.dims {
        buf.put_i32(d.len);
        buf.put_i32(d.lower);
    }
    for v in &a.items {
        crate::binary::write_field(v, buf);
    }
}

/// Compares two arrays as `array_cmp` does; None if some pair of elements
/// cannot be compared (different element types).
pub fn compare_arrays(a: &ArrayValue, b: &ArrayValue) -> Option<Ordering> {
    let common = crate::ops::compare_elements(&a.items, &b.items)?;
    Some(
        common
            .then(a.items.len().cmp(&b.items.len()))
            .then(a.dims.len().cmp(&b.dims.len()))
            .then_with(|| {
                let lens = |a: &ArrayValue| a.dims.iter().map(|d| d.len).collect::<Vec<_>>();
                let lowers = |a: &ArrayValue| a.dims.iter().map(|d| d.lower).collect::<Vec<_>>();
                lens(a).cmp(&lens(b)).then_with(|| lowers(a).cmp(&lowers(b)))
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::to_text;

    fn roundtrip(elem: DataType, s: &str) -> String {
        match parse_array(&elem, s) {
            Ok(v) => to_text(&v),
            Err(e) => format!("{}: {}", e.code.code(), e.message),
        }
    }

    #[test]
    fn text_forms_match_postgres() {
        use DataType as T;
        assert_eq!(roundtrip(T::Int4, "{1,2,3}"), "{1,2,3}");
        assert_eq!(roundtrip(T::Int4, " { 1 , NULL ,3 } "), "{1,NULL,3}");
        assert_eq!(roundtrip(T::Int4, "{}"), "{}");
        assert_eq!(roundtrip(T::Int4, "{{1,2},{3,4}}"), "{{1,2},{3,4}}");
        assert_eq!(roundtrip(T::Int4, "[0:1]={5,6}"), "[0:1]={5,6}");
        assert_eq!(roundtrip(T::Int4, "[1:2]={5,6}"), "{5,6}");
        assert_eq!(
            roundtrip(T::Text, r#"{a,"b c","",NULL,"NULL","x\"y",\\}"#),
            r#"{a,"b c","",NULL,"NULL","x\"y","\\"}"#
        );
        assert_eq!(roundtrip(T::Text, "{ a b ,c}"), r#"{"a b",c}"#);
        assert_eq!(roundtrip(T::Bytea, r#"{"\\x0102"}"#), r#"{"\\x0102"}"#);
        assert_eq!(roundtrip(T::Bool, "{t,false}"), "{t,f}");
        assert_eq!(roundtrip(T::Int4, "{1,2"), "22P02: malformed array literal: \"{1,2\"");
        assert_eq!(roundtrip(T::Int4, "1,2"), "22P02: malformed array literal: \"1,2\"");
        assert_eq!(roundtrip(T::Int4, "{{1},2}"), "22P02: malformed array literal: \"{{1},2}\"");
        assert_eq!(
            roundtrip(T::Int4, "{{1,2},{3}}"),
            "22P02: malformed array literal: \"{{1,2},{3}}\""
        );
        assert_eq!(roundtrip(T::Int4, "{1}x"), "22P02: malformed array literal: \"{1}x\"");
        assert_eq!(
            roundtrip(T::Int4, "{a}"),
            "22P02: invalid input syntax for type integer: \"a\""
        );
    }

    #[test]
    fn binary_roundtrip_and_bad_input() {
        let v = parse_array(&DataType::Int8, "[2:3]={7,NULL}").expect("valid");
        let Value::Array(a) = &v else { panic!() };
        let mut buf = BytesMut::new();
        write_array_binary(a, &mut buf);
        assert_eq!(decode_array(&DataType::Int8, &buf).expect("own output"), v);
        assert!(decode_array(&DataType::Int4, &buf).is_err());
        for cut in 0..buf.len() {
            assert!(decode_array(&DataType::Int8, &buf[..cut]).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn order_is_array_cmp() {
        let p = |s: &str| match parse_array(&DataType::Int4, s).expect("valid") {
            Value::Array(a) => *a,
            _ => unreachable!(),
        };
        assert_eq!(compare_arrays(&p("{1,2}"), &p("{1,3}")), Some(Ordering::Less));
        assert_eq!(compare_arrays(&p("{1,2}"), &p("{1,2,0}")), Some(Ordering::Less));
        assert_eq!(compare_arrays(&p("{1,NULL}"), &p("{1,5}")), Some(Ordering::Greater));
        assert_eq!(compare_arrays(&p("{1,NULL}"), &p("{1,NULL}")), Some(Ordering::Equal));
        assert_eq!(compare_arrays(&p("{{1,2}}"), &p("{1,2}")), Some(Ordering::Greater));
    }

    #[test]
    fn set_element_grows_one_dimension_and_is_capped() {
        let text = |v: &Value| match v {
            Value::Array(a) => {
                let mut out = Vec::new();
                write_array(a, &mut out);
                String::from_utf8(out).expect("utf-8")
            }
            other => format!("{other:?}"),
        };
        let set = |mut a: Value, at: &[i32]| {
            set_element(&mut a, &DataType::Int4, at, Value::Int4(9)).map(|()| a)
        };
        let a = set(Value::Null, &[3]).expect("new array");
        assert_eq!(text(&a), "[3:3]={9}");
        let a = set(a, &[1]).expect("grows down");
        assert_eq!(text(&a), "{9,NULL,9}");
        let m = parse_array(&DataType::Int4, "{{1,2},{3,4}}").expect("valid");
        assert_eq!(text(&set(m.clone(), &[2, 1]).expect("inside")), "{{1,2},{9,4}}");
        assert_eq!(
            set(m.clone(), &[3, 1]).map_err(|e| e.code),
            Err(crate::SqlState::ArraySubscriptError)
        );
        assert_eq!(set(m, &[1]).map_err(|e| e.code), Err(crate::SqlState::ArraySubscriptError));
        let far = MAX_ASSIGNED_ELEMENTS as i32 + 1;
        let e = set(parse_array(&DataType::Int4, "{1}").expect("valid"), &[far]);
        assert_eq!(e.map_err(|e| e.code), Err(crate::SqlState::ProgramLimitExceeded));
    }
}
