import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { appApiAuth, requireCapability } from './auth.ts';
import { deliveryRoutes } from './deliveries.ts';
import { listenRoutes } from './listen.ts';
import { rotationRoutes } from './rotations.ts';
import { loginRoute, sessionRoutes } from './session.ts';
import { subscriptionRoutes } from './webhook-subscriptions.ts';

/**
 * The console's JSON API (the console is the web app at /app: its pages are pages/, its JSON API
 * this folder, under /app/api): plain JSON objects at the top
 * level (lists as {items: [...]}, paginated lists add next_cursor), errors in the public shape.
 * Everything but POST /api/login needs a session cookie; state-changing methods also need the
 * x-csrf-token header. No response is cached (they carry CSRF tokens and one-time secrets).
 */
export function appApiRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    await app.register(
      async (api) => {
        api.addHook('onSend', async (_req, reply, payload) => {
          reply.header('cache-control', 'no-store');
          return payload;
        });
        await api.register(loginRoute(deps));
        await api.register(async (authed) => {
          authed.addHook('onRequest', appApiAuth(deps));
          await authed.register(sessionRoutes(deps));
          // Integrations: owners and admins (accounts/roles.ts); an agent gets 403 FORBIDDEN.
          await authed.register(async (integrations) => {
            integrations.addHook('onRequest', requireCapability('manage_integrations'));
            await integrations.register(apiKeyRoutes(deps));
            await integrations.register(subscriptionRoutes(deps));
            await integrations.register(rotationRoutes(deps));
            await integrations.register(deliveryRoutes(deps));
            await integrations.register(listenRoutes(deps));
          });
        });
      },
      { prefix: '/api' },
    );
  };
}
