import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { getOrganization, updateOrganization } from '../../../../accounts/organizations.ts';
import { can } from '../../../../accounts/roles.ts';
import {
  checkTimeZone,
  organizationTimeZone,
  setOrganizationTimeZone,
} from '../../../../accounts/time-zones.ts';
import { KNOWN_LANGUAGES } from '../../../../capture/language.ts';
import type { Deps } from '../../../../deps.ts';
import { badRequest, forbidden, notFound } from '../../../../errors.ts';
import { field, formOf } from '../kit/form.ts';
import { formError } from '../kit/form-check.ts';
import { type PageUser, requireCan, scopeOf, seeOther } from '../kit/guard.ts';
import { html } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { CsrfField } from '../kit/ui.ts';
import { TimeZoneSelect } from './profile.ts';

/**
 * /app/settings/organization: how long calls are kept (retention days; empty = until deleted) and the
 * account language (the fallback language of follow-up drafts), and the recording-consent
 * announcement played to inbound callers (docs/capture.md), and whether payment and identity details are
 * redacted (on by default; turning it off is the owner's explicit choice, "Keep every word as said"),
 * and the time zone the pages spell times in (a user may choose their own on their profile).
 * Owners and admins (accounts/roles.ts `manage_settings`); redaction only owners (`change_redaction`).
 * An agent is refused the page (403).
 */
export const ORGANIZATION_PAGE_PATH = '/app/settings/organization';
export const MAX_RETENTION_DAYS = 36_500;

const LANGUAGE_NAMES: Record<string, string> = { en: 'English', de: 'German', fr: 'French', es: 'Spanish' };
const DONE: Record<string, string> = { saved: 'Settings saved.' };

interface OrgForm {
  retention_days: string;
  language: string;
  consent_enabled: boolean;
  consent_text: string;
  consent_language: string;
  /** 'on' | 'off'; '' = the form did not say (a post without the field leaves the setting as it is) */
  redaction: string;
  /** IANA zone; '' = the form did not say */
  time_zone: string;
}

async function render(
  deps: Deps,
  reply: FastifyReply,
  user: PageUser,
  o: { notice?: Notice | null; status?: number; v?: OrgForm } = {},
): Promise<FastifyReply> {
  const [org, zone] = await Promise.all([
    getOrganization(deps.db, user.session.organizationId),
    organizationTimeZone(deps.db, scopeOf(user)),
  ]);
  if (!org) throw notFound('Your organization no longer exists.');
  const v = o.v ?? {
    retention_days: org.retention_days === null ? '' : String(org.retention_days),
    language: org.language,
    consent_enabled: org.recording_consent.enabled,
    consent_text: org.recording_consent.text ?? '',
    consent_language: org.recording_consent.language ?? '',
    redaction: org.redaction_enabled ? 'on' : 'off',
    time_zone: zone,
  };
  const redactionOn = v.redaction === '' ? org.redaction_enabled : v.redaction === 'on';
  const owner = can(user, 'change_redaction');
  return renderPage(reply, {
    title: 'Organization settings',
    user,
    nav: 'settings',
    notice: o.notice ?? null,
    status: o.status,
    body: html`<form method="post" action=${ORGANIZATION_PAGE_PATH} class="stack" id="organization-settings">
      <${CsrfField} user=${user} />
      <fieldset>
        <legend>${org.name}</legend>
        <div>
          <label for="org-time-zone">Time zone</label>
          <${TimeZoneSelect} id="org-time-zone" value=${v.time_zone || zone} attrs=${{ 'aria-describedby': 'org-time-zone-hint' }} />
          <p class="muted" id="org-time-zone-hint">Times on the pages are shown in this zone (hover one for UTC); each
            member may choose their own on their profile.</p>
        </div>
        <div>
          <label for="org-retention">Keep calls for (days)</label>
          <input type="number" id="org-retention" name="retention_days" min="1" max=${MAX_RETENTION_DAYS} step="1"
            value=${v.retention_days} aria-describedby="org-retention-hint" />
          <p class="muted" id="org-retention-hint">After this many days a call is scheduled for deletion (<code>call.deletion_scheduled</code>, reason retention_expired) and its recording is deleted. Leave empty to keep
            calls until someone deletes them.</p>
        </div>
        <div>
          <label for="org-language">Account language</label>
          <select id="org-language" name="language" aria-describedby="org-language-hint">
            ${KNOWN_LANGUAGES.map((l) => html`<option value=${l} selected=${v.language === l}>${LANGUAGE_NAMES[l] ?? l}</option>`)}
          </select>
          <p class="muted" id="org-language-hint">Follow-up e-mail drafts are written in the language of the call; this one is
            used when it cannot be detected.</p>
        </div>
        <fieldset>
          <legend>Recording-consent announcement</legend>
          <div>
            <label class="check"><input type="checkbox" id="org-consent" name="consent_enabled" value="1"
              checked=${v.consent_enabled} aria-describedby="org-consent-hint" />
              Play an announcement before an inbound call is recorded</label>
            <p class="muted" id="org-consent-hint">Callers hear it before they are put through; a caller who presses any key
              while it plays is connected without a recording (the call's recording answers 409 in the API).</p>
          </div>
          <div>
            <label for="org-consent-text">What the announcement says</label>
            <textarea id="org-consent-text" name="consent_text" rows="3" maxlength="1000"
              aria-describedby="org-consent-text-hint">${v.consent_text}</textarea>
            <p class="muted" id="org-consent-text-hint">Leave empty for the standard sentence in the announcement's language.</p>
          </div>
          <div>
            <label for="org-consent-language">Announcement language</label>
            <input type="text" id="org-consent-language" name="consent_language" value=${v.consent_language}
              placeholder="en-US" aria-describedby="org-consent-language-hint" />
            <p class="muted" id="org-consent-language-hint">A language tag such as en-US or de-DE; empty = the account language.</p>
          </div>
        </fieldset>
        <fieldset id="org-redaction" aria-describedby="org-redaction-hint" disabled=${!owner}>
          <legend>Redaction of payment and identity details</legend>
          <p class="muted" id="org-redaction-hint">Callers read out card numbers, security codes, social security and other
            national id numbers, bank details, dates of birth and passport numbers. With redaction on, the service takes
            them out of the transcript before it is stored — they show as <code>[card number]</code>, <code>[security code]</code>${' '}
            and so on in the transcript, the analysis, follow-up drafts, tracker excerpts, webhooks and the API — and
            silences them in the recording when the speech-to-text provider gives word times. Redaction works from
            rules and can miss what is said in an unusual way (docs: capture, "Redaction").</p>
          <div>
            <label class="check"><input type="radio" id="org-redaction-on" name="redaction" value="on"
              checked=${redactionOn} /> Redact (recommended)</label>
          </div>
          <div>
            <label class="check"><input type="radio" id="org-redaction-off" name="redaction" value="off"
              checked=${!redactionOn} aria-describedby="org-redaction-off-hint" /> Keep every word as said</label>
            <p class="muted" id="org-redaction-off-hint">New calls are then stored verbatim: a card number or security
              code said on a call is in its transcript, recording, webhooks and exports, which card rules (PCI DSS) forbid
              for security codes. Calls already stored stay redacted.</p>
          </div>
          ${!redactionOn && html`<p class="notice error" role="status" id="org-redaction-off-notice"><strong>Redaction is off:</strong> new calls keep card numbers, security codes and ids as said.</p>`}
          ${!owner && html`<p class="muted">Only an owner can turn redaction on or off.</p>`}
        </fieldset>
        <div><button type="submit">Save settings</button></div>
      </fieldset>
    </form>`,
  });
}

