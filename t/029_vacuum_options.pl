# Every VACUUM option that changes what a manual VACUUM reads is honoured:
# what the command will not scan is not read ahead, what it scans is served.
#
# - PROCESS_TOAST false: the table is served, its TOAST table not read;
# - SKIP_LOCKED, the table locked by another session: the table passed by
#   is not read, the next one is served;
# - from 16, PROCESS_MAIN false: the TOAST table is served, the table's own
#   heap not read; ONLY_DATABASE_STATS scans nothing and errs nowhere;
#   SKIP_DATABASE_STATS and BUFFER_USAGE_LIMIT: the table is served;
# - a partition, which the statement does not name, resolved by a worker:
#   DISABLE_PAGE_SKIPPING and a session's vacuum_freeze_table_age = 0 both
#   make its plan aggressive.
#
# "Not read" is what the OS page cache says (fincore) of a file made cold
# before the command: a read ahead of a scan that never comes would leave it
# resident.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node('vacuum_options');

# t: 6,400 blocks (8 rows of 900 bytes a block); 2,000 of its rows carry a
# 20 kB value stored out of line, uncompressed (about 5,000 TOAST blocks);
# t2: 1,280 blocks.  Frozen: VACUUM (DISABLE_PAGE_SKIPPING) reads every
# block of both heaps without dirtying any.
$node->safe_psql(
	'postgres', q{
CREATE TABLE t (id int, pad text, big text) WITH (fillfactor = 100, autovacuum_enabled = off);
ALTER TABLE t ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO t SELECT g, repeat('x', 900), CASE WHEN g <= 2000 THEN repeat('y', 20000) END
  FROM generate_series(1, 51200) g;
VACUUM (FREEZE) t;
});
create_frozen_table($node, 'postgres', 't2', 10240);
my $toast = $node->safe_psql('postgres', "SELECT reltoastrelid FROM pg_class WHERE relname = 't'");
my $t_blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('t') / 8192");
my $toast_blocks = $node->safe_psql('postgres', "SELECT pg_relation_size($toast) / 8192");
my $toast_name = $node->safe_psql('postgres', "SELECT ${toast}::regclass");
cmp_ok($toast_blocks, '>', 1000, "t's TOAST table has $toast_blocks blocks");

# The scans pg_stat_prefetch counted, "relation:command:scans:prefetched
# scans" (and ":blocks_read" for a scan followed from its first block),
# sorted, once the monitor is idle.  A VACUUM (SKIP_LOCKED) is joined once
# its scan shows: the command may pass its relations by.
sub scans
{
	ok(wait_monitor_idle($node), 'the monitor is idle');
	return $node->safe_psql(
		'postgres', q{
SELECT string_agg(relid::regclass || ':' || command || ':' || scans || ':' || prefetched_scans
                  || CASE WHEN joined_scans = 0 THEN ':' || blocks_read ELSE '' END,
                  ' ' ORDER BY relid::regclass::text, command)
  FROM pg_stat_prefetch});
}

# Run a VACUUM of cold tables, slowed a little so that the monitor serves
# it, and return the scans counted.
sub cold_vacuum
{
	my ($sql, $wait_rel) = @_;
	make_cold($node, 't', $toast, 't2');
	$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
	$node->safe_psql('postgres',
		"SET vacuum_cost_delay = '1ms'; SET vacuum_cost_limit = 200; $sql");
	ok(wait_for_scans($node, $wait_rel, 'vacuum', 1), "$sql: $wait_rel counted");
	return scans();
}

# --- PROCESS_TOAST false -------------------------------------------------
my $scans = cold_vacuum('VACUUM (PROCESS_TOAST false, DISABLE_PAGE_SKIPPING) t', 't');
is($scans, "t:vacuum:1:1:$t_blocks", 'PROCESS_TOAST false: t served, its TOAST table not scanned');
is(resident_pages($node, $toast), 0, 'PROCESS_TOAST false: no block of the TOAST table read');

# --- SKIP_LOCKED ------------------------------------------------------------
make_cold($node, 't', $toast, 't2');
$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE t IN SHARE UPDATE EXCLUSIVE MODE');
my ($stdout, $stderr);
$node->psql(
	'postgres',
	"SET vacuum_cost_delay = '1ms'; SET vacuum_cost_limit = 200;
	 VACUUM (SKIP_LOCKED, DISABLE_PAGE_SKIPPING) t, t2",
	stdout => \$stdout,
	stderr => \$stderr,
	on_error_die => 1);
