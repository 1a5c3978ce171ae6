import { type Command, usageOf } from './command.ts';
import { COMMANDS, TOPICS } from './registry.ts';

export const SERVE_LINE = 'callcap serve [--role api|operator|worker]...';

const SERVE_HELP = [
  `  ${SERVE_LINE}`,
  '      start the roles (all three by default): public API on PORT, operator API on',
  '      ADMIN_HOST:ADMIN_PORT, background workers. Prints the addresses when ready.',
];

const OPERATOR_ENV = [
  'Environment of the operator commands:',
  '  CALLCAP_ADMIN_URL  operator API origin (default http://ADMIN_HOST:ADMIN_PORT = http://127.0.0.1:3001)',
  '  ADMIN_TOKEN        operator token (default: the file DATA_DIR/admin-token, DATA_DIR default ./data)',
];

const INTEGRATOR_ENV = [
  'Environment of the integrator commands:',
  '  CALLCAP_API_KEY    the API key (cc_live_…) the REST API is called with',
  '  CALLCAP_API_URL    REST API base (default http://localhost:PORT/api/v1, PORT default 3000)',
  '  CALLCAP_URL        service origin of login, listen and trigger (default http://localhost:PORT)',
  '  CALLCAP_EMAIL, CALLCAP_PASSWORD  console sign-in of listen and trigger (else "callcap login")',
  '  XDG_CONFIG_HOME    where "callcap login" keeps the session (callcap/session.json; default ~/.config)',
];

const EXIT_CODES = [
  'Exit codes: 0 success, 1 the request failed (message on stderr), 2 wrong usage or missing',
  'configuration, 78 serve: a setting stops the start, 130 export interrupted (run it again to resume).',
].join('\n');

const isIntegrator = (c: Command) => c.section === 'integrator';

/** `callcap help`: every command, then the environment the commands read and the exit codes. */
export function helpText(commands: Command[] = COMMANDS): string {
  const lines = [
    'callcap: the Call Capture Service.',
    '',
    'Run the service:',
    ...SERVE_HELP,
    '',
    'Operate it (calls the operator API over HTTP; prints JSON on stdout):',
  ];
  for (const c of commands.filter((c) => !isIntegrator(c)))
    lines.push(`  ${usageOf(c)}`, `      ${c.summary}`);
  lines.push('', 'Integrate (calls the REST API /api/v1 with an API key):');
  for (const c of commands.filter(isIntegrator)) lines.push(`  ${usageOf(c)}`, `      ${c.summary}`);
  lines.push(
    '',
    'Options taking a password or token accept "-" to read it from stdin. "callcap <topic> --help" (e.g.',
    '"callcap org --help") lists a topic\'s commands, "callcap <command> --help" explains one command;',
    '"callcap completion" prints a bash completion script; "callcap --version" the version.',
    '',
    ...OPERATOR_ENV,
    '',
    ...INTEGRATOR_ENV,
    '',
    EXIT_CODES,
    '',
  );
  return lines.join('\n');
}

/** `callcap org --help`: the commands of one topic. */
export function topicHelp(topic: string): string {
  const commands = COMMANDS.filter((c) => c.words.length > 1 && c.words[0] === topic);
  const lines = [`callcap ${topic}: ${TOPICS[topic] ?? `the ${topic} commands`}.`, '', 'Commands:'];
  for (const c of commands) lines.push(`  ${usageOf(c)}`, `      ${c.summary}`);
  const env = commands.some(isIntegrator) ? INTEGRATOR_ENV : OPERATOR_ENV;
  lines.push('', `"callcap ${topic} <command> --help" explains one command.`, '', ...env, '', EXIT_CODES, '');
  return lines.join('\n');
}

/** `callcap org create --help`: usage, what it does, every option. */
export function commandHelp(c: Command): string {
  const lines = [`Usage: ${usageOf(c)}`, `  ${c.summary}`];
  if (c.details) lines.push('', ...c.details.map((d) => (d ? `  ${d}` : '')));
  const flags = Object.entries(c.flags);
  if (flags.length) {
    lines.push('', 'Options:');
    const left = flags.map(([name, f]) => (f.boolean ? `--${name}` : `--${name} <${f.hint}>`));
    const width = Math.min(40, Math.max(...left.map((l) => l.length)) + 2);
    flags.forEach(([, f], i) => {
      const text = [f.help, f.required ? '(required)' : ''].filter(Boolean).join(' ');
      lines.push(
        left[i].length + 2 > width
          ? `  ${left[i]}\n  ${' '.repeat(width)}${text}`
          : `  ${left[i].padEnd(width)}${text}`,
      );
    });
  }
  lines.push('', ...(isIntegrator(c) ? INTEGRATOR_ENV : OPERATOR_ENV), '', EXIT_CODES, '');
  return lines.map((l) => l.trimEnd()).join('\n');
}

/** `callcap completion`: a bash completion script for every command and option (source it in ~/.bashrc). */
export function completionScript(commands: Command[] = COMMANDS): string {
  const topics = [...new Set(commands.map((c) => c.words[0]))];
  const q = (words: string[]) => words.join(' ').replace(/'/g, '');
  const cases: string[] = [`    '') words='serve help completion ${q(topics)}' ;;`];
  for (const t of topics) {
    const sub = commands.filter((c) => c.words.length > 1 && c.words[0] === t).map((c) => c.words[1]);
    if (sub.length) cases.push(`    '${t}') words='${q(sub)}' ;;`);
  }
  for (const c of commands) {
    const choices = c.args.length === 1 && c.args[0].includes('|') ? c.args[0].split('|') : [];
    const flags = Object.keys(c.flags).map((f) => `--${f}`);
    cases.push(`    '${q(c.words)}'*) words='${q([...choices, ...flags, '--help'])}' ;;`);
  }
  cases.push(`    'serve'*) words='--role --help' ;;`);
  return [
    '# bash completion for callcap: source <(callcap completion)',
    '_callcap() {',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash, not a template
    '  local cur=${COMP_WORDS[COMP_CWORD]} words',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash, not a template
    '  local line="${COMP_WORDS[*]:1:COMP_CWORD-1}"',
    '  case "$line" in',
    ...cases,
    "    *) words='' ;;",
    '  esac',
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    '}',
    'complete -o default -F _callcap callcap',
    '',
  ].join('\n');
}
