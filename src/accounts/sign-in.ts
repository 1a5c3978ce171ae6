import type { Deps } from '../deps.ts';
import { unauthorized } from '../errors.ts';
import { releaseLoginSlot, takeLoginSlot } from './login-throttle.ts';
import { verifyPassword } from './passwords.ts';
import { createSession } from './sessions.ts';

/**
 * A valid scrypt hash of a password nobody knows, at the production cost: an unknown e-mail costs
 * the same scrypt run as a wrong password, so timing does not tell which e-mails exist.
 */
const DUMMY_HASH = 'scrypt$32768$8$1$PrEAYw5WNNxdiitrplCrdw$JiJUraql75Yiz90mVYhzCfYFlnfvah0knEER5fdg_04';
const WRONG_CREDENTIALS = 'Wrong e-mail or password.';

/**
 * Checks an e-mail and password under the login throttle and opens a session: the one sign-in of
 * the JSON console and the sign-in page. Throws 429 RATE_LIMITED (with retryAfterSeconds) at a
 * throttle cap, 401 UNAUTHORIZED for a wrong e-mail or password (one message for both).
 */
export async function signIn(
  deps: Deps,
  ip: string,
  email: string,
  password: string,
): Promise<{ userId: string; organizationId: string; cookieValue: string; csrfToken: string }> {
  const now = deps.clock.now();
  // The attempt takes its slot before the password is checked (login-throttle.ts): 429 at a cap.
  const slot = await takeLoginSlot(deps.db, ip, email, now);
  const { rows } = await deps.db.query<{ id: string; organization_id: string; password_hash: string }>(
    'SELECT id, organization_id, password_hash FROM users WHERE lower(email) = $1',
    [email.trim().toLowerCase()],
  );
  const user = rows[0];
  const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
  if (!user || !ok) throw unauthorized(WRONG_CREDENTIALS);
  await releaseLoginSlot(deps.db, slot);
  const s = await createSession(deps.db, { userId: user.id, organizationId: user.organization_id, now });
  return {
    userId: user.id,
    organizationId: user.organization_id,
    cookieValue: s.cookieValue,
    csrfToken: s.csrfToken,
  };
}
