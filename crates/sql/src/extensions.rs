//! The extensions CREATE EXTENSION installs. Strata ships them built in:
//! `uuid-ossp` and `pgcrypto` (the functions of theirs Strata has, see
//! `func/uuid_ossp.rs` and `func/pgcrypto.rs`), and `plpgsql`, which every
//! PostgreSQL database has installed from the start.
//!
//! An installed extension is one catalog entry ([`ExtensionDef`]). Its
//! functions are not stored: their pg_proc rows come from data files
//! exported from PostgreSQL 15 with the contrib modules installed
//! (`catalog_data/ext_*.tsv`, the columns of `pg_proc.tsv`), and take the
//! OIDs after the extension's own, in the files' order, as PostgreSQL's
//! install scripts give them. A call resolves to one of them only while the
//! extension is installed, through the schema it was installed in.

use std::sync::OnceLock;

use sqltypes::DataType;

use crate::bail;
use crate::builtins::{self, Proc};
use crate::catalog::{Catalog, ExtensionDef};
use crate::error::Result;
use crate::func::{pgcrypto::CryptoFunc, uuid_ossp::UuidFunc, Func};

/// An extension CREATE EXTENSION can install.
#[derive(Debug)]
pub struct Extension {
    /// Its name.
    pub name: &'static str,
    /// The one version there is (pg_available_extensions.default_version).
    pub version: &'static str,
    /// Its comment.
    pub comment: &'static str,
    /// Whether ALTER EXTENSION SET SCHEMA could move it (pg_extension's
    /// extrelocatable).
    pub relocatable: bool,
    /// pg_proc rows of its functions.
    procs: &'static str,
    /// The implementation of the function with this prosrc.
    bind: fn(&str) -> Option<Func>,
}

/// The extensions Strata ships, plpgsql first.
pub static AVAILABLE: [Extension; 3] = [
    Extension {
        name: "plpgsql",
        version: "1.0",
        comment: "PL/pgSQL procedural language",
        relocatable: false,
        procs: "",
        bind: |_| None,
    },
    Extension {
        name: "uuid-ossp",
        version: "1.1",
        comment: "generate universally unique identifiers (UUIDs)",
        relocatable: true,
        procs: include_str!("catalog_data/ext_uuid_ossp.tsv"),
        bind: |src| UuidFunc::from_src(src).map(Func::Uuid),
    },
    Extension {
        name: "pgcrypto",
        version: "1.3",
        comment: "cryptographic functions",
        relocatable: true,
        procs: include_str!("catalog_data/ext_pgcrypto.tsv"),
        bind: |src| CryptoFunc::from_src(src).map(Func::Crypto),
    },
];

/// plpgsql's pg_extension OID in PostgreSQL 15. Being below 16384, it
/// tells pg_dump the extension came with the database.
pub const PLPGSQL_OID: u32 = 13559;

/// The extension named `name`.
pub fn find(name: &str) -> Option<&'static Extension> {
    AVAILABLE.iter().find(|x| x.name == name)
}

impl Extension {
    /// Its functions' pg_proc rows, in OID order.
    pub fn procs(&'static self) -> &'static [Proc] {
        static PARSED: OnceLock<Vec<Vec<Proc>>> = OnceLock::new();
        let all = PARSED
            .get_or_init(|| AVAILABLE.iter().map(|x| builtins::parse_procs(x.procs)).collect());
        let i = AVAILABLE.iter().position(|x| std::ptr::eq(x, self)).unwrap_or_default();
        &all[i]
    }
}

/// The comment of the installed extension with this OID (plpgsql's
/// included).
pub fn comment(cat: &Catalog, oid: u32) -> Option<String> {
    if oid == PLPGSQL_OID {
        return find("plpgsql").map(|x| x.comment.to_string());
    }
    cat.extensions.values().find(|x| x.oid == oid).and_then(|x| x.comment.clone())
}

/// A function of an installed extension.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// Its OID in this database.
    pub oid: u32,
    /// The extension.
    pub ext: &'a ExtensionDef,
    /// Its pg_proc row (whose own OID is PostgreSQL's, not this one).
    pub proc: &'static Proc,
    /// What implements it.
    pub bind: fn(&str) -> Option<Func>,
}

/// Every function of every installed extension.
pub fn members(cat: &Catalog) -> impl Iterator<Item = Member<'_>> + '_ {
    cat.extensions.values().flat_map(|ext| {
        let x = find(&ext.name);
        let procs = x.map(Extension::procs).unwrap_or_default();
        let bind = x.map_or((|_| None) as fn(&str) -> Option<Func>, |x| x.bind);
        procs.iter().take(ext.members as usize).enumerate().map(move |(i, proc)| Member {
            oid: ext.oid.wrapping_add(1 + i as u32),
            ext,
            proc,
            bind,
        })
    })
}

