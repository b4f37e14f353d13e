//! The other directions of PostgreSQL's formatting templates (datetime.rs
//! has to_char for dates and times): to_char for numbers, and to_date and
//! to_timestamp(text, template), which read a date or time by a template.
//!
//! Number templates: `9` (a digit, blank when it is a leading zero), `0` (a
//! digit, zero kept), `.`/`D` (decimal point), `,`/`G` (group separator,
//! blank before the first digit), `S` (sign anchored to the number), `MI`,
//! `PL`, `SG` (sign at that place), `PR` (angle brackets around a negative
//! number), `L` (currency: blank in the C locale), `TH`/`th` (ordinal
//! suffix), `EEEE` (scientific notation), `RN`/`rn` (roman numerals), the
//! `FM` prefix (no padding blanks or trailing zeros), quoted text and
//! backslash escapes. Without an explicit sign, one position before the
//! number holds `-` or a blank. A number too wide for the template prints
//! `#` in every digit position.
//!
//! Date templates read what to_char writes: the numeric fields (`YYYY`,
//! `MM`, `DD`, `HH24`, `MI`, `SS`, `MS`, `US`, ...), month and day names,
//! AM/PM, `TZH`/`TZM`, and `J`/`DDD`. As in PostgreSQL without `FX`, a
//! separator in the template matches any separator in the input, blanks
//! are skipped, and a number field adjacent to the next one is read at its
//! width.

use sqltypes::datetime::{self, USECS_PER_DAY, USECS_PER_SEC};
use sqltypes::{Numeric, Zone};

use crate::error::Result;
use crate::{bail, err};

/// One element of a number template.
#[derive(Debug, Clone, PartialEq)]
enum NumTok {
    /// `9` (false) or `0` (true).
    Digit(bool),
    Point,
    Group,
    /// `S`
    Sign,
    Minus,
    Plus,
    SignAt,
    Brackets,
    Currency,
    /// `TH` (true) or `th`.
    Ordinal(bool),
    Exponent,
    /// `RN` (true) or `rn`.
    Roman(bool),
    Text(String),
}

/// A number template, read.
fn number_template(fmt: &str) -> Result<(Vec<NumTok>, bool)> {
    let mut toks = Vec::new();
    let mut fill = false;
    let mut rest = fmt;
    const WORDS: &[(&str, NumTok)] = &[
        ("EEEE", NumTok::Exponent),
        ("eeee", NumTok::Exponent),
        ("MI", NumTok::Minus),
        ("mi", NumTok::Minus),
        ("PL", NumTok::Plus),
        ("pl", NumTok::Plus),
        ("SG", NumTok::SignAt),
        ("sg", NumTok::SignAt),
        ("PR", NumTok::Brackets),
        ("pr", NumTok::Brackets),
        ("TH", NumTok::Ordinal(true)),
        ("th", NumTok::Ordinal(false)),
        ("RN", NumTok::Roman(true)),
        ("rn", NumTok::Roman(false)),
    ];
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("FM").or_else(|| rest.strip_prefix("fm")) {
            fill = true;
            rest = after;
            continue;
        }
        if let Some((w, t)) = WORDS.iter().find(|(w, _)| rest.starts_with(w)) {
            toks.push(t.clone());
            rest = &rest[w.len()..];
            continue;
        }
        let tok = match c {
            '9' => NumTok::Digit(false),
            '0' => NumTok::Digit(true),
            '.' | 'D' | 'd' => NumTok::Point,
            ',' | 'G' | 'g' => NumTok::Group,
            'S' | 's' => NumTok::Sign,
            'L' | 'l' => NumTok::Currency,
            'V' | 'v' | 'B' | 'b' | 'C' | 'c' => {
                bail!(FeatureNotSupported, "the \"{c}\" number template pattern is not supported")
            }
            '"' => {
                let body = &rest[1..];
                let end = body.find('"').unwrap_or(body.len());
                toks.push(NumTok::Text(body[..end].to_string()));
                rest = body.get(end + 1..).unwrap_or("");
                continue;
            }
            '\\' => {
                let e = &rest[1..];
                let n = e.chars().next().map(char::len_utf8).unwrap_or(0);
                toks.push(NumTok::Text(e[..n].to_string()));
                rest = &e[n..];
                continue;
            }
            other => NumTok::Text(other.to_string()),
        };
        if tok == NumTok::Point && toks.contains(&NumTok::Point) {
            bail!(SyntaxError, "multiple decimal points");
        }
        toks.push(tok);
        rest = &rest[c.len_utf8()..];
    }
    Ok((toks, fill))
}

