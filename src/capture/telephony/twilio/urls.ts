import type { Config } from '../../../config.ts';

/**
 * The callback URLs the service names in its TwiML and REST calls. All live under
 * PUBLIC_BASE_URL/telephony/twilio (the public listener's telephony routes) and carry the call id,
 * so a callback that races the call's own bookkeeping still finds its call. The signature covers
 * the whole URL, so the id cannot be changed in transit.
 */
export const TWILIO_PREFIX = '/telephony/twilio';

export function twilioUrl(config: Pick<Config, 'publicBaseUrl'>, path: string): string {
  return `${config.publicBaseUrl}${TWILIO_PREFIX}${path}`;
}

export const callUrl = (config: Pick<Config, 'publicBaseUrl'>, callId: string, what: string) =>
  twilioUrl(config, `/calls/${callId}/${what}`);
