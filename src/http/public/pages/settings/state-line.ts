import type { SubscriptionView } from '../../../../webhooks/subscriptions/subscriptions.ts';
import { html, type VNode } from '../kit/html.ts';
import { Time } from '../kit/ui.ts';
import { pauseReasonWords, STATE_WORDS } from './words.ts';

/** A subscription's state as the integrations list and the subscription's page show it. */

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
