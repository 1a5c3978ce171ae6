import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

/**
 * The rule-based analyser in a process that has compiled a lot of regular-expression code. Past
 * 16 MB of executable memory V8 compiles each new regexp without its optimisations (TooMuchRegExpCode),
 * and in V8 13.6 (Node 24) a `(?i:…)` modifier group then stopped ignoring case: in the long-lived
 * test workers of `npm test` "Hallo, mein Name ist Hans Müller" gave no caller name. It runs in a
 * process of its own, which first fills the code space with regexps compiled to machine code and
 * only then loads the analyser, so every one of its regexps is compiled past the limit.
 */
const CHILD = String.raw`
const v8 = await import('node:v8');
const codeSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'code_space').space_size;
const subject = 'x'.repeat(2000); // long enough to be compiled to machine code at once
const kept = [];
for (let n = 0; codeSpace() < 20 * 2 ** 20 && n < 60000; n++) {
  const re = new RegExp('w' + n + '(?:abc|def|ghi)[a-z]{2,9}\\d+(?:foo|bar|baz)+\\s*(?:' + n + '|x)|y' + n + '\\S+z', 'giu');
  re.test(subject);
  kept.push(re);
}
const { analyzeByRules } = await import(process.argv.at(-1));
const org = { name: 'Acme Plumbing', language: 'en' };
const analyse = (transcript) => analyzeByRules({ transcript, direction: 'inbound', organization: org }).analysis;
const calls = [
  'Agent: Guten Tag, hier ist Acme.\nKunde: Hallo, mein Name ist Hans Müller. Ich brauche einen Termin für die Heizungswartung. Ich wohne in München, Hauptstraße 12. Geht es am Montag?',
  'Agent: Acme Plumbing.\nCustomer: Hi, My Name Is Jane Doe, my kitchen sink is leaking. I Live In Aurora.',
  "Agent: Acme, bonjour.\nClient: Bonjour, Je M'appelle Madame Moreau, j'ai une fuite sous l'évier.",
  'Agent: Acme, dígame.\nCliente: Hola, Soy La Señora Gómez, tengo una fuga en el baño.',
  'Agent: Acme. Ihr Name, bitte?\nKunde: Herr Keller, Michael Keller.',
  'Agent: Acme. Where are you?\nCustomer: Near Springfield, by the station.',
];
// twice: V8 runs a regexp's first match on bytecode and compiles it to machine code for the next
for (const t of calls) analyse(t);
console.log(JSON.stringify({
  codeSpaceMB: Math.floor(codeSpace() / 2 ** 20),
  found: calls.map((t) => { const a = analyse(t); return [a.caller_name, a.client_city]; }),
}));
`;

test('in a process past V8’s regexp code limit the caller’s name and city are still read, case-insensitively', async () => {
  const analyzer = pathToFileURL(new URL('../../src/capture/analyzer.ts', import.meta.url).pathname).href;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '--eval', CHILD, analyzer],
    { timeout: 60_000 },
  );
  const out = JSON.parse(stdout);
  assert.ok(out.codeSpaceMB >= 16, `code space ${out.codeSpaceMB} MB`);
  assert.deepEqual(out.found, [
    ['Hans Müller', 'München'],
    ['Jane Doe', 'Aurora'],
    ['Moreau', null],
    ['Gómez', null],
    ['Michael Keller', null],
    [null, 'Springfield'],
  ]);
});
