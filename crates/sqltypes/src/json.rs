//! json and jsonb: parsing, PostgreSQL's text forms, jsonb ordering,
//! containment and the navigation and editing operators.
//!
//! A `json` value is kept as the text it was given (PostgreSQL's json keeps
//! whitespace, key order and duplicate keys); its operators walk that text
//! and return the exact slices. A `jsonb` value is a [`Json`] tree in
//! canonical form: object keys unique (the last duplicate wins) and sorted
//! shorter-first then bytewise, numbers as numeric. Its text form is
//! jsonb_out's (`{"a": 1, "b": [1, 2]}`).

use std::cmp::Ordering;

use crate::numeric::Numeric;
use crate::text::TextOut;
use crate::{err, ErrorReport, Result};

/// The largest array index a jsonb subscript assignment pads an array to
/// (bounding the memory one assignment takes).
const MAX_PADDED: i64 = 1 << 24;

/// A parsed JSON document.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// null
    Null,
    /// true / false
    Bool(bool),
    /// a number (numeric, so jsonb keeps every digit)
    Number(Numeric),
    /// a string
    String(String),
    /// an array
    Array(Vec<Json>),
    /// an object: in jsonb, keys unique and in canonical order
    Object(Vec<(String, Json)>),
}

/// Nesting deeper than this is refused (PostgreSQL's limit is the stack).
const MAX_DEPTH: usize = 6400;

fn syntax(detail: impl Into<String>) -> ErrorReport {
    err!(InvalidTextRepresentation, "invalid input syntax for type json").with_detail(detail)
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
    /// jsonb: reject \u0000, canonicalize objects.
    jsonb: bool,
    depth: usize,
}

impl<'a> Parser<'a> {
    /// A syntax error at the current position, with PostgreSQL's
    /// `JSON data, line N: ...` context (the input up to the bad token).
    fn err(&self, detail: impl Into<String>) -> ErrorReport {
        let end = (self.pos + self.token().len()).min(self.s.len());
        let line_start =
            self.s[..self.pos.min(self.s.len())].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let line = self.s[..line_start].matches('\n').count() + 1;
        let more = if end < self.s.len() { "..." } else { "" };
        let mut e = syntax(detail);
        e.context = Some(format!("JSON data, line {line}: {}{more}", &self.s[line_start..end]));
        e
    }

