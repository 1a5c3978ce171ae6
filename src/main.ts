import { parseArgs } from 'node:util';
import { loadConfig } from './config.ts';
import type { Role, Running } from './server.ts';

const ROLES: readonly Role[] = ['api', 'operator', 'worker'];
export const SERVE_USAGE = 'callcap serve [--role api|operator|worker]...';

/**
 * `callcap serve [--role api|operator|worker …]`: loads the config and starts the roles (all three
 * in one process by default). Shared by `npm start` (this file) and the `callcap` CLI (src/cli.ts).
 * Returns 2 on a usage error and EXIT_CONFIG (78) when a setting stops the start (a busy PORT: one
 * line on stderr names the setting, no stack trace); otherwise it resolves once the listeners are
 * up, and the process keeps running until SIGINT/SIGTERM closes everything.
 */
export async function serve(argv: string[]): Promise<number | null> {
  let parsed: ReturnType<typeof parseServeArgs>;
  try {
    parsed = parseServeArgs(argv);
  } catch (err) {
    process.stderr.write(`callcap: ${(err as Error).message}\nUsage: ${SERVE_USAGE}\n`);
    return 2;
  }
  // The service's modules load only now: a usage error is answered without them (a second less).
  const { EXIT_CONFIG, StartupError, startRoles } = await import('./server.ts');
  // a long-running service's garbage collection (src/heap.ts)
  (await import('./heap.ts')).tuneHeap();
  // Signal handlers go in first: a stop during startup closes once the roles are up. A second
  // signal while closing forces the exit.
  let running: Running | null = null;
  let stopping = false;
  const stop = async () => {
    if (stopping) process.exit(1);
    stopping = true;
    if (!running) return;
    await running.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    running = await startRoles(loadConfig(), parsed.roles);
  } catch (err) {
    if (!(err instanceof StartupError)) throw err;
    process.stderr.write(`callcap: ${err.message}\n`);
    return EXIT_CONFIG;
  }
  if (stopping) {
    await running.close();
    process.exit(0);
  }
  return null;
}

/** Roles may repeat (--role api --role worker) or be comma-separated (--role api,worker). */
export function parseServeArgs(argv: string[]): { roles: Role[] } {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { role: { type: 'string', multiple: true } },
  });
  const extra = positionals.filter((p, i) => !(i === 0 && p === 'serve'));
  if (extra.length > 0) throw new Error(`Unexpected argument "${extra[0]}".`);
  const roles = (values.role ?? ROLES).flatMap((r) => r.split(',')).map((r) => r.trim());
  for (const r of roles) {
    if (!(ROLES as readonly string[]).includes(r))
      throw new Error(`Unknown role "${r}": use api, operator or worker.`);
  }
  return { roles: [...new Set(roles)] as Role[] };
}

if (import.meta.main) {
  serve(process.argv.slice(2)).then(
    (code) => {
      if (code !== null) process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`callcap: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
