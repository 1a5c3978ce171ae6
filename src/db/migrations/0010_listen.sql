-- `callcap listen` (src/webhooks/listen/, docs/cli.md "listen"): a console stream that is, while it
-- is connected, a webhook subscription like any other for the outbox (fan-out, reconciliation, same
-- event ids, at-least-once) but is delivered by the stream handler itself, never POSTed by the
-- delivery worker.

-- kind 'cli': a listen session. url is 'cli:listen' (never fetched). listen_seen_at is refreshed by
-- the stream while it is connected; a cli subscription not seen for the grace period is deleted.
ALTER TABLE webhook_subscriptions
  ADD COLUMN kind text NOT NULL DEFAULT 'webhook' CHECK (kind IN ('webhook', 'cli')),
  ADD COLUMN listen_seen_at timestamptz;
CREATE INDEX webhook_subscriptions_cli_idx ON webhook_subscriptions (listen_seen_at)
  WHERE kind = 'cli' AND deleted_at IS NULL;

-- The deliveries of a cli subscription are always held: the worker's claim index never sees them
-- (the stream claims them by subscription, webhook_deliveries_pending_sub_idx). Same functions as
-- migration 0003 with "OR kind = 'cli'" added.
CREATE OR REPLACE FUNCTION webhook_delivery_hold() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.held := coalesce((SELECT s.state <> 'active' OR s.deleted_at IS NOT NULL OR s.kind = 'cli'
                          FROM webhook_subscriptions s WHERE s.id = NEW.subscription_id FOR SHARE), true);
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION webhook_subscription_state_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  hold boolean := NEW.state <> 'active' OR NEW.deleted_at IS NOT NULL OR NEW.kind = 'cli';
BEGIN
  IF NEW.state = 'active' AND OLD.state <> 'active' THEN
    NEW.consecutive_transient_failures := 0;
    NEW.consecutive_gone := 0;
  END IF;
  UPDATE webhook_deliveries SET held = hold
   WHERE subscription_id = NEW.id AND status = 'pending' AND held <> hold;
  RETURN NEW;
END $$;
