//! The KV server over its RPC: transactions through `kvrpc::RpcClient`
//! behave as the embedded ones do, and the server holds the tenant
//! boundary against crafted requests (foreign keys, ranges leaving the
//! prefix, forged tokens, no Hello, admin calls without the admin token,
//! garbage frames and absurd lengths), answering each with an error and
//! going on serving everyone else.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use kvapi::{IsolationLevel, Key, KeyRange, KvClient, LockMode, TenantId, Txn};
use kvrpc::proto::{self, Call, Op, Reply, ToClient, ToServer, WireError};
use kvrpc::{AdminClient, KvAddr, RpcClient, Secret};
use tokio::io::AsyncWriteExt;
use tokio_rustls::rustls::ServerConfig;
use tokio_util::codec::Framed;

struct Cluster {
    _node: kv::KvNode,
    addr: KvAddr,
    secret: Secret,
    _dir: tempfile::TempDir,
    a: u64,
    b: u64,
}

async fn cluster() -> Cluster {
    let dir = tempfile::tempdir().expect("temp dir");
    let node = kv::KvNode::memory();
    let secret = Secret::from_bytes(b"0123456789abcdef0123456789abcdef");
    let server = node.server(secret.clone()).await.expect("server");
    let path = dir.path().join("kv.sock");
    let unix = tokio::net::UnixListener::bind(&path).expect("bind");
    tokio::spawn(server.serve(None, Some(unix), None));
    let addr = KvAddr::Unix(path);
    let admin = AdminClient::connect(&addr, &secret.admin_token()).await.expect("admin");
    let a = admin.create("a").await.expect("create a").id;
    let b = admin.create("b").await.expect("create b").id;
    Cluster { _node: node, addr, secret, _dir: dir, a, b }
}

impl Cluster {
    async fn client(&self, name: &str, id: u64) -> RpcClient {
        RpcClient::connect(self.addr.clone(), name, &self.secret.tenant_token(id))
            .await
            .expect("connect")
    }

    /// A raw framed connection that has said hello as `name`.
    async fn raw(
        &self,
        name: &str,
        token: &str,
    ) -> (Framed<tokio::net::UnixStream, tokio_util::codec::LengthDelimitedCodec>, ToClient) {
        let KvAddr::Unix(p) = &self.addr else { unreachable!() };
        let s = tokio::net::UnixStream::connect(p).await.expect("connect");
        let mut f = Framed::new(s, proto::codec());
        let hello = ToServer::Hello { tenant: name.into(), token: token.into(), pid: 1 };
        f.send(proto::encode(&hello)).await.expect("send");
        let answer = next(&mut f).await.expect("an answer to hello");
        (f, answer)
    }
}

async fn next(
    f: &mut Framed<tokio::net::UnixStream, tokio_util::codec::LengthDelimitedCodec>,
) -> Option<ToClient> {
    let frame = tokio::time::timeout(Duration::from_secs(10), f.next()).await.expect("no hang")?;
    proto::decode(&frame.ok()?).ok()
}

/// Sends one request of a fresh transaction and returns its result.
async fn request(
    f: &mut Framed<tokio::net::UnixStream, tokio_util::codec::LengthDelimitedCodec>,
    txn: u64,
    ops: Vec<Op>,
    call: Call,
) -> Result<Reply, WireError> {
    let mut all = vec![Op::Begin { isolation: proto::Isolation::ReadCommitted }];
    all.extend(ops);
    f.send(proto::encode(&ToServer::Request { id: txn, txn, ops: all, call })).await.expect("send");
    match next(f).await {
        Some(ToClient::Response { result, .. }) => result,
        other => panic!("expected a response, got {other:?}"),
    }
}

/// Asserts that `task` is still waiting a while after it started.
async fn assert_waits<T>(task: &tokio::task::JoinHandle<T>, what: &str) {
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!task.is_finished(), "{what}");
}

/// The result of `task`, which must end soon.
async fn joined<T>(task: tokio::task::JoinHandle<T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), task).await.expect("no hang").expect("task")
}

