# The CLOG writer must leave the CLOG alone on a standby: on a streaming
# standby the writer runs (hot standby) but reports status 'recovery' and
# writes nothing while the primary works; after promotion it writes, and
# the promoted server's TPC-B tables are consistent.  (Crash recovery with
# the writer on is t/032_clog_crash_loop.pl.)
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($primary, $burn_script) =
  new_tpcb_node('primary', 2, 20, init => { allows_streaming => 1 });

sub writer_pages
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'SELECT pages_written FROM pg_stat_prefetch_clog');
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
my $tpcb = start_pgbench($primary, [ '-c', '4', '-j', '2', '-T', '8' ]);
my $burn =
  start_pgbench($primary, [ '-c', '1', '-T', '8', '-f', $burn_script ]);
$_->[0]->finish foreach ($tpcb, $burn);
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
tpcb_consistent_ok($standby, 'promoted standby');

$standby->stop;
done_testing();
