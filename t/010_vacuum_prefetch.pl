# VACUUM prefetch fidelity: the prefetcher plans exactly the heap blocks
# VACUUM reads after visibility-map skipping, and reads them before VACUUM
# gets there.
#
# For each VACUUM flavour (plain, FREEZE = aggressive, DISABLE_PAGE_SKIPPING)
# and each I/O method, the table gets a known visibility-map pattern: an
# all-frozen head, then runs of 31, 32 and 33 all-visible blocks, some
# all-visible-but-not-frozen blocks (which only an aggressive VACUUM reads)
# and scattered not-all-visible blocks.  The test computes the blocks VACUUM
# must read from pg_visibility_map() with its own copy of the skip rule,
# checks that against VACUUM VERBOSE's "scanned" count, and then checks the
# prefetcher's plan and its reads from the point where it joined the scan
# (the LOG line at the end of each watched scan says where that was).
# Then the same for a VACUUM the monitor reaches only after its first
# blocks: counted from block 0 if it read every block it passed.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# Pacing off: what is read and when is the subject here, and the test's own
# statements just before each VACUUM (the pattern's CHECKPOINT) are client
# statements that would have the prefetch paced, its first reads held for a
# drain (t/014_pacing.pl tests the pacing).
my $node = new_bgwp_node(
	'vacuum_prefetch', conf => q{
bgw_prefetch.pacing = off
vacuum_cost_delay = 4ms
vacuum_cost_limit = 20
});
$node->safe_psql('postgres', 'CREATE EXTENSION pg_visibility');

# About 8 rows a page: 3,000 pages.
$node->safe_psql(
	'postgres', q{
CREATE TABLE fid (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = off);
INSERT INTO fid SELECT g, repeat('x', 900) FROM generate_series(1, 24000) g;
});
my $nblocks = $node->safe_psql('postgres',
	"SELECT pg_relation_size('fid') / 8192");
cmp_ok($nblocks, '>=', 2500, "table has $nblocks blocks");

# Touch one row on each of the given pages, clearing their VM bits.
sub dirty_pages
{
	my @pages = @_;
	return unless @pages;
	my $tids = join(',', map { "'($_,1)'" } @pages);
	$node->safe_psql('postgres',
		"UPDATE fid SET id = id WHERE ctid = ANY (ARRAY[$tids]::tid[])");
}

# Known pattern: head of 400 all-frozen blocks, then every 100 blocks a
# group: a dirty page, gaps of 31, 32, 33 clean blocks between dirty pages.
sub set_pattern
{
	$node->safe_psql('postgres', 'VACUUM (FREEZE) fid');

	# all-visible but not frozen: dirty, then plain VACUUM
	my @visible_not_frozen;
	for (my $b = 430; $b < $nblocks - 1; $b += 211) { push @visible_not_frozen, $b; }
	dirty_pages(@visible_not_frozen);
	$node->safe_psql('postgres', 'VACUUM fid');

	my @dirty;
	for (my $b = 400; $b < $nblocks - 40; $b += 100)
	{
		push @dirty, $b, $b + 32, $b + 65, $b + 99;    # gaps 31, 32, 33
	}
	push @dirty, map { 400 + int(rand($nblocks - 401)) } 1 .. 40;
	dirty_pages(@dirty);
	$node->safe_psql('postgres', 'CHECKPOINT');
}

# The skip rule of lazy_scan_skip() in PostgreSQL 15, over a VM snapshot.
sub reference_plan
{
	my ($mode, $vm) = @_;    # $vm: array of [all_visible, all_frozen]
	my $n = scalar @$vm;
	my @plan;
	return @plan if $n == 0;
	my $blk = 0;
	while ($blk < $n)
	{
		# find the run of skippable blocks starting at $blk
		my $end = $blk;
		while ($end < $n - 1 && $mode ne 'disable')
		{
			my ($av, $af) = @{ $vm->[$end] };
			last unless $av eq 't';
			last if $mode eq 'aggressive' && $af ne 't';
			$end++;
		}
		if ($end - $blk >= 32)
		{
			$blk = $end;    # skipped
		}
		else
		{
			push @plan, $blk .. $end - 1;
			$blk = $end;
		}
		push @plan, $blk if $blk < $n;    # the unskippable block
		$blk++;
	}
	return @plan;
}

