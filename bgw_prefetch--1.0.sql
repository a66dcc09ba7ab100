/* bgw_prefetch--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bgw_prefetch" to load this file. \quit

-- Per-relation statistics of watched VACUUM/ANALYZE scans and their prefetch.
CREATE FUNCTION bgw_prefetch_stats(
    OUT datid oid,
    OUT relid oid,
    OUT command text,
    OUT scans bigint,
    OUT scan_blocks bigint,
    OUT scan_time double precision,
    OUT scan_read_rate double precision,
    OUT planned_blocks bigint,
    OUT prefetched_blocks bigint,
    OUT prefetched_bytes bigint,
    OUT prefetch_read_time double precision,
    OUT prefetch_read_rate double precision,
    OUT late_blocks bigint,
    OUT wasted_blocks bigint,
    OUT last_scan timestamp with time zone,
    OUT stats_reset timestamp with time zone,
    OUT prefetch_active_time double precision
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
           s.scan_blocks,
           s.scan_time,
           s.scan_read_rate,
           s.planned_blocks,
           s.prefetched_blocks,
           s.prefetched_bytes,
           s.prefetch_read_time,
           s.prefetch_read_rate,
           s.late_blocks,
           s.wasted_blocks,
           s.last_scan,
           s.stats_reset,
           s.prefetch_active_time
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
    OUT targets_served bigint
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
    OUT planned_blocks bigint,
    OUT prefetched_blocks bigint
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
           a.planned_blocks,
           a.prefetched_blocks
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
