//! Property test: random interleavings of begin/put/delete/get/scan/commit/
//! abort across several transactions, on both engines, checked against a
//! simple model of snapshot isolation: a transaction reads the committed
//! state as of its begin plus its own writes, and commits apply atomically.

use std::collections::BTreeMap;

use kvapi::{IsolationLevel, Key, KeyRange, KvClient, LockMode, TenantId, Txn};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Begin(usize),
    Put(usize, u8, u8),
    Delete(usize, u8),
    Get(usize, u8),
    Scan(usize),
    ScanReverse(usize),
    Commit(usize),
    Abort(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let t = 0usize..3;
    let k = 0u8..6;
    prop_oneof![
        t.clone().prop_map(Op::Begin),
        (t.clone(), k.clone(), any::<u8>()).prop_map(|(t, k, v)| Op::Put(t, k, v)),
        (t.clone(), k.clone()).prop_map(|(t, k)| Op::Delete(t, k)),
        (t.clone(), k).prop_map(|(t, k)| Op::Get(t, k)),
        t.clone().prop_map(Op::Scan),
        t.clone().prop_map(Op::ScanReverse),
        t.clone().prop_map(Op::Commit),
        t.prop_map(Op::Abort),
    ]
}

type Model = BTreeMap<u8, u8>;

struct Open<T> {
    txn: T,
    snapshot: Model,
    own: BTreeMap<u8, Option<u8>>,
}

impl<T> Open<T> {
    fn view(&self) -> Model {
        let mut m = self.snapshot.clone();
        for (k, v) in &self.own {
            match v {
                Some(v) => m.insert(*k, *v),
                None => m.remove(k),
            };
        }
        m
    }
}

fn key(k: u8) -> Key {
    Key::new(TenantId(7), &[b'k', k])
}

fn run(node: kv::KvNode, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let client = node.client(TenantId(7));
    let mut committed: Model = BTreeMap::new();
    let mut open: Vec<Option<Open<kv::EmbeddedTxn>>> = vec![None, None, None];
    for op in ops {
        match op {
            Op::Begin(t) => {
                if open[t].is_none() {
                    let txn =
                        rt.block_on(client.begin(IsolationLevel::RepeatableRead)).expect("begin");
                    open[t] = Some(Open { txn, snapshot: committed.clone(), own: BTreeMap::new() });
                }
            }
            Op::Put(t, k, v) => {
                if let Some(o) = open[t].as_mut() {
                    o.txn.put(key(k), vec![v], LockMode::Private).expect("put");
                    o.own.insert(k, Some(v));
                }
            }
            Op::Delete(t, k) => {
                if let Some(o) = open[t].as_mut() {
                    o.txn.delete(key(k), LockMode::Private).expect("delete");
                    o.own.insert(k, None);
                }
            }
            Op::Get(t, k) => {
                if let Some(o) = open[t].as_ref() {
                    let got = rt.block_on(o.txn.get(&key(k))).expect("get");
                    prop_assert_eq!(got, o.view().get(&k).map(|v| vec![*v]));
                }
            }
            Op::Scan(t) => {
                if let Some(o) = open[t].as_ref() {
                    let range = KeyRange::prefix(TenantId(7), b"k");
                    // A small limit exercises paging through the merge.
                    let mut got = Vec::new();
                    let mut start = range.start.clone();
                    loop {
                        let batch = rt
                            .block_on(o.txn.scan(
                                &KeyRange { start: start.clone(), end: range.end.clone() },
                                2,
                            ))
                            .expect("scan");
                        let n = batch.len();
                        for (k, v) in &batch {
                            got.push((k.rest()[1], v[0]));
                        }
                        match batch.last() {
                            Some((k, _)) if n == 2 => {
                                let mut next = k.rest().to_vec();
                                next.push(0);
                                start = Key::new(TenantId(7), &next);
                            }
                            _ => break,
                        }
                    }
                    let want: Vec<(u8, u8)> = o.view().into_iter().collect();
                    prop_assert_eq!(got, want);
                }
            }
            Op::ScanReverse(t) => {
                if let Some(o) = open[t].as_ref() {
                    let range = KeyRange::prefix(TenantId(7), b"k");
                    let mut got = Vec::new();
                    let mut end = range.end.clone();
                    loop {
                        let batch = rt
                            .block_on(o.txn.scan_reverse(
                                &KeyRange { start: range.start.clone(), end: end.clone() },
                                2,
                            ))
                            .expect("scan");
                        let n = batch.len();
                        for (k, v) in &batch {
                            got.push((k.rest()[1], v[0]));
                        }
                        match batch.last() {
                            Some((k, _)) if n == 2 => end = k.clone(),
                            _ => break,
                        }
                    }
                    let want: Vec<(u8, u8)> = o.view().into_iter().rev().collect();
                    prop_assert_eq!(got, want);
                }
            }
            Op::Commit(t) => {
                if let Some(o) = open[t].take() {
                    let view = o.view();
                    let own = o.own.clone();
                    rt.block_on(o.txn.commit()).expect("commit");
                    for (k, v) in own {
                        match v {
                            Some(v) => committed.insert(k, v),
                            None => committed.remove(&k),
                        };
                    }
                    let _ = view;
                }
            }
            Op::Abort(t) => {
                if let Some(o) = open[t].take() {
                    o.txn.abort();
                }
            }
        }
    }
    // A fresh transaction sees exactly the committed model.
    let txn = rt.block_on(client.begin(IsolationLevel::ReadCommitted)).expect("begin");
    for k in 0..6u8 {
        let got = rt.block_on(txn.get(&key(k))).expect("get");
        prop_assert_eq!(got, committed.get(&k).map(|v| vec![*v]));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn memory_engine_matches_model(ops in proptest::collection::vec(op(), 1..60)) {
        run(kv::KvNode::memory(), ops)?;
    }

    #[test]
    fn rocks_engine_matches_model(ops in proptest::collection::vec(op(), 1..60)) {
        let dir = tempfile::tempdir().expect("dir");
        run(kv::KvNode::open(dir.path()).expect("open"), ops)?;
    }
}

#[test]
fn commits_survive_reopen() {
    let dir = tempfile::tempdir().expect("dir");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    {
        let node = kv::KvNode::open(dir.path()).expect("open");
        let mut t = rt
            .block_on(node.client(TenantId(7)).begin(IsolationLevel::ReadCommitted))
            .expect("begin");
        t.put(key(1), b"durable".to_vec(), LockMode::Private).expect("put");
        rt.block_on(t.commit()).expect("commit");
    }
    let node = kv::KvNode::open(dir.path()).expect("reopen");
    let t =
        rt.block_on(node.client(TenantId(7)).begin(IsolationLevel::ReadCommitted)).expect("begin");
    assert_eq!(rt.block_on(t.get(&key(1))).expect("get"), Some(b"durable".to_vec()));
    // Timestamps keep growing after a restart.
    assert!(t.snapshot().0 >= 1);
}

#[test]
fn tenant_guard_rejects_foreign_keys() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let node = kv::KvNode::memory();
    let mut t =
        rt.block_on(node.client(TenantId(7)).begin(IsolationLevel::ReadCommitted)).expect("begin");
    let foreign = Key::new(TenantId(8), b"x");
    assert!(matches!(rt.block_on(t.get(&foreign)), Err(kvapi::Error::TenantViolation(_))));
    assert!(matches!(
        t.put(foreign.clone(), vec![], LockMode::Private),
        Err(kvapi::Error::TenantViolation(_))
    ));
    assert!(matches!(rt.block_on(t.lock(&[foreign])), Err(kvapi::Error::TenantViolation(_))));
    let wide = KeyRange { start: Key::new(TenantId(7), b""), end: Key::new(TenantId(9), b"") };
    assert!(matches!(rt.block_on(t.scan(&wide, 10)), Err(kvapi::Error::TenantViolation(_))));
}

