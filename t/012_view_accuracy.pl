# pg_stat_prefetch says what happened, in the units PostgreSQL itself uses.
#
# A cold VACUUM (VERBOSE) with track_io_timing on -- prefetch off, then on --
# and a cold autovacuum are each compared with the server's own report of
# the same scan (VERBOSE's INFO message, autovacuum's log line):
#
# - blocks_read equals the pages the VACUUM scanned;
# - read_rate is within 30 % of its "avg read rate";
# - read_time is its "I/O timings: read", plus at most 5 ms (or 10 %): the
#   backend publishes its read time for the transaction that processed the
#   relation (backend_reads.c), in nanoseconds summed, where the server's
#   report (up to 17; ANALYZE's on 18 too) sums whole microseconds per read;
# - with track_io_timing off in the VACUUM's session, read_time is the
#   sampled estimate, not zero;
# - a lone ANALYZE (its statement's transaction) is measured the same way.
#
# "Cold" means: the server restarted (empty shared buffers) and the table's
# files dropped from the OS page cache (make_cold()).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

# Pacing off: the figures are the subject here, and the sessions that hold
# a VACUUM until it is announced are client statements that would have the
# prefetch paced (t/014_pacing.pl tests the pacing).
my $node = new_bgwp_node(
	'view_accuracy', conf => q{
bgw_prefetch.pacing = off
track_io_timing = on
vacuum_cost_delay = 0
autovacuum_vacuum_cost_delay = 0
log_autovacuum_min_duration = 0
autovacuum_naptime = 1s
});

# 8 rows a block, 12,800 blocks (100 MB); frozen, then one row updated on
# every 20th block: VACUUM reads those and the runs of fewer than 32
# all-visible blocks between them.
my $rows = 102400;
create_frozen_table($node, 'postgres', 'acc', $rows);

sub dirty
{
	$node->safe_psql('postgres',
		"UPDATE acc SET pad = pad WHERE id % 160 = 1 AND (id / 160) % 3 <> 2");
	return;
}

# The figures of the server's own report of a VACUUM.
sub parse_vacuum_report
{
	my ($text) = @_;
	my %r;
	($r{remain}, $r{scanned}) = $text =~ /pages: \d+ removed, (\d+) remain, (\d+) scanned/
	  or die "no pages line in: $text";
	($r{read_rate}) = $text =~ /avg read rate: ([\d.]+) MB\/s/
	  or die "no read rate in: $text";
	($r{read_time}) = $text =~ /I\/O timings: read: ([\d.]+) ms/
	  or die "no I/O timings in: $text";
	return \%r;
}

# Wait until the view has $n vacuum scans of acc, and return its row.
sub vacuum_row
{
	my ($n) = @_;
	ok( $node->poll_query_until(
			'postgres', qq{
SELECT scans >= $n FROM pg_stat_prefetch WHERE relname = 'acc' AND command = 'vacuum'}),
		"pg_stat_prefetch records vacuum scan $n of acc");
	my $row = $node->safe_psql(
		'postgres', q{
SELECT scans, prefetched_scans, watched_scans, coalesce(last_watched_reason, ''),
       joined_scans, blocks_read, blocks_skipped, read_time, read_rate,
       blocks_prefetched
  FROM pg_stat_prefetch WHERE relname = 'acc' AND command = 'vacuum'});
	my @f = split /\|/, $row;
	return {
		scans => $f[0],
		prefetched_scans => $f[1],
		watched_scans => $f[2],
		watched_reason => $f[3],
		joined_scans => $f[4],
		blocks_read => $f[5],
		blocks_skipped => $f[6],
		read_time => $f[7],
		read_rate => $f[8],
		blocks_prefetched => $f[9],
	};
}

