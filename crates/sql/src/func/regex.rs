//! POSIX regular expression functions: regexp_replace, regexp_match,
//! regexp_like, regexp_count, regexp_substr, regexp_instr,
//! regexp_split_to_array, `substring(s from pattern)`, and the matching
//! behind `~` and the set-returning regexp_matches and regexp_split_to_table
//! (select/functions.rs).
//!
//! Patterns are compiled by the `regex` crate, whose syntax is close to
//! PostgreSQL's advanced regular expressions (back-references and
//! lookaround are refused with 2201B). As in PostgreSQL, `.` matches a
//! newline and `^`/`$` match only at the ends of the string unless a flag
//! says otherwise. Positions and `start` arguments count characters.
//!
//! Searching for several matches follows PostgreSQL's loop
//! (setup_regexp_matches): each search starts where the last match ended,
//! one character further after an empty match; splitting ignores empty
//! matches at the start, at the end and right after another match.

use std::cell::RefCell;
use std::collections::HashMap;

use sqltypes::array::ArrayValue;
use sqltypes::{DataType, Value};

use crate::error::Result;
use crate::{bail, err};

/// A resolved regular expression function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegexFunc {
    /// regexp_replace(source, pattern, replacement [, start [, n]] [, flags])
    Replace,
    /// regexp_match(string, pattern [, flags])
    Match,
    /// regexp_like(string, pattern [, flags])
    Like,
    /// regexp_count(string, pattern [, start [, flags]])
    Count,
    /// regexp_substr(string, pattern [, start [, n [, flags [, subexpr]]]])
    Substr,
    /// regexp_instr(string, pattern [, start [, n [, endoption [, flags [, subexpr]]]]])
    Instr,
    /// regexp_split_to_array(string, pattern [, flags])
    SplitToArray,
    /// substring(string from pattern), substring(string, pattern)
    Substring,
}

/// A resolution: function, result type, argument coercions.
pub type Resolved = (RegexFunc, DataType, Vec<Option<DataType>>);

/// Resolves a regular expression function by name, or None if `name` is
/// not one. The `substring` form is chosen by the binder.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    use DataType as T;
    use RegexFunc as F;
    let n = args.len();
    let (f, ty, params): (F, DataType, &[DataType]) = match (name, n) {
        ("regexp_replace", 3) => (F::Replace, T::Text, &[T::Text, T::Text, T::Text]),
        // The fourth argument is flags when it is text, else start.
        ("regexp_replace", 4) if matches!(args[3], T::Text | T::Varchar(_) | T::Unknown) => {
            (F::Replace, T::Text, &[T::Text, T::Text, T::Text, T::Text])
        }
        ("regexp_replace", 4) => (F::Replace, T::Text, &[T::Text, T::Text, T::Text, T::Int4]),
        ("regexp_replace", 5) => {
            (F::Replace, T::Text, &[T::Text, T::Text, T::Text, T::Int4, T::Int4])
        }
        ("regexp_replace", 6) => {
            (F::Replace, T::Text, &[T::Text, T::Text, T::Text, T::Int4, T::Int4, T::Text])
        }
        ("regexp_match", 2 | 3) => (F::Match, T::Text.array_of(), &[T::Text, T::Text, T::Text]),
        ("regexp_like", 2 | 3) => (F::Like, T::Bool, &[T::Text, T::Text, T::Text]),
        ("regexp_count", 2..=4) => (F::Count, T::Int4, &[T::Text, T::Text, T::Int4, T::Text]),
        ("regexp_substr", 2..=6) => {
            (F::Substr, T::Text, &[T::Text, T::Text, T::Int4, T::Int4, T::Text, T::Int4])
        }
        ("regexp_instr", 2..=7) => {
            (F::Instr, T::Int4, &[T::Text, T::Text, T::Int4, T::Int4, T::Int4, T::Text, T::Int4])
        }
        ("regexp_split_to_array", 2 | 3) => {
            (F::SplitToArray, T::Text.array_of(), &[T::Text, T::Text, T::Text])
        }
        (
            "regexp_replace"
            | "regexp_match"
            | "regexp_like"
            | "regexp_count"
            | "regexp_substr"
            | "regexp_instr"
            | "regexp_split_to_array",
            _,
        ) => return Some(Err(super::no_such_function(name, args))),
        _ => return None,
    };
    Some(Ok((f, ty, params[..n].iter().cloned().map(Some).collect())))
}

