// Sequelize 6 (over node-postgres) against Strata or PostgreSQL: the ORM's
// connect (SET TIME ZONE INTERVAL ...), sync() of models with keys, a unique
// column, an index, defaults, JSONB, arrays, UUIDs, an enum, a foreign key
// with ON DELETE SET NULL and a paranoid (soft-delete) table; its
// introspection (describeTable through information_schema.columns and
// pg_statio_all_tables, showIndex through pg_index with array_agg(attname),
// whose name[] result node-postgres leaves as text for Sequelize to split);
// then create with an association, eager loading, a unique violation by
// SQLSTATE, a transaction with a nested one (a savepoint) rolled back, soft
// delete, and sync({ alter: true }) to a changed model. Every expectation was
// checked against PostgreSQL 15. Loaded by test.js (same environment).
'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { Sequelize, DataTypes, Op } = require('sequelize');

const PORT = Number(process.env.STRATA_PORT);

function models(s, v2) {
  const Company = s.define('SqzCompany', {
    name: { type: DataTypes.STRING(100), allowNull: false, unique: true },
  });
  const User = s.define(
    'SqzUser',
    {
      name: { type: v2 ? DataTypes.STRING(128) : DataTypes.STRING(64), allowNull: false },
      email: { type: DataTypes.STRING, unique: true },
      age: { type: DataTypes.INTEGER, defaultValue: v2 ? 21 : 18 },
      balance: { type: DataTypes.DECIMAL(12, 2), defaultValue: 0 },
      active: { type: DataTypes.BOOLEAN, defaultValue: true },
      meta: { type: DataTypes.JSONB },
      tags: { type: DataTypes.ARRAY(DataTypes.TEXT) },
      uid: { type: DataTypes.UUID, defaultValue: DataTypes.UUIDV4 },
      kind: { type: DataTypes.ENUM('a', 'b') },
      note: { type: DataTypes.TEXT, comment: 'free text' },
      ...(v2 ? { nickname: { type: DataTypes.STRING(40) } } : {}),
    },
    { indexes: [{ fields: ['name'] }], paranoid: true },
  );
  User.belongsTo(Company, { onDelete: 'SET NULL' });
  Company.hasMany(User);
  return { Company, User };
}

test('sequelize_sync_introspect_and_orm', { timeout: 120000 }, async () => {
  const s = new Sequelize('postgres', 'postgres', '', {
    host: '127.0.0.1',
    port: PORT,
    dialect: 'postgres',
    logging: false,
  });
  try {
    await s.query('drop table if exists "SqzUsers", "SqzCompanies" cascade');
    await s.query('drop type if exists "enum_SqzUsers_kind"');
    let { Company, User } = models(s, false);
    await s.sync();
    // Sequelize's connect sent SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE.
    const [zone] = await s.query('show timezone', { type: Sequelize.QueryTypes.SELECT });
    assert.equal(zone.TimeZone, '<+00>-00');

    const qi = s.getQueryInterface();
    const cols = await qi.describeTable('SqzUsers');
    const brief = (c) => [c.type, c.allowNull, c.defaultValue, c.primaryKey];
    assert.deepEqual(brief(cols.id), ['INTEGER', false, 'nextval("SqzUsers_id_seq"::regclass)', true]);
    assert.deepEqual(brief(cols.name), ['CHARACTER VARYING(64)', false, null, false]);
    assert.deepEqual(brief(cols.age), ['INTEGER', true, '18', false]);
    assert.deepEqual(brief(cols.balance), ['NUMERIC', true, '0', false]);
    assert.deepEqual(brief(cols.active), ['BOOLEAN', true, true, false]);
    assert.deepEqual(brief(cols.tags), ['ARRAY', true, null, false]);
    assert.deepEqual([cols.kind.type, cols.kind.special], ['USER-DEFINED', ['a', 'b']]);
    assert.equal(cols.note.comment, 'free text');
    const indexes = (await qi.showIndex('SqzUsers')).map((i) => [
      i.name,
      i.unique,
      i.primary,
      i.fields.map((f) => f.attribute),
    ]);
    assert.deepEqual(indexes, [
      ['SqzUsers_email_key', true, false, ['email']],
      ['SqzUsers_pkey', true, true, ['id']],
      ['sqz_users_name', false, false, ['name']],
    ]);
    const fks = await qi.getForeignKeyReferencesForTable('SqzUsers');
    assert.deepEqual(
      fks.map((f) => [f.columnName, f.referencedTableName, f.referencedColumnName]),
      [['SqzCompanyId', 'SqzCompanies', 'id']],
    );

    const acme = await Company.create({ name: 'acme' });
    const ann = await User.create({
      name: 'ann',
      email: 'ann@example.org',
      SqzCompanyId: acme.id,
      meta: { level: 2 },
      tags: ['x', 'y'],
      kind: 'a',
    });
    const got = await User.findOne({ where: { email: 'ann@example.org' }, include: Company });
    assert.deepEqual(
      [got.name, got.age, got.active, got.balance, got.SqzCompany.name, got.meta, got.tags, got.kind],
      ['ann', 18, true, '0.00', 'acme', { level: 2 }, ['x', 'y'], 'a'],
    );
    assert.match(got.uid, /^[0-9a-f-]{36}$/);
    await assert.rejects(User.create({ name: 'dup', email: 'ann@example.org' }), (e) => {
      assert.equal(e.name, 'SequelizeUniqueConstraintError');
      assert.equal(e.parent.code, '23505');
      return true;
    });
    // A nested transaction is a savepoint: its failure rolls back its own
    // work only.
    await s.transaction(async (t) => {
      await User.update({ age: 40 }, { where: { id: ann.id }, transaction: t });
      await assert.rejects(
        s.transaction({ transaction: t }, async (t2) => {
          await User.create({ name: 'bob' }, { transaction: t2 });
          throw new Error('undo bob');
        }),
        /undo bob/,
      );
    });
    assert.equal(await User.count({ where: { age: { [Op.gt]: 30 } } }), 1);
    assert.equal(await User.count({ where: { name: 'bob' } }), 0);
    await ann.destroy();
    assert.deepEqual([await User.count(), await User.count({ paranoid: false })], [0, 1]);
    await Company.destroy({ where: { id: acme.id } });
    const orphan = await User.findOne({ where: { id: ann.id }, paranoid: false });
    assert.equal(orphan.SqzCompanyId, null);

    // A changed model: sync({ alter: true }) adds the column and changes
    // the type and default, and runs again.
    s.modelManager.removeModel(User);
    s.modelManager.removeModel(Company);
    ({ Company, User } = models(s, true));
    await s.sync({ alter: true });
    await s.sync({ alter: true });
    const after = await qi.describeTable('SqzUsers');
    assert.deepEqual(brief(after.name), ['CHARACTER VARYING(128)', false, null, false]);
    assert.deepEqual(brief(after.age), ['INTEGER', true, '21', false]);
    assert.deepEqual(brief(after.nickname), ['CHARACTER VARYING(40)', true, null, false]);
    await s.query('drop table "SqzUsers", "SqzCompanies" cascade');
    await s.query('drop type "enum_SqzUsers_kind"');
  } finally {
    await s.close();
  }
});
