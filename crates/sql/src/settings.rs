//! Session settings (GUCs): SET, SHOW, RESET and the values reported to
//! clients as ParameterStatus.
//!
//! Settings are plain strings keyed by lower-case name. Only the ones clients
//! rely on have effects (transaction isolation); the rest are stored and
//! echoed so drivers that set them at connect time work.

use std::collections::BTreeMap;

use sqlparser::ast;

use crate::func::catalog_info::quote_ident;

use crate::error::Result;
use crate::{bail, err};

pub mod duration;

/// The version string reported as server_version and by version().
pub const SERVER_VERSION: &str = "15.0";

/// The database's collation and character classification: text sorts by
/// code point (UTF-8 byte order) and case mapping is Unicode's, which is
/// glibc's C.UTF-8 locale.
pub const COLLATION: &str = "C.UTF-8";

/// What version() returns.
pub const VERSION_STRING: &str =
    "PostgreSQL 15.0 (Strata 0.1.0) on x86_64-pc-linux-gnu, compiled by rustc, 64-bit";

/// Settings reported to the client at startup and whenever they change.
pub const REPORTED: &[&str] = &[
    "server_version",
    "server_encoding",
    "client_encoding",
    "application_name",
    "DateStyle",
    "IntervalStyle",
    "TimeZone",
    "integer_datetimes",
    "standard_conforming_strings",
    "is_superuser",
    "session_authorization",
    "default_transaction_read_only",
    "in_hot_standby",
];

/// One session's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    values: BTreeMap<String, String>,
    changed: Vec<String>,
    /// The zone TimeZone names.
    zone: std::sync::Arc<sqltypes::Zone>,
    /// The millisecond settings' values, parsed when set (read for every
    /// statement and every wait for the client), by
    /// [`duration::MILLISECOND_SETTINGS`] slot.
    millis: [u64; duration::MILLISECOND_SETTINGS.len()],
}

/// Every setting with its built-in default.
const DEFAULTS: &[(&str, &str)] = &[
    ("server_version", SERVER_VERSION),
    ("server_version_num", "150000"),
    ("server_encoding", "UTF8"),
    ("client_encoding", "UTF8"),
    ("application_name", ""),
    ("DateStyle", "ISO, MDY"),
    ("IntervalStyle", "postgres"),
    ("TimeZone", "UTC"),
    ("integer_datetimes", "on"),
    ("standard_conforming_strings", "on"),
    ("is_superuser", "on"),
    ("session_authorization", "postgres"),
    ("role", "none"),
    ("default_transaction_read_only", "off"),
    ("in_hot_standby", "off"),
    ("search_path", "\"$user\", public"),
    ("default_transaction_isolation", "read committed"),
    ("transaction_isolation", "read committed"),
    ("extra_float_digits", "1"),
    ("statement_timeout", "0"),
    ("lock_timeout", "0"),
    ("idle_in_transaction_session_timeout", "0"),
    ("idle_session_timeout", "0"),
    ("max_identifier_length", "63"),
    ("max_index_keys", "32"),
    ("max_function_args", "100"),
    ("client_min_messages", "notice"),
    ("synchronous_commit", "on"),
    ("max_connections", "1000"),
    ("block_size", "8192"),
    ("lc_collate", COLLATION),
    ("lc_ctype", COLLATION),
    ("lc_messages", "C"),
    ("lc_monetary", "C"),
    ("lc_numeric", "C"),
    ("lc_time", "C"),
    ("datestyle", "ISO, MDY"),
    ("timezone", "UTC"),
    ("bytea_output", "hex"),
    ("row_security", "on"),
    ("check_function_bodies", "on"),
    ("xmloption", "content"),
    ("default_tablespace", ""),
    ("default_table_access_method", "heap"),
    ("work_mem", "4MB"),
    ("maintenance_work_mem", "64MB"),
    ("jit", "off"),
    ("synchronize_seqscans", "on"),
    ("lo_compat_privileges", "off"),
    ("quote_all_identifiers", "off"),
    ("escape_string_warning", "on"),
    ("enable_seqscan", "on"),
    ("enable_indexscan", "on"),
    ("enable_hashjoin", "on"),
    ("enable_mergejoin", "on"),
    ("enable_nestloop", "on"),
    ("default_with_oids", "off"),
];

/// A setting's built-in default, by lower-case name.
pub fn default_value(key: &str) -> Option<&'static str> {
    DEFAULTS.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| *v)
}

