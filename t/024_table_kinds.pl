# Every kind of table VACUUM and ANALYZE meet is either prefetched or
# deliberately left alone, and says which:
#
# - unlogged table and materialized view: prefetched;
# - temporary table: only watched, 'temporary table' in the live view, the
#   log and (nothing prefetched) in pg_stat_prefetch;
# - TOAST table: its own target when VACUUM gets to it, prefetched; a
#   mostly skipped one is planned exactly (VACUUM VERBOSE's "scanned"), as
#   its table is; under autovacuum each is planned exactly or counted as
#   skipped, with the reason;
# - partitions: VACUUM and ANALYZE of a partitioned table serve each
#   partition;
# - inheritance children: ANALYZE of the parent follows the child being
#   sampled, each child gets its 'analyze' row (a scan for the parent's
#   sample, and from 18 one more for the child's own ANALYZE);
# - mapped catalogs (pg_class, and the shared pg_authid): prefetched from
#   the files the relation mapper names;
# - a table in a tablespace of its own: prefetched, with the depth from
#   bgw_prefetch.tablespace_io_depth, else from the tablespace's
#   maintenance_io_concurrency, else from the server's, each shown with its
#   source, and never more reads in flight than that depth;
# - a table that grows during the scan (concurrent INSERTs) or shrank before
#   it (VACUUM truncation): the prefetch stays within the blocks the scan
#   reads.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = new_bgwp_node(
	'table_kinds', conf => q{
log_line_prefix = '%m [%p] %b '
});

my $slow = "SET vacuum_cost_delay = '4ms'; SET vacuum_cost_limit = 20;";

# Fill a table with $rows rows of 900 bytes (8 a block) and freeze it, so
# that VACUUM (DISABLE_PAGE_SKIPPING) reads every block at the pace the cost
# delay sets.
sub fill
{
	my ($table, $rows, $from) = @_;
	$from //= 1;
	my $to = $from + $rows - 1;
	$node->safe_psql('postgres',
		"INSERT INTO $table SELECT g, repeat('x', 900) FROM generate_series($from, $to) g");
	return;
}

# pg_stat_prefetch: "scans|read > 0|prefetched > 0" for one relation,
# once the monitor has counted at least $n scans of it (1 by default): it
# adds a scan to the statistics when it sees it end, after the command has
# returned.
sub stats_of
{
	my ($relid, $command, $n) = @_;
	$n //= 1;
	ok(wait_for_scans($node, $relid, $command, $n), "$n $command scan(s) of relation $relid counted");
	return $node->safe_psql('postgres',
		"SELECT scans, blocks_read > 0, blocks_prefetched > 0
		   FROM pg_stat_prefetch WHERE relid = $relid AND command = '$command'");
}

sub oid_of
{
	my ($rel) = @_;
	return $node->safe_psql('postgres', "SELECT '$rel'::regclass::oid");
}

# A table $table of $rows documents of 8 kB stored out of line, not
# compressed (one TOAST block each), both relations frozen; returns the
# TOAST table's OID.
sub create_toasted
{
	my ($table, $rows) = @_;
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE $table (id int, doc text) WITH (autovacuum_enabled = off,
                                            toast.autovacuum_enabled = off);
ALTER TABLE $table ALTER COLUMN doc SET STORAGE EXTERNAL;
INSERT INTO $table SELECT g, repeat(md5(g::text), 250) FROM generate_series(1, $rows) g;
VACUUM (FREEZE) $table;
});
	return $node->safe_psql('postgres',
		"SELECT reltoastrelid FROM pg_class WHERE relname = '$table'");
}

# Reset the statistics once the monitor is idle: every reset below follows
# an unslowed setup scan (INSERT, VACUUM (FREEZE)) that the monitor may
# still be serving, and would count after the reset.
sub reset_stats
{
	reset_prefetch_stats($node);
	return;
}

# ---- unlogged table
$node->safe_psql('postgres',
	'CREATE UNLOGGED TABLE ul (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = off)');
