//! Dates and timestamps: parsing, formatting, arithmetic and the clock.
//!
//! Values are counted from PostgreSQL's epoch, 2000-01-01 00:00:00 UTC:
//! timestamps in microseconds, dates in days, using the proleptic Gregorian
//! calendar with astronomical year numbering inside (year 0 is 1 BC) and the
//! ` BC` suffix outside, exactly as PostgreSQL does. The calendar arithmetic is
//! done here (Howard Hinnant's civil-date algorithms) rather than with chrono
//! because PostgreSQL's ranges are wider than chrono's: dates run from
//! 4714-11-24 BC to 5874897-12-31 and timestamps to 294276-12-31.
//!
//! `infinity` and `-infinity` are the extreme values of the representation
//! (`i32::MAX`/`i32::MIN` for dates, `i64::MAX`/`i64::MIN` for timestamps),
//! as in PostgreSQL, so they sort correctly with no special cases.
//!
//! The session time zone is always UTC: timestamptz prints with `+00`, and a
//! zone in the input is either an offset (`+01`, `-05:30`, `+0100`) or one of
//! `Z`, `UTC`, `GMT`. Named zones (`Europe/Paris`, `PST`) are not supported
//! and are rejected as invalid input. Input styles accepted: ISO `Y-M-D`
//! (also with `/` or `.`), `YYYYMMDD`, US `M-D-Y` when the first field has at
//! most two digits (DateStyle `ISO, MDY`), month names (`Jan 2 2024`,
//! `2 January 2024`, `2024-Jan-02`, with an optional weekday), an optional
//! `T` or blanks before the time, AM/PM, optional `BC`/`AD`, and the special
//! words `epoch`, `infinity`, `-infinity`, `now`, `today`, `tomorrow` and
//! `yesterday`. Julian day input (`J2451545`) and `allballs` are not
//! supported.

use crate::text::TextOut;
use crate::{err, ErrorReport, Result};

/// Microseconds per day.
pub const USECS_PER_DAY: i64 = 86_400_000_000;

/// Microseconds per second.
pub const USECS_PER_SEC: i64 = 1_000_000;

/// The date `-infinity` (PostgreSQL's DATEVAL_NOBEGIN).
pub const DATE_NEG_INFINITY: i32 = i32::MIN;

/// The date `infinity` (PostgreSQL's DATEVAL_NOEND).
pub const DATE_POS_INFINITY: i32 = i32::MAX;

/// The timestamp `-infinity` (PostgreSQL's DT_NOBEGIN).
pub const TS_NEG_INFINITY: i64 = i64::MIN;

/// The timestamp `infinity` (PostgreSQL's DT_NOEND).
pub const TS_POS_INFINITY: i64 = i64::MAX;

/// Days from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_DAYS: i64 = 10_957;

/// First valid day: 4714-11-24 BC (Julian day 0).
const MIN_DAY: i64 = -2_451_545;

/// First day past the date range: 5874898-01-01.
const DATE_END_DAY: i64 = 2_147_483_494 - 2_451_545;

/// First day past the timestamp range: 294277-01-01.
const TS_END_DAY: i64 = 109_203_528 - 2_451_545;

/// Smallest finite timestamp (4714-11-24 00:00:00 BC).
pub const MIN_TIMESTAMP: i64 = MIN_DAY * USECS_PER_DAY;

/// First timestamp past the finite range (294277-01-01 00:00:00).
pub const END_TIMESTAMP: i64 = TS_END_DAY * USECS_PER_DAY;

/// Largest time zone displacement PostgreSQL accepts, in seconds (15:59:59).
const MAX_TZ_SECS: i64 = 15 * 3600 + 59 * 60 + 59;

/// Now, in microseconds since 2000-01-01 UTC.
pub fn now_micros() -> i64 {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    unix - UNIX_TO_PG_DAYS * USECS_PER_DAY
}

/// Days since 2000-01-01 of a proleptic Gregorian date (year 0 = 1 BC).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 - UNIX_TO_PG_DAYS
}

/// The (year, month, day) of a day count since 2000-01-01 (year 0 = 1 BC).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + UNIX_TO_PG_DAYS + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

pub(crate) fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

/// Number of days in `month` of `year`.
pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

// ---------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------