/// Evaluates `f` (strict: NULL in, NULL out).
pub fn call(f: RegexFunc, args: Vec<Value>) -> Result<Value> {
    use RegexFunc as F;
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let text = |i: usize| match args.get(i) {
        Some(Value::Text(s)) => s.as_str(),
        _ => "",
    };
    let int = |i: usize, default: i64| match args.get(i) {
        Some(Value::Int4(v)) => *v as i64,
        Some(Value::Int8(v)) => *v,
        _ => default,
    };
    let (s, pattern) = (text(0), text(1));
    Ok(match f {
        F::Replace => {
            let (start, n, flags) = match args.len() {
                3 => (1, 1, ""),
                4 if matches!(args[3], Value::Text(_)) => (1, 1, text(3)),
                4 => (int(3, 1), 1, ""),
                5 => (int(3, 1), int(4, 1), ""),
                _ => (int(3, 1), int(4, 1), text(5)),
            };
            let (flags, global) = Flags::parse(flags)?;
            // With start or n given, n counts matches (0: all); else 'g'.
            let n = if args.len() > 3 && !matches!(args[3], Value::Text(_)) {
                positive("n", n, true)?
            } else if global {
                0
            } else {
                1
            };
            let start = positive("start", start, false)?;
            Value::Text(replace(s, &compile(pattern, flags)?, text(2), start as usize, n as usize))
        }
        F::Match => {
            let flags = no_global(text(2), "regexp_match()", true)?;
            let re = compile(pattern, flags)?;
            matches(s, &re, 0, true).first().map_or(Value::Null, |g| groups_of(s, g))
        }
        F::Like => {
            let flags = no_global(text(2), "regexp_like()", false)?;
            Value::Bool(compile(pattern, flags)?.is_match(s))
        }
        F::Count => {
            let start = positive("start", int(2, 1), false)?;
            let flags = no_global(text(3), "regexp_count()", false)?;
            let re = compile(pattern, flags)?;
            Value::Int4(matches(s, &re, char_offset(s, start), false).len() as i32)
        }
        F::Substr | F::Instr => {
            let start = positive("start", int(2, 1), false)?;
            let n = positive("n", int(3, 1), false)?;
            let (end_option, flags, subexpr) = match f {
                F::Instr => (int(4, 0), text(5), int(6, 0)),
                _ => (0, text(4), int(5, 0)),
            };
            if !(0..=1).contains(&end_option) {
                bail!(
                    InvalidParameterValue,
                    "invalid value for parameter \"endoption\": {end_option}"
                );
            }
            let subexpr = positive("subexpr", subexpr, true)? as usize;
            let name = if f == F::Instr { "regexp_instr()" } else { "regexp_substr()" };
            let re = compile(pattern, no_global(flags, name, false)?)?;
            let found = nth_match(s, &re, char_offset(s, start), n as usize)
                .and_then(|g| range(&g, subexpr));
            match (f, found) {
                (F::Substr, Some(m)) => Value::Text(s[m.0..m.1].to_string()),
                (F::Substr, None) => Value::Null,
                (_, Some(m)) => {
                    let at = if end_option == 1 { m.1 } else { m.0 };
                    Value::Int4(s[..at].chars().count() as i32 + 1)
                }
                (_, None) => Value::Int4(0),
            }
        }
        F::SplitToArray => {
            let flags = no_global(text(2), "regexp_split_to_array()", false)?;
            let parts = split(s, &compile(pattern, flags)?);
            ArrayValue::new(DataType::Text, parts.into_iter().map(Value::Text).collect())
                .into_value()
        }
        F::Substring => {
            let re = compile(pattern, Flags::default())?;
            match re.captures(s) {
                // The first parenthesized group's text if there is one.
                Some(c) => match c.get(if c.len() > 1 { 1 } else { 0 }) {
                    Some(m) => Value::Text(m.as_str().to_string()),
                    None => Value::Null,
                },
                None => Value::Null,
            }
        }
    })
}

