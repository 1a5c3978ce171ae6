/**
 * A provider that answers too much: a real HTTP server on 127.0.0.1 (port 0) that reads each
 * request, answers `status` and then writes `block` after `block` — waiting for the socket to drain,
 * so it only writes as fast as the client reads — until the client closes the connection or
 * `offerBytes` were written. It records, per request, how many body bytes it had written when the
 * connection closed: a client that stops at its limit closes it early; one that buffers the whole
 * answer reads all `offerBytes`.
 *
 *   const srv = await startEndlessAnswer({ offerBytes: 1024 ** 3 });
 *   // point a provider's base URL at srv.url (any path answers)
 *   const [first] = await srv.closed(1);   // bytes written when the first connection closed
 *   await srv.close();
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface EndlessAnswer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** the requests received so far: path and headers */
  requests: { path: string; headers: IncomingHttpHeaders }[];
  /** resolves once `n` answers ended (connection closed or offer exhausted): the bytes each had written */
  closed(n: number): Promise<number[]>;
  close(): Promise<void>;
}

export async function startEndlessAnswer(
  opts: {
    status?: number;
    /** written at most, if the client keeps reading; default 1 GiB */
    offerBytes?: number;
    /** one write; default 64 KiB of `{"text":"aaaa…` (a JSON answer that never ends) */
    block?: Buffer;
    headers?: Record<string, string>;
  } = {},
): Promise<EndlessAnswer> {
  const offer = opts.offerBytes ?? 1024 ** 3;
  const block = opts.block ?? Buffer.alloc(64 * 1024, 'a');
  const requests: EndlessAnswer['requests'] = [];
  const ended: number[] = [];
  const waiters: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const done = (bytes: number) => {
    ended.push(bytes);
    for (const w of waiters.splice(0)) w();
  };
  const server = createServer((req, res) => {
    requests.push({ path: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => {
      res.writeHead(opts.status ?? 200, { 'content-type': 'application/json', ...opts.headers });
      let written = 0;
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        done(written);
      };
      res.on('close', finish);
      const head = Buffer.from('{"text":"');
      res.write(head);
      written += head.length;
      const pump = () => {
        while (!res.destroyed && written < offer) {
          written += block.length;
          if (!res.write(block)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async closed(n) {
      while (ended.length < n) await new Promise<void>((r) => waiters.push(r));
      return ended.slice(0, n);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
