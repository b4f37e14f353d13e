//! Multi-version storage on a plain sorted engine.
//!
//! VERSIONS. Every committed write of user key K at commit timestamp T is
//! stored at the engine key
//!
//! ```text
//!   escape(K) ++ 0x00 0x00 ++ (u64::MAX - T) big-endian
//! ```
//!
//! where `escape` doubles every 0x00 byte as 0x00 0xFF. The terminator
//! 0x00 0x00 sorts below any continuation of K, so user-key order is kept and
//! all versions of one key are contiguous, newest first:
//!
//! ```text
//!   a@9  a@5  a@2  ab@7  b@3        (engine order)
//! ```
//!
//! The value is a tag byte (1 = put, 0 = tombstone) plus the bytes.
//!
//! VISIBILITY. A snapshot at timestamp S sees, for each key, the newest
//! version with T <= S. Reading one key is a single seek to
//! `escape(K) ++ 00 00 ++ (MAX - S)`. Commits become visible atomically: the
//! commit worker writes a whole group of transactions in one engine batch and
//! only then advances the published timestamp that new snapshots read at.
//!
//! GARBAGE COLLECTION. Versions shadowed by a newer version that every active
//! snapshot can see are garbage; so is storage dropped by DDL. This module
//! provides the encoding; the node tracks the oldest active snapshot (the GC
//! watermark), schedules range deletions for dropped storage, and RocksDB's
//! compaction filter (engine/rocks.rs) drops shadowed versions as it
//! compacts. Tombstones themselves are kept (dropping one safely needs to
//! know no older version remains in a lower level).

use kvapi::{Error, Result};

use crate::engine::Engine;

/// Engine keys starting with 0x00 belong to the node itself (tenant keys
/// start with b't'). This one holds the last commit timestamp.
pub const META_LAST_TS: &[u8] = &[0x00, b'm', b't'];

const TAG_TOMBSTONE: u8 = 0;
const TAG_PUT: u8 = 1;