/// Appends `n` in decimal, zero-padded to at least `width` digits.
pub(crate) fn push_num<O: TextOut + ?Sized>(out: &mut O, n: u64, width: usize) {
    let mut tmp = [b'0'; 20];
    let mut pos = tmp.len();
    let mut v = n;
    loop {
        pos -= 1;
        tmp[pos] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let len = tmp.len() - pos;
    for _ in len..width {
        out.put(b"0");
    }
    out.put(&tmp[pos..]);
}

/// Appends seconds (two digits) and the fraction of `micros` (microseconds
/// within a minute), with the fraction's trailing zeros trimmed.
pub(crate) fn push_seconds<O: TextOut + ?Sized>(out: &mut O, micros: u64) {
    push_num(out, micros / USECS_PER_SEC as u64, 2);
    let mut frac = micros % USECS_PER_SEC as u64;
    if frac != 0 {
        let mut width = 6;
        while frac.is_multiple_of(10) {
            frac /= 10;
            width -= 1;
        }
        out.put(b".");
        push_num(out, frac, width);
    }
}

/// Appends `YYYY-MM-DD` and returns whether the year is BC.
fn push_ymd<O: TextOut + ?Sized>(days: i64, out: &mut O) -> bool {
    let (y, m, d) = civil_from_days(days);
    let bc = y <= 0;
    push_num(out, if bc { (1 - y) as u64 } else { y as u64 }, 4);
    out.put(b"-");
    push_num(out, m as u64, 2);
    out.put(b"-");
    push_num(out, d as u64, 2);
    bc
}

/// Appends a date as PostgreSQL prints it (`2024-01-02`, `0044-03-15 BC`,
/// `infinity`).
pub fn write_date<O: TextOut + ?Sized>(days: i32, out: &mut O) {
    match days {
        DATE_POS_INFINITY => out.put(b"infinity"),
        DATE_NEG_INFINITY => out.put(b"-infinity"),
        _ => {
            if push_ymd(days as i64, out) {
                out.put(b" BC");
            }
        }
    }
}

/// Formats days since 2000-01-01 as PostgreSQL's date output does.
pub fn format_date(days: i32) -> String {
    let mut out = Vec::with_capacity(16);
    write_date(days, &mut out);
    String::from_utf8(out).expect("date output is ASCII")
}

/// Appends a timestamp as PostgreSQL prints it: `YYYY-MM-DD HH:MM:SS` with
/// the fraction's trailing zeros trimmed, then `+00` for timestamptz (the
/// session zone is UTC) and ` BC` for years before 1.
pub fn write_timestamp<O: TextOut + ?Sized>(micros: i64, tz: bool, out: &mut O) {
    write_timestamp_in(micros, tz.then(crate::Zone::utc_ref), out)
}

/// Writes a timestamp, or with a zone a timestamptz as local time in that
/// zone followed by its offset there (`2024-07-01 08:00:00-04`).
pub fn write_timestamp_in<O: TextOut + ?Sized>(
    micros: i64,
    zone: Option<&crate::Zone>,
    out: &mut O,
) {
    match micros {
        TS_POS_INFINITY => return out.put(b"infinity"),
        TS_NEG_INFINITY => return out.put(b"-infinity"),
        _ => {}
    }
    let offset = zone.map(|z| z.offset_at(micros));
    let micros = micros.saturating_add(offset.unwrap_or(0) as i64 * USECS_PER_SEC);
    let days = micros.div_euclid(USECS_PER_DAY);
    let tod = micros.rem_euclid(USECS_PER_DAY);
    let bc = push_ymd(days, out);
    out.put(b" ");
    let secs = tod / USECS_PER_SEC;
    push_num(out, (secs / 3600) as u64, 2);
    out.put(b":");
    push_num(out, (secs / 60 % 60) as u64, 2);
    out.put(b":");
    push_seconds(out, (tod % 60_000_000) as u64);
    if let Some(east) = offset {
        if east == 0 {
            out.put(b"+00");
        } else {
            let mut o = String::new();
            crate::zone::write_offset(east, &mut o);
            out.put(o.as_bytes());
        }
    }
    if bc {
        out.put(b" BC");
    }
}

/// Formats microseconds since 2000 as PostgreSQL's timestamp output does.
pub fn format_timestamp(micros: i64, tz: bool) -> String {
    let mut out = Vec::with_capacity(32);
    write_timestamp(micros, tz, &mut out);
    String::from_utf8(out).expect("timestamp output is ASCII")
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// Why a date/time string was rejected; the caller words the message for
/// its type, as PostgreSQL's DateTimeParseError does.
#[derive(Debug, PartialEq)]
pub(crate) enum Bad {
    /// 22007 invalid input syntax.
    Syntax,
    /// 22008 a field (month 13, hour 25, year 0) is out of range.
    Field,
    /// 22009 the zone offset exceeds 15:59:59.
    Zone,
    /// 22023 a zone name the time zone database does not have.
    UnknownZone(String),
}

/// A zone written in date/time input.
#[derive(Debug, Clone)]
pub(crate) enum InputZone {
    /// A fixed offset in seconds east of UTC (`+05:30`, `Z`, `PST`).
    Offset(i64),
    /// A zone of the time zone database (`Europe/Paris`): its offset
    /// depends on the date.
    Named(std::sync::Arc<crate::Zone>),
}

impl PartialEq for InputZone {
    fn eq(&self, other: &InputZone) -> bool {
        match (self, other) {
            (InputZone::Offset(a), InputZone::Offset(b)) => a == b,
            (InputZone::Named(a), InputZone::Named(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// The time zone abbreviations date/time input accepts, lower case, with
/// their offsets in seconds east: PostgreSQL's default set
/// (pg_timezone_abbrevs). Abbreviations PostgreSQL defines through a zone
/// (MSK, ...) take the offset they have today.
const ABBREVIATIONS: &[(&str, i64)] = &[
    ("acdt", 37800),
    ("acsst", 37800),
    ("acst", 34200),
    ("act", -18000),
    ("acwst", 31500),
    ("adt", -10800),
    ("aedt", 39600),
    ("aesst", 39600),
    ("aest", 36000),
    ("aft", 16200),
    ("akdt", -28800),
    ("akst", -32400),
    ("almst", 25200),
    ("almt", 21600),
    ("amst", 14400),
    ("amt", -14400),
    ("anast", 43200),
    ("anat", 43200),
    ("arst", -10800),
    ("art", -10800),
    ("ast", -14400),
    ("awsst", 32400),
    ("awst", 28800),
    ("azost", 0),
    ("azot", -3600),
    ("azst", 14400),
    ("azt", 14400),
    ("bdst", 7200),
    ("bdt", 21600),
    ("bnt", 28800),
    ("bort", 28800),
    ("bot", -14400),
    ("bra", -10800),
    ("brst", -7200),
    ("brt", -10800),
    ("bst", 3600),
    ("btt", 21600),
    ("cadt", 37800),
    ("cast", 34200),
    ("cct", 28800),
    ("cdt", -18000),
    ("cest", 7200),
    ("cet", 3600),
    ("cetdst", 7200),
    ("chadt", 49500),
    ("chast", 45900),
    ("chut", 36000),
    ("ckt", -36000),
    ("clst", -10800),
    ("clt", -10800),
    ("cot", -18000),
    ("cst", -21600),
    ("cxt", 25200),
    ("davt", 25200),
    ("ddut", 36000),
    ("easst", -18000),
    ("east", -18000),
    ("eat", 10800),
    ("edt", -14400),
    ("eest", 10800),
    ("eet", 7200),
    ("eetdst", 10800),
    ("egst", 0),
    ("egt", -3600),
    ("est", -18000),
    ("fet", 10800),
    ("fjst", 46800),
    ("fjt", 43200),
    ("fkst", -10800),
    ("fkt", -10800),
    ("fnst", -3600),
    ("fnt", -7200),
    ("galt", -21600),
    ("gamt", -32400),
    ("gest", 14400),
    ("get", 14400),
    ("gft", -10800),
    ("gilt", 43200),
    ("gmt", 0),
    ("gyt", -14400),
    ("hkt", 28800),
    ("hst", -36000),
    ("ict", 25200),
    ("idt", 10800),
    ("iot", 21600),
    ("irkst", 28800),
    ("irkt", 28800),
    ("irt", 12600),
    ("ist", 7200),
    ("jayt", 32400),
    ("jst", 32400),
    ("kdt", 36000),
    ("kgst", 21600),
    ("kgt", 21600),
    ("kost", 39600),
    ("krast", 25200),
    ("krat", 25200),
    ("kst", 32400),
    ("lhdt", 39600),
    ("lhst", 37800),
    ("ligt", 36000),
    ("lint", 50400),
    ("lkt", 19800),
    ("magst", 39600),
    ("magt", 39600),
    ("mart", -34200),
    ("mawt", 18000),
    ("mdt", -21600),
    ("mest", 7200),
    ("mesz", 7200),
    ("met", 3600),
    ("metdst", 7200),
    ("mez", 3600),
    ("mht", 43200),
    ("mmt", 23400),
    ("mpt", 36000),
    ("msd", 14400),
    ("msk", 10800),
    ("mst", -25200),
    ("must", 18000),
    ("mut", 14400),
    ("mvt", 18000),
    ("myt", 28800),
    ("ndt", -9000),
    ("nft", -12600),
    ("novst", 25200),
    ("novt", 25200),
    ("npt", 20700),
    ("nst", -12600),
    ("nut", -39600),
    ("nzdt", 46800),
    ("nzst", 43200),
    ("nzt", 43200),
    ("omsst", 21600),
    ("omst", 21600),
    ("pdt", -25200),
    ("pet", -18000),
    ("petst", 43200),
    ("pett", 43200),
    ("pgt", 36000),
    ("pht", 28800),
    ("pkst", 21600),
    ("pkt", 18000),
    ("pmdt", -7200),
    ("pmst", -10800),
    ("pont", 39600),
    ("pst", -28800),
    ("pwt", 32400),
    ("pyst", -10800),
    ("pyt", -10800),
    ("ret", 14400),
    ("sadt", 37800),
    ("sast", 7200),
    ("sct", 14400),
    ("sgt", 28800),
    ("taht", -36000),
    ("tft", 18000),
    ("tjt", 18000),
    ("tkt", 46800),
    ("tmt", 18000),
    ("tot", 46800),
    ("trut", 36000),
    ("tvt", 43200),
    ("uct", 0),
    ("ulast", 32400),
    ("ulat", 28800),
    ("ut", 0),
    ("utc", 0),
    ("uyst", -7200),
    ("uyt", -10800),
    ("uzst", 21600),
    ("uzt", 18000),
    ("vet", -14400),
    ("vlast", 36000),
    ("vlat", 36000),
    ("volt", 10800),
    ("vut", 39600),
    ("wadt", 28800),
    ("wakt", 43200),
    ("wast", 25200),
    ("wat", 3600),
    ("wdt", 32400),
    ("wet", 0),
    ("wetdst", 3600),
    ("wft", 43200),
    ("wgst", -7200),
    ("wgt", -10800),
    ("xjt", 21600),
    ("yakst", 32400),
    ("yakt", 32400),
    ("yapt", 36000),
    ("yekst", 21600),
    ("yekt", 18000),
    ("z", 0),
    ("zulu", 0),
];

/// The offset of a zone abbreviation (`PST`, `cest`).
pub fn abbreviation(word: &str) -> Option<i64> {
    let lower = word.bytes().map(|b| b.to_ascii_lowercase());
    let found = ABBREVIATIONS.binary_search_by(|(a, _)| a.bytes().cmp(lower.clone()));
    found.ok().map(|i| ABBREVIATIONS[i].1)
}

/// A parsed date/time string before it is converted to a type.
#[derive(Debug, PartialEq)]
enum Parsed {
    /// `infinity` or `-infinity` (true = positive).
    Infinity(bool),
    /// A finite moment: days since 2000-01-01, microseconds into the day (may
    /// be 24:00:00 or include a leap second), and the zone offset in seconds
    /// east of UTC if one was given.
    At { days: i64, time: i64, zone: Option<InputZone> },
}

fn now_parts(day_offset: i64, date_only: bool) -> Parsed {
    let now = now_micros();
    let days = now.div_euclid(USECS_PER_DAY) + day_offset;
    let time = if date_only { 0 } else { now.rem_euclid(USECS_PER_DAY) };
    Parsed::At { days, time, zone: Some(InputZone::Offset(0)) }
}

fn special(lower: &str) -> Option<Parsed> {
    Some(match lower {
        "infinity" | "+infinity" => Parsed::Infinity(true),
        "-infinity" => Parsed::Infinity(false),
        "epoch" => Parsed::At { days: -UNIX_TO_PG_DAYS, time: 0, zone: Some(InputZone::Offset(0)) },
        "now" => now_parts(0, false),
        "today" => now_parts(0, true),
        "tomorrow" => now_parts(1, true),
        "yesterday" => now_parts(-1, true),
        _ => return None,
    })
}

/// Parses a run of ASCII digits (at most 9, so it cannot overflow).
fn number(s: &str) -> std::result::Result<i64, Bad> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Bad::Syntax);
    }
    if s.len() > 9 {
        return Err(Bad::Field);
    }
    s.parse().map_err(|_| Bad::Syntax)
}

/// Strips a trailing `BC`/`AD` era marker; returns the rest and whether BC.
fn split_era(t: &str) -> (&str, bool) {
    let b = t.as_bytes();
    let n = b.len();
    if n > 2 && (b[n - 3].is_ascii_digit() || b[n - 3].is_ascii_whitespace()) {
        let tail = &t[n - 2..];
        if tail.eq_ignore_ascii_case("bc") {
            return (t[..n - 2].trim_end(), true);
        }
        if tail.eq_ignore_ascii_case("ad") {
            return (t[..n - 2].trim_end(), false);
        }
    }
    (t, false)
}

/// Parses the date token into (year, month, day), year as written.
fn parse_ymd(tok: &str) -> std::result::Result<(i64, i64, i64), Bad> {
    if tok.len() == 8 && tok.bytes().all(|b| b.is_ascii_digit()) {
        return Ok((number(&tok[..4])?, number(&tok[4..6])?, number(&tok[6..])?));
    }
    let sep = tok.bytes().find(|b| matches!(b, b'-' | b'/' | b'.')).ok_or(Bad::Syntax)?;
    let mut fields = tok.split(sep as char);
    let (Some(a), Some(b), Some(c), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(Bad::Syntax);
    };
    let (na, nb, nc) = (number(a)?, number(b)?, number(c)?);
    if a.len() >= 3 {
        return Ok((na, nb, nc));
    }
    // DateStyle MDY: month, day, year; a two-digit year means 1970..2069.
    let year = match c.len() {
        1 | 2 if nc < 70 => nc + 2000,
        1 | 2 => nc + 1900,
        _ => nc,
    };
    Ok((year, na, nb))
}

/// Parses `H:M[:S[.frac]]`; returns microseconds and the unparsed rest.
pub(crate) fn parse_time(s: &str) -> std::result::Result<(i64, &str), Bad> {
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.')).unwrap_or(s.len());
    let (clock, rest) = s.split_at(end);
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let mut parts = hms.split(':');
    let h = number(parts.next().unwrap_or(""))?;
    let m = number(parts.next().ok_or(Bad::Syntax)?)?;
    let sec = parts.next().map(number).transpose()?.unwrap_or(0);
    if parts.next().is_some() || (!frac.is_empty() && !frac.bytes().all(|b| b.is_ascii_digit())) {
        return Err(Bad::Syntax);
    }
    if frac.contains('.') || (!frac.is_empty() && hms.matches(':').count() < 2) {
        return Err(Bad::Syntax);
    }
    // Round the fraction to microseconds (half away from zero on the 7th digit).
    let mut us = 0i64;
    for (i, b) in frac.bytes().chain(std::iter::repeat(b'0')).take(7).enumerate() {
        let d = (b - b'0') as i64;
        if i < 6 {
            us = us * 10 + d;
        } else if d >= 5 {
            us += 1;
        }
    }
    if !(0..=24).contains(&h) || !(0..60).contains(&m) || !(0..=60).contains(&sec) {
        return Err(Bad::Field);
    }
    let total = ((h * 60 + m) * 60 + sec) * USECS_PER_SEC + us;
    if total > USECS_PER_DAY {
        return Err(Bad::Field);
    }
    Ok((total, rest))
}

/// Parses a zone suffix: `Z`, `UTC`, `GMT`, or a numeric offset.
pub(crate) fn parse_zone(z: &str) -> std::result::Result<Option<InputZone>, Bad> {
    let z = z.trim();
    if z.is_empty() {
        return Ok(None);
    }
    if ["z", "utc", "gmt", "ut", "zulu"].iter().any(|n| z.eq_ignore_ascii_case(n)) {
        return Ok(Some(InputZone::Offset(0)));
    }
    if z.starts_with(|c: char| c.is_ascii_alphabetic()) {
        if let Some(east) = abbreviation(z) {
            return Ok(Some(InputZone::Offset(east)));
        }
        // A zone name: one with a `/` must be in the database.
        return match crate::Zone::lookup(z) {
            Ok(zone) => Ok(Some(InputZone::Named(zone))),
            Err(_) if z.contains('/') => Err(Bad::UnknownZone(z.to_ascii_lowercase())),
            Err(_) => Err(Bad::Syntax),
        };
    }
    let sign = match z.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return Err(Bad::Syntax),
    };
    let body = &z[1..];
    let (h, m, s) = if body.contains(':') {
        let mut p = body.split(':');
        let h = number(p.next().unwrap_or(""))?;
        let m = p.next().map(number).transpose()?.unwrap_or(0);
        let s = p.next().map(number).transpose()?.unwrap_or(0);
        if p.next().is_some() {
            return Err(Bad::Syntax);
        }
        (h, m, s)
    } else {
        let n = number(body)?;
        match body.len() {
            1 | 2 => (n, 0, 0),
            3 | 4 => (n / 100, n % 100, 0),
            5 | 6 => (n / 10000, n / 100 % 100, n % 100),
            _ => return Err(Bad::Syntax),
        }
    };
    if m >= 60 || s >= 60 {
        return Err(Bad::Field);
    }
    let secs = h * 3600 + m * 60 + s;
    if secs > MAX_TZ_SECS {
        return Err(Bad::Zone);
    }
    Ok(Some(InputZone::Offset(sign * secs)))
}

/// Month names, lower case.
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Weekday names from Sunday, lower case.
pub const WEEKDAYS: [&str; 7] =
    ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

/// The month a (lower-case) name or abbreviation of 3+ letters stands for.
fn month_number(word: &str) -> Option<i64> {
    if word.len() < 3 {
        return None;
    }
    MONTHS.iter().position(|m| m.starts_with(word)).map(|i| i as i64 + 1)
}

/// Dates written with a month name (`Jan 2 2024`, `2 January 2024`,
/// `January 2, 2024 10:00`, `2024-Jan-02`, `Tue Jan 02 2024`) or with an
/// AM/PM time: returns year as written, month, day, time of day and zone.
type Textual = (i64, i64, i64, i64, Option<InputZone>);
fn parse_textual(t: &str) -> std::result::Result<Textual, Bad> {
    let (mut month, mut nums, mut time, mut zone) = (None, Vec::new(), None, None);
    let mut ymd = None;
    for tok in t.split(|c: char| c.is_ascii_whitespace() || c == ',').filter(|x| !x.is_empty()) {
        let lower = tok.to_ascii_lowercase();
        if tok.contains(':') && time.is_none() {
            let (tm, rest) = parse_time(tok)?;
            time = Some(tm);
            zone = parse_zone(rest)?;
            continue;
        }
        if let (Some(tm), "am" | "pm") = (time, lower.as_str()) {
            let hour = tm / (3600 * USECS_PER_SEC);
            if !(1..=12).contains(&hour) {
                return Err(Bad::Field);
            }
            let shift = match (lower.as_str(), hour) {
                ("am", 12) => -12,
                ("pm", h) if h < 12 => 12,
                _ => 0,
            };
            time = Some(tm + shift * 3600 * USECS_PER_SEC);
            continue;
        }
        if ymd.is_none() && tok.bytes().all(|b| b.is_ascii_digit() || b == b'-' || b == b'/') {
            if let Ok(parts) = parse_ymd(tok) {
                ymd = Some(parts);
                continue;
            }
        }
        let zone_word = ["z", "utc", "gmt", "ut", "zulu"].contains(&lower.as_str())
            || abbreviation(&lower).is_some()
            || (tok.starts_with(|c: char| c.is_ascii_alphabetic()) && tok.contains('/'));
        if time.is_some() && (zone_word || tok.starts_with(['+', '-'])) {
            zone = parse_zone(tok)?;
            continue;
        }
        for part in lower.split(['-', '/', '.']) {
            if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                nums.push(part.to_string());
            } else if let Some(m) = month_number(part) {
                if month.replace(m).is_some() {
                    return Err(Bad::Syntax);
                }
            } else if part.len() < 3 || !WEEKDAYS.iter().any(|w| w.starts_with(part)) {
                return Err(Bad::Syntax);
            }
        }
    }
    if let (Some((y, m, d)), None, []) = (ymd, month, nums.as_slice()) {
        return Ok((y, m, d, time.unwrap_or(0), zone));
    }
    let (Some(month), [a, b]) = (month, nums.as_slice()) else { return Err(Bad::Syntax) };
    let (y, d) = if a.len() >= 3 { (a, b) } else { (b, a) };
    let year = match (y.len(), number(y)?) {
        (1 | 2, n) if n < 70 => n + 2000,
        (1 | 2, n) => n + 1900,
        (_, n) => n,
    };
    Ok((year, month, number(d)?, time.unwrap_or(0), zone))
}

/// Parses any accepted date/time string into its parts.
fn parse_parts(s: &str, date_only: bool) -> std::result::Result<Parsed, Bad> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    if let Some(p) = special(&lower) {
        return Ok(p);
    }
    let (t, bc) = split_era(t);
    let split = t.find(|c: char| c.is_ascii_whitespace() || c == 'T' || c == 't');
    let (date_tok, rest) = match split {
        Some(i) => (&t[..i], t[i + 1..].trim_start()),
        None => (t, ""),
    };
    let iso = || match parse_ymd(date_tok) {
        Ok((year, month, day)) if rest.is_empty() => Ok((year, month, day, 0, None)),
        Ok((year, month, day)) => {
            let (time, zone_text) = parse_time(rest)?;
            Ok((year, month, day, time, parse_zone(zone_text)?))
        }
        Err(e) => Err(e),
    };
    let (mut year, month, day, time, zone) = match iso() {
        Ok(parts) => parts,
        Err(Bad::Syntax) if t.bytes().any(|b| b.is_ascii_alphabetic()) => parse_textual(t)?,
        Err(e) => return Err(e),
    };
    if year == 0 {
        return Err(Bad::Field);
    }
    if bc {
        year = 1 - year;
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month as u32) as i64 {
        return Err(Bad::Field);
    }
    let days = days_from_civil(year, month as u32, day as u32);
    let time = if date_only { 0 } else { time };
    Ok(Parsed::At { days, time, zone })
}

pub(crate) fn bad_input(bad: Bad, ty: &str, s: &str) -> ErrorReport {
    match bad {
        Bad::Syntax => err!(InvalidDatetimeFormat, "invalid input syntax for type {ty}: \"{s}\""),
        Bad::Field => err!(DatetimeFieldOverflow, "date/time field value out of range: \"{s}\""),
        Bad::Zone => {
            err!(InvalidTimeZoneDisplacementValue, "time zone displacement out of range: \"{s}\"")
        }
        Bad::UnknownZone(name) => {
            err!(InvalidParameterValue, "time zone \"{name}\" not recognized")
        }
    }
}

/// Parses date input (ISO `YYYY-MM-DD` and the other styles listed in the
/// module docs) into days since 2000-01-01. A time part is checked and
/// ignored, as PostgreSQL's date_in does.
pub fn parse_date(s: &str) -> Result<i32> {
    let days = match parse_parts(s, true).map_err(|b| bad_input(b, "date", s))? {
        Parsed::Infinity(true) => return Ok(DATE_POS_INFINITY),
        Parsed::Infinity(false) => return Ok(DATE_NEG_INFINITY),
        Parsed::At { days, .. } => days,
    };
    if !(MIN_DAY..DATE_END_DAY).contains(&days) {
        return Err(err!(DatetimeFieldOverflow, "date out of range: \"{s}\""));
    }
    Ok(days as i32)
}

/// Parses timestamp input; with `tz` a zone offset is applied (the session
/// zone, UTC, when none is given), without it any zone is ignored, as in
/// PostgreSQL.
pub fn parse_timestamp(s: &str, tz: bool) -> Result<i64> {
    parse_timestamp_in(s, tz, crate::Zone::utc_ref())
}

/// Parses timestamp input; with `tz` a time without an offset is local
/// time in `session`.
pub fn parse_timestamp_in(s: &str, tz: bool, session: &crate::Zone) -> Result<i64> {
    let ty = if tz { "timestamp with time zone" } else { "timestamp" };
    let (days, time, zone) = match parse_parts(s, false).map_err(|b| bad_input(b, ty, s))? {
        Parsed::Infinity(true) => return Ok(TS_POS_INFINITY),
        Parsed::Infinity(false) => return Ok(TS_NEG_INFINITY),
        Parsed::At { days, time, zone } => (days, time, zone),
    };
    let local = days as i128 * USECS_PER_DAY as i128 + time as i128;
    let clamped = || local.clamp(MIN_TIMESTAMP as i128, END_TIMESTAMP as i128) as i64;
    let offset = match (tz, zone) {
        (false, _) => 0,
        (true, Some(InputZone::Offset(o))) => o,
        (true, Some(InputZone::Named(z))) => z.offset_for_local(clamped()) as i64,
        (true, None) => session.offset_for_local(clamped()) as i64,
    };
    let micros = local - offset as i128 * USECS_PER_SEC as i128;
    if !(MIN_TIMESTAMP as i128..END_TIMESTAMP as i128).contains(&micros) {
        return Err(err!(DatetimeFieldOverflow, "timestamp out of range: \"{s}\""));
    }
    Ok(micros as i64)
}

// ---------------------------------------------------------------------------
// Arithmetic and conversions
// ---------------------------------------------------------------------------

/// True unless the date is `infinity` or `-infinity`.
pub fn date_is_finite(d: i32) -> bool {
    d != DATE_POS_INFINITY && d != DATE_NEG_INFINITY
}

/// True unless the timestamp is `infinity` or `-infinity`.
pub fn timestamp_is_finite(t: i64) -> bool {
    t != TS_POS_INFINITY && t != TS_NEG_INFINITY
}

/// `date + integer` (and `date - integer` with a negated count): infinite
/// dates stay infinite; leaving the date range is 22008 "date out of range".
pub fn date_add_days(d: i32, n: i64) -> Result<i32> {
    if !date_is_finite(d) {
        return Ok(d);
    }
    let r = d as i64 + n;
    if !(MIN_DAY..DATE_END_DAY).contains(&r) {
        return Err(err!(DatetimeFieldOverflow, "date out of range"));
    }
    Ok(r as i32)
}

/// `date - date`: the number of days between them (22008 for infinities).
pub fn date_diff(a: i32, b: i32) -> Result<i32> {
    if !date_is_finite(a) || !date_is_finite(b) {
        return Err(err!(DatetimeFieldOverflow, "cannot subtract infinite dates"));
    }
    Ok(a - b)
}

/// `date::timestamp`: midnight of that day (22008 past year 294276).
pub fn date_to_timestamp(d: i32) -> Result<i64> {
    match d {
        DATE_POS_INFINITY => Ok(TS_POS_INFINITY),
        DATE_NEG_INFINITY => Ok(TS_NEG_INFINITY),
        _ if d as i64 >= TS_END_DAY => {
            Err(err!(DatetimeFieldOverflow, "date out of range for timestamp"))
        }
        _ => Ok(d as i64 * USECS_PER_DAY),
    }
}

/// `timestamp::date`: the day the timestamp falls on.
pub fn timestamp_to_date(t: i64) -> i32 {
    match t {
        TS_POS_INFINITY => DATE_POS_INFINITY,
        TS_NEG_INFINITY => DATE_NEG_INFINITY,
        // The timestamp range lies inside the date range, so this fits.
        _ => t.div_euclid(USECS_PER_DAY) as i32,
    }
}

/// timeofday()'s text: the time `utc` (microseconds since 2000) in `zone`,
/// as `Mon Nov 23 23:50:16.123456 2026 UTC`.
pub fn time_of_day(utc: i64, zone: &crate::Zone) -> String {
    const DAYS: [&str; 7] = ["Sat", "Sun", "Mon", "Tue", "Wed", "Thu", "Fri"];
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let local = zone.utc_to_local(utc);
    let day = local.div_euclid(86_400_000_000);
    let micros = local.rem_euclid(86_400_000_000);
    let (y, m, d) = civil_from_days(day);
    // 2000-01-01 was a Saturday.
    let weekday = DAYS[day.rem_euclid(7) as usize];
    let (h, min, sec, us) = (
        micros / 3_600_000_000,
        micros / 60_000_000 % 60,
        micros / 1_000_000 % 60,
        micros % 1_000_000,
    );
    let month = MONTHS[(m as usize).saturating_sub(1).min(11)];
    let abbrev = zone.abbrev_at(utc);
    format!("{weekday} {month} {d:02} {h:02}:{min:02}:{sec:02}.{us:06} {y} {abbrev}")
}

/// Rounds `micros` to `precision` fractional digits of a second (0..=6),
/// half away from zero, as PostgreSQL's AdjustTimestampForTypmod does.
fn round_micros(micros: i64, precision: u8) -> i64 {
    let scale = 10i64.pow(6 - u32::from(precision.min(6)));
    let up = |m: i64| (m.saturating_add(scale / 2) / scale).saturating_mul(scale);
    if micros >= 0 {
        up(micros)
    } else {
        -up(micros.saturating_neg())
    }
}

/// A value of `timestamp(p)`, `timestamptz(p)`, `time(p)`, `timetz(p)` or
/// `interval(p)`: its seconds rounded to `precision` fractional digits, as
/// a column or a cast of that type stores it. Infinities and other values
/// pass unchanged.
pub fn round_precision(v: crate::Value, precision: u8) -> crate::Value {
    use crate::Value;
    match v {
        Value::Timestamp(t) if t != TS_NEG_INFINITY && t != TS_POS_INFINITY => {
            Value::Timestamp(round_micros(t, precision))
        }
        Value::TimestampTz(t) if t != TS_NEG_INFINITY && t != TS_POS_INFINITY => {
            Value::TimestampTz(round_micros(t, precision))
        }
        Value::Time(t) => Value::Time(round_micros(t, precision)),
        Value::TimeTz(t, zone) => Value::TimeTz(round_micros(t, precision), zone),
        Value::Interval(mut i) => {
            i.micros = round_micros(i.micros, precision);
            Value::Interval(i)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqlState;

    fn ts(s: &str) -> String {
        format_timestamp(parse_timestamp(s, false).expect("valid timestamp"), false)
    }

    fn tstz(s: &str) -> String {
        format_timestamp(parse_timestamp(s, true).expect("valid timestamptz"), true)
    }

    fn date(s: &str) -> String {
        format_date(parse_date(s).expect("valid date"))
    }

    #[test]
    fn calendar_round_trips() {
        assert_eq!(days_from_civil(2000, 1, 1), 0);
        assert_eq!(days_from_civil(1970, 1, 1), -10_957);
        for d in [-2_451_545, -1, 0, 1, 59, 60, 365, 366, 2_000_000_000] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }

    #[test]
    fn dates_like_postgres() {
        assert_eq!(parse_date("2000-01-02").expect("date"), 1);
        assert_eq!(format_date(-1), "1999-12-31");
        assert_eq!(date(" 2024-01-02 "), "2024-01-02");
        assert_eq!(date("2024-1-2"), "2024-01-02");
        assert_eq!(date("20240102"), "2024-01-02");
        assert_eq!(date("2024/01/02"), "2024-01-02");
        assert_eq!(date("01/02/2024"), "2024-01-02");
        assert_eq!(date("01/02/24"), "2024-01-02");
        assert_eq!(date("2024-01-02 10:00"), "2024-01-02");
        assert_eq!(date("2024-01-02BC"), "2024-01-02 BC");
        assert_eq!(date("4714-11-24 BC"), "4714-11-24 BC");
        assert_eq!(date("0001-01-01 BC"), "0001-01-01 BC");
        assert_eq!(date("10000-01-01"), "10000-01-01");
        assert_eq!(date("5874897-12-31"), "5874897-12-31");
        assert_eq!(date("Jan 2 2024"), "2024-01-02");
        assert_eq!(date("January 2, 2024"), "2024-01-02");
        assert_eq!(date("2 Jan 2024"), "2024-01-02");
        assert_eq!(date("2024-Jan-02"), "2024-01-02");
        assert_eq!(date("Tue Jan 02 2024"), "2024-01-02");
        assert_eq!(date("Sept 30 2024"), "2024-09-30");
        assert_eq!(date("Jan 2 24"), "2024-01-02");
        assert_eq!(date("jan 2 2024 bc"), "2024-01-02 BC");
        assert_eq!(ts("2 Jan 2024 3:04 pm"), "2024-01-02 15:04:00");
        assert_eq!(ts("2024-01-02 12:30 AM"), "2024-01-02 00:30:00");
        assert_eq!(tstz("Jan 2 2024 10:00:05+02"), "2024-01-02 08:00:05+00");
        let e = parse_date("Feb 29 2023").expect_err("not a leap year");
        assert_eq!(e.message, "date/time field value out of range: \"Feb 29 2023\"");
        assert!(parse_date("Foo 2 2024").is_err());
        assert!(parse_date("Jan Feb 2 2024").is_err());
        assert_eq!(date("epoch"), "1970-01-01");
        assert_eq!(date("infinity"), "infinity");
        assert_eq!(date("-INFINITY"), "-infinity");
    }

    #[test]
    fn date_errors_like_postgres() {
        let e = parse_date("abc").expect_err("syntax");
        assert_eq!(e.code, SqlState::InvalidDatetimeFormat);
        assert_eq!(e.message, "invalid input syntax for type date: \"abc\"");
        let e = parse_date("2024-02-30").expect_err("field");
        assert_eq!(e.code, SqlState::DatetimeFieldOverflow);
        assert_eq!(e.message, "date/time field value out of range: \"2024-02-30\"");
        let e = parse_date("0000-01-01").expect_err("year 0");
        assert_eq!(e.code, SqlState::DatetimeFieldOverflow);
        let e = parse_date("5874898-01-01").expect_err("range");
        assert_eq!(e.message, "date out of range: \"5874898-01-01\"");
        let e = parse_date("4714-11-23 BC").expect_err("range");
        assert_eq!(e.message, "date out of range: \"4714-11-23 BC\"");
    }

    #[test]
    fn timestamps_like_postgres() {
        assert_eq!(ts("2024-01-02 03:04:05.12"), "2024-01-02 03:04:05.12");
        assert_eq!(ts("2024-01-02T03:04:05"), "2024-01-02 03:04:05");
        assert_eq!(ts("2024-01-02"), "2024-01-02 00:00:00");
        assert_eq!(ts("2024-1-2 3:4"), "2024-01-02 03:04:00");
        assert_eq!(ts("2024-01-02 03:04:05."), "2024-01-02 03:04:05");
        assert_eq!(ts("2024-01-02 03:04:05.1234567"), "2024-01-02 03:04:05.123457");
        assert_eq!(ts("2024-01-02 03:04:05.9999995"), "2024-01-02 03:04:06");
        assert_eq!(ts("2024-01-02 24:00:00"), "2024-01-03 00:00:00");
        assert_eq!(ts("2024-01-02 03:04:60"), "2024-01-02 03:05:00");
        assert_eq!(ts("2024-01-02 03:04:05+01"), "2024-01-02 03:04:05");
        assert_eq!(ts("4714-11-24 00:00:00 BC"), "4714-11-24 00:00:00 BC");
        assert_eq!(ts("12345-01-01 10:00:00.5"), "12345-01-01 10:00:00.5");
        assert_eq!(ts("294276-12-31 23:59:59"), "294276-12-31 23:59:59");
        assert_eq!(ts("1999-12-31 23:59:59.5"), "1999-12-31 23:59:59.5");
        assert_eq!(ts("epoch"), "1970-01-01 00:00:00");
        assert_eq!(ts("infinity"), "infinity");
        assert_eq!(ts("-infinity"), "-infinity");
    }

    #[test]
    fn timestamptz_zones() {
        assert_eq!(tstz("2024-01-02 03:04:05+01"), "2024-01-02 02:04:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05 +01:00"), "2024-01-02 02:04:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05 -0130"), "2024-01-02 04:34:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05-05:30"), "2024-01-02 08:34:05+00");
        assert_eq!(tstz("2024-01-02T03:04:05Z"), "2024-01-02 03:04:05+00");
        assert_eq!(tstz("2024-01-02 03:04:05.5 Z"), "2024-01-02 03:04:05.5+00");
        assert_eq!(tstz("2024-01-02 03:04 utc"), "2024-01-02 03:04:00+00");
        assert_eq!(tstz("2024-01-02 03:04:05+14"), "2024-01-01 13:04:05+00");
        assert_eq!(tstz("4714-11-24 00:00:00 BC"), "4714-11-24 00:00:00+00 BC");
        let e = parse_timestamp("2024-01-02 03:04:05+16", true).expect_err("zone");
        assert_eq!(e.message, "time zone displacement out of range: \"2024-01-02 03:04:05+16\"");
    }

    #[test]
    fn timestamp_errors_like_postgres() {
        for s in ["", "abc", "03:04:05", "2024-01-02 3", "2024-01-02 03:04:05 foo"] {
            let e = parse_timestamp(s, false).expect_err("syntax");
            assert_eq!(e.code, SqlState::InvalidDatetimeFormat, "{s}");
            assert_eq!(e.message, format!("invalid input syntax for type timestamp: \"{s}\""));
        }
        let e = parse_timestamp("x", true).expect_err("syntax");
        assert_eq!(e.message, "invalid input syntax for type timestamp with time zone: \"x\"");
        for s in ["2024-01-02 25:00:00", "2024-01-02 24:00:01", "2024-13-01 00:00"] {
            let e = parse_timestamp(s, false).expect_err("field");
            assert_eq!(e.message, format!("date/time field value out of range: \"{s}\""));
        }
        let e = parse_timestamp("294277-01-01", false).expect_err("range");
        assert_eq!(e.message, "timestamp out of range: \"294277-01-01\"");
    }

    #[test]
    fn arithmetic() {
        assert_eq!(date_add_days(0, 31).expect("in range"), 31);
        assert_eq!(date_add_days(DATE_POS_INFINITY, 1).expect("infinite"), DATE_POS_INFINITY);
        let max = parse_date("5874897-12-31").expect("date");
        assert_eq!(date_add_days(max, 1).expect_err("range").message, "date out of range");
        assert_eq!(
            date_diff(DATE_POS_INFINITY, 0).expect_err("inf").message,
            "cannot subtract infinite dates"
        );
        assert_eq!(date_to_timestamp(1).expect("fits"), USECS_PER_DAY);
        assert_eq!(
            date_to_timestamp(parse_date("294277-01-01").expect("date"))
                .expect_err("range")
                .message,
            "date out of range for timestamp"
        );
        assert_eq!(timestamp_to_date(-1), -1);
        assert_eq!(timestamp_to_date(TS_NEG_INFINITY), DATE_NEG_INFINITY);
    }
}
