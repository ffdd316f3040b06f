// The DuckDB extension as a Node user loads it: @duckdb/node-api (pinned in
// ext/duckdb/npm), an in-memory DuckDB with allow_unsigned_extensions, LOAD of
// build/mentat.duckdb_extension, then every function: edn_t, edn_q (typed columns, a
// join with a DuckDB table, options, format := 'edn'), edn_pull, edn_eval, edn_datoms,
// edn_explain, and an error for each.
//
//   node node_api_test.mjs EXTENSION NPM_DIR TMP_DIR
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [ext, npmDir, tmpRoot] = process.argv.slice(2);
if (!ext || !npmDir) {
  console.error('usage: node node_api_test.mjs EXTENSION NPM_DIR [TMP_DIR]');
  process.exit(2);
}
const require = createRequire(join(npmDir, 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');

const dir = mkdtempSync(join(tmpRoot || '/tmp', 'mentat-duckdb-node-'));
const db = join(dir, 'people.db');
const sq = (s) => `'${s.replaceAll("'", "''")}'`;

let passed = 0;
const failures = [];
async function test(name, body) {
  try {
    await body();
    passed++;
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}

const instance = await DuckDBInstance.create(':memory:', { allow_unsigned_extensions: 'true' });
const con = await instance.connect();
await con.run(`LOAD ${sq(ext)}`);
const all = async (sql) => (await con.runAndReadAll(sql));
const one = async (sql) => (await all(sql)).getRows()[0][0];
async function fails(sql, text) {
  let err;
  try {
    await con.runAndReadAll(sql);
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected an error containing "${text}": ${sql}`);
  assert.ok(err.message.includes(text), `expected "${text}" in: ${err.message}`);
}

const schema = `[{:db/ident :person/name :db/valueType :db.type/string
                  :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                 {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
                 {:db/ident :person/height :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
                 {:db/ident :person/active :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}
                 {:db/ident :person/born :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
                 {:db/ident :person/id :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}
                 {:db/ident :person/photo :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}
                 {:db/ident :person/role :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
                 {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]`;
const people = `[{:db/id "ann" :person/name "Ann" :person/age 31 :person/height 1.75 :person/active true
                  :person/born #inst "1990-05-01T10:20:30.000Z"
                  :person/id #uuid "4f2c6b1e-8d3a-4c5b-9e7f-0a1b2c3d4e5f" :person/photo #bytes "0aff"
                  :person/role :role/admin :person/friend "bob"}
                 {:db/id "bob" :person/name "Bob" :person/age 42 :person/active false}]`;
let ann, bob;

await test('edn_t returns the JSON tx report', async () => {
  const first = JSON.parse(await one(`SELECT edn_t(${sq(db)}, ${sq(schema)})`));
  assert.equal(typeof first.tx_id, 'number');
  const r = JSON.parse(await one(`SELECT edn_t(${sq(db)}, ${sq(people)})`));
  assert.deepEqual(Object.keys(r).sort(), ['tempids', 'tx_id', 'tx_instant']);
  assert.ok(r.tx_id > first.tx_id);
  assert.match(r.tx_instant, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
  assert.ok(!Number.isNaN(Date.parse(r.tx_instant)));
  ann = r.tempids.ann;
  bob = r.tempids.bob;
  assert.equal(typeof ann, 'number');
  assert.notEqual(ann, bob);
});

await test('edn_q: typed columns named after the find elements', async () => {
  const r = await all(`SELECT * FROM edn_q(${sq(db)},
    '[:find ?e ?name ?age ?height ?active ?born ?id ?photo ?role ?f
      :where [?e :person/name ?name] [?e :person/age ?age] [?e :person/height ?height]
             [?e :person/active ?active] [?e :person/born ?born] [?e :person/id ?id]
             [?e :person/photo ?photo] [?e :person/role ?role] [?e :person/friend ?f]]', '{}')`);
  assert.deepEqual(r.columnNames(),
                   ['e', 'name', 'age', 'height', 'active', 'born', 'id', 'photo', 'role', 'f']);
  assert.deepEqual(r.columnTypes().map(String), ['BIGINT', 'VARCHAR', 'BIGINT', 'DOUBLE',
    'BOOLEAN', 'TIMESTAMP', 'UUID', 'BLOB', 'VARCHAR', 'BIGINT']);
  const [row] = r.getRows();
  assert.equal(row[0], BigInt(ann));
  assert.equal(row[1], 'Ann');
  assert.equal(row[2], 31n);
  assert.equal(row[3], 1.75);
  assert.equal(row[4], true);
  assert.equal(String(row[5]), '1990-05-01 10:20:30');
  assert.equal(String(row[6]), '4f2c6b1e-8d3a-4c5b-9e7f-0a1b2c3d4e5f');
  assert.deepEqual([...row[7].bytes], [0x0a, 0xff]);
  assert.equal(row[8], ':role/admin');
  assert.equal(row[9], BigInt(bob));
  // DuckDB computes with them as their types.
  assert.equal(await one(`SELECT year(born) + age FROM edn_q(${sq(db)},
    '[:find ?born ?age :where [?e :person/born ?born] [?e :person/age ?age]]', '{}')`), 2021n);
});

await test('edn_q joins a DuckDB table on typed columns', async () => {
  await con.run('CREATE TABLE salaries(person_id BIGINT, salary INTEGER)');
  await con.run(`INSERT INTO salaries VALUES (${ann}, 5000), (${bob}, 6000), (1, 7)`);
  const r = await all(`SELECT q.name, s.salary FROM edn_q(${sq(db)},
      '[:find ?e ?name :where [?e :person/name ?name]]', '{}') q
    JOIN salaries s ON s.person_id = q.e ORDER BY s.salary`);
  assert.deepEqual(r.getRows(), [['Ann', 5000], ['Bob', 6000]]);
});

await test('edn_q shapes, aggregates, inputs and format', async () => {
  assert.equal(await one(`SELECT count_e FROM edn_q(${sq(db)},
    '[:find (count ?e) :where [?e :person/name]]', NULL)`), 2n);
  assert.deepEqual((await all(`SELECT * FROM edn_q(${sq(db)},
    '[:find [?n ...] :where [_ :person/name ?n]]', '{}') ORDER BY 1`)).getRows(),
                   [['Ann'], ['Bob']]);
  assert.equal(await one(`SELECT * FROM edn_q(${sq(db)},
    '[:find ?a . :in $ ?n :where [?e :person/name ?n] [?e :person/age ?a]]',
    '{"inputs": ["Bob"]}')`), 42n);
  const edn = await one(`SELECT result FROM edn_q(${sq(db)},
    '[:find ?n . :where [?e :person/age 42] [?e :person/name ?n]]', '{}', format := 'edn')`);
  assert.equal(edn, '"Bob"');
  // No row for an empty result, many rows for a large one (chunks).
  assert.equal((await all(`SELECT * FROM edn_q(${sq(db)},
    '[:find ?e :where [?e :person/age 99]]', '{}')`)).getRows().length, 0);
});

await test('edn_pull returns a JSON map', async () => {
  const m = JSON.parse(await one(`SELECT edn_pull(${sq(db)}, '[:person/name :person/age]', ${ann})`));
  assert.deepEqual(m, { ':db/id': ann, ':person/name': 'Ann', ':person/age': 31 });
  const byRef = JSON.parse(await one(
    `SELECT edn_pull(${sq(db)}, '[:person/age]', '[:person/name "Bob"]')`));
  assert.equal(byRef[':person/age'], 42);
  assert.equal(await one(`SELECT edn_pull(${sq(db)}, '[*]', NULL)`), null);
});

await test('edn_eval runs a script on the store', async () => {
  assert.equal(await one(`SELECT edn_eval(${sq(db)}, '(+ 1 2)')`), '3');
  assert.equal(await one(`SELECT edn_eval(${sq(db)},
    '(count (mentat.store/q (mentat.store/db conn) (quote [:find ?e :where [?e :person/name]])))')`),
               '2');
});

await test('edn_datoms and edn_explain', async () => {
  const d = JSON.parse(await one(`SELECT edn_datoms(${sq(db)}, ':avet', ':person/name "Ann"')`));
  assert.equal(d.length, 1);
  assert.equal(d[0][0], ann);
  assert.match(await one(`SELECT edn_explain(${sq(db)},
    '[:find ?e :where [?e :person/name "Ann"]]', '{}')`), /SELECT/);
});

await test('errors are DuckDB errors with the mentat message', async () => {
  await fails(`SELECT edn_t(${sq(db)}, '[{:person/nope 1}]')`, 'unknown attribute :person/nope');
  await fails(`SELECT edn_t(${sq(db)}, '[{:person/name')`, 'edn_t: parse error');
  await fails(`SELECT * FROM edn_q(${sq(db)}, '[:find ?e :where [?e :person/name', '{}')`,
              'edn_q: parse error');
  await fails(`SELECT * FROM edn_q(${sq(db)}, '[:find ?e :where [?e :person/name]]', '{"bogus": 1}')`,
              'bogus');
  await fails(`SELECT * FROM edn_q(${sq(join(dir, 'missing.db'))}, '[:find ?e :where [?e :db/ident]]', '{}')`,
              'edn_q:');
  await fails(`SELECT edn_pull(${sq(db)}, '[:person/nope]', ${ann})`, 'edn_pull:');
  await fails(`SELECT edn_eval(${sq(db)}, '(+ 1')`, 'edn_eval:');
  await fails(`SELECT edn_datoms(${sq(db)}, ':nope', '')`, 'edn_datoms:');
  // A failed transaction wrote nothing, and the connection still works.
  assert.equal(await one(`SELECT count(*) FROM edn_q(${sq(db)},
    '[:find ?e :where [?e :person/name]]', '{}')`), 2n);
});

con.closeSync?.();
instance.closeSync?.();
rmSync(dir, { recursive: true, force: true });
console.log(`node_api_test: ${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
