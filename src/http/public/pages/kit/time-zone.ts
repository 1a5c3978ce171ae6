import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The time zone the pages spell times in, read from the request's context so that no page has to
 * pass it: the signed-in user's zone (profile), else the organization's (settings), else UTC. The
 * authed pages' preHandler (routes.ts) runs each request's handler inside `inTimeZone`, and
 * renderPage renders inside it too; `currentTimeZone()` outside any request (an error page of a
 * signed-out visitor, a test calling a formatter) answers UTC.
 */
const zones = new AsyncLocalStorage<string>();

export const inTimeZone = <T>(zone: string, fn: () => T): T => zones.run(zone, fn);

export const currentTimeZone = (): string => zones.getStore() ?? 'UTC';
