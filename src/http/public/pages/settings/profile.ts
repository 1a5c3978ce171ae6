import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { changePassword, getProfile, type Profile, updateProfile } from '../../../../accounts/profile.ts';
import { ROLE_WORDS } from '../../../../accounts/roles.ts';
import type { Deps } from '../../../../deps.ts';
import { TIME_ZONES } from '../../../../domain/time-zones.ts';
import { ErrorText, type FieldError, fieldAttrs, fieldError } from '../kit/field-errors.ts';
import { field, formOf } from '../kit/form.ts';
import { type PageUser, requireUser, scopeOf, seeOther } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { route } from '../kit/paths.ts';
import { CsrfField } from '../kit/ui.ts';

/**
 * /app/settings/profile (every signed-in user, about themselves only): name, the phone click-to-call
 * rings first (libphonenumber-js, the organization's country for national spellings), the time zone
 * the pages use for them (empty = the organization's), and a password change (the current one
 * first; the user's other sessions end). accounts/profile.ts holds the rules.
 */
export const PROFILE_PAGE_PATH = '/app/settings/profile';

const DONE: Record<string, string> = {
  saved: 'Profile saved.',
  password_changed: 'Password changed. Your other sessions were signed out.',
  welcome: 'Welcome! You are signed in. Add your phone below so that click-to-call can ring you.',
};

interface ProfileValues {
  name: string;
  phone: string;
  time_zone: string;
}

/** The IANA zone select: UTC first, then every zone; `empty` adds the "organization's zone" choice. */
export function TimeZoneSelect(p: {
  id: string;
  value: string;
  empty?: string;
  attrs?: Record<string, unknown>;
}): VNode {
  return html`<select id=${p.id} name="time_zone" ...${p.attrs ?? {}}>
    ${p.empty !== undefined && html`<option value="" selected=${p.value === ''}>${p.empty}</option>`}
    ${TIME_ZONES.map((z) => html`<option value=${z} selected=${p.value === z}>${z.replace(/_/g, ' ')}</option>`)}
  </select>`;
}

