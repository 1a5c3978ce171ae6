import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { parseInput } from '../../errors.ts';
import { setPublicApiEnabled } from '../../maintenance.ts';

const maintenanceBody = z.strictObject({ public_api_enabled: z.boolean() });

/** PUT /maintenance: switches the public API off (503 MAINTENANCE) and on again (src/maintenance.ts). */
export function maintenanceRoutes(deps: Deps): FastifyPluginAsync {
  const { db, clock } = deps;
  return async (app) => {
    app.put('/maintenance', async (req) => {
      const b = parseInput(maintenanceBody, req.body);
      await setPublicApiEnabled(db, b.public_api_enabled, clock.now());
      return { public_api_enabled: b.public_api_enabled };
    });
  };
}