/// A set-returning call's (string, pattern, flags); None if one is NULL.
fn srf_args(args: &[Value]) -> Option<(&str, &str, &str)> {
    match args {
        [Value::Text(s), Value::Text(p)] => Some((s, p, "")),
        [Value::Text(s), Value::Text(p), Value::Text(f)] => Some((s, p, f)),
        _ => None,
    }
}

/// regexp_matches(string, pattern [, flags]): one text[] per match (all of
/// them with 'g').
pub fn matches_rows(args: &[Value]) -> Result<Vec<Vec<Value>>> {
    let Some((s, p, flags)) = srf_args(args) else { return Ok(vec![]) };
    let (flags, global) = Flags::parse(flags)?;
    let re = compile(p, flags)?;
    let mut out = Vec::new();
    for c in matches(s, &re, 0, !global) {
        out.push(vec![groups_of(s, &c)]);
    }
    Ok(out)
}

/// regexp_split_to_table(string, pattern [, flags]): one row per piece.
pub fn split_rows(args: &[Value]) -> Result<Vec<Vec<Value>>> {
    let Some((s, p, flags)) = srf_args(args) else { return Ok(vec![]) };
    let flags = no_global(flags, "regexp_split_to_table()", false)?;
    Ok(split(s, &compile(p, flags)?).into_iter().map(|p| vec![Value::Text(p)]).collect())
}

/// `s ~ pattern` (`~*` with `case_insensitive`).
pub fn is_match(s: &str, pattern: &str, case_insensitive: bool) -> Result<bool> {
    let flags = Flags { case_insensitive, ..Flags::default() };
    Ok(compile(pattern, flags)?.is_match(s))
}

/// How a pattern is read, from the flags argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Flags {
    case_insensitive: bool,
    /// `.` matches a newline.
    dot_newline: bool,
    /// `^` and `$` match at newlines.
    multi_line: bool,
    /// Whitespace and `#` comments in the pattern are ignored.
    expanded: bool,
    /// The pattern is a literal string.
    literal: bool,
}

impl Default for Flags {
    fn default() -> Flags {
        Flags {
            case_insensitive: false,
            dot_newline: true,
            multi_line: false,
            expanded: false,
            literal: false,
        }
    }
}

impl Flags {
    /// Parses a flags string; the second value is true for 'g'.
    fn parse(flags: &str) -> Result<(Flags, bool)> {
        let mut f = Flags::default();
        let mut global = false;
        for c in flags.chars() {
            match c {
                'g' => global = true,
                'i' => f.case_insensitive = true,
                'c' => f.case_insensitive = false,
                'n' | 'm' => (f.dot_newline, f.multi_line) = (false, true),
                'p' => (f.dot_newline, f.multi_line) = (false, false),
                'w' => (f.dot_newline, f.multi_line) = (true, true),
                's' => (f.dot_newline, f.multi_line) = (true, false),
                'x' => f.expanded = true,
                't' => f.expanded = false,
                'q' => f.literal = true,
                'e' => {}
                'b' => bail!(FeatureNotSupported, "basic regular expressions are not supported"),
                other => {
                    bail!(InvalidParameterValue, "invalid regular expression option: \"{other}\"")
                }
            }
        }
        Ok((f, global))
    }
}

/// Parses `flags` for a function that takes no 'g'.
fn no_global(flags: &str, function: &str, hint: bool) -> Result<Flags> {
    let (f, global) = Flags::parse(flags)?;
    if global {
        let e = err!(InvalidParameterValue, "{function} does not support the \"global\" option");
        return Err(match hint {
            true => e.with_hint("Use the regexp_matches function instead."),
            false => e,
        });
    }
    Ok(f)
}

