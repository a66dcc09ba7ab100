# bgw_prefetch_calibrate(), bgw_prefetch_calibrate_apply() and the
# bgw_prefetch_calibration view.
#
# - Calibrations of pg_default and of a second tablespace (small file and
#   depths for speed) return a row per pattern and depth, with a plausible
#   curve (more IOPS at the best depth than at depth 1), evict the file
#   before every step (no "stayed in the page cache" warning), and leave no
#   scratch file in the tablespace's pgsql_tmp directory.
# - A cancelled calibration (while reading, with the engine's reads in
#   flight) and a terminated one leave no scratch file and no lock; the
#   session that was cancelled can calibrate again.
# - Bad arguments are rejected with their own messages; a second
#   calibration of a tablespace being calibrated is refused; privileges.
# - apply records a row visible in the view, which survives a restart;
#   reuse_last takes the session's last calibration; forget removes rows;
#   records of a dropped tablespace are pruned.
# - The fadvise method (bgw_prefetch.io_method = fadvise) is measured too.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node(
	'calibrate',
	preload_only => 1,
	conf => q{
autovacuum = off
log_temp_files = 0
});

my $tsdir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "CREATE TABLESPACE cal_ts LOCATION '$tsdir'");
my $ts_oid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_tablespace WHERE spcname = 'cal_ts'");
# cal_ts has no option of its own: the random read cost is measured at the
# server's maintenance_io_concurrency (its default is 10 up to 17, 16 from 18)
my $server_depth = $node->safe_psql('postgres', 'SHOW maintenance_io_concurrency');

# Files in the pgsql_tmp directories of pg_default and of cal_ts.
sub scratch_files
{
	my @dirs = ($node->data_dir . '/base/pgsql_tmp', glob("$tsdir/PG_*_*/pgsql_tmp"));
	return map { glob("$_/*") } @dirs;
}

my $small = 'SELECT pattern, depth, iops, mb_per_s, mean_latency_us, p99_latency_us, speedup';

# Check one calibration's rows: every pattern at every depth, positive
# figures, speedup 1 at depth 1, and more IOPS at the best depth than at 1.
sub check_curve
{
	my ($label, $out) = @_;
	my %rows;
	foreach my $line (split /\n/, $out)
	{
		my ($pattern, $depth, $iops, $mbs, $mean, $p99, $speedup) = split /\|/, $line;
		$rows{$pattern}{$depth} = { iops => $iops, mbs => $mbs, mean => $mean, p99 => $p99, speedup => $speedup };
	}
	is_deeply(
		[ map { [ sort { $a <=> $b } keys %{ $rows{$_} || {} } ] } ('sorted random', 'unsorted random', 'sequential') ],
		[ [ 1, 2, 4, 8, 16 ], [ 1, 2, 4, 8, 16 ], [ 1, 2, 4, 8 ] ],
		"$label: a row for each pattern and depth");
	my $all_positive = 1;
	foreach my $p (keys %rows)
	{
		foreach my $d (keys %{ $rows{$p} })
		{
			my $r = $rows{$p}{$d};
			$all_positive = 0 unless $r->{iops} > 0 && $r->{mbs} > 0 && $r->{mean} > 0 && $r->{p99} > 0;
		}
		$all_positive = 0 unless abs($rows{$p}{1}{speedup} - 1) < 1e-9;
	}
	ok($all_positive, "$label: positive figures, speedup 1 at depth 1");
	foreach my $p ('sorted random', 'unsorted random')
	{
		my ($best) = sort { $b <=> $a } map { $rows{$p}{$_}{iops} } keys %{ $rows{$p} };
		cmp_ok($best, '>', $rows{$p}{1}{iops},
			sprintf("$label: %s IOPS at the best depth (%.0f) above depth 1 (%.0f)",
				$p, $best, $rows{$p}{1}{iops}));
	}
	return \%rows;
}

