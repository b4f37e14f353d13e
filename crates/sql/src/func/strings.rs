//! String functions beyond the basic ones in func.rs: format, concat_ws,
//! translate, to_hex, bit_length, num_nulls, num_nonnulls and overlay, with
//! PostgreSQL 15's semantics and errors.

use sqltypes::{DataType, Value};

use crate::error::Result;
use crate::expr::EvalContext;
use crate::{bail, err};

/// One function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringFunc {
    /// format(formatstr, args...)
    Format,
    /// concat_ws(separator, args...)
    ConcatWs,
    /// translate(string, from, to)
    Translate,
    /// to_hex(integer | bigint)
    ToHex,
    /// bit_length(text | bytea)
    BitLength,
    /// num_nulls(args...) and num_nonnulls(args...) (the flag: nulls)
    CountNulls(bool),
    /// overlay(string placing replacement from start [for count]), text
    /// or bytea
    Overlay,
    /// normalize(text, form) (the binder turns `NFC` ... into text)
    Normalize,
    /// `text IS [form] NORMALIZED`
    IsNormalized,
    /// unistr(text): Unicode escapes decoded
    Unistr,
    /// like_escape(pattern, escape): a LIKE pattern with another escape
    /// character (`LIKE p ESCAPE e`) rewritten to use backslash
    LikeEscape,
    /// similar_to_escape(pattern [, escape]): a SIMILAR TO pattern as the
    /// regular expression `~` matches it with
    SimilarEscape,
}

/// A resolved call: the function, its result type, its argument types.
pub type Resolved = (StringFunc, DataType, Vec<Option<DataType>>);

/// The function `name` names with these arguments; None if `name` is not
/// one of them.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    use DataType::{Bytea, Int4, Int8, Text};
    let text = Some(Text);
    let (f, ty, params) = match (name, args) {
        ("format", [_, ..]) => {
            let params = std::iter::once(text).chain(args[1..].iter().map(|_| None)).collect();
            (StringFunc::Format, Text, params)
        }
        ("concat_ws", [_, _, ..]) => {
            let params = std::iter::once(text).chain(args[1..].iter().map(|_| None)).collect();
            (StringFunc::ConcatWs, Text, params)
        }
        ("translate", [_, _, _]) => (StringFunc::Translate, Text, vec![text.clone(); 3]),
        ("to_hex", [Int8]) => (StringFunc::ToHex, Text, vec![Some(Int8)]),
        ("to_hex", [t]) if t.is_numeric() || *t == DataType::Unknown => {
            (StringFunc::ToHex, Text, vec![Some(Int4)])
        }
        ("bit_length", [t]) if *t == Bytea => (StringFunc::BitLength, Int4, vec![Some(Bytea)]),
        ("bit_length", [_]) => (StringFunc::BitLength, Int4, vec![text]),
        ("overlay", [s, _, _] | [s, _, _, _]) => {
            let ty = if *s == Bytea { Bytea } else { Text };
            let mut params = vec![Some(ty.clone()), Some(ty.clone()), Some(Int4)];
            if args.len() == 4 {
                params.push(Some(Int4));
            }
            (StringFunc::Overlay, ty, params)
        }
        ("normalize", [_] | [_, _]) => {
            (StringFunc::Normalize, Text, args.iter().map(|_| text.clone()).collect())
        }
        ("is_normalized", [_] | [_, _]) => {
            (StringFunc::IsNormalized, DataType::Bool, args.iter().map(|_| text.clone()).collect())
        }
        ("unistr", [_]) => (StringFunc::Unistr, Text, vec![text.clone()]),
        ("like_escape", [_, _]) => (StringFunc::LikeEscape, Text, vec![text.clone(); 2]),
        ("similar_to_escape", [_] | [_, _]) => {
            (StringFunc::SimilarEscape, Text, args.iter().map(|_| text.clone()).collect())
        }
        ("num_nulls" | "num_nonnulls", [_, ..]) => {
            let nulls = name == "num_nulls";
            (StringFunc::CountNulls(nulls), Int4, args.iter().map(|_| None).collect())
        }
        ("format" | "concat_ws" | "translate" | "to_hex" | "bit_length", _)
        | ("normalize" | "is_normalized" | "unistr", _)
        | ("num_nulls" | "num_nonnulls", _) => {
            return Some(Err(super::no_such_function(name, args)))
        }
        _ => return None,
    };
    Some(Ok((f, ty, params)))
}

