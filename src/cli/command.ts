import type { AdminRequest } from './admin-client.ts';
import { CliError } from './admin-client.ts';

/** Exit codes of every command (docs/cli.md "Exit codes"); 78 is `callcap serve`'s EXIT_CONFIG. */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2, CONFIG: 78, INTERRUPTED: 130 } as const;

/** The process around a command: environment, output streams, stdin and signals (injected for tests). */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<string>;
  /** true when stderr is a terminal (progress bars); absent = false */
  stderrIsTty?: boolean;
  /** columns of that terminal */
  columns?: number;
}

/** What a command gets: its flags, its positional arguments, the operator API, the process around it. */
export interface CommandContext {
  flags: Record<string, string | boolean | undefined>;
  args: string[];
  /** Calls the operator API (the target and token are resolved on the first call). */
  call(r: AdminRequest): Promise<unknown>;
  readStdin(): Promise<string>;
  io: CliIo;
}

export interface Flag {
  hint: string;
  required?: boolean;
  /** a switch without a value (--yes) */
  boolean?: boolean;
  /** one line for `--help` */
  help?: string;
}

/**
 * One command: the words that name it, its flags and positionals, and what it does. run answers
 * what goes to stdout as JSON, or undefined when the command wrote its own output.
 */
export interface Command {
  words: string[];
  args: string[];
  flags: Record<string, Flag>;
  summary: string;
  /** where `callcap help` lists it: operator API commands (default) or integrator (REST API) commands */
  section?: 'operator' | 'integrator';
  /** more lines for `callcap <command> --help` */
  details?: string[];
  run(c: CommandContext): Promise<unknown>;
}

export const usageOf = (c: Command): string => {
  const flags = Object.entries(c.flags).map(([name, f]) => {
    const flag = f.boolean ? `--${name}` : `--${name} <${f.hint}>`;
    return f.required ? flag : `[${flag}]`;
  });
  return ['callcap', ...c.words, ...c.args.map((a) => `<${a}>`), ...flags].join(' ');
};

export const usageError = (message: string): CliError => new CliError(message, 2, true);

/** A string flag's value (undefined when not given). */
export function str(c: CommandContext, flag: string): string | undefined {
  const v = c.flags[flag];
  return typeof v === 'string' ? v : undefined;
}

/** A required flag's value (the parser has checked that it is there). */
export const req = (c: CommandContext, flag: string): string => str(c, flag) as string;

export function int(c: CommandContext, flag: string): number | undefined {
  const v = str(c, flag);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw usageError(`--${flag} must be a whole number, got "${v}".`);
  return Number(v);
}

export const list = (v: string | undefined): string[] | undefined =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

/** A secret flag given as "-" is read from stdin, so it stays out of the shell history and ps. */
export async function secret(c: CommandContext, flag: string): Promise<string | undefined> {
  const v = str(c, flag);
  return v === '-' ? (await c.readStdin()).replace(/\r?\n$/, '') : v;
}

/** Drops undefined values so only the flags given are sent. */
export const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export const enc = encodeURIComponent;
