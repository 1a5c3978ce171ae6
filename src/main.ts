import { parseArgs } from 'node:util';
import { loadConfig } from './config.ts';
import { startRoles, type Role } from './server.ts';

/** Composition root: `callcap serve [--role api|worker …]` (npm start runs every role in one process). */
async function main(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { role: { type: 'string', multiple: true } },
  });
  const command = positionals[0] ?? 'serve';
  if (command !== 'serve') {
    process.stderr.write(`Unknown command "${command}". Usage: callcap serve [--role api|operator|worker]...\n`);
    process.exit(2);
  }
  const roles = (values.role ?? ['api', 'operator', 'worker']) as Role[];
  for (const r of roles) {
    if (!['api', 'operator', 'worker'].includes(r)) {
      process.stderr.write(`Unknown role "${r}": use api, operator or worker.\n`);
      process.exit(2);
    }
  }
  const config = loadConfig();
  const running = await startRoles(config, roles);
  const stop = async () => {
    await running.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`callcap: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