/// to_number(text, template): the number the template reads from the
/// text, position by position as PostgreSQL reads it. A digit position
/// takes a digit (anything else there is passed over); `.`/`D` takes the
/// decimal point if the text has one there; `,`/`G` a group separator; S,
/// MI, PL and SG a sign (a `-` before the first digit counts too); PR
/// angle brackets; literal text skips as many characters. Fractional
/// digits stop at the template's; more integer digits than it has are a
/// numeric field overflow. NULL for an empty template.
pub fn to_number(input: &str, fmt: &str) -> Result<Option<Numeric>> {
    let (toks, _) = number_template(fmt)?;
    if toks.is_empty() {
        return Ok(None);
    }
    for (tok, name) in
        [(NumTok::Exponent, "EEEE"), (NumTok::Roman(true), "RN"), (NumTok::Roman(false), "rn")]
    {
        if toks.contains(&tok) {
            bail!(FeatureNotSupported, "\"{name}\" not supported for input");
        }
    }
    let point_at = toks.iter().position(|t| *t == NumTok::Point);
    let digits_before = toks
        .iter()
        .take(point_at.unwrap_or(toks.len()))
        .filter(|t| matches!(t, NumTok::Digit(_)))
        .count();
    let mut chars: Vec<char> = input.chars().collect();
    let mut negative = false;
    // Angle brackets around the number (PR) make it negative.
    if toks.contains(&NumTok::Brackets) {
        if let Some(p) = chars.iter().position(|c| !c.is_whitespace()) {
            if chars[p] == '<' {
                negative = true;
                chars.remove(p);
            }
        }
    }
    let (mut int, mut frac) = (String::new(), String::new());
    let mut in_frac = false;
    let mut i = 0;
    for (k, tok) in toks.iter().enumerate() {
        let next = chars.get(i).copied();
        match tok {
            NumTok::Digit(_) => {
                while let Some(c) = chars.get(i).copied() {
                    if c.is_ascii_digit() {
                        if in_frac {
                            frac.push(c)
                        } else {
                            int.push(c)
                        }
                        i += 1;
                        break;
                    }
                    let started = !int.is_empty() || !frac.is_empty();
                    match c {
                        '-' if !started => {
                            negative = true;
                            i += 1;
                        }
                        '+' if !started => i += 1,
                        // The template's decimal point is still to come.
                        '.' if !in_frac && point_at.is_some_and(|p| p > k) => break,
                        _ => {
                            i += 1;
                            break;
                        }
                    }
                }
            }
            NumTok::Point => {
                if next == Some('.') {
                    in_frac = true;
                    i += 1;
                }
            }
            NumTok::Group => {
                if next == Some(',') {
                    i += 1;
                }
            }
            NumTok::Sign | NumTok::Minus | NumTok::Plus | NumTok::SignAt => match next {
                Some('-') => {
                    negative = true;
                    i += 1;
                }
                Some('+') => i += 1,
                _ => {}
            },
            NumTok::Brackets => {
                if next == Some('>') {
                    i += 1;
                }
            }
            NumTok::Currency => {
                if next.is_some_and(|c| !c.is_ascii_digit()) {
                    i += 1;
                }
            }
            NumTok::Ordinal(_) => i += 2,
            NumTok::Text(t) => i += t.chars().count(),
            NumTok::Exponent | NumTok::Roman(_) => {}
        }
    }
    if int.is_empty() && frac.is_empty() {
        let shown = if negative { "-" } else { " " };
        bail!(InvalidTextRepresentation, "invalid input syntax for type numeric: \"{shown}\"");
    }
    if int.len() > digits_before {
        bail!(NumericValueOutOfRange, "numeric field overflow");
    }
    let mut text = String::new();
    if negative {
        text.push('-');
    }
    text.push_str(if int.is_empty() { "0" } else { &int });
    if in_frac && !frac.is_empty() {
        text.push('.');
        text.push_str(&frac);
    }
    Ok(Some(Numeric::parse(&text)?))
}