# ---- calibrations of pg_default and of the second tablespace ----
foreach my $spc ('pg_default', 'cal_ts')
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"$small FROM bgw_prefetch_calibrate('$spc', size_mb => 64, max_depth => 16)");
	is($ret, 0, "calibration of $spc succeeds");
	check_curve($spc, $out);
	like($err, qr/NOTICE:  calibrating tablespace "$spc" with scratch file "(base|pg_tblspc\/$ts_oid\/PG_\d+_\d+)\/pgsql_tmp\/pgsql_tmp\d+\.\d+" \(64 MB\)/,
		"$spc: the scratch file is a temporary file of the tablespace");
	like($err, qr/round 3 of 3: sequential, depth \d+: \d+ IOPS/, "$spc: progress NOTICEs");
	like($err, qr/recommended depth \d+/, "$spc: recommendation NOTICE");
	unlike($err, qr/stayed in the page cache/, "$spc: every step started from a cold cache");
	is(join(',', scratch_files()), '', "$spc: no scratch file left");
}
# (PG_<major>_<catalog version>: any server version)
ok(-d (glob("$tsdir/PG_*_*/pgsql_tmp"))[0],
	'the second tablespace has a pgsql_tmp directory (made by the calibration)');

# ---- bad arguments ----
my @bad = (
	[ "'no_such_ts', 64, 16", qr/ERROR:  tablespace "no_such_ts" does not exist/ ],
	[ "'pg_global', 64, 16", qr/ERROR:  cannot calibrate tablespace "pg_global"/ ],
	[ "'pg_default', 15, 16", qr/ERROR:  size_mb 15 is out of range.*HINT:  size_mb must be between 16 and 65536/s ],
	[ "'pg_default', 65537, 16", qr/ERROR:  size_mb 65537 is out of range/ ],
	[ "'pg_default', 64, 0", qr/ERROR:  max_depth 0 is out of range.*HINT:  max_depth must be between 1 and 1024/s ],
	[ "'pg_default', 64, 1025", qr/ERROR:  max_depth 1025 is out of range/ ],
	[ "NULL, 64, 16", qr/ERROR:  tablespace must not be null/ ],
	[ "'pg_default', NULL, 16", qr/ERROR:  size_mb must not be null/ ],
	[ "'pg_default', 64, NULL", qr/ERROR:  max_depth must not be null/ ]);
foreach my $case (@bad)
{
	my ($args, $re) = @$case;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT * FROM bgw_prefetch_calibrate($args)");
	like($err, $re, "calibrate($args) is rejected");
}
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT * FROM bgw_prefetch_calibrate_apply('pg_default', 64, 16, NULL)");
	like($err, qr/ERROR:  reuse_last must not be null/, 'apply(reuse_last => NULL) is rejected');
	($ret, $out, $err) = $node->psql('postgres',
		"SET temp_file_limit = '10MB'; SELECT * FROM bgw_prefetch_calibrate('pg_default', 64, 16)");
	like($err, qr/ERROR:  size_mb 64 exceeds temp_file_limit \(10240kB\)/,
		'a file larger than temp_file_limit is refused before writing');
	($ret, $out, $err) = $node->psql('postgres',
		"SELECT bgw_prefetch_calibration_forget('no_such_ts')");
	like($err, qr/ERROR:  tablespace "no_such_ts" does not exist/, 'forget of an unknown tablespace');
}

# ---- privileges ----
$node->safe_psql('postgres', q{
CREATE ROLE regress_cal_user LOGIN;
});
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET ROLE regress_cal_user; SELECT * FROM bgw_prefetch_calibrate('pg_default', 64, 16)");
	like($err, qr/permission denied for function bgw_prefetch_calibrate/, 'calibrate is not for PUBLIC');
	($ret, $out, $err) = $node->psql('postgres',
		"SET ROLE regress_cal_user; SELECT * FROM bgw_prefetch_calibration");
	like($err, qr/permission denied for view bgw_prefetch_calibration/, 'the view is not for PUBLIC');
	($ret, $out, $err) = $node->psql('postgres',
		"SET ROLE regress_cal_user; SELECT * FROM bgw_prefetch_calibrate_apply('pg_default', 64, 16)");
	like($err, qr/permission denied for function bgw_prefetch_calibrate_apply/, 'apply is not for PUBLIC');

	$node->safe_psql('postgres',
		'GRANT EXECUTE ON FUNCTION bgw_prefetch_calibrate(name, integer, integer) TO regress_cal_user');
	($ret, $out, $err) = $node->psql('postgres',
		"SET ROLE regress_cal_user; SELECT * FROM bgw_prefetch_calibrate('cal_ts', 64, 16)");
	like($err, qr/permission denied for tablespace cal_ts/,
		'granted, but a tablespace without CREATE privilege is refused');
	$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO regress_cal_user');
	($ret, $out, $err) = $node->psql('postgres',
		"SET ROLE regress_cal_user; SELECT count(*) FROM bgw_prefetch_calibration");
	is($ret, 0, 'pg_read_all_stats reads the view');
}

