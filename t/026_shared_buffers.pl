# bgw_prefetch.read_into = shared_buffers: a slowed VACUUM is served by a
# buffer loader that reads the planned blocks into shared buffers ahead of
# it, never more than bgw_prefetch.shared_buffers_cap ahead, in short
# transactions; VACUUM prunes as much as without it; and the loader
# never stands in anyone's way: DROP TABLE, TRUNCATE, VACUUM FULL and DROP
# DATABASE issued while it loads make it let go at once, and no buffer of
# the old files survives them.
#
# DDL on a table waits for the VACUUM's own ShareUpdateExclusiveLock anyway,
# so each case checks that the loader lets go (logs it, and leaves) while
# the VACUUM is still running, that the DDL then waits for the VACUUM's
# backend only, then cancels the VACUUM and checks that the DDL completes.
# DROP DATABASE without FORCE counts the backends still connected: it must
# find the VACUUM's session only; WITH (FORCE) it must succeed (it gives up,
# with an error, if a process other than a backend stays connected).
# Nothing is timed: each wait is for an event, bounded by the framework's
# default timeout.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = new_bgwp_node(
	'shared_buffers', conf => q{
shared_buffers = 128MB
bgw_prefetch.read_into = shared_buffers
bgw_prefetch.shared_buffers_cap = 0.02
});
$node->safe_psql('postgres', 'CREATE EXTENSION pg_buffercache');
my $nbuffers = $node->safe_psql('postgres',
	"SELECT setting::int FROM pg_settings WHERE name = 'shared_buffers'");
my $cap_blocks = int(0.02 * $nbuffers);

# 64,000 rows of 900 bytes: 8,000 blocks, all frozen.
create_frozen_table($node, 'postgres', 'sb', 64000);

# The relation's main-fork blocks in shared buffers, by file: an SQL
# expression (for poll_query_until()), and its value now.
sub buffered_blocks_sql
{
	my ($db, $filenode, $where) = @_;
	$where //= 'true';
	return "(SELECT count(*) FROM pg_buffercache
	          WHERE relfilenode = $filenode AND relforknumber = 0
	            AND reldatabase = (SELECT oid FROM pg_database WHERE datname = '$db')
	            AND $where)";
}

sub buffered_blocks
{
	return $node->safe_psql('postgres', 'SELECT ' . buffered_blocks_sql(@_));
}

sub filenode
{
	my ($db, $table) = @_;
	return $node->safe_psql($db, "SELECT pg_relation_filenode('$table')");
}

# Buffer loaders running: an SQL expression.
sub loader_running_sql
{
	return "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch buffer loader')";
}



# Evict the table from shared buffers (and the node's other caches).
$node->restart;

# ---- a slowed VACUUM is served from shared buffers, within the cap ----

my $sb_node = filenode('postgres', 'sb');
my $reads_before = $node->safe_psql('postgres',
	"SELECT heap_blks_read FROM pg_statio_user_tables WHERE relname = 'sb'");
my ($s, $vacuum_pid) =
  start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) sb', '10ms', 10);

