# Crash recovery with the CLOG writer on (issue 16): a loop of immediate
# stops in the middle of a TPC-B workload, each followed by crash recovery
# and the consistency checks, and at the end a check of every transaction's
# status in pg_xact against the WAL.
#
# Setting of the issue's report: shared_buffers = 16MB (4 CLOG buffers, so
# CLOG pages are evicted and written all the time), autovacuum_naptime = 1,
# pgbench -i -s 4 and 4 TPC-B clients; plus one client consuming xids
# quickly, so that CLOG pages fill up and the writer (clog_writer_delay =
# 10ms) writes pages that carry fresh commit statuses.  The cycles alternate
# synchronous_commit off (commit LSNs not yet flushed sit in the CLOG's
# group LSNs: a page written before its WAL is flushed would keep a commit
# that recovery does not know about) and on.  Every cycle: run until the
# writer has written a page, CHECKPOINT (so that recovery does not replay
# the commits before it: a status lost from a page written before it stays
# lost), run until the writer writes again, then 0-0.5 s more, immediate
# stop, restart, and assert:
#	- the TPC-B invariant and amcheck (tpcb_consistent_ok);
#	- with synchronous_commit = on, durability: no transaction pgbench saw
#	  committed is lost (pgbench_history grew by at least the number of
#	  transactions pgbench reports as processed).
# At most 30 cycles and, to stay within about three minutes, no new cycle
# after 150 s once 10 have run: on 15 and 17, the first versions of the two
# CLOG SLRU layouts (compat.h), where test/clog_mutation.sh also checks that
# the loop catches a broken writer.  On 16 and 18, whose writer code is
# 15's and 17's, the 10 cycles only: that server's recovery with the writer,
# in about a minute instead of three.
#
# At the end, pg_xact must agree with the WAL for every xid assigned during
# the loop (a replication slot keeps the WAL from the start): an xid is
# committed in pg_xact if and only if pg_waldump finds its commit record.
# A page written before the WAL of its asynchronous commits (committed, no
# record), or a status lost from a page marked clean (a record, not
# committed), shows there even when no TPC-B row happens to expose it.
#
# pgbench runs with -n (BgwPrefetchTest::start_pgbench): without it every
# run truncates pgbench_history first, which breaks the invariant with or
# without a crash and with or without this extension -- the cause of the
# report (doc/clog_writer.md, "Tests").
#
# That the test catches a writer that breaks the SLRU write protocol is
# checked by test/clog_mutation.sh, which runs this file against builds with
# a deliberate bug in the writer.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;
use Time::HiRes qw(sleep time);

my $max_cycles = 30;
my $min_cycles = 10;

my ($node, $burn_script) =
  new_tpcb_node('crashloop', 4, 50,
	init => { allows_streaming => 1 },    # wal_level = replica, for the slot
	conf => q{
autovacuum_naptime = 1
wal_compression = on
});

my $time_budget = ($node->pg_version->major == 16 || $node->pg_version->major == 18) ? 0 : 150;

# Keep the WAL of the whole loop for the final check.
$node->safe_psql('postgres',
	"SELECT pg_create_physical_replication_slot('keep_wal', true)");
my $start_lsn =
  $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
my $first_xid = $node->safe_psql('postgres',
	'SELECT pg_snapshot_xmax(pg_current_snapshot())');

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
	# bounded: a writer that breaks the SLRU protocol can leave it waiting
	# forever, and the test must fail then, not hang
	$node->safe_psql('postgres', 'CHECKPOINT',
		timeout => $PostgreSQL::Test::Utils::timeout_default);
	my $pages_checkpoint = writer_pages();
	ok( $node->poll_query_until(
			'postgres',
			"SELECT pages_written > $pages_checkpoint FROM pg_stat_prefetch_clog"
		),
		"$what: the writer writes after the checkpoint");
	sleep(rand(0.5));
	$node->stop('immediate');
	$_->[0]->finish foreach ($tpcb, $burn);
	my ($committed) = ${ $tpcb->[1] } =~
	  /number of transactions actually processed: (\d+)/;
	# pgbench prints its count even when the stop aborted its clients; no
	# count (pgbench did not run, or its output changed) would leave the
	# durability check below checking nothing
	ok(defined $committed, "$what: pgbench reported the transactions it processed")
	  or diag("pgbench stdout:\n${ $tpcb->[1] }\npgbench stderr:\n${ $tpcb->[2] }");

	$node->start;
	tpcb_consistent_ok($node, $what);
	if ($sync eq 'on' && defined $committed)
	{
		cmp_ok(history_rows(), '>=', $rows_before + $committed,
			"$what: the $committed transactions pgbench saw committed are there"
		);
	}
	# test/clog_mutation.sh: a broken writer is caught at its first failed
	# check, no need for more cycles
	last if $ENV{BGWP_STOP_AT_FIRST_FAILURE} && !Test::More->builder->is_passing;
}
note(sprintf('%d cycles in %.0f s', $cycle, time - $start));

# pg_xact against the WAL, for every xid of the loop.
my $next_xid = $node->safe_psql('postgres',
	'SELECT pg_snapshot_xmax(pg_current_snapshot())');
my ($dump, $dump_err) = ('', '');
IPC::Run::run(
	[
		'pg_waldump', '-p', $node->data_dir . '/pg_wal',
		'-s', $start_lsn, '-r', 'Transaction'
	],
	'>', \$dump, '2>', \$dump_err);
my %wal_committed;
foreach my $line (split /\n/, $dump)
{
	next unless $line =~ /\btx:\s+(\d+), .*desc: COMMIT\b(.*)$/;
	my ($xid, $rest) = ($1, $2);
	$wal_committed{$xid} = 1;
	if ($rest =~ /subxacts:((?: \d+)+)/)
	{
		$wal_committed{$_} = 1 foreach split(' ', $1);
	}
}
my %clog_committed = map { $_ => 1 } split /\n/, $node->safe_psql(
	'postgres', qq{
SELECT x FROM generate_series($first_xid, $next_xid - 1) x
 WHERE pg_xact_status(x::text::xid8) = 'committed'});
my @no_record = sort { $a <=> $b } grep { !$wal_committed{$_} } keys %clog_committed;
my @lost = sort { $a <=> $b }
  grep { $_ >= $first_xid && $_ < $next_xid && !$clog_committed{$_} }
  keys %wal_committed;
cmp_ok(scalar(keys %clog_committed),
	'>', 10000, 'pg_xact vs WAL: the loop committed many transactions');
is(scalar(@no_record), 0,
	"pg_xact vs WAL: no xid of $first_xid..$next_xid committed without a commit record"
) or diag("first: @no_record[0 .. ($#no_record < 9 ? $#no_record : 9)]");
is(scalar(@lost), 0,
	'pg_xact vs WAL: every commit record is committed in pg_xact')
  or diag("first: @lost[0 .. ($#lost < 9 ? $#lost : 9)]");

no_crash_ok($node, 'no process crashed');

$node->stop;
done_testing();
