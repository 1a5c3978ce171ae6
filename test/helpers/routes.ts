import type { FastifyInstance } from 'fastify';

export interface RouteInfo {
  /** Fastify's pattern, e.g. /admin/v1/calls/:id/trash */
  url: string;
  methods: string[];
}

/**
 * Every route an app has, read from Fastify's own route tree (printRoutes), so a property test
 * that walks "every route" also covers routes added after it was written.
 */
export function routesOf(app: FastifyInstance): RouteInfo[] {
  const stack: string[] = [];
  const out: RouteInfo[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^(.*?)[├└]── (\S+)(?: \(([^)]*)\))?\s*$/.exec(line);
    if (!m) continue;
    const depth = [...(m[1] as string)].length / 4;
    const url = (depth > 0 ? (stack[depth - 1] ?? '') : '') + (m[2] as string);
    stack[depth] = url;
    stack.length = depth + 1;
    if (m[3]) out.push({ url, methods: m[3].split(',').map((s) => s.trim()) });
  }
  return out;
}
