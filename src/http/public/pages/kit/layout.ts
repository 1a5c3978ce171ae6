import type { FastifyReply } from 'fastify';
import { renderToString } from 'preact-render-to-string';
import { type Capability, can } from '../../../../accounts/roles.ts';
import type { PageUser } from './guard.ts';
import { type ComponentChildren, html, type VNode } from './html.ts';
import { SECURITY_HEADERS } from './security.ts';
import { inTimeZone } from './time-zone.ts';
import { CsrfField } from './ui.ts';

/**
 * The sections of the main navigation; a page names the one it belongs to. A section that needs a
 * capability (accounts/roles.ts) is left out for a role without it — for tidiness only: the page
 * itself refuses such a user with a 403 (kit/guard.ts requireCan).
 */
export const NAV: readonly { key: string; label: string; href: string; capability?: Capability }[] = [
  { key: 'calls', label: 'Calls', href: '/app/calls' },
  { key: 'contacts', label: 'Contacts', href: '/app/contacts' },
  { key: 'trackers', label: 'Trackers', href: '/app/trackers' },
  {
    key: 'integrations',
    label: 'Integrations',
    href: '/app/settings/integrations',
    capability: 'manage_integrations',
  },
  { key: 'team', label: 'Team', href: '/app/settings/team', capability: 'manage_team' },
  { key: 'settings', label: 'Settings', href: '/app/settings/organization', capability: 'manage_settings' },
  { key: 'profile', label: 'Profile', href: '/app/settings/profile' },
];
export type NavKey = 'calls' | 'contacts' | 'trackers' | 'integrations' | 'team' | 'settings' | 'profile';

/** A message at the top of a page: `ok` is announced politely, `error` as an alert. */
export interface Notice {
  kind: 'ok' | 'error';
  text: string;
}

export interface PageOptions {
  /** the page's <h1> and <title> */
  title: string;
  /** the signed-in user; null on the sign-in page and error pages of signed-out visitors */
  user: PageUser | null;
  /** the navigation entry to mark as current */
  nav?: NavKey;
  notice?: Notice | null;
  /** HTTP status of the answer (200 unless told) */
  status?: number;
  body: ComponentChildren;
}

/**
 * The test-mode switch (spec/api-v1-additions.md "Test mode"): a form post to the other
 * environment (session/environment.ts), back to the list page of the current section.
 */
function EnvironmentSwitch({ user, nav }: { user: PageUser; nav?: NavKey }): VNode {
  const test = user.session.environment === 'test';
  const next = NAV.find((n) => n.key === nav)?.href ?? '/app/calls';
  return html`<form method="post" action="/app/environment" class="environment-switch">
    <${CsrfField} user=${user} />
    <input type="hidden" name="environment" value=${test ? 'live' : 'test'} />
    <input type="hidden" name="next" value=${next} />
    <span class="environment-now">${test ? 'Test mode' : 'Live data'}</span>
    <button type="submit">
      ${test ? 'Switch to live data' : 'Switch to test mode'}
    </button>
  </form>`;
}

function Layout(p: PageOptions): VNode {
  const { user } = p;
  return html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>${p.title} · Call Capture</title>
      <link rel="icon" href="/app/assets/favicon.svg" type="image/svg+xml" />
      <link rel="stylesheet" href="/app/assets/app.css" />
      <script type="module" src="/app/assets/app.js"></script>
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href="/app/calls">Call Capture</a>
        ${
          user &&
          html`<nav aria-label="Main">
            <ul>
              ${NAV.filter((n) => !n.capability || can(user, n.capability)).map(
                (n) =>
                  html`<li><a href=${n.href} aria-current=${n.key === p.nav ? 'page' : undefined}>${n.label}</a></li>`,
              )}
            </ul>
          </nav>
          <${EnvironmentSwitch} user=${user} nav=${p.nav} />
          <form method="post" action="/app/logout" class="signout">
            <${CsrfField} user=${user} />
            <button type="submit">Sign out</button>
          </form>`
        }
      </header>
      ${
        user?.session.environment === 'test' &&
        html`<p class="test-mode-banner" role="note">
          <strong>Test mode: you are seeing test data.</strong> Calls, contacts, API keys and webhook subscriptions
          here are test ones, apart from live data; switch back to live data above.
        </p>`
      }
      <main id="main" tabindex="-1">
        <h1>${p.title}</h1>
        ${
          p.notice &&
          html`<p class=${`notice ${p.notice.kind}`} role=${p.notice.kind === 'error' ? 'alert' : 'status'}>
            ${p.notice.text}
          </p>`
        }
        ${p.body}
      </main>
      ${
        user &&
        html`<footer>
          Signed in as ${user.name ? `${user.name}, ` : ''}${user.email} (${user.role}) · ${user.organizationName}
        </footer>`
      }
    </body>
  </html>`;
}

/**
 * Renders a whole page into the reply: the layout around `body`, the security headers, no caching
 * (pages carry CSRF tokens and sometimes a secret shown once).
 */
export function renderPage(reply: FastifyReply, opts: PageOptions): FastifyReply {
  return reply
    .code(opts.status ?? 200)
    .headers(SECURITY_HEADERS)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(`<!doctype html>${inTimeZone(opts.user?.timeZone ?? 'UTC', () => renderToString(Layout(opts)))}`);
}
