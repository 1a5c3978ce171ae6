import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findAccountBySid, type TelephonyAccount } from '../../../capture/telephony/accounts.ts';
import { type FormParams, signatureMatches } from '../../../capture/telephony/twilio/signature.ts';
import type { Deps } from '../../../deps.ts';
import { AppError } from '../../../errors.ts';
import { TELEPHONY_FORBIDDEN_MESSAGE } from '../../error-handler.ts';
import { nulRuleAppliedBy, withoutNul } from '../../nul-guard.ts';

/**
 * Every route under /telephony/twilio is a Twilio callback: a form-encoded POST carrying
 * X-Twilio-Signature. This module parses the form and checks the signature (operator-api.md:
 * HMAC-SHA1 keyed with the auth token of the account the AccountSid parameter names, over
 * PUBLIC_BASE_URL + path + query followed by the sorted parameters). A missing or wrong
 * signature, or an unknown account, answers 403 FORBIDDEN before any handler runs, so nothing
 * changes. A request that cannot be verified at all (not a form, or larger than any Twilio
 * callback) is the same 403. A verified request carries its account and parameters (twilioRequest(req)).
 */
export const TWILIO_FORM_LIMIT = 64 * 1024;

export interface TwilioRequest {
  account: TelephonyAccount;
  params: FormParams;
}

const verified = new WeakMap<FastifyRequest, TwilioRequest>();

/** The verified callback's account and parameters (only inside a route of installTwilioAuth's scope). */
export function twilioRequest(req: FastifyRequest): TwilioRequest {
  const t = verified.get(req);
  if (!t) throw new AppError('FORBIDDEN', 'The request is not a verified Twilio callback.');
  return t;
}

/** One value of a form parameter (the first, if Twilio repeated it); '' when absent. */
export function param(p: FormParams, name: string): string {
  const v = p[name];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

export function parseForm(body: string): FormParams {
  const out: FormParams = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

const FORBIDDEN_MESSAGE = TELEPHONY_FORBIDDEN_MESSAGE;

/** Installs the form parser and the signature check on this (encapsulated) plugin scope. */
export function installTwilioAuth(app: FastifyInstance, deps: Deps): void {
  // The edge's NUL rule (nul-guard.ts) is applied here, after the signature check: the form's
  // parameters lose the character (below), the query is never read (it is only signed).
  nulRuleAppliedBy(app, { body: true, query: true });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: TWILIO_FORM_LIMIT },
    (_req, body, done) => done(null, parseForm(body as string)),
  );
  // Requests that cannot carry a verifiable Twilio signature are refused before their body is read:
  // no signature, not a form (Twilio posts only forms), or a form too large to be one of Twilio's.
  app.addHook('onRequest', async (req) => {
    const signature = req.headers['x-twilio-signature'];
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const length = Number(req.headers['content-length'] ?? 0);
    if (
      typeof signature !== 'string' ||
      signature.trim() === '' ||
      type !== 'application/x-www-form-urlencoded' ||
      !(length <= TWILIO_FORM_LIMIT)
    ) {
      throw new AppError('FORBIDDEN', FORBIDDEN_MESSAGE);
    }
  });
  app.addHook('preHandler', async (req) => {
    const params = (req.body && typeof req.body === 'object' ? req.body : {}) as FormParams;
    const header = req.headers['x-twilio-signature'] as string;
    const accountSid = param(params, 'AccountSid');
    const account = accountSid ? await findAccountBySid(deps, accountSid) : null;
    const url = deps.config.publicBaseUrl + req.url;
    if (!account || !signatureMatches(account.authToken, url, params, header)) {
      req.log.warn(
        { account_sid: accountSid || null, path: req.url.split('?')[0] },
        'twilio callback refused: bad signature or unknown account',
      );
      throw new AppError('FORBIDDEN', FORBIDDEN_MESSAGE);
    }
    // The signature covers the parameters as Twilio sent them; the handlers get them without the
    // NUL character (PostgreSQL text cannot hold it), so a real call still gets its TwiML.
    const clean = withoutNul(params);
    if (clean.changed.length > 0) {
      req.log.warn(
        { account_sid: accountSid, path: req.url.split('?')[0], params: clean.changed },
        'twilio callback: NUL characters dropped from parameters',
      );
    }
    verified.set(req, { account, params: clean.params });
  });
}
