/**
 * Real webhook receivers on loopback (node:http on 127.0.0.1, port 0): every request is recorded,
 * the current handler answers (200 with an empty body by default). Close every receiver a test
 * starts in its `finally` / `after`; receiverPool does the bookkeeping for a whole file.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

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
  /** Replaces how the receiver answers. */
  respond(handler: Handler): void;
  close(): Promise<void>;
  server: Server;
}

export async function startReceiver(
  initial: Handler = (_q, res) => res.writeHead(200).end(),
): Promise<Receiver> {
  let handler = initial;
  const requests: ReceivedRequest[] = [];
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
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    server,
    respond(h) {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Starts receivers for one test file and closes them all in its `after`. */
export function receiverPool() {
  const started: Receiver[] = [];
  return {
    async start(handler?: Handler): Promise<Receiver> {
      const r = await startReceiver(handler);
      started.push(r);
      return r;
    },
    async closeAll(): Promise<void> {
      for (const r of started.splice(0)) await r.close();
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