#[test]
fn stored_size_counts_committed_versions_of_the_range_only() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("dir");
    for node in [kv::KvNode::memory(), kv::KvNode::open(dir.path()).expect("open")] {
        let client = node.client(TenantId(7));
        let begin = || rt.block_on(client.begin(IsolationLevel::ReadCommitted));
        let range = KeyRange { start: key(1), end: key(3) };
        let size = |t: &kv::EmbeddedTxn| rt.block_on(t.stored_size(&range)).expect("size");
        let mut t = begin().expect("begin");
        assert_eq!(size(&t), 0);
        t.put(key(1), vec![0; 100], LockMode::Private).expect("put");
        t.put(key(5), vec![0; 1000], LockMode::Private).expect("put");
        // Uncommitted writes are not stored yet.
        assert_eq!(size(&t), 0);
        rt.block_on(t.commit()).expect("commit");
        let one = size(&begin().expect("begin"));
        assert!((100..200).contains(&one), "{one}");
        // A second version is stored beside the first until collected.
        let mut t = begin().expect("begin");
        t.put(key(1), vec![0; 100], LockMode::Private).expect("put");
        rt.block_on(t.commit()).expect("commit");
        assert!(size(&begin().expect("begin")) > one);
        let t = begin().expect("begin");
        let wide = KeyRange { start: key(0), end: Key::new(TenantId(9), b"") };
        assert!(matches!(rt.block_on(t.stored_size(&wide)), Err(kvapi::Error::TenantViolation(_))));
    }
}

#[test]
fn a_lock_wait_past_the_lock_timeout_fails_and_leaves_no_trace() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let node = kv::KvNode::memory();
    let begin = || rt.block_on(node.client(TenantId(7)).begin(IsolationLevel::ReadCommitted));
    let mut holder = begin().expect("begin");
    rt.block_on(holder.lock(&[key(1)])).expect("lock");
    let mut waiter = begin().expect("begin");
    waiter.set_lock_timeout(Some(std::time::Duration::from_millis(20)));
    assert!(matches!(rt.block_on(waiter.lock(&[key(1)])), Err(kvapi::Error::LockTimeout)));
    assert!(matches!(rt.block_on(waiter.lock_shared(&[key(1)])), Err(kvapi::Error::LockTimeout)));
    // The timed-out waits left no queue entry: once the holder ends, the
    // key is free at once, for the waiter and for a third transaction.
    rt.block_on(holder.commit()).expect("commit");
    let mut third = begin().expect("begin");
    let got = rt.block_on(third.try_lock(&[key(1)], false)).expect("try");
    assert!(got.iter().all(Option::is_some), "the key is free");
    third.abort();
    waiter.set_lock_timeout(None);
    rt.block_on(waiter.lock(&[key(1)])).expect("lock after the holder ended");
}
