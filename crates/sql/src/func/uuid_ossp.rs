//! The functions of the `uuid-ossp` extension: time-based (version 1),
//! name-based (versions 3 and 5, MD5 and SHA-1) and random (version 4)
//! UUIDs, and the nil and RFC 4122 namespace constants.
//!
//! Version 1 UUIDs carry a node ID where PostgreSQL's put the machine's MAC
//! address. Strata does not read MAC addresses: uuid_generate_v1 uses one
//! random node ID per process with the multicast bit set (RFC 4122, 4.5),
//! uuid_generate_v1mc a fresh one per call, as PostgreSQL's does.

use std::sync::OnceLock;

use sqltypes::Value;
use uuid::{ContextV1, Timestamp, Uuid};

use crate::error::Result;

/// One function, named by its pg_proc `prosrc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UuidFunc {
    /// uuid_nil(): all zeros
    Nil,
    /// uuid_ns_dns(), uuid_ns_url(), uuid_ns_oid(), uuid_ns_x500()
    Namespace(Namespace),
    /// uuid_generate_v1(): time and this process's node ID
    V1,
    /// uuid_generate_v1mc(): time and a random multicast node ID
    V1mc,
    /// uuid_generate_v3(namespace, name): MD5 of both
    V3,
    /// uuid_generate_v4(): random
    V4,
    /// uuid_generate_v5(namespace, name): SHA-1 of both
    V5,
}

/// The RFC 4122 namespaces of name-based UUIDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    /// Domain names.
    Dns,
    /// URLs.
    Url,
    /// ISO OIDs.
    Oid,
    /// X.500 distinguished names.
    X500,
}

impl UuidFunc {
    /// The function whose C symbol (pg_proc.prosrc) is `src`.
    pub fn from_src(src: &str) -> Option<UuidFunc> {
        Some(match src {
            "uuid_nil" => UuidFunc::Nil,
            "uuid_ns_dns" => UuidFunc::Namespace(Namespace::Dns),
            "uuid_ns_url" => UuidFunc::Namespace(Namespace::Url),
            "uuid_ns_oid" => UuidFunc::Namespace(Namespace::Oid),
            "uuid_ns_x500" => UuidFunc::Namespace(Namespace::X500),
            "uuid_generate_v1" => UuidFunc::V1,
            "uuid_generate_v1mc" => UuidFunc::V1mc,
            "uuid_generate_v3" => UuidFunc::V3,
            "uuid_generate_v4" => UuidFunc::V4,
            "uuid_generate_v5" => UuidFunc::V5,
            _ => return None,
        })
    }
}

/// Evaluates `f` (all are strict).
pub fn call(f: UuidFunc, args: Vec<Value>) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let name_based = |args: &[Value]| match args {
        [Value::Uuid(ns), Value::Text(name)] => Some((Uuid::from_bytes(*ns), name.clone())),
        _ => None,
    };
    let u = match f {
        UuidFunc::Nil => Uuid::nil(),
        UuidFunc::Namespace(ns) => match ns {
            Namespace::Dns => Uuid::NAMESPACE_DNS,
            Namespace::Url => Uuid::NAMESPACE_URL,
            Namespace::Oid => Uuid::NAMESPACE_OID,
            Namespace::X500 => Uuid::NAMESPACE_X500,
        },
        UuidFunc::V1 => Uuid::new_v1(now(), process_node()),
        UuidFunc::V1mc => Uuid::new_v1(now(), &multicast_node()),
        UuidFunc::V4 => return Ok(Value::Uuid(sqltypes::uuid::v4(rand::random()))),
        UuidFunc::V3 | UuidFunc::V5 => {
            let Some((ns, name)) = name_based(&args) else {
                crate::bail!(InternalError, "uuid_generate_v3/v5 called with {args:?}");
            };
            match f {
                UuidFunc::V3 => Uuid::new_v3(&ns, name.as_bytes()),
                _ => Uuid::new_v5(&ns, name.as_bytes()),
            }
        }
    };
    Ok(Value::Uuid(u.into_bytes()))
}

/// The current time, with the process's clock sequence (random at start,
/// advanced when two calls see the same time).
fn now() -> Timestamp {
    static CONTEXT: OnceLock<ContextV1> = OnceLock::new();
    Timestamp::now(CONTEXT.get_or_init(|| ContextV1::new(rand::random())))
}

/// This process's node ID for version 1 UUIDs.
fn process_node() -> &'static [u8; 6] {
    static NODE: OnceLock<[u8; 6]> = OnceLock::new();
    NODE.get_or_init(multicast_node)
}

/// A random node ID with the multicast bit set, so that it cannot clash
/// with a real MAC address.
fn multicast_node() -> [u8; 6] {
    let mut node: [u8; 6] = rand::random();
    node[0] |= 0x01;
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuid(f: UuidFunc, args: Vec<Value>) -> String {
        match call(f, args).expect("call") {
            Value::Uuid(u) => Uuid::from_bytes(u).to_string(),
            other => panic!("not a uuid: {other:?}"),
        }
    }

    /// Values PostgreSQL 15's uuid-ossp returns for the same calls.
    #[test]
    fn name_based_uuids_match_postgres() {
        let dns = Value::Uuid(Uuid::NAMESPACE_DNS.into_bytes());
        let url = Value::Uuid(Uuid::NAMESPACE_URL.into_bytes());
        let v3 = uuid(UuidFunc::V3, vec![dns, Value::Text("www.example.com".into())]);
        assert_eq!(v3, "5df41881-3aed-3515-88a7-2f4a814cf09e");
        let v5 = uuid(UuidFunc::V5, vec![url, Value::Text("x".into())]);
        assert_eq!(v5, "4cd605e7-afa2-5360-b5b9-c5e9fb5c76f4");
        let oid = uuid(UuidFunc::Namespace(Namespace::Oid), vec![]);
        assert_eq!(oid, "6ba7b812-9dad-11d1-80b4-00c04fd430c8");
    }

    #[test]
    fn time_based_uuids_differ_and_carry_multicast_nodes() {
        let a = Uuid::parse_str(&uuid(UuidFunc::V1, vec![])).expect("uuid");
        let b = Uuid::parse_str(&uuid(UuidFunc::V1, vec![])).expect("uuid");
        assert_ne!(a, b);
        assert_eq!(a.get_version_num(), 1);
        assert_eq!(a.as_bytes()[10..], b.as_bytes()[10..], "one node per process");
        assert_eq!(a.as_bytes()[10] & 1, 1, "multicast bit");
        let c = Uuid::parse_str(&uuid(UuidFunc::V1mc, vec![])).expect("uuid");
        assert_eq!(c.as_bytes()[10] & 1, 1, "multicast bit");
    }
}
