//! Time zones: the session's TimeZone setting, which timestamptz text
//! input and output, casts to and from timestamp and date, and the
//! calendar functions on timestamptz (extract, date_trunc, to_char,
//! interval arithmetic) work in.
//!
//! Named zones come from the system's IANA time zone database (the TZif
//! files under `/usr/share/zoneinfo`, or `$TZDIR`), as Debian's
//! PostgreSQL reads them, so both agree on every rule and abbreviation.
//! A zone is loaded once per process and shared.
//!
//! A local time that a transition skips or repeats resolves as
//! PostgreSQL's `DetermineTimeZoneOffset` does: in a spring-forward gap the
//! offset before the transition applies (02:30 becomes 03:30 daylight
//! time), and in a fall-back overlap the offset after it (the later of the
//! two instants).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use crate::datetime::{timestamp_is_finite, USECS_PER_SEC};
use crate::{err, Result};

/// A time zone.
#[derive(Debug)]
pub struct Zone {
    /// The name SHOW TimeZone gives (the database's spelling).
    name: String,
    rules: Rules,
}

#[derive(Debug)]
enum Rules {
    /// A constant offset, seconds east of Greenwich.
    Fixed(i32),
    /// The database's transitions.
    Tz(tz::TimeZone),
}

static UTC: LazyLock<Arc<Zone>> =
    LazyLock::new(|| Arc::new(Zone { name: "UTC".into(), rules: Rules::Fixed(0) }));

/// Zones loaded so far, by lower-case name.
static LOADED: LazyLock<Mutex<HashMap<String, Arc<Zone>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Seconds from the Unix epoch to PostgreSQL's (2000-01-01).
const UNIX_EPOCH_OFFSET_SECS: i64 = 946_684_800;

/// How far a zone's offset can be from UTC (PostgreSQL's limit, 15:59:59).
const MAX_OFFSET_SECS: i64 = 15 * 3600 + 59 * 60 + 59;

impl Zone {
    /// UTC.
    pub fn utc() -> Arc<Zone> {
        UTC.clone()
    }