    fn ws(&mut self) {
        while self.pos < self.b.len() && matches!(self.b[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    /// The token at the current position, for error details.
    fn token(&self) -> &'a str {
        let rest = &self.s[self.pos..];
        let end = rest
            .char_indices()
            .find(|&(i, c)| {
                i > 0 && (c.is_whitespace() || matches!(c, ',' | ':' | '[' | ']' | '{' | '}'))
            })
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        let first = rest.chars().next().map(|c| c.len_utf8()).unwrap_or(0);
        if rest.starts_with([',', ':', '[', ']', '{', '}']) {
            &rest[..first]
        } else {
            &rest[..end]
        }
    }

    fn unexpected(&self) -> ErrorReport {
        if self.pos >= self.b.len() {
            self.err("The input string ended unexpectedly.")
        } else {
            self.err(format!("Token \"{}\" is invalid.", self.token()))
        }
    }

    fn expect(&mut self, c: u8, what: &str) -> Result<()> {
        self.ws();
        if self.b.get(self.pos) == Some(&c) {
            self.pos += 1;
            return Ok(());
        }
        if self.pos >= self.b.len() {
            return Err(self.err("The input string ended unexpectedly."));
        }
        Err(self.err(format!("Expected {what}, but found \"{}\".", self.token())))
    }

    fn value(&mut self) -> Result<Json> {
        self.ws();
        let Some(&c) = self.b.get(self.pos) else {
            return Err(self.err("The input string ended unexpectedly."));
        };
        match c {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => Ok(Json::String(self.string()?)),
            b'-' | b'0'..=b'9' => self.number(),
            _ => {
                let tok = self.token();
                let v = match tok {
                    "true" => Json::Bool(true),
                    "false" => Json::Bool(false),
                    "null" => Json::Null,
                    _ => return Err(self.err(format!("Token \"{tok}\" is invalid."))),
                };
                self.pos += tok.len();
                Ok(v)
            }
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(err!(StatementTooComplex, "stack depth limit exceeded"));
        }
        Ok(())
    }

    /// At `[`: the byte ranges of the array's elements, up to its `]`.
    fn element_spans(&mut self) -> Result<Vec<(usize, usize)>> {
        self.pos += 1;
        let mut spans = Vec::new();
        if !self.empty(b']') {
            loop {
                self.ws();
                let start = self.pos;
                self.value()?;
                spans.push((start, self.pos));
                if !self.more(b']')? {
                    break;
                }
            }
        }
        Ok(spans)
    }

    /// After `[` or `{`: true (and consumed) if the container closes at once.
    fn empty(&mut self, close: u8) -> bool {
        self.ws();
        let empty = self.b.get(self.pos) == Some(&close);
        if empty {
            self.pos += 1;
        }
        empty
    }

    /// After a member: true for `,` (another follows), false for the
    /// closing bracket; anything else is the syntax error PostgreSQL gives.
    fn more(&mut self, close: u8) -> Result<bool> {
        self.ws();
        match self.b.get(self.pos) {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(&c) if c == close => {
                self.pos += 1;
                Ok(false)
            }
            None => Err(self.err("The input string ended unexpectedly.")),
            Some(_) => Err(self.err(format!(
                "Expected \",\" or \"{}\", but found \"{}\".",
                close as char,
                self.token()
            ))),
        }
    }

    fn array(&mut self) -> Result<Json> {
        self.enter()?;
        self.pos += 1;
        let mut items = Vec::new();
        if !self.empty(b']') {
            loop {
                items.push(self.value()?);
                if !self.more(b']')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Ok(Json::Array(items))
    }

    fn object(&mut self) -> Result<Json> {
        self.enter()?;
        self.pos += 1;
        let mut pairs = Vec::new();
        if !self.empty(b'}') {
            loop {
                self.ws();
                match self.b.get(self.pos) {
                    Some(b'"') => {}
                    None => return Err(self.err("The input string ended unexpectedly.")),
                    Some(_) => {
                        return Err(
                            self.err(format!("Expected string, but found \"{}\".", self.token()))
                        )
                    }
                }
                let key = self.string()?;
                self.expect(b':', "\":\"")?;
                let v = self.value()?;
                pairs.push((key, v));
                if !self.more(b'}')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        if self.jsonb {
            canonicalize(&mut pairs);
        }
        Ok(Json::Object(pairs))
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self.s.get(self.pos..self.pos + 4).filter(|d| d.len() == 4);
        match digits.and_then(|d| u32::from_str_radix(d, 16).ok()) {
            Some(v) if digits.is_some_and(|d| d.bytes().all(|b| b.is_ascii_hexdigit())) => {
                self.pos += 4;
                Ok(v)
            }
            _ => Err(self.err("\"\\u\" must be followed by four hexadecimal digits.")),
        }
    }

    fn string(&mut self) -> Result<String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while self.pos < self.b.len() && !matches!(self.b[self.pos], b'"' | b'\\' | 0..=0x1f) {
                self.pos += 1;
            }
            out.push_str(&self.s[start..self.pos]);
            match self.b.get(self.pos) {
                None => return Err(self.err("The input string ended unexpectedly.")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(&c) if c < 0x20 => {
                    return Err(self.err(format!("Character with value 0x{c:02x} must be escaped.")))
                }
                _ => {}
            }
            self.pos += 1;
            let Some(&e) = self.b.get(self.pos) else {
                return Err(self.err("The input string ended unexpectedly."));
            };
            self.pos += 1;
            match e {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let hi = self.hex4()?;
                    let code = if (0xd800..0xdc00).contains(&hi) {
                        if self.s.get(self.pos..self.pos + 2) != Some("\\u") {
                            return Err(self
                                .err("Unicode high surrogate must not follow a high surrogate."));
                        }
                        self.pos += 2;
                        let lo = self.hex4()?;
                        if !(0xdc00..0xe000).contains(&lo) {
                            return Err(
                                self.err("Unicode low surrogate must follow a high surrogate.")
                            );
                        }
                        0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                    } else if (0xdc00..0xe000).contains(&hi) {
                        return Err(self.err("Unicode low surrogate must follow a high surrogate."));
                    } else {
                        hi
                    };
                    if code == 0 {
                        if self.jsonb {
                            return Err(err!(
                                UntranslatableCharacter,
                                "unsupported Unicode escape sequence"
                            )
                            .with_detail("\\u0000 cannot be converted to text."));
                        }
                        out.push_str("\\u0000");
                    } else {
                        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                    }
                }
                _ => {
                    let ch = self.s[self.pos - 1..].chars().next().unwrap_or('?');
                    self.pos += ch.len_utf8() - 1;
                    return Err(self.err(format!("Escape sequence \"\\{ch}\" is invalid.")));
                }
            }
        }
    }

    fn number(&mut self) -> Result<Json> {
        let start = self.pos;
        let b = self.b;
        let mut i = self.pos;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let digits = |i: &mut usize| {
            let s = *i;
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
            *i - s
        };
        let int_start = i;
        let n = digits(&mut i);
        let mut ok = n > 0 && !(n > 1 && b[int_start] == b'0');
        if ok && b.get(i) == Some(&b'.') {
            i += 1;
            ok = digits(&mut i) > 0;
        }
        if ok && matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            ok = digits(&mut i) > 0;
        }
        // A number must end at a delimiter.
        if ok && i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
            ok = false;
        }
        if !ok {
            return Err(self.err(format!("Token \"{}\" is invalid.", self.token())));
        }
        self.pos = i;
        Ok(Json::Number(Numeric::parse(&self.s[start..i])?))
    }
}

/// jsonb's key order: shorter keys first, then bytewise.
pub fn key_cmp(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// Sorts an object's pairs into jsonb order, keeping the last of duplicate keys.
pub fn canonicalize(pairs: &mut Vec<(String, Json)>) {
    // Stable sort, then keep the last of each run of equal keys.
    pairs.sort_by(|a, b| key_cmp(&a.0, &b.0));
    let mut out: Vec<(String, Json)> = Vec::with_capacity(pairs.len());
    for (k, v) in pairs.drain(..) {
        match out.last_mut() {
            Some(last) if last.0 == k => last.1 = v,
            _ => out.push((k, v)),
        }
    }
    *pairs = out;
}

fn parse_with(s: &str, jsonb: bool) -> Result<Json> {
    let mut p = Parser { s, b: s.as_bytes(), pos: 0, jsonb, depth: 0 };
    let v = p.value()?;
    p.ws();
    if p.pos < p.b.len() {
        return Err(p.unexpected());
    }
    Ok(v)
}

/// Parses jsonb input into canonical form.
pub fn parse_jsonb(s: &str) -> Result<Json> {
    parse_with(s, true)
}

/// Checks json input (the text itself is what json stores).
pub fn validate_json(s: &str) -> Result<()> {
    parse_with(s, false).map(|_| ())
}

/// Parses json text into a tree keeping key order and duplicates.
pub fn parse_json(s: &str) -> Result<Json> {
    parse_with(s, false)
}

/// Appends `s` as a JSON string literal, escaped as escape_json does.
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

impl Json {
    /// jsonb_out's text: `{"a": 1, "b": [1, 2]}`.
    pub fn render(&self, out: &mut String) {
        self.render_with(out, ", ", ": ");
    }

    /// The text with the given separators between members and after keys
    /// (json functions print `[1,2]`, jsonb `[1, 2]`).
    pub fn render_with(&self, out: &mut String, member_sep: &str, key_sep: &str) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => out.push_str(&n.to_string()),
            Json::String(s) => write_string(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(member_sep);
                    }
                    v.render_with(out, member_sep, key_sep);
                }
                out.push(']');
            }
            Json::Object(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(member_sep);
                    }
                    write_string(k, out);
                    out.push_str(key_sep);
                    v.render_with(out, member_sep, key_sep);
                }
                out.push('}');
            }
        }
    }

    /// The text form as a String.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.render(&mut s);
        s
    }

    /// jsonb_pretty's form: four-space indentation, one member per line.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.pretty_into(&mut out, 0);
        out
    }

    fn pretty_into(&self, out: &mut String, level: usize) {
        let pad = |out: &mut String, n: usize| out.push_str(&"    ".repeat(n));
        match self {
            Json::Array(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    pad(out, level + 1);
                    v.pretty_into(out, level + 1);
                }
                if !items.is_empty() {
                    out.push('\n');
                }
                pad(out, level);
                out.push(']');
            }
            Json::Object(pairs) => {
                out.push_str("{\n");
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    pad(out, level + 1);
                    write_string(k, out);
                    out.push_str(": ");
                    v.pretty_into(out, level + 1);
                }
                if !pairs.is_empty() {
                    out.push('\n');
                }
                pad(out, level);
                out.push('}');
            }
            other => other.render(out),
        }
    }

    /// json_typeof / jsonb_typeof.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// `->> `'s text: strings unquoted, null as SQL NULL (None).
    pub fn as_text(&self) -> Option<String> {
        match self {
            Json::Null => None,
            Json::String(s) => Some(s.clone()),
            other => Some(other.to_text()),
        }
    }

    /// An object's field (the last one if json kept duplicates).
    pub fn field(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(pairs) => pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// An array element; negative indexes count from the end.
    pub fn element(&self, i: i64) -> Option<&Json> {
        match self {
            Json::Array(items) => {
                let idx = if i < 0 { items.len() as i64 + i } else { i };
                usize::try_from(idx).ok().and_then(|i| items.get(i))
            }
            _ => None,
        }
    }

    /// One step of a `#>` path: an object key, or an array index given as text.
    pub fn step(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(_) => self.field(key),
            Json::Array(_) => key.trim().parse::<i64>().ok().and_then(|i| self.element(i)),
            _ => None,
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Json::Null => 0,
            Json::String(_) => 1,
            Json::Number(_) => 2,
            Json::Bool(_) => 3,
            Json::Array(_) => 4,
            Json::Object(_) => 5,
        }
    }

    /// jsonb ordering: object > array > boolean > number > string > null;
    /// containers with more members sort later, then member by member.
    pub fn compare(&self, o: &Json) -> Ordering {
        match (self, o) {
            (Json::Null, Json::Null) => Ordering::Equal,
            (Json::Bool(a), Json::Bool(b)) => a.cmp(b),
            (Json::Number(a), Json::Number(b)) => a.cmp(b),
            (Json::String(a), Json::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Json::Array(a), Json::Array(b)) => a.len().cmp(&b.len()).then_with(|| {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.compare(y))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            }),
            (Json::Object(a), Json::Object(b)) => a.len().cmp(&b.len()).then_with(|| {
                a.iter()
                    .zip(b)
                    .map(|((ka, va), (kb, vb))| {
                        ka.as_bytes().cmp(kb.as_bytes()).then_with(|| va.compare(vb))
                    })
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            }),
            _ => self.rank().cmp(&o.rank()),
        }
    }

    /// `a @> b`, as jsonb containment is defined: objects contain objects
    /// whose every pair they contain, arrays contain arrays whose every
    /// element some element of theirs contains, and a top-level array
    /// contains a bare scalar it has as an element.
    pub fn contains(&self, o: &Json) -> bool {
        match (self, o) {
            (Json::Array(_), b) if !matches!(b, Json::Array(_) | Json::Object(_)) => {
                self.contains(&Json::Array(vec![b.clone()]))
            }
            _ => self.contains_nested(o),
        }
    }

    fn contains_nested(&self, o: &Json) -> bool {
        match (self, o) {
            (Json::Object(a), Json::Object(b)) => b.iter().all(|(k, vb)| {
                a.iter().find(|(ka, _)| ka == k).is_some_and(|(_, va)| match (va, vb) {
                    (Json::Array(_) | Json::Object(_), _) => va.contains_nested(vb),
                    _ => va.compare(vb).is_eq() && va.rank() == vb.rank(),
                })
            }),
            (Json::Array(a), Json::Array(b)) => b.iter().all(|vb| match vb {
                Json::Array(_) | Json::Object(_) => {
                    a.iter().any(|va| va.rank() == vb.rank() && va.contains_nested(vb))
                }
                _ => a.iter().any(|va| va.rank() == vb.rank() && va.compare(vb).is_eq()),
            }),
            (Json::Array(_) | Json::Object(_), _) | (_, Json::Array(_) | Json::Object(_)) => false,
            _ => self.rank() == o.rank() && self.compare(o).is_eq(),
        }
    }

    /// `?`: a top-level key, array string element, or equal scalar string.
    pub fn exists(&self, key: &str) -> bool {
        match self {
            Json::Object(pairs) => pairs.iter().any(|(k, _)| k == key),
            Json::Array(items) => items.iter().any(|v| matches!(v, Json::String(s) if s == key)),
            Json::String(s) => s == key,
            _ => false,
        }
    }

    /// `a || b` for jsonb.
    pub fn concat(&self, o: &Json) -> Json {
        match (self, o) {
            (Json::Object(a), Json::Object(b)) => {
                let mut pairs = a.clone();
                pairs.extend(b.iter().cloned());
                canonicalize(&mut pairs);
                Json::Object(pairs)
            }
            (Json::Array(a), Json::Array(b)) => Json::Array(a.iter().chain(b).cloned().collect()),
            (Json::Array(a), b) => {
                let mut items = a.clone();
                items.push(b.clone());
                Json::Array(items)
            }
            (a, Json::Array(b)) => {
                let mut items = vec![a.clone()];
                items.extend(b.iter().cloned());
                Json::Array(items)
            }
            (a, b) => Json::Array(vec![a.clone(), b.clone()]),
        }
    }

    /// `a - 'key'`: drops an object key, or matching string elements of an array.
    pub fn remove_key(&self, key: &str) -> Result<Json> {
        Ok(match self {
            Json::Object(pairs) => {
                Json::Object(pairs.iter().filter(|(k, _)| k != key).cloned().collect())
            }
            Json::Array(items) => Json::Array(
                items
                    .iter()
                    .filter(|v| !matches!(v, Json::String(s) if s == key))
                    .cloned()
                    .collect(),
            ),
            _ => return Err(err!(InvalidParameterValue, "cannot delete from scalar")),
        })
    }

    /// `a - n`: drops an array element (negative counts from the end).
    pub fn remove_index(&self, i: i64) -> Result<Json> {
        match self {
            Json::Array(items) => {
                let idx = if i < 0 { items.len() as i64 + i } else { i };
                let mut items = items.clone();
                if (0..items.len() as i64).contains(&idx) {
                    items.remove(idx as usize);
                }
                Ok(Json::Array(items))
            }
            Json::Object(_) => {
                Err(err!(InvalidParameterValue, "cannot delete from object using integer index"))
            }
            _ => Err(err!(InvalidParameterValue, "cannot delete from scalar")),
        }
    }

    /// `#-`: removes the element at a path (nothing if it is absent).
    pub fn remove_path(&self, path: &[String]) -> Result<Json> {
        if matches!(self, Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_)) {
            return Err(err!(InvalidParameterValue, "cannot delete path in scalar"));
        }
        Ok(self.edit_path(path, &mut |_| None))
    }

    /// jsonb_set: replaces (or, with `create`, adds as the last step) the
    /// value at a path.
    pub fn set_path(&self, path: &[String], new: &Json, create: bool) -> Result<Json> {
        if matches!(self, Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_)) {
            return Err(err!(InvalidParameterValue, "cannot set path in scalar"));
        }
        let mut missing = |_: Option<&Json>| Some(new.clone());
        let r = self.set_rec(path, &mut missing, create);
        Ok(r)
    }

    /// `j[path] := new`, as a jsonb subscript assignment sets a path: a
    /// missing key is added, an array index past the end pads the array
    /// with nulls, and what the rest of the path needs is created (an
    /// array for a step that is an integer, else an object). A step into
    /// a scalar, an array step that is no integer or a negative index
    /// before the start is an error.
    pub fn assign_path(&self, path: &[String], new: &Json) -> Result<Json> {
        self.assign_rec(path, 1, new)
    }

    fn assign_rec(&self, path: &[String], level: usize, new: &Json) -> Result<Json> {
        let Some((first, rest)) = path.split_first() else { return Ok(new.clone()) };
        match self {
            Json::Object(pairs) => {
                let mut pairs = pairs.clone();
                match pairs.iter().position(|(k, _)| k == first) {
                    Some(i) => pairs[i].1 = pairs[i].1.assign_rec(rest, level + 1, new)?,
                    None => {
                        pairs.push((first.clone(), Json::created(rest, new)));
                        canonicalize(&mut pairs);
                    }
                }
                Ok(Json::Object(pairs))
            }
            Json::Array(items) => {
                let Ok(i) = first.trim().parse::<i64>() else {
                    return Err(err!(
                        InvalidTextRepresentation,
                        "path element at position {level} is not an integer: \"{first}\""
                    ));
                };
                let n = items.len() as i64;
                let idx = if i < 0 { n + i } else { i };
                if idx < 0 {
                    return Err(err!(
                        InvalidParameterValue,
                        "path element at position {level} is out of range: {i}"
                    ));
                }
                if idx > MAX_PADDED {
                    return Err(err!(
                        ProgramLimitExceeded,
                        "array index {idx} is past the most a subscript may pad to ({MAX_PADDED})"
                    ));
                }
                let mut items = items.clone();
                match items.get_mut(idx as usize) {
                    Some(x) => *x = x.assign_rec(rest, level + 1, new)?,
                    None => {
                        items.resize(idx as usize, Json::Null);
                        items.push(Json::created(rest, new));
                    }
                }
                Ok(Json::Array(items))
            }
            _ => Err(err!(InvalidParameterValue, "cannot replace existing key").with_detail(
                "The path assumes key is a composite object, but it is a scalar value.",
            )),
        }
    }

    /// `new` under the path `rest` in containers made for it: an array
    /// (padded with nulls) for an integer step, an object for another.
    fn created(rest: &[String], new: &Json) -> Json {
        let mut v = new.clone();
        for step in rest.iter().rev() {
            v = match step.trim().parse::<i64>() {
                Ok(i) if (0..=MAX_PADDED).contains(&i) => {
                    let mut items = vec![Json::Null; i as usize];
                    items.push(v);
                    Json::Array(items)
                }
                Ok(_) => Json::Array(vec![v]),
                Err(_) => Json::Object(vec![(step.clone(), v)]),
            };
        }
        v
    }

    /// jsonb_insert: `new` put at `path`: before (or with `after` after)
    /// an array element, or as a new key of an object (a key that exists
    /// is an error). An array index past either end puts it at that end.
    pub fn insert_path(&self, path: &[String], new: &Json, after: bool) -> Result<Json> {
        if matches!(self, Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_)) {
            return Err(err!(InvalidParameterValue, "cannot set path in scalar"));
        }
        self.insert_rec(path, new, after)
    }

    fn insert_rec(&self, path: &[String], new: &Json, after: bool) -> Result<Json> {
        let Some((first, rest)) = path.split_first() else { return Ok(self.clone()) };
        Ok(match self {
            Json::Object(pairs) => {
                let mut pairs = pairs.clone();
                match pairs.iter().position(|(k, _)| k == first) {
                    Some(_) if rest.is_empty() => {
                        return Err(err!(InvalidParameterValue, "cannot replace existing key")
                            .with_hint("Try using the function jsonb_set to replace key value."));
                    }
                    Some(i) => pairs[i].1 = pairs[i].1.insert_rec(rest, new, after)?,
                    None if rest.is_empty() => {
                        pairs.push((first.clone(), new.clone()));
                        canonicalize(&mut pairs);
                    }
                    None => {}
                }
                Json::Object(pairs)
            }
            Json::Array(items) => {
                let mut items = items.clone();
                let Ok(i) = first.trim().parse::<i64>() else {
                    return Err(err!(
                        InvalidTextRepresentation,
                        "path element at position {} is not an integer: \"{first}\"",
                        1
                    ));
                };
                let n = items.len() as i64;
                let idx = if i < 0 { n + i } else { i };
                if rest.is_empty() {
                    let at = match idx {
                        _ if idx < 0 => 0,
                        _ if idx >= n => n,
                        _ => idx + i64::from(after),
                    };
                    items.insert(at as usize, new.clone());
                } else if (0..n).contains(&idx) {
                    items[idx as usize] = items[idx as usize].insert_rec(rest, new, after)?;
                }
                Json::Array(items)
            }
            other => other.clone(),
        })
    }

    fn set_rec(
        &self,
        path: &[String],
        f: &mut dyn FnMut(Option<&Json>) -> Option<Json>,
        create: bool,
    ) -> Json {
        let Some((first, rest)) = path.split_first() else {
            return self.clone();
        };
        match self {
            Json::Object(pairs) => {
                let mut pairs = pairs.clone();
                match pairs.iter().position(|(k, _)| k == first) {
                    Some(i) if rest.is_empty() => {
                        if let Some(v) = f(Some(&pairs[i].1)) {
                            pairs[i].1 = v;
                        }
                    }
                    Some(i) => pairs[i].1 = pairs[i].1.set_rec(rest, f, create),
                    None if rest.is_empty() && create => {
                        if let Some(v) = f(None) {
                            pairs.push((first.clone(), v));
                            canonicalize(&mut pairs);
                        }
                    }
                    None => {}
                }
                Json::Object(pairs)
            }
            Json::Array(items) => {
                let mut items = items.clone();
                let Ok(i) = first.trim().parse::<i64>() else {
                    return Json::Array(items);
                };
                let n = items.len() as i64;
                let idx = if i < 0 { n + i } else { i };
                if (0..n).contains(&idx) {
                    let idx = idx as usize;
                    if rest.is_empty() {
                        if let Some(v) = f(Some(&items[idx])) {
                            items[idx] = v;
                        }
                    } else {
                        items[idx] = items[idx].set_rec(rest, f, create);
                    }
                } else if rest.is_empty() && create {
                    if let Some(v) = f(None) {
                        if idx < 0 {
                            items.insert(0, v);
                        } else {
                            items.push(v);
                        }
                    }
                }
                Json::Array(items)
            }
            other => other.clone(),
        }
    }

    /// Applies `f` to the value at `path` (None from `f` removes it).
    fn edit_path(&self, path: &[String], f: &mut dyn FnMut(&Json) -> Option<Json>) -> Json {
        let Some((first, rest)) = path.split_first() else {
            return self.clone();
        };
        match self {
            Json::Object(pairs) => Json::Object(
                pairs
                    .iter()
                    .filter_map(|(k, v)| {
                        if k != first {
                            return Some((k.clone(), v.clone()));
                        }
                        if rest.is_empty() {
                            f(v).map(|nv| (k.clone(), nv))
                        } else {
                            Some((k.clone(), v.edit_path(rest, f)))
                        }
                    })
                    .collect(),
            ),
            Json::Array(items) => {
                let Ok(i) = first.trim().parse::<i64>() else {
                    return self.clone();
                };
                let n = items.len() as i64;
                let idx = if i < 0 { n + i } else { i };
                Json::Array(
                    items
                        .iter()
                        .enumerate()
                        .filter_map(|(j, v)| {
                            if j as i64 != idx {
                                Some(v.clone())
                            } else if rest.is_empty() {
                                f(v)
                            } else {
                                Some(v.edit_path(rest, f))
                            }
                        })
                        .collect(),
                )
            }
            other => other.clone(),
        }
    }

    /// jsonb_strip_nulls: drops object fields whose value is null, at every depth.
    pub fn strip_nulls(&self) -> Json {
        match self {
            Json::Object(pairs) => Json::Object(
                pairs
                    .iter()
                    .filter(|(_, v)| !matches!(v, Json::Null))
                    .map(|(k, v)| (k.clone(), v.strip_nulls()))
                    .collect(),
            ),
            Json::Array(items) => Json::Array(items.iter().map(Json::strip_nulls).collect()),
            other => other.clone(),
        }
    }
}

