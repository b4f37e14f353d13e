// TypeORM 0.3 (over node-postgres) against Strata or PostgreSQL: its
// connect (`SELECT * FROM current_schema()`, `SHOW server_version`), the
// uuid-ossp extension it installs for generated UUIDs, synchronize() of
// entities with a serial key, a unique column, an index, defaults, JSONB,
// an array, an enum and a many-to-one relation with ON DELETE CASCADE,
// which run again sends no DDL (it reads the tables back through
// information_schema and pg_catalog and finds them as declared); then
// repository saves and relation loading, a query builder join with an
// aggregate, a unique violation by SQLSTATE and a transaction rolled back.
// Every expectation was checked against PostgreSQL 15. Loaded by test.js.
'use strict';

require('reflect-metadata');
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { DataSource, EntitySchema } = require('typeorm');

const PORT = Number(process.env.STRATA_PORT);

const Author = new EntitySchema({
  name: 'Author',
  tableName: 'torm_author',
  columns: {
    id: { type: Number, primary: true, generated: true },
    name: { type: 'varchar', length: 80 },
    email: { type: 'varchar', unique: true, nullable: true },
    score: { type: 'numeric', precision: 10, scale: 2, default: 0 },
    active: { type: 'boolean', default: true },
    created: { type: 'timestamptz', createDate: true },
    meta: { type: 'jsonb', nullable: true },
    tags: { type: 'text', array: true, nullable: true },
    uid: { type: 'uuid', generated: 'uuid' },
    kind: { type: 'enum', enum: ['a', 'b'], enumName: 'torm_kind', default: 'a' },
  },
  indices: [{ name: 'torm_author_name_idx', columns: ['name'] }],
  relations: { books: { type: 'one-to-many', target: 'Book', inverseSide: 'author' } },
});

const Book = new EntitySchema({
  name: 'Book',
  tableName: 'torm_book',
  columns: {
    id: { type: Number, primary: true, generated: 'increment' },
    title: { type: 'text' },
    pages: { type: 'int', default: 100 },
  },
  relations: {
    author: {
      type: 'many-to-one',
      target: 'Author',
      joinColumn: true,
      onDelete: 'CASCADE',
      inverseSide: 'books',
    },
  },
});

test('typeorm_synchronize_and_repositories', { timeout: 120000 }, async () => {
  const ddl = [];
  const ds = new DataSource({
    type: 'postgres',
    host: '127.0.0.1',
    port: PORT,
    username: 'postgres',
    database: 'postgres',
    entities: [Author, Book],
    logging: ['query'],
    logger: {
      logQuery: (q) => /^(CREATE|ALTER|DROP)/.test(q) && ddl.push(q),
      logQueryError() {},
      logQuerySlow() {},
      logSchemaBuild() {},
      logMigration() {},
      log() {},
    },
  });
  await ds.initialize();
  try {
    await ds.query('drop table if exists torm_book, torm_author cascade');
    await ds.query('drop type if exists torm_kind');
    ddl.length = 0;
    await ds.synchronize();
    assert.deepEqual(
      ddl.map((q) => q.match(/^\w+ \w+ "[^"]+"(\."[^"]+")?/)[0]),
      [
        'CREATE TYPE "public"."torm_kind"',
        'CREATE TABLE "torm_author"',
        'CREATE INDEX "torm_author_name_idx"',
        'CREATE TABLE "torm_book"',
        'ALTER TABLE "torm_book"',
      ],
    );
    // Run again, synchronize finds every column, key and index as declared.
    ddl.length = 0;
    await ds.synchronize();
    assert.deepEqual(ddl, []);

    const authors = ds.getRepository('Author');
    const books = ds.getRepository('Book');
    const ann = await authors.save({ name: 'ann', email: 'ann@example.org', meta: { k: 1 }, tags: ['x'] });
    await books.save([
      { title: 'First', author: ann },
      { title: 'Second', pages: 250, author: ann },
    ]);
    const got = await authors.findOne({ where: { id: ann.id }, relations: { books: true } });
    assert.deepEqual(
      [got.name, got.score, got.active, got.kind, got.books.length, got.meta, got.tags],
      ['ann', '0.00', true, 'a', 2, { k: 1 }, ['x']],
    );
    assert.match(got.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/);
    const totals = await books
      .createQueryBuilder('b')
      .innerJoin('b.author', 'a')
      .select('a.name', 'name')
      .addSelect('sum(b.pages)::int', 'pages')
      .groupBy('a.name')
      .getRawMany();
    assert.deepEqual(totals, [{ name: 'ann', pages: 350 }]);
    await assert.rejects(authors.save({ name: 'dup', email: 'ann@example.org' }), (e) => {
      assert.equal(e.code, '23505');
      return true;
    });
    // A transaction that throws leaves nothing behind.
    await assert.rejects(
      ds.transaction(async (m) => {
        await m.getRepository('Author').save({ name: 'bob' });
        throw new Error('give up');
      }),
      /give up/,
    );
    assert.equal(await authors.count(), 1);
    // ON DELETE CASCADE takes the books with their author.
    await authors.delete({ id: ann.id });
    assert.equal(await books.count(), 0);
    await ds.query('drop table torm_book, torm_author cascade');
    await ds.query('drop type torm_kind');
  } finally {
    await ds.destroy();
  }
});
