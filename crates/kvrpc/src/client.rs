//! [`RpcClient`] and [`RpcTxn`]: the [`kvapi`] contract over the KV RPC.
//!
//! The transaction is split across the hop. The server holds what must be
//! shared by every SQL process: the snapshot (registered for garbage
//! collection), the row locks, and the write buffer it commits. The client
//! keeps a mirror of its own writes, so the calls the trait makes local
//! (`put`, `delete`, `get_own`, `savepoint`, `rollback_to`) stay local and
//! cost no round trip; they are queued as [`Op`](crate::proto::Op)s and travel ahead of the
//! transaction's next call. Both sides count one undo entry per write, so a
//! savepoint (the count) means the same on both; a write the server refuses
//! breaks the transaction there, and every later call of it fails.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kvapi::{
    Error, IsolationLevel, Key, KeyRange, KvClient, LockMode, Locked, Result, Savepoint, TenantId,
    Timestamp, Txn, TxnId,
};
use parking_lot::Mutex;

use crate::conn::{Connection, KvAddr, Unbound};
use crate::proto::{
    AdminCall, AdminReply, Call, LockedKey, Op, Reply, ScanOrder, TenantInfo, ToClient, ToServer,
    ADMIN,
};

/// Opens transactions of one tenant on a KV server. Cheap to clone; the
/// clones share one connection, opened again when it breaks.
#[derive(Clone)]
pub struct RpcClient {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    addr: KvAddr,
    tenant_name: String,
    token: String,
    tenant: TenantId,
    conn: Mutex<Arc<Connection>>,
    /// Serializes reconnecting, so a broken connection is replaced once.
    reconnect: tokio::sync::Mutex<()>,
    next_txn: AtomicU64,
    /// The session count last reported, told again to each new connection.
    sessions: std::sync::atomic::AtomicU32,
}

impl RpcClient {
    /// Connects to `addr` as `tenant` (its name) with its token.
    pub async fn connect(addr: KvAddr, tenant: &str, token: &str) -> Result<RpcClient> {
        let conn = Connection::open(&addr, tenant, token).await?;
        Ok(RpcClient::over(addr, tenant, token, conn))
    }

    /// Binds a pooled connection to `tenant` (its name) with its token;
    /// later connections (after a break) are opened as [`connect`] does.
    ///
    /// [`connect`]: RpcClient::connect
    pub async fn bind(unbound: Unbound, tenant: &str, token: &str) -> Result<RpcClient> {
        let addr = unbound.addr().clone();
        let conn = unbound.bind(tenant, token).await?;
        Ok(RpcClient::over(addr, tenant, token, conn))
    }

    fn over(addr: KvAddr, tenant: &str, token: &str, conn: Arc<Connection>) -> RpcClient {
        RpcClient {
            inner: Arc::new(ClientInner {
                addr,
                tenant_name: tenant.to_string(),
                token: token.to_string(),
                tenant: conn.tenant,
                conn: Mutex::new(conn),
                reconnect: tokio::sync::Mutex::new(()),
                next_txn: AtomicU64::new(1),
                sessions: Default::default(),
            }),
        }
    }

    /// True while the connection to the KV server works.
    pub fn is_connected(&self) -> bool {
        self.inner.conn.lock().is_alive()
    }

    /// The live connection, opening a new one if the current one broke.
    pub async fn connection(&self) -> Result<Arc<Connection>> {
        let current = self.inner.conn.lock().clone();
        if current.is_alive() {
            return Ok(current);
        }
        let _one = self.inner.reconnect.lock().await;
        let current = self.inner.conn.lock().clone();
        if current.is_alive() {
            return Ok(current);
        }
        let i = &self.inner;
        let fresh = Connection::open(&i.addr, &i.tenant_name, &i.token).await?;
        if fresh.tenant != i.tenant {
            return Err(Error::Unavailable(
                "the tenant's id changed (dropped and re-created)".into(),
            ));
        }
        fresh.send(ToServer::Sessions { count: i.sessions.load(Ordering::SeqCst) });
        *i.conn.lock() = fresh.clone();
        Ok(fresh)
    }

    /// Tells the server how many client sessions this process serves.
    pub fn report_sessions(&self, count: u32) {
        // Under the connection's lock, so a reconnect cannot slip between
        // storing the count and sending it.
        let conn = self.inner.conn.lock();
        self.inner.sessions.store(count, Ordering::SeqCst);
        conn.send(ToServer::Sessions { count });
    }
}