/// Evaluates `f`. format, concat_ws and the null counts are not strict.
pub fn call(f: StringFunc, args: Vec<Value>, ctx: &EvalContext) -> Result<Value> {
    if matches!(f, StringFunc::Normalize | StringFunc::IsNormalized | StringFunc::Unistr) {
        let [Value::Text(s), rest @ ..] = args.as_slice() else { return Ok(Value::Null) };
        return match (f, rest) {
            (StringFunc::Unistr, _) => Ok(Value::Text(unistr(s)?)),
            (_, [] | [Value::Text(_)]) => {
                // The form defaults to NFC.
                let form = match rest {
                    [Value::Text(f)] => f.as_str(),
                    _ => "NFC",
                };
                let normal = normalize(s, form)?;
                Ok(match f {
                    StringFunc::Normalize => Value::Text(normal),
                    _ => Value::Bool(normal == *s),
                })
            }
            _ => Ok(Value::Null),
        };
    }
    // Values print as their type's output function writes them (`t` for
    // true), in the session's time zone.
    let as_text = |v: &Value| -> Result<String> { Ok(sqltypes::text::to_text_in(v, ctx.zone())) };
    match f {
        StringFunc::CountNulls(nulls) => {
            let n = args.iter().filter(|v| v.is_null() == nulls).count();
            return Ok(Value::Int4(n as i32));
        }
        StringFunc::Format => {
            let Value::Text(fmt) = &args[0] else { return Ok(Value::Null) };
            return Ok(Value::Text(format(fmt, &args[1..], &as_text)?));
        }
        StringFunc::ConcatWs => {
            let Value::Text(sep) = &args[0] else { return Ok(Value::Null) };
            let mut parts = Vec::new();
            for v in args[1..].iter().filter(|v| !v.is_null()) {
                parts.push(as_text(v)?);
            }
            return Ok(Value::Text(parts.join(sep)));
        }
        _ if args.iter().any(Value::is_null) => return Ok(Value::Null),
        _ => {}
    }
    Ok(match (f, args.as_slice()) {
        (StringFunc::LikeEscape, [Value::Text(p), Value::Text(e)]) => {
            Value::Text(like_escape(p, e)?)
        }
        (StringFunc::SimilarEscape, [Value::Text(p)]) => {
            Value::Text(similar_to_regex(p, Some('\\'))?)
        }
        (StringFunc::SimilarEscape, [Value::Text(p), Value::Text(e)]) => {
            Value::Text(similar_to_regex(p, escape_char(e)?)?)
        }
        (StringFunc::Translate, [Value::Text(s), Value::Text(from), Value::Text(to)]) => {
            let from: Vec<char> = from.chars().collect();
            let to: Vec<char> = to.chars().collect();
            let mapped = s.chars().filter_map(|c| match from.iter().position(|&f| f == c) {
                Some(i) => to.get(i).copied(),
                None => Some(c),
            });
            Value::Text(mapped.collect())
        }
        // Negative numbers print as their two's complement.
        (StringFunc::ToHex, [Value::Int4(n)]) => Value::Text(format!("{:x}", *n as u32)),
        (StringFunc::ToHex, [Value::Int8(n)]) => Value::Text(format!("{:x}", *n as u64)),
        // int4 arithmetic, wrapping past 256 MB as PostgreSQL's does.
        (StringFunc::BitLength, [Value::Text(s)]) => Value::Int4((s.len() as i32).wrapping_mul(8)),
        (StringFunc::BitLength, [Value::Bytea(b)]) => Value::Int4((b.len() as i32).wrapping_mul(8)),
        (StringFunc::Overlay, [Value::Text(s), Value::Text(r), from, rest @ ..]) => {
            let s: Vec<char> = s.chars().collect();
            let r: Vec<char> = r.chars().collect();
            let (head, tail) = overlay_bounds(s.len(), r.len(), from, rest.first())?;
            Value::Text(s[..head].iter().chain(&r).chain(&s[tail..]).collect())
        }
        (StringFunc::Overlay, [Value::Bytea(s), Value::Bytea(r), from, rest @ ..]) => {
            let (head, tail) = overlay_bounds(s.len(), r.len(), from, rest.first())?;
            Value::Bytea([&s[..head], r.as_slice(), &s[tail..]].concat())
        }
        (f, args) => bail!(InternalError, "{f:?} called with {args:?}"),
    })
}

/// Where overlay() cuts a string of `len` elements: the kept head's
/// length and where the kept tail starts. The start is 1-based; the count
/// defaults to the replacement's length.
fn overlay_bounds(
    len: usize,
    replacement: usize,
    from: &Value,
    count: Option<&Value>,
) -> Result<(usize, usize)> {
    let from = match from {
        Value::Int4(n) => i64::from(*n),
        _ => 1,
    };
    let count = match count {
        Some(Value::Int4(n)) => i64::from(*n),
        _ => replacement as i64,
    };
    if from - 1 < 0 {
        bail!(SubstringError, "negative substring length not allowed");
    }
    let head = ((from - 1) as usize).min(len);
    let tail = (from + count - 1).clamp(0, len as i64) as usize;
    Ok((head, tail))
}

