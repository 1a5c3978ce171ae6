-- The lead inbox at 200,000 calls (issue 18, docs/benchmarks.md): what the inbox sorts and searches by,
-- on the calls row itself.
--
-- * lead_score: the analysis' lead score (call_analyses.analysis ->> 'lead_score'), so the "lead score"
--   sort walks an index of the organization's environment instead of reading every analysis (1 s at
--   200,000 calls).
-- * search_vector: a copy of call_analyses.search_vector (the analysis' and transcript's words and the
--   organization's lexeme, migration 0025), so a search finds its matching calls — their review status,
--   created_at and score for the counts and the sort — in one bitmap scan of calls, instead of reading
--   each match's analysis and then its call by primary key (30 ms for a word in 3,000 calls).
--
-- Both are written by the analysis write itself (a trigger on call_analyses: insert, update, delete), so
-- every writer — the pipeline, seeds, fixtures, reprocessing, erasure — keeps them in step.

ALTER TABLE calls ADD COLUMN lead_score numeric;
ALTER TABLE calls ADD COLUMN search_vector tsvector;

-- A lead score as the inbox shows it: the analysis' number, null when absent or not a number.
CREATE FUNCTION call_lead_score(analysis jsonb) RETURNS numeric
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN jsonb_typeof(analysis -> 'lead_score') = 'number' THEN (analysis ->> 'lead_score')::numeric END;

CREATE FUNCTION call_analysis_to_call() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE calls SET lead_score = NULL, search_vector = NULL
     WHERE id = OLD.call_id AND (lead_score IS NOT NULL OR search_vector IS NOT NULL);
    RETURN OLD;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.call_id <> OLD.call_id THEN
    UPDATE calls SET lead_score = NULL, search_vector = NULL WHERE id = OLD.call_id;
  END IF;
  UPDATE calls SET lead_score = call_lead_score(NEW.analysis), search_vector = NEW.search_vector
   WHERE id = NEW.call_id
     AND (lead_score IS DISTINCT FROM call_lead_score(NEW.analysis) OR search_vector IS DISTINCT FROM NEW.search_vector);
  RETURN NEW;
END $$;

CREATE TRIGGER call_analyses_to_call AFTER INSERT OR UPDATE OR DELETE ON call_analyses
  FOR EACH ROW EXECUTE FUNCTION call_analysis_to_call();

UPDATE calls c SET lead_score = call_lead_score(a.analysis), search_vector = a.search_vector
  FROM call_analyses a WHERE a.call_id = c.id;

-- The "lead score" sort: highest first, unscored last, then newest.
CREATE INDEX calls_org_score_created_idx ON calls
  (organization_id, environment, lead_score DESC NULLS LAST, created_at DESC, id DESC) WHERE erased_at IS NULL;

-- A search's words (with the organization's lexeme, as call_search_query(words, organization) asks).
CREATE INDEX calls_search_idx ON calls USING gin (search_vector) WHERE erased_at IS NULL;

-- The inbox searches calls.search_vector now; the analysis' own vector stays for the matched passage
-- (ts_headline), which reads it row by row.
DROP INDEX call_analyses_search_idx;
