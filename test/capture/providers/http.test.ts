import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { Multipart, type ProviderHttp, postJson } from '../../../src/capture/providers/http.ts';
import { FakeClock } from '../../../src/clock.ts';

/**
 * postJson on node:http: the request as fetch sent it (a multipart form undici's FormData reader
 * parses, Content-Length, text/plain for a string without a type) and fetch's redirect rules.
 */

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let seen: Seen[] = [];
let handler: (req: Seen, res: ServerResponse) => void = (_req, res) => res.end('{}');

async function listen(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let a: { server: Server; url: string };
let b: { server: Server; url: string };
let dir: string;
before(async () => {
  a = await listen();
  // another origin: localhost is not 127.0.0.1
  b = await listen();
  b.url = b.url.replace('127.0.0.1', 'localhost');
  dir = await mkdtemp(join(tmpdir(), 'callcap-http-test-'));
});
after(async () => {
  for (const s of [a.server, b.server]) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  await rm(dir, { recursive: true, force: true });
});

const h: ProviderHttp = { provider: 'openai', timeoutMs: 10_000, clock: new FakeClock(), secrets: [] };
const json = (res: ServerResponse, body: unknown) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

test('a multipart form (bytes in memory and a file read from its path) arrives as FormData parses it, with its Content-Length', async () => {
  seen = [];
  handler = (_req, res) => json(res, { ok: true });
  const path = join(dir, 'b.wav');
  await writeFile(path, Buffer.alloc(300_000, 7));
  const inMemory = Buffer.from('RIFF....WAVE in memory');
  const form = new Multipart()
    .file('file', inMemory, 'agent-0.wav', 'audio/wav')
    .file('other', { path }, 'customer "0".wav', 'audio/wav')
    .field('model', 'whisper-1')
    .field('timestamp_granularities[]', 'segment')
    .field('timestamp_granularities[]', 'word')
    .field('note', 'two\nlines');
  assert.deepEqual(await postJson(h, `${a.url}/v1/audio/transcriptions`, { headers: {}, body: form }), {
    ok: true,
  });
  const [r] = seen;
  assert.equal(r!.method, 'POST');
  assert.equal(Number(r!.headers['content-length']), r!.body.length);
  assert.equal(r!.headers['transfer-encoding'], undefined);
  const type = String(r!.headers['content-type']);
  assert.match(type, /^multipart\/form-data; boundary=/);
  const parsed = await new Response(new Uint8Array(r!.body), {
    headers: { 'content-type': type },
  }).formData();
  const file = parsed.get('file') as File;
  assert.equal(file.name, 'agent-0.wav');
  assert.equal(file.type, 'audio/wav');
  assert.deepEqual(Buffer.from(await file.arrayBuffer()), inMemory);
  const other = parsed.get('other') as File;
  // escaped as undici escapes it, and read back
  assert.ok(r!.body.includes('filename="customer %220%22.wav"'));
  assert.equal(other.name, 'customer "0".wav');
  assert.deepEqual(Buffer.from(await other.arrayBuffer()), Buffer.alloc(300_000, 7));
  assert.equal(parsed.get('model'), 'whisper-1');
  assert.deepEqual(parsed.getAll('timestamp_granularities[]'), ['segment', 'word']);
  assert.equal(parsed.get('note'), 'two\r\nlines');
});

test('a string body is sent with its length, as text/plain unless the caller names a type; a stream is sent chunked', async () => {
  seen = [];
  handler = (_req, res) => json(res, {});
  await postJson(h, `${a.url}/x`, { headers: {}, body: 'héllo' });
  await postJson(h, `${a.url}/x`, { headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' });
  await postJson(h, `${a.url}/x`, {
    headers: {},
    body: Readable.from([Buffer.from('ab'), Buffer.from('cd')]),
  });
  assert.equal(seen[0]!.headers['content-type'], 'text/plain;charset=UTF-8');
  assert.equal(seen[0]!.headers['content-length'], '6');
  assert.equal(seen[0]!.body.toString('utf8'), 'héllo');
  assert.equal(seen[1]!.headers['content-type'], 'application/json');
  assert.equal(seen[2]!.headers['transfer-encoding'], 'chunked');
  assert.equal(seen[2]!.body.toString(), 'abcd');
});

test('redirects are followed as fetch follows them: 307/308 re-send the body, 301/302 turn a POST into a GET, another origin gets no credentials', async () => {
  handler = (req, res) => {
    const m = /^\/(\d{3})(\/.*)$/.exec(req.path);
    if (m) return res.writeHead(Number(m[1]), { location: m[2]!.replace('/to-b', `${b.url}`) }).end('moved');
    json(res, { method: req.method, body: req.body.toString() });
  };
  const auth = { authorization: 'Bearer sk-secret', 'content-type': 'application/json' };
  for (const status of [307, 308]) {
    seen = [];
    const form = new Multipart().field('model', 'whisper-1');
    const answer = (await postJson(h, `${a.url}/${status}/done`, { headers: auth, body: form })) as {
      method: string;
      body: string;
    };
    assert.equal(answer.method, 'POST');
    assert.match(answer.body, /whisper-1/);
    assert.equal(seen[1]!.headers.authorization, 'Bearer sk-secret');
    assert.equal(seen[1]!.path, '/done');
  }
  for (const status of [301, 302, 303]) {
    seen = [];
    assert.deepEqual(await postJson(h, `${a.url}/${status}/done`, { headers: auth, body: '{"a":1}' }), {
      method: 'GET',
      body: '',
    });
    assert.equal(seen[1]!.headers['content-type'], undefined);
    assert.equal(seen[1]!.headers.authorization, 'Bearer sk-secret');
  }
  seen = [];
  assert.deepEqual(await postJson(h, `${a.url}/307/to-b/done`, { headers: auth, body: '{"a":1}' }), {
    method: 'POST',
    body: '{"a":1}',
  });
  assert.equal(seen[1]!.headers.authorization, undefined);
  assert.equal(seen[1]!.headers['content-type'], 'application/json');
});

test('a redirect that cannot be followed is retryable, as fetch failing: a streamed body to re-send, too many hops', async () => {
  handler = (req, res) => {
    if (req.path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    res.writeHead(307, { location: '/done' }).end();
  };
  await assert.rejects(
    postJson(h, `${a.url}/stream`, { headers: {}, body: Readable.from([Buffer.from('audio')]) }),
    { name: 'ProviderError', kind: 'retryable', message: 'openai could not be reached' },
  );
  seen = [];
  await assert.rejects(postJson(h, `${a.url}/loop`, { headers: {}, body: 'x' }), {
    kind: 'retryable',
    message: 'openai could not be reached',
  });
  assert.equal(seen.length, 21);
});

test('an answer cut short (the connection closed before its Content-Length) is retryable', async () => {
  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
    res.write('{"a":');
    setTimeout(() => res.socket?.destroy(), 20);
  };
  await assert.rejects(postJson(h, `${a.url}/short`, { headers: {}, body: 'x' }), {
    kind: 'retryable',
    message: 'openai could not be reached (ECONNRESET)',
  });
});
