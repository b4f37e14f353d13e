// node-postgres (pg) against Strata or PostgreSQL: a small shop application
// (schema, parameterized DML, joins and aggregates, transactions, savepoints,
// SQLSTATE errors, NULLs, a connection pool) and a round trip of every core
// type. node-postgres reads results in text format only (its `binary` option
// has no working decoders), so each type is checked as exact PostgreSQL text
// (a pass-through type parser) and through pg's default parsers with
// JavaScript values as parameters (Buffers go as binary parameters).
//
// Environment: STRATA_PORT (the server on 127.0.0.1, user and database
// postgres, no password) and STRATA_TEST_TARGET (strata|postgres). Every
// expectation here was checked against PostgreSQL 15. See ../README.md for the
// known-failure convention (KNOWN_FAILURES below). Run: node --test test.js
'use strict';

process.env.TZ = 'UTC'; // pg reads timestamp (without time zone) and date as local time
const assert = require('node:assert/strict');
const { test, after } = require('node:test');
const util = require('node:util');
const pg = require('pg');

const PORT = Number(process.env.STRATA_PORT);
const ON_STRATA = (process.env.STRATA_TEST_TARGET || 'strata') === 'strata';
assert.ok(PORT > 0, 'STRATA_PORT must be set');

// Checks Strata cannot pass yet, by name: on Strata they still run, a failure
// prints "known failure: <name>: <why>" and a pass "UNEXPECTED PASS: <name>"
// (remove the entry then); on PostgreSQL they must pass. One entry per
// missing feature or bug; "bug:" marks a bug rather than a missing feature.
const KNOWN_FAILURES = {
};

const REPORT = [];
after(() => {
  for (const line of REPORT) console.log(line);
});

const CONFIG = {
  host: '127.0.0.1',
  port: PORT,
  user: 'postgres',
  database: 'postgres',
  // Fixed so that timestamptz in text format prints the same everywhere.
  options: '-c TimeZone=UTC',
  connectionTimeoutMillis: 30000,
  query_timeout: 60000,
};

async function connect() {
  const c = new pg.Client(CONFIG);
  await c.connect();
  return c;
}

// Runs `fn(client)` on a fresh connection as the test `name`, with the
// known-failure convention.
function check(name, fn) {
  test(name, { timeout: 120000 }, async () => {
    const run = async () => {
      const c = await connect();
      try {
        await fn(c);
      } finally {
        await c.end();
      }
    };
    const why = ON_STRATA ? KNOWN_FAILURES[name] : undefined;
    if (why === undefined) return run();
    try {
      await run();
    } catch (e) {
      const got =
        e.code === 'ERR_ASSERTION' && e.generatedMessage
          ? `${util.inspect(e.actual)} instead of ${util.inspect(e.expected)}`
          : `${e.code ? e.code + ' ' : ''}${e.message}`;
      REPORT.push(`known failure: ${name}: ${why} (got ${got.replace(/\s+/g, ' ')})`);
      return;
    }
    REPORT.push(`UNEXPECTED PASS: ${name}`);
  });
}

// Expects `promise` to fail with a server error; returns the error.
async function sqlError(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof pg.DatabaseError, `not a server error: ${e}`);
    return e;
  }
  assert.fail('expected an error, the statement succeeded');
}

// ---------------------------------------------------------------------------
// The shop: customers and their orders.

const CUSTOMERS = [
  [1, 'ann@example.com', 'Ann', true],
  [2, 'bob@example.com', 'Bob', false],
  [3, 'cy@example.com', 'Cy', false],
];
const ORDERS = [
  [100, 1, '12.50', null, '2024-01-05'],
  [101, 1, '7.25', 'gift wrap', '2024-01-06'],
  [102, 2, '100.00', null, '2024-02-01'],
  [103, 2, '0.99', 'coupon', '2024-02-02'],
  [104, 1, '30.00', null, '2024-03-01'],
];

