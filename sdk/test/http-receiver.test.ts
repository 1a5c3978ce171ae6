/**
 * The README's plain node:http receiver, over a real socket: raw body in, handleWebhook's answer out.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { MemoryEventIdStore } from '../src/webhooks/dedupe.ts';
import type { WebhookEvent } from '../src/webhooks/events.ts';
import { handleWebhook } from '../src/webhooks/handle.ts';
import { signPayload } from '../src/webhooks/sign.ts';
import { callCompletedBody, EVENT_ID, SECRET } from './fixtures.ts';

async function readRawBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function startReceiver(onEvent: (event: WebhookEvent) => void) {
  const store = new MemoryEventIdStore();
  const server = createServer(async (req, res) => {
    const result = await handleWebhook({
      rawBody: await readRawBody(req),
      headers: req.headers,
      secrets: [SECRET],
      store,
      onEvent,
    });
    res.writeHead(result.status, result.headers).end(result.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return { url, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('a node:http receiver verifies, de-duplicates and answers the handshake over a real socket', async (t) => {
  const received: string[] = [];
  const receiver = await startReceiver((event) => void received.push(event.event_id));
  t.after(receiver.close);

  const body = callCompletedBody();
  const post = (payload: string, headers: Record<string, string>) =>
    fetch(receiver.url, {
      method: 'POST',
      body: payload,
      headers: { 'content-type': 'application/json', ...headers },
    });
  const signed = () => ({ 'Service-Signature': signPayload(body, SECRET, Math.floor(Date.now() / 1000)) });

  const first = await post(body, signed());
  assert.equal(first.status, 200);
  assert.deepEqual(await first.json(), { received: true });
  const duplicate = await post(body, signed());
  assert.equal(duplicate.status, 200);
  assert.deepEqual(await duplicate.json(), { received: true, duplicate: true });
  const forged = await post(body.replace('73', '74'), signed());
  assert.equal(forged.status, 400);
  assert.equal(((await forged.json()) as { error: { code: string } }).error.code, 'signature_mismatch');

  const handshake = await post('{"event_type":"webhook.subscription.verify","challenge":"abc"}', {});
  assert.equal(handshake.status, 200);
  assert.equal(handshake.headers.get('content-type'), 'application/json');
  assert.equal(await handshake.text(), '{"challenge":"abc"}');

  assert.deepEqual(received, [EVENT_ID]);
});
