-- Evidence of the analysis (issue 19): for each extracted field the words of the transcript it was
-- read from, {"caller_name": {"quote": "…", "turn": 3, "start": null}, …}. NULL when the analyser
-- gave none (a model provider, analyses stored before this column). Internal: it is transcript
-- text, so it never rides in transcript_processed (docs/decisions.md "Evidence"); it goes when the
-- row goes (erasure deletes call_analyses).
ALTER TABLE call_analyses ADD COLUMN evidence jsonb;
