# The autovacuum forecaster (forecast.c, forecaster.c): a resident resolver in each
# database autovacuum works in.
#
# - it appears (pg_stat_activity, backend_type 'bgw_prefetch forecaster')
#   in the database once autovacuum works there;
# - before autovacuum has vacuumed them, it publishes the tables autovacuum
#   is about to vacuum, in autovacuum's order (pg_class's physical order),
#   with their file size, aggressive or not, and only those: the tables
#   are frozen, updated on 1 % of their pages, and made due by reloptions
#   (scale factor 0, threshold 10); autovacuum cannot vacuum them yet,
#   since a session holds a SHARE UPDATE EXCLUSIVE lock on them (an
#   autovacuum worker skips a locked table, unless its VACUUM is an
#   anti-wraparound one);
# - the monitor starts the scan an autovacuum worker is forecast to make
#   before the worker gets there: t1's VACUUM is made an anti-wraparound
#   one (its own autovacuum_freeze_max_age, 100,000 transactions
#   consumed), which waits for the table's lock instead of skipping it; so
#   its worker waits for the table, the forecast target waits with it, and
#   once the lock is gone the scan is followed and read ahead from its first
#   block, its relation resolved by the forecaster;
#   every other autovacuum is recorded too, followed or not;
# - after the vacuums, no table is forecast as due any more (the statistics
#   are read fresh, not from a cached snapshot);
# - in a database without a relation of min_relation_size (postgres), it
#   exits at once and is not started again for a while;
# - when autovacuum stops, it lingers autovacuum_naptime plus a margin,
#   then exits.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

# autovacuum starts off (bgwp_conf) and is turned on once the tables are
# ready; min_relation_size 4MB: the tables (40MB) are large, every catalog
# of a new database is not
my $node = new_bgwp_node(
	'forecast', conf => q{
autovacuum_naptime = 1s
autovacuum_vacuum_cost_delay = 0
log_autovacuum_min_duration = 0
bgw_prefetch.min_relation_size = 4MB
log_line_prefix = '%m [%p] %b '
});

# no forecaster can have started before this
my $node_started = $node->safe_psql('postgres', 'SELECT now()');
$node->safe_psql('postgres', 'CREATE DATABASE fc');
my $fc_oid =
  $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'fc'");
my $postgres_oid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_database WHERE datname = 'postgres'");

# Four tables of 5120 blocks (8 rows of 900 bytes a block), frozen and
# analyzed (after the INSERT's counts reached the statistics: else they
# would arrive after the ANALYZE and make an ANALYZE due), then a row
# updated on 1 % of the pages (51 dead tuples, above the tables' threshold
# of 10, below the analyze threshold).  t1 is due for an anti-wraparound
# VACUUM once 100,000 transactions have started after its freeze, and that
# VACUUM freezes every row (else the updated rows would keep its
# relfrozenxid, and autovacuum would come back at every naptime).
my @tables = qw(t1 t2 t3 t4);
for my $t (@tables)
{
	my $wraparound =
	  $t eq 't1'
	  ? ', autovacuum_freeze_max_age = 100000, autovacuum_freeze_min_age = 0'
	  : '';
	$node->safe_psql(
		'fc', qq{
CREATE TABLE $t (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = off);
INSERT INTO $t SELECT g, repeat('x', 900) FROM generate_series(1, 40960) g;
SELECT pg_stat_force_next_flush();
VACUUM (FREEZE, ANALYZE) $t;
ALTER TABLE $t SET (autovacuum_enabled = on, autovacuum_vacuum_scale_factor = 0,
                    autovacuum_vacuum_threshold = 10$wraparound);
UPDATE $t SET pad = repeat('y', 900) WHERE id % 800 = 0;
});
}
my %relid = map {
	$_ => $node->safe_psql('fc', "SELECT '$_'::regclass::oid")
} @tables;
my $in_tables = join(',', map { $relid{$_} } @tables);

