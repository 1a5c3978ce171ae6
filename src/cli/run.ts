import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type AdminTarget, adminRequest, CliError, resolveAdminTarget } from './admin-client.ts';
import type { CliIo, Command } from './command.ts';
import { EXIT, usageOf } from './command.ts';

export { EXIT } from './command.ts';

import { commandHelp, completionScript, helpText, topicHelp } from './help.ts';
import { COMMANDS, TOPICS } from './registry.ts';

export type { CliIo } from './command.ts';

const isHelp = (a: string | undefined) => a === 'help' || a === '--help' || a === '-h';

function findCommand(argv: string[]): Command | undefined {
  return COMMANDS.filter((c) => c.words.every((w, i) => argv[i] === w)).sort(
    (a, b) => b.words.length - a.words.length,
  )[0];
}

/** `callcap calls reprocess …` is `callcap call reprocess …`: a topic may be typed in the plural. */
function singularTopic(argv: string[]): string[] {
  const [first, ...rest] = argv;
  if (first && !(first in TOPICS) && first.endsWith('s') && first.slice(0, -1) in TOPICS) {
    return [first.slice(0, -1), ...rest];
  }
  return argv;
}

const topicCommands = (topic: string) => COMMANDS.filter((c) => c.words.length > 1 && c.words[0] === topic);

/**
 * Runs one `callcap` command. Answers the exit code (EXIT), or null for `serve`, whose process
 * keeps running. Results are JSON on stdout; errors and progress go to stderr.
 */
export async function runCli(rawArgv: string[], io: CliIo): Promise<number | null> {
  const argv = singularTopic(rawArgv);
  const first = argv[0];
  if (first === undefined || first === '--help' || first === '-h') {
    io.stdout(helpText());
    return EXIT.OK;
  }
  if (first === 'help') return help(argv.slice(1), io);
  if (first === '--version' || first === 'version') {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    io.stdout(`callcap ${pkg.version}\n`);
    return EXIT.OK;
  }
  if (first === 'completion') {
    io.stdout(completionScript());
    return EXIT.OK;
  }
  if (first === 'serve') {
    if (argv.slice(1).some((a) => a === '--help' || a === '-h')) {
      io.stdout(helpText());
      return EXIT.OK;
    }
    const { serve } = await import('../main.ts');
    return serve(argv.slice(1));
  }
  const command = findCommand(argv);
  if (!command) {
    const inTopic = topicCommands(first);
    if (inTopic.length > 0 && (argv.length === 1 || isHelp(argv[1]))) {
      io.stdout(topicHelp(first));
      return EXIT.OK;
    }
    const hint = inTopic.length ? ` Did you mean: ${inTopic.map((c) => c.words.join(' ')).join(', ')}?` : '';
    io.stderr(`callcap: unknown command "${argv.slice(0, 2).join(' ')}".${hint} Run "callcap help".\n`);
    return EXIT.USAGE;
  }
  const rest = argv.slice(command.words.length);
  const dashes = rest.indexOf('--');
  if (rest.slice(0, dashes < 0 ? undefined : dashes).some((a) => a === '--help' || a === '-h')) {
    io.stdout(commandHelp(command));
    return EXIT.OK;
  }
  try {
    const { flags, args } = parseCommandArgs(command, rest);
    let target: Promise<AdminTarget> | undefined;
    const admin = () => {
      target = target ?? resolveAdminTarget(io.env);
      return target;
    };
    const result = await command.run({
      flags,
      args,
      call: async (r) => adminRequest(await admin(), r),
      readStdin: io.readStdin,
      io,
    });
    if (result !== undefined) io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return EXIT.OK;
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    const usageLine = err.showUsage ? `\nUsage: ${usageOf(command)}` : '';
    io.stderr(`callcap: ${err.message}${usageLine}\n`);
    return err.exitCode;
  }
}

function help(topic: string[], io: CliIo): number {
  if (topic.length === 0) {
    io.stdout(helpText());
    return EXIT.OK;
  }
  const command = findCommand(topic);
  if (command && command.words.length === topic.length) {
    io.stdout(commandHelp(command));
    return EXIT.OK;
  }
  if (topic.length === 1 && (topicCommands(topic[0]).length > 0 || topic[0] in TOPICS)) {
    io.stdout(topicHelp(topic[0]));
    return EXIT.OK;
  }
  if (topic[0] === 'serve') {
    io.stdout(helpText());
    return EXIT.OK;
  }
  io.stderr(`callcap: no help for "${topic.join(' ')}". Run "callcap help".\n`);
  return EXIT.USAGE;
}

function parseCommandArgs(command: Command, rest: string[]) {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: Object.fromEntries(
        Object.entries(command.flags).map(([f, d]) => [
          f,
          { type: d.boolean ? 'boolean' : 'string' } as const,
        ]),
      ),
    });
  } catch (err) {
    throw new CliError((err as Error).message, EXIT.USAGE, true);
  }
  if (parsed.positionals.length !== command.args.length) {
    const want = command.args.length ? command.args.map((a) => `<${a}>`).join(' ') : 'no arguments';
    throw new CliError(`"${command.words.join(' ')}" takes ${want}.`, EXIT.USAGE, true);
  }
  const flags = parsed.values as Record<string, string | boolean | undefined>;
  for (const [name, f] of Object.entries(command.flags)) {
    if (f.required && (flags[name] === undefined || flags[name] === ''))
      throw new CliError(`missing --${name}.`, EXIT.USAGE, true);
  }
  return { flags, args: parsed.positionals };
}
