# Bad input where pg_regress cannot go: configuration files read at reload
# and at start, and servers with and without the library preloaded.
# (ALTER SYSTEM's rejections and the privileges of the SQL functions are
# in sql/guc.sql and sql/privileges.sql.)
#
# - A bad bgw_prefetch.* value in postgresql.conf followed by a reload
#   leaves the previous value in force, in the backends (SHOW) and in the
#   monitor and the resolvers (what they do), and the server log says what
#   is wrong; good values next to it are applied.
# - A tablespace name that does not exist cannot be checked at reload: it is
#   accepted and ignored where used.
# - Bad values at server start: the server starts with the defaults and
#   says which values it ignored.
# - A few tablespace_io_depth spellings ALTER SYSTEM must accept or refuse
#   beyond those of the regression test.
# - An extension created while the library was not preloaded works once it
#   is; a server that stops preloading it gives clean errors, no crash.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node(
	'bad_input', conf => q{
log_line_prefix = '%m [%p] %b '
include_if_exists = 'bgwp_test.conf'
});
create_frozen_table($node, 'postgres', 'big', 24000);
my $monitor = monitor_pid($node);

# Replace the included file and reload; returns the log offset before.
sub reload_with
{
	my ($contents) = @_;
	my $offset = -s $node->logfile;
	my $file = $node->data_dir . '/bgwp_test.conf';
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $contents;
	close $fh;
	$node->reload;
	# the postmaster logs what it made of the file; give it a moment
	$node->wait_for_log(qr/received SIGHUP, reloading configuration files/, $offset);
	return $offset;
}

sub show
{
	my ($name) = @_;
	return $node->safe_psql('postgres', "SHOW $name");
}

