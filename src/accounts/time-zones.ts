import type { Queryable } from '../db/types.ts';
import type { TenantScope } from '../domain/tenant.ts';
import { isTimeZone } from '../domain/time-zones.ts';
import { badRequest, notFound } from '../errors.ts';

/** A time zone typed into a form or an API body: an IANA name (domain/time-zones.ts), else a 400. */
export function checkTimeZone(zone: string, field = 'time_zone'): string {
  const z = zone.trim();
  if (!isTimeZone(z)) {
    throw badRequest(`Choose a time zone from the list, such as "Europe/Paris" or "UTC".`, field);
  }
  return z;
}

/** The organization's time zone (how its pages spell times; UTC unless changed). */
export async function organizationTimeZone(q: Queryable, scope: TenantScope): Promise<string> {
  const { rows } = await q.query<{ time_zone: string }>('SELECT time_zone FROM organizations WHERE id = $1', [
    scope.organizationId,
  ]);
  if (!rows[0]) throw notFound('Your organization no longer exists.');
  return rows[0].time_zone;
}

export async function setOrganizationTimeZone(q: Queryable, scope: TenantScope, zone: string): Promise<void> {
  await q.query('UPDATE organizations SET time_zone = $2 WHERE id = $1', [
    scope.organizationId,
    checkTimeZone(zone),
  ]);
}