fill('ul', 24000);
$node->safe_psql('postgres', 'VACUUM (FREEZE) ul');
reset_stats();
$node->safe_psql('postgres', "$slow VACUUM (DISABLE_PAGE_SKIPPING) ul;");
is(stats_of(oid_of('ul'), 'vacuum'), '1|t|t', 'unlogged table: VACUUM prefetched');
$node->safe_psql('postgres', "$slow ANALYZE ul;");
is(stats_of(oid_of('ul'), 'analyze'), '1|t|t', 'unlogged table: ANALYZE prefetched');

# ---- materialized view
$node->safe_psql(
	'postgres', q{
CREATE MATERIALIZED VIEW mv WITH (fillfactor = 100, autovacuum_enabled = off) AS
  SELECT g AS id, repeat('x', 900) AS pad FROM generate_series(1, 24000) g;
VACUUM (FREEZE) mv;
});
reset_stats();
$node->safe_psql('postgres', "$slow VACUUM (DISABLE_PAGE_SKIPPING) mv;");
is(stats_of(oid_of('mv'), 'vacuum'), '1|t|t', 'materialized view: VACUUM prefetched');

# ---- temporary table: watched only
{
	my $offset = -s $node->logfile;
	reset_stats();
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->query_safe(
		q{CREATE TEMP TABLE tt (id int, pad text) WITH (fillfactor = 100);
		  INSERT INTO tt SELECT g, repeat('x', 900) FROM generate_series(1, 24000) g;
		  VACUUM (FREEZE) tt;});
	my $tt = $s->query_safe("SELECT 'tt'::regclass::oid");
	$s->query_safe("SET vacuum_cost_delay = '4ms'; SET vacuum_cost_limit = 20");
	$s->query_until(qr/go/, "\\echo go\nVACUUM (DISABLE_PAGE_SKIPPING) tt;\n");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
			  WHERE relid = $tt AND state = 'watching: temporary table'"),
		"temporary table: VACUUM shown as 'watching: temporary table'");
	$s->query_safe('SELECT 1');
	$s->query_until(qr/go/, "\\echo go\nANALYZE tt;\n");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
			  WHERE relid = $tt AND command = 'analyze' AND state = 'watching: temporary table'"),
		"temporary table: ANALYZE shown as 'watching: temporary table'");
	$s->query_safe('SELECT 1');
	$s->quit;
	# the VACUUM and the ANALYZE are logged with the reason (after their
	# statistics are counted)
	$node->wait_for_log(
		qr/bgw_prefetch: vacuum of "pg_temp_\d+\.tt" .*: \w[^,]*, watched \(temporary table\)/, $offset);
	$node->wait_for_log(
		qr/bgw_prefetch: analyze of "pg_temp_\d+\.tt" .*: \w[^,]*, watched \(temporary table\)/, $offset);
	is( $node->safe_psql(
			'postgres',
			"SELECT sum(blocks_prefetched) FROM pg_stat_prefetch WHERE relid = $tt"),
		'0', 'temporary table: nothing was prefetched');
	is( $node->safe_psql(
			'postgres',
			"SELECT watched_scans > 0 AND watched_scans = scans, last_watched_reason
			   FROM pg_stat_prefetch WHERE relid = $tt AND command = 'vacuum'"),
		't|temporary table', 'temporary table: every scan counted as watched, with the reason');
}

# ---- TOAST table: out-of-line values, not compressed
{
	my $toast = create_toasted('toasty', 3000);
	my $toast_blocks = $node->safe_psql('postgres',
		"SELECT pg_relation_size($toast) / 8192");
	cmp_ok($toast_blocks, '>=', 2000, "the TOAST table has $toast_blocks blocks");
	reset_stats();
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', "$slow VACUUM (DISABLE_PAGE_SKIPPING) toasty;");
	is(stats_of($toast, 'vacuum'), '1|t|t', 'TOAST table: served as a target of its own, prefetched');
	# logged under its own name
	$node->wait_for_log(qr/bgw_prefetch: vacuum of "pg_toast\.pg_toast_\d+" .*: completed, prefetched/, $offset);
}