async function makeShop(c) {
  await c.query('drop table if exists orders');
  await c.query('drop table if exists customers');
  await c.query(
    'create table customers (id int4 primary key, email varchar(100) not null unique,' +
      ' name text not null, vip bool not null default false)',
  );
  await c.query(
    'create table orders (id int8 primary key, customer_id int4 not null,' +
      ' total numeric(10,2) not null, note text, placed_on date not null)',
  );
  await c.query('create index orders_by_customer on orders (customer_id)');
  for (const row of CUSTOMERS) {
    await c.query('insert into customers (id, email, name, vip) values ($1, $2, $3, $4)', row);
  }
  for (const row of ORDERS) {
    await c.query('insert into orders (id, customer_id, total, note, placed_on) values ($1, $2, $3, $4, $5)', row);
  }
}

check('connect_and_server_version', async (c) => {
  const r = await c.query('select 1 as one, current_database() as db');
  assert.deepEqual(r.rows, [{ one: 1, db: 'postgres' }]);
  const v = await c.query('show server_version_num');
  assert.ok(Number(v.rows[0].server_version_num) >= 150000, v.rows[0].server_version_num);
  assert.ok(c.processID > 0); // from BackendKeyData
});

check('show_setting_extended', async (c) => {
  // A named (prepared) statement goes through Parse/Bind/Describe/Execute.
  const r = await c.query({ name: 'show-tz', text: 'show timezone', rowMode: 'array' });
  assert.deepEqual(r.rows, [['UTC']]);
});

check('show_column_name', async (c) => {
  // SHOW names its column after the parameter's canonical spelling.
  const r = await c.query('show timezone');
  assert.deepEqual(r.rows, [{ TimeZone: 'UTC' }]);
});

check('multi_statement_simple_query', async (c) => {
  const results = await c.query(
    'drop table if exists kv; create table kv (k text primary key, v int4); ' +
      "insert into kv values ('a', 1), ('b', 2); select k, v from kv order by k",
  );
  assert.equal(results.length, 4);
  assert.deepEqual(results.map((r) => r.command), ['DROP', 'CREATE', 'INSERT', 'SELECT']);
  assert.equal(results[2].rowCount, 2);
  assert.deepEqual(results[3].rows, [{ k: 'a', v: 1 }, { k: 'b', v: 2 }]);
});

check('schema_and_insert', async (c) => {
  await makeShop(c);
  const r = await c.query('insert into customers (id, email, name) values ($1, $2, $3)', [4, 'di@example.com', 'Di']);
  assert.equal(r.command, 'INSERT');
  assert.equal(r.rowCount, 1);
  const row = await c.query('select id, email, name, vip from customers where id = $1', [4]);
  assert.deepEqual(row.rows, [{ id: 4, email: 'di@example.com', name: 'Di', vip: false }]);
  assert.deepEqual(row.fields.map((f) => f.dataTypeID), [23, 1043, 25, 16]);
  assert.deepEqual((await c.query('select count(*) from orders')).rows, [{ count: String(ORDERS.length) }]);
});

check('query_join_aggregate_order_limit', async (c) => {
  await makeShop(c);
  let r = await c.query(
    'select c.name, count(o.id) as n, sum(o.total) as spent, max(o.placed_on)::text as last' +
      ' from customers c join orders o on o.customer_id = c.id' +
      ' where o.placed_on >= $1 group by c.name order by spent desc limit $2',
    ['2024-01-01', 10],
  );
  assert.deepEqual(r.rows, [
    { name: 'Bob', n: '2', spent: '100.99', last: '2024-02-02' },
    { name: 'Ann', n: '3', spent: '49.75', last: '2024-03-01' },
  ]);
  r = await c.query(
    'select c.name, count(o.id)::int4 as n, coalesce(sum(o.total), 0) as spent from customers c' +
      ' left join orders o on o.customer_id = c.id group by c.id, c.name order by c.id',
  );
  assert.deepEqual(r.rows, [
    { name: 'Ann', n: 3, spent: '49.75' },
    { name: 'Bob', n: 2, spent: '100.99' },
    { name: 'Cy', n: 0, spent: '0' },
  ]);
  r = await c.query('select id, total from orders order by total desc, id limit $1 offset $2', [2, 1]);
  assert.deepEqual(r.rows, [{ id: '104', total: '30.00' }, { id: '100', total: '12.50' }]);
  r = await c.query('select round(avg(total), 2) as avg from orders where customer_id = $1', [1]);
  assert.deepEqual(r.rows, [{ avg: '16.58' }]);
  r = await c.query(
    'select name from customers where id in (select customer_id from orders where total > $1) order by name',
    ['20'],
  );
  assert.deepEqual(r.rows.map((x) => x.name), ['Ann', 'Bob']);
  // Row mode: arrays instead of objects.
  r = await c.query({ text: 'select id, name from customers order by id desc limit 1', rowMode: 'array' });
  assert.deepEqual(r.rows, [[3, 'Cy']]);
});

