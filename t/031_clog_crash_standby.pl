# The CLOG writer must not break crash safety, and must leave the CLOG alone
# on a standby.
#
# Crash: a TPC-B-like pgbench with synchronous_commit = off (so CLOG pages
# carry commit LSNs that may not be flushed yet: WAL-before-data matters),
# plus a session consuming xids quickly so that CLOG pages fill up and the
# writer, with a 10 ms delay, writes many of them; then an immediate
# shutdown in the middle of it all, and a restart.  After crash recovery
# the pgbench invariant sum(abalance) = sum(bbalance) = sum(tbalance) =
# sum(delta) must hold and amcheck (B-tree checks with heapallindexed, and
# verify_heapam, which checks xmin/xmax against the CLOG and the xid
# horizon) must find nothing.  Three times.
#
# Standby: on a streaming standby the writer runs (hot standby) but reports
# status 'recovery' and writes nothing while the primary works; after
# promotion it writes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = new_bgwp_node(
	'primary',
	init => { allows_streaming => 1 },
	preload_only => 1,
	conf => q{
shared_buffers = 16MB
synchronous_commit = off
checkpoint_timeout = 1h
max_wal_size = 4GB
bgw_prefetch.clog_writer = on
bgw_prefetch.clog_writer_delay = 10ms
});
$primary->safe_psql('postgres', 'CREATE EXTENSION amcheck');
create_burn_xids($primary);
$primary->command_ok(
	[
		'pgbench', '-i', '-s', '2', '-q', '-h', $primary->host,
		'-p', $primary->port, 'postgres'
	],
	'pgbench -i');

my $tempdir = PostgreSQL::Test::Utils::tempdir;
my $burn_script = "$tempdir/burn.sql";
PostgreSQL::Test::Utils::append_to_file($burn_script,
	"CALL burn_xids(20);\n");

# Start pgbench in the background; killed or left to fail by the caller.
sub pgbench_start
{
	my ($node, @args) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-h', $node->host, '-p', $node->port,
			@args, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return $h;
}

sub writer_pages
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'SELECT pages_written FROM pg_stat_prefetch_clog');
}

# pgbench's invariant and amcheck; returns nothing, reports with ok().
sub check_consistency
{
	my ($node, $what) = @_;
	is( $node->safe_psql(
			'postgres', q{
SELECT (SELECT sum(abalance) FROM pgbench_accounts) =
       (SELECT sum(bbalance) FROM pgbench_branches) AND
       (SELECT sum(bbalance) FROM pgbench_branches) =
       (SELECT sum(tbalance) FROM pgbench_tellers) AND
       (SELECT sum(tbalance) FROM pgbench_tellers) =
       (SELECT coalesce(sum(delta), 0) FROM pgbench_history) AND
       (SELECT count(*) FROM pgbench_history) > 0}),
		't',
		"$what: balances add up");
	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM (
  SELECT bt_index_check(c.oid, true)
    FROM pg_class c JOIN pg_am a ON a.oid = c.relam
   WHERE a.amname = 'btree' AND c.relname LIKE 'pgbench%') s}),
		'3',
		"$what: bt_index_check on the pgbench indexes");
	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM
  unnest(ARRAY['pgbench_accounts', 'pgbench_branches',
               'pgbench_tellers', 'pgbench_history']::regclass[]) r,
  verify_heapam(r)}),
		'0',
		"$what: verify_heapam finds nothing");
}

foreach my $round (1 .. 3)
{
	my $tpcb = pgbench_start($primary, '-c', '4', '-j', '2', '-T', '60');
	my $burn = pgbench_start($primary, '-c', '1', '-T', '60', '-f',
		$burn_script);

	# let the writer write a good number of pages, then crash
	ok( $primary->poll_query_until(
			'postgres',
			'SELECT pages_written >= 10 FROM pg_stat_prefetch_clog'),
		"round $round: writer writes during the run");
	sleep(2);
	$primary->stop('immediate');
	$tpcb->finish;
	$burn->finish;

	$primary->start;
	check_consistency($primary, "round $round");
}

# A streaming standby: the writer idles in recovery.
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

ok( $standby->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch clog writer'"
	),
	'writer runs on the standby');
ok( $standby->poll_query_until(
		'postgres', "SELECT status = 'recovery' FROM pg_stat_prefetch_clog"),
	"standby: writer status is 'recovery'");

my $primary_before = writer_pages($primary);
my $tpcb = pgbench_start($primary, '-c', '4', '-j', '2', '-T', '8');
my $burn =
  pgbench_start($primary, '-c', '1', '-T', '8', '-f', $burn_script);
$tpcb->finish;
$burn->finish;
cmp_ok(writer_pages($primary), '>', $primary_before,
	'primary: writer wrote pages meanwhile');
$primary->wait_for_catchup($standby);
is( $standby->safe_psql(
		'postgres', 'SELECT pages_written, status FROM pg_stat_prefetch_clog'),
	'0|recovery',
	'standby: writer wrote nothing during recovery');

$primary->stop;
$standby->promote;
ok( $standby->poll_query_until(
		'postgres',
		"SELECT status IN ('writing', 'idle') FROM pg_stat_prefetch_clog"),
	'promoted: writer leaves recovery');
$standby->safe_psql('postgres', 'CALL burn_xids(100000)');
ok( $standby->poll_query_until(
		'postgres', 'SELECT pages_written > 0 FROM pg_stat_prefetch_clog'),
	'promoted: writer writes');
check_consistency($standby, 'promoted standby');

$standby->stop;
done_testing();