# ---- TOAST table, as a VACUUM meets it in real life: frozen, then a few
# rows updated and a few documents appended to, so that the VACUUM skips
# most of both relations.  Each relation it scans is planned exactly: the
# planned blocks are VACUUM VERBOSE's "scanned" pages, for the table and for
# its TOAST table (which vacuum_rel() processes as a second scan of its own,
# started by the monitor from block 0 while the table is still processed).
# ANALYZE does not process the TOAST table.
{
	my $toast = create_toasted('tst', 6000);
	$node->safe_psql(
		'postgres', q{
UPDATE tst SET id = id WHERE id % 50 = 0;
UPDATE tst SET doc = doc || 'x' WHERE id % 100 = 1;
});
	my $main = oid_of('tst');
	reset_stats();
	# both relations planned from block 0 before the VACUUM starts: it
	# lasts a few milliseconds, less than a busy machine may take to wake
	# the monitor
	my $locker = hold_until_announced($node, 'tst', $main, $toast);
	my ($ret, $out, $verbose) = $node->psql('postgres', 'VACUUM (VERBOSE) tst');
	$locker->quit;
	is($ret, 0, 'mostly skipped TOAST: VACUUM (VERBOSE) ran');
	my %scanned;
	while ($verbose =~ /finished vacuuming "postgres\.(\S+)".*?\npages: \d+ removed, \d+ remain, (\d+) scanned/g)
	{
		$scanned{$1} = $2;
	}
	my $toastname = "pg_toast.pg_toast_$main";
	ok(defined $scanned{'public.tst'} && defined $scanned{$toastname},
		"VACUUM VERBOSE reported both relations");
	cmp_ok($scanned{$toastname}, '<', $node->safe_psql('postgres',
			"SELECT pg_relation_size($toast) / 8192") / 2,
		"the TOAST VACUUM skipped most of its relation ($scanned{$toastname} scanned)");
	for my $rel ([ 'public.tst', $main ], [ $toastname, $toast ])
	{
		my ($name, $relid) = @$rel;
		stats_of($relid, 'vacuum');
		is( $node->safe_psql(
				'postgres',
				"SELECT scans, blocks_read, joined_scans, prefetched_scans
				   FROM pg_stat_prefetch WHERE relid = $relid AND command = 'vacuum'"),
			"1|$scanned{$name}|0|1",
			"$name: prefetched, blocks_read = VACUUM VERBOSE's scanned pages");
	}
	# the ANALYZE (not slowed) may be over before the monitor sees it: wait
	# until the monitor is idle before checking for rows it did not add
	$node->safe_psql('postgres', 'ANALYZE tst');
	ok(wait_monitor_idle($node), 'mostly skipped TOAST: the monitor is idle after the ANALYZE');
	is( $node->safe_psql(
			'postgres',
			"SELECT count(*) FROM pg_stat_prefetch WHERE relid = $toast AND command = 'analyze'"),
		'0', 'ANALYZE does not process the TOAST table');
	is( $node->safe_psql(
			'postgres', "SELECT sum(scans) FROM pg_stat_prefetch WHERE command = 'vacuum'"),
		'2', 'ANALYZE added no VACUUM scan');
}

# ---- partitions
{
	$node->safe_psql(
		'postgres', q{
CREATE TABLE pt (id int, pad text) PARTITION BY RANGE (id);
CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (1) TO (12001) WITH (fillfactor = 100, autovacuum_enabled = off);
CREATE TABLE pt_2 PARTITION OF pt FOR VALUES FROM (12001) TO (24001) WITH (fillfactor = 100, autovacuum_enabled = off);
CREATE TABLE pt_3 PARTITION OF pt FOR VALUES FROM (24001) TO (36001) WITH (fillfactor = 100, autovacuum_enabled = off);
});
	fill('pt', 36000);
	$node->safe_psql('postgres', 'VACUUM (FREEZE) pt');
	reset_stats();
	$node->safe_psql('postgres', "$slow VACUUM (DISABLE_PAGE_SKIPPING) pt;");
	$node->safe_psql('postgres', "$slow ANALYZE pt;");
	for my $p ('pt_1', 'pt_2', 'pt_3')
	{
		is(stats_of(oid_of($p), 'vacuum'), '1|t|t', "partition $p: VACUUM of the parent prefetched it");
		like(stats_of(oid_of($p), 'analyze'), qr/^[12]\|t\|t$/,
			"partition $p: ANALYZE of the parent prefetched it");
	}
	ok(wait_monitor_idle($node), 'partitions: the monitor is idle');
	is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_prefetch WHERE relid = 'pt'::regclass"),
		'0', 'the partitioned table itself has no blocks to serve');
}

