import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CliError } from './admin-client.ts';
import { type CommandContext, secret, str } from './command.ts';

/**
 * The console session of the integrator commands that need one (`callcap listen`, `trigger`): signed
 * in with an e-mail and password (flags, CALLCAP_EMAIL / CALLCAP_PASSWORD, or prompts), or taken
 * from `callcap login`, which keeps it in $XDG_CONFIG_HOME/callcap/session.json (default
 * ~/.config/callcap) with mode 0600 in a 0700 directory.
 */
export interface ConsoleAuth {
  /** the service's origin, e.g. http://localhost:3000 */
  base: string;
  /** "cc_session=…", sent as the Cookie header */
  cookie: string;
  csrf_token: string;
  email: string;
  organization_id: string;
}

/** CALLCAP_URL, else http://localhost:PORT (PORT as `callcap serve`, default 3000). */
export function consoleBase(env: Record<string, string | undefined>, flag?: string): string {
  const base = flag || env.CALLCAP_URL || `http://localhost:${env.PORT || '3000'}`;
  return base.replace(/\/+$/, '').replace(/\/app(\/api)?$/, '');
}

export function configDir(env: Record<string, string | undefined>): string {
  return env.XDG_CONFIG_HOME
    ? join(env.XDG_CONFIG_HOME, 'callcap')
    : join(env.HOME || homedir(), '.config', 'callcap');
}

export const sessionFile = (env: Record<string, string | undefined>) => join(configDir(env), 'session.json');

export async function saveSession(
  env: Record<string, string | undefined>,
  auth: ConsoleAuth,
): Promise<string> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = sessionFile(env);
  await writeFile(file, `${JSON.stringify(auth, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return file;
}

export async function loadSavedSession(env: Record<string, string | undefined>): Promise<ConsoleAuth | null> {
  try {
    const s = JSON.parse(await readFile(sessionFile(env), 'utf8')) as ConsoleAuth;
    return typeof s.cookie === 'string' && typeof s.base === 'string' ? s : null;
  } catch {
    return null;
  }
}

export const removeSavedSession = (env: Record<string, string | undefined>) =>
  rm(sessionFile(env), { force: true });

/** The service's error message from a reply body in the spec's error shape, else the status line. */
export async function replyError(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const m = (JSON.parse(text) as { error?: { message?: string } }).error?.message;
    if (m) return `${res.status}: ${m}`;
  } catch {}
  return `${res.status} ${res.statusText}`;
}

const unreachable = (base: string, err: unknown) =>
  new CliError(`cannot reach the service at ${base} (${(err as Error).message}); set --url or CALLCAP_URL.`);

export async function consoleLogin(base: string, email: string, password: string): Promise<ConsoleAuth> {
  let res: Response;
  try {
    res = await fetch(`${base}/app/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
  } catch (err) {
    throw unreachable(base, err);
  }
  if (!res.ok) throw new CliError(`sign-in refused: ${await replyError(res)}`);
  const body = (await res.json()) as { csrf_token: string; organization_id: string };
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .find((c) => c.startsWith('cc_session='));
  if (!cookie) throw new CliError('sign-in answered without a session cookie.');
  return { base, cookie, csrf_token: body.csrf_token, email, organization_id: body.organization_id };
}

/** A console JSON request with the session (and its CSRF token). 401 says how to sign in again. */
export async function consoleRequest(
  auth: ConsoleAuth,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${auth.base}/app/api${path}`, {
      method,
      headers: {
        cookie: auth.cookie,
        'x-csrf-token': auth.csrf_token,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw unreachable(auth.base, err);
  }
  if (res.status === 401) {
    throw new CliError(
      `the console session is not valid (${await replyError(res)}); run "callcap login" again.`,
    );
  }
  if (!res.ok) throw new CliError(await replyError(res));
  return res.status === 204 ? null : res.json();
}

/** One line from the terminal; hidden: the typed characters are not echoed (a password). */
export function prompt(question: string, hidden = false): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    if (hidden) {
      // readline echoes through _writeToOutput; after the question is shown, echo nothing.
      const r = rl as unknown as { _writeToOutput: (s: string) => void };
      const write = r._writeToOutput.bind(rl);
      r._writeToOutput = (s: string) => {
        if (s.startsWith(question)) write(s);
      };
    }
    rl.question(question, (answer) => {
      if (hidden) process.stderr.write('\n');
      rl.close();
      resolve(answer);
    });
  });
}

/** E-mail and password from the flags, the environment, or (on a terminal) prompts. */
export async function credentials(c: CommandContext): Promise<{ email: string; password: string } | null> {
  let email = str(c, 'email') ?? c.io.env.CALLCAP_EMAIL;
  let password = (await secret(c, 'password')) ?? c.io.env.CALLCAP_PASSWORD;
  if (email === undefined && password === undefined) return null;
  if (!email && process.stdin.isTTY) email = await prompt('E-mail: ');
  if (!password && process.stdin.isTTY) password = await prompt('Password: ', true);
  if (!email || !password)
    throw new CliError('give both --email and --password (or CALLCAP_EMAIL and CALLCAP_PASSWORD).', 2);
  return { email, password };
}

/**
 * The session a command runs with: a fresh sign-in when credentials are given, else the one
 * `callcap login` saved (its origin unless --url says otherwise).
 */
export async function resolveConsoleAuth(c: CommandContext): Promise<{
  auth: ConsoleAuth;
  relogin: (() => Promise<ConsoleAuth>) | null;
}> {
  const creds = await credentials(c);
  const base = consoleBase(c.io.env, str(c, 'url'));
  if (creds) {
    const login = () => consoleLogin(base, creds.email, creds.password);
    return { auth: await login(), relogin: login };
  }
  const saved = await loadSavedSession(c.io.env);
  if (!saved) {
    throw new CliError(
      `not signed in: run "callcap login" first (it keeps the session in ${sessionFile(c.io.env)}), or give --email and --password.`,
      2,
    );
  }
  const explicit = str(c, 'url') ?? c.io.env.CALLCAP_URL;
  return { auth: explicit ? { ...saved, base } : saved, relogin: null };
}
