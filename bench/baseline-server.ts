import Fastify from 'fastify';
import pg from 'pg';

/**
 * The REST benchmark's baseline: a bare Fastify route running the same primary-key query as
 * GET /calls/{id}, without auth, rate limiting, envelope or serialisation rules. Lives in bench/,
 * never in the product. Prints its port on stdout.
 */
const pool = new pg.Pool({ connectionString: process.env.BENCH_DB_URL, max: 20 });
const app = Fastify({ logger: false });
app.get('/calls/:id', async (req) => {
  const { id } = req.params as { id: string };
  const { rows } = await pool.query(
    `SELECT c.*, a.analysis, a.followup_email FROM calls c LEFT JOIN call_analyses a ON a.call_id = c.id
      WHERE c.id = $1 AND c.organization_id = $2 AND c.erased_at IS NULL`,
    [id, process.env.BENCH_ORG],
  );
  return rows[0] ?? null;
});
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`PORT ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
