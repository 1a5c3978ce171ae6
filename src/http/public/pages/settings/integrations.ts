import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import {
  API_KEY_NAME_MAX_LENGTH,
  type ApiKeySummary,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../../../accounts/api-keys.ts';
import { stashSecret, takeSecret } from '../../../../accounts/secret-reveals.ts';
import type { Deps } from '../../../../deps.ts';
import { INTEGRATIONS_PAGE_PATH, subscriptionPagePath } from '../../../../domain/app-urls.ts';
import type { Environment } from '../../../../domain/tenant.ts';
import { badRequest, notFound } from '../../../../errors.ts';
import { isUuid } from '../../../../ids.ts';
import { SELECTABLE_EVENT_TYPES } from '../../../../webhooks/outbox/event-types.ts';
import {
  createSubscription,
  listSubscriptions,
  type SubscriptionView,
} from '../../../../webhooks/subscriptions/subscriptions.ts';
import { ErrorText, type FieldError, fieldAttrs, fieldError } from '../kit/field-errors.ts';
import { field, fields, formOf } from '../kit/form.ts';
import { formError } from '../kit/form-check.ts';
import { type PageUser, requireCan, requireUser, scopeOf, seeOther } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { route } from '../kit/paths.ts';
import { CopyButton, CsrfField, Time } from '../kit/ui.ts';
import { StateLine } from './state-line.ts';
import { stashSubscriptionSecret } from './webhooks.ts';
import {
  EVENT_WORDS,
  groupEventTypes,
  MODE_WORDS,
  ORDINARY_SCOPES,
  RECORDINGS_CONSENT,
  RESERVED_SCOPES,
  SCOPE_WORDS,
} from './words.ts';

/**
 * /app/settings/integrations: API keys (create with scopes, read.recordings as its own consent; the
 * key shown once; list; revoke after a confirmation page) and webhook subscriptions (list; create,
 * then the subscription's page shows the secret once and the handshake's outcome). Same services as /app/api.
 *
 * One-time secrets: a new API key is shown after a redirect (post/redirect/get: a reload neither
 * creates a second key nor shows it again): the POST keeps it encrypted for the session's next page
 * (accounts/secret-reveals.ts) and answers 303 to `?reveal=<id>`, an id that is not the key; the
 * GET takes it out and shows it once. The signing secret of a new subscription goes the same way, to
 * the subscription's page (webhooks.ts stashSubscriptionSecret). Neither is ever put in a URL.
 *
 * Owners and admins only (accounts/roles.ts `manage_integrations`): an agent gets the 403 page.
 */

/** Notices a redirect back to this page may ask for (?done=…): fixed texts, never text from the URL. */
const DONE: Record<string, string> = {
  key_revoked: 'The API key was revoked: requests with it answer 401 from now on.',
  subscription_deleted: 'The webhook subscription was deleted; its waiting deliveries were skipped.',
};

function KeyForm({
  user,
  values,
  err,
}: {
  user: PageUser;
  values?: KeyFormValues;
  err?: FieldError | null;
}): VNode {
  const v = values ?? {
    name: '',
    scopes: ['read.calls'],
    recordings: false,
    environment: user.session.environment,
  };
  return html`<form method="post" action=${`${INTEGRATIONS_PAGE_PATH}/api-keys`} class="stack" id="create-key" novalidate>
    <${CsrfField} user=${user} />
    <div>
      <label for="key-name">Name</label>
      <input type="text" id="key-name" name="name" maxlength=${API_KEY_NAME_MAX_LENGTH} value=${v.name} required
        ...${fieldAttrs('name', err, 'key-name-hint')} />
      <p class="muted" id="key-name-hint">So you can tell your keys apart, e.g. "CRM sync".</p>
      <${ErrorText} name="name" err=${err} />
    </div>
    <fieldset>
      <legend>Data the key works on</legend>
      <label class="check">
        <input type="radio" name="environment" value="live" checked=${v.environment === 'live'} />
        Live data (<code>cc_live_…</code>)
      </label>
      <label class="check">
        <input type="radio" name="environment" value="test" checked=${v.environment === 'test'} />
        Test data only (<code>cc_test_…</code>): rehearse an integration without touching live data
      </label>
    </fieldset>
    <fieldset ...${fieldAttrs('scopes', err)}>
      <legend>What the key may do</legend>
      <${ErrorText} name="scopes" err=${err} />
      ${ORDINARY_SCOPES.map(
        (s) => html`<label class="check">
          <input type="checkbox" name="scopes" value=${s} checked=${v.scopes.includes(s)} />
          <code>${s}</code> — ${SCOPE_WORDS[s]}
        </label>`,
      )}
    </fieldset>
    <fieldset>
      <legend>Recordings (separate consent)</legend>
      <label class="check">
        <input type="checkbox" name="recordings_consent" value="yes" checked=${v.recordings} />
        <code>read.recordings</code> — ${RECORDINGS_CONSENT}
      </label>
      <p class="muted">${SCOPE_WORDS['read.recordings']} Leave it unticked unless the program using this key needs the audio.</p>
    </fieldset>
    <details>
      <summary>Reserved scopes (grant nothing today)</summary>
      ${RESERVED_SCOPES.map(
        (s) => html`<label class="check">
          <input type="checkbox" name="scopes" value=${s} checked=${v.scopes.includes(s)} /> <code>${s}</code>
        </label>`,
      )}
    </details>
    <div><button type="submit">Create API key</button></div>
  </form>`;
}

interface KeyFormValues {
  name: string;
  scopes: string[];
  recordings: boolean;
  environment: Environment;
}

function KeyList({ keys }: { keys: ApiKeySummary[] }): VNode {
  if (keys.length === 0) return html`<p class="muted">No API keys yet.</p>`;
  return html`<table class="keys">
    <caption class="muted">Keys are shown only once, when created; the list shows their first characters.</caption>
    <thead>
      <tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Created</th>
        <th scope="col">Last used</th><th scope="col">Status</th></tr>
    </thead>
    <tbody>
      ${keys.map(
        (k) => html`<tr data-key-id=${k.api_key_id}>
          <td>${k.name ?? html`<span class="muted">(no name)</span>`}</td>
          <td><code>${k.prefix}…</code></td>
          <td>${k.scopes.map((s) => html`<code>${s}</code> `)}</td>
          <td><${Time} at=${k.created_at} /></td>
          <td>${k.last_used_at ? html`<${Time} at=${k.last_used_at} />` : html`<span class="muted">never</span>`}</td>
          <td>
            ${
              k.revoked
                ? html`<span class="badge bad">Revoked</span>${k.revoked_at ? html` <${Time} at=${k.revoked_at} />` : ''}`
                : html`<a href=${`${INTEGRATIONS_PAGE_PATH}/api-keys/${k.api_key_id}/revoke`}
                      aria-label=${`Revoke ${k.name ?? k.prefix}`}>Revoke…</a>`
            }
          </td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

interface SubFormValues {
  url: string;
  eventTypes: string[];
  mode: string;
}

export function SubscriptionForm({ user, values }: { user: PageUser; values?: SubFormValues }): VNode {
  const v = values ?? { url: '', eventTypes: [], mode: 'permissive' };
  return html`<form method="post" action=${`${INTEGRATIONS_PAGE_PATH}/webhooks`} class="stack" id="create-subscription">
    <${CsrfField} user=${user} />
    <div>
      <label for="sub-url">Receiver URL</label>
      <input type="url" id="sub-url" name="url" required value=${v.url} placeholder="https://crm.example.com/hooks/calls"
        aria-describedby="sub-url-hint" />
      <p class="muted" id="sub-url-hint">The service POSTs signed JSON events here. It first sends a verification request, at once.</p>
    </div>
    <fieldset>
      <legend>Events</legend>
      <p class="muted">Tick none to receive every event type (including types added later).</p>
      ${groupEventTypes(SELECTABLE_EVENT_TYPES).map(
        (g) => html`<fieldset class="event-group">
          <legend>${g.group}</legend>
          ${g.types.map(
            (t) => html`<label class="check">
              <input type="checkbox" name="event_types" value=${t} checked=${v.eventTypes.includes(t)} />
              <code>${t}</code> <span class="muted">— ${EVENT_WORDS[t] ?? ''}</span>
            </label>`,
          )}
        </fieldset>`,
      )}
    </fieldset>
    <fieldset>
      <legend>Verification mode (cannot be changed later)</legend>
      ${Object.entries(MODE_WORDS).map(
        ([mode, w]) => html`<label class="check">
          <input type="radio" name="verification_mode" value=${mode} checked=${v.mode === mode} />
          ${w.label} — ${w.text}
        </label>`,
      )}
    </fieldset>
    <div><button type="submit">Create subscription</button></div>
  </form>`;
}

function SubscriptionList({ subs }: { subs: SubscriptionView[] }): VNode {
  if (subs.length === 0) return html`<p class="muted">No webhook subscriptions yet.</p>`;
  return html`<table class="subscriptions">
    <thead>
      <tr><th scope="col">Receiver URL</th><th scope="col">Events</th><th scope="col">Mode</th><th scope="col">State</th></tr>
    </thead>
    <tbody>
      ${subs.map(
        (s) => html`<tr data-subscription-id=${s.subscription_id}>
          <td><a href=${subscriptionPagePath(s.subscription_id)}>${s.url}</a></td>
          <td>${s.event_types.length === 0 ? 'All' : s.event_types.map((t) => html`<code>${t}</code> `)}</td>
          <td>${s.verification_mode}</td>
          <td><${StateLine} sub=${s} /></td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The key just created, shown once, with a copy button and how to try it. */
function NewKey({ keyValue, baseUrl }: { keyValue: string; baseUrl: string }): VNode {
  return html`<section class="secret-once" aria-labelledby="new-key-title">
    <h2 id="new-key-title">Your new API key</h2>
    <p><strong>Copy it now: it is shown only this once.</strong> The service keeps only a hash; if you lose it, revoke it and create another.</p>
    <p><code id="new-key" class="secret">${keyValue}</code> <${CopyButton} target="new-key" label="Copy key" /></p>
    <p class="muted">Try it: <code>curl -H "Authorization: Bearer ${'<key>'}" ${baseUrl}/api/v1/me</code></p>
  </section>`;
}

export async function renderIntegrations(
  deps: Deps,
  reply: FastifyReply,
  user: PageUser,
  o: {
    notice?: Notice | null;
    status?: number;
    newKey?: string;
    keyForm?: KeyFormValues;
    keyErr?: FieldError | null;
    subForm?: SubFormValues;
  } = {},
): Promise<FastifyReply> {
  const scope = scopeOf(user);
  const [keys, subs] = await Promise.all([
    listApiKeys(deps.db, scope),
    listSubscriptions(deps.db, scope, deps.clock.now()),
  ]);
  return renderPage(reply, {
    title: 'Integrations',
    user,
    nav: 'integrations',
    notice: o.notice ?? null,
    status: o.status,
    body: html`
      ${o.newKey && html`<${NewKey} keyValue=${o.newKey} baseUrl=${deps.config.publicBaseUrl} />`}
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">API keys</h2>
        <p>Programs read calls through the REST API at <code>${deps.config.publicBaseUrl}/api/v1</code> with a key in the header${' '}
          <code>Authorization: Bearer ${'<key>'}</code>.</p>
        <${KeyList} keys=${keys} />
        <h3>Create a key</h3>
        <${KeyForm} user=${user} values=${o.keyForm} err=${o.keyErr ?? null} />
      </section>
      <section aria-labelledby="subs-title">
        <h2 id="subs-title">Webhook subscriptions</h2>
        <p>The service sends signed events to your receiver. Open a subscription to re-verify it, send a test, rotate
          its secret or read its delivery log.</p>
        <${SubscriptionList} subs=${subs} />
        <h3>Add a subscription</h3>
        <${SubscriptionForm} user=${user} values=${o.subForm} />
      </section>`,
  });
}

function keyFormOf(body: unknown, user: PageUser): KeyFormValues {
  const form = formOf(body);
  const consent = field(form, 'recordings_consent');
  const scopes = fields(form, 'scopes').filter((s) => s !== 'read.recordings');
  const environment = field(form, 'environment') ?? user.session.environment;
  if (environment !== 'live' && environment !== 'test') {
    throw badRequest('Field "environment" must be live or test.', 'environment');
  }
  return { name: field(form, 'name') ?? '', scopes, recordings: consent === 'yes', environment };
}

type IdParams = { Params: { id: string } };

export function integrationsPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    // Integrations are for owners and admins (accounts/roles.ts): an agent gets the 403 page.
    app.addHook('preHandler', async (req) => {
      requireCan(req, 'manage_integrations');
    });

    app.get<{ Querystring: { reveal?: unknown } }>(route(INTEGRATIONS_PAGE_PATH), async (req, reply) => {
      const user = requireUser(req);
      const reveal = req.query.reveal;
      if (typeof reveal !== 'string') {
        return renderIntegrations(deps, reply, user, { notice: doneNotice(req, DONE) });
      }
      const key = await takeSecret(deps.db, deps.keys, {
        sessionId: user.session.sessionId,
        kind: 'api_key',
        id: reveal,
        now: deps.clock.now(),
      });
      return renderIntegrations(deps, reply, user, {
        newKey: key ?? undefined,
        notice: key
          ? { kind: 'ok', text: 'API key created. Copy it now: it is shown only this once.' }
          : {
              kind: 'ok',
              text: 'The new key was shown once and is not shown again. If you did not copy it, revoke it and create another.',
            },
      });
    });

    app.post(route(`${INTEGRATIONS_PAGE_PATH}/api-keys`), async (req, reply) => {
      const user = requireUser(req);
      const v = keyFormOf(req.body, user);
      // read.recordings only through its own consent box, never as an ordinary scope value.
      const scopes = [...v.scopes, ...(v.recordings ? ['read.recordings'] : [])];
      try {
        if (v.name.trim() === '') {
          throw badRequest(
            'Give the key a name, e.g. "CRM sync", so that you can tell your keys apart.',
            'name',
          );
        }
        if (scopes.length === 0) {
          throw badRequest('Choose at least one scope: tick "read.calls" to read calls.', 'scopes');
        }
        // The key and its one-time reveal in one transaction: no key is made that cannot be shown.
        const reveal = await deps.db.transaction(async (tx) => {
          const now = deps.clock.now();
          const created = await createApiKey(tx, {
            organizationId: user.session.organizationId,
            environment: v.environment,
            userId: user.session.userId,
            scopes,
            name: v.name,
            now,
          });
          return stashSecret(tx, deps.keys, {
            sessionId: user.session.sessionId,
            kind: 'api_key',
            secret: created.key,
            now,
          });
        });
        return seeOther(reply, `${INTEGRATIONS_PAGE_PATH}?reveal=${reveal}#new-key-title`);
      } catch (err) {
        const e = fieldError(err);
        return renderIntegrations(deps, reply, user, {
          status: e.status,
          notice: e.notice,
          keyErr: e.err,
          keyForm: v,
        });
      }
    });

    app.get<IdParams>(route(`${INTEGRATIONS_PAGE_PATH}/api-keys/:id/revoke`), async (req, reply) => {
      const user = requireUser(req);
      const keys = await listApiKeys(deps.db, scopeOf(user));
      const key = keys.find((k) => k.api_key_id === req.params.id && !k.revoked);
      if (!key) throw notFound(`No active API key ${req.params.id} in your organization.`);
      return renderPage(reply, {
        title: 'Revoke API key',
        user,
        nav: 'integrations',
        body: html`<section class="danger-zone">
          <h2>Revoke ${key.name ?? html`<code>${key.prefix}…</code>`}?</h2>
          <p>Every request with the key <code>${key.prefix}…</code> (scopes ${key.scopes.join(', ')}) answers${' '}
            <strong>401</strong> from the moment you revoke it. Programs using it stop reading calls until they get a new
            key. This cannot be undone.</p>
          <form method="post" action=${`${INTEGRATIONS_PAGE_PATH}/api-keys/${key.api_key_id}/revoke`} class="actions">
            <${CsrfField} user=${user} />
            <button type="submit" class="danger">Revoke the key</button>
            <a href=${INTEGRATIONS_PAGE_PATH}>Cancel</a>
          </form>
        </section>`,
      });
    });

    app.post<IdParams>(route(`${INTEGRATIONS_PAGE_PATH}/api-keys/:id/revoke`), async (req, reply) => {
      const user = requireUser(req);
      const ok =
        isUuid(req.params.id) &&
        (await revokeApiKey(deps.db, {
          apiKeyId: req.params.id,
          scope: scopeOf(user),
          now: deps.clock.now(),
        }));
      if (!ok) throw notFound(`No API key ${req.params.id} in your organization.`);
      return seeOther(reply, `${INTEGRATIONS_PAGE_PATH}?done=key_revoked`);
    });

    app.post(route(`${INTEGRATIONS_PAGE_PATH}/webhooks`), async (req, reply) => {
      const user = requireUser(req);
      const form = formOf(req.body);
      const values: SubFormValues = {
        url: field(form, 'url') ?? '',
        eventTypes: fields(form, 'event_types'),
        mode: field(form, 'verification_mode') ?? 'permissive',
      };
      try {
        if (values.mode !== 'permissive' && values.mode !== 'strict') {
          throw badRequest('Field "verification_mode" must be permissive or strict.', 'verification_mode');
        }
        // The subscription and its secret's one-time reveal in one transaction (post/redirect/get).
        let to = '';
        await createSubscription(
          deps,
          scopeOf(user),
          { url: values.url.trim(), eventTypes: values.eventTypes, verificationMode: values.mode },
          async (tx, created) => {
            to = await stashSubscriptionSecret(tx, deps, user, {
              subscriptionId: created.subscription_id,
              secret: created.secret,
              kind: 'created',
              handshake: created.verification,
            });
          },
        );
        return seeOther(reply, to);
      } catch (err) {
        const e = formError(err);
        return renderIntegrations(deps, reply, user, { ...e, subForm: values });
      }
    });
  };
}