/// The byte range of `src`'s member named by `step` (an object key or an
/// array index), for json's operators, which return the text as written.
/// `key` selects an object field (the last of duplicates), `index` an array
/// element; None when absent or when `src` is not that kind of container.
pub fn json_member<'s>(
    src: &'s str,
    key: Option<&str>,
    index: Option<i64>,
) -> Result<Option<&'s str>> {
    let mut p = Parser { s: src, b: src.as_bytes(), pos: 0, jsonb: false, depth: 0 };
    p.ws();
    let mut found: Option<(usize, usize)> = None;
    match (p.b.get(p.pos), key, index) {
        (Some(b'{'), Some(key), _) => {
            p.pos += 1;
            if !p.empty(b'}') {
                loop {
                    p.ws();
                    let k = p.string()?;
                    p.expect(b':', "\":\"")?;
                    p.ws();
                    let start = p.pos;
                    p.value()?;
                    if k == key {
                        found = Some((start, p.pos));
                    }
                    if !p.more(b'}')? {
                        break;
                    }
                }
            }
        }
        (Some(b'['), _, Some(i)) => {
            let spans = p.element_spans()?;
            let idx = if i < 0 { spans.len() as i64 + i } else { i };
            found = usize::try_from(idx).ok().and_then(|i| spans.get(i).copied());
        }
        _ => {}
    }
    Ok(found.map(|(a, b)| &src[a..b]))
}

