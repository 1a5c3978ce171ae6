import { CSRF_FIELD, type PageUser } from './guard.ts';
import { html, type VNode } from './html.ts';
import { currentTimeZone } from './time-zone.ts';

/** Small shared components of the pages. Each is a plain function returning an htm template. */

/** The hidden CSRF field every form of a signed-in page carries (guard.ts checks it). */
export const CsrfField = ({ user }: { user: PageUser }): VNode =>
  html`<input type="hidden" name=${CSRF_FIELD} value=${user.session.csrfToken} />`;

/**
 * A one-button form posting to `action` (trash, restore, resend …): works without JavaScript, and
 * a keyboard reaches and presses it like any button.
 */
export function PostButton(p: {
  user: PageUser;
  action: string;
  label: string;
  danger?: boolean;
  hidden?: Record<string, string>;
}): VNode {
  return html`<form method="post" action=${p.action} class="inline">
    <${CsrfField} user=${p.user} />
    ${Object.entries(p.hidden ?? {}).map(([k, v]) => html`<input type="hidden" name=${k} value=${v} />`)}
    <button type="submit" class=${p.danger ? 'danger' : ''}>${p.label}</button>
  </form>`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** 2026-06-15 10:00 UTC: the absolute spelling (the title of every <time>, and the text in UTC). */
export function formatUtc(d: Date | string): string {
  const t = typeof d === 'string' ? new Date(d) : d;
  return `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())} UTC`;
}

/** One formatter per zone (building an Intl.DateTimeFormat costs far more than using one). */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * 2026-06-15 12:00 GMT+2: one unambiguous spelling for every time on the pages, in the time zone of
 * the request (kit/time-zone.ts: the user's, else the organization's; UTC by default, spelt
 * "2026-06-15 10:00 UTC"). The zone's short name comes from Intl ("EDT", "GMT+2").
 */
export function formatTime(d: Date | string, zone = currentTimeZone()): string {
  const t = typeof d === 'string' ? new Date(d) : d;
  if (zone === 'UTC') return formatUtc(t);
  const p: Record<string, string> = {};
  for (const part of formatterOf(zone).formatToParts(t)) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} ${p.timeZoneName}`;
}

/** A <time> element: the time in the request's zone, the absolute UTC time as its datetime and on hover. */
export const Time = ({ at }: { at: Date | string }): VNode => {
  const t = typeof at === 'string' ? new Date(at) : at;
  return html`<time datetime=${t.toISOString()} title=${formatUtc(t)}>${formatTime(t)}</time>`;
};

/** 75 → "1 min 15 s"; null → "—". */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h} h ${m} min` : `${m} min ${s % 60} s`;
}

/** A value set's machine name in words: needs_review → "Needs review". */
export const words = (v: string): string => {
  const t = v.replace(/_/g, ' ');
  return t.charAt(0).toUpperCase() + t.slice(1);
};

/**
 * A copy button for the text of element `target`: hidden until the ES module assets/copy.js
 * (progressive enhancement) shows and wires it; without JavaScript the text is still there to select.
 */
export const CopyButton = ({ target, label = 'Copy' }: { target: string; label?: string }): VNode =>
  html`<button type="button" class="copy" data-copy-target=${target} hidden>${label}</button>`;
