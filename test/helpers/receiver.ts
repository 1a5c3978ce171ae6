/**
 * Real webhook receivers on loopback (node:http on 127.0.0.1, port 0): every request is recorded,
 * the current handler answers (200 with an empty body by default). Close every receiver a test
 * starts in its `finally` / `after`; receiverPool does the bookkeeping for a whole file.
 *
 * Every request a receiver gets is checked against the OpenAPI `webhooks` catalogue (a signed event
 * against its event type, an unsigned one against the handshake). A delivery that does not match
 * fails the test: `close()` rejects with the problems, and so does an `after` hook of the file for
 * receivers that were never closed. The handler still answers as configured, so the flow under
 * test is not disturbed. `startReceiver(handler, { catalogue: false })` opts out for a receiver
 * that is sent something else on purpose.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after } from 'node:test';
import { webhookDeliveryProblems } from './openapi-check.ts';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The connection, for handlers that reset it. */
  socket: Socket;
}

export type Handler = (req: ReceivedRequest, res: ServerResponse) => void;

export interface Receiver {
  /** http://127.0.0.1:<port>/hooks */
  url: string;
  requests: ReceivedRequest[];
  /** Deliveries that did not match the catalogue, one line each (close() rejects when not empty). */
  violations: string[];
  /** Replaces how the receiver answers. */
  respond(handler: Handler): void;
  close(): Promise<void>;
  server: Server;
}

/** Receivers whose catalogue violations were not reported yet (by close()). */
const unreported = new Set<string[]>();
// Registered when a test file imports this module, so it runs at the end of the file: the safety
// net for a receiver a test never closed.
after(() => {
  const left = [...unreported].flat();
  unreported.clear();
  if (left.length > 0) throw catalogueError(left);
});

function catalogueError(violations: string[]): Error {
  return new Error(
    `A webhook delivery does not match the OpenAPI webhooks catalogue (docs/openapi.json):\n- ${violations.join('\n- ')}`,
  );
}

export async function startReceiver(
  initial: Handler = (_q, res) => res.writeHead(200).end(),
  options: { catalogue?: boolean } = {},
): Promise<Receiver> {
  let handler = initial;
  const requests: ReceivedRequest[] = [];
  const violations: string[] = [];
  const checked = options.catalogue ?? true;
  if (checked) unreported.add(violations);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: req.socket,
      };
      requests.push(r);
      if (checked) {
        for (const problem of webhookDeliveryProblems(r)) {
          violations.push(`${r.method} ${r.url}: ${problem}`);
          console.error(`webhook catalogue: ${problem}`);
        }
      }
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    violations,
    server,
    respond(h) {
      handler = h;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      unreported.delete(violations);
      if (violations.length > 0) throw catalogueError(violations);
    },
  };
}

/** Starts receivers for one test file and closes them all in its `after`. */
export function receiverPool() {
  const started: Receiver[] = [];
  return {
    async start(handler?: Handler, options?: { catalogue?: boolean }): Promise<Receiver> {
      const r = await startReceiver(handler, options);
      started.push(r);
      return r;
    },
    /** Closes every receiver, then rejects if any of them got a delivery outside the catalogue. */
    async closeAll(): Promise<void> {
      const errors: unknown[] = [];
      for (const r of started.splice(0)) await r.close().catch((e: unknown) => errors.push(e));
      if (errors.length > 0) throw errors[0];
    },
  };
}

/** A handler answering `code` with `body`. */
export const status =
  (code: number, body = ''): Handler =>
  (_q, res) => {
    res.statusCode = code;
    res.end(body);
  };

/** Answers a strict handshake correctly (echoes the challenge), everything else 200. */
export const echoChallenge: Handler = (req, res) => {
  const parsed = JSON.parse(req.body || '{}');
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ challenge: parsed.challenge }));
};