# 100,000 transaction IDs, one subtransaction each, in a table autovacuum
# leaves alone
$node->safe_psql(
	'fc', q{
CREATE TABLE xids (i int) WITH (autovacuum_enabled = off);
DO $$
BEGIN
	FOR i IN 1 .. 100100 LOOP
		BEGIN
			INSERT INTO xids VALUES (i);
		EXCEPTION WHEN OTHERS THEN
			RAISE;
		END;
	END LOOP;
END
$$;
});

# autovacuum's order: pg_class's physical order
my $expected_order = $node->safe_psql('fc',
	"SELECT string_agg('public.' || relname, ',' ORDER BY ctid) FROM pg_class
	  WHERE oid IN ($in_tables)");

# Autovacuum may try the tables, but cannot vacuum them yet: it skips
# t2 to t4, and waits for t1.
my $locker = $node->background_psql('fc');
$locker->query_safe(
	'BEGIN; LOCK TABLE t1, t2, t3, t4 IN SHARE UPDATE EXCLUSIVE MODE');

$node->safe_psql('postgres',
	'ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf()');

ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE backend_type = 'bgw_prefetch forecaster' AND datname = 'fc'"),
	'a forecaster runs in the database autovacuum works in');

# The four tables, due for VACUUM, in autovacuum's order, and nothing else.
ok( $node->poll_query_until(
		'postgres', "
SELECT string_agg(relname, ',' ORDER BY ordinal)
  FROM bgw_prefetch_forecast()
 WHERE datid = $fc_oid AND needs_vacuum AND NOT done",
		$expected_order),
	'the tables due are forecast in pg_class order');
