# Crash recovery with the CLOG writer on (issue 16): a loop of immediate
# stops in the middle of a TPC-B workload, each followed by crash recovery
# and the consistency checks.
#
# Setting of the issue's report: shared_buffers = 16MB (4 CLOG buffers, so
# CLOG pages are evicted and written all the time), autovacuum_naptime = 1,
# pgbench -i -s 4 and 4 TPC-B clients; plus one client consuming xids
# quickly, so that CLOG pages fill up and the writer (clog_writer_delay =
# 10ms) writes pages that carry fresh commit statuses.  The cycles alternate
# synchronous_commit off (commit LSNs not yet flushed sit in the CLOG's
# group LSNs: a page written before its WAL is flushed would keep a commit
# that recovery does not know about) and on.  Every cycle: run until the
# writer has written at least one more page, then 0-1.5 s more, immediate
# stop, restart, and assert:
#	- the writer wrote during the cycle (the cycle tested something);
#	- the TPC-B invariant and amcheck (tpcb_consistent_ok);
#	- with synchronous_commit = on, durability: no transaction pgbench saw
#	  committed is lost (pgbench_history grew by at least the number of
#	  transactions pgbench reports as processed).
# At most 30 cycles and, to stay within about three minutes, no new cycle
# after 150 s once 10 have run.
#
# pgbench runs with -n (BgwPrefetchTest::start_pgbench): without it every
# run truncates pgbench_history first, which breaks the invariant with or
# without a crash and with or without this extension -- the cause of the
# report (doc/clog_writer.md, "Crash safety").
#
# That the loop catches a writer that breaks WAL-before-data is checked by
# test/clog_mutation.sh, which runs this file against a build whose writer
# clears a page's group LSNs before writing it.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $max_cycles = 30;
my $min_cycles = 10;
my $time_budget = 150;

my ($node, $burn_script) =
  new_tpcb_node('crashloop', 4, 50, conf => "autovacuum_naptime = 1\n");

sub writer_pages
{
	return $node->safe_psql('postgres',
		'SELECT pages_written FROM pg_stat_prefetch_clog');
}

sub history_rows
{
	return $node->safe_psql('postgres',
		'SELECT count(*) FROM pgbench_history');
}

my $start = time;
my $cycle = 0;
while ($cycle < $max_cycles
	&& ($cycle < $min_cycles || time - $start < $time_budget))
{
	$cycle++;
	my $sync = $cycle % 2 ? 'off' : 'on';
	my $what = "cycle $cycle (synchronous_commit = $sync)";
	my $rows_before = history_rows();
	my $pages_before = writer_pages();

	my $tpcb = start_pgbench(
		$node,
		[ '-c', '4', '-j', '2', '-T', '60' ],
		PGOPTIONS => "-c synchronous_commit=$sync");
	my $burn = start_pgbench($node,
		[ '-c', '1', '-T', '60', '-f', $burn_script ]);

	ok( $node->poll_query_until(
			'postgres',
			"SELECT pages_written > $pages_before FROM pg_stat_prefetch_clog"),
		"$what: the writer writes");
	sleep(rand(1.5));
	$node->stop('immediate');
	$_->[0]->finish foreach ($tpcb, $burn);
	my ($committed) = ${ $tpcb->[1] } =~
	  /number of transactions actually processed: (\d+)/;
	$committed //= 0;

	$node->start;
	tpcb_consistent_ok($node, $what);
	if ($sync eq 'on')
	{
		cmp_ok(history_rows(), '>=', $rows_before + $committed,
			"$what: the $committed transactions pgbench saw committed are there"
		);
	}
}
note(sprintf('%d cycles in %.0f s', $cycle, time - $start));
no_crash_ok($node, 'no process crashed');

$node->stop;
done_testing();