/// `v` as a count or position argument: at least 1 (or 0 with `zero_ok`).
fn positive(name: &str, v: i64, zero_ok: bool) -> Result<i64> {
    if v < 0 || (v == 0 && !zero_ok) {
        bail!(InvalidParameterValue, "invalid value for parameter \"{name}\": {v}");
    }
    Ok(v)
}

/// The byte offset of 1-based character position `pos` in `s` (its length
/// if past the end).
fn char_offset(s: &str, pos: i64) -> usize {
    s.char_indices().nth((pos - 1).max(0) as usize).map_or(s.len(), |(i, _)| i)
}

/// The compiled pattern, cached per thread.
fn compile(pattern: &str, flags: Flags) -> Result<regex::Regex> {
    thread_local! {
        static CACHE: RefCell<HashMap<(String, Flags), regex::Regex>> = RefCell::new(HashMap::new());
    }
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let key = (pattern.to_string(), flags);
        if let Some(re) = c.get(&key) {
            return Ok(re.clone());
        }
        let source = match (flags.literal, flags.dot_newline) {
            (true, _) => regex::escape(pattern),
            (false, true) => pattern.to_string(),
            (false, false) => newline_sensitive(pattern),
        };
        let re = regex::RegexBuilder::new(&source)
            .case_insensitive(flags.case_insensitive)
            .dot_matches_new_line(flags.dot_newline)
            .multi_line(flags.multi_line)
            .ignore_whitespace(flags.expanded)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                let why = e.to_string();
                let last = why.lines().last().unwrap_or("invalid pattern").trim().to_string();
                err!(InvalidRegularExpression, "invalid regular expression: {last}")
            })?;
        if c.len() >= 256 {
            c.clear();
        }
        c.insert(key, re.clone());
        Ok(re)
    })
}

/// `pattern` with each negated bracket expression kept from matching a
/// newline, as newline-sensitive matching ('n', 'p') wants; `.` is told by
/// the builder.
fn newline_sensitive(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => out.extend(chars.next()),
            '[' if !in_class => {
                in_class = true;
                if chars.peek() == Some(&'^') {
                    out.extend(chars.next());
                    // A `]` right after `[^` is a member, not the end.
                    if chars.peek() == Some(&']') {
                        out.extend(chars.next());
                    }
                    out.push_str("\\n");
                } else if chars.peek() == Some(&']') {
                    out.extend(chars.next());
                }
            }
            // `[:alpha:]` inside a class does not end it.
            '[' if chars.peek() == Some(&':') => {
                out.extend(chars.next());
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
            }
            ']' if in_class => in_class = false,
            _ => {}
        }
    }
    out
}

/// One match: each group's byte range (None where a group took no part).
type Groups = Vec<Option<(usize, usize)>>;

/// Group `i`'s byte range in a match, if it took part.
fn range(g: &Groups, i: usize) -> Option<(usize, usize)> {
    g.get(i).copied().flatten()
}

/// The matches of `re` in `s` from byte `from`, as PostgreSQL finds them
/// (only the first with `first_only`).
fn matches(s: &str, re: &regex::Regex, from: usize, first_only: bool) -> Vec<Groups> {
    let mut out = Vec::new();
    let mut at = from;
    while at <= s.len() {
        let Some(c) = re.captures_at(s, at) else { break };
        let whole = c.get(0).map_or((at, at), |m| (m.start(), m.end()));
        out.push(c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect());
        if first_only {
            break;
        }
        at = whole.1;
        if whole.0 == whole.1 {
            match s[at..].chars().next() {
                Some(ch) => at += ch.len_utf8(),
                None => break,
            }
        }
    }
    out
}

/// The `n`th match (from 1) of `re` in `s` from byte `from`.
fn nth_match(s: &str, re: &regex::Regex, from: usize, n: usize) -> Option<Groups> {
    matches(s, re, from, false).into_iter().nth(n - 1)
}

