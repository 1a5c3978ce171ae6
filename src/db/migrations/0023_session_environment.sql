-- The web app's test-mode switch (spec/api-v1-additions.md "Test mode"): a signed-in session works in
-- one data environment at a time, live until the user switches. Every page and console API request
-- of the session reads and writes that environment (accounts/sessions.ts sessionScope).
ALTER TABLE sessions ADD COLUMN environment text NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'test'));
