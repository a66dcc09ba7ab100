--
-- The bgw_prefetch.* configuration parameters: defaults, and validation of
-- bad values.  They exist because the library is preloaded; no CREATE
-- EXTENSION is needed.
--
\set VERBOSITY default

-- Defaults.
SHOW bgw_prefetch.enabled;
SHOW bgw_prefetch.vacuum;
-- "analyze" is a reserved word: quote it.
SHOW bgw_prefetch."analyze";
SHOW bgw_prefetch.clog_writer;
SHOW bgw_prefetch.targets;
SHOW bgw_prefetch.min_relation_size;
SHOW bgw_prefetch.naptime;
SHOW bgw_prefetch.max_relations;
SHOW bgw_prefetch.log_min_duration;
SHOW bgw_prefetch.io_method;
SHOW bgw_prefetch.max_distance;
SHOW bgw_prefetch.tablespace_io_depth;
SHOW bgw_prefetch.clog_writer_delay;
SHOW bgw_prefetch.clog_writer_max_pages;
SHOW bgw_prefetch.read_into;
SHOW bgw_prefetch.shared_buffers_cap;

-- Types, units, contexts and ranges; nothing else has the prefix.
SELECT name, setting, unit, vartype, context, min_val, max_val, enumvals
  FROM pg_settings
 WHERE name LIKE 'bgw\_prefetch.%'
 ORDER BY name COLLATE "C";

-- Reloadable parameters cannot be SET in a session; max_relations needs a
-- restart.
SET bgw_prefetch.enabled = off;
SET bgw_prefetch.tablespace_io_depth = 'pg_default=8';
SET bgw_prefetch.max_relations = 2000;
SET bgw_prefetch.read_into = shared_buffers;

-- The prefix is reserved: a misspelt parameter is an error, not a
-- placeholder.
SET bgw_prefetch.foo = 1;
ALTER SYSTEM SET bgw_prefetch.foo = 1;
SHOW bgw_prefetch.foo;

-- Bad values are refused by ALTER SYSTEM, with the reason.
ALTER SYSTEM SET bgw_prefetch.targets = 'bogus';
ALTER SYSTEM SET bgw_prefetch.io_method = 'aio';
ALTER SYSTEM SET bgw_prefetch.clog_writer = 'sometimes';
ALTER SYSTEM SET bgw_prefetch.naptime = '0';
ALTER SYSTEM SET bgw_prefetch.max_distance = -1;
ALTER SYSTEM SET bgw_prefetch.min_relation_size = -1;
ALTER SYSTEM SET bgw_prefetch.clog_writer_max_pages = 0;
ALTER SYSTEM SET bgw_prefetch.read_into = 'shared';
ALTER SYSTEM SET bgw_prefetch.shared_buffers_cap = 'quarter';
ALTER SYSTEM SET bgw_prefetch.shared_buffers_cap = -0.1;
ALTER SYSTEM SET bgw_prefetch.shared_buffers_cap = 0.95;

-- bgw_prefetch.tablespace_io_depth: syntax, range, duplicates, existence.
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default';
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default=abc';
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default=0';
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default=1001';
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default=4,pg_default=8';
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'nosuchspc=8';
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default=8 x';
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = '=8';

-- Good values are accepted (then removed again from postgresql.auto.conf).
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default=32, pg_global=8';
ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = '';
ALTER SYSTEM SET bgw_prefetch.targets = 'autovacuum';
ALTER SYSTEM SET bgw_prefetch.io_method = 'fadvise';
ALTER SYSTEM SET bgw_prefetch.max_distance = '16MB';
ALTER SYSTEM SET bgw_prefetch.read_into = 'shared_buffers';
ALTER SYSTEM SET bgw_prefetch.shared_buffers_cap = 0.1;
ALTER SYSTEM RESET bgw_prefetch.tablespace_io_depth;
ALTER SYSTEM RESET bgw_prefetch.targets;
ALTER SYSTEM RESET bgw_prefetch.io_method;
ALTER SYSTEM RESET bgw_prefetch.max_distance;
ALTER SYSTEM RESET bgw_prefetch.read_into;
ALTER SYSTEM RESET bgw_prefetch.shared_buffers_cap;

-- Nothing was changed for the running server.
SELECT name, setting, source
  FROM pg_settings
 WHERE name LIKE 'bgw\_prefetch.%' AND source <> 'default'
 ORDER BY name COLLATE "C";