/// The installed extension function with this OID.
pub fn member(cat: &Catalog, oid: u32) -> Option<Member<'_>> {
    members(cat).find(|m| m.oid == oid)
}

/// The call's resolution: the function, its result type and the types its
/// arguments are coerced to.
pub type Resolved = (Func, DataType, Vec<Option<DataType>>);

/// The installed extension function a call of `name` with arguments of
/// these types names: in `schema` when the call names one, else in the
/// first schema of the search path that has a match. None when no
/// installed extension has one.
pub fn resolve(
    cat: &Catalog,
    schema: Option<&str>,
    name: &str,
    args: &[DataType],
) -> Option<Result<Resolved>> {
    if cat.extensions.is_empty() {
        return None;
    }
    let path: Vec<u32> = match schema {
        Some(s) => vec![cat.namespace_oid(s)?],
        None => cat.path.types.clone(),
    };
    for ns in path {
        let fits: Vec<(Member<'_>, Vec<DataType>)> = members(cat)
            .filter(|m| m.ext.namespace == ns && m.proc.name == name)
            .filter_map(|m| params(m.proc, args).map(|p| (m, p)))
            .collect();
        if fits.is_empty() {
            continue;
        }
        // The best candidate takes the most arguments as they are, then
        // the most unknown literals as text (the preferred string type).
        let score = |p: &[DataType]| {
            let exact = args.iter().zip(p).filter(|(a, p)| a == p).count();
            let text = args
                .iter()
                .zip(p)
                .filter(|(a, p)| **a == DataType::Unknown && **p == DataType::Text)
                .count();
            (exact, text)
        };
        let best = fits.iter().map(|(_, p)| score(p)).max().unwrap_or_default();
        let mut top = fits.into_iter().filter(|(_, p)| score(p) == best);
        let (m, params) = top.next()?;
        if top.next().is_some() {
            return Some(Err(crate::func::ambiguous_function(name, args)));
        }
        return Some(bind(m, params));
    }
    None
}

/// The parameter types of `p` if arguments of these types can be passed
/// to it (as they are, as unknown literals, or by an implicit cast).
fn params(p: &Proc, args: &[DataType]) -> Option<Vec<DataType>> {
    if p.argtypes.len() != args.len() {
        return None;
    }
    let params: Vec<DataType> =
        p.argtypes.iter().map(|&o| DataType::from_oid(o)).collect::<Option<_>>()?;
    let fits = args
        .iter()
        .zip(&params)
        .all(|(a, p)| a == p || *a == DataType::Unknown || sqltypes::cast::can_implicit_cast(a, p));
    fits.then_some(params)
}

fn bind(m: Member<'_>, params: Vec<DataType>) -> Result<Resolved> {
    let Some(f) = (m.bind)(&m.proc.src) else {
        bail!(
            InternalError,
            "function {} of extension {} has no implementation",
            m.proc.name,
            m.ext.name
        );
    };
    let Some(ret) = DataType::from_oid(m.proc.rettype) else {
        bail!(InternalError, "function {} returns an unknown type", m.proc.name);
    };
    Ok((f, ret, params.into_iter().map(Some).collect()))
}

/// The schema to name in stored text for an unqualified call of `name`:
/// the schema of the installed extension function the session's search
/// path finds, when no built-in function has that name. Stored
/// expressions are read back with another search path (see deparse.rs).
pub fn call_schema(cat: &Catalog, name: &str) -> Option<u32> {
    if cat.extensions.is_empty() || builtins::procs().iter().any(|p| p.name == name) {
        return None;
    }
    // The first schema of the path that has one.
    let path = &cat.path.types;
    members(cat)
        .filter(|m| m.proc.name == name)
        .filter_map(|m| {
            path.iter().position(|&p| p == m.ext.namespace).map(|i| (i, m.ext.namespace))
        })
        .min()
        .map(|(_, ns)| ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every function in the data files has an implementation, and every
    /// type they name is one Strata has.
    #[test]
    fn every_listed_function_is_implemented() {
        for x in &AVAILABLE {
            for p in x.procs() {
                assert!((x.bind)(&p.src).is_some(), "{} {}", x.name, p.name);
                assert!(DataType::from_oid(p.rettype).is_some(), "{}", p.name);
                assert!(p.argtypes.iter().all(|&o| DataType::from_oid(o).is_some()), "{}", p.name);
            }
        }
        assert_eq!(find("uuid-ossp").map(|x| x.procs().len()), Some(10));
    }
}
