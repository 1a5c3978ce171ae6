import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { stashSecret, takeSecret } from '../../../../accounts/secret-reveals.ts';
import type { Queryable } from '../../../../db/types.ts';
import type { Deps } from '../../../../deps.ts';
import { INTEGRATIONS_PAGE_PATH, subscriptionPagePath } from '../../../../domain/app-urls.ts';
import { badRequest, notFound } from '../../../../errors.ts';
import { isUuid } from '../../../../ids.ts';
import { EVENT_TYPES } from '../../../../webhooks/outbox/event-types.ts';
import {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  type DeliveryView,
  listDeliveries,
} from '../../../../webhooks/subscriptions/delivery-log.ts';
import { type HandshakeResult, verifySubscription } from '../../../../webhooks/subscriptions/handshake.ts';
import {
  BULK_RESEND_MAX_WINDOW_MS,
  bulkResend,
  RESENDABLE,
  type ResendableStatus,
  resendDelivery,
} from '../../../../webhooks/subscriptions/resend.ts';
import {
  activateRotation,
  listRotations,
  startRotation,
  testRotation,
} from '../../../../webhooks/subscriptions/rotation.ts';
import {
  deleteSubscription,
  getSubscription,
  lockSubscription,
  type SubscriptionView,
} from '../../../../webhooks/subscriptions/subscriptions.ts';
import { enqueueTestEvent, subscriptionInactive } from '../../../../webhooks/subscriptions/test-event.ts';
import { dayOf, parseDay } from '../kit/dates.ts';
import { field, fields, formOf } from '../kit/form.ts';
import { formError } from '../kit/form-check.ts';
import { type PageUser, requireCan, requireUser, scopeOf, seeOther } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { route } from '../kit/paths.ts';
import { CopyButton, CsrfField, Time } from '../kit/ui.ts';
import { StateLine } from './state-line.ts';
import {
  DELIVERY_STATUS_WORDS,
  deliveryReasonWords,
  errorClassWords,
  handshakeWords,
  MODE_WORDS,
  STATE_WORDS,
} from './words.ts';

/**
 * /app/settings/integrations/webhooks/{id}: one subscription — its state in words, re-verify, test,
 * delete; secret rotation (standard: new secret shown once, pending-until, test, activate, the old
 * secret's grace; emergency with its warning); the delivery log with filters, resend and bulk
 * resend (dry-run count first). Same services as the console JSON API.
 *
 * A new signing secret (the subscription's first, from "Create subscription" on the integrations
 * page, or a rotation's) is shown after a redirect, like a new API key (post/redirect/get: a reload
 * neither creates a second subscription or rotation nor shows the secret again): the POST keeps it
 * encrypted for the session's next page (accounts/secret-reveals.ts, in the transaction that made
 * it) and answers 303 to `…/webhooks/{id}?reveal=<id>`, an id that is not the secret; the GET takes
 * it out and shows it once, with the creation's handshake outcome.
 */

type SecretKind = 'created' | 'standard' | 'emergency';

/** What a reveal keeps: the secret, which page may show it, and what to say beside it. */
interface SecretReveal {
  subscriptionId: string;
  secret: string;
  kind: SecretKind;
  handshake?: HandshakeResult;
}

/** Keeps a new secret for the session's next page; answers the address to redirect to. */
export async function stashSubscriptionSecret(
  tx: Queryable,
  deps: Deps,
  user: PageUser,
  r: SecretReveal,
): Promise<string> {
  const id = await stashSecret(tx, deps.keys, {
    sessionId: user.session.sessionId,
    kind: 'webhook_secret',
    secret: JSON.stringify(r),
    now: deps.clock.now(),
  });
  return `${subscriptionPagePath(r.subscriptionId)}?reveal=${id}#secret-title`;
}

async function takeSubscriptionSecret(
  deps: Deps,
  user: PageUser,
  subscriptionId: string,
  id: string,
): Promise<SecretReveal | null> {
  const kept = await takeSecret(deps.db, deps.keys, {
    sessionId: user.session.sessionId,
    kind: 'webhook_secret',
    id,
    now: deps.clock.now(),
  });
  if (kept === null) return null;
  const r = JSON.parse(kept) as SecretReveal;
  return r.subscriptionId === subscriptionId ? r : null;
}

