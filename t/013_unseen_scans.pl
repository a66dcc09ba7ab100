# Every VACUUM and ANALYZE of a relation of at least min_relation_size is
# recorded, whether or not the monitor ever saw it run (backend_reads.c,
# prefetch_unseen.c): a backend publishes, when each relation's transaction
# commits, which relation it scanned and what it read.
#
# - The monitor is stopped (SIGSTOP, while it waits on its latch) across
#   manual VACUUM (VERBOSE)s, an ANALYZE (VERBOSE) and an autovacuum.  Once
#   it runs again each of them is in pg_stat_prefetch: one scan, watched
#   ("over before the monitor saw it"), with the read time track_io_timing
#   counted (VACUUM VERBOSE's and autovacuum's "I/O timings: read", plus at
#   most what the relation's transaction read around the command), and an
#   ANALYZE with the pages it sampled; each is logged.
# - A relation below min_relation_size leaves no row.
# - A scan the monitor followed is recorded once, not again from what its
#   backend published.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node(
	'unseen', conf => q{
track_io_timing = on
bgw_prefetch.min_relation_size = 1MB
autovacuum_naptime = 1s
autovacuum_vacuum_cost_delay = 0
log_autovacuum_min_duration = 0
log_line_prefix = '%m [%p] %b '
});

# u1, u2, av: 2,000 blocks (8 rows of 900 bytes a block), frozen, then a row
# updated on every 20th block; small: 40 blocks, below min_relation_size.
for my $t ([ 'u1', 16000 ], [ 'u2', 16000 ], [ 'av', 16000 ], [ 'small', 320 ])
{
	my ($name, $rows) = @$t;
	create_frozen_table($node, 'postgres', $name, $rows);
	$node->safe_psql('postgres', "UPDATE $name SET pad = repeat('y', 900) WHERE id % 160 = 0");
}
# a checkpoint, then a restart: the scans below read their blocks
$node->safe_psql('postgres', 'CHECKPOINT');
$node->restart;
my %relid = map { $_ => $node->safe_psql('postgres', "SELECT '$_'::regclass::oid") }
  qw(u1 u2 av small);

# The "I/O timings: read" (ms) and, for ANALYZE, the pages sampled, of a
# VERBOSE report or an autovacuum log entry.
sub report_of
{
	my ($text) = @_;
	my ($read) = $text =~ /I\/O timings: read: ([\d.]+) ms/;
	my ($sampled) = $text =~ /scanned (\d+) of \d+ pages/;
	return ($read, $sampled);
}

# The row of $rel, $command: scans|prefetched_scans|watched_scans|reason|blocks_read|read_time
sub row_of
{
	my ($rel, $command) = @_;
	return $node->safe_psql(
		'postgres', "
SELECT scans, prefetched_scans, watched_scans, last_watched_reason, blocks_read, read_time
  FROM pg_stat_prefetch WHERE relid = $relid{$rel} AND command = '$command'");
}

# read_time (ms) is the command's "I/O timings: read", plus at most 5 ms or
# 10 % (what the relation's transaction read outside the command).
sub read_time_ok
{
	my ($label, $view, $report) = @_;
	my $excess = $view - $report;
	ok($excess >= -0.01 && ($excess <= 5 || $excess <= 0.1 * $report),
		"$label: read_time $view ms is the report's $report ms, plus at most 5 ms or 10 %");
	return;
}

my $offset = -s $node->logfile;
my $monitor = hold_monitor($node);

my %verbose;
for my $sql ('VACUUM (VERBOSE) u1', 'VACUUM (VERBOSE) u2', 'VACUUM (VERBOSE) small',
	'ANALYZE (VERBOSE) u2')
{
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	is($ret, 0, "monitor stopped: $sql ran");
	$verbose{$sql} = $err;
}

# an autovacuum, also while the monitor is stopped
$node->safe_psql(
	'postgres', q{
ALTER TABLE av SET (autovacuum_enabled = on, autovacuum_vacuum_threshold = 10,
                    autovacuum_vacuum_scale_factor = 0, autovacuum_analyze_threshold = 1000000000);
ALTER SYSTEM SET autovacuum = on;
SELECT pg_reload_conf();
});
ok( $node->poll_query_until(
		'postgres',
		"SELECT autovacuum_count > 0 FROM pg_stat_user_tables WHERE relname = 'av'"),
	'monitor stopped: autovacuum vacuumed av');
$node->safe_psql('postgres', 'ALTER SYSTEM SET autovacuum = off; SELECT pg_reload_conf()');
$node->wait_for_log(qr/automatic vacuum of table "postgres\.public\.av":.*\n(?:\s.*\n)*?\s*I\/O timings: read/,
	$offset);
my ($av_log) = slurp_file($node->logfile, $offset) =~
  /(automatic vacuum of table "postgres\.public\.av":.*\n(?:\s.*\n)*?\s*I\/O timings: read[^\n]*)/;

is( $node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_prefetch"),
	'0', 'monitor stopped: nothing recorded yet');
kill 'CONT', $monitor;
ok(wait_monitor_idle($node), 'the monitor ran again, and read what was published');

my $reason = 'over before the monitor saw it';
for my $t ([ 'u1', 'VACUUM (VERBOSE) u1' ], [ 'u2', 'VACUUM (VERBOSE) u2' ], [ 'av', undef ])
{
	my ($rel, $sql) = @$t;
	my ($read) = report_of(defined $sql ? $verbose{$sql} : $av_log);
	ok(defined $read, "$rel: the server reported its I/O timings");
	my @f = split /\|/, row_of($rel, 'vacuum');
	is(join('|', @f[ 0 .. 3 ]), "1|0|1|$reason", "$rel: its VACUUM is recorded, watched, $reason");
	read_time_ok("$rel VACUUM", $f[5], $read);
}
{
	my ($read, $sampled) = report_of($verbose{'ANALYZE (VERBOSE) u2'});
	ok(defined $sampled, 'ANALYZE VERBOSE reported the pages it sampled');
	my @f = split /\|/, row_of('u2', 'analyze');
	is(join('|', @f[ 0 .. 4 ]), "1|0|1|$reason|$sampled",
		"u2: its ANALYZE is recorded, with the $sampled pages it sampled");
	# 15 reports no I/O timings for a manual ANALYZE
	read_time_ok('u2 ANALYZE', $f[5], $read) if defined $read;
}
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_prefetch WHERE relid = $relid{small}"),
	'0', 'a relation below min_relation_size leaves no row');
for my $rel ('u1', 'av')
{
	like(
		slurp_file($node->logfile, $offset),
		qr/bgw_prefetch: (automatic )?vacuum of "[^"]*" \(database \d+, relation $relid{$rel}, pid \d+\): completed, watched \($reason\)/,
		"$rel: its VACUUM is logged");
}

# A VACUUM the monitor follows is recorded once, not again from what its
# backend published.
my ($s) = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) u1', '4ms');
$s->quit;
ok(wait_for_scans($node, $relid{u1}, 'vacuum', 2), 'u1: the followed VACUUM is recorded');
ok(wait_monitor_idle($node), 'the monitor is idle after it');
is(join('|', (split /\|/, row_of('u1', 'vacuum'))[ 0 .. 2 ]), '2|1|1',
	'u1: the followed VACUUM is recorded once, prefetched');

no_crash_ok($node, 'no crash');
$node->stop;
done_testing();