my ($samples, $ahead_max, $ahead_seen, $xact_age_max) = (0, 0, 0, 0);
while (1)
{
	# the loader's transaction is a short one, however long the scan
	my $xact_age = $node->safe_psql('postgres',
		"SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)), 0)
		   FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch buffer loader'");
	$xact_age_max = $xact_age if $xact_age > $xact_age_max;
	# sb's own scan: the VACUUM goes on to sb's TOAST table, whose scan
	# shows with heap_blks_scanned 0 while sb's blocks are all buffered
	my $running = $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_progress_vacuum
		  WHERE pid = $vacuum_pid AND relid = 'sb'::regclass AND phase = 'scanning heap'");
	last unless $running;
	# buffers first, then the position: the scan only moves forward, so
	# blocks ahead of the later position were ahead of it when sampled
	my $blocks = $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(relblocknumber::text, ','), '') FROM pg_buffercache
		  WHERE relfilenode = $sb_node AND relforknumber = 0
		    AND reldatabase = (SELECT oid FROM pg_database WHERE datname = 'postgres')");
	my $scanned = $node->safe_psql('postgres',
		"SELECT coalesce(max(heap_blks_scanned), -1) FROM pg_stat_progress_vacuum
		  WHERE pid = $vacuum_pid AND relid = 'sb'::regclass");
	last if $scanned < 0;
	my $ahead = grep { $_ > $scanned } split(/,/, $blocks);
	$samples++;
	$ahead_max = $ahead if $ahead > $ahead_max;
	$ahead_seen++ if $ahead > 0;
	usleep(100_000);
}
$s->query_safe('SELECT pg_stat_force_next_flush()');    # the VACUUM is over
$s->query_safe('SELECT 1');
quit_session($s);
cmp_ok($samples, '>=', 5, "VACUUM sampled $samples times while scanning");
cmp_ok($ahead_seen, '>=', 2,
	"blocks of the table were in shared buffers ahead of the scan ($ahead_seen samples)");
cmp_ok($ahead_max, '<=', $cap_blocks,
	"never more than the cap ($cap_blocks blocks) ahead of the scan (at most $ahead_max)");
cmp_ok($xact_age_max, '<', 2,
	"the loader's transactions were short (the oldest seen: $xact_age_max s)");
ok( $node->poll_query_until(
		'postgres',
		"SELECT scans = 1 AND blocks_loaded > 4000 AND loader_aborts = 0
		   FROM pg_stat_prefetch WHERE relid = 'sb'::regclass AND command = 'vacuum'"),
	'pg_stat_prefetch counts the blocks loaded into shared buffers');
my $vacuum_reads = $node->safe_psql('postgres',
	"SELECT heap_blks_read - $reads_before FROM pg_statio_user_tables WHERE relname = 'sb'");
cmp_ok($vacuum_reads, '<', 4000,
	"the VACUUM found most of the 8000 blocks in shared buffers ($vacuum_reads read)");
ok($node->poll_query_until('postgres', 'SELECT ' . loader_running_sql() . ' = 0'),
	'the loader exits with the scan');

# ---- VACUUM prunes as much with the loader as without ----

# Two equal tables with a dead row on every block; one VACUUM (VERBOSE)
# each, served into shared buffers and into the OS cache only.  A pin of
# the loader's met by VACUUM's cleanup lock would leave that block to
# lazy_scan_noprune(), which removes nothing.
my %removed;
foreach my $t ('prune_os', 'prune_sb')
{
	create_frozen_table($node, 'postgres', $t, 64000);
	$node->safe_psql('postgres', "DELETE FROM $t WHERE id % 8 = 0");
}
$node->restart;
foreach my $t ('prune_os', 'prune_sb')
{
	my $read_into = $t eq 'prune_sb' ? 'shared_buffers' : 'os_cache';
	$node->safe_psql('postgres', "ALTER SYSTEM SET bgw_prefetch.read_into = $read_into");
	$node->reload;
	$node->poll_query_until('postgres', "SELECT current_setting('bgw_prefetch.read_into') = '$read_into'");
	my ($stdout, $stderr);
	$node->psql(
		'postgres',
		"SET vacuum_cost_delay = '2ms'; SET vacuum_cost_limit = 100; VACUUM (VERBOSE) $t",
		stdout => \$stdout,
		stderr => \$stderr,
		on_error_die => 1);
	($removed{$t}) = $stderr =~ /tuples: (\d+) removed/
	  or die "no tuples line in: $stderr";
}
is($removed{prune_sb}, $removed{prune_os},
	"VACUUM served into shared buffers removes as many tuples ($removed{prune_sb}) as into the OS cache");
is($removed{prune_os}, 8000, 'and that is every dead row');
ok( $node->poll_query_until(
		'postgres',
		"SELECT blocks_loaded > 0 FROM pg_stat_prefetch
		  WHERE relid = 'prune_sb'::regclass AND command = 'vacuum'"),
	'the loader served that VACUUM');

# ---- DDL issued while the loader holds its lock ----

# Start a slowed VACUUM of $table in $db and wait until its loader loads.
# The VACUUM crawls (cost limit 2: a page or two each 10 ms, a minute for
# its 4,000 blocks), so that it still runs through every check made while
# it should, however slow the machine; it is cancelled or terminated, never
# waited for.
sub start_loaded_vacuum
{
	my ($db, $table) = @_;
	my $fn = filenode($db, $table);
	my ($vs, $pid) =
	  start_slow($node, $db, "VACUUM (DISABLE_PAGE_SKIPPING) $table", '10ms', 2);
	ok( $node->poll_query_until(
			'postgres',
			'SELECT ' . loader_running_sql() . ' > 0 AND ' . buffered_blocks_sql($db, $fn) . ' > 100'),
		"the loader loads $db.$table");
	return ($vs, $pid, $fn);
}

# $ddl on $table while it is loaded: the loader lets go at once, the DDL
# completes once the VACUUM is cancelled, and no buffer of the old files is
# left.
sub ddl_lets_go_ok
{
	my ($table, $ddl) = @_;
	create_frozen_table($node, 'postgres', $table, 32000);
	$node->restart;
	my ($vs, $pid, $fn) = start_loaded_vacuum('postgres', $table);
	my $log_offset = -s $node->logfile;

	my $ds = $node->background_psql('postgres', on_error_stop => 0);
	my $dpid = $ds->query_safe('SELECT pg_backend_pid()');
	$ds->query_until(qr/ddl starts/, "\\echo ddl starts\n$ddl;\n\\echo ddl done\n");
	# the loader logs that it lets go, and leaves: seeing the DDL wait, or,
	# if the DDL came while it was between two of its short transactions,
	# failing to take its lock again (a lock request that conflicts with a
	# waiter's is refused)
	$node->wait_for_log(
		qr/buffer loader for relation \d+ let go: (a conflicting lock is awaited|its lock is not available)/,
		$log_offset);
	ok($node->poll_query_until('postgres', 'SELECT ' . loader_running_sql() . ' = 0'),
		"$ddl: the loader exited");
	# it let go because of the DDL, not because the scan ended: the VACUUM
	# still runs, and the DDL now waits for it and for nothing else
	is( $node->safe_psql(
			'postgres', "SELECT count(*) FROM pg_stat_progress_vacuum WHERE pid = $pid"),
		'1', "$ddl: the loader let go while the VACUUM still runs");
	ok( $node->poll_query_until(
			'postgres', "SELECT pg_blocking_pids($dpid) = ARRAY[$pid]"),
		"$ddl: the DDL waits for the VACUUM's backend only");

	# cancelled, the VACUUM lets the DDL through; were anything else in its
	# way, query_until would time out (default timeout) and the test fail
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$ds->query_until(qr/ddl done/, '');
	# DROP TABLE, TRUNCATE and VACUUM FULL each leave the table's old file
	is( $node->safe_psql(
			'postgres',
			"SELECT coalesce(pg_relation_filenode(to_regclass('$table')), 0) <> $fn"),
		't', "$ddl: completes once the VACUUM is cancelled");
	quit_session($ds);
	quit_session($vs);
	is(buffered_blocks('postgres', $fn), 0,
		"$ddl: no buffer of the old files is left");
	return;
}

ddl_lets_go_ok('sb_drop', 'DROP TABLE sb_drop');
ddl_lets_go_ok('sb_trunc', 'TRUNCATE sb_trunc');
ddl_lets_go_ok('sb_full', 'VACUUM FULL sb_full');

# ---- DROP DATABASE of the scan's database ----

$node->safe_psql('postgres', 'CREATE DATABASE sbdb');
$node->safe_psql('sbdb', 'CREATE EXTENSION bgw_prefetch');
create_frozen_table($node, 'sbdb', 'sbt', 32000);
$node->restart;
my ($vs, $pid, $fn) = start_loaded_vacuum('sbdb', 'sbt');
my $log_offset = -s $node->logfile;
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'DROP DATABASE sbdb');
isnt($ret, 0, 'DROP DATABASE of a database in use fails');
like(
	$stderr,
	qr/There is 1 other session using the database/,
	'DROP DATABASE waited for the VACUUM\'s session only, not for the loader');
ok( $node->log_contains(
		qr/buffer loader for relation \d+ let go: a conflicting lock is awaited/,
		$log_offset),
	'the loader let go for DROP DATABASE');
# WITH (FORCE) terminates the VACUUM's backend; a process of ours still
# connected to sbdb would make it fail (after 5 s) with "database is being
# accessed by other users"
($ret, $stdout, $stderr) = $node->psql('postgres', 'DROP DATABASE sbdb WITH (FORCE)');
is($ret, 0, 'DROP DATABASE (FORCE) succeeds') or diag($stderr);
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_database WHERE datname = 'sbdb'"),
	'0', 'DROP DATABASE (FORCE): the database is gone');
quit_session($vs);
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_buffercache b
		  WHERE reldatabase <> 0 AND NOT EXISTS
		        (SELECT FROM pg_database d WHERE d.oid = b.reldatabase)"),
	0,
	'no buffer of the dropped database is left');

no_crash_ok($node, 'no process crashed');
$node->stop;
done_testing();
