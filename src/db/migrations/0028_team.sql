-- A team (issue 18): three roles, invitations, each user's name, phone and time zone, the
-- organization's time zone, and one-time reveals of a secret after a redirect.

-- Roles: owner, admin (integrations and settings), agent (calls, contacts, own profile)
-- (src/accounts/roles.ts). The old 'member' could do everything but erase calls and change the
-- organization settings, so a member becomes an admin; an owner stays an owner.
ALTER TABLE users DROP CONSTRAINT users_role_check;
UPDATE users SET role = 'admin' WHERE role <> 'owner';
ALTER TABLE users ALTER COLUMN role SET DEFAULT 'admin';
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('owner', 'admin', 'agent'));

-- What the profile page sets: a display name, the phone click-to-call rings first (E.164), and a
-- time zone (IANA name; NULL = the organization's). A removed member keeps the row (calls and keys
-- name them) but not the e-mail (freed for a new invitation) nor a usable password.
ALTER TABLE users ADD COLUMN name text;
ALTER TABLE users ADD COLUMN phone_e164 text;
ALTER TABLE users ADD COLUMN time_zone text;
ALTER TABLE users ADD COLUMN removed_at timestamptz;

-- The organization's time zone: how the pages spell times (IANA name).
ALTER TABLE organizations ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC';

-- An invitation by e-mail: a single-use link valid 7 days. Only the SHA-256 of the link's token is
-- stored. A new invitation to the same address replaces the open one (revoked_at).
CREATE TABLE invitations (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'agent')),
  token_hash text NOT NULL UNIQUE,
  invited_by uuid REFERENCES users (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX invitations_org_idx ON invitations (organization_id, created_at DESC);

-- A secret shown once after a redirect (post/redirect/get of "Create API key"): encrypted under the
-- master key, bound to the session that created it, read once, gone after a few minutes.
CREATE TABLE secret_reveals (
  id text PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  kind text NOT NULL,
  ciphertext text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX secret_reveals_expires_idx ON secret_reveals (expires_at);