/// Settings whose value is a list of names, each quoted as an identifier
/// when it needs quotes (PostgreSQL's GUC_LIST_QUOTE).
const LIST_QUOTE: &[&str] = &["search_path", "temp_tablespaces"];

/// True if `key` (lower case) names a setting whose value is a list of
/// quoted names.
pub fn is_name_list(key: &str) -> bool {
    LIST_QUOTE.contains(&key)
}

/// A setting's name as written: a custom one is dotted (`app.user`).
pub fn setting_name(n: &ast::ObjectName) -> String {
    let parts: Vec<String> =
        n.0.iter().map(|p| p.as_ident().map(crate::bind::ident).unwrap_or_default()).collect();
    parts.join(".")
}

/// The setting `SHOW` names by its words: `SHOW TIME ZONE` is TimeZone,
/// `SHOW app.user` (which comes as two words) a custom setting.
pub fn shown_name(words: &[ast::Ident]) -> String {
    let words: Vec<String> = words.iter().map(crate::bind::ident).collect();
    match words.join(" ").as_str() {
        "time zone" => "timezone".into(),
        "session authorization" => "session_authorization".into(),
        _ if words.len() == 2 => words.join("."),
        spaced => spaced.to_string(),
    }
}

/// The value `SET name TO values` gives the setting, as PostgreSQL
/// spells it (`"$user", public`); None for `TO DEFAULT`.
pub fn assigned(name: &str, values: &[ast::Expr]) -> Option<String> {
    if let [ast::Expr::Identifier(i)] = values {
        if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default") {
            return None;
        }
    }
    let list = is_name_list(&name.to_lowercase());
    let one = |e: &ast::Expr| match e {
        ast::Expr::Value(v) if list => match &v.value {
            ast::Value::SingleQuotedString(s) => quote_ident(s),
            _ => value_text(e),
        },
        ast::Expr::Identifier(i) if list => quote_ident(&crate::bind::ident(i)),
        _ => value_text(e),
    };
    Some(values.iter().map(one).collect::<Vec<_>>().join(", "))
}

/// One value of a SET statement as the setting's text: a string's
/// contents, a number's digits, `on`/`off`, a word as written.
pub fn value_text(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(n, _) => n.clone(),
            ast::Value::Boolean(b) => if *b { "on" } else { "off" }.into(),
            other => other.to_string(),
        },
        ast::Expr::Identifier(i) => i.value.clone(),
        other => other.to_string(),
    }
}

/// Checks a default_table_access_method value against pg_am: `heap` is the
/// only table access method (`btree` is an index one).
fn table_access_method(value: &str) -> Result<String> {
    let invalid = |detail: String| {
        Err(err!(
            InvalidParameterValue,
            "invalid value for parameter \"default_table_access_method\": \"{value}\""
        )
        .with_detail(detail))
    };
    match value {
        "heap" => Ok(value.to_string()),
        "btree" => {
            bail!(ObjectNotInPrerequisiteState, "access method \"{value}\" is not of type TABLE")
        }
        "" => invalid("default_table_access_method cannot be empty.".into()),
        _ => invalid(format!("Table access method \"{value}\" does not exist.")),
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            values: DEFAULTS.iter().map(|(k, v)| (k.to_lowercase(), v.to_string())).collect(),
            changed: vec![],
            zone: sqltypes::Zone::utc(),
            millis: Default::default(),
        }
    }
}

impl Settings {
    /// The canonical (reported) spelling of a setting name, as SHOW names
    /// its column (`TimeZone`, `DateStyle`).
    pub fn canonical(name: &str) -> String {
        REPORTED
            .iter()
            .find(|r| r.eq_ignore_ascii_case(name))
            .map(|s| s.to_string())
            .unwrap_or_else(|| name.to_lowercase())
    }

    /// The zone the TimeZone setting names.
    pub fn zone(&self) -> std::sync::Arc<sqltypes::Zone> {
        self.zone.clone()
    }

    /// A setting's value by its lower-case name, without copying it.
    pub fn value(&self, lower_name: &str) -> Option<&str> {
        self.values.get(lower_name).map(String::as_str)
    }

    /// Reads a setting; 42704 if unknown.
    pub fn get(&self, name: &str) -> Result<String> {
        match self.values.get(&name.to_lowercase()) {
            Some(v) => Ok(v.clone()),
            None => bail!(UndefinedObject, "unrecognized configuration parameter \"{name}\""),
        }
    }