function DetailsForm({
  user,
  p,
  v,
  err,
}: {
  user: PageUser;
  p: Profile;
  v: ProfileValues;
  err: FieldError | null;
}): VNode {
  return html`<form method="post" action=${PROFILE_PAGE_PATH} class="stack" id="profile" novalidate>
    <${CsrfField} user=${user} />
    <p>You sign in as <strong>${p.email}</strong>; your role is ${ROLE_WORDS[p.role].label.toLowerCase()}${' '}
      (${ROLE_WORDS[p.role].text}).</p>
    <div>
      <label for="name">Name</label>
      <input type="text" id="name" name="name" autocomplete="name" required maxlength="100" value=${v.name}
        ...${fieldAttrs('name', err)} />
      <${ErrorText} name="name" err=${err} />
    </div>
    <div>
      <label for="phone">Your phone</label>
      <input type="tel" id="phone" name="phone" autocomplete="tel" maxlength="40" value=${v.phone}
        ...${fieldAttrs('phone', err, 'phone-hint')} />
      <p class="muted" id="phone-hint">Click-to-call rings this phone first, then puts you through to the customer.
        With the country code (+1 415 555 2671)${p.country ? `, or as dialled in ${p.country}` : ''}. Leave empty for none.</p>
      <${ErrorText} name="phone" err=${err} />
    </div>
    <div>
      <label for="time_zone">Time zone</label>
      <${TimeZoneSelect} id="time_zone" value=${v.time_zone} empty=${`The organization's (${p.organization_time_zone.replace(/_/g, ' ')})`}
        attrs=${fieldAttrs('time_zone', err, 'time-zone-hint')} />
      <p class="muted" id="time-zone-hint">Times on the pages are shown in this zone; hover one for the time in UTC.</p>
      <${ErrorText} name="time_zone" err=${err} />
    </div>
    <div><button type="submit">Save profile</button></div>
  </form>`;
}

function PasswordForm({ user, err }: { user: PageUser; err: FieldError | null }): VNode {
  return html`<form method="post" action=${`${PROFILE_PAGE_PATH}/password`} class="stack" id="password" novalidate>
    <${CsrfField} user=${user} />
    <div>
      <label for="current_password">Current password</label>
      <input type="password" id="current_password" name="current_password" autocomplete="current-password" required
        ...${fieldAttrs('current_password', err)} />
      <${ErrorText} name="current_password" err=${err} />
    </div>
    <div>
      <label for="new_password">New password</label>
      <input type="password" id="new_password" name="new_password" autocomplete="new-password" required minlength="8"
        ...${fieldAttrs('new_password', err, 'new-password-hint')} />
      <p class="muted" id="new-password-hint">8 to 256 characters. Your other sessions are signed out.</p>
      <${ErrorText} name="new_password" err=${err} />
    </div>
    <div>
      <label for="confirm_password">Type it again</label>
      <input type="password" id="confirm_password" name="confirm_password" autocomplete="new-password" required
        ...${fieldAttrs('confirm_password', err)} />
      <${ErrorText} name="confirm_password" err=${err} />
    </div>
    <div><button type="submit">Change password</button></div>
  </form>`;
}

async function render(
  deps: Deps,
  reply: FastifyReply,
  user: PageUser,
  o: {
    notice?: Notice | null;
    status?: number;
    v?: ProfileValues;
    err?: FieldError | null;
    pwErr?: FieldError | null;
  } = {},
): Promise<FastifyReply> {
  const p = await getProfile(deps.db, scopeOf(user), user.session.userId);
  const v = o.v ?? { name: p.name ?? '', phone: p.phone_e164 ?? '', time_zone: p.time_zone ?? '' };
  return renderPage(reply, {
    title: 'Your profile',
    user,
    nav: 'profile',
    notice: o.notice ?? null,
    status: o.status,
    body: html`
      <section aria-labelledby="details-title">
        <h2 id="details-title">Your details</h2>
        <${DetailsForm} user=${user} p=${p} v=${v} err=${o.err ?? null} />
      </section>
      <section aria-labelledby="password-title">
        <h2 id="password-title">Password</h2>
        <${PasswordForm} user=${user} err=${o.pwErr ?? null} />
      </section>`,
  });
}

export function profilePages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get(route(PROFILE_PAGE_PATH), async (req, reply) =>
      render(deps, reply, requireUser(req), { notice: doneNotice(req, DONE) }),
    );

    app.post(route(PROFILE_PAGE_PATH), async (req, reply) => {
      const user = requireUser(req);
      const form = formOf(req.body);
      const v: ProfileValues = {
        name: (field(form, 'name') ?? '').trim(),
        phone: (field(form, 'phone') ?? '').trim(),
        time_zone: field(form, 'time_zone') ?? '',
      };
      try {
        await updateProfile(deps.db, scopeOf(user), user.session.userId, {
          name: v.name,
          phone: v.phone,
          timeZone: v.time_zone,
        });
      } catch (err) {
        const e = fieldError(err);
        return render(deps, reply, user, { status: e.status, notice: e.notice, err: e.err, v });
      }
      return seeOther(reply, `${PROFILE_PAGE_PATH}?done=saved`);
    });

    app.post(route(`${PROFILE_PAGE_PATH}/password`), async (req, reply) => {
      const user = requireUser(req);
      const form = formOf(req.body);
      const next = field(form, 'new_password') ?? '';
      const refuse = (err: FieldError, status = 400) =>
        render(deps, reply, user, { status, notice: { kind: 'error', text: err.text }, pwErr: err });
      if (next !== (field(form, 'confirm_password') ?? '')) {
        return refuse({
          field: 'confirm_password',
          text: 'The two new passwords differ. Type the same password twice.',
        });
      }
      try {
        await changePassword(deps.db, {
          userId: user.session.userId,
          sessionId: user.session.sessionId,
          ip: req.ip,
          current: field(form, 'current_password') ?? '',
          next,
          now: deps.clock.now(),
        });
      } catch (err) {
        const e = fieldError(err);
        if (e.status === 429) {
          return refuse({ field: 'current_password', text: e.notice.text }, 429);
        }
        if (e.err?.field === 'new_password')
          return refuse({ field: 'new_password', text: 'Choose a new password of 8 to 256 characters.' });
        return refuse(e.err ?? { field: 'current_password', text: e.notice.text }, e.status);
      }
      return seeOther(reply, `${PROFILE_PAGE_PATH}?done=password_changed`);
    });
  };
}