# The view's row against the server's report of the same scan, which the
# view followed from its first block.
sub compare_ok
{
	my ($label, $row, $rep) = @_;
	note "$label: report scanned $rep->{scanned}, read rate $rep->{read_rate} MB/s, read $rep->{read_time} ms; view: "
	  . join(', ', map { "$_ $row->{$_}" } sort keys %$row);
	is($row->{joined_scans}, 0, "$label: followed from its first block");
	is($row->{blocks_read}, $rep->{scanned},
		"$label: blocks_read = the VACUUM's scanned pages ($rep->{scanned})");
	is($row->{blocks_read} + $row->{blocks_skipped}, $rep->{remain},
		"$label: blocks_read + blocks_skipped = the table's blocks");
	my $rate_ratio = $rep->{read_rate} > 0 ? $row->{read_rate} / $rep->{read_rate} : 0;
	ok($rate_ratio >= 0.7 && $rate_ratio <= 1.3,
		"$label: read_rate $row->{read_rate} MB/s within 30 % of avg read rate $rep->{read_rate} MB/s");
	my $excess = $row->{read_time} - $rep->{read_time};
	ok($excess >= -0.01 && ($excess <= 5 || $excess <= 0.1 * $rep->{read_time}),
		"$label: read_time $row->{read_time} ms is I/O timings read $rep->{read_time} ms, plus at most 5 ms or 10 %");
	return;
}

# --- manual VACUUM (VERBOSE), prefetch off then on --------------------------
# The VACUUM waits for its table's lock until the monitor has taken its
# announcement (hold_until_announced()): a monitor whose wakeup a busy
# machine delays would otherwise find the scan past its first skipped range
# and follow it from there.
for my $prefetch ('off', 'on')
{
	dirty();
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET bgw_prefetch.vacuum = $prefetch");
	make_cold($node, 'acc');
	$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
	my $locker = hold_until_announced($node, 'acc', $node->safe_psql('postgres', "SELECT 'acc'::regclass::oid"));
	my ($stdout, $stderr);
	$node->psql('postgres', 'VACUUM (VERBOSE) acc',
		stdout => \$stdout, stderr => \$stderr, on_error_die => 1);
	$locker->quit;
	my $rep = parse_vacuum_report($stderr);
	my $row = vacuum_row(1);
	compare_ok("VACUUM, prefetch $prefetch", $row, $rep);
	if ($prefetch eq 'on')
	{
		is($row->{prefetched_scans}, 1, 'prefetch on: the scan is prefetched');
		cmp_ok($row->{blocks_prefetched}, '>=', 0.5 * $rep->{scanned},
			"prefetch on: most blocks it read were prefetched ($row->{blocks_prefetched} of $rep->{scanned})");
		cmp_ok($row->{blocks_prefetched}, '<=', $rep->{scanned},
			'prefetch on: and no block it did not read');
	}
	else
	{
		is($row->{watched_scans}, 1, 'prefetch off: the scan is watched');
		is($row->{watched_reason}, 'bgw_prefetch.vacuum is off',
			'prefetch off: and says why');
		is($row->{blocks_prefetched}, 0, 'prefetch off: nothing read ahead');
	}
}

# --- track_io_timing off in the VACUUM's session ---------------------------
# The backend's own read time is then zero; the view gives the sampled
# estimate of its waits on reads instead.
{
	dirty();
	$node->safe_psql('postgres', 'ALTER SYSTEM SET bgw_prefetch.vacuum = off');
	make_cold($node, 'acc');
	$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
	$node->safe_psql('postgres', 'SET track_io_timing = off; VACUUM acc');
	my $row = vacuum_row(1);
	cmp_ok($row->{read_time}, '>', 0,
		"track_io_timing off: read_time is the sampled estimate ($row->{read_time} ms)");
}

# --- a lone ANALYZE ----------------------------------------------------------
# It runs in its statement's own transaction, which commits after the
# statement returns.  From 18 ANALYZE (VERBOSE) reports its I/O timings too.
{
	make_cold($node, 'acc');
	$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
	my ($stdout, $stderr);
	$node->psql('postgres', 'ANALYZE (VERBOSE) acc',
		stdout => \$stdout, stderr => \$stderr, on_error_die => 1);
	ok( $node->poll_query_until(
			'postgres', q{
SELECT scans >= 1 FROM pg_stat_prefetch WHERE relname = 'acc' AND command = 'analyze'}),
		'pg_stat_prefetch records the ANALYZE of acc');
	my $read_time = $node->safe_psql('postgres',
		"SELECT read_time FROM pg_stat_prefetch WHERE relname = 'acc' AND command = 'analyze'");
	if ($node->pg_version >= 18)
	{
		my ($rep) = $stderr =~ /I\/O timings: read: ([\d.]+) ms/
		  or die "no I/O timings in: $stderr";
		my $excess = $read_time - $rep;
		ok($excess >= -0.01 && ($excess <= 5 || $excess <= 0.1 * $rep),
			"ANALYZE: read_time $read_time ms is I/O timings read $rep ms, plus at most 5 ms or 10 %");
	}
	else
	{
		cmp_ok($read_time, '>', 0, "ANALYZE: read_time $read_time ms");
	}
}

