import { connect } from '../../src-main/store-postgres/connect.js';
import { migratePostgres } from '../../src-main/store-postgres/migrations.js';

/**
 * A process that migrates the database at argv[2] when told to: it connects, says "ready",
 * waits for a line on stdin, migrates, and prints the versions it applied as JSON. Several
 * started at once and told together race as team servers started together would.
 */
const url = process.argv[2];
if (!url) throw new Error('usage: postgres-migrate-child.ts URL');
const sql = await connect(url, { max: 1 });
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
const applied = await migratePostgres(sql, { now: () => new Date() });
process.stdout.write(`${JSON.stringify(applied)}\n`);
await sql.end();
process.stdin.destroy();