check('update_delete', async (c) => {
  await makeShop(c);
  let r = await c.query('update orders set total = total + $1 where customer_id = $2', ['1.00', 1]);
  assert.equal(r.command, 'UPDATE');
  assert.equal(r.rowCount, 3);
  r = await c.query('select sum(total) as s from orders where customer_id = $1', [1]);
  assert.equal(r.rows[0].s, '52.75');
  r = await c.query('delete from orders where note is null and total < $1 returning id', ['20']);
  assert.deepEqual(r.rows, [{ id: '100' }]);
  assert.equal(r.rowCount, 1);
  r = await c.query('delete from customers where id = $1', [3]);
  assert.equal(r.rowCount, 1);
  assert.equal((await c.query('select count(*)::int4 as n from orders')).rows[0].n, 4);
  assert.equal((await c.query('select count(*)::int4 as n from customers')).rows[0].n, 2);
});

check('transactions_commit_rollback', async (c) => {
  await makeShop(c);
  const other = await connect();
  try {
    const count = async (conn, id) =>
      (await conn.query('select count(*)::int4 as n from customers where id = $1', [id])).rows[0].n;
    await c.query('begin');
    await c.query('insert into customers (id, email, name) values ($1, $2, $3)', [10, 't@example.com', 'T']);
    assert.equal(await count(other, 10), 0); // not visible before commit
    await c.query('commit');
    assert.equal(await count(other, 10), 1);

    await c.query('begin');
    await c.query('insert into customers (id, email, name) values ($1, $2, $3)', [11, 'u@example.com', 'U']);
    await c.query('update orders set total = 0');
    await c.query('rollback');
    assert.equal(await count(c, 11), 0);
    assert.equal((await c.query('select sum(total) as s from orders')).rows[0].s, '150.74');

    // An error aborts the transaction until it is rolled back.
    await c.query('begin');
    assert.equal((await sqlError(c.query('select 1 / 0'))).code, '22012');
    const e = await sqlError(c.query('select $1::int4 as x', [1]));
    assert.equal(e.code, '25P02');
    const r = await c.query('commit'); // COMMIT of a failed transaction rolls back
    assert.equal(r.command, 'ROLLBACK');
    assert.deepEqual((await c.query('select $1::int4 as x', [1])).rows, [{ x: 1 }]);
  } finally {
    await other.end();
  }
});

check('savepoints', async (c) => {
  await makeShop(c);
  await c.query('begin');
  await c.query("insert into customers (id, email, name) values (20, 'sp1@example.com', 'Sp1')");
  await c.query('savepoint a');
  await c.query("insert into customers (id, email, name) values (21, 'sp2@example.com', 'Sp2')");
  const e = await sqlError(c.query("insert into customers (id, email, name) values (22, 'ann@example.com', 'Dup')"));
  assert.equal(e.code, '23505');
  await c.query('rollback to savepoint a');
  await c.query("insert into customers (id, email, name) values (23, 'sp3@example.com', 'Sp3')");
  await c.query('savepoint b');
  await c.query('update customers set vip = true where id = 23');
  await c.query('release savepoint b');
  await c.query('savepoint c');
  await c.query('delete from customers where id = 20');
  await c.query('rollback to savepoint c');
  await c.query('commit');
  const r = await c.query('select id, vip from customers where id >= 20 order by id');
  assert.deepEqual(r.rows, [{ id: 20, vip: false }, { id: 23, vip: true }]);
});

