/* bgw_prefetch--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bgw_prefetch" to load this file. \quit

-- Per-relation statistics of every VACUUM/ANALYZE followed, and their prefetch.
CREATE FUNCTION bgw_prefetch_stats(
    OUT datid oid,
    OUT relid oid,
    OUT command text,
    OUT scans bigint,
    OUT prefetched_scans bigint,
    OUT watched_scans bigint,
    OUT last_watched_reason text,
    OUT joined_scans bigint,
    OUT last_joined_block bigint,
    OUT blocks_read bigint,
    OUT blocks_skipped bigint,
    OUT read_time double precision,
    OUT cost_delay_time double precision,
    OUT cost_limited_time double precision,
    OUT total_time double precision,
    OUT read_rate double precision,
    OUT blocks_prefetched bigint,
    OUT blocks_ready bigint,
    OUT blocks_late bigint,
    OUT blocks_unused bigint,
    OUT prefetch_time double precision,
    OUT blocks_loaded bigint,
    OUT loader_aborts bigint,
    OUT last_scan timestamp with time zone,
    OUT stats_reset timestamp with time zone
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bgw_prefetch_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_prefetch AS
    SELECT s.datid,
           d.datname,
           s.relid,
           c.relname,
           s.command,
           s.scans,
           s.prefetched_scans,
           s.watched_scans,
           s.last_watched_reason,
           s.joined_scans,
           s.last_joined_block,
           s.blocks_read,
           s.blocks_skipped,
           s.read_time,
           s.cost_delay_time,
           s.cost_limited_time,
           s.total_time,
           s.read_rate,
           s.blocks_prefetched,
           s.blocks_ready,
           s.blocks_late,
           s.blocks_unused,
           s.prefetch_time,
           s.blocks_loaded,
           s.loader_aborts,
           s.last_scan,
           s.stats_reset
      FROM bgw_prefetch_stats() s
      LEFT JOIN pg_database d ON d.oid = s.datid
      LEFT JOIN pg_class c
             ON c.oid = s.relid
            AND s.datid = (SELECT oid FROM pg_database
                            WHERE datname = current_database());

-- Forget all statistics (pg_stat_prefetch and pg_stat_prefetch_clog).
CREATE FUNCTION pg_stat_prefetch_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'bgw_prefetch_reset'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- The extension's own state: shared hash use, I/O method, monitor.
CREATE FUNCTION bgw_prefetch_status(
    OUT entries bigint,
    OUT max_relations integer,
    OUT evictions bigint,
    OUT stats_reset timestamp with time zone,
    OUT monitor_pid integer,
    OUT io_method text,
    OUT io_fallback_reason text,
    OUT active_targets integer,
    OUT targets_served bigint,
    OUT transactions_unread bigint,
    OUT pacing text,
    OUT pacing_rate_mb_s double precision,
    OUT probe_latency_us double precision,
    OUT probe_base_latency_us double precision,
    OUT monitor_conf_load_time timestamp with time zone
)
RETURNS record
AS 'MODULE_PATHNAME', 'bgw_prefetch_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- One row per VACUUM/ANALYZE being served right now.
CREATE FUNCTION bgw_prefetch_activity(
    OUT pid integer,
    OUT datid oid,
    OUT relid oid,
    OUT command text,
    OUT state text,
    OUT consumer_block bigint,
    OUT total_blocks bigint,
    OUT prefetch_block bigint,
    OUT distance bigint,
    OUT reads_in_flight integer,
    OUT io_depth integer,
    OUT io_depth_source text,
    OUT io_method text,
    OUT blocks_planned bigint,
    OUT blocks_prefetched bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bgw_prefetch_activity'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_prefetch_activity AS
    SELECT a.pid,
           a.datid,
           d.datname,
           a.relid,
           c.relname,
           a.command,
           a.state,
           a.consumer_block,
           a.total_blocks,
           a.prefetch_block,
           a.distance,
           a.reads_in_flight,
           a.io_depth,
           a.io_depth_source,
           a.io_method,
           a.blocks_planned,
           a.blocks_prefetched
      FROM bgw_prefetch_activity() a
      LEFT JOIN pg_database d ON d.oid = a.datid
      LEFT JOIN pg_class c
             ON c.oid = a.relid
            AND a.datid = (SELECT oid FROM pg_database
                            WHERE datname = current_database());

-- The CLOG writer's own counts.
CREATE FUNCTION bgw_prefetch_clog_stats(
    OUT pages_written bigint,
    OUT write_time double precision,
    OUT rounds bigint,
    OUT last_write timestamp with time zone,
    OUT stats_reset timestamp with time zone,
    OUT status text
)
RETURNS record
AS 'MODULE_PATHNAME', 'bgw_prefetch_clog_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_prefetch_clog AS
    SELECT * FROM bgw_prefetch_clog_stats();

-- Privileges, as pg_stat_statements: statistics are readable by
-- pg_read_all_stats, the reset is superuser-only unless granted.
REVOKE ALL ON FUNCTION bgw_prefetch_stats() FROM PUBLIC;
REVOKE ALL ON FUNCTION bgw_prefetch_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION bgw_prefetch_activity() FROM PUBLIC;
REVOKE ALL ON FUNCTION bgw_prefetch_clog_stats() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_stat_prefetch_reset() FROM PUBLIC;
REVOKE ALL ON pg_stat_prefetch, pg_stat_prefetch_activity, pg_stat_prefetch_clog FROM PUBLIC;

GRANT EXECUTE ON FUNCTION bgw_prefetch_stats() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION bgw_prefetch_status() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION bgw_prefetch_activity() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION bgw_prefetch_clog_stats() TO pg_read_all_stats;
GRANT SELECT ON pg_stat_prefetch, pg_stat_prefetch_activity, pg_stat_prefetch_clog
    TO pg_read_all_stats;

-- ---------------------------------------------------------------------------
-- Calibration (calibrate.c)
--
-- Measure a tablespace's cold-cache read curve in a scratch temporary file,
-- record the recommended prefetch depth and the ANALYZE cost model's
-- per-block costs in $PGDATA/bgw_prefetch_calibration (cluster-wide), and
-- show the records.  Filling a tablespace with a scratch file and changing
-- the prefetch depth are superuser-only unless EXECUTE is granted; the
-- records are readable by pg_read_all_stats.  See doc/tuning.md.
-- ---------------------------------------------------------------------------

CREATE FUNCTION bgw_prefetch_calibrate(
    tablespace name DEFAULT 'pg_default',
    size_mb integer DEFAULT 1024,
    max_depth integer DEFAULT 256,
    OUT pattern text,
    OUT depth integer,
    OUT iops double precision,
    OUT mb_per_s double precision,
    OUT mean_latency_us double precision,
    OUT p99_latency_us double precision,
    OUT speedup double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bgw_prefetch_calibrate'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION bgw_prefetch_calibrate_apply(
    tablespace name DEFAULT 'pg_default',
    size_mb integer DEFAULT 1024,
    max_depth integer DEFAULT 256,
    reuse_last boolean DEFAULT false,
    OUT tablespace name,
    OUT recommended_depth integer,
    OUT seq_us_per_block double precision,
    OUT random_us_per_block double precision,
    OUT random_seq_ratio double precision,
    OUT random_cost_depth integer,
    OUT measured_at timestamp with time zone
)
RETURNS record
AS 'MODULE_PATHNAME', 'bgw_prefetch_calibrate_apply'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION bgw_prefetch_calibration_forget(tablespace name DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'bgw_prefetch_calibration_forget'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION bgw_prefetch_calibration_results(
    OUT spcoid oid,
    OUT recommended_depth integer,
    OUT seq_us_per_block double precision,
    OUT random_us_per_block double precision,
    OUT random_cost_depth integer,
    OUT best_sorted_iops double precision,
    OUT size_mb integer,
    OUT io_method text,
    OUT measured_at timestamp with time zone
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bgw_prefetch_calibration_results'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW bgw_prefetch_calibration AS
    SELECT t.spcname AS tablespace,
           r.spcoid,
           r.recommended_depth,
           r.seq_us_per_block,
           r.random_us_per_block,
           r.random_us_per_block / r.seq_us_per_block AS random_seq_ratio,
           r.random_cost_depth,
           r.best_sorted_iops,
           r.size_mb,
           r.io_method,
           r.measured_at
      FROM bgw_prefetch_calibration_results() r
      LEFT JOIN pg_tablespace t ON t.oid = r.spcoid;

REVOKE ALL ON FUNCTION bgw_prefetch_calibrate(name, integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION bgw_prefetch_calibrate_apply(name, integer, integer, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION bgw_prefetch_calibration_forget(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION bgw_prefetch_calibration_results() FROM PUBLIC;
REVOKE ALL ON bgw_prefetch_calibration FROM PUBLIC;

GRANT EXECUTE ON FUNCTION bgw_prefetch_calibration_results() TO pg_read_all_stats;
GRANT SELECT ON bgw_prefetch_calibration TO pg_read_all_stats;

-- ---------------------------------------------------------------------------
-- Autovacuum forecast (forecast.c)
--
-- The relations each database's forecaster expects autovacuum to process,
-- in autovacuum's order (at least bgw_prefetch.min_relation_size blocks),
-- and the forecasters themselves.
CREATE FUNCTION bgw_prefetch_forecast(
    OUT datid oid,
    OUT relid oid,
    OUT ordinal integer,
    OUT relname text,
    OUT needs_vacuum boolean,
    OUT needs_analyze boolean,
    OUT wraparound boolean,
    OUT done boolean,
    OUT skip_mode text,
    OUT blocks bigint,
    OUT io_depth integer
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bgw_prefetch_forecast'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE FUNCTION bgw_prefetch_forecasters(
    OUT datid oid,
    OUT state text,
    OUT pid integer,
    OUT computed_at timestamp with time zone,
    OUT computations bigint,
    OUT relations integer,
    OUT requests_answered bigint,
    OUT autovacuum_seen timestamp with time zone,
    OUT last_exit text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bgw_prefetch_forecasters'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

REVOKE ALL ON FUNCTION bgw_prefetch_forecast() FROM PUBLIC;
REVOKE ALL ON FUNCTION bgw_prefetch_forecasters() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bgw_prefetch_forecast() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION bgw_prefetch_forecasters() TO pg_read_all_stats;
