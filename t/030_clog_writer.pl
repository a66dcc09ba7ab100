# The CLOG writer cleans dirty CLOG pages before backends have to evict them.
#
# With shared_buffers = 16MB the CLOG SLRU has 4 buffers.  The workload:
# a table of 400,000 rows, each inserted by its own transaction and never
# read, so that their xmins are unhinted and spread over 12 CLOG pages;
# readers look rows up at random (each lookup a CLOG lookup of an old page,
# so old pages are read in and evicted all the time) while writers consume
# xids quickly (a procedure committing in a loop), so the latest CLOG page
# fills up every fraction of a second and the page before it is left dirty.
# With the writer off, a reader evicting that page has to write it; with
# the writer on, the writer should have written it first.
#
# Backend writes of CLOG pages are pg_stat_slru's Xact writes minus the
# writer's pages_written (the checkpointer's writes appear in pg_stat_slru
# only when it exits, and checkpoints are kept out of the way anyway).  The
# test alternates writer off / on windows of the same workload, switching
# by reload, and checks: the writer writes only when on, and backends write
# fewer dirty CLOG pages with the writer on.  With clog_writer = auto the
# writer leaves a dirty page alone while no dirty page is evicted, and
# writes once the workload evicts them.  It also checks that the writer
# shows up in pg_stat_activity, is restarted after pg_terminate_backend(),
# and that pg_stat_prefetch_reset() resets it (t/028 checks a write error).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $window_secs = 12;
my $nrows = 400000;

my $node = new_bgwp_node(
	'clog_writer',
	preload_only => 1,
	conf => q{
shared_buffers = 16MB
autovacuum = off
checkpoint_timeout = 1h
max_wal_size = 4GB
synchronous_commit = off
bgw_prefetch.clog_writer = on
bgw_prefetch.clog_writer_delay = 200ms
});

ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch clog writer'"
	),
	'clog writer appears in pg_stat_activity');
like(
	$node->safe_psql('postgres', 'SELECT status FROM pg_stat_prefetch_clog'),
	qr/^(writing|idle)$/,
	'clog writer status is writing or idle');

# Rows with unhinted xmins: the primary key is built before the rows arrive
# (an index build would set their hint bits), and nobody reads them.
$node->safe_psql(
	'postgres', qq{
CREATE TABLE hist (id int PRIMARY KEY, v int) WITH (autovacuum_enabled = off);
CREATE PROCEDURE fill_hist(n int) LANGUAGE plpgsql AS \$\$
BEGIN
  FOR i IN 1..n LOOP
    INSERT INTO hist VALUES (i, i);
    COMMIT;
  END LOOP;
END \$\$;
});
create_burn_xids($node);
$node->safe_psql('postgres', "CALL fill_hist($nrows)");

my $tempdir = PostgreSQL::Test::Utils::tempdir;
my $read_script = "$tempdir/read.sql";
my $burn_script = "$tempdir/burn.sql";
PostgreSQL::Test::Utils::append_to_file($read_script,
	"\\set id random(1, $nrows)\nSELECT v FROM hist WHERE id = :id;\n");
PostgreSQL::Test::Utils::append_to_file($burn_script,
	"CALL burn_xids(20);\n");

# Switch the writer by reload (1: on, 0: off, or 'auto') and wait until it
# says it has noticed.
sub set_writer
{
	my ($mode) = @_;
	$mode = $mode ? 'on' : 'off' if $mode ne 'auto';
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET bgw_prefetch.clog_writer = $mode");
	$node->reload;
	my %cond = (
		on => "status IN ('writing', 'idle')",
		off => "status = 'off'",
		auto => "status = 'standby'");
	ok($node->poll_query_until('postgres',
			"SELECT $cond{$mode} FROM pg_stat_prefetch_clog"),
		"writer $mode after reload");
}

# The writer's pages_written and rounds (its looks at the CLOG buffers).
sub writer_counts
{
	return split /\|/, $node->safe_psql('postgres',
		'SELECT pages_written, rounds FROM pg_stat_prefetch_clog');
}

# Wait until the writer has looked at the CLOG buffers twice more.
sub writer_looked
{
	my (undef, $rounds) = writer_counts();
	return $node->poll_query_until('postgres',
		"SELECT rounds >= $rounds + 2 FROM pg_stat_prefetch_clog");
}

# pg_stat_slru Xact writes, the writer's pages, the next xid.  Only once no
# other client is connected: backends flush their statistics on exit.  The
# CLOG's pg_stat_slru row is "Xact" up to PostgreSQL 16, "transaction" from
# 17.
sub counters
{
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
	) or die 'clients did not go away';
	my ($slru, $writer, $xid) = split /\|/, $node->safe_psql(
		'postgres', q{
SELECT (SELECT blks_written FROM pg_stat_slru
         WHERE name IN ('Xact', 'transaction')),
       (SELECT pages_written FROM pg_stat_prefetch_clog),
       pg_snapshot_xmax(pg_current_snapshot())});
	return ($slru, $writer, $xid);
}