# --- autovacuum, against its own log line -----------------------------------
$node->safe_psql('postgres', 'ALTER SYSTEM SET bgw_prefetch.vacuum = on');
dirty();
make_cold($node, 'acc');
$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
my $offset = -s $node->logfile;
# A client stays connected, as on a server in use: the monitor keeps a
# forecaster in its database, which has the table in its forecast before
# autovacuum comes.  Until it has, the client holds a lock that makes
# autovacuum skip the table.
# The worker vacuums a slowed table first (autovacuum goes in pg_class's
# order, and acc's row moves to its end with the ALTER TABLE below): the
# monitor starts acc, the worker's next forecast relation, while the worker
# is still on the first -- a worker's first table is a race of a millisecond
# or two between its start and the monitor's look (doc/architecture.md).
$node->safe_psql(
	'postgres', q{
CREATE TABLE first_t (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = off);
INSERT INTO first_t SELECT g, repeat('x', 900) FROM generate_series(1, 8000) g;
VACUUM (FREEZE) first_t;
UPDATE first_t SET pad = pad WHERE id % 8 = 0;
ALTER TABLE first_t SET (autovacuum_enabled = on, autovacuum_vacuum_scale_factor = 0,
                         autovacuum_vacuum_threshold = 100, autovacuum_analyze_threshold = 1000000000,
                         autovacuum_vacuum_cost_delay = 2, autovacuum_vacuum_cost_limit = 10);
});
$node->safe_psql('postgres',
	'ALTER TABLE acc SET (autovacuum_enabled = on, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100, autovacuum_analyze_threshold = 1000000000)');
my $client = $node->background_psql('postgres');
$client->query_safe('BEGIN; LOCK TABLE first_t, acc IN SHARE UPDATE EXCLUSIVE MODE');
$node->safe_psql('postgres', 'ALTER SYSTEM SET autovacuum = on');
$node->reload;
ok( $node->poll_query_until(
		'postgres',
		"SELECT string_agg(relid::regclass::text, ',' ORDER BY ordinal) = 'first_t,acc'
		   FROM bgw_prefetch_forecast() WHERE relid IN ('first_t'::regclass, 'acc'::regclass) AND needs_vacuum"),
	'the forecaster has both tables due for autovacuum, in its order');
$client->query_safe('COMMIT');
$node->wait_for_log(qr/automatic vacuum of table "postgres\.public\.acc"(?s:.*?)system usage/, $offset);
my $log = slurp_file($node->logfile, $offset);
my ($autovac) = $log =~ /(automatic vacuum of table "postgres\.public\.acc"(?s:.*?)system usage)/;
my $rep = parse_vacuum_report($autovac);
my $row = vacuum_row(1);
compare_ok('autovacuum', $row, $rep);
ok($row->{blocks_prefetched} > 0 && $row->{blocks_prefetched} <= $rep->{scanned},
	"autovacuum: prefetched, no block it did not read ($row->{blocks_prefetched} of $rep->{scanned})");
# The monitor writes a scan's LOG line before the view shows the scan: the
# log read again now that the row is there has it.
like(
	slurp_file($node->logfile, $offset),
	qr/bgw_prefetch: automatic vacuum of "public\.acc".*: completed, prefetched\n\s*blocks: $rep->{scanned} read(?s:.*?)I\/O timings: read: [\d.]+ ms\n/,
	'the end-of-scan LOG line gives the same blocks in autovacuum\'s words, and the backend\'s own read time (not sampled)');

$client->quit;
$node->stop;
done_testing();
