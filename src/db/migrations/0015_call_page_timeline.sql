-- The call page's timeline from the call's own row (src/capture/call-page.ts), not from the webhook
-- envelopes in `events`. Each column is written by the statement that already changes the call's
-- state, in the transaction that emits the matching event:
-- outbound_ended_at: when the outbound attempt first reached a final state (call.outbound.attempted,
--   and call.failed for a failed state), set by capture/lifecycle.ts's lifecycle UPDATE;
-- outbound_repaired_at: the repair agent_only -> completed (call.outbound.lifecycle_repaired and the
--   second call.outbound.attempted), same UPDATE;
-- tracker_matches: the keyword trackers that matched at completion ([{tracker_id, name,
--   matched_terms, excerpts}], call.tracker.matched; [] when none did), set by capture/completion.ts
--   with completion_emitted_at; cleared when the call is erased (the excerpts quote the transcript).
ALTER TABLE calls
  ADD COLUMN outbound_ended_at timestamptz,
  ADD COLUMN outbound_repaired_at timestamptz,
  ADD COLUMN tracker_matches jsonb;

-- Calls from before this migration: the same facts, read once from the events that told them.
UPDATE calls c SET outbound_ended_at = e.at
  FROM (SELECT call_id, min(created_at) AS at FROM events
         WHERE event_type = 'call.outbound.attempted' AND call_id IS NOT NULL GROUP BY call_id) e
 WHERE e.call_id = c.id;
UPDATE calls c SET outbound_repaired_at = e.at
  FROM (SELECT call_id, min(created_at) AS at FROM events
         WHERE event_type = 'call.outbound.lifecycle_repaired' AND call_id IS NOT NULL GROUP BY call_id) e
 WHERE e.call_id = c.id;
UPDATE calls c SET tracker_matches = e.matches
  FROM (SELECT DISTINCT ON (call_id) call_id, (body::jsonb) -> 'data' -> 'matches' AS matches FROM events
         WHERE event_type = 'call.tracker.matched' AND call_id IS NOT NULL
         ORDER BY call_id, created_at DESC) e
 WHERE e.call_id = c.id AND c.erased_at IS NULL AND jsonb_typeof(e.matches) = 'array';
UPDATE calls SET tracker_matches = '[]'::jsonb
 WHERE completion_emitted_at IS NOT NULL AND tracker_matches IS NULL AND erased_at IS NULL;
