--
-- Who may read and reset bgw_prefetch's statistics: as pg_stat_statements,
-- reading needs pg_read_all_stats, resetting is superuser-only unless
-- EXECUTE on pg_stat_prefetch_reset() is granted.
--
CREATE EXTENSION bgw_prefetch;

CREATE ROLE regress_bgwp_nobody;
CREATE ROLE regress_bgwp_reader;
GRANT pg_read_all_stats TO regress_bgwp_reader;

-- A role without pg_read_all_stats can read nothing and reset nothing.
SET ROLE regress_bgwp_nobody;
SELECT count(*) FROM pg_stat_prefetch;
SELECT count(*) FROM pg_stat_prefetch_activity;
SELECT count(*) FROM pg_stat_prefetch_clog;
SELECT count(*) FROM bgw_prefetch_stats();
SELECT count(*) FROM bgw_prefetch_activity();
SELECT count(*) FROM bgw_prefetch_clog_stats();
SELECT count(*) FROM bgw_prefetch_status();
SELECT pg_stat_prefetch_reset();
RESET ROLE;

-- A member of pg_read_all_stats reads everything, but cannot reset.
SET ROLE regress_bgwp_reader;
SELECT count(*) >= 0 AS can_read FROM pg_stat_prefetch;
SELECT count(*) >= 0 AS can_read FROM pg_stat_prefetch_activity;
SELECT count(*) AS clog_rows FROM pg_stat_prefetch_clog;
SELECT max_relations FROM bgw_prefetch_status();
SELECT pg_stat_prefetch_reset();
RESET ROLE;

-- Granting EXECUTE on the reset function makes the reset work.
GRANT EXECUTE ON FUNCTION pg_stat_prefetch_reset() TO regress_bgwp_reader;
SET ROLE regress_bgwp_reader;
SELECT pg_stat_prefetch_reset();
SELECT count(*) AS entries_after_reset FROM pg_stat_prefetch;
RESET ROLE;

-- The grant is the only thing that changed for the role without
-- pg_read_all_stats.
SET ROLE regress_bgwp_nobody;
SELECT pg_stat_prefetch_reset();
RESET ROLE;

DROP EXTENSION bgw_prefetch;
DROP ROLE regress_bgwp_nobody;
DROP ROLE regress_bgwp_reader;