# ---- cancel and terminate ----
# A big calibration in the background; wait until it reads (round 1 has
# reported), check that a second one of the same tablespace is refused,
# then stop it and look for the file.
sub start_big
{
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->query_until(qr/started/, q{
\echo started
SELECT count(*) FROM bgw_prefetch_calibrate('pg_default', 1024, 256);
});
	pump_until($bg->{run}, $bg->{timeout}, \$bg->{stderr}, qr/round 1 of 3: sorted random, depth/);
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE query LIKE '%bgw_prefetch_calibrate(''pg_default'', 1024%' AND pid <> pg_backend_pid()");
	return ($bg, $pid);
}

{
	my ($bg, $pid) = start_big();
	ok($pid > 0, "background calibration is running (pid $pid)");
	is(scalar(my @f = scratch_files()), 1, 'its scratch file exists while it runs');
	is($node->safe_psql('postgres', "SELECT size FROM pg_ls_tmpdir() LIMIT 1"),
		1024 * 1024 * 1024, 'the scratch file has size_mb of data');

	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT * FROM bgw_prefetch_calibrate('pg_default', 64, 16)");
	like($err, qr/ERROR:  a calibration of tablespace "pg_default" is already running/,
		'a second calibration of the same tablespace is refused');

	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	ok(pump_until($bg->{run}, $bg->{timeout}, \$bg->{stderr},
			qr/ERROR:  canceling statement due to user request/),
		'the calibration is cancelled');
	# the client sees the ERROR before the abort closes the file: wait
	# until the session is idle again
	$bg->{stderr} = '';
	is($bg->query('SELECT 1'), 1, 'the cancelled session is idle');
	is(join(',', scratch_files()), '', 'no scratch file after the cancel');
	ok($node->log_contains(qr/temporary file: path "base\/pgsql_tmp\/pgsql_tmp$pid\.\d+", size 1073741824/, $offset),
		'fd.c deleted the file at abort (log_temp_files)');
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = 0"),
		0, 'no lock left');
	ok(!$node->log_contains(qr/not closed at end-of-transaction|leak/, $offset), 'no leak reported');

	# the cancelled session is healthy and can calibrate again
	my $n = $bg->query("SELECT count(*) FROM bgw_prefetch_calibrate('pg_default', 16, 2)");
	is($n, 6, 'the cancelled session calibrates again (6 rows at max_depth 2)');
	$bg->quit;
}

{
	my ($bg, $pid) = start_big();
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
	# the backend leaves pg_stat_activity before its exit callbacks
	# (AtProcExit_Files among them) have run: wait for the file to go
	ok($node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid"),
		'the terminated backend is gone');
	ok($node->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_ls_tmpdir()'),
		'its scratch file goes at backend exit');
	is(join(',', scratch_files()), '', 'no scratch file after pg_terminate_backend');
	$bg->{run}->kill_kill;
}

