--
-- bgw_prefetch: the SQL surface on a server that preloads the library
-- (test/regress.conf).
--
CREATE EXTENSION bgw_prefetch;

-- The views' columns, in order.
SELECT table_name, ordinal_position AS pos, column_name, data_type
  FROM information_schema.columns
 WHERE table_schema = 'public'
   AND table_name IN ('pg_stat_prefetch', 'pg_stat_prefetch_activity',
                      'pg_stat_prefetch_clog')
 ORDER BY table_name COLLATE "C", ordinal_position;

-- The statistics functions, with their privileges.
SELECT p.proname, p.proretset,
       EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
                WHERE a.grantee = 0) AS public_can_execute,
       has_function_privilege('pg_read_all_stats', p.oid, 'EXECUTE')
           AS pg_read_all_stats_can_execute
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass
                     AND d.refobjid = e.oid
 WHERE e.extname = 'bgw_prefetch'
   AND p.proname IN ('bgw_prefetch_stats', 'bgw_prefetch_activity',
                     'bgw_prefetch_clog_stats', 'bgw_prefetch_status',
                     'bgw_prefetch_forecast', 'bgw_prefetch_forecasters',
                     'pg_stat_prefetch_reset')
 ORDER BY p.proname COLLATE "C";

-- Both background workers run, under their own backend_type.  They start
-- with the server: wait until both run and have published their state (the
-- monitor its pid and I/O method, the CLOG writer its status), for at most
-- 180 s, the TAP framework's default timeout (the expected output below
-- shows it if they did not).
DO $$
BEGIN
  FOR i IN 1 .. 1800 LOOP
    EXIT WHEN (SELECT count(DISTINCT backend_type) FROM pg_stat_activity
                WHERE backend_type IN ('bgw_prefetch monitor',
                                       'bgw_prefetch clog writer')) = 2
          AND (SELECT monitor_pid IS NOT NULL AND io_method <> 'none'
                 FROM bgw_prefetch_status())
          AND (SELECT status IN ('writing', 'idle', 'standby') FROM pg_stat_prefetch_clog);
    PERFORM pg_sleep(0.1);
  END LOOP;
END
$$;
SELECT backend_type, count(*)
  FROM pg_stat_activity
 WHERE backend_type IN ('bgw_prefetch monitor', 'bgw_prefetch clog writer')
 GROUP BY backend_type
 ORDER BY backend_type COLLATE "C";

-- The status function: its columns, and the values that do not depend on
-- the machine.  io_method depends on whether io_uring is usable here: if it
-- is not, the monitor falls back to fadvise and says why.  Nothing here is
-- as large as bgw_prefetch.min_relation_size (8 MB by default), so the
-- monitor has served nothing: no target, none ever started, and the shared
-- hash holds exactly the (no) rows bgw_prefetch_stats() returns.
SELECT a.n, a.name, format_type(a.type, NULL) AS type
  FROM pg_proc p,
       unnest(p.proargnames, p.proallargtypes) WITH ORDINALITY AS a(name, type, n)
 WHERE p.proname = 'bgw_prefetch_status'
 ORDER BY a.n;
SELECT max_relations,
       entries = (SELECT count(*) FROM bgw_prefetch_stats()) AS entries_match,
       evictions = 0 AS no_evictions,
       stats_reset <= now() AS stats_reset_ok,
       io_method IN ('io_uring', 'fadvise') AS io_method_ok,
       (io_method = 'fadvise') = (io_fallback_reason IS NOT NULL
                                  OR current_setting('bgw_prefetch.io_method') = 'fadvise')
           AS fallback_reason_consistent,
       active_targets = 0 AS no_active_targets,
       targets_served = 0 AS none_served
  FROM bgw_prefetch_status();

-- The monitor's pid is the one in pg_stat_activity.
SELECT monitor_pid = (SELECT pid FROM pg_stat_activity
                       WHERE backend_type = 'bgw_prefetch monitor')
       AS monitor_pid_matches
  FROM bgw_prefetch_status();