impl KvClient for RpcClient {
    type Txn = RpcTxn;

    fn tenant(&self) -> TenantId {
        self.inner.tenant
    }

    async fn begin(&self, isolation: IsolationLevel) -> Result<RpcTxn> {
        let conn = self.connection().await?;
        let handle = self.inner.next_txn.fetch_add(1, Ordering::Relaxed);
        let id = crate::proto::remote_txn_id(conn.conn_no, handle);
        Ok(RpcTxn {
            conn,
            handle,
            id,
            tenant: self.inner.tenant,
            isolation,
            remote: Mutex::new(Remote {
                ops: Vec::new(),
                started: false,
                snapshot: Timestamp::UNKNOWN.0,
                assume: None,
                assumption_failed: false,
                shared_queued: Vec::new(),
                shared_held: HashSet::new(),
            }),
            writes: BTreeMap::new(),
            undo: Vec::new(),
            wrote: false,
            lock_timeout: None,
            finished: false,
        })
    }
}

/// The part of the transaction shared by concurrent reads.
struct Remote {
    /// Local calls not yet sent.
    ops: Vec<Op>,
    /// The server has seen the Begin op.
    started: bool,
    /// The snapshot the server reported last.
    snapshot: u64,
    /// [`Txn::assume`]'s key and value, sent with the next call.
    assume: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// A call found the assumption false.
    assumption_failed: bool,
    /// Keys of the [`Op::LockShared`] ops in `ops`.
    shared_queued: Vec<Vec<u8>>,
    /// Keys the server confirmed this transaction holds shared (or
    /// stronger): locking them again needs no call.
    shared_held: HashSet<Vec<u8>>,
}

/// An undo record of the write mirror.
type Undo = (Vec<u8>, Option<Option<Vec<u8>>>);

/// A transaction on a remote KV server (see the module documentation).
pub struct RpcTxn {
    conn: Arc<Connection>,
    handle: u64,
    id: TxnId,
    tenant: TenantId,
    isolation: IsolationLevel,
    remote: Mutex<Remote>,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    undo: Vec<Undo>,
    /// Queued a write or range delete: commit must reach the server.
    wrote: bool,
    lock_timeout: Option<Duration>,
    finished: bool,
}

fn unexpected(r: Reply) -> Error {
    Error::Corrupt(format!("unexpected reply from the KV server: {r:?}"))
}

fn locked(k: LockedKey) -> Locked {
    Locked { latest: k.latest, changed_since_snapshot: k.changed_since_snapshot }
}

fn rows(r: Reply) -> Result<Vec<(Key, Vec<u8>)>> {
    match r {
        Reply::Rows(rows) => rows.into_iter().map(|(k, v)| Ok((Key::decode(k)?, v))).collect(),
        other => Err(unexpected(other)),
    }
}

fn key_bytes(keys: &[Key]) -> Vec<Vec<u8>> {
    keys.iter().map(|k| k.as_bytes().to_vec()).collect()
}

impl RpcTxn {
    /// Sends `call` with the queued ops and waits for its reply.
    async fn call(&self, call: Call) -> Result<Reply> {
        if self.finished {
            return Err(Error::Unavailable("transaction already finished".into()));
        }
        let id = self.conn.next_id();
        let (rx, carried) = {
            let mut r = self.remote.lock();
            let mut ops = std::mem::take(&mut r.ops);
            let carried = std::mem::take(&mut r.shared_queued);
            if !r.started {
                ops.insert(0, Op::Begin { isolation: self.isolation.into() });
                r.started = true;
            }
            match r.assume.take() {
                // What a statement assumed is moot once it commits.
                Some(_) if matches!(call, Call::Commit) => {}
                Some((key, value)) => ops.push(Op::Assume { key, value }),
                None => {}
            }
            let msg = ToServer::Request { id, txn: self.handle, ops, call };
            // Queued under the lock: the server sees ops in call order.
            (self.conn.start(id, msg)?, carried)
        };
        // A cancelled statement drops this future: the server abandons the
        // request (a lock wait in it ends there too).
        let cancel = ToServer::Cancel { txn: self.handle, id };
        match self.conn.wait(id, rx, Some(cancel)).await? {
            ToClient::Response { snapshot, result, .. } => {
                let mut r = self.remote.lock();
                r.snapshot = snapshot;
                match &result {
                    Err(crate::proto::WireError::AssumptionFailed) => r.assumption_failed = true,
                    Ok(_) => r.shared_held.extend(carried),
                    Err(_) => {}
                }
                result.map_err(Error::from)
            }
            other => Err(Error::Corrupt(format!("unexpected frame: {other:?}"))),
        }
    }