const REVEAL_NOTICE: Record<SecretKind, string> = {
  created: 'Webhook subscription created. Copy its signing secret now: it is shown only this once.',
  standard:
    'A new secret is waiting for activation (up to 24 hours). Deliveries are still signed with the current one.',
  emergency:
    'Emergency rotation done: the old secret no longer signs anything, sending is paused and queued deliveries were skipped. Install the new secret, then re-verify.',
};

const DONE: Record<string, string> = {
  test_sent: 'A webhook.test event is queued for this subscription; it appears in the delivery log below.',
  rotation_test_sent:
    'A webhook.test signed with the new secret is queued (header service-secret-rotation-id); see the delivery log.',
  rotation_activated:
    'The new secret is active: deliveries are signed with it from now on. Keep accepting the old secret for 1 hour.',
  resent: 'The delivery is queued again; it goes out with the same event_id.',
};

const DAY_MS = 24 * 60 * 60 * 1000;

/** "23 h 59 min" until `at` (or "expired"). */
export function remaining(now: Date, at: string): string {
  const ms = new Date(at).getTime() - now.getTime();
  if (ms <= 0) return 'expired';
  const min = Math.ceil(ms / 60_000);
  const h = Math.floor(min / 60);
  return h > 0 ? `${h} h ${min % 60} min` : `${min} min`;
}

export interface LogFilter {
  status?: DeliveryStatus;
  eventType?: string;
  cursor?: string;
}

/** The delivery log's filters from a query string or a form; unknown values are ignored. */
export function logFilterOf(q: Record<string, unknown>): LogFilter {
  const status =
    typeof q.status === 'string' && (DELIVERY_STATUSES as readonly string[]).includes(q.status)
      ? (q.status as DeliveryStatus)
      : undefined;
  const et = q.event_type;
  const eventType =
    typeof et === 'string' && (EVENT_TYPES as readonly string[]).includes(et) ? et : undefined;
  const cursor =
    typeof q.cursor === 'string' && q.cursor.length > 0 && q.cursor.length < 200 ? q.cursor : undefined;
  return { status, eventType, cursor };
}

const filterQuery = (f: LogFilter, extra: Record<string, string> = {}) => {
  const p = new URLSearchParams();
  if (f.status) p.set('status', f.status);
  if (f.eventType) p.set('event_type', f.eventType);
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
};

export interface BulkPreview {
  count: number;
  erased: number;
  from: string;
  to: string;
  statuses: ResendableStatus[];
  eventType?: string;
  message: string | null;
}

interface PageExtras {
  notice?: Notice | null;
  status?: number;
  /** a signing secret to show once: at creation or after a rotation started */
  secret?: string;
  secretKind?: SecretKind;
  handshake?: HandshakeResult;
  bulk?: BulkPreview;
}

function Facts({ sub, now }: { sub: SubscriptionView; now: Date }): VNode {
  const mode = MODE_WORDS[sub.verification_mode];
  return html`<dl class="facts">
    <dt>Receiver URL</dt><dd><code>${sub.url}</code></dd>
    <dt>State</dt>
    <dd><${StateLine} sub=${sub} /><br /><span class="muted">${STATE_WORDS[sub.state]?.text}</span></dd>
    <dt>Events</dt>
    <dd>${sub.event_types.length === 0 ? 'All event types' : sub.event_types.map((t) => html`<code>${t}</code> `)}</dd>
    <dt>Verification mode</dt><dd>${mode?.label ?? sub.verification_mode} — ${mode?.text}</dd>
    <dt>Last verified</dt>
    <dd>${sub.last_verified_at ? html`<${Time} at=${sub.last_verified_at} />` : html`<span class="muted">never</span>`}</dd>
    ${
      sub.state === 'active' &&
      (sub.consecutive_transient_failures > 0 || sub.consecutive_gone > 0) &&
      html`<dt>Recent failures</dt>
        <dd>${sub.consecutive_transient_failures} in a row (it pauses at 50; two 410 answers in a row also pause it)</dd>`
    }
    <dt>Created</dt><dd><${Time} at=${sub.created_at} /></dd>
  </dl>
  <span hidden data-now=${now.toISOString()}></span>`;
}

