//! Which tenant a client asks for, read from its StartupMessage.
//!
//! In this order of precedence (CockroachDB's "virtual cluster routing",
//! with Neon's spelling accepted too):
//!
//! 1. the `options` parameter holds `--cluster=NAME` or `endpoint=NAME`
//!    (the token is removed before the SQL process sees the options);
//! 2. over TLS, the host name the client sent (SNI) is `NAME.DOMAIN`, DOMAIN
//!    being the proxy's tenant domain (`localhost` by default, so
//!    `acme.localhost` names acme; other host names name no tenant);
//! 3. the database is `NAME.DBNAME` (the SQL process sees `DBNAME`);
//! 4. otherwise the tenant `default`, so clients that know nothing of
//!    tenants work unchanged — or, when the proxy routes by password, the
//!    tenant the password field names ([`password_tenant`](crate::route::password_tenant)).
//!
//! Pure functions: no I/O, unit-tested below.

/// The tenant a connection that names none reaches.
pub const DEFAULT_TENANT: &str = "default";

/// Where a StartupMessage goes, and the parameters to forward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The tenant's name.
    pub tenant: String,
    /// The parameters for the SQL process, routing tokens removed.
    pub params: Vec<(String, String)>,
    /// The client named the tenant (false: [`DEFAULT_TENANT`] by default).
    pub named: bool,
}

/// The tenant a password field names, Neon's way: `endpoint=NAME;PASSWORD`
/// (or `endpoint=NAME$PASSWORD`) gives (NAME, PASSWORD); anything else is
/// the default tenant's password as it is.
pub fn password_tenant(field: &str) -> (String, String) {
    if let Some(rest) = field.strip_prefix("endpoint=") {
        if let Some(i) = rest.find([';', '$']) {
            if i > 0 {
                return (rest[..i].to_string(), rest[i + 1..].to_string());
            }
        }
    }
    (DEFAULT_TENANT.to_string(), field.to_string())
}

/// The tenant an SNI host name names under `domain`, if it names one.
pub fn sni_tenant(sni: &str, domain: &str) -> Option<String> {
    let sni = sni.trim_end_matches('.').to_ascii_lowercase();
    let name = sni.strip_suffix(domain)?.strip_suffix('.')?;
    (!name.is_empty() && !name.contains('.')).then(|| name.to_string())
}

/// Reads the tenant from `params`, or from `sni` (the tenant named by the
/// TLS host name, [`sni_tenant`]); see the module documentation.
pub fn route(mut params: Vec<(String, String)>, sni: Option<String>) -> Route {
    let mut tenant = None;
    if let Some(i) = params.iter().position(|(k, _)| k == "options") {
        let (rest, found) = take_cluster_option(&params[i].1);
        if found.is_some() {
            tenant = found;
            if rest.is_empty() {
                params.remove(i);
            } else {
                params[i].1 = rest;
            }
        }
    }
    if tenant.is_none() {
        tenant = sni;
    }
    if tenant.is_none() {
        if let Some(p) = params.iter_mut().find(|(k, _)| k == "database") {
            if let Some((name, db)) = p.1.split_once('.') {
                if !name.is_empty() && !db.is_empty() {
                    tenant = Some(name.to_string());
                    p.1 = db.to_string();
                }
            }
        }
    }
    let named = tenant.is_some();
    Route { tenant: tenant.unwrap_or_else(|| DEFAULT_TENANT.to_string()), params, named }
}

/// Splits a routing token out of an `options` string: the options without
/// it, and the tenant it names. Options are separated by spaces; `\ ` is an
/// escaped space inside one (libpq's rule), kept as it is.
fn take_cluster_option(options: &str) -> (String, Option<String>) {
    let mut kept = Vec::new();
    let mut tenant = None;
    for token in split_options(options) {
        let name = token.strip_prefix("--cluster=").or_else(|| token.strip_prefix("endpoint="));
        match name {
            Some(n) if tenant.is_none() => tenant = Some(n.to_string()),
            _ => kept.push(token),
        }
    }
    (kept.join(" "), tenant)
}

