-- The inbox's views (review status) and their counts, newest first, within one data environment:
-- migration 0025 made this index before calls had an environment (0022 gave the other list indexes
-- theirs), so once the inbox filtered on the environment PostgreSQL read every call of the
-- organization for each page (server p99 1.9 s at 200,000 calls; 156 ms with this index on the same
-- run, docs/benchmarks.md).
DROP INDEX calls_org_review_created_idx;
CREATE INDEX calls_org_review_created_idx ON calls (organization_id, environment, review_status, created_at DESC, id DESC)
  WHERE erased_at IS NULL;