    /// UTC, borrowed (for the zone-less wrappers of the zoned functions).
    pub fn utc_ref() -> &'static Zone {
        &UTC
    }

    /// The zone a TimeZone setting (or an AT TIME ZONE operand) names: a
    /// name from the time zone database, matched without regard to case
    /// (`america/new_york`), or UTC under any of its names. 22023 if the
    /// database has no such zone.
    pub fn lookup(name: &str) -> Result<Arc<Zone>> {
        let name = name.trim();
        let key = name.to_ascii_lowercase();
        if key == "utc" {
            return Ok(Zone::utc());
        }
        // A bare number is hours east of UTC (SET TIME ZONE -7).
        if let Ok(hours) = key.parse::<f64>() {
            if !hours.is_finite() || hours.abs() * 3600.0 > MAX_OFFSET_SECS as f64 {
                return Err(err!(InvalidParameterValue, "time zone displacement out of range"));
            }
            return Zone::displacement((hours * 3600.0).round() as i32);
        }
        if let Some(z) = LOADED.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(z.clone());
        }
        let bad = || err!(InvalidParameterValue, "time zone \"{name}\" not recognized");
        let (spelled, rules) = match read_zone_file(&key) {
            Some((spelled, data)) => {
                (spelled, tz::TimeZone::from_tz_data(&data).map_err(|_| bad())?)
            }
            // A POSIX TZ rule (`UTC+3`, `GMT-05:30`, `EST5EDT,M3.2.0,M11.1.0`):
            // an offset west of UTC, so it needs a digit.
            None if key.bytes().any(|b| b.is_ascii_digit()) && !key.contains('/') => {
                // No directories: the name is read as a rule, never a file.
                let settings = tz::TimeZoneSettings::new(&[], |_| Err("no zone files".into()));
                // An offset alone (`+05:30`, west of UTC as in POSIX) is its
                // own abbreviation, as PostgreSQL reads it.
                let rule = match name.starts_with(['+', '-']) {
                    true => format!("<{name}>{name}"),
                    false => name.to_string(),
                };
                // A quoted abbreviation may not hold the colon of
                // PostgreSQL's own `<+05:30>-05:30`; it is only a label.
                let rule = match rule.split_once('>') {
                    Some((abbrev, rest)) if abbrev.starts_with('<') => {
                        format!("{}>{rest}", abbrev.replace(':', ""))
                    }
                    _ => rule,
                };
                let rules = settings.parse_posix_tz(&rule).map_err(|_| bad())?;
                (name.to_string(), rules)
            }
            None => return Err(bad()),
        };
        let zone = Arc::new(Zone { name: spelled, rules: Rules::Tz(rules) });
        LOADED.lock().unwrap_or_else(|p| p.into_inner()).insert(key, zone.clone());
        Ok(zone)
    }

    /// The zone AT TIME ZONE and make_timestamptz name: a time zone
    /// abbreviation (`PST`, a constant offset) or else as [`Zone::lookup`].
    pub fn lookup_or_abbreviation(name: &str) -> Result<Arc<Zone>> {
        match crate::datetime::abbreviation(name.trim()) {
            Some(east) => Zone::fixed(east as i32),
            None => Zone::lookup(name),
        }
    }

    /// A zone at a constant offset (seconds east), named as PostgreSQL
    /// shows such a zone: `<+05:30>-05:30`; UTC for no offset.
    pub fn fixed(east: i32) -> Result<Arc<Zone>> {
        if east == 0 {
            return Ok(Zone::utc());
        }
        Zone::displacement(east)
    }

    /// The zone SET TIME ZONE sets for a displacement (hours, or an
    /// interval): [`Zone::fixed`], but no offset too is named as
    /// PostgreSQL names it (`<+00>-00`).
    pub fn displacement(east: i32) -> Result<Arc<Zone>> {
        if i64::from(east).abs() > MAX_OFFSET_SECS {
            return Err(err!(InvalidParameterValue, "time zone displacement out of range"));
        }
        let mut tag = String::new();
        write_offset(east, &mut tag);
        let mut posix = String::new();
        write_offset(-east, &mut posix);
        if east == 0 {
            posix = "-00".into();
        }
        Ok(Arc::new(Zone { name: format!("<{tag}>{posix}"), rules: Rules::Fixed(east) }))
    }

    /// The name SHOW TimeZone gives.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// True for UTC (no conversion needed).
    pub fn is_utc(&self) -> bool {
        matches!(self.rules, Rules::Fixed(0))
    }

    /// The local time type at a UTC instant (microseconds since 2000).
    fn at(&self, utc: i64) -> Option<&tz::LocalTimeType> {
        match &self.rules {
            Rules::Fixed(_) => None,
            Rules::Tz(z) => {
                let unix = utc.div_euclid(USECS_PER_SEC) + UNIX_EPOCH_OFFSET_SECS;
                z.find_local_time_type(unix).ok()
            }
        }
    }

    /// The offset (seconds east of UTC) in effect at a UTC instant.
    pub fn offset_at(&self, utc: i64) -> i32 {
        match &self.rules {
            Rules::Fixed(east) => *east,
            Rules::Tz(_) => self.at(utc).map_or(0, |t| t.ut_offset()),
        }
    }

    /// The zone's abbreviation at a UTC instant (`EST`, `CEST`, `UTC`; for
    /// a fixed offset, the offset as PostgreSQL prints it).
    pub fn abbrev_at(&self, utc: i64) -> String {
        match self.at(utc) {
            Some(t) => t.time_zone_designation().to_string(),
            None if self.is_utc() && self.name == "UTC" => "UTC".to_string(),
            None => {
                let mut s = String::new();
                write_offset(self.offset_at(utc), &mut s);
                s
            }
        }
    }

    /// The offset that applies to a local (wall-clock) time, given as
    /// microseconds since 2000 read as if it were UTC.
    pub fn offset_for_local(&self, local: i64) -> i32 {
        let Rules::Tz(_) = &self.rules else { return self.offset_at(local) };
        const DAY: i64 = 86_400 * USECS_PER_SEC;
        let (lo, hi) = (local.saturating_sub(DAY), local.saturating_add(DAY));
        let before = self.offset_at(lo);
        if self.offset_at(hi) == before {
            return before;
        }
        // The first instant after `lo` with a different offset, to the second.
        let (mut a, mut b) = (lo, hi);
        while b - a > USECS_PER_SEC {
            let mid = a + (b - a) / 2;
            if self.offset_at(mid) == before {
                a = mid;
            } else {
                b = mid;
            }
        }
        let boundary = b;
        let after = self.offset_at(boundary);
        let before_utc = local - i64::from(before) * USECS_PER_SEC;
        let after_utc = local - i64::from(after) * USECS_PER_SEC;
        if before_utc < boundary && after_utc < boundary {
            before
        } else if before_utc >= boundary && after_utc >= boundary {
            after
        } else if before_utc > after_utc {
            // Skipped by a spring-forward transition: the offset before it.
            before
        } else {
            // Repeated by a fall-back transition: the offset after it.
            after
        }
    }

    /// A local time (microseconds since 2000 as if UTC) as a UTC instant.
    pub fn local_to_utc(&self, local: i64) -> i64 {
        if !timestamp_is_finite(local) {
            return local;
        }
        local.saturating_sub(i64::from(self.offset_for_local(local)) * USECS_PER_SEC)
    }

    /// A UTC instant as local (wall-clock) time in this zone.
    pub fn utc_to_local(&self, utc: i64) -> i64 {
        if !timestamp_is_finite(utc) {
            return utc;
        }
        utc.saturating_add(i64::from(self.offset_at(utc)) * USECS_PER_SEC)
    }
}

