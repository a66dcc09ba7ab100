# The monitor end to end, with default polling: a manual VACUUM and a
# manual ANALYZE, each slowed down with cost-based delay so that they last a
# few seconds, are each seen exactly once, counted in pg_stat_prefetch with
# plausible figures and logged; an autovacuum of the same table is seen by
# itself; bgw_prefetch.enabled = off applied by SIGHUP stops the watching
# without stopping the monitor.  A second server, which does not preload
# the library, shows the warnings and errors a user gets there.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Default polling (bgw_prefetch.naptime) and autovacuum on: not the usual
# test settings.
my $node = new_bgwp_node(
	'monitor',
	preload_only => 1,
	conf => q{
bgw_prefetch.min_relation_size = '1MB'
bgw_prefetch.log_min_duration = 0
autovacuum_naptime = 1s
});

# Both workers run under their own backend_type.
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(DISTINCT backend_type) = 2 FROM pg_stat_activity
		  WHERE backend_type IN ('bgw_prefetch monitor', 'bgw_prefetch clog writer')"),
	'monitor and CLOG writer are running');
my $monitor_pid = monitor_pid($node);
isnt($monitor_pid, '',
	'bgw_prefetch_status() names the monitor process pg_stat_activity shows');

# About 5,000 blocks (40 MB).  Autovacuum stays away from it until the
# autovacuum part below, so that every scan of it is one of ours.
$node->safe_psql(
	'postgres', q{
CREATE TABLE t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 160000) g;
});
my $nblocks = $node->safe_psql('postgres', "SELECT pg_relation_size('t') / 8192");
cmp_ok($nblocks, '>=', 4000, "table t has $nblocks blocks");

# Cost-based delay makes each scan last a few seconds, long enough for the
# monitor (which polls every bgw_prefetch.naptime while idle) to see it.
my $slow = "SET vacuum_cost_delay = '2ms'; SET vacuum_cost_limit = 10;";

# The query for one command's row of t.
sub stats_row
{
	my ($command) = @_;
	return $node->safe_psql(
		'postgres', qq{
SELECT scans, blocks_read > 0, total_time > 0,
       read_rate > 0 AND read_rate < 10000,
       datname = current_database(), relname,
       last_scan IS NOT NULL AND last_scan <= now()
  FROM pg_stat_prefetch
 WHERE relid = 't'::regclass AND command = '$command'});
}

# ---- manual VACUUM, then manual ANALYZE (which reads the whole table: it
# is smaller than the sample)
foreach my $command ('VACUUM', 'ANALYZE')
{
	my $cmd = lc $command;
	my $offset = -s $node->logfile;
	my $t0 = time;
	$node->safe_psql('postgres', "$slow $command t;");
	note("$command took about " . (time - $t0) . ' s');
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch WHERE relid = 't'::regclass AND command = '$cmd'"),
		"$command was counted");
	is(stats_row($cmd), '1|t|t|t|t|t|t',
		"pg_stat_prefetch: one $cmd scan of t with blocks, time, a plausible rate and names");
	# the $command scan is logged
	$node->wait_for_log(qr/LOG:  bgw_prefetch: $cmd of "public\.t"/, $offset);
}
is(stats_row('vacuum'), '1|t|t|t|t|t|t', 'the ANALYZE did not count as a vacuum');

is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_prefetch_activity WHERE relid = 't'::regclass"),
	'0', 'nothing left in pg_stat_prefetch_activity');

# ---- autovacuum: low thresholds, then enough dead rows
my $offset = -s $node->logfile;
$node->safe_psql(
	'postgres', q{
ALTER TABLE t SET (autovacuum_enabled = on,
                   autovacuum_vacuum_scale_factor = 0,
                   autovacuum_vacuum_threshold = 100,
                   autovacuum_vacuum_cost_delay = 2,
                   autovacuum_vacuum_cost_limit = 10,
                   autovacuum_analyze_scale_factor = 0,
                   autovacuum_analyze_threshold = 1000000000);
UPDATE t SET id = id WHERE id % 160 = 0;
});
ok( $node->poll_query_until(
		'postgres',
		"SELECT scans = 2 FROM pg_stat_prefetch WHERE relid = 't'::regclass AND command = 'vacuum'"),
	'an autovacuum of t was counted by itself');
# the autovacuum scan is logged as automatic
$node->wait_for_log(qr/LOG:  bgw_prefetch: automatic vacuum of "public\.t"/, $offset);
$node->safe_psql('postgres', 'ALTER TABLE t SET (autovacuum_enabled = off)');

# ---- bgw_prefetch.enabled = off, applied by SIGHUP
$node->safe_psql(
	'postgres', q{
CREATE TABLE t2 (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO t2 SELECT g, repeat('x', 200) FROM generate_series(1, 60000) g;
});
$node->safe_psql('postgres', 'ALTER SYSTEM SET bgw_prefetch.enabled = off');
ok(reload_monitor($node), 'enabled = off: the monitor read its configuration again');
is($node->safe_psql('postgres', 'SHOW bgw_prefetch.enabled'), 'off', 'enabled = off after reload');
$offset = -s $node->logfile;
$node->safe_psql('postgres', "$slow VACUUM t2;");
# a monitor that served it anyway would count it once it is idle
ok(wait_monitor_idle($node), 'enabled = off: the monitor is idle after the VACUUM of t2');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_prefetch WHERE relid = 't2'::regclass"),
	'0', 'with enabled = off the VACUUM of t2 is not watched');
ok(!$node->log_contains(qr/bgw_prefetch: vacuum of "public\.t2"/, $offset),
	'and not logged');
is(monitor_pid($node), $monitor_pid, 'the monitor kept running through the reload');

