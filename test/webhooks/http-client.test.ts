import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { after, before, test } from 'node:test';
import {
  createWebhookClient,
  MAX_RESPONSE_BYTES,
  SNIPPET_BYTES,
  sanitizeSnippet,
} from '../../src/webhooks/delivery/http-client.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

let rx: Receiver;
let port: number;
let hugeBytesSent = 0;
before(async () => {
  // Unit tests of the raw HTTP client: the bodies are not service deliveries, so no catalogue check.
  rx = await startReceiver(
    (req, res) => {
      switch (req.url) {
        case '/hang':
          return; // never answers
        case '/reset':
          req.socket.destroy();
          return;
        case '/huge': {
          // Streams up to 50 MiB unless the client stops reading; counts what it managed to write.
          res.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = Buffer.alloc(16 * 1024, 'x');
          let sent = 0;
          const pump = () => {
            while (sent < 50 * 1024 * 1024) {
              sent += chunk.length;
              hugeBytesSent = sent;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end();
          };
          res.on('error', () => {});
          pump();
          return;
        }
        case '/redirect':
          res.writeHead(302, { location: '/target' });
          res.end();
          return;
        case '/binary':
          res.end(Buffer.from([0x68, 0x69, 0x00, 0x07, 0x1b, 0x0a, 0x41]));
          return;
        default:
          res.statusCode = Number(req.url?.slice(1)) || 200;
          res.end('fine');
      }
    },
    { catalogue: false },
  );
  port = Number(new URL(rx.url).port);
});
after(async () => {
  await rx.close();
});

const url = (path: string) => `http://127.0.0.1:${port}${path}`;
const headers = { 'content-type': 'application/json' };

test('a 2xx reply comes back as a response with its status and body snippet', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: true });
  t.after(() => c.close());
  const r = await c.post(url('/201'), '{}', headers);
  assert.equal(r.kind, 'response');
  assert.equal(r.kind === 'response' && r.status, 201);
  assert.equal(r.kind === 'response' && r.snippet, 'fine');
});

test('a 302 is returned as it is and its Location is never requested', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: true });
  t.after(() => c.close());
  rx.requests.length = 0;
  const r = await c.post(url('/redirect'), '{}', headers);
  assert.equal(r.kind === 'response' && r.status, 302);
  assert.deepEqual(
    rx.requests.map((q) => q.url),
    ['/redirect'],
  );
});

test('a receiver that never answers fails with errorClass timeout after the time-out', async (ctx) => {
  const c = createWebhookClient({ allowPrivateTargets: true, timeoutMs: 300 });
  ctx.after(() => c.close());
  const t = performance.now();
  const r = await c.post(url('/hang'), '{}', headers);
  const took = performance.now() - t;
  assert.equal(r.kind, 'error');
  assert.equal(r.kind === 'error' && r.errorClass, 'timeout');
  assert.ok(took >= 290 && took < 2000, `took ${took} ms`);
});

test('a receiver that resets the connection fails with errorClass connection', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: true });
  t.after(() => c.close());
  const r = await c.post(url('/reset'), '{}', headers);
  assert.equal(r.kind === 'error' && r.errorClass, 'connection');
});

test('a closed port fails with errorClass connection', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: true });
  t.after(() => c.close());
  const r = await c.post('http://127.0.0.1:1/x', '{}', headers);
  assert.equal(r.kind === 'error' && r.errorClass, 'connection');
});

test('a streamed huge body is cut after the cap: only a 1 KiB prefix is kept and the attempt ends promptly', async (ctx) => {
  const c = createWebhookClient({ allowPrivateTargets: true, timeoutMs: 5000 });
  ctx.after(() => c.close());
  const t = performance.now();
  const r = await c.post(url('/huge'), '{}', headers);
  const took = performance.now() - t;
  assert.equal(r.kind, 'response');
  assert.equal(r.kind === 'response' && r.status, 200);
  assert.equal(r.kind === 'response' && r.snippet, 'x'.repeat(SNIPPET_BYTES));
  assert.ok(took < 2000, `took ${took} ms`);
  await new Promise((res) => setTimeout(res, 50));
  assert.ok(
    hugeBytesSent < 10 * 1024 * 1024,
    `receiver could write only ${hugeBytesSent} bytes before we hung up`,
  );
  assert.ok(MAX_RESPONSE_BYTES === 64 * 1024);
});

