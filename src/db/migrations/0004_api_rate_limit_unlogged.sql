-- REST API: the rate-limit counters are written by every authenticated request. As an UNLOGGED
-- table they write no WAL, so a request that only bumps counters commits without waiting for a WAL
-- flush. The price: after a database crash (not a clean restart) the counters of the current window
-- start again from zero, which errs towards letting requests through for at most one hour.
ALTER TABLE rate_limit_windows SET UNLOGGED;
