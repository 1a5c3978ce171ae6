/**
 * Where to go after sign-in. Only a path of this web app is accepted — "/app" or "/app/…", not the
 * JSON API under /app/api — parsed against a placeholder origin, so every spelling that would
 * leave the site (//evil.example, /\evil.example, https://evil.example, /%2F%2Fevil, a tab or
 * newline in the middle) falls back to /app. The result is the normalised path and query.
 */
export const HOME = '/app/calls';

const PLACEHOLDER = 'http://placeholder.invalid';

const hasControlCharacter = (s: string): boolean =>
  [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

export function safeNext(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2000) return HOME;
  // Only a path: one leading slash, then not a slash or backslash; no control characters or backslashes anywhere.
  if (!/^\/(?![/\\])/.test(raw) || raw.includes('\\') || hasControlCharacter(raw)) return HOME;
  let url: URL;
  try {
    url = new URL(raw, PLACEHOLDER);
  } catch {
    return HOME;
  }
  if (url.origin !== PLACEHOLDER) return HOME;
  const path = url.pathname;
  if (path !== '/app' && !path.startsWith('/app/')) return HOME;
  if (path === '/app/api' || path.startsWith('/app/api/') || path.startsWith('/app/login')) return HOME;
  if (path.includes('//')) return HOME;
  return `${path}${url.search}`;
}

/** The sign-in page's address for a visitor who asked for `path`. */
export const loginUrl = (path: string): string => {
  const next = safeNext(path);
  return next === HOME ? '/app/login' : `/app/login?next=${encodeURIComponent(next)}`;
};
