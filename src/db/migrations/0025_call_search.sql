-- The web app's lead inbox (issue 18): search, views by review status, the pipeline board.

-- The text-search configuration of a call's detected language (call_analyses.language: 'en', 'pt-BR', …):
-- the four languages the analyzer knows get their stemmer, every other language (or none) 'simple'
-- (words as written, lower-cased). IMMUTABLE, so the generated column below may use it.
CREATE FUNCTION call_search_config(language text) RETURNS regconfig
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE split_part(lower(coalesce(language, '')), '-', 1)
    WHEN 'en' THEN 'english'::regconfig
    WHEN 'es' THEN 'spanish'::regconfig
    WHEN 'de' THEN 'german'::regconfig
    WHEN 'fr' THEN 'french'::regconfig
    ELSE 'simple'::regconfig
  END;

-- A search box's words as one query of every stemmer above, so one GIN index scan finds a word in a call
-- of any language ("leaking" matches the English 'leak', a name matches as written). websearch syntax:
-- "quoted phrase", -excluded, or.
-- With an organization: the words AND that organization's lexeme (call_search_org below).
CREATE FUNCTION call_search_query(words text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN websearch_to_tsquery('simple'::regconfig, words) || websearch_to_tsquery('english'::regconfig, words)
    || websearch_to_tsquery('spanish'::regconfig, words) || websearch_to_tsquery('german'::regconfig, words)
    || websearch_to_tsquery('french'::regconfig, words);
CREATE FUNCTION call_search_query(words text, organization_id uuid) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN numnode(call_search_query(words)) = 0 THEN call_search_query(words)
    ELSE call_search_query(words) && quote_literal('~org' || organization_id::text)::tsquery END;

-- What a search reads of a call's analysis: subject, names, summary, service, details, transcript.
CREATE FUNCTION call_search_text(analysis jsonb, transcript text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN concat_ws(' ', analysis ->> 'subject', analysis ->> 'caller_name', analysis ->> 'counterparty_name',
    analysis ->> 'summary', analysis ->> 'service_needed', analysis ->> 'additional_details', transcript);

-- The organization as one more lexeme of every vector ('~org<uuid>': no word is spelt so), so a search ANDs it
-- with the words and the GIN index finds one organization's matches without visiting other organizations'
-- rows (a GIN index cannot hold a uuid column beside a tsvector without the btree_gin extension).
CREATE FUNCTION call_search_org(organization_id uuid) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_to_tsvector(ARRAY['~org' || organization_id::text]);

-- Generated, so every write path (pipeline, seed, reprocessing, redaction, erasure) keeps it true.
ALTER TABLE call_analyses ADD COLUMN search_vector tsvector
  GENERATED ALWAYS AS (to_tsvector(call_search_config(language), call_search_text(analysis, transcript_original))
    || call_search_org(organization_id)) STORED;
CREATE INDEX call_analyses_search_idx ON call_analyses USING gin (search_vector);

-- The name the telephony carrier gave (calls.caller_name), searched word by word.
CREATE INDEX calls_caller_name_search_idx ON calls
  USING gin ((to_tsvector('simple', coalesce(caller_name, '')) || call_search_org(organization_id)))
  WHERE erased_at IS NULL AND caller_name IS NOT NULL;

-- The inbox's views (review status) and their counts, newest first.
CREATE INDEX calls_org_review_created_idx ON calls (organization_id, review_status, created_at DESC, id DESC)
  WHERE erased_at IS NULL;

-- Contacts by number: a call's name on the inbox and the board (organization + customer E.164).
CREATE INDEX contacts_org_phone_e164_inbox_idx ON contacts (organization_id, phone_e164);