    fn check(&self, key: &Key) -> Result<()> {
        key.check_tenant(self.tenant)?;
        if self.finished {
            return Err(Error::Unavailable("transaction already finished".into()));
        }
        Ok(())
    }

    fn queue(&mut self, op: Op) {
        self.remote.get_mut().ops.push(op);
    }

    fn record(&mut self, key: Key, value: Option<Vec<u8>>, mode: LockMode) -> Result<()> {
        self.check(&key)?;
        let private = mode == LockMode::Private;
        let k = key.into_bytes();
        let op = match &value {
            Some(v) => Op::Put { key: k.clone(), value: v.clone(), private },
            None => Op::Delete { key: k.clone(), private },
        };
        self.queue(op);
        self.wrote = true;
        let prev = self.writes.insert(k.clone(), value);
        self.undo.push((k, prev));
        Ok(())
    }

    async fn scan_call(
        &self,
        range: &KeyRange,
        limit: usize,
        order: ScanOrder,
    ) -> Result<Vec<(Key, Vec<u8>)>> {
        let call = Call::Scan {
            start: range.start.as_bytes().to_vec(),
            end: range.end.as_bytes().to_vec(),
            limit: limit as u64,
            order,
        };
        rows(self.call(call).await?)
    }

    async fn lock_call(&self, keys: &[Key], share: bool) -> Result<Vec<Locked>> {
        match self.call(Call::Lock { keys: key_bytes(keys), share }).await? {
            Reply::Locked(v) => Ok(v.into_iter().map(locked).collect()),
            other => Err(unexpected(other)),
        }
    }
}

impl Drop for RpcTxn {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            if self.remote.get_mut().started {
                self.conn.send(ToServer::End { txn: self.handle });
            }
        }
    }
}

impl Txn for RpcTxn {
    fn id(&self) -> TxnId {
        self.id
    }

    fn snapshot(&self) -> Timestamp {
        Timestamp(self.remote.lock().snapshot)
    }

    fn isolation(&self) -> IsolationLevel {
        self.isolation
    }

    fn refresh_snapshot(&mut self) {
        let r = self.remote.get_mut();
        if r.started {
            r.ops.push(Op::RefreshSnapshot);
            r.snapshot = Timestamp::UNKNOWN.0;
        }
    }

    fn set_lock_timeout(&mut self, timeout: Option<Duration>) {
        if timeout != self.lock_timeout {
            self.lock_timeout = timeout;
            let micros = timeout.map(|t| t.as_micros().min(u128::from(u64::MAX)) as u64);
            self.queue(Op::LockTimeout(micros));
        }
    }