function SecretOnce({ secret, kind }: { secret: string; kind: PageExtras['secretKind'] }): VNode {
  const what =
    kind === 'standard'
      ? 'This is the new signing secret. Install it in your receiver next to the current one, then send a test signed with it and activate it below.'
      : kind === 'emergency'
        ? 'This is the only signing secret now: replace the old one in your receiver (no grace window), then re-verify to resume sending.'
        : 'Your receiver checks the service-signature header of every event with it (HMAC-SHA256).';
  return html`<section class="secret-once" aria-labelledby="secret-title">
    <h2 id="secret-title">Signing secret</h2>
    <p><strong>Copy it now: it is shown only this once.</strong> ${what}</p>
    <p><code id="signing-secret" class="secret">${secret}</code> <${CopyButton} target="signing-secret" label="Copy secret" /></p>
  </section>`;
}

function HandshakeOutcome({ sub, h }: { sub: SubscriptionView; h: HandshakeResult }): VNode {
  const w = handshakeWords(sub.verification_mode, h);
  return html`<section aria-labelledby="handshake-title">
    <h2 id="handshake-title">Verification handshake</h2>
    <p class=${`notice ${w.ok ? 'ok' : 'error'}`} id="handshake-outcome">${w.text}</p>
  </section>`;
}

function Actions({ sub, user }: { sub: SubscriptionView; user: PageUser }): VNode {
  const base = subscriptionPagePath(sub.subscription_id);
  return html`<div class="actions">
    <form method="post" action=${`${base}/verify`} class="inline">
      <${CsrfField} user=${user} />
      <button type="submit">Re-verify</button>
    </form>
    ${
      sub.state === 'active'
        ? html`<form method="post" action=${`${base}/test`} class="inline">
            <${CsrfField} user=${user} />
            <button type="submit" class="secondary">Send a test event</button>
          </form>`
        : html`<span class="muted">A test can be sent once the subscription is active.</span>`
    }
    <a href=${`${base}/delete`} class="button secondary">Delete…</a>
  </div>`;
}

type Rotation = Awaited<ReturnType<typeof listRotations>>[number];

function RotationSection(p: {
  sub: SubscriptionView;
  user: PageUser;
  rotations: Rotation[];
  now: Date;
}): VNode {
  const { sub, user, now } = p;
  const base = subscriptionPagePath(sub.subscription_id);
  const pending = sub.pending_rotation;
  const retiring = p.rotations.find((r) => r.status === 'retiring');
  return html`<section aria-labelledby="rotation-title">
    <h2 id="rotation-title">Signing secret rotation</h2>
    ${
      retiring?.expires_at &&
      html`<p id="grace">
        The previous secret was replaced; your receiver should keep accepting it until${' '}
        <${Time} at=${retiring.expires_at} />${` (1-hour grace, ${remaining(now, retiring.expires_at)} left), then remove it.`}
      </p>`
    }
    ${
      pending
        ? html`<div id="pending-rotation">
            <p>
              A new secret is waiting for activation until <${Time} at=${pending.expires_at} />${' ('}<span
                class="countdown" data-until=${pending.expires_at}>${remaining(now, pending.expires_at)}</span>${' left); after that it expires and you start again.'}
            </p>
            ${html`<div class="actions">
                ${
                  sub.state === 'active'
                    ? html`<form method="post" action=${`${base}/rotations/${pending.rotation_id}/test`} class="inline">
                        <${CsrfField} user=${user} />
                        <button type="submit" class="secondary">Send a test signed with the new secret</button>
                      </form>`
                    : html`<span class="muted">A test can be sent once the subscription is active.</span>`
                }
                <form method="post" action=${`${base}/rotations/${pending.rotation_id}/activate`} class="inline">
                  <${CsrfField} user=${user} />
                  <button type="submit">Activate the new secret</button>
                </form>
              </div>`}
          </div>`
        : html`<p class="muted">No rotation is waiting.</p>`
    }
    ${html`<h3>Standard rotation</h3>
        <p>A new secret is shown once and waits up to 24 hours: install it next to the current one, send a test signed with
          it, then activate it. The old secret stays valid for your receiver for 1 hour after activation.</p>
        <form method="post" action=${`${base}/rotations`} class="inline">
          <${CsrfField} user=${user} />
          <button type="submit" class="secondary">${pending ? 'Start over with another new secret' : 'Start a rotation'}</button>
        </form>
        <section class="danger-zone" aria-labelledby="emergency-title">
          <h3 id="emergency-title">Emergency rotation</h3>
          <p><strong>Use this when the secret leaked.</strong> The old secret stops at once (no grace window), sending${' '}
            <strong>pauses immediately</strong>, and every queued delivery is <strong>skipped</strong>. Install the new
            secret, re-verify to resume, then resend the skipped deliveries from the delivery log.</p>
          <form method="post" action=${`${base}/rotations`} class="stack">
            <${CsrfField} user=${user} />
            <input type="hidden" name="emergency" value="yes" />
            <label class="check">
              <input type="checkbox" name="confirm" value="yes" required />
              I understand that sending pauses and queued deliveries are skipped.
            </label>
            <div><button type="submit" class="danger">Rotate now (emergency)</button></div>
          </form>
        </section>`}
  </section>`;
}