my %mode_of = (
	'VERBOSE' => 'normal',
	'FREEZE, VERBOSE' => 'aggressive',
	'DISABLE_PAGE_SKIPPING, VERBOSE' => 'disable');

# Set the pattern and return the blocks a VACUUM in $mode reads, with the
# statistics reset (the pattern's own VACUUMs must be over for the monitor
# first).
sub pattern_plan
{
	my ($mode) = @_;
	srand(42);
	set_pattern();
	my @vm = map { [ split /\|/ ] } split /\n/,
	  $node->safe_psql('postgres',
		'SELECT all_visible, all_frozen FROM pg_visibility_map(\'fid\') ORDER BY blkno');
	reset_prefetch_stats($node);
	return reference_plan($mode, \@vm);
}

# Set the pattern, run $sql (a VACUUM VERBOSE of fid, possibly after SETs),
# and check the prefetcher's plan and reads against the skip rule in $mode.
sub check_fidelity
{
	my ($label, $mode, $sql) = @_;
	my @plan = pattern_plan($mode);
	my $offset = -s $node->logfile;
	my ($stdout, $stderr);
	$node->psql('postgres', $sql,
		stdout => \$stdout, stderr => \$stderr, on_error_die => 1);
	my ($scanned) = $stderr =~ /pages: \d+ removed, \d+ remain, (\d+) scanned/;
	is($scanned, scalar @plan, "$label: reference rule predicts VACUUM's scanned pages ($scanned)");

	# the scan is logged
	$node->wait_for_log(qr/bgw_prefetch: vacuum of "public.fid".*\n\s*blocks: \d+ read/, $offset);
	my $log = slurp_file($node->logfile, $offset);
	my ($head, $planned, $prefetched, $late) = $log =~
	  /bgw_prefetch: vacuum of "public.fid"([^\n]*)\n\s*blocks: (\d+) read.*?prefetch: (\d+) blocks, \d+ ready, (\d+) late/s;
	my ($join) = ($head // '') =~ /followed from block (\d+)/;
	$join //= 0;
	my $expected = grep { $_ >= $join } @plan;
	is($planned, $expected,
		"$label: blocks read from block $join equal VACUUM's reads from there");
	# the VACUUM's backend announced the table: planned from its first read.
	# (The monitor may still take the announcement only once the scan shows:
	# an aggressive VACUUM passes a leading all-frozen range in microseconds.
	# It then follows from where the scan is, which is fine as long as the
	# scan read nothing before.)
	is($expected, scalar @plan,
		"$label: prefetcher started no later than the scan's first read (joined at block $join)");
	cmp_ok(($prefetched - $late), '>=', 0.95 * $planned,
		"$label: >= 95% of planned blocks read before VACUUM reached them ($prefetched prefetched, $late late, $planned planned)");

	my $row = $node->safe_psql('postgres',
		"SELECT scans, blocks_read, blocks_prefetched > 0, blocks_unused FROM pg_stat_prefetch WHERE relname = 'fid' AND command = 'vacuum'");
	is($row, "1|$planned|t|0", "$label: pg_stat_prefetch agrees with the log");
	return;
}

foreach my $io_method ('io_uring', 'fadvise')
{
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET bgw_prefetch.io_method = '$io_method'");
	$node->reload;

	foreach my $options (sort keys %mode_of)
	{
		check_fidelity("$io_method, VACUUM ($options)", $mode_of{$options},
			"VACUUM ($options) fid");
	}
}

# A session-level SET makes a plain VACUUM aggressive.  Only the backend
# itself knows that: it resolves the relation it names in its utility hook
# (a resolver worker would plan a non-aggressive VACUUM and miss the
# all-visible-but-not-frozen blocks).
check_fidelity(
	'session vacuum_freeze_table_age = 0',
	'aggressive',
	"SET vacuum_freeze_table_age = 0;\nVACUUM (VERBOSE) fid;");

# A VACUUM that waits for its table's lock: its early start waits with it,
# however long (here longer than the second an early start otherwise waits
# for its scan), and the scan is served from block 0 once the lock is
# granted.
{
	set_pattern();
	reset_prefetch_stats($node);
	my $offset = -s $node->logfile;
	my $locker = $node->background_psql('postgres');
	$locker->query_safe('BEGIN; LOCK fid IN SHARE UPDATE EXCLUSIVE MODE');
	my ($s, $pid) = start_slow($node, 'postgres', 'VACUUM fid', '4ms');
	ok( $node->poll_query_until(
			'postgres', "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid"),
		'lock wait: VACUUM waits for the table lock');
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity WHERE relname = 'fid'"),
		'lock wait: the early start is there');
	# a lower bound on the time waited, not a wait for an event
	usleep(1_500_000);
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_prefetch_activity WHERE relname = 'fid'"),
		'1', 'lock wait: the early start still waits after 1.5 s');
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_prefetch WHERE relname = 'fid' AND command = 'vacuum'"),
		'0', 'lock wait: no scan recorded while the VACUUM waits');
	$locker->query_safe('COMMIT');
	# the VACUUM is served from its first block once its scan starts
	$node->wait_for_log(qr/bgw_prefetch: vacuum of "public.fid".*: completed, prefetched.*\n(?:\s.*\n)*?\s*prefetch: [1-9]/, $offset);
	unlike(slurp_file($node->logfile, $offset), qr/vacuum of "public.fid".*followed from block/,
		'lock wait: served from block 0');
	$s->quit;
	$locker->quit;
}

