import type { FastifyReply } from 'fastify';

/**
 * The security headers of every page and asset under /app (not /app/api, which is JSON and keeps
 * its own headers). The Content-Security-Policy allows scripts, styles, media and requests from this
 * origin only, and nothing inline: no <script> body, no <style> element, no style="" attribute, no
 * on…="" handler — the pages are written so that none is needed. Forms post only to this origin,
 * and no other site may frame a page (clickjacking): frame-ancestors 'none' and X-Frame-Options
 * DENY for older browsers.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "media-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

export function setSecurityHeaders(reply: FastifyReply): void {
  reply.headers(SECURITY_HEADERS);
}
