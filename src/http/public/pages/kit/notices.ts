import type { FastifyRequest } from 'fastify';
import type { Notice } from './layout.ts';

/**
 * The notice after a successful form post (post/redirect/get): the page redirects to itself with
 * ?done=<key>, and shows the text its table maps that key to — never text from the request.
 */
export const doneNotice = (req: FastifyRequest, texts: Readonly<Record<string, string>>): Notice | null => {
  const done = (req.query as Record<string, unknown> | undefined)?.done;
  return typeof done === 'string' && Object.hasOwn(texts, done)
    ? { kind: 'ok', text: texts[done] as string }
    : null;
};