# ---- inheritance children
{
	$node->safe_psql(
		'postgres', q{
CREATE TABLE ip (id int, pad text) WITH (autovacuum_enabled = off);
CREATE TABLE ic_1 () INHERITS (ip);
CREATE TABLE ic_2 () INHERITS (ip);
CREATE TABLE ic_3 () INHERITS (ip);
ALTER TABLE ic_1 SET (fillfactor = 100, autovacuum_enabled = off);
ALTER TABLE ic_2 SET (fillfactor = 100, autovacuum_enabled = off);
ALTER TABLE ic_3 SET (fillfactor = 100, autovacuum_enabled = off);
});
	fill('ic_1', 12000);
	fill('ic_2', 12000, 12001);
	fill('ic_3', 12000, 24001);
	$node->safe_psql('postgres', 'VACUUM (FREEZE) ic_1, ic_2, ic_3');
	reset_stats();

	# The parent's inheritance-tree pass samples each child (progress
	# reporting names the child being sampled): one scan of each.  From 18,
	# ANALYZE of a parent also analyzes each inheritance child on its own
	# afterwards (unless ONLY), as it always did partitions: a second pass
	# over the child's blocks, a second scan.  VERBOSE tells which the server
	# did: 'analyzing "public.ic_1"' for a child's own ANALYZE.
	my ($ret, $out, $verbose) = $node->psql('postgres', "$slow ANALYZE VERBOSE ip;");
	is($ret, 0, 'inheritance: ANALYZE VERBOSE of the parent ran');
	like($verbose, qr/analyzing "public\.ip" inheritance tree/,
		'inheritance: the parent\'s inheritance tree was sampled');
	for my $c ('ic_1', 'ic_2', 'ic_3')
	{
		my $own = () = $verbose =~ /analyzing "public\.$c"$/mg;
		is(stats_of(oid_of($c), 'analyze', 1 + $own), (1 + $own) . '|t|t',
			"inheritance child $c: ANALYZE of the parent prefetched it"
			  . ($own ? ', and its own ANALYZE' : ''));
	}
	ok(wait_monitor_idle($node), 'inheritance: the monitor is idle');
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_prefetch WHERE command = 'vacuum'"),
		'0', 'inheritance: no vacuum rows');
}

# ---- mapped catalogs: pg_class (mapped) and pg_authid (shared, mapped)
{
	$node->safe_psql(
		'postgres', q{
DO $$
BEGIN
  FOR i IN 1..1500 LOOP
    EXECUTE format('CREATE ROLE regress_bgwp_role_%s', i);
  END LOOP;
END
$$;
});
	$node->safe_psql('postgres', 'VACUUM (FREEZE) pg_class, pg_authid');
	my $class_blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('pg_class') / 8192");
	my $authid_blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('pg_authid') / 8192");
	note("pg_class has $class_blocks blocks, pg_authid $authid_blocks");
	reset_stats();
	# one block each 50 ms
	my $crawl = "SET vacuum_cost_delay = '50ms'; SET vacuum_cost_limit = 1;";
	$node->safe_psql('postgres', "$crawl VACUUM (DISABLE_PAGE_SKIPPING) pg_class;");
	$node->safe_psql('postgres', "$crawl VACUUM (DISABLE_PAGE_SKIPPING) pg_authid;");
	is(stats_of(oid_of('pg_class'), 'vacuum'), '1|t|t', 'pg_class (mapped): prefetched');
	is(stats_of(oid_of('pg_authid'), 'vacuum'), '1|t|t', 'pg_authid (shared, mapped): prefetched');
	$node->safe_psql(
		'postgres', q{
DO $$
BEGIN
  FOR i IN 1..1500 LOOP
    EXECUTE format('DROP ROLE regress_bgwp_role_%s', i);
  END LOOP;
END
$$;
});
}