/// format(): `%[n$][-][width]type` with types s, I and L, and `%%`.
fn format(fmt: &str, args: &[Value], as_text: &dyn Fn(&Value) -> Result<String>) -> Result<String> {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    // The next argument a specifier without a position takes.
    let mut next = 0usize;
    let unterminated = || {
        err!(InvalidParameterValue, "unterminated format() type specifier")
            .with_hint("For a single \"%\" use \"%%\".")
    };
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // A number is a position when `$` follows it, else a width.
        let mut position = None;
        let mut left = false;
        let mut width: Option<usize> = None;
        let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            let mut n: Option<usize> = None;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                chars.next();
                n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize));
            }
            n
        };
        if let Some(n) = digits(&mut chars) {
            if chars.peek() == Some(&'$') {
                chars.next();
                if n == 0 {
                    bail!(
                        InvalidParameterValue,
                        "format specifies argument 0, but arguments are numbered from 1"
                    );
                }
                position = Some(n - 1);
            } else {
                width = Some(n);
            }
        }
        if width.is_none() {
            if chars.peek() == Some(&'-') {
                chars.next();
                left = true;
            }
            if chars.peek() == Some(&'*') {
                chars.next();
                // The width comes from an argument (`*` or `*n$`).
                let at = match digits(&mut chars) {
                    Some(n) if chars.peek() == Some(&'$') => {
                        chars.next();
                        n.checked_sub(1).ok_or_else(unterminated)?
                    }
                    Some(_) => return Err(unterminated()),
                    None => {
                        next += 1;
                        next - 1
                    }
                };
                let Some(w) = args.get(at) else {
                    bail!(InvalidParameterValue, "too few arguments for format()");
                };
                // The width argument is read as an integer (int4).
                let w: i64 = match w {
                    Value::Null => 0,
                    v => {
                        let text = as_text(v)?;
                        let wide: i64 = text.trim().parse().map_err(|_| {
                            err!(
                                InvalidTextRepresentation,
                                "invalid input syntax for type integer: \"{text}\""
                            )
                        })?;
                        if i32::try_from(wide).is_err() {
                            bail!(
                                NumericValueOutOfRange,
                                "value \"{text}\" is out of range for type integer"
                            );
                        }
                        wide
                    }
                };
                left |= w < 0;
                width = Some(w.unsigned_abs() as usize);
            } else {
                width = digits(&mut chars);
            }
        }
        let Some(kind) = chars.next() else { return Err(unterminated()) };
        if !matches!(kind, 's' | 'I' | 'L') {
            return Err(err!(
                InvalidParameterValue,
                "unrecognized format() type specifier \"{kind}\""
            )
            .with_hint("For a single \"%\" use \"%%\"."));
        }
        let at = position.unwrap_or_else(|| {
            next += 1;
            next - 1
        });
        if position.is_some() {
            next = at + 1;
        }
        let Some(v) = args.get(at) else {
            bail!(InvalidParameterValue, "too few arguments for format()");
        };
        let text = match (kind, v) {
            ('s', Value::Null) => String::new(),
            ('L', Value::Null) => "NULL".to_string(),
            ('I', Value::Null) => {
                bail!(NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
            }
            ('s', v) => as_text(v)?,
            ('I', v) => super::catalog_info::quote_ident(&as_text(v)?),
            (_, v) => super::quote_literal(&as_text(v)?),
        };
        // A width no string may reach (PostgreSQL's 1 GB allocation limit).
        if width.is_some_and(|w| w > 1 << 30) {
            bail!(ProgramLimitExceeded, "out of memory");
        }
        let pad = width.unwrap_or(0).saturating_sub(text.chars().count());
        if left {
            out.push_str(&text);
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(&text);
        }
    }
    Ok(out)
}

/// `s` in Unicode normalization form `form` (NFC, NFD, NFKC, NFKD).
fn normalize(s: &str, form: &str) -> Result<String> {
    use unicode_normalization::UnicodeNormalization;
    Ok(match form.to_ascii_uppercase().as_str() {
        "NFC" => s.nfc().collect(),
        "NFD" => s.nfd().collect(),
        "NFKC" => s.nfkc().collect(),
        "NFKD" => s.nfkd().collect(),
        _ => bail!(InvalidParameterValue, "invalid normalization form: {form}"),
    })
}