# A monitor that comes late to an announced VACUUM: a busy machine can delay
# its wakeup past the scan's first blocks.  The monitor is held (SIGSTOP)
# until the VACUUM has passed some; it is held only while it waits on its
# latch, where it holds no lock the VACUUM could need (hold_monitor()).  A
# scan that read every block it passed is still counted from block 0; one
# that skipped some (the all-frozen head) is followed from where it is.

foreach my $late (['DISABLE_PAGE_SKIPPING', 'disable'], ['FREEZE', 'aggressive'])
{
	my ($options, $mode) = @$late;
	my $label = "monitor late, VACUUM ($options)";
	my @plan = pattern_plan($mode);
	my $offset = -s $node->logfile;
	my $monitor = hold_monitor($node);
	my ($s, $pid) = start_slow($node, 'postgres', "VACUUM ($options) fid", '4ms', 5);
	my $passed = $node->poll_query_until('postgres',
		"SELECT heap_blks_scanned > 0 FROM pg_stat_progress_vacuum WHERE pid = $pid");
	kill 'CONT', $monitor;
	ok($passed, "$label: the VACUUM passed its first blocks before the monitor looked");
	$s->quit;
	$node->wait_for_log(qr/bgw_prefetch: vacuum of "public.fid".*\n\s*blocks: \d+ read/, $offset);
	my ($head, $planned) = slurp_file($node->logfile, $offset) =~
	  /bgw_prefetch: vacuum of "public.fid"([^\n]*)\n\s*blocks: (\d+) read/;
	my ($join) = $head =~ /followed from block (\d+)/;
	if ($mode eq 'disable')
	{
		is($join, undef, "$label: every block passed was read: counted from block 0");
	}
	else
	{
		cmp_ok($join // 0, '>=', 400,
			"$label: the all-frozen head was skipped: followed from where it is");
	}
	$join //= 0;
	is($planned, scalar(grep { $_ >= $join } @plan),
		"$label: blocks read from block $join equal VACUUM's reads from there");
}

my $method = $node->safe_psql('postgres', 'SELECT io_method FROM bgw_prefetch_status()');
is($method, 'fadvise', 'io_method switched at reload');

$node->stop;
done_testing();
