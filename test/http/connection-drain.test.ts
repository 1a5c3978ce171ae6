import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../src/db/types.ts';
import type { Deps } from '../../src/deps.ts';
import { buildOperatorApp } from '../../src/http/operator/app.ts';
import { buildPublicApp } from '../../src/http/public/app.ts';
import { createTestDb } from '../helpers/db.ts';
import { testDeps } from '../helpers/deps.ts';

/**
 * A shutdown does not wait out a keep-alive: a response that ends after the listener started
 * closing leaves an idle keep-alive connection, which the close ends at once instead of after
 * Fastify's 72 s keepAliveTimeout (the close waited 73 s without the drain: test timeout below).
 */
let db: Db;
let deps: Deps;
before(async () => {
  db = await createTestDb();
  deps = testDeps(db, '/tmp/callcap-drain-test');
});
after(async () => {
  await db.close();
});

async function closeAfterAResponseInFlight(app: FastifyInstance) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const arrivedP = new Promise<void>((r) => (arrived = r));
  app.get('/drain-test', async () => {
    arrived();
    await released;
    return { ok: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true });
  try {
    let socketClosed!: () => void;
    const socketClosedP = new Promise<void>((r) => (socketClosed = r));
    const answer = new Promise<{ status: number; connection: string | undefined; body: string }>(
      (resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/drain-test', agent }, (res) => {
          res.socket.on('close', () => socketClosed());
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
        });
        req.on('error', reject);
      },
    );
    await arrivedP;
    const closing = app.close();
    // the request is in flight while the listener closes; it ends afterwards
    await new Promise((r) => setTimeout(r, 50));
    release();
    assert.deepEqual(await answer, { status: 200, connection: 'keep-alive', body: '{"ok":true}' });
    await closing;
    assert.equal(app.server.listening, false);
    await socketClosedP; // the idle keep-alive connection was ended by the server, not by the agent
  } finally {
    agent.destroy();
  }
}

test('the public listener closes without waiting out an idle keep-alive connection', {
  timeout: 30_000,
}, async () => {
  await closeAfterAResponseInFlight(await buildPublicApp(deps));
});

test('the operator listener too', { timeout: 30_000 }, async () => {
  await closeAfterAResponseInFlight(await buildOperatorApp(deps));
});