/// to_char(number, template).
pub fn number_to_char(v: &Numeric, fmt: &str) -> Result<String> {
    let (toks, fill) = number_template(fmt)?;
    if let Some(upper) = toks.iter().find_map(|t| match t {
        NumTok::Roman(u) => Some(*u),
        _ => None,
    }) {
        return Ok(roman(v, upper, fill));
    }
    let point = toks.iter().position(|t| *t == NumTok::Point);
    let is_digit = |t: &NumTok| matches!(t, NumTok::Digit(_));
    let before = toks[..point.unwrap_or(toks.len())].iter().filter(|t| is_digit(t)).count();
    let after = point.map_or(0, |p| toks[p..].iter().filter(|t| is_digit(t)).count());
    let scientific = toks.contains(&NumTok::Exponent);
    // The number as digits: integer part, fraction (`after` digits), sign.
    let (int_digits, frac, exponent, negative) = if scientific {
        let f = v.to_f64();
        let s = format!("{:.*e}", after, f.abs());
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (i, fr) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let exp: i32 = exp.parse().unwrap_or(0);
        let e = format!("e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
        (i.to_string(), fr.to_string(), Some(e), f < 0.0)
    } else {
        let r = v.round(after as i64);
        let text = r.abs().to_string();
        let (i, fr) = text.split_once('.').unwrap_or((&text, ""));
        let mut fr = fr.to_string();
        while fr.len() < after {
            fr.push('0');
        }
        (i.to_string(), fr, None, !r.is_zero() && r.to_string().starts_with('-'))
    };
    let int_is_zero = int_digits.bytes().all(|b| b == b'0');
    let overflow = v.is_nan() || v.is_infinite() || (!int_is_zero && int_digits.len() > before);
    // The digits the integer positions show, right-aligned: a zero integer
    // part shows nothing where a decimal point follows.
    let shown: Vec<u8> = if scientific {
        int_digits.bytes().collect()
    } else if int_is_zero && point.is_some() {
        vec![]
    } else {
        int_digits.trim_start_matches('0').bytes().collect::<Vec<u8>>()
    };
    let shown = if shown.is_empty() && point.is_none() { vec![b'0'] } else { shown };
    let first_zero = toks
        .iter()
        .take(point.unwrap_or(toks.len()))
        .filter(|t| is_digit(t))
        .position(|t| *t == NumTok::Digit(true));
    // Trailing fraction digits FM drops: after the last `0` position.
    let last_zero_frac = point.map_or(0, |p| {
        toks[p..]
            .iter()
            .filter(|t| is_digit(t))
            .enumerate()
            .filter(|(_, t)| **t == NumTok::Digit(true))
            .map(|(i, _)| i + 1)
            .last()
            .unwrap_or(0)
    });
    let mut frac_keep = after;
    if fill {
        let bytes = frac.as_bytes();
        while frac_keep > last_zero_frac && bytes.get(frac_keep - 1) == Some(&b'0') {
            frac_keep -= 1;
        }
    }
    let explicit_sign =
        toks.iter().any(|t| matches!(t, NumTok::Sign | NumTok::Minus | NumTok::SignAt));
    let sign_first = toks
        .iter()
        .position(|t| *t == NumTok::Sign)
        .is_some_and(|s| toks.iter().position(is_digit).is_none_or(|d| s < d));
    // The anchored sign, written just before the number's first character.
    let mut anchored: Option<&str> = if toks.contains(&NumTok::Brackets) {
        Some(if negative { "<" } else { " " })
    } else if toks.contains(&NumTok::Sign) {
        sign_first.then_some(if negative { "-" } else { "+" })
    } else if !explicit_sign {
        Some(if negative { "-" } else { " " })
    } else {
        None
    };
    let blank = if fill { "" } else { " " };
    let mut out = String::new();
    let mut started = false;
    let mut int_pos = 0;
    let mut frac_pos = 0;
    let mut start = |out: &mut String, started: &mut bool| {
        if !*started {
            *started = true;
            if let Some(s) = anchored.take() {
                if !(fill && s == " ") {
                    out.push_str(s);
                }
            }
        }
    };
    for (i, t) in toks.iter().enumerate() {
        let in_fraction = point.is_some_and(|p| i > p);
        match t {
            NumTok::Digit(_) if !in_fraction => {
                let lead = before - int_pos;
                int_pos += 1;
                let digit = if overflow {
                    Some('#')
                } else if lead <= shown.len() {
                    Some(shown[shown.len() - lead] as char)
                } else if first_zero.is_some_and(|z| int_pos > z) {
                    Some('0')
                } else {
                    None
                };
                match digit {
                    Some(d) => {
                        start(&mut out, &mut started);
                        out.push(d);
                    }
                    None => out.push_str(blank),
                }
            }
            NumTok::Digit(_) => {
                frac_pos += 1;
                if overflow {
                    out.push('#');
                } else if frac_pos <= frac_keep {
                    out.push(frac.as_bytes().get(frac_pos - 1).map_or('0', |&b| b as char));
                }
            }
            NumTok::Point => {
                if fill && !started && int_is_zero && frac_keep == 0 && !overflow {
                    start(&mut out, &mut started);
                    out.push('0');
                }
                start(&mut out, &mut started);
                out.push('.');
            }
            NumTok::Group => {
                if started {
                    out.push(',');
                } else {
                    out.push_str(blank);
                }
            }
            NumTok::Sign if !sign_first => out.push(if negative { '-' } else { '+' }),
            NumTok::Sign => {}
            NumTok::Minus => out.push_str(if negative { "-" } else { blank }),
            NumTok::Plus => out.push_str(if negative { blank } else { "+" }),
            NumTok::SignAt => out.push(if negative { '-' } else { '+' }),
            NumTok::Brackets => out.push_str(if negative { ">" } else { blank }),
            NumTok::Currency => out.push_str(blank),
            NumTok::Ordinal(upper) => {
                if !negative && !overflow && !scientific {
                    let n = int_digits.parse::<i64>().unwrap_or(0);
                    out.push_str(super::datetime::ordinal(n, *upper));
                }
            }
            NumTok::Exponent => {
                if let Some(e) = &exponent {
                    out.push_str(if overflow { "e+##" } else { e });
                }
            }
            NumTok::Roman(_) => {}
            NumTok::Text(s) => out.push_str(s),
        }
    }
    Ok(out)
}

/// RN: roman numerals of the rounded value (1 to 3999), right-aligned in 15
/// places unless FM.
fn roman(v: &Numeric, upper: bool, fill: bool) -> String {
    let n = v.round(0).to_i64_round().unwrap_or(0);
    let text = if (1..=3999).contains(&n) {
        const UNITS: &[(i64, &str)] = &[
            (1000, "M"),
            (900, "CM"),
            (500, "D"),
            (400, "CD"),
            (100, "C"),
            (90, "XC"),
            (50, "L"),
            (40, "XL"),
            (10, "X"),
            (9, "IX"),
            (5, "V"),
            (4, "IV"),
            (1, "I"),
        ];
        let mut n = n;
        let mut s = String::new();
        for (value, letters) in UNITS {
            while n >= *value {
                s.push_str(letters);
                n -= value;
            }
        }
        s
    } else {
        "#".repeat(15)
    };
    let text = if upper { text } else { text.to_lowercase() };
    if fill {
        text
    } else {
        format!("{text:>15}")
    }
}

/// What a date template read from the input.
#[derive(Default)]
struct Parsed {
    year: Option<i64>,
    month: Option<i64>,
    day: Option<i64>,
    day_of_year: Option<i64>,
    julian: Option<i64>,
    hour: i64,
    /// Some(true) for PM, Some(false) for AM.
    pm: Option<bool>,
    twelve_hour: bool,
    minute: i64,
    second: i64,
    micros: i64,
    /// TZH: whether it was negative, and the hours.
    tz_hours: Option<(bool, i64)>,
    /// TZM.
    tz_minutes: i64,
    bc: bool,
}

/// The date and time patterns to_date and to_timestamp read, longest first
/// where one is a prefix of another.
const INPUT_PATTERNS: &[&str] = &[
    "HH24", "HH12", "HH", "MI", "SSSSS", "SSSS", "SS", "MS", "US", "A.M.", "P.M.", "AM", "PM",
    "B.C.", "A.D.", "BC", "AD", "IYYY", "YYYY", "Y,YYY", "YYY", "YY", "Y", "MONTH", "MON", "MM",
    "DAY", "DY", "IDDD", "DDD", "DD", "ID", "D", "IW", "WW", "W", "Q", "J", "TZH", "TZM", "TZ",
    "OF", "CC", "FX",
];

/// Reads `input` by `fmt`: the local date and time it names (microseconds
/// since 2000-01-01) and the offset it gave, if any.
fn parse_by_template(input: &str, fmt: &str) -> Result<(i64, Option<i64>)> {
    let mut p = Parsed::default();
    let mut s = input;
    let mut rest = fmt;
    let skip_blanks = |s: &mut &str| *s = s.trim_start();
    while !rest.is_empty() {
        if let Some(q) = rest.strip_prefix('"') {
            let end = q.find('"').unwrap_or(q.len());
            for _ in q[..end].chars() {
                let mut c = s.chars();
                c.next();
                s = c.as_str();
            }
            rest = q.get(end + 1..).unwrap_or("");
            continue;
        }
        let body = rest.strip_prefix("FM").or_else(|| rest.strip_prefix("fm")).unwrap_or(rest);
        let found = INPUT_PATTERNS
            .iter()
            .find(|pat| body.get(..pat.len()).is_some_and(|b| b.eq_ignore_ascii_case(pat)));
        let Some(&pat) = found else {
            let c = rest.chars().next().unwrap_or(' ');
            rest = &rest[c.len_utf8()..];
            if c.is_whitespace() {
                skip_blanks(&mut s);
            } else if !c.is_alphanumeric() {
                // A separator matches any one separator (or none).
                if let Some(x) = s.chars().next().filter(|x| !x.is_alphanumeric()) {
                    s = &s[x.len_utf8()..];
                }
            } else if let Some(x) = s.chars().next() {
                s = &s[x.len_utf8()..];
            }
            continue;
        };
        let mut after = &body[pat.len()..];
        for th in ["TH", "th"] {
            if let Some(a) = after.strip_prefix(th) {
                after = a;
            }
        }
        // A number field followed directly by another is read at its width.
        let next_is_field = INPUT_PATTERNS
            .iter()
            .any(|q| after.get(..q.len()).is_some_and(|b| b.eq_ignore_ascii_case(q)));
        rest = after;
        if pat.eq_ignore_ascii_case("FX") {
            continue;
        }
        skip_blanks(&mut s);
        if s.is_empty() {
            break;
        }
        let upper = pat.to_ascii_uppercase();
        let width = match upper.as_str() {
            "YYYY" | "IYYY" => 4,
            "YYY" | "DDD" | "IDDD" | "MS" => 3,
            "US" => 6,
            "SSSS" | "SSSSS" => 5,
            "Y" | "D" | "ID" | "W" | "Q" => 1,
            "J" => 7,
            _ => 2,
        };
        let number = |s: &mut &str, signed: bool| -> Result<(i64, usize)> {
            let neg = signed && s.starts_with('-');
            if signed && (s.starts_with('-') || s.starts_with('+')) {
                *s = &s[1..];
            }
            let limit = if next_is_field { width } else { usize::MAX };
            let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).take(limit).collect();
            if digits.is_empty() {
                let shown: String = s.chars().take(width).collect();
                return Err(err!(InvalidDatetimeFormat, "invalid value \"{shown}\" for \"{pat}\"")
                    .with_detail("Value must be an integer."));
            }
            *s = &s[digits.len()..];
            let n: i64 = digits.parse().map_err(|_| {
                err!(DatetimeFieldOverflow, "value for \"{pat}\" in source string is out of range")
            })?;
            Ok((if neg { -n } else { n }, digits.len()))
        };
        match upper.as_str() {
            "YYYY" | "IYYY" | "Y,YYY" => {
                let (mut y, _) = number(&mut s, false)?;
                if upper == "Y,YYY" {
                    if let Some(r) = s.strip_prefix(',') {
                        s = r;
                        let (low, _) = number(&mut s, false)?;
                        y = y * 1000 + low;
                    }
                }
                p.year = Some(y);
            }
            "YYY" | "YY" | "Y" => {
                let (y, n) = number(&mut s, false)?;
                // Fewer digits name the year nearest 2020, as in PostgreSQL.
                p.year = Some(match n {
                    1 => y + 2000,
                    2 if y < 70 => y + 2000,
                    2 => y + 1900,
                    3 if y < 100 => y + 2000,
                    3 => y + 1000,
                    _ => y,
                });
            }
            "MM" => p.month = Some(number(&mut s, false)?.0),
            "DD" => p.day = Some(number(&mut s, false)?.0),
            "DDD" | "IDDD" => p.day_of_year = Some(number(&mut s, false)?.0),
            "J" => p.julian = Some(number(&mut s, false)?.0),
            "HH" | "HH12" => {
                p.hour = number(&mut s, false)?.0;
                p.twelve_hour = true;
            }
            "HH24" => p.hour = number(&mut s, false)?.0,
            "MI" => p.minute = number(&mut s, false)?.0,
            "SS" => p.second = number(&mut s, false)?.0,
            "SSSS" | "SSSSS" => {
                let secs = number(&mut s, false)?.0;
                (p.hour, p.minute, p.second) = (secs / 3600, secs / 60 % 60, secs % 60);
            }
            "MS" | "US" => {
                // The digits are the fraction of a second: `SS.MS` reads
                // "12.3" as 300 milliseconds.
                let (n, digits) = number(&mut s, false)?;
                p.micros = n * 10i64.pow(6u32.saturating_sub(digits as u32));
            }
            "AM" | "PM" | "A.M." | "P.M." => {
                let word = s.get(..pat.len()).unwrap_or("").to_ascii_uppercase();
                let pm = match word.as_str() {
                    "AM" | "A.M." => false,
                    "PM" | "P.M." => true,
                    _ => bail!(InvalidDatetimeFormat, "invalid value \"{word}\" for \"{pat}\""),
                };
                s = &s[pat.len()..];
                p.pm = Some(pm);
            }
            "AD" | "BC" | "A.D." | "B.C." => {
                let word = s.get(..pat.len()).unwrap_or("").to_ascii_uppercase();
                p.bc = word.starts_with('B');
                s = s.get(pat.len()..).unwrap_or("");
            }
            "MONTH" | "MON" => {
                let lower = s.to_ascii_lowercase();
                let found = datetime::MONTHS.iter().enumerate().find_map(|(i, m)| {
                    let full = lower.starts_with(m).then_some(m.len());
                    full.or_else(|| lower.starts_with(&m[..3]).then_some(3)).map(|n| (i, n))
                });
                let Some((i, n)) = found else {
                    let shown: String = s.chars().take_while(|c| c.is_alphabetic()).collect();
                    bail!(InvalidDatetimeFormat, "invalid value \"{shown}\" for \"{pat}\"");
                };
                p.month = Some(i as i64 + 1);
                s = &s[n..];
            }
            "DAY" | "DY" => {
                let n = s.chars().take_while(|c| c.is_alphabetic()).map(char::len_utf8).sum();
                s = &s[n..];
            }
            "TZH" => {
                let neg = s.starts_with('-');
                let (h, _) = number(&mut s, true)?;
                p.tz_hours = Some((neg, h.abs()));
            }
            "TZM" => p.tz_minutes = number(&mut s, false)?.0,
            "TZ" | "OF" => {
                bail!(
                    FeatureNotSupported,
                    "formatting field \"{pat}\" is only supported in to_char"
                )
            }
            // Week, weekday, quarter and century fields do not fix a date.
            _ => {
                number(&mut s, false)?;
            }
        }
    }
    let offset = p.tz_hours.map(|(neg, h)| {
        let east = h * 3600 + p.tz_minutes * 60;
        if neg {
            -east
        } else {
            east
        }
    });
    local_time(&p, input).map(|t| (t, offset))
}