# The io_depth and its source the monitor shows for a VACUUM of big.
sub served_depth
{
	my $s = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) big', '4ms');
	my $got = '';
	if ($node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
			  WHERE relid = 'big'::regclass AND state = 'prefetching'"))
	{
		$got = $node->safe_psql('postgres',
			"SELECT io_depth || ' ' || io_depth_source FROM pg_stat_prefetch_activity
			  WHERE relid = 'big'::regclass");
	}
	$s->quit;
	return $got;
}

# ---- reload: bad values keep the previous ones
my @cases = (
	# parameter, good value, SHOW of it, bad value, what the log must say
	[
		'bgw_prefetch.tablespace_io_depth', 'pg_default=5', 'pg_default=5',
		'pg_default', qr/invalid value for parameter "bgw_prefetch.tablespace_io_depth": "pg_default"\n.*DETAIL:  Expected "tablespace=depth" at ""\.\n.*HINT:  Write a comma-separated list/
	],
	[
		'bgw_prefetch.tablespace_io_depth', 'pg_default=5', 'pg_default=5',
		'pg_default=0', qr/invalid value for parameter "bgw_prefetch.tablespace_io_depth": "pg_default=0"\n.*DETAIL:  Depth 0 of tablespace "pg_default" is out of range\.\n.*HINT:  Depths must be between 1 and 1000\./
	],
	[
		'bgw_prefetch.tablespace_io_depth', 'pg_default=5', 'pg_default=5',
		'pg_default=5000', qr/DETAIL:  Depth 5000 of tablespace "pg_default" is out of range/
	],
	[
		'bgw_prefetch.tablespace_io_depth', 'pg_default=5', 'pg_default=5',
		'pg_default=-3', qr/DETAIL:  Depth -3 of tablespace "pg_default" is out of range/
	],
	[
		'bgw_prefetch.tablespace_io_depth', 'pg_default=5', 'pg_default=5',
		'pg_default=4, pg_default=8', qr/DETAIL:  Tablespace "pg_default" is listed more than once\./
	],
	[
		'bgw_prefetch.tablespace_io_depth', 'pg_default=5', 'pg_default=5',
		'pg_default=eight', qr/DETAIL:  Depth of tablespace "pg_default" is not an integer\./
	],
	[
		'bgw_prefetch.targets', 'autovacuum', 'autovacuum',
		'bogus', qr/invalid value for parameter "bgw_prefetch.targets": "bogus"\n.*HINT:  Available values: autovacuum, all\./
	],
	[
		'bgw_prefetch.io_method', 'fadvise', 'fadvise',
		'aio', qr/invalid value for parameter "bgw_prefetch.io_method": "aio"\n.*HINT:  Available values: io_uring, fadvise\./
	],
	# PostgreSQL 17 writes the range with its unit: (10 ms .. 3600000 ms)
	[
		'bgw_prefetch.naptime', '30ms', '30ms',
		'0', qr/0 ms is outside the valid range for parameter "bgw_prefetch.naptime" \(10( ms)? \.\. 3600000( ms)?\)/
	],
	[
		'bgw_prefetch.max_distance', '1000', '8000kB',
		'-1', qr/-1 8kB is outside the valid range for parameter "bgw_prefetch.max_distance"|invalid value for parameter "bgw_prefetch.max_distance": "-1"/
	],
	[
		'bgw_prefetch.max_distance', '1000', '8000kB',
		'100GB', qr/is outside the valid range for parameter "bgw_prefetch.max_distance"/
	],
	[
		'bgw_prefetch.read_into', 'shared_buffers', 'shared_buffers',
		'buffers', qr/invalid value for parameter "bgw_prefetch.read_into": "buffers"\n.*HINT:  Available values: os_cache, shared_buffers\./
	],
	[
		'bgw_prefetch.shared_buffers_cap', '0.1', '0.1',
		'10%', qr/invalid value for parameter "bgw_prefetch.shared_buffers_cap": "10%"/
	],
	[
		'bgw_prefetch.shared_buffers_cap', '0.1', '0.1',
		'1.5', qr/1.5 is outside the valid range for parameter "bgw_prefetch.shared_buffers_cap" \(0 \.\. 0.9\)/
	],
	[
		'bgw_prefetch.enabled', 'on', 'on',
		'maybe', qr/parameter "bgw_prefetch.enabled" requires a Boolean value/
	],
	[
		'bgw_prefetch.log_min_duration', '0', '0',
		'-2', qr/-2 ms is outside the valid range for parameter "bgw_prefetch.log_min_duration"/
	]);

foreach my $case (@cases)
{
	my ($name, $good, $good_show, $bad, $complaint) = @$case;
	reload_with("$name = '$good'\n");
	is(show($name), $good_show, "$name = '$good' applied at reload");
	my $offset = reload_with("$name = '$bad'\n");
	# the reload reports errors
	$node->wait_for_log(
		qr/configuration file ".*bgwp_test.conf" contains errors; unaffected changes were applied/,
		$offset);
	like(slurp_file($node->logfile, $offset), $complaint, "$name = '$bad': the log says why");
	is(show($name), $good_show, "$name = '$bad': '$good_show' stays in force");
}

# What the workers use after a bad reload: the monitor keeps its I/O method,
# resolvers (started by the postmaster, which kept the previous value) the
# previous depth map.
reload_with("bgw_prefetch.io_method = 'fadvise'\nbgw_prefetch.tablespace_io_depth = 'pg_default=5'\n");
ok( $node->poll_query_until(
		'postgres', "SELECT io_method = 'fadvise' FROM bgw_prefetch_status()"),
	'io_method fadvise in force in the monitor');
my $offset = reload_with(
	"bgw_prefetch.io_method = 'aio'\nbgw_prefetch.tablespace_io_depth = 'pg_default=0'\nbgw_prefetch.naptime = '40ms'\n"
);
# bad io_method and depth with a good naptime: errors reported
$node->wait_for_log(qr/contains errors; unaffected changes were applied/, $offset);
is(show('bgw_prefetch.naptime'), '40ms', 'the good naptime next to them was applied');
is(served_depth(), '5 bgw_prefetch.tablespace_io_depth',
	'a VACUUM is served with the depth 5 still in force');
# The monitor has read the file once that VACUUM's target is gone: the
# postmaster signalled it before it started the VACUUM's backend, the loop
# that showed the target prefetching may have begun before the signal, but
# the target ends in a later loop, and each loop begins by reading the file.
ok(wait_monitor_idle($node), 'the VACUUM\'s target ended');
is($node->safe_psql('postgres', 'SELECT io_method FROM bgw_prefetch_status()'),
	'fadvise', 'the monitor kept io_method fadvise');
is(monitor_pid($node), $monitor, 'the monitor went through the bad reloads');

# An unknown tablespace name cannot be checked at reload: accepted, and
# ignored by the resolvers.
$offset = reload_with("bgw_prefetch.tablespace_io_depth = 'nosuchspc=8'\n");
is(show('bgw_prefetch.tablespace_io_depth'), 'nosuchspc=8',
	'an unknown tablespace name is accepted at reload');
# the server's maintenance_io_concurrency: its default is 10 up to 17, 16
# from 18
my $server_depth = show('maintenance_io_concurrency');
is(served_depth(), "$server_depth maintenance_io_concurrency",
	"and ignored: the VACUUM gets maintenance_io_concurrency ($server_depth)");
unlike(slurp_file($node->logfile, $offset), qr/ERROR|FATAL/, 'no error about it');

# ALTER SYSTEM spellings beyond the regression test's
foreach my $ok ('  pg_default = 8 ,pg_global=2  ', 'pg_default=08', 'pg_default=1000')
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = '$ok'");
	is($ret, 0, "ALTER SYSTEM accepts tablespace_io_depth '$ok'") or diag($stderr);
}
foreach my $bad (
	[ 'pg_default=8,', qr/Expected "tablespace=depth" at ""/ ],
	[ 'pg_default=8;pg_global=2', qr/Unexpected ";pg_global=2" after the depth of tablespace "pg_default"/ ],
	[ 'pg_default=8 pg_global=2', qr/Unexpected "pg_global=2" after the depth of tablespace "pg_default"/ ],
	[ 'pg_default=99999999999999999999', qr/Depth of tablespace "pg_default" is not an integer|out of range/ ],
	[ ('a' x 70) . '=4', qr/Tablespace name "a{20}\.\.\." is too long/ ],
	[ 'PG_DEFAULT=4', qr/Tablespace "PG_DEFAULT" does not exist/ ])
{
	my ($value, $detail) = @$bad;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = '$value'");
	isnt($ret, 0, "ALTER SYSTEM refuses tablespace_io_depth '$value'");
	like($stderr, qr/invalid value for parameter "bgw_prefetch.tablespace_io_depth"/,
		"'$value': names the parameter");
	like($stderr, $detail, "'$value': says what is wrong");
}
$node->safe_psql('postgres', 'ALTER SYSTEM RESET ALL');
reload_with('');

