import { COMMANDS, type Command, usageOf } from './commands.ts';

export const SERVE_LINE = 'callcap serve [--role api|operator|worker]...';

/** `callcap help`: every command, then the environment the operator commands read. */
export function helpText(commands: Command[] = COMMANDS): string {
  const lines = [
    'callcap: the Call Capture Service.',
    '',
    'Run the service:',
    `  ${SERVE_LINE}`,
    '      start the roles (all three by default): public API on PORT, operator API on',
    '      ADMIN_HOST:ADMIN_PORT, background workers. Prints the addresses when ready.',
    '',
    'Operate it (calls the operator API over HTTP; prints JSON on stdout):',
  ];
  for (const c of commands) lines.push(`  ${usageOf(c)}`, `      ${c.summary}`);
  lines.push(
    '',
    'Options taking a password accept "-" to read it from stdin. "callcap <command> --help" shows one',
    'command\'s usage; "callcap --version" the version.',
    '',
    'Environment of the operator commands:',
    '  CALLCAP_ADMIN_URL  operator API origin (default http://ADMIN_HOST:ADMIN_PORT = http://127.0.0.1:3001)',
    '  ADMIN_TOKEN        operator token (default: the file DATA_DIR/admin-token, DATA_DIR default ./data)',
    '',
    'Exit codes: 0 success, 1 the request failed (message on stderr), 2 wrong usage.',
    '',
  );
  return lines.join('\n');
}