/// regexp_match's array for a match found by [`matches`]: the groups'
/// text (NULL for a group that took no part), or the whole match when the
/// pattern has no groups.
fn groups_of(s: &str, g: &Groups) -> Value {
    let text =
        |r: &Option<(usize, usize)>| r.map_or(Value::Null, |(a, b)| Value::Text(s[a..b].into()));
    let items: Vec<Value> =
        if g.len() == 1 { vec![text(&g[0])] } else { g.iter().skip(1).map(text).collect() };
    ArrayValue::new(DataType::Text, items).into_value()
}

/// regexp_replace: the `n`th match from character `start` replaced (every
/// match when `n` is 0). In `replacement`, `\1`..`\9` stand for a group's
/// text, `\&` for the whole match and `\\` for a backslash.
fn replace(s: &str, re: &regex::Regex, replacement: &str, start: usize, n: usize) -> String {
    let from = char_offset(s, start as i64);
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    for (i, g) in matches(s, re, from, n == 1).into_iter().enumerate() {
        if n > 1 && i + 1 != n {
            continue;
        }
        let Some((a, b)) = range(&g, 0) else { continue };
        out.push_str(&s[copied..a]);
        substitute(s, &g, replacement, &mut out);
        copied = b;
        if n != 0 {
            break;
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// Appends `replacement` with its references to `g` filled in.
fn substitute(s: &str, g: &Groups, replacement: &str, out: &mut String) {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d @ '1'..='9') => {
                chars.next();
                let i = d as usize - '0' as usize;
                if let Some((a, b)) = range(g, i) {
                    out.push_str(&s[a..b]);
                }
            }
            Some('&') => {
                chars.next();
                if let Some((a, b)) = range(g, 0) {
                    out.push_str(&s[a..b]);
                }
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            _ => out.push('\\'),
        }
    }
}

/// The pieces of `s` between the matches of `re`, leaving out empty
/// matches at either end or right after another match.
fn split(s: &str, re: &regex::Regex) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece_start = 0;
    let mut prev_end = 0;
    for g in matches(s, re, 0, false) {
        let Some((a, b)) = range(&g, 0) else { continue };
        if a < s.len() && b > prev_end {
            pieces.push(s[piece_start..a].to_string());
            piece_start = b;
        }
        prev_end = b;
    }
    pieces.push(s[piece_start..].to_string());
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> regex::Regex {
        compile(p, Flags::default()).expect("test pattern compiles")
    }

    #[test]
    fn split_ignores_degenerate_matches() {
        assert_eq!(split("abc", &re("")), ["a", "b", "c"]);
        assert_eq!(split("the quick", &re(r"\s*")), ["t", "h", "e", "q", "u", "i", "c", "k"]);
        assert_eq!(split(",a,,b", &re(",")), ["", "a", "", "b"]);
        assert_eq!(split("", &re(",")), [""]);
    }

    #[test]
    fn newline_sensitive_classes() {
        assert_eq!(newline_sensitive("a[^x]b"), r"a[^\nx]b");
        assert_eq!(newline_sensitive("[^]a]"), r"[^]\na]");
        assert_eq!(newline_sensitive(r"\[^x"), r"\[^x");
        assert_eq!(newline_sensitive("[[:alpha:]^]"), "[[:alpha:]^]");
    }

    #[test]
    fn replace_counts_and_references() {
        assert_eq!(replace("aaa", &re("a"), "b", 1, 0), "bbb");
        assert_eq!(replace("aaa", &re("a"), "b", 1, 1), "baa");
        assert_eq!(replace("aaa", &re("a"), "b", 1, 3), "aab");
        assert_eq!(replace("aaa", &re("a"), "b", 2, 1), "aba");
        assert_eq!(replace("ab", &re("(a)(b)"), r"\2\1\&\\", 1, 1), r"baab\");
        assert_eq!(replace("baaac", &re("a*"), "-", 1, 0), "-b--c-");
    }
}