/// Space-separated tokens, where a backslash escapes the next character.
fn split_options(options: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ' ' | '\t' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn options_name_the_tenant() {
        let r = route(
            p(&[("user", "u"), ("database", "postgres"), ("options", "--cluster=acme")]),
            None,
        );
        assert_eq!(r.tenant, "acme");
        assert_eq!(r.params, p(&[("user", "u"), ("database", "postgres")]));
        let r = route(p(&[("options", "-c search_path=x endpoint=neon1")]), None);
        assert_eq!(r.tenant, "neon1");
        assert_eq!(r.params, p(&[("options", "-c search_path=x")]));
    }

    #[test]
    fn database_prefix_names_the_tenant() {
        let r = route(p(&[("user", "u"), ("database", "acme.postgres")]), None);
        assert_eq!(r.tenant, "acme");
        assert_eq!(r.params, p(&[("user", "u"), ("database", "postgres")]));
    }

    #[test]
    fn options_beat_the_database_prefix() {
        let r = route(p(&[("database", "b.postgres"), ("options", "--cluster=a")]), None);
        assert_eq!(r.tenant, "a");
        assert_eq!(r.params, p(&[("database", "b.postgres")]));
    }

    #[test]
    fn nothing_means_default() {
        let r = route(p(&[("user", "u"), ("database", "postgres"), ("options", "-c x=1")]), None);
        assert_eq!(r.tenant, DEFAULT_TENANT);
        assert_eq!(r.params, p(&[("user", "u"), ("database", "postgres"), ("options", "-c x=1")]));
        assert_eq!(route(p(&[("database", ".x")]), None).tenant, DEFAULT_TENANT);
    }

    #[test]
    fn sni_names_a_tenant_under_the_domain_after_options() {
        assert_eq!(sni_tenant("acme.localhost", "localhost"), Some("acme".into()));
        assert_eq!(sni_tenant("ACME.localhost.", "localhost"), Some("acme".into()));
        assert_eq!(sni_tenant("localhost", "localhost"), None);
        assert_eq!(sni_tenant("a.b.localhost", "localhost"), None);
        assert_eq!(sni_tenant("db.example.com", "localhost"), None);
        assert_eq!(sni_tenant("xlocalhost", "localhost"), None);
        let sni = Some("acme".to_string());
        let r = route(p(&[("database", "b.postgres")]), sni.clone());
        assert_eq!((r.tenant.as_str(), r.params[0].1.as_str()), ("acme", "b.postgres"));
        let r = route(p(&[("options", "--cluster=c")]), sni);
        assert_eq!(r.tenant, "c");
    }

    #[test]
    fn the_password_field_names_a_tenant() {
        let t = |f: &str| password_tenant(f);
        assert_eq!(t("endpoint=acme;s3cret"), ("acme".into(), "s3cret".into()));
        assert_eq!(t("endpoint=acme$a;b"), ("acme".into(), "a;b".into()));
        assert_eq!(t("endpoint=acme;"), ("acme".into(), "".into()));
        assert_eq!(t("plain"), (DEFAULT_TENANT.into(), "plain".into()));
        assert_eq!(t("endpoint=;x"), (DEFAULT_TENANT.into(), "endpoint=;x".into()));
        assert_eq!(t("endpoint=acme"), (DEFAULT_TENANT.into(), "endpoint=acme".into()));
        assert!(!route(p(&[("database", "postgres")]), None).named);
        assert!(route(p(&[("database", "a.postgres")]), None).named);
    }

    #[test]
    fn escaped_spaces_stay() {
        let (rest, t) = take_cluster_option(r"-c application_name=a\ b --cluster=z");
        assert_eq!(t.as_deref(), Some("z"));
        assert_eq!(rest, r"-c application_name=a\ b");
    }
}