like($stderr, qr/skipping vacuum of "t" --- lock not available/, 'SKIP_LOCKED: t is passed by');
ok(wait_for_scans($node, 't2', 'vacuum', 1), 'SKIP_LOCKED: t2 counted');
my $t2_blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('t2') / 8192");
# (t2's empty TOAST table is scanned too, in a millisecond: counted or not)
my $rows = scans();
like($rows, qr/(?:^| )t2:vacuum:1:1(?::$t2_blocks)?(?: |$)/, 'SKIP_LOCKED: t2 served');
unlike($rows, qr/(?:^| )(?:t|\Q$toast_name\E):/, 'SKIP_LOCKED: t and its TOAST table not scanned');
is(resident_pages($node, 't'), 0, 'SKIP_LOCKED: no block of t read');
$locker->query_safe('COMMIT');
$locker->quit;

SKIP:
{
	skip 'PROCESS_MAIN, ONLY_DATABASE_STATS, SKIP_DATABASE_STATS and BUFFER_USAGE_LIMIT are 16+', 9
	  if $node->pg_version < 16;

	# --- PROCESS_MAIN false ---------------------------------------------
	$scans = cold_vacuum('VACUUM (PROCESS_MAIN false, DISABLE_PAGE_SKIPPING) t', $toast);
	is($scans, "$toast_name:vacuum:1:1:$toast_blocks",
		'PROCESS_MAIN false: the TOAST table served, t not scanned');
	is(resident_pages($node, 't'), 0, "PROCESS_MAIN false: no block of t's heap read");

	# --- ONLY_DATABASE_STATS --------------------------------------------
	$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
	$node->safe_psql('postgres', 'VACUUM (ONLY_DATABASE_STATS)');
	is(scans(), '', 'ONLY_DATABASE_STATS: nothing scanned, nothing counted');

	# --- SKIP_DATABASE_STATS, BUFFER_USAGE_LIMIT ------------------------
	$scans = cold_vacuum(
		"VACUUM (SKIP_DATABASE_STATS, BUFFER_USAGE_LIMIT '256kB', PROCESS_TOAST false, DISABLE_PAGE_SKIPPING) t",
		't');
	is($scans, "t:vacuum:1:1:$t_blocks",
		'SKIP_DATABASE_STATS, BUFFER_USAGE_LIMIT: t served');
}

# --- a relation the statement does not name --------------------------
# A partition is resolved by a resolver worker, which plans with the
# options and the session's freeze table ages that the backend's utility
# hook published before the command ran.  pt1 is all-visible but not
# frozen: a plain VACUUM skips it (plans about one block), an aggressive
# one reads every block.  The VACUUM is slow (10 blocks per 100 ms), so the
# plan shows in pg_stat_prefetch_activity while it scans; then it is
# cancelled.
$node->safe_psql(
	'postgres', q{
CREATE TABLE pt (id int, pad text) PARTITION BY RANGE (id);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (100000)
  WITH (fillfactor = 100, autovacuum_enabled = off);
INSERT INTO pt SELECT g, repeat('x', 900) FROM generate_series(1, 10240) g;
VACUUM pt1;
});
my $pt1_blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('pt1') / 8192");
for my $case (
	[ 'VACUUM (DISABLE_PAGE_SKIPPING) pt', 'DISABLE_PAGE_SKIPPING' ],
	[
		"SET vacuum_freeze_table_age = 0;\nVACUUM pt",
		"the session's vacuum_freeze_table_age = 0"
	])
{
	my ($sql, $what) = @$case;
	my ($s, $pid) = start_slow($node, 'postgres', $sql, '100ms', 20);
	ok( $node->poll_query_until(
			'postgres', qq{
SELECT blocks_planned > $pt1_blocks / 2 FROM pg_stat_prefetch_activity
 WHERE relid = 'pt1'::regclass}),
		"$what: a partition the statement does not name is planned to be read in full");
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	quit_session($s);
}

no_crash_ok($node, 'no crash');
$node->stop;
done_testing();
