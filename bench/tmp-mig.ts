import { openPostgres } from '../src/db/postgres.ts';
import { migrate } from '../src/db/migrate.ts';
const db = await openPostgres('postgres://postgres@127.0.0.1:5432/cc_bench_small'); await migrate(db); await db.close();
