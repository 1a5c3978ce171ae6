/**
 * The Range header of a recording download (RFC 9110 §14), reduced to what audio players use.
 *
 * - no header, another unit, a syntax error, or several ranges → the whole file with 200
 *   (a server may ignore Range; serving one multipart/byteranges body is not worth it for audio);
 * - one range "bytes=a-b", "bytes=a-" or "bytes=-n" → 206 with that slice, the end clamped to the
 *   last byte and a suffix longer than the file meaning the whole file;
 * - a single range that starts at or after the end (or "bytes=-0", or any range of an empty file)
 *   → 416 with Content-Range: bytes * /size.
 */
export type RangeDecision =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const SINGLE = /^bytes=[ \t]*(\d*)[ \t]*-[ \t]*(\d*)[ \t]*$/i;

export function decideRange(header: string | undefined, size: number): RangeDecision {
  if (header === undefined || header === '') return { kind: 'full' };
  if (header.includes(',')) return { kind: 'full' };
  const m = SINGLE.exec(header.trim());
  if (!m) return { kind: 'full' };
  const [, a, b] = m;
  if (a === '' && b === '') return { kind: 'full' };
  if (a === '') {
    const n = Number(b);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  const last = b === '' ? Number.MAX_SAFE_INTEGER : Number(b);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(last) || last < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(last, size - 1) };
}
