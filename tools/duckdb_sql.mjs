// Runs SQL from standard input the way `duckdb -unsigned -list` would, for the doc test of
// ext/duckdb/README.md (Debian has no DuckDB shell; this uses the Node client pinned in
// ext/duckdb/npm): an in-memory database that allows unsigned extensions, each statement
// in order, and for each SELECT its column names and rows, `|`-separated, NULL as empty.
// The first error is printed as `Error: ...` and ends the run with exit status 1.
//
//   node tools/duckdb_sql.mjs NPM_DIR < statements.sql
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const npmDir = process.argv[2];
if (!npmDir) {
  console.error('usage: node tools/duckdb_sql.mjs NPM_DIR < statements.sql');
  process.exit(2);
}
const require = createRequire(join(npmDir, 'package.json'));
const { DuckDBInstance, StatementType } = require('@duckdb/node-api');

const sql = readFileSync(0, 'utf8');
const instance = await DuckDBInstance.create(':memory:', { allow_unsigned_extensions: 'true' });
const con = await instance.connect();
try {
  const statements = await con.extractStatements(sql);
  for (let i = 0; i < statements.count; i++) {
    const prepared = await statements.prepare(i);
    const reader = await prepared.runAndReadAll();
    if (prepared.statementType !== StatementType.SELECT) continue;
    const text = (v) => (v === null ? '' : String(v));
    console.log(reader.columnNames().join('|'));
    for (const row of reader.getRows()) console.log(row.map(text).join('|'));
  }
} catch (e) {
  console.log(`Error: ${e.message}`);
  process.exit(1);
}
