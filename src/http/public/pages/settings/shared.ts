import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../../errors.ts';
import type { SubscriptionView } from '../../../../webhooks/subscriptions/subscriptions.ts';
import { html, type VNode } from '../html.ts';
import type { Notice } from '../layout.ts';
import { Time } from '../ui.ts';
import { pauseReasonWords, STATE_WORDS } from './words.ts';

/** Pieces the settings pages share: notices after a redirect, form errors, the state badge. */

export const doneNotice = (req: FastifyRequest, texts: Record<string, string>): Notice | null => {
  const done = (req.query as Record<string, unknown> | undefined)?.done;
  return typeof done === 'string' && texts[done] ? { kind: 'ok', text: texts[done] } : null;
};

/** An AppError a form caused, as the notice of the re-rendered form; anything else is rethrown. */
export function formError(err: unknown): { status: number; notice: Notice } {
  if (err instanceof AppError && err.status < 500) {
    return { status: err.status, notice: { kind: 'error', text: err.message } };
  }
  throw err;
}

export const StateBadge = ({ sub }: { sub: Pick<SubscriptionView, 'state'> }): VNode => {
  const cls = sub.state === 'active' ? 'badge good' : sub.state === 'paused' ? 'badge bad' : 'badge';
  return html`<span class=${cls}>${STATE_WORDS[sub.state]?.label ?? sub.state}</span>`;
};

/** The state badge with, for a paused subscription, why and since when. */
export const StateLine = ({ sub }: { sub: SubscriptionView }): VNode =>
  html`<${StateBadge} sub=${sub} />
    ${
      sub.state === 'paused' &&
      html` <span class="pause-reason">${pauseReasonWords(sub.paused_reason)}${
        sub.paused_at ? html` Paused at <${Time} at=${sub.paused_at} />.` : ''
      }</span>`
    }`;

/** The page plugins are registered under the /app prefix: a page path without it, for app.get/app.post. */
export const route = (pagePath: string): string => pagePath.replace(/^\/app(?=\/)/, '');