# ---- bad values at server start
$node->stop;
open my $fh, '>', $node->data_dir . '/bgwp_test.conf' or die $!;
print $fh qq{bgw_prefetch.io_method = 'aio'
bgw_prefetch.tablespace_io_depth = 'pg_default=0'
bgw_prefetch.max_relations = 50
bgw_prefetch.naptime = '5ms'
};
close $fh;
$offset = -s $node->logfile;
$node->start;
my $log = slurp_file($node->logfile, $offset);
like($log, qr/invalid value for parameter "bgw_prefetch.io_method": "aio"/,
	'start: the bad io_method is reported');
like($log, qr/invalid value for parameter "bgw_prefetch.tablespace_io_depth": "pg_default=0"/,
	'start: the bad tablespace_io_depth is reported');
like($log, qr/50 is outside the valid range for parameter "bgw_prefetch.max_relations" \(100 \.\. 1000000\)/,
	'start: the bad max_relations is reported');
like($log, qr/5 ms is outside the valid range for parameter "bgw_prefetch.naptime"/,
	'start: the bad naptime is reported');
is(show('bgw_prefetch.io_method'), 'io_uring', 'start: io_method has its default');
is(show('bgw_prefetch.tablespace_io_depth'), '', 'start: tablespace_io_depth has its default');
is($node->safe_psql('postgres', 'SELECT max_relations FROM bgw_prefetch_status()'),
	'1000', 'start: the statistics hash has the default size');