# ---- apply, the view, restart, forget ----
{
	my $row = $node->safe_psql('postgres',
		"SELECT tablespace, recommended_depth BETWEEN 1 AND 16, seq_us_per_block > 0, random_us_per_block > 0, "
		  . "random_seq_ratio = random_us_per_block / seq_us_per_block, random_cost_depth "
		  . "FROM bgw_prefetch_calibrate_apply('cal_ts', 64, 16)");
	is($row, "cal_ts|t|t|t|t|$server_depth",
		"apply calibrates and records cal_ts (random cost at maintenance_io_concurrency $server_depth)");

	# reuse_last: the session's calibration of pg_default is recorded as is
	my ($ret, $out, $err) = $node->psql('postgres', qq{
SELECT count(*) FROM bgw_prefetch_calibrate('pg_default', 64, 16);
SELECT recommended_depth FROM bgw_prefetch_calibrate_apply('pg_default', reuse_last => true);
});
	like($err, qr/recording this session's calibration of tablespace "pg_default"/,
		'apply(reuse_last => true) takes the session\'s calibration');
	my @runs = ($err =~ /round 1 of 3: sorted random, depth 1:/g);
	is(scalar @runs, 1, 'and does not calibrate again');
}

my $view_query =
  "SELECT tablespace, spcoid, recommended_depth, seq_us_per_block, random_us_per_block, random_seq_ratio, "
  . "random_cost_depth, best_sorted_iops, size_mb, io_method, measured_at FROM bgw_prefetch_calibration ORDER BY tablespace COLLATE \"C\"";
my $view = $node->safe_psql('postgres', $view_query);
like($view, qr/^cal_ts\|$ts_oid\|\d+\|[\d.]+\|[\d.]+\|[\d.]+\|$server_depth\|[\d.]+\|64\|io_uring\|.+\npg_default\|1663\|\d+\|/,
	'the view shows both records');
ok(-f $node->data_dir . '/bgw_prefetch_calibration', 'the results file is in the data directory');

$node->restart;
is($node->safe_psql('postgres', $view_query), $view, 'the records survive a restart');

# the view reads the same file in every database
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION bgw_prefetch');
is($node->safe_psql('other', $view_query), $view, 'the records are cluster-wide');

is($node->safe_psql('postgres', "SELECT bgw_prefetch_calibration_forget('pg_default')"),
	't', 'forget removes a record');
is($node->safe_psql('postgres', "SELECT bgw_prefetch_calibration_forget('pg_default')"),
	'f', 'forget says when there was nothing to remove');
is($node->safe_psql('postgres', 'SELECT string_agg(tablespace, \',\') FROM bgw_prefetch_calibration'),
	'cal_ts', 'only cal_ts is left');

# a dropped tablespace: its record shows without a name, and goes at the
# next rewrite of the file (the calibrations left nothing in its directory,
# or DROP TABLESPACE would fail)
$node->safe_psql('postgres', 'DROP TABLESPACE cal_ts');
is($node->safe_psql('postgres', 'SELECT tablespace IS NULL, spcoid FROM bgw_prefetch_calibration'),
	"t|$ts_oid", 'the record of a dropped tablespace has no name');

# ---- the fadvise method ----
$node->safe_psql('postgres', "ALTER SYSTEM SET bgw_prefetch.io_method = 'fadvise'");
$node->reload;
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT recommended_depth > 0, io_method FROM bgw_prefetch_calibrate_apply('pg_default', 64, 16) "
		  . "CROSS JOIN (SELECT io_method FROM bgw_prefetch_calibration WHERE tablespace = 'pg_default') v");
	is($out, 't|fadvise', 'the fadvise method is measured and recorded as such');
	like($err, qr/measuring posix_fadvise\(WILLNEED\) ahead of pread\(\), not io_uring reads/,
		'and says so');
}
is($node->safe_psql('postgres', 'SELECT string_agg(tablespace, \',\') FROM bgw_prefetch_calibration'),
	'pg_default', 'the dropped tablespace\'s record was pruned at the rewrite');
is(join(',', scratch_files()), '', 'no scratch file left at the end');

is($node->safe_psql('postgres', 'SELECT bgw_prefetch_calibration_forget(NULL)'), 't',
	'forget(NULL) removes every record');
is($node->safe_psql('postgres', 'SELECT count(*) FROM bgw_prefetch_calibration'), 0, 'none left');

$node->stop;
done_testing();
