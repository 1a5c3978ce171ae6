/**
 * The service of a benchmark in a process of its own, driven over IPC — one mechanism for
 * bench/capture.ts (bench/capture-service.ts) and bench/test-mode.ts (bench/test-mode-service.ts),
 * so the service's CPU and RSS are the service's alone and the driver plays the outside world.
 *
 * The protocol: the driver sends {cmd, …}; the service answers every command with {reply: cmd, …}
 * (or {reply: cmd, error}); it says {reply: 'started'} once ready, and `close` stops it and exits.
 * The environment the service is built with travels as JSON in BENCH_SERVICE_ENV; BENCH_NODE_FLAGS
 * (e.g. --single-threaded-gc) are added to the service process's Node flags.
 *
 * Driver side: forkService, cpuMsOf. Service side: serviceEnv, serveCommands.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A command from the driver: its name and its arguments. */
export type Command = { cmd: string; [k: string]: unknown };

/** Forks `script` (a service module) with `env` for its deps and waits until it says it started. */
export async function forkService(script: URL, env: Record<string, string>, execArgv: string[] = []) {
  const child: ChildProcess = fork(script.pathname, [], {
    env: { ...process.env, BENCH_SERVICE_ENV: JSON.stringify(env) },
    execArgv: [...execArgv, ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<string, { resolve: (m: never) => void; reject: (e: Error) => void }>();
  let exited: Error | null = null;
  child.on('message', (m: { reply: string; error?: string }) => {
    const w = waiting.get(m.reply);
    waiting.delete(m.reply);
    if (m.error) w?.reject(new Error(`service: ${m.error}`));
    else w?.resolve(m as never);
  });
  child.on('exit', (code) => {
    exited = new Error(`the service process exited (${code})`);
    for (const w of waiting.values()) w.reject(exited);
    waiting.clear();
  });
  const expect = <T>(reply: string) =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(exited);
      waiting.set(reply, { resolve, reject });
    });
  await expect('started');
  return {
    pid: child.pid!,
    /** Sends a command; answers the service's reply (rejects on its error or its exit). */
    call<T = Record<string, never>>(cmd: string, args: Record<string, unknown> = {}): Promise<T> {
      const p = expect<T>(cmd);
      child.send({ cmd, ...args });
      return p;
    },
    /** Asks the service to stop and waits for its exit. */
    async close() {
      if (exited) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.send({ cmd: 'close' });
      await gone;
    },
  };
}

export type ServiceProcess = Awaited<ReturnType<typeof forkService>>;

/** utime + stime of a process in milliseconds (Linux /proc; 0 when unreadable). */
export function cpuMsOf(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ = 100
  } catch {
    return 0;
  }
}

/** In the service: the environment the driver gave it for its deps. */
export const serviceEnv = (): Record<string, string> =>
  JSON.parse(process.env.BENCH_SERVICE_ENV ?? '{}') as Record<string, string>;

/**
 * In the service: answers the driver's commands with `handle` (its result is the reply), `close`
 * with `close` then the process's exit; says it started. The driver gone (crashed, interrupted), the
 * process exits, so nothing is left running against the database.
 */
export function serveCommands(
  handle: (m: Command) => Promise<Record<string, unknown>>,
  close: () => Promise<void>,
): void {
  const send = (m: Record<string, unknown>) => process.send?.(m);
  process.on('message', (m: Command) => {
    const answer =
      m.cmd === 'close'
        ? close().then(() => {
            setImmediate(() => process.exit(0));
            return {};
          })
        : handle(m);
    answer.then(
      (r) => send({ reply: m.cmd, ...r }),
      (err: Error) => send({ reply: m.cmd, error: err.stack ?? String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(1));
  send({ reply: 'started' });
}
