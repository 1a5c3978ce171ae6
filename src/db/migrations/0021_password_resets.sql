-- Password reset by e-mail (the sign-in page's "Forgot password?"): a single-use link valid one hour.
-- Only the SHA-256 of the link's token is stored, so a read of this table cannot reset anyone's password.
CREATE TABLE password_reset_tokens (
  token_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX password_reset_tokens_user_idx ON password_reset_tokens (user_id);