is(show('bgw_prefetch.naptime'), '200ms', 'start: naptime has its default');
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch monitor'"),
	'start: the monitor runs');
unlink $node->data_dir . '/bgwp_test.conf';
$node->stop;

# ---- the library preloaded only after CREATE EXTENSION, and then no more
my $late = PostgreSQL::Test::Cluster->new('late_preload');
$late->init;
$late->append_conf('postgresql.conf', "autovacuum = off\nlog_line_prefix = '%m [%p] %b '\n");
$late->start;
my ($ret, $stdout, $stderr) = $late->psql('postgres', 'CREATE EXTENSION bgw_prefetch');
is($ret, 0, 'not preloaded: CREATE EXTENSION succeeds');
like($stderr, qr/WARNING:  bgw_prefetch is not active: it must be loaded via shared_preload_libraries/,
	'not preloaded: CREATE EXTENSION warns');
like($stderr, qr/HINT:  Add bgw_prefetch to shared_preload_libraries/, 'not preloaded: with a hint');
$late->safe_psql(
	'postgres', q{
CREATE TABLE big (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = off);
INSERT INTO big SELECT g, repeat('x', 900) FROM generate_series(1, 24000) g;
});
($ret, $stdout, $stderr) = $late->psql('postgres', 'LOAD \'bgw_prefetch\'; VACUUM big; ANALYZE big');
is($ret, 0, 'not preloaded: VACUUM and ANALYZE in a session that loaded the library work');
($ret, $stdout, $stderr) = $late->psql('postgres',
	"SET bgw_prefetch.naptime = '1s'; SHOW bgw_prefetch.naptime");
is($ret, 0, 'not preloaded: bgw_prefetch.* are plain placeholders');

# preloaded from now on, with the usual test settings (autovacuum = off,
# set already, comes again)
$late->append_conf('postgresql.conf', bgwp_conf());
$late->restart;
ok( $late->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch monitor'"),
	'preloaded later: the monitor runs');
$late->safe_psql('postgres',
	"SET vacuum_cost_delay = '4ms'; SET vacuum_cost_limit = 20; VACUUM (DISABLE_PAGE_SKIPPING) big;");
ok( $late->poll_query_until(
		'postgres',
		"SELECT blocks_prefetched > 0 FROM pg_stat_prefetch WHERE relid = 'big'::regclass AND command = 'vacuum'"),
	'preloaded later: the extension created before works, the VACUUM was prefetched');

# and no longer preloaded
$late->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$late->restart;
foreach my $query (
	'SELECT count(*) FROM pg_stat_prefetch',
	'SELECT count(*) FROM pg_stat_prefetch_activity',
	'SELECT * FROM bgw_prefetch_status()',
	'SELECT pg_stat_prefetch_reset()')
{
	($ret, $stdout, $stderr) = $late->psql('postgres', $query);
	like($stderr, qr/ERROR:  bgw_prefetch must be loaded via shared_preload_libraries/,
		"no longer preloaded: $query errors cleanly");
}
($ret, $stdout, $stderr) = $late->psql('postgres',
	'SET bgw_prefetch.naptime = \'1s\'; VACUUM big');
is($ret, 0, 'no longer preloaded: VACUUM works, leftover settings are placeholders');
($ret, $stdout, $stderr) = $late->psql('postgres', 'DROP EXTENSION bgw_prefetch');
is($ret, 0, 'no longer preloaded: DROP EXTENSION works');
no_crash_ok($late, 'no crash on the late-preload server');
$late->stop;

no_crash_ok($node, 'no crash on the main server');
unlike(slurp_file($node->logfile), qr/bgw_prefetch (monitor|resolver|clog writer) (ERROR|FATAL)/,
	'no error from a bgw_prefetch process');

done_testing();
