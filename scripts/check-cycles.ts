/**
 * npm run lint:cycles — the folder rules of DESIGN.md "Code layout", checked over src/'s import graph
 * (static, dynamic and type-only imports alike, read with TypeScript's own pre-processor):
 *
 * 1. No cycle between folders. A folder is a top-level folder of src/ (accounts, capture, …), except
 *    that src/http/public and src/http/operator count as folders of their own (the rest of src/http
 *    is the folder "http"), and so do the three rooms of src/webhooks: subscriptions, outbox and
 *    delivery. Files directly in src/ (config, clock, deps, errors, …) are not folders:
 *    an import through them counts as an import of what they import, so capture → deps.ts →
 *    recordings/store.ts is an edge capture → recordings.
 * 2. domain/ imports nothing of ours outside domain/.
 * 3. Only the HTTP layer knows HTTP: no file in a folder outside src/http/ imports Fastify or a file
 *    under src/http/ (files directly in src/ may: server.ts starts the listeners).
 * 4. The webhook rooms import downhill only: subscriptions (the console's operations) may import
 *    delivery and outbox, delivery (the engine) may import outbox, outbox imports neither.
 * 5. Tenant data has one door (DESIGN.md "Storage"): no SQL under src/http/. No string there reads as
 *    a SQL statement, and nothing there calls `.query(` or `.exec(` on a database handle: routes and
 *    pages call the areas' functions, which take the scope and own the SQL. (A route may still open
 *    `db.transaction(tx => …)` around area commands that must commit together: a boundary, not SQL.)
 *
 * Prints every violation with an import chain that shows it, and exits 1 if there is any.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
const src = join(root, 'src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Top-level folders of src/ whose named subfolders count as folders of their own. */
const SUBFOLDERS: Record<string, readonly string[]> = {
  http: ['public', 'operator'],
  webhooks: ['subscriptions', 'outbox', 'delivery'],
};

/** src-relative path → the folder it belongs to, or null for a file directly in src/. */
function folderOf(file: string): string | null {
  const parts = file.split('/');
  if (parts.length === 1) return null;
  if (parts.length > 2 && SUBFOLDERS[parts[0]]?.includes(parts[1])) return `${parts[0]}/${parts[1]}`;
  return parts[0];
}

const files = tsFiles(src).map((f) => relative(src, f));
const known = new Set(files);
/** file → the src files it imports */
const imports = new Map<string, string[]>();
/** file → the packages it imports (by name, e.g. fastify, @fastify/cookie) */
const packages = new Map<string, string[]>();
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(src, file), 'utf8'), true, true);
  const local: string[] = [];
  const external: string[] = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) {
      external.push(fileName);
      continue;
    }
    const target = relative(src, resolve(dirname(join(src, file)), fileName));
    if (known.has(target)) local.push(target);
  }
  imports.set(file, [...new Set(local)]);
  packages.set(file, [...new Set(external)]);
}

/**
 * The folders a file reaches: its imports in folders, and through files directly in src/ whatever
 * those reach. Each with one chain of files that shows the way.
 */
function reachedFolders(from: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const seen = new Set<string>([from]);
  const queue: string[][] = [[from]];
  while (queue.length > 0) {
    const chain = queue.shift()!;
    for (const next of imports.get(chain.at(-1)!) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      const folder = folderOf(next);
      if (folder === null) queue.push([...chain, next]);
      else if (!out.has(folder)) out.set(folder, [...chain, next]);
    }
  }
  return out;
}

const reached = new Map(files.map((f) => [f, reachedFolders(f)]));

/** folder → folder → an import chain (first found) */
const edges = new Map<string, Map<string, string[]>>();
for (const file of files) {
  const from = folderOf(file);
  if (from === null) continue;
  const out = edges.get(from) ?? new Map<string, string[]>();
  edges.set(from, out);
  for (const [to, chain] of reached.get(file)!) {
    if (to !== from && !out.has(to)) out.set(to, chain);
  }
}

