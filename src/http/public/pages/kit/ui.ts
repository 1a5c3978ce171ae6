import { CSRF_FIELD, type PageUser } from './guard.ts';
import { html, type VNode } from './html.ts';

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

/** 2026-06-15 10:00 UTC: one unambiguous spelling for every time on the pages. */
export function formatTime(d: Date | string): string {
  const t = typeof d === 'string' ? new Date(d) : d;
  return `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())} UTC`;
}

/** A <time> element (machine-readable datetime, readable text). */
export const Time = ({ at }: { at: Date | string }): VNode => {
  const t = typeof at === 'string' ? new Date(at) : at;
  return html`<time datetime=${t.toISOString()}>${formatTime(t)}</time>`;
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