# Enabled again.  t2's blocks are all-visible now, so make this VACUUM read
# (and pay a delay for) every one of them.
$node->safe_psql('postgres', 'ALTER SYSTEM RESET bgw_prefetch.enabled');
ok(reload_monitor($node), 'enabled again: the monitor read its configuration again');
$node->safe_psql('postgres',
	"SET vacuum_cost_delay = '2ms'; SET vacuum_cost_limit = 1; VACUUM (DISABLE_PAGE_SKIPPING) t2;");
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_prefetch WHERE relid = 't2'::regclass AND command = 'vacuum'"),
	'enabled again: the next VACUUM of t2 is watched');

# ---- bgw_prefetch.cost_limited_depth (-1 by default: no limit).  At 0, a
# VACUUM that sleeps most of its time in its cost-based delay is
# cost-limited: nothing is read ahead of it while it advances; at 1
# (reload), one read at a time; at -1 again, it is read ahead for like any
# other scan.
{
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', 'ALTER SYSTEM SET bgw_prefetch.cost_limited_depth = 0');
	$node->reload;
	my ($s, $pid) = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) t', '2ms', 2);
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
			  WHERE relid = 't'::regclass AND state = 'cost-limited'"),
		'cost_limited_depth: a VACUUM that mostly sleeps in its cost delay is cost-limited');
	# the reads issued before complete; then nothing more while it advances
	ok( $node->poll_query_until(
			'postgres',
			"SELECT reads_in_flight = 0 FROM pg_stat_prefetch_activity
			  WHERE relid = 't'::regclass"),
		'cost_limited_depth = 0: the reads in flight complete');
	my ($prefetched, $block) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT blocks_prefetched, consumer_block FROM pg_stat_prefetch_activity
		  WHERE relid = 't'::regclass");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT consumer_block > $block + 64 FROM pg_stat_prefetch_activity
			  WHERE relid = 't'::regclass"),
		'cost_limited_depth = 0: the VACUUM advances');
	is( $node->safe_psql(
			'postgres',
			"SELECT blocks_prefetched || '|' || state FROM pg_stat_prefetch_activity
			  WHERE relid = 't'::regclass"),
		"$prefetched|cost-limited",
		'cost_limited_depth = 0: nothing was read ahead of it meanwhile');

	$node->safe_psql('postgres', 'ALTER SYSTEM SET bgw_prefetch.cost_limited_depth = 1');
	$node->reload;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT blocks_prefetched > $prefetched FROM pg_stat_prefetch_activity
			  WHERE relid = 't'::regclass AND state = 'cost-limited'"),
		'cost_limited_depth = 1 at reload: it is read ahead for again');
	# sampled while it stays so (20 looks, each a new psql): one read in
	# flight at most
	my ($inflight, $samples) = (0, 0);
	for (1 .. 20)
	{
		my $r = $node->safe_psql('postgres',
			"SELECT reads_in_flight FROM pg_stat_prefetch_activity
			  WHERE relid = 't'::regclass AND state = 'cost-limited'");
		next if $r eq '';
		$samples++;
		$inflight = $r if $r > $inflight;
	}
	cmp_ok($samples, '>', 0, "cost_limited_depth = 1: still cost-limited when looked at ($samples of 20)");
	cmp_ok($inflight, '<=', 1, "cost_limited_depth = 1: at most 1 read in flight ($inflight)");
	$node->safe_psql('postgres', 'ALTER SYSTEM RESET bgw_prefetch.cost_limited_depth');
	$node->reload;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
			  WHERE relid = 't'::regclass AND state = 'prefetching'"),
		'cost_limited_depth = -1 (the default) at reload: the same VACUUM is read ahead for like any other');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	quit_session($s);
	ok( $node->wait_for_log(
			qr/bgw_prefetch: vacuum of "public\.t" .*\n.*\n.*\n.*\n\s*cost delay: [0-9.]+ s \(sampled\), cost-limited for [0-9.]+ s/,
			$offset),
		'cost_limited_depth: the LOG line gives the cost delay and the time cost-limited');
	ok( $node->poll_query_until(
			'postgres',
			"SELECT cost_delay_time > 0 AND cost_limited_time > 0
			        AND cost_limited_time <= total_time
			   FROM pg_stat_prefetch WHERE relid = 't'::regclass AND command = 'vacuum'"),
		'cost_limited_depth: pg_stat_prefetch shows the cost delay and the time cost-limited');
}

$node->stop;

# ---- a server without the library in shared_preload_libraries
my $plain = PostgreSQL::Test::Cluster->new('not_preloaded');
$plain->init;
$plain->start;

my ($ret, $stdout, $stderr) = $plain->psql('postgres', "LOAD 'bgw_prefetch'");
is($ret, 0, 'LOAD succeeds');
like(
	$stderr,
	qr/WARNING:  bgw_prefetch is not active: it must be loaded via shared_preload_libraries/,
	'LOAD warns that the library must be preloaded');

($ret, $stdout, $stderr) = $plain->psql('postgres', 'CREATE EXTENSION bgw_prefetch');
is($ret, 0, 'CREATE EXTENSION works without preloading');

foreach my $query (
	'SELECT * FROM pg_stat_prefetch',
	'SELECT * FROM pg_stat_prefetch_activity',
	'SELECT * FROM pg_stat_prefetch_clog',
	'SELECT * FROM bgw_prefetch_status()',
	'SELECT pg_stat_prefetch_reset()')
{
	($ret, $stdout, $stderr) = $plain->psql('postgres', $query);
	isnt($ret, 0, "$query fails");
	like(
		$stderr,
		qr/ERROR:  bgw_prefetch must be loaded via shared_preload_libraries/,
		"$query says the library must be preloaded");
}
is($plain->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'bgw_prefetch%'"),
	'0', 'no bgw_prefetch workers without preloading');

$plain->stop;
done_testing();
