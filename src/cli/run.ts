import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { adminRequest, CliError, resolveAdminTarget } from './admin-client.ts';
import { COMMANDS, type Command, usageOf } from './commands.ts';
import { helpText } from './help.ts';

/** The process around the CLI: environment, output streams and stdin (injected for tests). */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<string>;
}

const isHelp = (a: string | undefined) => a === 'help' || a === '--help' || a === '-h';

function findCommand(argv: string[]): Command | undefined {
  return COMMANDS.filter((c) => c.words.every((w, i) => argv[i] === w)).sort(
    (a, b) => b.words.length - a.words.length,
  )[0];
}

/**
 * Runs one `callcap` command. Answers the exit code (0 ok, 1 failed request, 2 usage), or null for
 * `serve`, whose process keeps running. Results are JSON on stdout; errors go to stderr.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number | null> {
  const first = argv[0];
  if (first === undefined || isHelp(first)) {
    io.stdout(helpText());
    return 0;
  }
  if (first === '--version' || first === 'version') {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    io.stdout(`callcap ${pkg.version}\n`);
    return 0;
  }
  if (first === 'serve') {
    const { serve } = await import('../main.ts');
    return serve(argv.slice(1));
  }
  const command = findCommand(argv);
  if (!command) {
    const near = COMMANDS.filter((c) => c.words[0] === first).map((c) => c.words.join(' '));
    const hint = near.length ? ` Did you mean: ${near.join(', ')}?` : '';
    io.stderr(`callcap: unknown command "${argv.slice(0, 2).join(' ')}".${hint} Run "callcap help".\n`);
    return 2;
  }
  const rest = argv.slice(command.words.length);
  if (rest.some(isHelp) && !rest.includes('--')) {
    io.stdout(`Usage: ${usageOf(command)}\n  ${command.summary}\n`);
    return 0;
  }
  try {
    const { flags, args } = parseCommandArgs(command, rest);
    const target = await resolveAdminTarget(io.env);
    const result = await command.run({
      flags,
      args,
      call: (r) => adminRequest(target, r),
      readStdin: io.readStdin,
    });
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    const usageLine = err.showUsage ? `\nUsage: ${usageOf(command)}` : '';
    io.stderr(`callcap: ${err.message}${usageLine}\n`);
    return err.exitCode;
  }
}

function parseCommandArgs(command: Command, rest: string[]) {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: Object.fromEntries(Object.keys(command.flags).map((f) => [f, { type: 'string' as const }])),
    });
  } catch (err) {
    throw new CliError((err as Error).message, 2, true);
  }
  if (parsed.positionals.length !== command.args.length) {
    const want = command.args.length ? command.args.map((a) => `<${a}>`).join(' ') : 'no arguments';
    throw new CliError(`"${command.words.join(' ')}" takes ${want}.`, 2, true);
  }
  const flags = parsed.values as Record<string, string | undefined>;
  for (const [name, f] of Object.entries(command.flags)) {
    if (f.required && (flags[name] === undefined || flags[name] === ''))
      throw new CliError(`missing --${name}.`, 2, true);
  }
  return { flags, args: parsed.positionals };
}
