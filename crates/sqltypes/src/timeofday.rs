//! `time` and `time with time zone`: a time of day in microseconds
//! (0 through 24:00:00 inclusive), the latter with a zone offset.
//!
//! Offsets are kept in seconds east of UTC (PostgreSQL stores seconds west;
//! binary I/O converts). Output follows time_out/timetz_out: `04:05:06.5`,
//! `04:05:06+02`, `04:05:06-03:30`.

use crate::datetime::{self, Bad, InputZone, USECS_PER_DAY};
use crate::text::TextOut;
use crate::Result;

/// Parses a time of day with an optional zone: `04:05[:06[.7]]`, with
/// `AM`/`PM`, `allballs`, or a full timestamp whose date is ignored.
fn parse(s: &str, ty: &str) -> Result<(i64, Option<i64>)> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("allballs") {
        return Ok((0, Some(0)));
    }
    if t.starts_with(|c: char| c.is_ascii_digit()) && !t.bytes().take(5).any(|b| b == b'-') {
        let (mut micros, rest) =
            datetime::parse_time(t).map_err(|b| datetime::bad_input(b, ty, s))?;
        let mut rest = rest.trim_start();
        let lower = rest.to_ascii_lowercase();
        for (word, pm) in [("am", false), ("pm", true), ("a.m.", false), ("p.m.", true)] {
            let word_end = |a: &str| !a.starts_with(|c: char| c.is_ascii_alphanumeric());
            if let Some(after) = lower.strip_prefix(word).filter(|a| word_end(a)) {
                let hour = micros / 3_600_000_000;
                if !((1..=12).contains(&hour) || (hour == 0 && micros == 0)) {
                    return Err(datetime::bad_input(Bad::Field, ty, s));
                }
                if hour == 12 {
                    micros -= 12 * 3_600_000_000;
                }
                if pm {
                    micros += 12 * 3_600_000_000;
                }
                rest = rest[rest.len() - after.len()..].trim_start();
                break;
            }
        }
        // A zone name's offset depends on a date, which a time lacks.
        let zone = match datetime::parse_zone(rest).map_err(|b| datetime::bad_input(b, ty, s))? {
            Some(InputZone::Offset(east)) => Some(east),
            Some(InputZone::Named(_)) => return Err(datetime::bad_input(Bad::Syntax, ty, s)),
            None => None,
        };
        return Ok((micros, zone));
    }
    // A date and time: take the time of day.
    let ts =
        datetime::parse_timestamp(t, false).map_err(|_| datetime::bad_input(Bad::Syntax, ty, s))?;
    Ok((ts.rem_euclid(USECS_PER_DAY), None))
}

/// `time` input.
pub fn parse_time(s: &str) -> Result<i64> {
    Ok(parse(s, "time without time zone")?.0)
}

/// `timetz` input: (microseconds, offset in seconds east); the session
/// zone (UTC) when none is given.
pub fn parse_timetz(s: &str) -> Result<(i64, i32)> {
    let (micros, zone) = parse(s, "time with time zone")?;
    Ok((micros, zone.unwrap_or(0) as i32))
}

/// Appends `HH:MM:SS[.ffffff]`.
pub fn write_time<O: TextOut + ?Sized>(micros: i64, out: &mut O) {
    let m = micros.clamp(0, USECS_PER_DAY) as u64;
    datetime::push_num(out, m / 3_600_000_000, 2);
    out.put(b":");
    datetime::push_num(out, m / 60_000_000 % 60, 2);
    out.put(b":");
    datetime::push_seconds(out, m % 60_000_000);
}

/// Appends a zone offset as `+HH[:MM[:SS]]`.
pub fn write_offset<O: TextOut + ?Sized>(east: i32, out: &mut O) {
    out.put(if east < 0 { b"-" } else { b"+" });
    let a = east.unsigned_abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    out.put(format!("{h:02}").as_bytes());
    if m != 0 || s != 0 {
        out.put(format!(":{m:02}").as_bytes());
    }
    if s != 0 {
        out.put(format!(":{s:02}").as_bytes());
    }
}

/// Appends a timetz value.
pub fn write_timetz<O: TextOut + ?Sized>(micros: i64, east: i32, out: &mut O) {
    write_time(micros, out);
    write_offset(east, out);
}

/// Orders timetz values as timetz_cmp does: by the UTC instant, then by
/// zone (further west sorts later).
pub fn timetz_cmp(a: (i64, i32), b: (i64, i32)) -> std::cmp::Ordering {
    let utc = |(t, east): (i64, i32)| t - east as i64 * 1_000_000;
    utc(a).cmp(&utc(b)).then((-a.1).cmp(&-b.1))
}

/// `time + interval`: wraps around midnight; months and days are ignored.
pub fn time_add(t: i64, micros: i64) -> i64 {
    (t as i128 + micros as i128).rem_euclid(USECS_PER_DAY as i128) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(s: &str) -> String {
        match parse_time(s) {
            Ok(t) => {
                let mut out = Vec::new();
                write_time(t, &mut out);
                String::from_utf8(out).expect("ascii")
            }
            Err(e) => format!("{} {}", e.code.code(), e.message),
        }
    }

    fn timetz(s: &str) -> String {
        let (t, z) = parse_timetz(s).expect("timetz");
        let mut out = Vec::new();
        write_timetz(t, z, &mut out);
        String::from_utf8(out).expect("ascii")
    }

    #[test]
    fn text_like_postgres() {
        assert_eq!(time("04:05:06.789"), "04:05:06.789");
        assert_eq!(time("04:05"), "04:05:00");
        assert_eq!(time("4:05 PM"), "16:05:00");
        assert_eq!(time("12:00 AM"), "00:00:00");
        assert_eq!(time("24:00:00"), "24:00:00");
        assert_eq!(time("allballs"), "00:00:00");
        assert_eq!(time("2003-04-12 04:05:06"), "04:05:06");
        assert!(time("25:00").starts_with("22008"));
        assert!(time("abc").starts_with("22007"));
        assert_eq!(timetz("04:05:06+02"), "04:05:06+02");
        assert_eq!(timetz("04:05:06-03:30"), "04:05:06-03:30");
        assert_eq!(timetz("04:05:06"), "04:05:06+00");
        assert_eq!(time_add(23 * 3_600_000_000, 2 * 3_600_000_000), 3_600_000_000);
    }
}