const problems: string[] = [];
const show = (chain: string[]) => chain.map((f) => `src/${f}`).join(' → ');

// 1. Folder cycles: strongly connected components of the folder graph (Tarjan).
const index = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
let counter = 0;
function connect(v: string): void {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) {
      low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
  }
  if (low.get(v) !== index.get(v)) return;
  const component: string[] = [];
  let w: string;
  do {
    w = stack.pop()!;
    onStack.delete(w);
    component.push(w);
  } while (w !== v);
  if (component.length < 2) return;
  const members = new Set(component);
  const lines = component
    .sort()
    .flatMap((a) =>
      [...(edges.get(a) ?? [])]
        .filter(([b]) => members.has(b))
        .map(([b, chain]) => `    ${a} → ${b}: ${show(chain)}`),
    );
  problems.push(`Folder cycle between ${component.join(', ')}:\n${lines.join('\n')}`);
}
for (const folder of [...edges.keys()].sort()) if (!index.has(folder)) connect(folder);

// 2. domain/ imports nothing of ours outside domain/.
for (const file of files.filter((f) => folderOf(f) === 'domain')) {
  for (const target of imports.get(file) ?? []) {
    if (folderOf(target) !== 'domain')
      problems.push(`domain/ must import nothing of ours: ${show([file, target])}`);
  }
}

// 3. Fastify and src/http/ only inside the HTTP layer.
const isHttp = (folder: string | null) => folder === 'http' || folder?.startsWith('http/') === true;
for (const file of files) {
  const folder = folderOf(file);
  if (folder === null || isHttp(folder)) continue;
  for (const name of packages.get(file) ?? []) {
    if (name === 'fastify' || name.startsWith('@fastify/')) {
      problems.push(`Only src/http/ may import Fastify: src/${file} imports ${name}`);
    }
  }
  for (const target of imports.get(file) ?? []) {
    if (isHttp(folderOf(target)))
      problems.push(`Only src/http/ may import src/http/: ${show([file, target])}`);
  }
}

// 4. The webhook rooms, uphill to downhill: a room imports only the rooms after it.
const ROOMS = ['webhooks/subscriptions', 'webhooks/delivery', 'webhooks/outbox'];
for (const [from, out] of edges) {
  const rank = ROOMS.indexOf(from);
  if (rank < 0) continue;
  for (const [to, chain] of out) {
    if (ROOMS.indexOf(to) >= 0 && ROOMS.indexOf(to) < rank)
      problems.push(`${from} must not import ${to} (rooms import downhill only): ${show(chain)}`);
  }
}

// 5. No SQL under src/http/: statements in string literals, or calls on a database handle.
const SQL = /\b(SELECT\s[\s\S]*?\bFROM\b|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b)/;
const DB_CALLS = new Set(['query', 'exec']);
/** Receivers whose .query is not a database's (a request's parsed query string). */
const NOT_A_DB = /(^|\.)(req|request|url|u)$/;
/** .exec is a RegExp's too: only a database handle's counts. */
const DB_HANDLE = /(^|\.)(db|tx|q|pool|client)$/;
for (const file of files.filter((f) => isHttp(folderOf(f)))) {
  const text = readFileSync(join(src, file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const at = (node: ts.Node) => `src/${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) &&
      SQL.test(node.text)
    ) {
      problems.push(`No SQL under src/http/ (an area function owns it): ${at(node)}`);
    }
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      DB_CALLS.has(node.expression.name.text) &&
      !NOT_A_DB.test(node.expression.expression.getText(sf)) &&
      (node.expression.name.text !== 'exec' || DB_HANDLE.test(node.expression.expression.getText(sf)))
    ) {
      problems.push(
        `No database calls under src/http/ (${node.expression.getText(sf)}(…): an area function owns it): ${at(node)}`,
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n\n${problems.length} layout problem(s).\n`);
  process.exit(1);
}
const folders = [...edges.keys()].sort();
process.stdout.write(
  `No folder cycles; ${files.length} files in ${folders.length} folders: ${folders.join(', ')}.\n`,
);
