-- Webhook delivery engine (src/webhooks/worker.ts, docs/webhooks.md).

-- held = the delivery's subscription is not active (paused, inactive or deleted): the claim must not
-- see the row. The triggers below keep the flag in step with the subscription, so the claim index
-- holds deliverable rows only and a million deliveries waiting for a paused subscription cost the
-- claim nothing (bench/webhooks.ts measures exactly that).
ALTER TABLE webhook_deliveries ADD COLUMN held boolean NOT NULL DEFAULT false;

-- The claim (src/webhooks/sql/claim-deliveries.ts) walks this index in next_attempt_at order.
DROP INDEX webhook_deliveries_due_idx;
CREATE INDEX webhook_deliveries_claim_idx ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending' AND NOT held;
-- Pending deliveries of one subscription: hold/release on a state change, skip on emergency rotation.
CREATE INDEX webhook_deliveries_pending_sub_idx ON webhook_deliveries (subscription_id) WHERE status = 'pending';

-- A queue table churns: analyse and vacuum it after 2 % of changes rather than 10–20 %, so the
-- claim keeps its index plan during bursts (PostgreSQL autovacuum; PGlite has none, see reconcile.ts).
ALTER TABLE webhook_deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

-- Reconciliation scans events of the last window across organizations.
CREATE INDEX events_created_idx ON events (created_at);

-- Mail: attempted_at marks a send in progress, so two workers never send one e-mail twice and a
-- send interrupted by a crash is retried by the reconciliation loop.
ALTER TABLE email_outbox ADD COLUMN attempted_at timestamptz;
CREATE INDEX email_outbox_queued_idx ON email_outbox (created_at) WHERE status = 'queued';

-- A delivery entering 'pending' (fan-out, reconciliation, resend) takes its held flag from the
-- subscription. FOR SHARE waits for a concurrent state change of that subscription to commit, so
-- the flag is read from the state that wins; a missing subscription holds the row.
CREATE FUNCTION webhook_delivery_hold() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.held := coalesce((SELECT s.state <> 'active' OR s.deleted_at IS NOT NULL
                          FROM webhook_subscriptions s WHERE s.id = NEW.subscription_id FOR SHARE), true);
  RETURN NEW;
END $$;

CREATE TRIGGER webhook_deliveries_hold_on_insert BEFORE INSERT ON webhook_deliveries
  FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION webhook_delivery_hold();

CREATE TRIGGER webhook_deliveries_hold_on_requeue BEFORE UPDATE OF status ON webhook_deliveries
  FOR EACH ROW WHEN (NEW.status = 'pending' AND OLD.status <> 'pending') EXECUTE FUNCTION webhook_delivery_hold();

-- A subscription changing state (or being deleted) holds or releases its pending deliveries in the
-- same transaction. Becoming active also resets the consecutive-failure counters: a fresh
-- verification proves the receiver answers, so the 50-failure and two-410 counts start again.
CREATE FUNCTION webhook_subscription_state_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  hold boolean := NEW.state <> 'active' OR NEW.deleted_at IS NOT NULL;
BEGIN
  IF NEW.state = 'active' AND OLD.state <> 'active' THEN
    NEW.consecutive_transient_failures := 0;
    NEW.consecutive_gone := 0;
  END IF;
  UPDATE webhook_deliveries SET held = hold
   WHERE subscription_id = NEW.id AND status = 'pending' AND held <> hold;
  RETURN NEW;
END $$;

CREATE TRIGGER webhook_subscriptions_state_changed BEFORE UPDATE OF state, deleted_at ON webhook_subscriptions
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
  EXECUTE FUNCTION webhook_subscription_state_changed();