check('unique_violation_sqlstate', async (c) => {
  await makeShop(c);
  let e = await sqlError(c.query('insert into customers (id, email, name) values ($1, $2, $3)', [1, 'new@example.com', 'New']));
  assert.equal(e.code, '23505');
  assert.equal(e.constraint, 'customers_pkey');
  assert.equal(e.detail, 'Key (id)=(1) already exists.');
  assert.equal(e.severity, 'ERROR');
  e = await sqlError(c.query('insert into customers (id, email, name) values ($1, $2, $3)', [9, 'bob@example.com', 'Bob2']));
  assert.equal(e.code, '23505');
  assert.equal(e.constraint, 'customers_email_key');
  assert.equal(e.message, 'duplicate key value violates unique constraint "customers_email_key"');
  // The same through the simple protocol.
  e = await sqlError(c.query("insert into customers (id, email, name) values (9, 'bob@example.com', 'Bob2')"));
  assert.equal(e.code, '23505');
  assert.equal((await c.query('select count(*)::int4 as n from customers')).rows[0].n, 3);
});

check('error_fields_schema_table', async (c) => {
  await makeShop(c);
  let e = await sqlError(c.query("insert into customers (id, email, name) values (1, 'x@example.com', 'X')"));
  assert.deepEqual([e.schema, e.table], ['public', 'customers']);
  e = await sqlError(c.query('insert into customers (id, email, name) values (7, $1, null)', ['n@example.com']));
  assert.equal(e.code, '23502');
  assert.deepEqual([e.schema, e.table, e.column], ['public', 'customers', 'name']);
});

check('nulls', async (c) => {
  await makeShop(c);
  await c.query('insert into orders (id, customer_id, total, note, placed_on) values ($1, $2, $3, $4, $5)', [
    105,
    3,
    5,
    null,
    '2024-04-01',
  ]);
  let r = await c.query('select note, note is null as missing, coalesce(note, $1) as shown from orders where id = $2', [
    'none',
    105,
  ]);
  assert.deepEqual(r.rows, [{ note: null, missing: true, shown: 'none' }]);
  r = await c.query('select count(*)::int4 as n from orders where note is null');
  assert.equal(r.rows[0].n, 4);
  r = await c.query('select count(note)::int4 as a, count(*)::int4 as b, sum(total) filter (where false) as s from orders');
  assert.deepEqual(r.rows, [{ a: 2, b: 6, s: null }]);
  r = await c.query('select $1::int4 is null as x, $2::text as y', [null, undefined]);
  assert.deepEqual(r.rows, [{ x: true, y: null }]);
  r = await c.query('select note from orders order by note, id');
  assert.deepEqual(r.rows.map((x) => x.note), ['coupon', 'gift wrap', null, null, null, null]);
  await c.query('drop table if exists tags');
  await c.query('create table tags (name text unique)');
  for (const v of [null, null, 'a']) await c.query('insert into tags values ($1)', [v]);
  assert.equal((await c.query('select count(*)::int4 as n from tags')).rows[0].n, 3);
});

check('foreign_key', async (c) => {
  await makeShop(c);
  await c.query('drop table if exists reviews');
  await c.query(
    'create table reviews (id int4 primary key,' +
      ' customer_id int4 not null references customers (id) on delete cascade, stars int2 not null)',
  );
  await c.query('insert into reviews values (1, 1, 5), (2, 2, 3), (3, 2, 4)');
  const e = await sqlError(c.query('insert into reviews values ($1, $2, $3)', [4, 99, 1]));
  assert.deepEqual([e.code, e.constraint], ['23503', 'reviews_customer_id_fkey']);
  await c.query('delete from customers where id = $1', [2]);
  assert.deepEqual((await c.query('select id from reviews order by id')).rows, [{ id: 1 }]);
  await c.query('drop table reviews');
});