sub pgbench_start
{
	my ($script, @opts) = @_;
	return start_pgbench($node, [ '-T', $window_secs, @opts, '-f', $script ]);
}

sub pgbench_finish
{
	my ($run) = @_;
	my ($h, $out, $err) = @$run;
	$h->finish;
	is($h->result(0), 0, 'pgbench succeeded') or diag($$err);
}

# One window of the workload, the writer set as set_writer() takes it;
# returns (backend writes, writer writes).
sub window
{
	my ($on) = @_;
	set_writer($on);
	my ($slru0, $writer0, $xid0) = counters();

	my $readers = pgbench_start($read_script, '-c', '2', '-R', '300');
	my $burners = pgbench_start($burn_script, '-c', '2');
	pgbench_finish($readers);
	pgbench_finish($burners);

	# the writer flushes its statistics before it reports itself idle
	if ($on)
	{
		ok($node->poll_query_until('postgres',
				"SELECT status = 'idle' FROM pg_stat_prefetch_clog"),
			'writer idle after the window');
	}
	my ($slru1, $writer1, $xid1) = counters();
	my $writer = $writer1 - $writer0;
	my $backend = ($slru1 - $slru0) - $writer;
	note sprintf(
		"writer %s: %d xids (%.1f CLOG pages), backend writes %d, writer writes %d",
		$on eq 'auto' ? 'auto' : $on ? 'on' : 'off', $xid1 - $xid0, ($xid1 - $xid0) / 32768,
		$backend, $writer);
	return ($backend, $writer);
}

my ($backend_off, $backend_on) = (0, 0);
foreach my $on (0, 1, 0, 1)
{
	my ($backend, $writer) = window($on);
	if ($on)
	{
		cmp_ok($writer, '>', 0, 'writer writes CLOG pages when on');
		$backend_on += $backend;
	}
	else
	{
		is($writer, 0, 'writer writes nothing when off');
		$backend_off += $backend;
	}
}
cmp_ok($backend_off, '>=', 2,
	"the workload makes backends write dirty CLOG pages ($backend_off with the writer off)"
);
cmp_ok($backend_on, '<', $backend_off,
	"backends write fewer dirty CLOG pages with the writer on ($backend_on vs $backend_off)"
);

my $row = $node->safe_psql('postgres',
	'SELECT write_time > 0, rounds > 0, last_write IS NOT NULL FROM pg_stat_prefetch_clog'
);
is($row, 't|t|t', 'write_time, rounds and last_write are set');

# auto: while no dirty CLOG page is evicted, the writer only looks.  After
# a CHECKPOINT every CLOG page is clean; burning xids into the next page
# leaves the page before it dirty and not the latest (the one page the
# writer set to on writes), while the new page takes a clean buffer: no
# dirty page is evicted, so auto writes nothing.  The writer must have
# looked after the CHECKPOINT: a page it last saw dirty and then finds
# replaced counts as evicted dirty (the checkpoint's false alarm).
set_writer('auto');
$node->safe_psql('postgres', 'CHECKPOINT');
ok(writer_looked(), 'auto: the writer looked after the checkpoint');
my ($auto_pages) = writer_counts();
my $next_xid = $node->safe_psql('postgres',
	'SELECT pg_snapshot_xmax(pg_current_snapshot())');
my $to_next_page = 32768 - ($next_xid % 32768) + 100;
$node->safe_psql('postgres', "CALL burn_xids($to_next_page)");
ok(writer_looked(), 'auto: the writer looked after the page switch');
is( $node->safe_psql(
		'postgres', 'SELECT pages_written, status FROM pg_stat_prefetch_clog'),
	"$auto_pages|standby",
	'auto: nothing written while no dirty page is evicted');
set_writer(1);
ok( $node->poll_query_until(
		'postgres',
		"SELECT pages_written > $auto_pages FROM pg_stat_prefetch_clog"),
	'on: the dirty page auto left alone is written');

# auto under the workload that evicts dirty pages: it starts writing, and
# backends write fewer dirty CLOG pages than in the windows without writer.
my ($backend_auto, $writer_auto) = window('auto');
cmp_ok($writer_auto, '>', 0, 'auto: writes once dirty pages are evicted');
cmp_ok($backend_auto, '<', $backend_off,
	"auto: backends write fewer dirty CLOG pages ($backend_auto vs $backend_off in two windows off)"
);

my $pid = worker_pid($node, 'bgw_prefetch clog writer');

# pg_terminate_backend(): the postmaster starts a new writer
# (bgw_restart_time = 10 s).
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch clog writer' AND pid <> $pid"
	),
	'writer restarted after pg_terminate_backend');

# Reset.
my $reset_before = $node->safe_psql('postgres',
	'SELECT stats_reset FROM pg_stat_prefetch_clog');
$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
is( $node->safe_psql(
		'postgres',
		"SELECT pages_written = 0 AND write_time = 0 AND last_write IS NULL AND stats_reset > '$reset_before' FROM pg_stat_prefetch_clog"
	),
	't',
	'pg_stat_prefetch_reset() resets the writer counters');

$node->stop;
done_testing();