/// The user-key part of an engine key: everything up to and including the
/// 0x00 0x00 terminator (the prefix bloom filters are built on it). Keys
/// without a terminator (node metadata) are returned whole.
pub fn user_prefix(vkey: &[u8]) -> &[u8] {
    let mut i = 0;
    while i + 1 < vkey.len() {
        if vkey[i] == 0 {
            if vkey[i + 1] == 0 {
                return &vkey[..i + 2];
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    vkey
}

/// True if `vkey` is a versioned key (has the user-key terminator).
pub fn has_user_prefix(vkey: &[u8]) -> bool {
    user_prefix(vkey).len() < vkey.len() || vkey.ends_with(&[0, 0])
}

/// Appends `escape(key) ++ 00 00` to `out`.
pub fn encode_prefix(key: &[u8], out: &mut Vec<u8>) {
    for &b in key {
        if b == 0 {
            out.extend_from_slice(&[0x00, 0xFF]);
        } else {
            out.push(b);
        }
    }
    out.extend_from_slice(&[0x00, 0x00]);
}

/// The engine key of `key` at version `ts`.
pub fn encode(key: &[u8], ts: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 12);
    encode_prefix(key, &mut out);
    out.extend_from_slice(&(u64::MAX - ts).to_be_bytes());
    out
}

/// Splits an engine key into the user key and the version.
pub fn decode(vkey: &[u8]) -> Result<(Vec<u8>, u64)> {
    let corrupt = || Error::Corrupt(format!("bad versioned key {vkey:x?}"));
    if vkey.len() < 10 {
        return Err(corrupt());
    }
    let (body, ts) = vkey.split_at(vkey.len() - 8);
    let ts = u64::MAX - u64::from_be_bytes(ts.try_into().map_err(|_| corrupt())?);
    let mut key = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        match (body[i], body.get(i + 1)) {
            (0, Some(0xFF)) => {
                key.push(0);
                i += 2;
            }
            (0, Some(0x00)) if i + 2 == body.len() => return Ok((key, ts)),
            (0, _) => return Err(corrupt()),
            (b, _) => {
                key.push(b);
                i += 1;
            }
        }
    }
    Err(corrupt())
}

/// Encodes a stored value.
pub fn encode_value(v: Option<&[u8]>) -> Vec<u8> {
    match v {
        None => vec![TAG_TOMBSTONE],
        Some(b) => {
            let mut out = Vec::with_capacity(b.len() + 1);
            out.push(TAG_PUT);
            out.extend_from_slice(b);
            out
        }
    }
}

/// Decodes a stored value (None for a tombstone).
pub fn decode_value(v: &[u8]) -> Result<Option<Vec<u8>>> {
    match v.split_first() {
        Some((&TAG_PUT, rest)) => Ok(Some(rest.to_vec())),
        Some((&TAG_TOMBSTONE, _)) => Ok(None),
        _ => Err(Error::Corrupt("bad versioned value".into())),
    }
}

/// The engine range holding every version of every key in `[start, end)`.
pub fn range(start: &[u8], end: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut s = Vec::with_capacity(start.len() + 2);
    encode_prefix(start, &mut s);
    let mut e = Vec::with_capacity(end.len() + 2);
    encode_prefix(end, &mut e);
    (s, e)
}

/// Reads `key` as of timestamp `ts`: the newest version at or below it.
/// Returns the version's timestamp and value (None = deleted).
pub fn get_at(engine: &dyn Engine, key: &[u8], ts: u64) -> Result<Option<(u64, Option<Vec<u8>>)>> {
    let start = encode(key, ts);
    let mut end = Vec::with_capacity(key.len() + 2);
    encode_prefix(key, &mut end);
    end.pop();
    end.push(0x01);
    let mut found = None;
    let mut err = None;
    engine.scan_versions(&start, &end, &mut |k, v| {
        found = Some(match (decode(k), decode_value(v)) {
            (Ok((_, t)), Ok(val)) => (t, val),
            (Err(e), _) | (_, Err(e)) => {
                err = Some(e);
                return false;
            }
        });
        false
    })?;
    match err {
        Some(e) => Err(e),
        None => Ok(found),
    }
}

/// A visitor of stored versions: (user key, version, stored value) to
/// whether to go on.
type VersionVisitor<'a> = dyn FnMut(Vec<u8>, u64, &[u8]) -> Result<bool> + 'a;

/// Runs an engine scan of `[start, end)` (descending with `rev`) and calls
/// `f` with each entry's user key, version and stored value until it
/// returns false; the first error (a corrupt key, or `f`'s) stops it.
fn visit_versions(
    engine: &dyn Engine,
    (start, end): (&[u8], &[u8]),
    rev: bool,
    f: &mut VersionVisitor<'_>,
) -> Result<()> {
    let mut err = None;
    let mut visit = |k: &[u8], v: &[u8]| match decode(k).and_then(|(key, t)| f(key, t, v)) {
        Ok(go) => go,
        Err(e) => {
            err = Some(e);
            false
        }
    };
    match rev {
        false => engine.scan(start, end, &mut visit)?,
        true => engine.scan_rev(start, end, &mut visit)?,
    }
    err.map_or(Ok(()), Err)
}

/// Visits the newest version at or below `ts` of each key in `[start, end)`,
/// in key order (deleted keys included as None), until `f` returns false.
pub fn scan_at(
    engine: &dyn Engine,
    start: &[u8],
    end: &[u8],
    ts: u64,
    f: &mut dyn FnMut(Vec<u8>, Option<Vec<u8>>) -> bool,
) -> Result<()> {
    let (s, e) = range(start, end);
    let mut last: Option<Vec<u8>> = None;
    visit_versions(engine, (&s, &e), false, &mut |key, t, v| {
        if t > ts || last.as_deref() == Some(&key[..]) {
            return Ok(true);
        }
        last = Some(key.clone());
        Ok(f(key, decode_value(v)?))
    })
}

/// Like [`scan_at`], in descending key order. Each key's versions arrive
/// oldest first here, so a key's visible version is known only when the
/// next (smaller) key begins.
pub fn scan_at_rev(
    engine: &dyn Engine,
    start: &[u8],
    end: &[u8],
    ts: u64,
    f: &mut dyn FnMut(Vec<u8>, Option<Vec<u8>>) -> bool,
) -> Result<()> {
    let (s, e) = range(start, end);
    // Calls `f` with a finished key's visible version, if it has one.
    let emit = |f: &mut dyn FnMut(Vec<u8>, Option<Vec<u8>>) -> bool,
                key: Vec<u8>,
                stored: Option<Vec<u8>>|
     -> Result<bool> {
        match stored {
            Some(b) => Ok(f(key, decode_value(&b)?)),
            None => Ok(true),
        }
    };
    // The key being read and its newest stored value at or below `ts`.
    let mut cur: Option<(Vec<u8>, Option<Vec<u8>>)> = None;
    let mut stopped = false;
    visit_versions(engine, (&s, &e), true, &mut |key, t, v| {
        if cur.as_ref().is_none_or(|(c, _)| *c != key) {
            if let Some((done, stored)) = cur.replace((key, None)) {
                if !emit(f, done, stored)? {
                    stopped = true;
                    return Ok(false);
                }
            }
        }
        if let (true, Some((_, stored))) = (t <= ts, cur.as_mut()) {
            *stored = Some(v.to_vec());
        }
        Ok(true)
    })?;
    match (stopped, cur) {
        (false, Some((key, stored))) => emit(f, key, stored).map(|_| ()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::memory::MemEngine;
    use crate::engine::WriteBatch;
    use proptest::prelude::*;

    #[test]
    fn versions_sort_newest_first_and_keys_in_order() {
        assert!(encode(b"a", 9) < encode(b"a", 5));
        assert!(encode(b"a", 1) < encode(b"ab", 9));
        assert!(encode(b"a\x00", 1) > encode(b"a", 0));
        assert!(encode(b"a\x00", 1) < encode(b"a\x01", 9));
        assert_eq!(decode(&encode(b"x\x00y", 42)).ok(), Some((b"x\x00y".to_vec(), 42)));
    }

    #[test]
    fn user_prefix_stops_at_the_terminator() {
        let k = encode(b"a\x00b", 7);
        assert_eq!(user_prefix(&k), &[b'a', 0, 0xFF, b'b', 0, 0]);
        assert!(has_user_prefix(&k));
        assert!(!has_user_prefix(META_LAST_TS));
    }

    #[test]
    fn reads_at_snapshots() {
        let e = MemEngine::new();
        let mut b = WriteBatch::default();
        b.puts.push((encode(b"k", 2), encode_value(Some(b"v2"))));
        b.puts.push((encode(b"k", 5), encode_value(None)));
        b.puts.push((encode(b"k", 7), encode_value(Some(b"v7"))));
        e.write(b, false).expect("write");
        assert_eq!(get_at(&e, b"k", 1).expect("get"), None);
        assert_eq!(get_at(&e, b"k", 3).expect("get"), Some((2, Some(b"v2".to_vec()))));
        assert_eq!(get_at(&e, b"k", 6).expect("get"), Some((5, None)));
        assert_eq!(get_at(&e, b"k", 9).expect("get"), Some((7, Some(b"v7".to_vec()))));
        assert_eq!(get_at(&e, b"j", 9).expect("get"), None);
    }

    proptest! {
        #[test]
        fn order_preserved(a in proptest::collection::vec(any::<u8>(), 0..6), b in proptest::collection::vec(any::<u8>(), 0..6), ta in any::<u64>(), tb in any::<u64>()) {
            if a != b {
                prop_assert_eq!(encode(&a, ta).cmp(&encode(&b, tb)), a.cmp(&b));
            } else {
                prop_assert_eq!(encode(&a, ta).cmp(&encode(&b, tb)), tb.cmp(&ta));
            }
            prop_assert_eq!(decode(&encode(&a, ta)).ok(), Some((a.clone(), ta)));
        }

        #[test]
        fn reverse_scan_is_the_forward_scan_reversed(
            writes in proptest::collection::vec((0u8..5, 1u64..8, proptest::option::of(any::<u8>())), 0..30),
            ts in 0u64..9,
            stop in 0usize..6,
        ) {
            let e = MemEngine::new();
            let mut b = WriteBatch::default();
            for (k, t, v) in &writes {
                let v = v.map(|v| vec![v]);
                b.puts.push((encode(&[b'k', *k], *t), encode_value(v.as_deref())));
            }
            e.write(b, false).expect("write");
            let mut fwd = Vec::new();
            scan_at(&e, b"k", b"l", ts, &mut |k, v| {
                fwd.push((k, v));
                true
            }).expect("scan");
            let mut rev = Vec::new();
            scan_at_rev(&e, b"k", b"l", ts, &mut |k, v| {
                rev.push((k, v));
                true
            }).expect("scan");
            rev.reverse();
            prop_assert_eq!(&rev, &fwd);
            // Stopping early visits a prefix of the reversed order.
            let mut part = Vec::new();
            scan_at_rev(&e, b"k", b"l", ts, &mut |k, v| {
                part.push((k, v));
                part.len() < stop.max(1)
            }).expect("scan");
            let want: Vec<_> = fwd.iter().rev().take(stop.max(1)).cloned().collect();
            prop_assert_eq!(part, want);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..30)) {
            let _ = decode(&bytes);
            let _ = decode_value(&bytes);
        }
    }
}
