import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';

/**
 * Who the demo organization's owner is and how its passwords look: shared by the seed (which creates
 * them), the start that finds them again (the later-start notice) and `callcap demo reset-password`
 * (src/cli/demo-commands.ts), which must not load the server to know them.
 */
export const DEMO_OWNER_EMAIL = 'owner@demo-plumbing.example';
export const DEMO_KEY_SCOPES = ['read.calls', 'read.recordings'];
export const DEMO_KEY_NAME = 'Demo key';

/** The command that gives the demo owner a new password (printed by every later start). */
export const DEMO_RESET_COMMAND = 'npx callcap demo reset-password';

/**
 * DEMO_RESET_COMMAND as the operator must type it against this service: with the settings the CLI
 * would otherwise get wrong (it defaults to DATA_DIR ./data and the operator API on 127.0.0.1:3001,
 * run from the same directory). An ADMIN_TOKEN set in the environment is named, never printed.
 */
export function demoResetCommand(o: {
  dataDir: string;
  adminTokenFromEnv: boolean;
  adminHost: string;
  adminPort: number;
}): string {
  const env: string[] = [];
  if (o.adminTokenFromEnv) env.push('ADMIN_TOKEN=<the operator token>');
  else if (resolve(o.dataDir) !== resolve('data')) env.push(`DATA_DIR=${shellWord(resolve(o.dataDir))}`);
  if (!['127.0.0.1', '0.0.0.0', 'localhost'].includes(o.adminHost))
    env.push(`ADMIN_HOST=${shellWord(o.adminHost)}`);
  if (o.adminPort !== 3001) env.push(`ADMIN_PORT=${o.adminPort}`);
  return [...env, DEMO_RESET_COMMAND].join(' ');
}

const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/** A random console password: 12 bytes, 16 URL-safe characters (no shell quoting needed). */
export const newDemoPassword = (): string => randomBytes(12).toString('base64url');