/// The elements of json text `src` as written, if it is an array.
pub fn json_elements(src: &str) -> Result<Option<Vec<&str>>> {
    let mut p = Parser { s: src, b: src.as_bytes(), pos: 0, jsonb: false, depth: 0 };
    p.ws();
    if p.b.get(p.pos) != Some(&b'[') {
        return Ok(None);
    }
    Ok(Some(p.element_spans()?.into_iter().map(|(a, b)| &src[a..b]).collect()))
}

/// `->>` on json text: a string member unescaped, null as None, anything
/// else as written.
pub fn json_text(member: &str) -> Result<Option<String>> {
    let t = member.trim();
    if t == "null" {
        return Ok(None);
    }
    if t.starts_with('"') {
        return match parse_json(t)? {
            Json::String(s) => Ok(Some(s)),
            _ => Ok(Some(t.to_string())),
        };
    }
    Ok(Some(t.to_string()))
}

/// Writes a jsonb value's text (for the wire and casts).
pub fn write_jsonb<O: TextOut + ?Sized>(j: &Json, out: &mut O) {
    out.put(j.to_text().as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jb(s: &str) -> String {
        match parse_jsonb(s) {
            Ok(j) => j.to_text(),
            Err(e) => format!("{} {} {}", e.code.code(), e.message, e.detail.unwrap_or_default()),
        }
    }

    #[test]
    fn jsonb_text_like_postgres() {
        assert_eq!(
            jb(r#"{"b":1,"a":[1,2.50,{"x":null}],"aa":true}"#),
            r#"{"a": [1, 2.50, {"x": null}], "b": 1, "aa": true}"#
        );
        assert_eq!(jb(r#"{"a":1,"a":2}"#), r#"{"a": 2}"#);
        assert_eq!(jb(r#" "a\u00e9\n" "#), "\"a\u{e9}\\n\"");
        assert_eq!(jb("1e2"), "100");
        assert_eq!(jb("[]"), "[]");
        assert!(jb("{\"a\" 1}").contains("Expected \":\", but found \"1\"."));
        assert!(jb("[1,").contains("The input string ended unexpectedly."));
        assert!(jb("tru").contains("Token \"tru\" is invalid."));
        assert!(jb("01").contains("Token \"01\" is invalid."));
        assert!(jb(r#""\u0000""#).starts_with("22P05"));
        assert!(jb("\"a\nb\"").contains("Character with value 0x0a must be escaped."));
    }

    #[test]
    fn operators() {
        let j = |s: &str| parse_jsonb(s).expect("jsonb");
        assert!(j(r#"{"a":1,"b":[1,2,{"c":3}]}"#).contains(&j(r#"{"b":[{"c":3}]}"#)));
        assert!(!j(r#"{"a":1}"#).contains(&j(r#"{"a":"1"}"#)));
        assert!(j("[1,2,3]").contains(&j("2")));
        assert!(j("[1,[2,3]]").contains(&j("[[3]]")));
        assert!(!j("[1,2]").contains(&j("[[1]]")));
        assert_eq!(j(r#"{"a":1}"#).concat(&j(r#"{"b":2,"a":3}"#)).to_text(), r#"{"a": 3, "b": 2}"#);
        assert_eq!(j("[1]").concat(&j("2")).to_text(), "[1, 2]");
        let path = vec!["a".to_string(), "1".to_string()];
        assert_eq!(
            j(r#"{"a":[1,2]}"#).set_path(&path, &j("9"), true).expect("set").to_text(),
            r#"{"a": [1, 9]}"#
        );
        assert_eq!(j(r#"{"a":[1,2]}"#).remove_path(&path).expect("rm").to_text(), r#"{"a": [1]}"#);
        assert_eq!(j(r#"{"a":1,"b":null}"#).strip_nulls().to_text(), r#"{"a": 1}"#);
        assert!(j("[1]").compare(&j(r#"{"a":1}"#)).is_lt());
        assert!(j("true").compare(&j("1")).is_gt());
    }

    #[test]
    fn json_members_keep_text() {
        let src = r#"{"a": [1,  2], "b": "x\"y", "a": {"c" : 1}}"#;
        assert_eq!(json_member(src, Some("a"), None).expect("ok"), Some(r#"{"c" : 1}"#));
        assert_eq!(json_member(src, Some("zz"), None).expect("ok"), None);
        let arr = "[1, [2,  3], null]";
        assert_eq!(json_member(arr, None, Some(1)).expect("ok"), Some("[2,  3]"));
        assert_eq!(json_member(arr, None, Some(-1)).expect("ok"), Some("null"));
        assert_eq!(json_text(r#""x\"y""#).expect("ok"), Some("x\"y".to_string()));
        assert_eq!(json_text("null").expect("ok"), None);
    }

    #[test]
    fn subscript_assignment() {
        let j = |s: &str| parse_jsonb(s).expect("jsonb");
        let set = |doc: &str, path: &[&str], v: &str| {
            let path: Vec<String> = path.iter().map(|p| p.to_string()).collect();
            match j(doc).assign_path(&path, &j(v)) {
                Ok(r) => r.to_text(),
                Err(e) => format!("{} {}", e.code.code(), e.message),
            }
        };
        assert_eq!(set(r#"{"a":1}"#, &["a"], "2"), r#"{"a": 2}"#);
        assert_eq!(set(r#"{"a":1}"#, &["b", "c"], "3"), r#"{"a": 1, "b": {"c": 3}}"#);
        assert_eq!(set("{}", &["n", "2", "m"], "1"), r#"{"n": [null, null, {"m": 1}]}"#);
        assert_eq!(set("[1,2]", &["4"], "true"), "[1, 2, null, null, true]");
        assert_eq!(set("[1,2]", &["-1"], "9"), "[1, 9]");
        assert_eq!(
            set("[1,2]", &["-3"], "9"),
            "22023 path element at position 1 is out of range: -3"
        );
        assert_eq!(
            set("[1,2]", &["q"], "9"),
            r#"22P02 path element at position 1 is not an integer: "q""#
        );
        assert_eq!(set(r#"{"a":1}"#, &["a", "z"], "9"), "22023 cannot replace existing key");
        assert_eq!(set("5", &["x"], "9"), "22023 cannot replace existing key");
        assert_eq!(set(r#"{"a":[0]}"#, &["a", "0"], "[]"), r#"{"a": [[]]}"#);
    }
}