-- Nothing is being vacuumed or analyzed here: no activity.  Every column
-- is read (the header shows them).
SELECT * FROM pg_stat_prefetch_activity;

-- The CLOG writer's view: one row, read under the writer's lock, so its
-- counters agree: pages are written in rounds, only written pages take
-- write time, and there is a last write exactly when a page was written.
-- The writer runs on this primary: writing, idle or standing by (auto).
SELECT (pages_written > 0) <= (rounds > 0) AS pages_in_rounds,
       (write_time > 0) <= (pages_written > 0) AS time_only_with_pages,
       (last_write IS NOT NULL) = (pages_written > 0) AS last_write_iff_pages,
       stats_reset <= now() AS stats_reset_ok,
       status IN ('writing', 'idle', 'standby') AS writer_runs
  FROM pg_stat_prefetch_clog;

-- Reset: pg_stat_prefetch empties, and the reset time moves forward for
-- pg_stat_prefetch (through bgw_prefetch_status) and pg_stat_prefetch_clog.
CREATE TEMP TABLE before_reset AS
  SELECT (SELECT stats_reset FROM bgw_prefetch_status()) AS status_reset,
         (SELECT stats_reset FROM pg_stat_prefetch_clog) AS clog_reset;
SELECT pg_sleep(0.01);
SELECT pg_stat_prefetch_reset();
SELECT count(*) AS entries_after_reset FROM pg_stat_prefetch;
SELECT s.entries, s.evictions,
       s.stats_reset > b.status_reset AS status_reset_moved,
       c.stats_reset > b.clog_reset AS clog_reset_moved,
       c.pages_written = 0 AS clog_pages_zeroed,
       s.stats_reset = c.stats_reset AS same_reset_time
  FROM bgw_prefetch_status() s, pg_stat_prefetch_clog c, before_reset b;

-- A VACUUM of a table smaller than bgw_prefetch.min_relation_size is not
-- watched, and leaves no row: none once the monitor has read what the
-- VACUUM published at its commit and is asleep again (it records a scan it
-- did not see from that).
CREATE TABLE small_t AS SELECT g AS id FROM generate_series(1, 1000) g;
VACUUM small_t;
DO $$
BEGIN
	FOR i IN 1 .. 60000 LOOP
		EXIT WHEN (SELECT transactions_unread = 0 FROM bgw_prefetch_status());
		PERFORM pg_sleep(0.001);
	END LOOP;
	FOR i IN 1 .. 60000 LOOP
		PERFORM pg_stat_clear_snapshot();
		EXIT WHEN (SELECT wait_event_type = 'Extension' FROM pg_stat_activity
		            WHERE backend_type = 'bgw_prefetch monitor');
		PERFORM pg_sleep(0.001);
	END LOOP;
END
$$;
SELECT count(*) FROM pg_stat_prefetch WHERE relname = 'small_t';
DROP TABLE small_t;

-- A call that matches no function (a mistyped argument name, a value of
-- the wrong type) fails in the parser.  The calibration's bad values fail
-- before anything is measured, with a hint.
SELECT * FROM bgw_prefetch_calibrate('pg_default', depth => 64);
SELECT * FROM public.bgw_prefetch_calibrate(max_depth => 64::bigint);
SELECT * FROM bgw_prefetch_calibrate_apply(tablespace => 'pg_default', reuse => true);
SELECT bgw_prefetch_calibration_forget(spcname => 'pg_default');
SELECT * FROM bgw_prefetch_status(1);
SELECT * FROM bgw_prefetch_calibrate('pg_default', max_depth => 100000);
SELECT * FROM bgw_prefetch_calibrate(size_mb => 0);
SELECT * FROM bgw_prefetch_calibrate(tablespace => NULL);
SELECT * FROM bgw_prefetch_calibrate('no_such_tablespace');

DROP EXTENSION bgw_prefetch;