test('control characters in a reply are replaced in the snippet', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: true });
  t.after(() => c.close());
  const r = await c.post(url('/binary'), '{}', headers);
  assert.equal(r.kind === 'response' && r.snippet, 'hi  \u0020\nA');
  assert.equal(sanitizeSnippet(Buffer.from('é'.repeat(600))).length <= SNIPPET_BYTES, true);
});

test('127.0.0.1 is refused with errorClass blocked_address when private targets are not allowed, before any request', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: false });
  t.after(() => c.close());
  rx.requests.length = 0;
  const r = await c.post(url('/200').replace('http:', 'https:'), '{}', headers);
  assert.equal(r.kind === 'error' && r.errorClass, 'blocked_address');
  assert.equal(
    r.kind === 'error' && r.message,
    'url points at 127.0.0.1, a loopback address; receivers must be reachable on the public internet ' +
      '(an operator can allow private targets with WEBHOOK_ALLOW_PRIVATE_TARGETS=1 for development).',
  );
  assert.equal(rx.requests.length, 0);
});

const resolvesTo =
  (address: string, family = 4): LookupFunction =>
  (_host, _opts, cb) =>
    (cb as (e: null, a: LookupAddress[]) => void)(null, [{ address, family }]);

test('a host name that resolves to 127.0.0.1 is refused at connect time', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: false, lookup: resolvesTo('127.0.0.1') });
  t.after(() => c.close());
  rx.requests.length = 0;
  const r = await c.post(`https://receiver.example.com:${port}/200`, '{}', headers);
  assert.equal(r.kind === 'error' && r.errorClass, 'blocked_address');
  assert.equal(
    r.kind === 'error' && r.message.includes('127.0.0.1'),
    false,
    'the resolved address is not revealed',
  );
  assert.equal(rx.requests.length, 0);
});

test('a host name resolving to the cloud metadata address or a mapped IPv6 loopback is refused', async () => {
  for (const [address, family] of [
    ['169.254.169.254', 4],
    ['::ffff:127.0.0.1', 6],
  ] as const) {
    const c = createWebhookClient({ allowPrivateTargets: false, lookup: resolvesTo(address, family) });
    const r = await c.post('https://metadata.example.com/latest', '{}', headers);
    assert.equal(r.kind === 'error' && r.errorClass, 'blocked_address', address);
    await c.close();
  }
});

test('with private targets allowed, a name resolving to 127.0.0.1 is delivered to', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: true, lookup: resolvesTo('127.0.0.1') });
  t.after(() => c.close());
  const r = await c.post(`http://receiver.example.com:${port}/200`, '{}', headers);
  assert.equal(r.kind === 'response' && r.status, 200);
});

test('a name that does not resolve fails with errorClass dns', async (t) => {
  const failing: LookupFunction = (_h, _o, cb) =>
    cb(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }), '');
  const c = createWebhookClient({ allowPrivateTargets: false, lookup: failing });
  t.after(() => c.close());
  const r = await c.post('https://nowhere.invalid/x', '{}', headers);
  assert.equal(r.kind === 'error' && r.errorClass, 'dns');
});

test('plain http is refused with errorClass invalid_url when private targets are not allowed', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: false });
  t.after(() => c.close());
  const r = await c.post('http://receiver.example.com/x', '{}', headers);
  assert.equal(r.kind === 'error' && r.errorClass, 'invalid_url');
});

test('a TLS handshake with a plain-http port fails with errorClass tls or connection, never a response', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: true, timeoutMs: 2000 });
  t.after(() => c.close());
  const r = await c.post(`https://127.0.0.1:${port}/200`, '{}', headers);
  assert.equal(r.kind, 'error');
  assert.ok(r.kind === 'error' && ['tls', 'connection'].includes(r.errorClass), JSON.stringify(r));
});

test('connections are kept alive and reused across posts', async (t) => {
  const c = createWebhookClient({ allowPrivateTargets: true });
  t.after(() => c.close());
  const sockets = new Set<unknown>();
  const onConn = (s: unknown) => sockets.add(s);
  rx.server.on('connection', onConn);
  for (let i = 0; i < 5; i++) await c.post(url('/200'), '{}', headers);
  rx.server.off('connection', onConn);
  assert.equal(sockets.size, 1);
});
