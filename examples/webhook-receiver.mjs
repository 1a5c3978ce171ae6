#!/usr/bin/env node
// A webhook receiver for trying the Call Capture Service on your own machine: answers the
// verification handshake, verifies every event's signature exactly as the spec says, skips
// duplicates, and prints one line per event. Plain JavaScript, no dependencies, any Node >= 18.
// In your application use the SDK's handleWebhook (sdk/README.md), which does the same and more.
//
//   node examples/webhook-receiver.mjs [--port 4242] [--host 127.0.0.1] [--path /webhooks]
//                                      [--secret-file webhook-secret.txt] [--print-json]
//
// The signing secret is read from --secret-file at every event, so the receiver can run before the
// subscription exists (the handshake needs no secret): write the secret there when you subscribe.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    port: { type: 'string', default: '4242' },
    host: { type: 'string', default: '127.0.0.1' },
    path: { type: 'string', default: '/webhooks' },
    'secret-file': { type: 'string', default: 'webhook-secret.txt' },
    'print-json': { type: 'boolean', default: false },
  },
});

const MAX_BODY = 5 * 1024 * 1024;
const TOLERANCE_PAST_S = 600; // the reference verifier's policy (spec "Webhooks, signature")
const TOLERANCE_FUTURE_S = 300;
const seen = new Set();

function readSecret() {
  try {
    return readFileSync(opt['secret-file'], 'utf8').trim();
  } catch {
    return '';
  }
}

/** Why the signature does not verify, or null when it does. */
function signatureProblem(header, raw, secret) {
  const parts = Object.fromEntries(
    String(header ?? '')
      .split(',')
      .map((p) => p.trim().split('=')),
  );
  const t = Number(parts.t);
  if (!/^\d+$/.test(parts.t ?? '') || !/^[0-9a-f]{64}$/.test(parts.v1 ?? ''))
    return 'malformed service-signature';
  const age = Math.floor(Date.now() / 1000) - t;
  if (age > TOLERANCE_PAST_S || -age > TOLERANCE_FUTURE_S) return `timestamp ${age} s away`;
  const expected = createHmac('sha256', secret).update(`${parts.t}.`).update(raw).digest();
  return timingSafeEqual(expected, Buffer.from(parts.v1, 'hex')) ? null : 'signature mismatch';
}

function answer(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

createServer((req, res) => {
  if (req.method !== 'POST' || new URL(req.url, 'http://x').pathname !== opt.path)
    return answer(res, 404, {});
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const signature = req.headers['service-signature'];
    if (signature === undefined) {
      // Only the verification handshake is unsigned: echo the challenge (fine for strict mode too).
      let body;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = null;
      }
      if (body?.event_type !== 'webhook.subscription.verify' || typeof body.challenge !== 'string') {
        console.log('rejected: unsigned request that is not the handshake');
        return answer(res, 400, { error: 'unsigned' });
      }
      console.log('handshake answered');
      return answer(res, 200, { challenge: body.challenge });
    }
    const secret = readSecret();
    if (!secret) {
      console.log(`no secret in ${opt['secret-file']} yet: answered 500, the service will retry`);
      return answer(res, 500, { error: 'no secret configured' });
    }
    const problem = signatureProblem(signature, raw, secret);
    if (problem) {
      console.log(`rejected: ${problem}`);
      return answer(res, 400, { error: problem });
    }
    const event = JSON.parse(raw.toString('utf8'));
    if (seen.has(event.event_id)) {
      console.log(`duplicate ${event.event_type} ${event.event_id} (already handled)`);
      return answer(res, 200, { received: true, duplicate: true });
    }
    seen.add(event.event_id);
    const callId = event.data?.call_id ? ` call ${event.data.call_id}` : '';
    console.log(`verified ${event.event_type} ${event.event_id}${callId}`);
    if (opt['print-json']) console.log(JSON.stringify(event, null, 2));
    answer(res, 200, { received: true });
  });
}).listen(Number(opt.port), opt.host, function () {
  console.log(
    `listening on http://${opt.host}:${this.address().port}${opt.path}; secret from ${opt['secret-file']}`,
  );
});
