import { text } from 'node:stream/consumers';
import { runCli } from './cli/run.ts';

/** The `callcap` executable (bin/callcap.js imports this file; `npm run callcap -- …` runs it). */
runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  readStdin: () => text(process.stdin),
  stderrIsTty: process.stderr.isTTY === true,
  columns: process.stderr.columns,
}).then(
  (code) => {
    if (code !== null) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`callcap: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