/// Appends an offset (seconds east) as PostgreSQL's ISO output writes it:
/// `+05`, `-04:30`, `-04:56:02`.
pub fn write_offset(east: i32, out: &mut String) {
    use std::fmt::Write;
    let sign = if east < 0 { '-' } else { '+' };
    let a = east.unsigned_abs();
    let _ = write!(out, "{sign}{:02}", a / 3600);
    if !a.is_multiple_of(3600) {
        let _ = write!(out, ":{:02}", a / 60 % 60);
    }
    if !a.is_multiple_of(60) {
        let _ = write!(out, ":{:02}", a % 60);
    }
}

/// The zone database's directory.
fn zoneinfo_dir() -> std::path::PathBuf {
    std::env::var_os("TZDIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/usr/share/zoneinfo".into())
}

/// Reads the TZif file of a zone name given in lower case, matching each
/// path component without regard to case: the name as the database spells
/// it, and the file's bytes. None for a name that is not a zone file.
fn read_zone_file(lower: &str) -> Option<(String, Vec<u8>)> {
    let safe = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"_+-.".contains(&b))
    };
    let mut path = zoneinfo_dir();
    let mut spelled = Vec::new();
    for part in lower.split('/') {
        if !safe(part) {
            return None;
        }
        let found = std::fs::read_dir(&path).ok()?.flatten().find_map(|e| {
            let n = e.file_name().into_string().ok()?;
            n.eq_ignore_ascii_case(part).then_some(n)
        })?;
        path.push(&found);
        spelled.push(found);
    }
    let data = std::fs::read(&path).ok()?;
    // TZif files start with the magic "TZif"; anything else (a directory,
    // zone.tab, posixrules' siblings) is not a zone.
    data.starts_with(b"TZif").then(|| (spelled.join("/"), data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::{format_timestamp, parse_timestamp};

    fn at(s: &str) -> i64 {
        parse_timestamp(s, false).expect("timestamp")
    }

    #[test]
    fn named_zones_follow_daylight_saving() {
        let ny = Zone::lookup("america/new_york").expect("zone database");
        assert_eq!(ny.name(), "America/New_York");
        assert_eq!(ny.offset_at(at("2024-07-01 12:00:00")), -4 * 3600);
        assert_eq!(ny.offset_at(at("2024-01-01 12:00:00")), -5 * 3600);
        assert_eq!(ny.abbrev_at(at("2024-01-01 12:00:00")), "EST");
        // 02:30 on 2024-03-10 does not exist: read as EST, it is 07:30 UTC.
        let gap = ny.local_to_utc(at("2024-03-10 02:30:00"));
        assert_eq!(format_timestamp(gap, false), "2024-03-10 07:30:00");
        // 01:30 on 2024-11-03 happens twice: the later (EST) one.
        let overlap = ny.local_to_utc(at("2024-11-03 01:30:00"));
        assert_eq!(format_timestamp(overlap, false), "2024-11-03 06:30:00");
        assert!(Zone::lookup("Mars/Olympus_Mons").is_err());
        assert!(Zone::lookup("../../etc/passwd").is_err());
        assert!(Zone::lookup("America").is_err());
    }

    #[test]
    fn offsets_print_like_postgres() {
        let s = |e| {
            let mut o = String::new();
            write_offset(e, &mut o);
            o
        };
        assert_eq!(s(0), "+00");
        assert_eq!(s(-4 * 3600), "-04");
        assert_eq!(s(5 * 3600 + 1800), "+05:30");
        assert_eq!(s(-(4 * 3600 + 56 * 60 + 2)), "-04:56:02");
        assert_eq!(Zone::fixed(5 * 3600 + 1800).expect("fixed").name(), "<+05:30>-05:30");
    }
}