    /// Sets a setting. Unknown names with a dot (custom options) are accepted,
    /// as PostgreSQL accepts `myapp.x`; other unknown names fail with 42704.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let key = name.to_lowercase();
        let value = match key.as_str() {
            "client_encoding" => {
                // Like PostgreSQL's clean_encoding_name: only letters and
                // digits count, so 'utf-8' (asyncpg sends the quotes) is UTF8.
                let v: String = value
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .collect::<String>()
                    .to_uppercase();
                if v != "UTF8" && v != "UNICODE" {
                    bail!(
                        FeatureNotSupported,
                        "conversion between {value} and UTF8 is not supported"
                    );
                }
                "UTF8".to_string()
            }
            "timezone" => {
                let zone = sqltypes::Zone::lookup(value).map_err(|_| {
                    err!(
                        InvalidParameterValue,
                        "invalid value for parameter \"TimeZone\": \"{value}\""
                    )
                })?;
                let name = zone.name().to_string();
                self.zone = zone;
                name
            }
            "datestyle" => {
                if !value.to_uppercase().contains("ISO") {
                    bail!(
                        FeatureNotSupported,
                        "DateStyle \"{value}\" is not supported yet (only ISO)"
                    );
                }
                "ISO, MDY".to_string()
            }
            "default_table_access_method" => table_access_method(value)?,
            _ if let Some(slot) = duration::slot(&key) => {
                let ms = duration::parse(&key, value)?;
                self.millis[slot] = ms as u64;
                duration::show(ms)
            }
            "server_version"
            | "server_version_num"
            | "server_encoding"
            | "integer_datetimes"
            | "block_size"
            | "max_identifier_length"
            | "max_index_keys"
            | "max_function_args" => {
                bail!(CantChangeRuntimeParam, "parameter \"{key}\" cannot be changed");
            }
            _ if !self.values.contains_key(&key) && !key.contains('.') => {
                bail!(UndefinedObject, "unrecognized configuration parameter \"{name}\"")
            }
            _ => value.to_string(),
        };
        let canonical = Self::canonical(&key);
        for alias in [key.clone(), canonical.to_lowercase()] {
            self.values.insert(alias, value.clone());
        }
        if key == "datestyle" || key == "timezone" {
            self.values.insert(key.clone(), value.clone());
        }
        if REPORTED.iter().any(|r| r.eq_ignore_ascii_case(&key)) {
            self.changed.push(canonical);
        }
        Ok(())
    }

    /// Restores a setting's default.
    pub fn reset(&mut self, name: &str) -> Result<()> {
        let key = name.to_lowercase();
        match default_value(&key) {
            Some(v) => self.set(&key, v),
            // A custom setting's default is empty.
            None if key.contains('.') => self.set(&key, ""),
            None => bail!(UndefinedObject, "unrecognized configuration parameter \"{name}\""),
        }
    }

    /// The ParameterStatus pairs sent at startup.
    pub fn reported(&self) -> Vec<(String, String)> {
        REPORTED
            .iter()
            .filter_map(|r| self.values.get(&r.to_lowercase()).map(|v| (r.to_string(), v.clone())))
            .collect()
    }

    /// Reported settings that changed since the last call.
    pub fn take_changed(&mut self) -> Vec<(String, String)> {
        let mut names = std::mem::take(&mut self.changed);
        names.dedup();
        names
            .into_iter()
            .filter_map(|n| self.values.get(&n.to_lowercase()).map(|v| (n, v.clone())))
            .collect()
    }

    /// The check_function_bodies setting: CREATE FUNCTION checks the
    /// SQL in a body unless it is off.
    pub fn check_function_bodies(&self) -> bool {
        !matches!(self.value("check_function_bodies"), Some("off" | "false" | "no" | "0"))
    }

    /// A millisecond setting's value (statement_timeout, lock_timeout, the
    /// idle timeouts); None when it is 0 (no limit).
    pub fn timeout(&self, key: &str) -> Option<std::time::Duration> {
        match duration::slot(key).map(|s| self.millis[s]) {
            Some(ms) if ms > 0 => Some(std::time::Duration::from_millis(ms)),
            _ => None,
        }
    }

    /// A shareable copy of every setting (for current_setting()).
    pub fn snapshot(&self) -> std::sync::Arc<BTreeMap<String, String>> {
        std::sync::Arc::new(self.values.clone())
    }

    /// All settings, for SHOW ALL and pg_settings.
    pub fn all(&self) -> impl Iterator<Item = (&String, &String)> {
        self.values.iter()
    }
}
