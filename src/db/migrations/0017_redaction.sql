-- Redaction (issue 19, docs/capture.md "Redaction"): card numbers, security codes, national ids, bank
-- details, dates of birth and passport numbers are taken out of a call's transcript, analysis and
-- draft before they are first written, and silenced in its recording. On for every organization;
-- turning it off is the owner's explicit choice (web app settings, PATCH /admin/v1/organizations/{org}).
ALTER TABLE organizations ADD COLUMN redaction_enabled boolean NOT NULL DEFAULT true;