function Attempts({ d }: { d: DeliveryView }): VNode {
  if (d.attempt_log.length === 0) return html`<span class="muted">no attempt yet</span>`;
  return html`<ol class="attempts">
    ${d.attempt_log.map(
      (a) => html`<li>
        <${Time} at=${a.started_at} />${' — '}${
          a.response_status !== null
            ? html`HTTP <strong>${a.response_status}</strong>`
            : html`<strong>no reply</strong>: ${errorClassWords(a.error_class)}`
        }${` in ${a.duration_ms} ms`}
        ${a.response_snippet && html`<br /><code class="snippet">${a.response_snippet.slice(0, 200)}</code>`}
      </li>`,
    )}
  </ol>`;
}

function DeliveryLog(p: {
  sub: SubscriptionView;
  user: PageUser;
  items: DeliveryView[];
  nextCursor: string | null;
  filter: LogFilter;
  now: Date;
  bulk?: BulkPreview;
}): VNode {
  const { sub, user, filter } = p;
  const base = subscriptionPagePath(sub.subscription_id);
  const bulkStatuses: ResendableStatus[] =
    filter.status === 'dead_lettered' || filter.status === 'skipped' ? [filter.status] : [...RESENDABLE];
  return html`<section aria-labelledby="log-title" id="delivery-log">
    <h2 id="log-title">Delivery log</h2>
    <form method="get" action=${`${base}#delivery-log`} class="filters">
      <div>
        <label for="log-status">Status</label>
        <select id="log-status" name="status">
          <option value="" selected=${!filter.status}>Any</option>
          ${DELIVERY_STATUSES.map(
            (s) =>
              html`<option value=${s} selected=${filter.status === s}>${DELIVERY_STATUS_WORDS[s]}</option>`,
          )}
        </select>
      </div>
      <div>
        <label for="log-type">Event type</label>
        <select id="log-type" name="event_type">
          <option value="" selected=${!filter.eventType}>Any</option>
          ${EVENT_TYPES.map((t) => html`<option value=${t} selected=${filter.eventType === t}>${t}</option>`)}
        </select>
      </div>
      <div><button type="submit" class="secondary">Filter</button></div>
    </form>
    ${
      p.items.length === 0
        ? html`<p class="muted">No deliveries${filter.status || filter.eventType ? ' match these filters' : ' yet'}.</p>`
        : html`<table class="deliveries">
            <thead>
              <tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th>
                <th scope="col">Attempts (time, reply, latency, first bytes)</th><th scope="col">Action</th></tr>
            </thead>
            <tbody>
              ${p.items.map(
                (d) => html`<tr data-delivery-id=${d.delivery_id} data-status=${d.status}>
                  <td><${Time} at=${d.created_at} /></td>
                  <td><code>${d.event_type}</code><br /><span class="muted">event ${d.event_id}</span></td>
                  <td>
                    <span class=${`badge ${d.status === 'delivered' ? 'good' : d.status === 'dead_lettered' ? 'bad' : ''}`}>
                      ${DELIVERY_STATUS_WORDS[d.status]}</span>
                    ${d.reason && html`<br /><span class="muted">${deliveryReasonWords(d.reason)}</span>`}
                    ${d.next_attempt_at && html`<br /><span class="muted">next try <${Time} at=${d.next_attempt_at} /></span>`}
                  </td>
                  <td><${Attempts} d=${d} /></td>
                  <td>
                    ${
                      (RESENDABLE as readonly string[]).includes(d.status) &&
                      html`<form method="post" action=${`${base}/deliveries/${d.delivery_id}/resend`} class="inline">
                        <${CsrfField} user=${user} />
                        ${filter.status && html`<input type="hidden" name="status" value=${filter.status} />`}
                        ${filter.eventType && html`<input type="hidden" name="event_type" value=${filter.eventType} />`}
                        <button type="submit" class="secondary" aria-label=${`Resend ${d.event_type} ${d.event_id}`}>Resend</button>
                      </form>`
                    }
                  </td>
                </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${
      p.nextCursor &&
      html`<p class="pager"><a href=${`${base}${filterQuery(filter, { cursor: p.nextCursor })}#delivery-log`}>Older deliveries</a></p>`
    }
    ${html`<${BulkResend} sub=${sub} user=${user} filter=${filter} statuses=${bulkStatuses} now=${p.now} bulk=${p.bulk} />`}
  </section>`;
}

function BulkResend(p: {
  sub: SubscriptionView;
  user: PageUser;
  filter: LogFilter;
  statuses: ResendableStatus[];
  now: Date;
  bulk?: BulkPreview;
}): VNode {
  const base = subscriptionPagePath(p.sub.subscription_id);
  const from = p.bulk?.from ?? dayOf(new Date(p.now.getTime() - 29 * DAY_MS));
  const to = p.bulk?.to ?? dayOf(p.now);
  const statuses = p.bulk?.statuses ?? p.statuses;
  const eventType = p.bulk ? p.bulk.eventType : p.filter.eventType;
  return html`<section aria-labelledby="bulk-title" id="bulk-resend">
    <h3 id="bulk-title">Resend many</h3>
    <p>Sends the dead-lettered and/or skipped deliveries created between two days (at most 30 days) again, with their
      original event_ids${eventType ? html` — only <code>${eventType}</code> events` : ''}. First count them.</p>
    ${
      p.bulk &&
      html`<div id="bulk-preview" class="notice" role="status">
        <p><strong>${p.bulk.count}</strong>${` ${p.bulk.count === 1 ? 'delivery' : 'deliveries'} would be sent again (${p.bulk.statuses
          .map((s) => DELIVERY_STATUS_WORDS[s])
          .join(
            ' and ',
          )}, ${p.bulk.from} to ${p.bulk.to}${p.bulk.eventType ? `, ${p.bulk.eventType}` : ''}).${p.bulk.message ? ` ${p.bulk.message}` : ''}`}</p>
        ${
          p.bulk.count > 0 &&
          html`<form method="post" action=${`${base}/deliveries/resend`} class="inline">
            <${CsrfField} user=${p.user} />
            <input type="hidden" name="from" value=${p.bulk.from} />
            <input type="hidden" name="to" value=${p.bulk.to} />
            ${p.bulk.statuses.map((s) => html`<input type="hidden" name="statuses" value=${s} />`)}
            ${p.bulk.eventType && html`<input type="hidden" name="event_type" value=${p.bulk.eventType} />`}
            <input type="hidden" name="dry_run" value="no" />
            <button type="submit">Resend ${p.bulk.count} ${p.bulk.count === 1 ? 'delivery' : 'deliveries'}</button>
          </form>`
        }
      </div>`
    }
    <form method="post" action=${`${base}/deliveries/resend`} class="filters">
      <${CsrfField} user=${p.user} />
      <div><label for="bulk-from">From (day, UTC)</label><input type="date" id="bulk-from" name="from" value=${from} required /></div>
      <div><label for="bulk-to">To (day, UTC, inclusive)</label><input type="date" id="bulk-to" name="to" value=${to} required /></div>
      <fieldset>
        <legend>Statuses</legend>
        ${RESENDABLE.map(
          (
            s,
          ) => html`<label class="check"><input type="checkbox" name="statuses" value=${s} checked=${statuses.includes(s)} />
            ${DELIVERY_STATUS_WORDS[s]}</label>`,
        )}
      </fieldset>
      ${eventType && html`<input type="hidden" name="event_type" value=${eventType} />`}
      <input type="hidden" name="dry_run" value="yes" />
      <div><button type="submit" class="secondary">Count (dry run)</button></div>
    </form>
  </section>`;
}

async function loadSub(deps: Deps, user: PageUser, id: string): Promise<SubscriptionView> {
  const sub = isUuid(id) ? await getSubscription(deps.db, scopeOf(user), id, deps.clock.now()) : null;
  if (!sub) throw notFound(`No webhook subscription ${id} in your organization.`);
  return sub;
}

export async function renderSubscriptionPage(
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  user: PageUser,
  id: string,
  x: PageExtras = {},
): Promise<FastifyReply> {
  const sub = await loadSub(deps, user, id);
  const scope = scopeOf(user);
  const filter = logFilterOf(
    (req.method === 'GET' ? req.query : formOf(req.body)) as Record<string, unknown>,
  );
  const [rotations, log] = await Promise.all([
    listRotations(deps.db, scope, sub.subscription_id),
    listDeliveries(deps.db, {
      scope,
      subscriptionId: sub.subscription_id,
      status: filter.status,
      eventType: filter.eventType,
      cursor: req.method === 'GET' ? filter.cursor : undefined,
      limit: 20,
    }),
  ]);
  const now = deps.clock.now();
  return renderPage(reply, {
    title: 'Webhook subscription',
    user,
    nav: 'integrations',
    status: x.status,
    notice: x.notice ?? null,
    body: html`
      <p><a href=${INTEGRATIONS_PAGE_PATH}>← Integrations</a></p>
      ${x.secret && html`<${SecretOnce} secret=${x.secret} kind=${x.secretKind ?? 'created'} />`}
      ${x.handshake && html`<${HandshakeOutcome} sub=${sub} h=${x.handshake} />`}
      <${Facts} sub=${sub} now=${now} />
      <${Actions} sub=${sub} user=${user} />
      <${RotationSection} sub=${sub} user=${user} rotations=${rotations} now=${now} />
      <${DeliveryLog} sub=${sub} user=${user} items=${log.items} nextCursor=${log.next_cursor} filter=${filter}
        now=${now} bulk=${x.bulk} />`,
  });
}

/** A day field of the bulk form (YYYY-MM-DD) as the start of that UTC day. */
function dayField(value: string | undefined, name: string): Date {
  const d = value === undefined ? null : parseDay(value);
  if (!d) throw badRequest(`Field "${name}" must be a day such as 2026-06-15.`, name);
  return d;
}

type IdParams = { Params: { id: string } };
type RotationParams = { Params: { id: string; rid: string } };
type DeliveryParams = { Params: { id: string; did: string } };

export function webhookPages(deps: Deps): FastifyPluginAsync {
  const page = route(`${INTEGRATIONS_PAGE_PATH}/webhooks/:id`);
  const back = (id: string, done: string, filter: LogFilter = {}, hash = '') =>
    `${subscriptionPagePath(id)}${filterQuery(filter, { done })}${hash}`;
  const orgOf = scopeOf;

  return async (app) => {
    // Integrations are for owners and admins (accounts/roles.ts): an agent gets the 403 page.
    app.addHook('preHandler', async (req) => {
      requireCan(req, 'manage_integrations');
    });
    app.get<IdParams>(page, async (req, reply) => {
      const user = requireUser(req);
      const q = req.query as Record<string, unknown>;
      if (typeof q.reveal === 'string') {
        await loadSub(deps, user, req.params.id);
        const r = await takeSubscriptionSecret(deps, user, req.params.id, q.reveal);
        return renderSubscriptionPage(
          deps,
          req,
          reply,
          user,
          req.params.id,
          r
            ? {
                secret: r.secret,
                secretKind: r.kind,
                handshake: r.handshake,
                notice: { kind: 'ok', text: REVEAL_NOTICE[r.kind] },
              }
            : {
                notice: {
                  kind: 'ok',
                  text: 'The new signing secret was shown once and is not shown again. If you did not copy it, start a rotation below to get another.',
                },
              },
        );
      }
      const n =
        q.done === 'bulk_resent' && typeof q.n === 'string' && /^\d{1,9}$/.test(q.n) ? Number(q.n) : null;
      const notice: Notice | null =
        n === null
          ? doneNotice(req, DONE)
          : {
              kind: 'ok',
              text: `${n} ${n === 1 ? 'delivery is' : 'deliveries are'} queued again; they go out with their original event_ids.`,
            };
      return renderSubscriptionPage(deps, req, reply, user, req.params.id, { notice });
    });

    app.post<IdParams>(`${page}/verify`, async (req, reply) => {
      const user = requireUser(req);
      await loadSub(deps, user, req.params.id);
      try {
        const r = await verifySubscription(deps, orgOf(user), req.params.id);
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, { handshake: r.verification });
      } catch (err) {
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, formError(err));
      }
    });

    app.post<IdParams>(`${page}/test`, async (req, reply) => {
      const user = requireUser(req);
      await loadSub(deps, user, req.params.id);
      try {
        await deps.db.transaction(async (tx) => {
          const sub = await lockSubscription(tx, orgOf(user), req.params.id);
          if (sub.state !== 'active') throw subscriptionInactive();
          return enqueueTestEvent(tx, {
            scope: orgOf(user),
            subscriptionId: sub.id,
            secretId: null,
            now: deps.clock.now(),
            publicBaseUrl: deps.config.publicBaseUrl,
          });
        });
      } catch (err) {
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, formError(err));
      }
      return seeOther(reply, back(req.params.id, 'test_sent'));
    });

    app.get<IdParams>(`${page}/delete`, async (req, reply) => {
      const user = requireUser(req);
      const sub = await loadSub(deps, user, req.params.id);
      return renderPage(reply, {
        title: 'Delete webhook subscription',
        user,
        nav: 'integrations',
        body: html`<section class="danger-zone">
          <h2>Delete the subscription to <code>${sub.url}</code>?</h2>
          <p>No more events go to this receiver; deliveries still waiting are skipped. To change its verification mode
            you delete it and create a new one (with a new secret). This cannot be undone.</p>
          <form method="post" action=${`${subscriptionPagePath(sub.subscription_id)}/delete`} class="actions">
            <${CsrfField} user=${user} />
            <button type="submit" class="danger">Delete the subscription</button>
            <a href=${subscriptionPagePath(sub.subscription_id)}>Cancel</a>
          </form>
        </section>`,
      });
    });

    app.post<IdParams>(`${page}/delete`, async (req, reply) => {
      const user = requireUser(req);
      const ok = isUuid(req.params.id) && (await deleteSubscription(deps, orgOf(user), req.params.id));
      if (!ok) throw notFound(`No webhook subscription ${req.params.id} in your organization.`);
      return seeOther(reply, `${INTEGRATIONS_PAGE_PATH}?done=subscription_deleted`);
    });

    app.post<IdParams>(`${page}/rotations`, async (req, reply) => {
      const user = requireUser(req);
      await loadSub(deps, user, req.params.id);
      const form = formOf(req.body);
      const emergency = field(form, 'emergency') === 'yes';
      try {
        if (emergency && field(form, 'confirm') !== 'yes') {
          throw badRequest(
            'An emergency rotation pauses sending and skips queued deliveries: tick the box to confirm.',
            'confirm',
          );
        }
        let to = '';
        await startRotation(
          deps,
          { scope: orgOf(user), subscriptionId: req.params.id, emergency },
          async (tx, r) => {
            to = await stashSubscriptionSecret(tx, deps, user, {
              subscriptionId: req.params.id,
              secret: r.secret,
              kind: emergency ? 'emergency' : 'standard',
            });
          },
        );
        return seeOther(reply, to);
      } catch (err) {
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, formError(err));
      }
    });

    app.post<RotationParams>(`${page}/rotations/:rid/test`, async (req, reply) => {
      const user = requireUser(req);
      await loadSub(deps, user, req.params.id);
      if (!isUuid(req.params.rid))
        throw notFound(`No rotation ${req.params.rid} on this webhook subscription.`);
      try {
        await testRotation(deps, {
          scope: orgOf(user),
          subscriptionId: req.params.id,
          rotationId: req.params.rid,
        });
      } catch (err) {
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, formError(err));
      }
      return seeOther(reply, back(req.params.id, 'rotation_test_sent'));
    });

    app.post<RotationParams>(`${page}/rotations/:rid/activate`, async (req, reply) => {
      const user = requireUser(req);
      await loadSub(deps, user, req.params.id);
      if (!isUuid(req.params.rid))
        throw notFound(`No rotation ${req.params.rid} on this webhook subscription.`);
      try {
        await activateRotation(deps, {
          scope: orgOf(user),
          subscriptionId: req.params.id,
          rotationId: req.params.rid,
        });
      } catch (err) {
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, formError(err));
      }
      return seeOther(reply, back(req.params.id, 'rotation_activated'));
    });

    app.post<DeliveryParams>(`${page}/deliveries/:did/resend`, async (req, reply) => {
      const user = requireUser(req);
      await loadSub(deps, user, req.params.id);
      if (!isUuid(req.params.did)) throw notFound(`No delivery ${req.params.did} in your organization.`);
      const filter = logFilterOf(formOf(req.body));
      try {
        await resendDelivery(deps, orgOf(user), req.params.did);
      } catch (err) {
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, formError(err));
      }
      return seeOther(
        reply,
        back(req.params.id, 'resent', { ...filter, cursor: undefined }, '#delivery-log'),
      );
    });

    app.post<IdParams>(`${page}/deliveries/resend`, async (req, reply) => {
      const user = requireUser(req);
      await loadSub(deps, user, req.params.id);
      const form = formOf(req.body);
      const dryRun = field(form, 'dry_run') !== 'no';
      const eventTypeRaw = field(form, 'event_type');
      const eventType =
        eventTypeRaw && (EVENT_TYPES as readonly string[]).includes(eventTypeRaw) ? eventTypeRaw : undefined;
      try {
        const statuses = [...new Set(fields(form, 'statuses'))];
        if (statuses.length === 0 || !statuses.every((s) => (RESENDABLE as readonly string[]).includes(s))) {
          throw badRequest('Tick "Dead-lettered", "Skipped" or both.', 'statuses');
        }
        const fromDay = field(form, 'from');
        const toDay = field(form, 'to');
        const from = dayField(fromDay, 'from');
        const to = new Date(dayField(toDay, 'to').getTime() + DAY_MS);
        if (to.getTime() - from.getTime() > BULK_RESEND_MAX_WINDOW_MS) {
          throw badRequest('Choose at most 30 days; split a longer range into several resends.', 'to');
        }
        const r = await bulkResend(deps, orgOf(user), req.params.id, {
          from,
          to,
          statuses: statuses as ResendableStatus[],
          eventType,
          dryRun,
        });
        if (!dryRun) {
          return seeOther(
            reply,
            `${subscriptionPagePath(req.params.id)}?done=bulk_resent&n=${r.count}#delivery-log`,
          );
        }
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, {
          bulk: {
            count: r.count,
            erased: r.erased_excluded,
            from: fromDay as string,
            to: toDay as string,
            statuses: statuses as ResendableStatus[],
            eventType,
            message: r.message,
          },
        });
      } catch (err) {
        return renderSubscriptionPage(deps, req, reply, user, req.params.id, formError(err));
      }
    });
  };
}
