import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { assetRoutes } from './assets.ts';
import { callActions } from './calls/actions.ts';
import { callBoardPage } from './calls/board.ts';
import { bulkStatusAction } from './calls/bulk.ts';
import { callPage } from './calls/detail.ts';
import { callListPage } from './calls/list.ts';
import { newCallPages } from './calls/new.ts';
import { contactPage } from './contacts/detail.ts';
import { contactListPage } from './contacts/list.ts';
import { newContactPages } from './contacts/new.ts';
import { pageErrorHandler, pageNotFound } from './kit/errors.ts';
import { installFormParser } from './kit/form.ts';
import { csrfCheck, pageGuard, seeOther } from './kit/guard.ts';
import { HOME } from './kit/next-path.ts';
import { inTimeZone } from './kit/time-zone.ts';
import { environmentSwitch } from './session/environment.ts';
import { invitationPages } from './session/invitation.ts';
import { loginPages } from './session/login.ts';
import { logoutPage } from './session/logout.ts';
import { passwordResetPages } from './session/password-reset.ts';
import { integrationsPages } from './settings/integrations.ts';
import { organizationPages } from './settings/organization.ts';
import { profilePages } from './settings/profile.ts';
import { teamPages } from './settings/team.ts';
import { webhookPages } from './settings/webhooks.ts';
import { trackerPage } from './trackers/detail.ts';
import { trackerListPage } from './trackers/list.ts';

/**
 * The web app's pages (prefix /app, beside the JSON console API under /app/api): server-rendered
 * HTML (preact + htm, kit/layout.ts renderPage), classic form posts (kit/form.ts), progressive-enhancement
 * modules under /app/assets. Every page and asset carries the security headers (kit/security.ts).
 *
 * Signed-in pages register inside the `authed` scope below: the page guard sends a visitor without
 * a session to the sign-in page and back (kit/guard.ts), and every form post must carry the session's
 * CSRF token in the hidden field _csrf (kit/ui.ts CsrfField). One folder per URL area (calls/ for
 * /app/calls…), one plugin per page; a new page adds its plugin to that scope.
 *
 * Conventions for a page author (the kit, kit/): check roles with requireCan(req, capability)
 * (guard.ts; the capabilities and who has them are accounts/roles.ts); read
 * form fields with field()/fields() (form.ts: a 400 for a repeated or non-text value; a NUL
 * character in any field or query parameter never reaches a handler, src/http/nul-guard.ts) and check them with the service's zod schema in the page's words (checkForm); a
 * typed date with parseDay (dates.ts); answer a successful post with seeOther() to the page that
 * shows the result, with a fixed ?done=<key> mapped to a message by doneNotice (notices.ts; never
 * echo request text); throw AppError for refusals (errors.ts renders the page with its status and
 * message), or re-render the form with formError(err). A secret shown once is never put in a URL or a cookie: a signing secret is rendered in
 * the answer to the POST itself, an API key after the redirect through a one-time, session-bound,
 * encrypted reveal (accounts/secret-reveals.ts); pages are Cache-Control: no-store.
 */
export function pagesRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    installFormParser(app);
    app.setErrorHandler(pageErrorHandler());
    app.setNotFoundHandler(pageNotFound(deps));
    await app.register(assetRoutes());
    await app.register(loginPages(deps));
    await app.register(passwordResetPages(deps));
    await app.register(invitationPages(deps));
    app.get('/', async (_req, reply) => seeOther(reply, HOME));
    await app.register(async (authed) => {
      authed.addHook('onRequest', pageGuard(deps));
      authed.addHook('preHandler', csrfCheck);
      // Every handler runs in the user's time zone: formatTime/Time read it (kit/time-zone.ts).
      authed.addHook('preHandler', (req, _reply, done) => inTimeZone(req.pageUser?.timeZone ?? 'UTC', done));
      await authed.register(logoutPage(deps));
      await authed.register(environmentSwitch(deps));
      // URL -> file: /app/calls… in calls/, /app/contacts… in contacts/, /app/trackers… in trackers/,
      // /app/settings/… in settings/ (list.ts the collection, detail.ts one item, new.ts a creation form).
      await authed.register(callListPage(deps));
      await authed.register(callBoardPage(deps));
      await authed.register(bulkStatusAction(deps));
      await authed.register(newCallPages(deps));
      await authed.register(callPage(deps));
      await authed.register(callActions(deps));
      await authed.register(contactListPage(deps));
      await authed.register(newContactPages(deps));
      await authed.register(contactPage(deps));
      await authed.register(trackerListPage(deps));
      await authed.register(trackerPage(deps));
      await authed.register(integrationsPages(deps));
      await authed.register(webhookPages(deps));
      await authed.register(organizationPages(deps));
      await authed.register(teamPages(deps));
      await authed.register(profilePages(deps));
    });
  };
}
