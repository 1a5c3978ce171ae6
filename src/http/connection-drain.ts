import type { FastifyInstance } from 'fastify';

/** How often a closing listener ends the keep-alive connections that have gone idle since. */
export const DRAIN_INTERVAL_MS = 100;

/**
 * Closing a listener (a shutdown: SIGTERM, `callcap serve` stopping) ends its keep-alive
 * connections as soon as each goes idle. Fastify's close ends the connections idle at that moment
 * and waits for the busy ones; a connection whose response finishes after that stays open, idle,
 * until its keep-alive times out (72 s), and the close waits with it — a download or a slow page
 * that ended a moment after SIGTERM held the shutdown for over a minute. While the server closes,
 * the idle connections are ended every DRAIN_INTERVAL_MS; a request in flight still runs to its end.
 */
export function installConnectionDrain(app: FastifyInstance): void {
  app.addHook('preClose', async () => {
    const server = app.server;
    if (!server.listening) return; // inject() only: no sockets
    const timer = setInterval(() => server.closeIdleConnections(), DRAIN_INTERVAL_MS);
    timer.unref();
    server.once('close', () => clearInterval(timer));
  });
}
