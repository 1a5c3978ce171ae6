import { runCli } from '../../src/cli/run.ts';

/** What one `callcap` command answered: its exit code (null for `serve`) and all it printed. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one `callcap` command in this process, as src/cli.ts runs it in a process of its own: `env`
 * is its whole environment and `input` its stdin; stdout and stderr are collected, and each stderr
 * write is also passed to `onStderr` as it happens (a progress line, say).
 */
export async function cliInProcess(
  args: string[],
  env: Record<string, string>,
  o: { input?: string; onStderr?: (s: string) => void } = {},
): Promise<CliRun> {
  const r: CliRun = { code: null, stdout: '', stderr: '' };
  r.code = await runCli(args, {
    env,
    stdout: (s) => {
      r.stdout += s;
    },
    stderr: (s) => {
      r.stderr += s;
      o.onStderr?.(s);
    },
    readStdin: async () => o.input ?? '',
  });
  return r;
}
