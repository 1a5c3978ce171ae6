import { redacted } from '../redaction/index.ts';

/**
 * The last error of a job as the operator reads it (GET /admin/v1/calls/{id}/processing): the
 * provider's own message, kept so the operator can act on it, with anything that looks like a
 * credential taken out and the length capped. Providers are written not to put secrets in their
 * messages (src/capture/providers/); this is the second line.
 */

/** Longer messages are cut: the gist of a provider's error fits, a dumped response body does not. */
export const MAX_ERROR_CHARS = 500;

const SECRET_PATTERNS: RegExp[] = [
  // Authorization header values
  /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  // key=value / "key": "value" pairs that name a secret
  /\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password)["']?\s*[:=]\s*["']?)(?!\[redacted\])[^\s"'&,}]+/gi,
  // credentials in a URL
  /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi,
  // well-known key shapes (OpenAI-style sk-…, Deepgram-style 40 hex characters)
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b[a-f0-9]{40}\b/g,
];

export function operatorMessage(raw: string): string {
  // a provider's message may quote what it was given: card numbers and the like never reach the operator
  let s = redacted(raw.replace(/\s+/g, ' ').trim());
  s = s.replace(SECRET_PATTERNS[0], '$1 [redacted]');
  s = s.replace(SECRET_PATTERNS[1], '$1[redacted]');
  s = s.replace(SECRET_PATTERNS[2], '$1[redacted]@');
  s = s.replace(SECRET_PATTERNS[3], '[redacted]');
  s = s.replace(SECRET_PATTERNS[4], '[redacted]');
  if (s.length > MAX_ERROR_CHARS) s = `${s.slice(0, MAX_ERROR_CHARS - 1)}…`;
  return s || 'unknown error';
}