is( $node->safe_psql(
		'postgres', "
SELECT count(*) FROM bgw_prefetch_forecast()
 WHERE datid = $fc_oid AND relid NOT IN ($in_tables)"),
	'0',
	'nothing else is forecast');
for my $t (@tables)
{
	# t1's anti-wraparound VACUUM is not aggressive: its freeze table age
	# (vacuum_freeze_table_age) is far above its age, as vacuumlazy.c says
	# ("automatic vacuum to prevent wraparound", not "aggressive").
	my $expected = $t eq 't1' ? 'f|t|normal|t|t' : 'f|f|normal|t|t';
	is( $node->safe_psql(
			'postgres', "
SELECT needs_analyze, wraparound, skip_mode, blocks >= 5120, io_depth > 0
  FROM bgw_prefetch_forecast()
 WHERE datid = $fc_oid AND relid = $relid{$t}"),
		$expected,
		"$t is resolved: ANALYZE due or not, anti-wraparound or not, its size, a depth");
}
is( $node->safe_psql(
		'fc', "
SELECT count(*) FROM pg_stat_user_tables
 WHERE relid IN ($in_tables) AND autovacuum_count > 0"),
	'0',
	'forecast before autovacuum vacuumed any of them');

# A worker waits for t1's lock, and the monitor has started the scan it
# is forecast to make there.
ok( $node->poll_query_until(
		'postgres', "
SELECT count(*) = 1
  FROM pg_locks l JOIN pg_stat_activity a USING (pid)
       JOIN bgw_prefetch_activity() p USING (pid)
 WHERE a.backend_type = 'autovacuum worker' AND NOT l.granted
   AND l.database = $fc_oid AND l.relation = $relid{t1}
   AND p.relid = $relid{t1}"),
	'the worker waiting for t1 has its forecast scan started');

# Let autovacuum vacuum them.
$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
$locker->query_safe('COMMIT');
$locker->quit;

ok( $node->poll_query_until(
		'fc', "
SELECT count(*) = 4 FROM pg_stat_user_tables
 WHERE relid IN ($in_tables) AND autovacuum_count > 0"),
	'autovacuum vacuumed the four tables');
# Each is recorded, whether or not the monitor saw its scan (the other
# three may take a millisecond each).
ok( $node->poll_query_until(
		'postgres', "
SELECT count(*) = 4 FROM bgw_prefetch_stats()
 WHERE datid = $fc_oid AND relid IN ($in_tables) AND command = 'vacuum' AND scans >= 1"),
	'every autovacuum of a forecast table is recorded');
is( $node->safe_psql(
		'postgres', "
SELECT scans, joined_scans, prefetched_scans, blocks_read > 0, blocks_prefetched > 0
  FROM bgw_prefetch_stats()
 WHERE datid = $fc_oid AND relid = $relid{t1} AND command = 'vacuum'"),
	'1|0|1|t|t',
	't1, forecast while its worker waited, is read ahead from its first block');
ok( $node->poll_query_until(
		'postgres', "
SELECT count(*) = 0 FROM bgw_prefetch_forecast()
 WHERE datid = $fc_oid AND needs_vacuum AND NOT done"),
	'after the vacuums no table is forecast as due');

# The postgres database has no relation of 4MB: its forecaster left at
# once, and was not started again at autovacuum's later visits (the fc
# steps above took several autovacuum_naptime) before its back-off of 60 s
# was over: at most one computation per 60 s since the node started (a
# bound that holds however slowly the steps ran).
ok( $node->poll_query_until(
		'postgres', "
SELECT last_exit = 'no relation of min_relation_size' AND state = 'none'
  FROM bgw_prefetch_forecasters() WHERE datid = $postgres_oid"),
	'no forecaster stays in a database without a large relation');
my ($computations, $allowed) = split /\|/, $node->safe_psql(
	'postgres', "
SELECT computations, 1 + floor(extract(epoch FROM now() - '$node_started') / 60)
  FROM bgw_prefetch_forecasters() WHERE datid = $postgres_oid");
cmp_ok($computations, '<=', $allowed,
	"and none was started there again within its back-off ($computations computations)");

# DROP DATABASE is not held up by a forecaster in the database: it waits
# up to 5 seconds for the other sessions to leave, the forecaster leaves
# when it sees the lock DROP DATABASE holds.
ok( $node->poll_query_until(
		'postgres', "
SELECT count(*) = 1 FROM pg_stat_activity
 WHERE backend_type = 'bgw_prefetch forecaster' AND datname = 'fc'"),
	'the forecaster is still in fc');
$node->safe_psql('postgres', 'DROP DATABASE fc');
is( $node->safe_psql(
		'postgres',
		"SELECT last_exit FROM bgw_prefetch_forecasters() WHERE datid = $fc_oid"),
	'database wanted alone',
	'the forecaster left for DROP DATABASE');

# Autovacuum stops: a forecaster lingers, then leaves.
$node->safe_psql('postgres', 'CREATE DATABASE fc2');
$node->safe_psql('fc2',
	"CREATE TABLE big AS SELECT g AS id, repeat('x', 900) AS pad FROM generate_series(1, 8000) g"
);
my $fc2_oid =
  $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'fc2'");
ok( $node->poll_query_until(
		'postgres', "
SELECT count(*) = 1 FROM pg_stat_activity
 WHERE backend_type = 'bgw_prefetch forecaster' AND datname = 'fc2'"),
	'a forecaster runs in fc2');
$node->safe_psql('postgres',
	'ALTER SYSTEM SET autovacuum = off; SELECT pg_reload_conf()');
ok( $node->poll_query_until(
		'postgres', "
SELECT count(*) = 0 FROM pg_stat_activity
 WHERE backend_type = 'bgw_prefetch forecaster'"),
	'the forecaster exits once autovacuum is idle');
is( $node->safe_psql(
		'postgres',
		"SELECT last_exit FROM bgw_prefetch_forecasters() WHERE datid = $fc2_oid"),
	'autovacuum idle',
	'and says why');

no_crash_ok($node, 'no crash');
$node->stop;
done_testing();