check('serial_id_returning', async (c) => {
  await c.query('drop table if exists notes');
  await c.query('create table notes (id serial primary key, body text not null)');
  const ids = [];
  for (const body of ['first', 'second']) {
    ids.push((await c.query('insert into notes (body) values ($1) returning id', [body])).rows[0].id);
  }
  assert.deepEqual(ids, [1, 2]);
});

check('temporary_table_is_session_local', async (c) => {
  await c.query('create temporary table scratch (id int4 primary key, v text)');
  await c.query('insert into scratch values ($1, $2)', [1, 'mine']);
  assert.deepEqual((await c.query('select v from scratch')).rows, [{ v: 'mine' }]);
  const other = await connect();
  try {
    // Another session does not see it and can make its own.
    assert.equal((await sqlError(other.query('select * from scratch'))).code, '42P01');
    await other.query('create temporary table scratch (x int8)');
  } finally {
    await other.end();
  }
  assert.deepEqual((await c.query('select v from scratch')).rows, [{ v: 'mine' }]);
});

check('listen_notify', async (c) => {
  // A worker listens; another client queues jobs in a transaction. The
  // notifications arrive, with payloads and the sender's pid, only after the
  // commit, while the listener is idle.
  const heard = [];
  let wake;
  c.on('notification', (n) => {
    heard.push([n.channel, n.payload, n.processId]);
    if (wake) wake();
  });
  await c.query('listen new_jobs');
  const sender = await connect();
  try {
    const senderPid = (await sender.query('select pg_backend_pid() as pid')).rows[0].pid;
    await sender.query('begin');
    await sender.query("notify new_jobs, 'job 1'");
    await sender.query('select pg_notify($1, $2)', ['new_jobs', 'job 2']);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(heard, [], 'nothing before the commit');
    const arrived = new Promise((r) => { wake = () => heard.length === 2 && r(); });
    await sender.query('commit');
    await arrived;
    assert.deepEqual(heard, [['new_jobs', 'job 1', senderPid], ['new_jobs', 'job 2', senderPid]]);
  } finally {
    await sender.end();
  }
});

