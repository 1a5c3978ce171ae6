import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { setSecurityHeaders } from './kit/security.ts';

/**
 * GET /app/assets/<name>: the stylesheet and the ES modules of progressive enhancement, files in
 * ./assets read once at start. Only the files listed here are served (no path ever reaches the file
 * system from a request). A module is added by putting the file in ./assets and a line here.
 */
const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};
export const ASSET_FILES = [
  'app.css',
  'app.js',
  'copy.js',
  'confirm.js',
  'countdown.js',
  'player.js',
  'inbox.js',
  'board.js',
  'favicon.svg',
] as const;

export function assetRoutes(): FastifyPluginAsync {
  const dir = join(import.meta.dirname, 'assets');
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of ASSET_FILES) {
    const ext = name.slice(name.lastIndexOf('.') + 1);
    files.set(name, { body: readFileSync(join(dir, name)), type: TYPES[ext] as string });
  }
  return async (app) => {
    app.get<{ Params: { name: string } }>('/assets/:name', async (req, reply) => {
      const file = files.get(req.params.name);
      setSecurityHeaders(reply);
      if (!file) return reply.code(404).type('text/plain; charset=utf-8').send('No such asset.');
      // Short caching: a deploy's new files are picked up within minutes without versioned names.
      return reply.header('cache-control', 'public, max-age=300').type(file.type).send(file.body);
    });
  };
}