export function organizationPages(deps: Deps): FastifyPluginAsync {
  const path = ORGANIZATION_PAGE_PATH.replace(/^\/app/, '');
  return async (app) => {
    app.get(path, async (req, reply) =>
      render(deps, reply, requireCan(req, 'manage_settings'), { notice: doneNotice(req, DONE) }),
    );

    app.post(path, async (req, reply) => {
      const user = requireCan(req, 'manage_settings');
      const form = formOf(req.body);
      const v: OrgForm = {
        retention_days: (field(form, 'retention_days') ?? '').trim(),
        language: field(form, 'language') ?? '',
        consent_enabled: field(form, 'consent_enabled') === '1',
        consent_text: (field(form, 'consent_text') ?? '').trim(),
        consent_language: (field(form, 'consent_language') ?? '').trim(),
        redaction: field(form, 'redaction') ?? '',
        time_zone: field(form, 'time_zone') ?? '',
      };
      try {
        if (v.redaction !== '' && v.redaction !== 'on' && v.redaction !== 'off') {
          throw badRequest('Choose whether to redact: "on" or "off".', 'redaction');
        }
        let retention: number | null = null;
        if (v.retention_days !== '') {
          retention = /^\d{1,6}$/.test(v.retention_days) ? Number(v.retention_days) : Number.NaN;
          if (!(retention >= 1 && retention <= MAX_RETENTION_DAYS)) {
            throw badRequest(
              `"Keep calls for" must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or empty.`,
              'retention_days',
            );
          }
        }
        const org = await getOrganization(deps.db, user.session.organizationId);
        const redactionChanges = v.redaction !== '' && (v.redaction === 'on') !== org?.redaction_enabled;
        if (redactionChanges && !can(user, 'change_redaction')) {
          throw forbidden('Only an owner can turn redaction on or off.');
        }
        if (v.time_zone !== '') checkTimeZone(v.time_zone);
        await updateOrganization(deps.db, user.session.organizationId, {
          retention_days: retention,
          language: v.language,
          recording_consent: {
            enabled: v.consent_enabled,
            text: v.consent_text === '' ? null : v.consent_text,
            language: v.consent_language === '' ? null : v.consent_language,
          },
          ...(v.redaction === '' ? {} : { redaction_enabled: v.redaction !== 'off' }),
        });
        if (v.time_zone !== '') await setOrganizationTimeZone(deps.db, scopeOf(user), v.time_zone);
      } catch (err) {
        return render(deps, reply, user, { v, ...formError(err) });
      }
      return seeOther(reply, `${ORGANIZATION_PAGE_PATH}?done=saved`);
    });
  };
}