fn key(tenant: u64, rest: &[u8]) -> Key {
    Key::new(TenantId(tenant), rest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_over_rpc() {
    let c = cluster().await;
    let a = c.client("a", c.a).await;
    assert_eq!(a.tenant(), TenantId(c.a));
    let mut t = a.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    let k = key(c.a, b"k1");
    t.lock(std::slice::from_ref(&k)).await.expect("lock");
    t.put(k.clone(), b"v1".to_vec(), LockMode::Locked).expect("put");
    let sp = t.savepoint();
    t.put(key(c.a, b"k2"), b"v2".to_vec(), LockMode::Private).expect("put");
    t.rollback_to(sp);
    let range = KeyRange::prefix(TenantId(c.a), b"k");
    let rows = t.scan(&range, 10).await.expect("scan");
    assert_eq!(rows.len(), 1, "the rolled-back write is gone on the server too");
    assert_eq!(t.get_own(&k), Some(Some(b"v1".to_vec())));
    t.commit().await.expect("commit");

    let t = a.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    assert_eq!(t.get(&k).await.expect("get"), Some(b"v1".to_vec()));
    assert_ne!(t.snapshot(), kvapi::Timestamp::UNKNOWN);
    assert!(t.stored_size(&range).await.expect("size") > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_lock_wait_is_abandoned() {
    let c = cluster().await;
    let a1 = c.client("a", c.a).await;
    let a2 = c.client("a", c.a).await;
    let k = key(c.a, b"row");
    let mut holder = a1.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    holder.lock(std::slice::from_ref(&k)).await.expect("lock");
    let mut waiter = a2.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    let wait =
        tokio::time::timeout(Duration::from_millis(200), waiter.lock(std::slice::from_ref(&k)))
            .await;
    assert!(wait.is_err(), "the lock is held");
    // The Cancel the dropped wait sent travels on the waiter's connection,
    // ahead of this later call of the same transaction: once it is
    // answered, the server has abandoned the wait (the holder's End, on
    // another connection, could otherwise overtake the Cancel and grant
    // the waiter the lock).
    waiter.get(&key(c.a, b"other")).await.expect("a later call of the waiter");
    // The dropped wait left no queue entry behind: after the holder ends,
    // a third transaction gets the lock at once while the waiter's
    // transaction is still open (had its wait stayed queued, the waiter
    // would hold the lock now), and the waiter can end.
    holder.abort();
    let mut third = a1.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    let got =
        tokio::time::timeout(Duration::from_secs(10), third.lock(std::slice::from_ref(&k))).await;
    assert!(matches!(got, Ok(Ok(_))), "{got:?}");
    drop(waiter);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_locks_ride_with_the_next_request() {
    let c = cluster().await;
    let (a1, a2) = (c.client("a", c.a).await, c.client("a", c.a).await);
    let table = key(c.a, b"table");
    // DDL holds the table's key exclusively and rewrites it.
    let mut ddl = a1.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    ddl.lock(std::slice::from_ref(&table)).await.expect("lock");
    ddl.put(table.clone(), b"v2".to_vec(), LockMode::Locked).expect("put");
    // A writer queues its shared lock: no call yet, so nothing waits.
    let mut writer = a2.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    assert!(!writer.lock_shared_soon(std::slice::from_ref(&table)).await.expect("queued"));
    let other = key(c.a, b"row");
    let read = tokio::spawn(async move {
        let r = writer.get(&other).await;
        (writer, r)
    });
    assert_waits(&read, "the read carrying the lock waits for the DDL").await;
    ddl.commit().await.expect("commit");
    let (mut writer, r) = joined(read).await;
    assert!(matches!(r, Err(kvapi::Error::AssumptionFailed)), "{r:?}");
    assert!(writer.take_assumption_failed(), "reported even if the error was swallowed");
    // The lock is held now: asking again is answered unchanged, and a
    // flush with nothing queued makes no call.
    writer.refresh_snapshot();
    assert!(!writer.lock_shared_soon(std::slice::from_ref(&table)).await.expect("queued"));
    writer.flush().await.expect("flushed");
    writer.flush().await.expect("nothing to flush");
    // A shared lock on another tenant's key is refused like any other.
    let (mut f, _) = c.raw("a", &c.secret.tenant_token(c.a)).await;
    let foreign = key(c.b, b"table").into_bytes();
    let r = request(&mut f, 1, vec![Op::LockShared(vec![foreign])], Call::Flush).await;
    assert!(r.is_err(), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_for_update_reads_and_locks_in_one_call() {
    let c = cluster().await;
    let (a1, a2) = (c.client("a", c.a).await, c.client("a", c.a).await);
    let k = key(c.a, b"row");
    let mut t = a1.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    t.lock(std::slice::from_ref(&k)).await.expect("lock");
    t.put(k.clone(), b"v1".to_vec(), LockMode::Locked).expect("put");
    t.commit().await.expect("commit");
    // A key with no row is neither read nor locked.
    let mut t1 = a1.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    let missing = key(c.a, b"missing");
    assert!(t1.get_for_update(&missing).await.expect("read").is_none());
    let mut t2 = a2.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    let free = tokio::time::timeout(Duration::from_secs(10), t2.lock(&[missing])).await;
    assert!(matches!(free, Ok(Ok(_))), "nothing was locked: {free:?}");
    drop(t2);
    // A row is read and locked: a second updater waits, then sees the
    // newer version as changed since its snapshot.
    let (value, l) = t1.get_for_update(&k).await.expect("read").expect("a row");
    assert_eq!((value.as_slice(), l.changed_since_snapshot), (&b"v1"[..], false));
    let mut t2 = a2.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    t2.get(&key(c.a, b"snapshot")).await.expect("take the snapshot");
    let k2 = k.clone();
    let second = tokio::spawn(async move { t2.get_for_update(&k2).await });
    assert_waits(&second, "the row is locked").await;
    t1.put(k.clone(), b"v2".to_vec(), LockMode::Locked).expect("put");
    t1.commit().await.expect("commit");
    let (value, l) = joined(second).await.expect("read").expect("a row");
    assert_eq!(value, b"v1".to_vec(), "the value at the snapshot");
    assert!(l.changed_since_snapshot);
    assert_eq!(l.latest, Some(b"v2".to_vec()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crafted_requests_cannot_cross_tenants() {
    let c = cluster().await;
    // Tenant b has a row.
    let b = c.client("b", c.b).await;
    let mut t = b.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    t.lock(&[key(c.b, b"secret")]).await.expect("lock");
    t.put(key(c.b, b"secret"), b"b's".to_vec(), LockMode::Locked).expect("put");
    t.commit().await.expect("commit");

    let (mut f, hello) = c.raw("a", &c.secret.tenant_token(c.a)).await;
    assert!(matches!(hello, ToClient::Welcome { tenant, .. } if tenant == c.a), "{hello:?}");
    let violation = |r: &Result<Reply, WireError>| matches!(r, Err(WireError::TenantViolation(_)));
    let foreign = key(c.b, b"secret").into_bytes();
    let r = request(&mut f, 1, vec![], Call::Get(foreign.clone())).await;
    assert!(violation(&r), "get of b's key: {r:?}");
    let r = request(
        &mut f,
        2,
        vec![],
        Call::MultiGet(vec![key(c.a, b"x").into_bytes(), foreign.clone()]),
    )
    .await;
    assert!(violation(&r), "multi-get: {r:?}");
    let leaving = Call::Scan {
        start: key(c.a, b"").into_bytes(),
        end: key(c.b + 1, b"").into_bytes(),
        limit: 100,
        order: proto::ScanOrder::Forward,
    };
    let r = request(&mut f, 3, vec![], leaving).await;
    assert!(violation(&r), "a scan that ends outside the prefix: {r:?}");
    let r =
        request(&mut f, 4, vec![], Call::Lock { keys: vec![foreign.clone()], share: false }).await;
    assert!(violation(&r), "lock: {r:?}");
    let r = request(
        &mut f,
        5,
        vec![],
        Call::StoredSize { start: key(c.b, b"").into_bytes(), end: key(c.b + 1, b"").into_bytes() },
    )
    .await;
    assert!(violation(&r), "size: {r:?}");
    let write = Op::Put { key: foreign.clone(), value: b"a's".to_vec(), private: true };
    let r = request(&mut f, 6, vec![write], Call::Commit).await;
    assert!(violation(&r), "write: {r:?}");
    let wipe = Op::DeleteRangeAfterCommit {
        start: key(c.b, b"").into_bytes(),
        end: key(c.b + 1, b"").into_bytes(),
    };
    let r = request(&mut f, 7, vec![wipe], Call::Commit).await;
    assert!(violation(&r), "range delete: {r:?}");
    let r = request(&mut f, 8, vec![], Call::Get(vec![1, 2, 3])).await;
    assert!(r.is_err(), "a key without a prefix: {r:?}");
    // An admin call without the admin token ends the connection.
    f.send(proto::encode(&ToServer::Admin { id: 9, call: proto::AdminCall::List }))
        .await
        .expect("send");
    assert!(matches!(
        next(&mut f).await,
        Some(ToClient::Goodbye(WireError::Unauthorized(_))) | None
    ));

    // Forged and missing authentication.
    let (_, hello) = c.raw("a", &c.secret.tenant_token(c.b)).await;
    assert!(
        matches!(hello, ToClient::Goodbye(WireError::Unauthorized(_))),
        "b's token for a: {hello:?}"
    );
    let (_, hello) = c.raw("a", "00").await;
    assert!(matches!(hello, ToClient::Goodbye(WireError::Unauthorized(_))), "{hello:?}");
    let (_, hello) = c.raw(proto::ADMIN, &c.secret.tenant_token(c.a)).await;
    assert!(matches!(hello, ToClient::Goodbye(WireError::Unauthorized(_))), "{hello:?}");
    let KvAddr::Unix(p) = &c.addr else { unreachable!() };
    let mut f =
        Framed::new(tokio::net::UnixStream::connect(p).await.expect("connect"), proto::codec());
    let req = ToServer::Request {
        id: 1,
        txn: 1,
        ops: vec![Op::Begin { isolation: proto::Isolation::ReadCommitted }],
        call: Call::Get(foreign.clone()),
    };
    f.send(proto::encode(&req)).await.expect("send");
    assert!(matches!(next(&mut f).await, Some(ToClient::Goodbye(_)) | None), "no hello");

    // Garbage, then an absurd length: each closes only that connection.
    for bytes in [vec![0, 0, 0, 3, 0xff, 0xff, 0xff], vec![0xff, 0xff, 0xff, 0xff, 1, 2]] {
        let mut s = tokio::net::UnixStream::connect(p).await.expect("connect");
        s.write_all(&bytes).await.expect("write");
        let mut f = Framed::new(s, proto::codec());
        assert!(matches!(next(&mut f).await, Some(ToClient::Goodbye(_)) | None));
    }

    // Nothing of b's changed, and the server still serves.
    let t = b.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    assert_eq!(t.get(&key(c.b, b"secret")).await.expect("get"), Some(b"b's".to_vec()));
    let rows = t.scan(&KeyRange::prefix(TenantId(c.b), b""), 10).await.expect("scan");
    assert_eq!(rows.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenant_admin() {
    let c = cluster().await;
    let admin = AdminClient::connect(&c.addr, &c.secret.admin_token()).await.expect("admin");
    let names: Vec<String> =
        admin.list().await.expect("list").into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["a", "b", "default"]);
    assert!(admin.create("a").await.is_err(), "exists");
    assert!(admin.create("Bad").await.is_err(), "bad name");
    assert!(admin.drop_tenant("default", false).await.is_err());
    let a = c.client("a", c.a).await;
    assert!(admin
        .lookup("a")
        .await
        .expect("lookup")
        .expect("a")
        .sql_pids
        .contains(&std::process::id()));
    admin.drop_tenant("a", false).await.expect("drop");
    assert!(admin.lookup("a").await.expect("lookup").is_none());
    // The dropped tenant's connection is closed, and it cannot connect again.
    let gone = tokio::time::timeout(Duration::from_secs(10), async {
        while a.is_connected() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(gone.is_ok());
    assert!(RpcClient::connect(c.addr.clone(), "a", &c.secret.tenant_token(c.a)).await.is_err());
    let again = admin.create("a").await.expect("re-create");
    assert_ne!(again.id, c.a, "a new id, so no old data shows");
}

/// A KV server on a TCP port of 127.0.0.1 (over TLS with `tls`): its node
/// (which must outlive the test), address and the default tenant's token.
async fn tcp_server(tls: Option<Arc<ServerConfig>>) -> (kv::KvNode, String, String) {
    let node = kv::KvNode::memory();
    let secret = Secret::from_bytes(b"0123456789abcdef0123456789abcdef");
    let server = node.server(secret.clone()).await.expect("server");
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = tcp.local_addr().expect("addr").to_string();
    tokio::spawn(server.serve(Some(tcp), None, tls));
    (node, addr, secret.tenant_token(kv::tenants::DEFAULT_ID.0))
}

/// Commits a write of `name` through `client`, then reads it back.
async fn write_and_read(client: &RpcClient, name: &[u8]) {
    let mut t = client.begin(IsolationLevel::RepeatableRead).await.expect("begin");
    let k = key(kv::tenants::DEFAULT_ID.0, name);
    t.put(k.clone(), b"yes".to_vec(), LockMode::Private).expect("put");
    t.commit().await.expect("commit");
    let t = client.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    assert_eq!(t.get(&k).await.expect("get"), Some(b"yes".to_vec()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_also_serves_tcp() {
    let (_node, addr, token) = tcp_server(None).await;
    let client =
        RpcClient::connect(KvAddr::Tcp(addr), kv::tenants::DEFAULT, &token).await.expect("connect");
    assert_eq!(client.tenant(), kv::tenants::DEFAULT_ID);
    write_and_read(&client, b"over tcp").await;
}

/// A self-signed certificate for 127.0.0.1 and localhost written to `dir`
/// (its PEM, the CA a client trusts) and the server configuration for it.
fn tls_server(dir: &std::path::Path, name: &str) -> (std::path::PathBuf, Arc<ServerConfig>) {
    use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()])
        .expect("a certificate");
    let ca = dir.join(name);
    std::fs::write(&ca, made.cert.pem()).expect("writing the certificate");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.key_pair.serialize_der()));
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(made.cert.der().to_vec())], key)
        .expect("a server configuration");
    (ca, Arc::new(config))
}

/// `strata kv --tls`: the TCP listener speaks TLS. A client that trusts the
/// server's certificate works as over plain TCP; one that trusts another
/// certificate, and a plain client, are refused (an error, not a hang), and
/// the server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_serves_tcp_over_tls() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ca, config) = tls_server(dir.path(), "server.crt");
    let (other_ca, _) = tls_server(dir.path(), "other.crt");
    let (_node, addr, token) = tcp_server(Some(config)).await;

    let plain = RpcClient::connect(KvAddr::Tcp(addr.clone()), kv::tenants::DEFAULT, &token).await;
    assert!(plain.is_err(), "a plain client got through to a TLS listener");
    let wrong = KvAddr::Tls { addr: addr.clone(), ca: other_ca };
    let refused = RpcClient::connect(wrong, kv::tenants::DEFAULT, &token).await;
    let e = refused.err().expect("a client trusting another certificate got through");
    assert!(e.to_string().contains("certificate"), "{e}");

    let good = KvAddr::Tls { addr, ca };
    let client = RpcClient::connect(good, kv::tenants::DEFAULT, &token).await.expect("connect");
    write_and_read(&client, b"over tls").await;
}

/// Sends `m` and reads the answer.
async fn exchange(
    f: &mut Framed<tokio::net::UnixStream, tokio_util::codec::LengthDelimitedCodec>,
    m: ToServer,
) -> Option<ToClient> {
    f.send(proto::encode(&m)).await.expect("send");
    next(f).await
}

/// A pooled SQL process's connection (the pool token): bound to no tenant,
/// it serves nothing and outlasts the hello deadline; one Bind with a
/// tenant's token makes it that tenant's connection, checked as a Hello's
/// would be; nothing else is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_connection_binds_once_to_one_tenant() {
    let c = cluster().await;
    let waiting = kvrpc::Unbound::open(&c.addr, &c.secret.pool_token()).await.expect("pool");
    let opened = std::time::Instant::now();
    let (a_token, b_token) = (c.secret.tenant_token(c.a), c.secret.tenant_token(c.b));
    let refused = |m: &Option<ToClient>| matches!(m, Some(ToClient::Goodbye(_)) | None);
    let bind =
        |tenant: &str, token: &str| ToServer::Bind { tenant: tenant.into(), token: token.into() };

    // The pool token is no tenant's, nor the admin's, and the reverse.
    let (_, hello) = c.raw(proto::POOL, &a_token).await;
    assert!(matches!(hello, ToClient::Goodbye(WireError::Unauthorized(_))), "{hello:?}");
    let (_, hello) = c.raw("a", &c.secret.pool_token()).await;
    assert!(matches!(hello, ToClient::Goodbye(WireError::Unauthorized(_))), "{hello:?}");
    let (_, hello) = c.raw(proto::ADMIN, &c.secret.pool_token()).await;
    assert!(matches!(hello, ToClient::Goodbye(WireError::Unauthorized(_))), "{hello:?}");

    // Unbound, a connection serves nothing; it binds only to a tenant, with
    // that tenant's token.
    let (mut f, hello) = c.raw(proto::POOL, &c.secret.pool_token()).await;
    assert!(matches!(hello, ToClient::Welcome { tenant: 0, conn: 0 }), "{hello:?}");
    let get = ToServer::Request {
        id: 1,
        txn: 1,
        ops: vec![Op::Begin { isolation: proto::Isolation::ReadCommitted }],
        call: Call::Get(key(c.b, b"k").into_bytes()),
    };
    assert!(refused(&exchange(&mut f, get).await), "a request before the bind");
    for (tenant, token) in [
        ("a", b_token.as_str()),
        ("a", "00"),
        (proto::ADMIN, &c.secret.admin_token()),
        (proto::POOL, &c.secret.pool_token()),
    ] {
        let (mut f, _) = c.raw(proto::POOL, &c.secret.pool_token()).await;
        let answer = exchange(&mut f, bind(tenant, token)).await;
        assert!(refused(&answer), "bind as {tenant}: {answer:?}");
    }
    // Bound once, it is that tenant's, and binds no more.
    let (mut f, _) = c.raw(proto::POOL, &c.secret.pool_token()).await;
    let answer = exchange(&mut f, bind("a", &a_token)).await;
    assert!(
        matches!(answer, Some(ToClient::Welcome { tenant, .. }) if tenant == c.a),
        "{answer:?}"
    );
    let r = request(&mut f, 1, vec![], Call::Get(key(c.b, b"k").into_bytes())).await;
    assert!(matches!(r, Err(WireError::TenantViolation(_))), "b's key: {r:?}");
    assert!(refused(&exchange(&mut f, bind("b", &b_token)).await), "a second bind");
    let (mut f, _) = c.raw("a", &a_token).await;
    assert!(refused(&exchange(&mut f, bind("b", &b_token)).await), "a bind after a hello");

    // The first pool connection, idle past the deadline a Hello has, binds
    // and serves its tenant (and reports this process's pid for it).
    tokio::time::sleep(Duration::from_secs(11).saturating_sub(opened.elapsed())).await;
    let a = RpcClient::bind(waiting, "a", &a_token).await.expect("bind after the wait");
    assert_eq!(a.tenant(), TenantId(c.a));
    let mut t = a.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    t.put(key(c.a, b"pooled"), b"yes".to_vec(), LockMode::Private).expect("put");
    t.commit().await.expect("commit");
    let admin = AdminClient::connect(&c.addr, &c.secret.admin_token()).await.expect("admin");
    let info = admin.lookup("a").await.expect("lookup").expect("a");
    assert!(info.sql_pids.contains(&std::process::id()), "{info:?}");
    let t = c.client("a", c.a).await.begin(IsolationLevel::ReadCommitted).await.expect("begin");
    assert_eq!(t.get(&key(c.a, b"pooled")).await.expect("get"), Some(b"yes".to_vec()));
}
