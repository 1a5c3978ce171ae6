import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { assetRoutes } from './assets.ts';
import { callPages } from './calls.ts';
import { contactPages } from './contacts.ts';
import { pageErrorHandler, pageNotFound } from './errors.ts';
import { installFormParser } from './form.ts';
import { csrfCheck, pageGuard, seeOther } from './guard.ts';
import { loginPages, logoutPage } from './login.ts';
import { HOME } from './next-path.ts';
import { integrationsPages } from './settings/integrations.ts';
import { organizationPages } from './settings/organization.ts';
import { webhookPages } from './settings/webhooks.ts';
import { trackerPages } from './trackers.ts';

/**
 * The web app's pages (prefix /app, beside the JSON console API under /app/api): server-rendered
 * HTML (preact + htm, layout.ts renderPage), classic form posts (form.ts), progressive-enhancement
 * modules under /app/assets. Every page and asset carries the security headers (security.ts).
 *
 * Signed-in pages register inside the `authed` scope below: the page guard sends a visitor without
 * a session to the sign-in page and back (guard.ts), and every form post must carry the session's
 * CSRF token in the hidden field _csrf (ui.ts CsrfField). One file per URL area (calls.ts for
 * /app/calls…); a new area adds its plugin to that scope.
 *
 * Conventions for a page author: check roles with requireOwner (guard.ts); read form fields with
 * field()/fields() (form.ts: a 400 for a repeated or non-text value; a NUL character in any field or
 * query parameter never reaches a handler, src/http/nul-guard.ts); answer a successful post with
 * seeOther() to the page that shows the result, with a fixed ?done=<key> mapped to a message (never
 * echo request text); throw AppError for refusals (errors.ts renders the page with its status and
 * message). A secret shown once (an API key, a signing secret) is rendered in the answer to the
 * POST itself — never put in a URL, a redirect or a cookie; pages are Cache-Control: no-store.
 */
export function pagesRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    installFormParser(app);
    app.setErrorHandler(pageErrorHandler());
    app.setNotFoundHandler(pageNotFound(deps));
    await app.register(assetRoutes());
    await app.register(loginPages(deps));
    app.get('/', async (_req, reply) => seeOther(reply, HOME));
    await app.register(async (authed) => {
      authed.addHook('onRequest', pageGuard(deps));
      authed.addHook('preHandler', csrfCheck);
      await authed.register(logoutPage(deps));
      await authed.register(callPages(deps));
      await authed.register(integrationsPages(deps));
      await authed.register(webhookPages(deps));
      await authed.register(contactPages(deps));
      await authed.register(trackerPages(deps));
      await authed.register(organizationPages(deps));
    });
  };
}
