/**
 * The benchmark's webhook receiver, run as its own process so that it does not share an event loop
 * with the worker it measures: node:http on 127.0.0.1, answers 200 "ok" to every POST. When the
 * parent sends 'report-on', it reports each request's arrival time (performance.timeOrigin-based,
 * comparable across processes) with its service-event-id over IPC, for the latency scenario.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let report = false;
let count = 0;
process.on('message', (m) => {
  if (m === 'report-on') report = true;
  if (m === 'report-off') report = false;
  if (m === 'count') process.send?.({ count });
});

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    count++;
    if (report)
      process.send?.({ id: req.headers['service-event-id'], at: performance.timeOrigin + performance.now() });
    res.end('ok');
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