/// The local date and time `p` names, checked.
fn local_time(p: &Parsed, input: &str) -> Result<i64> {
    let out_of_range =
        || err!(DatetimeFieldOverflow, "date/time field value out of range: \"{input}\"");
    // No year field leaves year 0, which is 1 BC, as in PostgreSQL.
    let mut year = p.year.unwrap_or(0);
    if p.bc {
        year = 1 - year;
    }
    let days = if let Some(j) = p.julian {
        j - 2_451_545
    } else if let (Some(doy), None, None) = (p.day_of_year, p.month, p.day) {
        if !(1..=366).contains(&doy) {
            return Err(out_of_range());
        }
        datetime::days_from_civil(year, 1, 1) + doy - 1
    } else {
        let (month, day) = (p.month.unwrap_or(1), p.day.unwrap_or(1));
        if !(1..=12).contains(&month)
            || day < 1
            || day > datetime::days_in_month(year, month as u32) as i64
        {
            return Err(out_of_range());
        }
        datetime::days_from_civil(year, month as u32, day as u32)
    };
    let mut hour = p.hour;
    if p.twelve_hour || p.pm.is_some() {
        if p.twelve_hour && !(1..=12).contains(&hour) {
            return Err(err!(
                InvalidDatetimeFormat,
                "hour \"{hour}\" is invalid for the 12-hour clock"
            )
            .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        hour %= 12;
        if p.pm == Some(true) {
            hour += 12;
        }
    }
    if !(0..=24).contains(&hour) || !(0..=59).contains(&p.minute) || !(0..=60).contains(&p.second) {
        return Err(out_of_range());
    }
    let secs = hour * 3600 + p.minute * 60 + p.second;
    Ok(days * USECS_PER_DAY + secs * USECS_PER_SEC + p.micros)
}

/// to_date(text, template).
pub fn to_date(input: &str, fmt: &str) -> Result<i32> {
    let (t, _) = parse_by_template(input, fmt)?;
    Ok(t.div_euclid(USECS_PER_DAY) as i32)
}

/// to_timestamp(text, template): the local time it names in `zone`, or at
/// the offset the input gives with TZH/TZM.
pub fn to_timestamp(input: &str, fmt: &str, zone: &Zone) -> Result<i64> {
    let (t, offset) = parse_by_template(input, fmt)?;
    Ok(match offset {
        Some(east) => t - east * USECS_PER_SEC,
        None => zone.local_to_utc(t),
    })
}