# ---- a tablespace of its own, and where the depth comes from
{
	my $dir = PostgreSQL::Test::Utils::tempdir;
	$node->safe_psql('postgres', "CREATE TABLESPACE spc LOCATION '$dir'");
	$node->safe_psql('postgres',
		'CREATE TABLE ts (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = off) TABLESPACE spc');
	fill('ts', 24000);
	$node->safe_psql('postgres', 'VACUUM (FREEZE) ts');
	my $ts = oid_of('ts');

	# Run a slowed VACUUM of ts; while it is prefetched, sample its depth,
	# depth source and reads in flight.  Returns "depth source", whether
	# reads in flight ever exceeded the depth, and the pg_stat_prefetch row.
	my $depth_of_scan = sub {
		reset_stats();
		my $s = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) ts', '4ms');
		my ($depth, $over) = ('', 0);
		if ($node->poll_query_until(
				'postgres',
				"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
				  WHERE relid = $ts AND state = 'prefetching'"))
		{
			$depth = $node->safe_psql('postgres',
				"SELECT io_depth || ' ' || io_depth_source FROM pg_stat_prefetch_activity WHERE relid = $ts");
			for (1 .. 10)
			{
				$over++
				  if $node->safe_psql('postgres',
					"SELECT count(*) FROM pg_stat_prefetch_activity
					  WHERE relid = $ts AND reads_in_flight > io_depth");
				usleep(50_000);
			}
		}
		$s->query('SELECT 1');
		$s->quit;
		return ($depth, $over, stats_of($ts, 'vacuum'));
	};

	# A scan with depth $n from $source (as io_depth_source shows it), never
	# more reads in flight than that, and prefetched.
	my $depth_ok = sub {
		my ($n, $source, $from) = @_;
		my ($depth, $over, $stats) = $depth_of_scan->();
		is($depth, "$n $source", "tablespace: depth $n from $from");
		is($over, 0, "tablespace: never more reads in flight than $n");
		is($stats, '1|t|t', "tablespace: prefetched with depth $n");
	};

	# the server's maintenance_io_concurrency: its default is 10 up to 17,
	# 16 from 18
	my $server_depth = $node->safe_psql('postgres', 'SHOW maintenance_io_concurrency');
	my ($depth, $over, $stats) = $depth_of_scan->();
	is($depth, "$server_depth maintenance_io_concurrency",
		"tablespace: the server default depth ($server_depth) at first");
	is($stats, '1|t|t', 'tablespace: a table in its own tablespace is prefetched');

	$node->safe_psql('postgres', "ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'spc=4'");
	$node->reload;
	$depth_ok->(4, 'bgw_prefetch.tablespace_io_depth', 'bgw_prefetch.tablespace_io_depth');

	$node->safe_psql('postgres', 'ALTER TABLESPACE spc SET (maintenance_io_concurrency = 7)');
	($depth, $over, $stats) = $depth_of_scan->();
	is($depth, '4 bgw_prefetch.tablespace_io_depth', 'tablespace: the map wins over the tablespace option');

	$node->safe_psql('postgres', 'ALTER SYSTEM RESET bgw_prefetch.tablespace_io_depth');
	$node->reload;
	$depth_ok->(7, 'tablespace option', 'the tablespace option');

	# maintenance_io_concurrency = 0 turns core's prefetching off; ours
	# still needs one read at a time
	$node->safe_psql('postgres', 'ALTER TABLESPACE spc SET (maintenance_io_concurrency = 0)');
	($depth, $over, $stats) = $depth_of_scan->();
	is($depth, '1 tablespace option', 'tablespace: option 0 gives depth 1');
	is($stats, '1|t|t', 'tablespace: prefetched with depth 1');
}

# ---- a table that grows during the scan, and one that shrank before it
{
	create_frozen_table($node, 'postgres', 'gs', 24000);
	my $gs = oid_of('gs');
	my $start_blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('gs') / 8192");

	foreach my $command ('VACUUM (DISABLE_PAGE_SKIPPING)', 'ANALYZE')
	{
		my $cmd = $command =~ /^VACUUM/ ? 'vacuum' : 'analyze';
		my $blocks = $node->safe_psql('postgres', "SELECT pg_relation_size('gs') / 8192");
		reset_stats();
		my $offset = -s $node->logfile;
		my $s = start_slow($node, 'postgres', "$command gs", '10ms');
		ok( $node->poll_query_until(
				'postgres',
				"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
				  WHERE relid = $gs AND state = 'prefetching'"),
			"growing table: the $cmd is prefetched");
		# grow by a third while the scan runs, checking the prefetch bound
		my $beyond = 0;
		for my $round (1 .. 4)
		{
			fill('gs', 2000, 100000 * $round);
			$beyond++
			  if $node->safe_psql('postgres',
				"SELECT count(*) FROM pg_stat_prefetch_activity
				  WHERE relid = $gs AND (prefetch_block > $blocks OR total_blocks > $blocks)");
		}
		$s->query('SELECT 1');
		$s->quit;
		my $grown = $node->safe_psql('postgres', "SELECT pg_relation_size('gs') / 8192");
		cmp_ok($grown, '>', $blocks, "growing table: grew from $blocks to $grown blocks during the $cmd");
		is($beyond, 0, "growing table: the $cmd prefetch stayed within the $blocks blocks it scans");
		# the $cmd is logged
		$node->wait_for_log(
			qr/bgw_prefetch: $cmd of "public\.gs" .*\n\s*blocks: \d+ (read|sampled)/, $offset);
		my ($head, $read, $prefetched) = slurp_file($node->logfile, $offset) =~
		  /bgw_prefetch: $cmd of "public\.gs"([^\n]*)\n\s*blocks: (\d+) (?:read|sampled).*?prefetch: (\d+) blocks/s;
		ok(defined $read && defined $prefetched, "growing table: the ${cmd}'s LOG line gives its blocks and prefetch");
		my ($join) = ($head // '') =~ /followed from block (\d+)/;
		$join //= 0;
		cmp_ok($join + ($read // $blocks + 2), '<=', $blocks + 1,
			"growing table: $cmd read within the file it scans (followed from $join, read $read)");
		cmp_ok($prefetched // $blocks + 1, '<=', $blocks, "growing table: $cmd prefetched within the $blocks blocks it scans");
	}

	# shrink: delete the upper half and let VACUUM truncate the file
	$node->safe_psql('postgres', 'DELETE FROM gs WHERE id > 12000');
	$node->safe_psql('postgres', 'VACUUM gs');
	$node->safe_psql('postgres', 'VACUUM (FREEZE) gs');
	my $shrunk = $node->safe_psql('postgres', "SELECT pg_relation_size('gs') / 8192");
	cmp_ok($shrunk, '<', $start_blocks, "shrunk table: truncated from $start_blocks to $shrunk blocks");
	foreach my $command ('VACUUM (DISABLE_PAGE_SKIPPING)', 'ANALYZE')
	{
		my $cmd = $command =~ /^VACUUM/ ? 'vacuum' : 'analyze';
		reset_stats();
		my $offset = -s $node->logfile;
		$node->safe_psql('postgres', "$slow $command gs;");
		is(stats_of($gs, $cmd), '1|t|t', "shrunk table: the $cmd is prefetched");
		# the $cmd is logged, completed
		$node->wait_for_log(qr/bgw_prefetch: $cmd of "public\.gs" .*: completed, prefetched(, followed from block \d+)?\n\s*blocks: \d+/, $offset);
		my ($head, $read) = slurp_file($node->logfile, $offset) =~
		  /bgw_prefetch: $cmd of "public\.gs"([^\n]*)\n\s*blocks: (\d+)/;
		my ($join) = ($head // '') =~ /followed from block (\d+)/;
		$join //= 0;
		cmp_ok($join + $read, '<=', $shrunk + 1,
			"shrunk table: $cmd read within the $shrunk blocks left (followed from $join, read $read)");
	}
}

# ---- autovacuum of a table and of its TOAST table (processed as two
# tables of their own): each relation the monitor saw is either counted
# exactly (blocks_read = the "scanned" pages of autovacuum's log line) or
# recorded as joined, with the block it was followed from, in
# pg_stat_prefetch and in its LOG line.  Each is recorded, whether or not
# the monitor saw it (the table, 39 blocks, may be over before its first
# look, if the forecaster was not there yet).  Last: autovacuum stays on
# from here.
{
	my $toast = create_toasted('avt', 6000);
	my $main = oid_of('avt');
	$node->safe_psql(
		'postgres', q{
UPDATE avt SET id = id WHERE id % 50 = 0;
UPDATE avt SET doc = doc || 'x' WHERE id % 100 = 1;
});
	reset_stats();
	my $offset = -s $node->logfile;
	$node->safe_psql(
		'postgres', q{
ALTER SYSTEM SET autovacuum = on;
ALTER SYSTEM SET autovacuum_naptime = '1s';
ALTER SYSTEM SET log_autovacuum_min_duration = 0;
ALTER TABLE avt SET (autovacuum_enabled = on, autovacuum_vacuum_threshold = 10,
                     autovacuum_vacuum_scale_factor = 0, autovacuum_analyze_threshold = 1000000000,
                     toast.autovacuum_enabled = on, toast.autovacuum_vacuum_threshold = 10,
                     toast.autovacuum_vacuum_scale_factor = 0);
SELECT pg_reload_conf();
});
	my $toastname = "pg_toast.pg_toast_$main";
	for my $rel ([ 'public.avt', $main ], [ $toastname, $toast ])
	{
		my ($name, $relid) = @$rel;
		(my $re = $name) =~ s/\./\\./g;
		# autovacuum vacuumed it
		$node->wait_for_log(qr/automatic vacuum of table "postgres\.$re":.*\n.*scanned/, $offset);
		my ($scanned) = slurp_file($node->logfile, $offset) =~
		  /automatic vacuum of table "postgres\.$re":.*\n\s*pages: \d+ removed, \d+ remain, (\d+) scanned/;
		stats_of($relid, 'vacuum');
		my $row = $node->safe_psql(
			'postgres',
			"SELECT blocks_read, joined_scans, coalesce(last_joined_block, -1)
			   FROM pg_stat_prefetch WHERE relid = $relid AND command = 'vacuum'");
		like($row, qr/^($scanned\|0\|-1|\d+\|1\|\d+)$/,
			"autovacuum: $name counted exactly ($scanned scanned) or recorded as joined: $row");
		my ($join) = $row =~ /^\d+\|1\|(\d+)$/;
		next unless defined $join;
		# logged with the block it was followed from
		$node->wait_for_log(
			qr/bgw_prefetch: automatic vacuum of "[^"]+" \(database \d+, relation $relid, pid \d+\): \w+.*, followed from block $join/,
			$offset);
	}
}

no_crash_ok($node, 'no process crashed');
unlike(slurp_file($node->logfile), qr/bgw_prefetch (monitor|resolver) (ERROR|FATAL)/,
	'no bgw_prefetch error');

$node->stop;
done_testing();