check('pool_concurrent_transactions', async (c) => {
  await c.query('drop table if exists counters');
  await c.query('create table counters (id int4 primary key, n int8 not null)');
  await c.query('insert into counters values (1, 0)');
  const pool = new pg.Pool({ ...CONFIG, max: 4 });
  try {
    const worker = async () => {
      for (let i = 0; i < 10; i++) {
        const pc = await pool.connect();
        try {
          await pc.query('begin');
          await pc.query('update counters set n = n + $1 where id = $2', [1, 1]);
          await pc.query('commit');
        } catch (e) {
          await pc.query('rollback');
          throw e;
        } finally {
          pc.release();
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    const r = await pool.query('select n from counters where id = $1', [1]);
    assert.deepEqual(r.rows, [{ n: '40' }]);
  } finally {
    await pool.end();
  }
});

// ---------------------------------------------------------------------------
// Every core type in text format.

// A PostgresInterval, what pg's default parser makes of an interval.
const INTERVAL = Object.getPrototypeOf(pg.types.getTypeParser(1186)('0'));
function interval(fields) {
  return Object.assign(Object.create(INTERVAL), fields);
}

// type -> [column type, [text sent, text expected back], [JS value sent,
// JS value pg's default parser returns]].
const TYPES = {
  bool: ['bool', [['t', 't'], ['false', 'f']], [[true, true], [false, false]]],
  int2: ['int2', [['-32768', '-32768'], ['32767', '32767']], [[-32768, -32768], [7, 7]]],
  int4: ['int4', [['-2147483648', '-2147483648'], [' 42', '42']], [[2147483647, 2147483647]]],
  int8: [
    'int8',
    [['-9223372036854775808', '-9223372036854775808'], ['9223372036854775807', '9223372036854775807']],
    [[9007199254740993n, '9007199254740993'], [-5, '-5']],
  ],
  float8: [
    'float8',
    [['0.1', '0.1'], ['-2.5e100', '-2.5e+100'], ['3.141592653589793', '3.141592653589793'], ['Infinity', 'Infinity']],
    [[0.1, 0.1], [-2.5e100, -2.5e100], [Infinity, Infinity]],
  ],
  numeric: [
    'numeric',
    [['12345.678', '12345.678'], ['-0.000123', '-0.000123'], ['1.500', '1.500'], ['1e20', '100000000000000000000']],
    [[12.5, '12.5'], ['123456789012345678901234567890.12345', '123456789012345678901234567890.12345']],
  ],
  text: ['text', [['héllo ☃', 'héllo ☃'], ['', '']], [["quote ' backslash \\ newline\n tab\t", "quote ' backslash \\ newline\n tab\t"]]],
  varchar: ['varchar(10)', [['var', 'var'], ['ten chars!', 'ten chars!']], [['var', 'var']]],
  char: ['char(5)', [['ab', 'ab   '], ['abcde', 'abcde']], [['ab', 'ab   ']]],
  timestamp: [
    'timestamp',
    [['2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.123456'], ['1999-12-31T23:59:59', '1999-12-31 23:59:59']],
    [[new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 123)), new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 123))]],
  ],
  timestamptz: [
    'timestamptz',
    [['2024-01-02 05:04:05.5+02', '2024-01-02 03:04:05.5+00'], ['1969-07-20 20:17:40Z', '1969-07-20 20:17:40+00']],
    [[new Date(Date.UTC(1969, 6, 20, 20, 17, 40)), new Date(Date.UTC(1969, 6, 20, 20, 17, 40))]],
  ],
  date: [
    'date',
    [['2000-02-29', '2000-02-29'], ['1969-07-20', '1969-07-20']],
    [['2099-12-31', new Date(Date.UTC(2099, 11, 31))]],
  ],
  bytea: [
    'bytea',
    [['\\x0001ff', '\\x0001ff'], ['\\x', '\\x']],
    [[Buffer.from([0, 1, 255]), Buffer.from([0, 1, 255])], [Buffer.alloc(0), Buffer.alloc(0)]],
  ],
  float4: [
    'float4',
    [['0.1', '0.1'], ['-2.5e30', '-2.5e+30'], ['3.4028235e38', '3.4028235e+38'], ['Infinity', 'Infinity'], ['NaN', 'NaN']],
    [[0.1, 0.1], [-2.5e30, -2.5e30], [-Infinity, -Infinity], [NaN, NaN]],
  ],
  time: [
    'time',
    [['04:05:06.789', '04:05:06.789'], ['23:59:59.999999', '23:59:59.999999'], ['4:05 PM', '16:05:00'], ['24:00:00', '24:00:00']],
    [['04:05:06.789', '04:05:06.789']],
  ],
  timetz: [
    'timetz',
    [['04:05:06+02', '04:05:06+02'], ['23:59:59.999999-05:30', '23:59:59.999999-05:30'], ['00:00:00Z', '00:00:00+00']],
    [['04:05:06+02', '04:05:06+02']],
  ],
  // pg parses an interval into a PostgresInterval and sends one as
  // '6.5 seconds 5 minutes 4 hours 3 days 2 months 1 years'.
  interval: [
    'interval',
    [
      ['1 year 2 mons 3 days 04:05:06.5', '1 year 2 mons 3 days 04:05:06.5'],
      ['-1 days +02:00:00', '-1 days +02:00:00'],
      ['00:00:00', '00:00:00'],
      ['P1Y2M3DT4H5M6S', '1 year 2 mons 3 days 04:05:06'],
      ['-00:00:00.000001', '-00:00:00.000001'],
    ],
    [
      [interval({ years: 1, months: 2, days: 3, hours: 4, minutes: 5, seconds: 6, milliseconds: 500 }), interval({ years: 1, months: 2, days: 3, hours: 4, minutes: 5, seconds: 6, milliseconds: 500 })],
      ['-1 days +02:00:00', interval({ days: -1, hours: 2 })],
      [interval({}), interval({})],
    ],
  ],
  uuid: [
    'uuid',
    [['A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'], ['{a0eebc999c0b4ef8bb6d6bb9bd380a11}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']],
    [['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']],
  ],
  // pg sends objects as JSON.stringify and parses json and jsonb with JSON.parse.
  json: [
    'json',
    [['{"b": 1,  "a": [1, 2]}', '{"b": 1,  "a": [1, 2]}'], ['[1e2, "\\u00e9"]', '[1e2, "\\u00e9"]']],
    [[{ b: 1, a: [1, 2] }, { b: 1, a: [1, 2] }], ['"héllo ☃"', 'héllo ☃']],
  ],
  jsonb: [
    'jsonb',
    [['{"b":1,"a":[1,2.50]}', '{"a": [1, 2.50], "b": 1}'], ['[1e2, "\\u00e9", {"a": 1, "a": 2}, null]', '[100, "é", {"a": 2}, null]']],
    [[{ b: 1, a: [1, 2.5] }, { a: [1, 2.5], b: 1 }], [JSON.stringify([1, 'é', null]), [1, 'é', null]]],
  ],
  // pg sends JavaScript arrays as array literals with every element quoted.
  int4_array: [
    'int4[]',
    [['{1,NULL,3}', '{1,NULL,3}'], ['{}', '{}'], [' { -2147483648 , 2147483647 } ', '{-2147483648,2147483647}'], ['[0:1]={1,2}', '[0:1]={1,2}']],
    [[[1, null, 3], [1, null, 3]], [[], []]],
  ],
  text_array: [
    'text[]',
    [
      [
        '{"a \\"quoted\\" b","with, comma",NULL,héllo ☃,"","NULL","back\\\\slash","{braces}"," spaced ",plain}',
        '{"a \\"quoted\\" b","with, comma",NULL,"héllo ☃","","NULL","back\\\\slash","{braces}"," spaced ",plain}',
      ],
      ['{}', '{}'],
    ],
    [
      [
        ['a "quoted" b', 'with, comma', null, 'héllo ☃', '', 'NULL', 'back\\slash', '{braces}', ' spaced '],
        ['a "quoted" b', 'with, comma', null, 'héllo ☃', '', 'NULL', 'back\\slash', '{braces}', ' spaced '],
      ],
    ],
  ],
  float8_array: [
    'float8[]',
    [['{0.1,-2.5e100,Infinity,-Infinity,NaN,NULL}', '{0.1,-2.5e+100,Infinity,-Infinity,NaN,NULL}']],
    [[[0.1, -2.5e100, Infinity, NaN, null], [0.1, -2.5e100, Infinity, NaN, null]]],
  ],
  numeric_array: [
    'numeric[]',
    [['{1.500,-0.000123,1e20,NULL,NaN}', '{1.500,-0.000123,100000000000000000000,NULL,NaN}']],
    [[['1.500', '-0.000123', null], [1.5, -0.000123, null]]], // pg parses numeric[] elements as floats
  ],
  bool_array: ['bool[]', [['{t,false,NULL}', '{t,f,NULL}']], [[[true, false, null], [true, false, null]]]],
  date_array: [
    'date[]',
    [['{2000-02-29,NULL,1969-07-20}', '{2000-02-29,NULL,1969-07-20}']],
    [[['2000-02-29', null], [new Date(Date.UTC(2000, 1, 29)), null]]],
  ],
  timestamptz_array: [
    'timestamptz[]',
    [['{"2024-01-02 05:04:05.5+02","1969-07-20 20:17:40Z",NULL}', '{"2024-01-02 03:04:05.5+00","1969-07-20 20:17:40+00",NULL}']],
    [
      [
        [new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 500)), new Date(Date.UTC(1969, 6, 20, 20, 17, 40)), null],
        [new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 500)), new Date(Date.UTC(1969, 6, 20, 20, 17, 40)), null],
      ],
    ],
  ],
  uuid_array: [
    'uuid[]',
    [['{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11,NULL}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}']],
    [[['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', null], ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', null]]],
  ],
  jsonb_array: [
    'jsonb[]',
    [['{"{\\"b\\":1,\\"a\\":[1,2.50]}",NULL,"[1, 2]"}', '{"{\\"a\\": [1, 2.50], \\"b\\": 1}",NULL,"[1, 2]"}']],
    [[[JSON.stringify({ b: 1, a: [1, 2.5] }), null, '"x"'], [{ a: [1, 2.5], b: 1 }, null, 'x']]],
  ],
  int4_array_2d: [
    'int4[][]',
    [['{{1,2,3},{4,NULL,6}}', '{{1,2,3},{4,NULL,6}}'], ['{{1},{2}}', '{{1},{2}}']],
    [[[[1, 2, 3], [4, null, 6]], [[1, 2, 3], [4, null, 6]]]],
  ],
};

const RAW = { getTypeParser: () => (v) => v }; // results as PostgreSQL's text

for (const [typ, [coltype, texts, values]] of Object.entries(TYPES)) {
  check(`roundtrip_text_${typ}`, async (c) => {
    await c.query('drop table if exists typed');
    await c.query(`create table typed (id int4 primary key, v ${coltype})`);
    let id = 0;
    for (const [sent, expected] of texts) {
      await c.query('insert into typed (id, v) values ($1, $2)', [++id, sent]);
      let r = await c.query({ text: 'select v from typed where id = $1', values: [id], types: RAW });
      assert.deepEqual(r.rows, [{ v: expected }], `${coltype} ${sent}`);
      r = await c.query({ text: `select $1::${coltype} as v`, values: [sent], types: RAW });
      assert.deepEqual(r.rows, [{ v: expected }], `${coltype} ${sent}`);
      // The simple protocol, with the value as a literal.
      r = await c.query({ text: `select ${c.escapeLiteral(sent)}::${coltype} as v`, types: RAW });
      assert.deepEqual(r.rows, [{ v: expected }], `${coltype} ${sent}`);
    }
    for (const [sent, expected] of values) {
      await c.query('insert into typed (id, v) values ($1, $2)', [++id, sent]);
      let r = await c.query('select v from typed where id = $1', [id]);
      assert.deepEqual(r.rows, [{ v: expected }], `${coltype} ${sent}`);
      r = await c.query(`select $1::${coltype} as v`, [sent]);
      assert.deepEqual(r.rows, [{ v: expected }], `${coltype} ${sent}`);
    }
    await c.query('insert into typed (id, v) values ($1, $2)', [-1, null]);
    const r = await c.query('select v, $1::' + coltype + ' is null as p from typed where id = -1', [null]);
    assert.deepEqual(r.rows, [{ v: null, p: true }]);
  });
}

check('numeric_typmod_rounds', async (c) => {
  const r = await c.query('select $1::numeric(12,3) as v', ['12345.6785']);
  assert.deepEqual(r.rows, [{ v: '12345.679' }]);
  const e = await sqlError(c.query('select $1::numeric(4,2) as v', ['123.4']));
  assert.equal(e.code, '22003');
});

check('enum_types', async (c) => {
  await c.query('drop table if exists moods');
  await c.query('drop type if exists mood');
  await c.query("create type mood as enum ('sad', 'ok', 'happy')");
  await c.query('create table moods (id int4 primary key, m mood not null, past mood[])');
  await c.query('insert into moods values ($1, $2, $3), ($4, $5, $6)', [1, 'happy', ['sad', 'ok'], 2, 'sad', null]);
  // node-postgres has no parser for the enum's OIDs: values arrive as
  // PostgreSQL's text, the array in its literal form.
  const r = await c.query('select id, m, past from moods where m >= $1 order by m', ['sad']);
  assert.deepEqual(r.rows, [{ id: 2, m: 'sad', past: null }, { id: 1, m: 'happy', past: '{sad,ok}' }]);
  const { rows } = await c.query("select oid from pg_type where typname = 'mood'");
  assert.equal(r.fields[1].dataTypeID, rows[0].oid);
  const e = await sqlError(c.query('insert into moods values ($1, $2)', [3, 'glad']));
  assert.equal(e.code, '22P02');
  await c.query('drop table moods');
  await c.query('drop type mood');
});

// ---------------------------------------------------------------------------
// Sequelize, the ORM, over the same driver.
require('./sequelize_test.js');

// TypeORM, another ORM over the same driver.
require('./typeorm_test.js');