    async fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        self.check(key)?;
        if let Some(v) = self.writes.get(key.as_bytes()) {
            return Ok(v.clone());
        }
        match self.call(Call::Get(key.as_bytes().to_vec())).await? {
            Reply::Value(v) => Ok(v),
            other => Err(unexpected(other)),
        }
    }

    async fn assume(
        &mut self,
        key: &Key,
        expected: Option<&[u8]>,
    ) -> Result<Option<Option<Vec<u8>>>> {
        self.check(key)?;
        if let Some(v) = self.writes.get(key.as_bytes()) {
            return Ok(Some(v.clone()));
        }
        // A failure stays reported until taken: statements nested in this
        // one (a PL/pgSQL function's) assume again.
        self.remote.get_mut().assume =
            Some((key.as_bytes().to_vec(), expected.map(<[u8]>::to_vec)));
        Ok(None)
    }

    fn take_assumption_failed(&mut self) -> bool {
        let r = self.remote.get_mut();
        r.assume = None;
        std::mem::take(&mut r.assumption_failed)
    }

    fn get_own(&self, key: &Key) -> Option<Option<Vec<u8>>> {
        self.writes.get(key.as_bytes()).cloned()
    }

    async fn multi_get(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        keys.iter().try_for_each(|k| self.check(k))?;
        match self.call(Call::MultiGet(key_bytes(keys))).await? {
            Reply::Values(v) if v.len() == keys.len() => Ok(v),
            other => Err(unexpected(other)),
        }
    }

    async fn scan(&self, range: &KeyRange, limit: usize) -> Result<Vec<(Key, Vec<u8>)>> {
        self.scan_call(range, limit, ScanOrder::Forward).await
    }

    async fn scan_reverse(&self, range: &KeyRange, limit: usize) -> Result<Vec<(Key, Vec<u8>)>> {
        self.scan_call(range, limit, ScanOrder::Reverse).await
    }

    async fn stored_size(&self, range: &KeyRange) -> Result<u64> {
        let call = Call::StoredSize {
            start: range.start.as_bytes().to_vec(),
            end: range.end.as_bytes().to_vec(),
        };
        match self.call(call).await? {
            Reply::Size(n) => Ok(n),
            other => Err(unexpected(other)),
        }
    }

    async fn lock(&mut self, keys: &[Key]) -> Result<Vec<Locked>> {
        self.lock_call(keys, false).await
    }

    async fn get_for_update(&mut self, key: &Key) -> Result<Option<(Vec<u8>, Locked)>> {
        self.check(key)?;
        if let Some(own) = self.writes.get(key.as_bytes()) {
            // Written here: the read is local, only the lock is a call.
            let Some(value) = own.clone() else { return Ok(None) };
            let l = self.lock_call(std::slice::from_ref(key), false).await?.pop();
            let l = l.ok_or_else(|| Error::Corrupt("a lock without its key".into()))?;
            return Ok(Some((value, l)));
        }
        match self.call(Call::GetForUpdate(key.as_bytes().to_vec())).await? {
            Reply::GotForUpdate(got) => Ok(got.map(|(v, l)| (v, locked(l)))),
            other => Err(unexpected(other)),
        }
    }

    async fn scan_latest(&self, range: &KeyRange, limit: usize) -> Result<Vec<(Key, Vec<u8>)>> {
        self.scan_call(range, limit, ScanOrder::Latest).await
    }

    async fn lock_for_share(&mut self, keys: &[Key]) -> Result<Vec<Locked>> {
        self.lock_call(keys, true).await
    }

    async fn try_lock(&mut self, keys: &[Key], shared: bool) -> Result<Vec<Option<Locked>>> {
        match self.call(Call::TryLock { keys: key_bytes(keys), share: shared }).await? {
            Reply::TryLocked(v) => Ok(v.into_iter().map(|k| k.map(locked)).collect()),
            other => Err(unexpected(other)),
        }
    }

    async fn lock_shared(&mut self, keys: &[Key]) -> Result<Vec<bool>> {
        keys.iter().try_for_each(|k| self.check(k))?;
        let r = self.remote.get_mut();
        if keys.iter().all(|k| r.shared_held.contains(k.as_bytes())) {
            // Held since an earlier call: unchanged, as the contract says.
            return Ok(vec![false; keys.len()]);
        }
        match self.call(Call::LockShared(key_bytes(keys))).await? {
            Reply::Changed(v) => {
                self.remote.get_mut().shared_held.extend(key_bytes(keys));
                Ok(v)
            }
            other => Err(unexpected(other)),
        }
    }

    async fn lock_shared_soon(&mut self, keys: &[Key]) -> Result<bool> {
        keys.iter().try_for_each(|k| self.check(k))?;
        let r = self.remote.get_mut();
        let fresh: Vec<Vec<u8>> = key_bytes(keys)
            .into_iter()
            .filter(|k| !r.shared_held.contains(k) && !r.shared_queued.contains(k))
            .collect();
        if !fresh.is_empty() {
            r.shared_queued.extend(fresh.iter().cloned());
            r.ops.push(Op::LockShared(fresh));
        }
        Ok(false)
    }

    async fn flush(&mut self) -> Result<()> {
        if self.remote.get_mut().shared_queued.is_empty() {
            return Ok(());
        }
        match self.call(Call::Flush).await? {
            Reply::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    fn put(&mut self, key: Key, value: Vec<u8>, mode: LockMode) -> Result<()> {
        self.record(key, Some(value), mode)
    }

    fn delete(&mut self, key: Key, mode: LockMode) -> Result<()> {
        self.record(key, None, mode)
    }

    fn delete_range_after_commit(&mut self, range: KeyRange) -> Result<()> {
        self.check(&range.start)?;
        self.queue(Op::DeleteRangeAfterCommit {
            start: range.start.into_bytes(),
            end: range.end.into_bytes(),
        });
        self.wrote = true;
        Ok(())
    }

    fn savepoint(&mut self) -> Savepoint {
        Savepoint(self.undo.len() as u64)
    }

    fn rollback_to(&mut self, savepoint: Savepoint) {
        if self.undo.len() as u64 <= savepoint.0 {
            return;
        }
        while self.undo.len() as u64 > savepoint.0 {
            let Some((k, prev)) = self.undo.pop() else { break };
            match prev {
                Some(p) => self.writes.insert(k, p),
                None => self.writes.remove(&k),
            };
        }
        self.queue(Op::RollbackTo(savepoint.0));
    }

    async fn commit(mut self) -> Result<Timestamp> {
        if self.finished {
            return Err(Error::Unavailable("transaction already finished".into()));
        }
        if !self.wrote {
            // Read-only: nothing to make durable. Drop sends End (if the
            // server ever saw the transaction) without waiting for it.
            let ts = self.snapshot();
            return Ok(if ts == Timestamp::UNKNOWN { Timestamp(0) } else { ts });
        }
        let r = self.call(Call::Commit).await;
        self.finished = true;
        match r? {
            Reply::Committed(ts) => Ok(Timestamp(ts)),
            other => Err(unexpected(other)),
        }
    }

    fn abort(self) {
        // Drop ends it on the server.
    }
}

/// A connection with the admin token: tenant management.
pub struct AdminClient {
    conn: Arc<Connection>,
}

impl AdminClient {
    /// Connects to `addr` with the admin token.
    pub async fn connect(addr: &KvAddr, token: &str) -> Result<AdminClient> {
        Ok(AdminClient { conn: Connection::open(addr, ADMIN, token).await? })
    }

    /// True while the connection works.
    pub fn is_alive(&self) -> bool {
        self.conn.is_alive()
    }

    async fn call(&self, call: AdminCall) -> Result<AdminReply> {
        let answer = self.conn.call(|id| ToServer::Admin { id, call }).await?;
        match answer {
            ToClient::AdminResponse { result, .. } => result.map_err(Error::from),
            other => Err(Error::Corrupt(format!("unexpected frame: {other:?}"))),
        }
    }

    /// Creates tenant `name`.
    pub async fn create(&self, name: &str) -> Result<TenantInfo> {
        match self.call(AdminCall::Create { name: name.into() }).await? {
            AdminReply::Tenant(Some(t)) => Ok(t),
            other => Err(Error::Corrupt(format!("unexpected admin reply: {other:?}"))),
        }
    }

    /// Looks tenant `name` up.
    pub async fn lookup(&self, name: &str) -> Result<Option<TenantInfo>> {
        match self.call(AdminCall::Lookup { name: name.into() }).await? {
            AdminReply::Tenant(t) => Ok(t),
            other => Err(Error::Corrupt(format!("unexpected admin reply: {other:?}"))),
        }
    }

    /// Every tenant.
    pub async fn list(&self) -> Result<Vec<TenantInfo>> {
        match self.call(AdminCall::List).await? {
            AdminReply::Tenants(t) => Ok(t),
            other => Err(Error::Corrupt(format!("unexpected admin reply: {other:?}"))),
        }
    }

    /// Sets tenant `name`'s limit of SQL processes; the tenant after.
    pub async fn set_max_sql_processes(&self, name: &str, n: u32) -> Result<TenantInfo> {
        let call = AdminCall::Set { name: name.into(), max_sql_processes: Some(n) };
        match self.call(call).await? {
            AdminReply::Tenant(Some(t)) => Ok(t),
            other => Err(Error::Corrupt(format!("unexpected admin reply: {other:?}"))),
        }
    }

    /// Drops tenant `name` and its data.
    pub async fn drop_tenant(&self, name: &str, force: bool) -> Result<()> {
        match self.call(AdminCall::Drop { name: name.into(), force }).await? {
            AdminReply::Dropped => Ok(()),
            other => Err(Error::Corrupt(format!("unexpected admin reply: {other:?}"))),
        }
    }
}