/// unistr(): `\XXXX`, `\+XXXXXX`, `\uXXXX` and `\UXXXXXXXX` escapes (UTF-16
/// surrogate pairs joined) and `\\` decoded, as PostgreSQL's unistr.
fn unistr(s: &str) -> Result<String> {
    let invalid = || {
        err!(SyntaxError, "invalid Unicode escape")
            .with_hint("Unicode escapes must be \\XXXX, \\+XXXXXX, \\uXXXX, or \\UXXXXXXXX.")
    };
    let mut out = String::with_capacity(s.len());
    let mut pending_high: Option<u32> = None;
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if c != '\\' {
            if pending_high.is_some() {
                bail!(SyntaxError, "invalid Unicode surrogate pair");
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let after = &rest[1..];
        let (digits, skip) = match after.chars().next() {
            Some('\\') => {
                out.push('\\');
                rest = &after[1..];
                continue;
            }
            Some('+') => (6, 2),
            Some('u') => (4, 2),
            Some('U') => (8, 2),
            _ => (4, 1),
        };
        let hex = rest.get(skip..skip + digits).ok_or_else(invalid)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid());
        }
        let code = u32::from_str_radix(hex, 16).map_err(|_| invalid())?;
        rest = &rest[skip + digits..];
        match (pending_high.take(), code) {
            (None, 0xD800..=0xDBFF) => pending_high = Some(code),
            (Some(high), 0xDC00..=0xDFFF) => {
                let joined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                out.push(char::from_u32(joined).ok_or_else(invalid)?);
            }
            (Some(_), _) | (None, 0xDC00..=0xDFFF) => {
                bail!(SyntaxError, "invalid Unicode surrogate pair")
            }
            (None, c) if c > 0x10FFFF => {
                bail!(InvalidParameterValue, "invalid Unicode code point: {hex}")
            }
            (None, c) => out.push(char::from_u32(c).ok_or_else(invalid)?),
        }
    }
    if pending_high.is_some() {
        bail!(SyntaxError, "invalid Unicode surrogate pair");
    }
    Ok(out)
}

/// The escape character an ESCAPE string names: None for the empty string
/// (no escape character), else its one character.
fn escape_char(e: &str) -> Result<Option<char>> {
    let mut chars = e.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Ok(None),
        (Some(c), None) => Ok(Some(c)),
        _ => Err(err!(InvalidEscapeSequence, "invalid escape string")
            .with_hint("Escape string must be empty or one character.")),
    }
}

/// `LIKE pattern ESCAPE e` as a pattern escaped with backslash, which the
/// LIKE matcher reads: with no escape character every backslash becomes a
/// literal one, with another one each of its uses becomes a backslash.
pub fn like_escape(pattern: &str, escape: &str) -> Result<String> {
    let esc = escape_char(escape)?;
    if esc == Some('\\') {
        return Ok(pattern.to_string());
    }
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut escaped = false;
    for c in pattern.chars() {
        if Some(c) == esc && !escaped {
            out.push('\\');
            escaped = true;
            continue;
        }
        if c == '\\' && !escaped {
            out.push('\\');
        }
        out.push(c);
        escaped = false;
    }
    Ok(out)
}

/// A SIMILAR TO pattern as a regular expression matching whole strings,
/// as PostgreSQL's similar_to_escape writes it: `%` is `.*`, `_` is `.`,
/// groups do not capture, `.`, `^`, `$` and backslash are literal, the
/// escape character makes the next character literal (or a class escape
/// such as `\d`), and escape-double-quote splits off the part SUBSTRING
/// returns.
pub fn similar_to_regex(pattern: &str, esc: Option<char>) -> Result<String> {
    let mut out = String::with_capacity(pattern.len() * 2 + 8);
    out.push_str("^(?:");
    let (mut escaped, mut in_class, mut quotes) = (false, false, 0);
    for c in pattern.chars() {
        if escaped {
            escaped = false;
            if c == '"' && !in_class {
                out.push_str(match quotes {
                    0 => "){1,1}?(",
                    1 => "){1,1}(?:",
                    _ => bail!(
                        InvalidUseOfEscapeCharacter,
                        "SQL regular expression may not contain more than two escape-double-quote separators"
                    ),
                });
                quotes += 1;
            } else {
                out.push('\\');
                out.push(c);
            }
            continue;
        }
        if Some(c) == esc {
            escaped = true;
            continue;
        }
        match c {
            _ if in_class => {
                if c == '\\' {
                    out.push('\\');
                }
                out.push(c);
                in_class = c != ']';
            }
            '[' => {
                out.push(c);
                in_class = true;
            }
            '%' => out.push_str(".*"),
            '_' => out.push('.'),
            '(' => out.push_str("(?:"),
            '\\' | '.' | '^' | '$' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.push_str(")$");
    Ok(out)
}
