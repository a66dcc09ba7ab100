# The server comes first: nothing bgw_prefetch does may block or break
# database-level and table-level DDL around the scans it serves.
#
# - DROP DATABASE, ten times, of a database whose table is being vacuumed
#   and prefetched: WITH (FORCE) while the VACUUM runs, or plainly right
#   after it ends, with DROP DATABASE of another database while the monitor
#   is busy (PostgreSQL 15's DROP DATABASE waits until every process,
#   the monitor included, has absorbed a ProcSignalBarrier);
# - CREATE DATABASE x TEMPLATE y, ten times, while autovacuum vacuums y's
#   table and the monitor prefetches it (CREATE DATABASE ends autovacuum in
#   the template and waits for every other connection to it, resolvers
#   included);
# - DROP TABLE, TRUNCATE, VACUUM FULL and CLUSTER of a table right after
#   its watched VACUUM or ANALYZE (queued behind it from a second session,
#   and run by the same session right after it), and of another table while
#   the scan runs: each succeeds, the scan's target ends, and a later VACUUM
#   is prefetched again.
#
# Each DDL statement must succeed (a statement left waiting for the monitor
# or a resolver fails the test when psql times out, after the framework's
# default timeout), the monitor must keep its pid, and no process may crash.  A scan whose backend is
# terminated mid-way (DROP DATABASE WITH (FORCE), CREATE DATABASE ending an
# autovacuum) must be logged as 'did not complete', one that ran to its end as
# 'completed' (doc/reference.md, "Log lines").
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = new_bgwp_node(
	'server_first', conf => q{
autovacuum_naptime = 1s
log_line_prefix = '%m [%p] %b '
});

my $monitor = monitor_pid($node);
like($monitor, qr/^\d+$/, 'the monitor runs');

# The outcome the monitor logged for the scan of $rel by backend $pid:
# completed or did not complete.
sub logged_outcome
{
	my ($rel, $pid, $offset) = @_;
	my $re = qr/bgw_prefetch: (?:automatic )?(?:vacuum|analyze) of "public\.$rel" \(database \d+, relation \d+, pid $pid\): (completed|did not complete)/;
	$node->wait_for_log($re, $offset);
	my ($outcome) = slurp_file($node->logfile, $offset) =~ $re;
	return $outcome;
}

# Wait until the monitor prefetches relation $rel of database $db.  The
# relation is looked up in its own database (the extension's views exist in
# postgres only; the function behind them serves every database).
sub wait_prefetching
{
	my ($db, $rel, $what) = @_;
	my $relid = $node->safe_psql($db, "SELECT '$rel'::regclass::oid");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) > 0 FROM bgw_prefetch_activity() a
			   JOIN pg_database d ON d.oid = a.datid
			  WHERE d.datname = '$db' AND a.relid = $relid
			    AND a.state = 'prefetching' AND a.blocks_prefetched > 0"),
		"$what: $db.$rel is being prefetched");
	return $relid;
}

# Run one statement, which must succeed, and not stay blocked: it is given
# the framework's default timeout (nothing in it waits for a scan to end,
# so it only runs into that if something of ours blocks it).
sub ddl_ok
{
	my ($db, $sql, $what) = @_;
	my $timed_out = 0;
	my ($ret, $stdout, $stderr) = $node->psql(
		$db, $sql,
		timeout => $PostgreSQL::Test::Utils::timeout_default,
		timed_out => \$timed_out);
	ok(!$timed_out, "$what: not blocked");
	is($ret, 0, "$what: succeeds") or diag($stderr);
	return;
}

# The monitor is the same process, and a later VACUUM in postgres is
# prefetched.
sub still_serving
{
	my ($what) = @_;
	is(monitor_pid($node), $monitor, "$what: same monitor");
	served_again_ok($node, 'probe', "$what: a later VACUUM is prefetched");
	return;
}

create_frozen_table($node, 'postgres', 'probe', 24000);

# The deleted files of database $dboid that a process of the server still
# holds open ("path (deleted)" in /proc/PID/fd): each keeps its disk space.
sub deleted_files_held
{
	my ($dboid) = @_;
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	my $base = $node->data_dir . "/base/$dboid/";
	my @held;
	for my $dir (glob('/proc/[0-9]*'))
	{
		my $stat = eval { slurp_file("$dir/stat") } // next;
		my ($ppid) = $stat =~ /^\d+ \(.*\) \S (\d+)/s;
		next unless defined $ppid && $ppid == $postmaster;
		for my $fd (glob("$dir/fd/*"))
		{
			my $target = readlink($fd) // next;
			push @held, "$dir: $target"
			  if index($target, $base) == 0 && $target =~ / \(deleted\)$/;
		}
	}
	return @held;
}

# Wait (up to the framework's default timeout) until no process of the
# server holds a deleted file of database $dboid; a test.
sub no_deleted_files_held_ok
{
	my ($dboid, $what) = @_;
	my @held = deleted_files_held($dboid);
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (@held && time < $deadline)
	{
		usleep(20_000);
		@held = deleted_files_held($dboid);
	}
	return is(scalar(@held), 0, $what) || diag(join("\n", @held));
}

# ---- DROP DATABASE x 10
$node->safe_psql('postgres', 'CREATE DATABASE tmpl_big');
create_frozen_table($node, 'tmpl_big', 'big', 24000);

for my $i (1 .. 10)
{
	my $db = "dd_$i";
	$node->safe_psql('postgres', "CREATE DATABASE $db TEMPLATE tmpl_big");
	$node->safe_psql('postgres', "CREATE DATABASE idle_$i");
	my $offset = -s $node->logfile;
	# odd rounds terminate the VACUUM mid-scan: make sure it is still
	# scanning then, however slow the machine (cost limit 2: ~10 ms a page)
	my $dboid = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = '$db'");
	my ($s, $pid) = start_slow($node, $db, 'VACUUM (DISABLE_PAGE_SKIPPING) big',
		'10ms', $i % 2 ? 2 : 20);
	wait_prefetching($db, 'big', "DROP DATABASE #$i");

	# the monitor is busy: a DROP DATABASE elsewhere still gets its barrier
	ddl_ok('postgres', "DROP DATABASE idle_$i",
		"DROP DATABASE #$i of another database while $db is prefetched");

	if ($i % 2)
	{
		# the VACUUM is terminated, the files go while they are read
		ddl_ok('postgres', "DROP DATABASE $db WITH (FORCE)",
			"DROP DATABASE #$i WITH (FORCE) during the watched VACUUM");
		# the VACUUM was terminated mid-scan: the prefetcher gave it up
		is(logged_outcome('big', $pid, $offset), 'did not complete',
			"DROP DATABASE #$i WITH (FORCE): the terminated VACUUM's scan is logged as not completed");
	}
	else
	{
		# right after the VACUUM ends and its session disconnects, while
		# its target ends and its resolver may still be around
		quit_session($s);
		ddl_ok('postgres', "DROP DATABASE $db",
			"DROP DATABASE #$i right after the watched VACUUM");
		is(logged_outcome('big', $pid, $offset), 'completed',
			"DROP DATABASE #$i: the VACUUM that ran to its end is logged as completed");
	}
	quit_session($s);
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 0 FROM bgw_prefetch_activity()
			  WHERE datid NOT IN (SELECT oid FROM pg_database)"),
		"DROP DATABASE #$i: no target left on the dropped database");
	no_deleted_files_held_ok($dboid,
		"DROP DATABASE #$i: no process of the server holds a file of the dropped database open");
}
still_serving('after 10 DROP DATABASE');

# ---- CREATE DATABASE x TEMPLATE y x 10, while autovacuum vacuums y
$node->safe_psql('postgres', 'CREATE DATABASE y');
$node->safe_psql(
	'y', q{
CREATE TABLE t (id int, n int, pad text) WITH (fillfactor = 85, autovacuum_enabled = off);
INSERT INTO t SELECT g, 0, repeat('x', 800) FROM generate_series(1, 27000) g;
VACUUM (FREEZE) t;
ALTER TABLE t SET (autovacuum_enabled = on,
                   autovacuum_vacuum_threshold = 0,
                   autovacuum_vacuum_scale_factor = 0,
                   autovacuum_vacuum_insert_threshold = -1,
                   autovacuum_vacuum_cost_delay = 10,
                   autovacuum_vacuum_cost_limit = 20,
                   autovacuum_analyze_threshold = 2000000000);
});
$node->safe_psql('postgres', 'ALTER SYSTEM SET autovacuum = on');
$node->reload;

for my $i (1 .. 10)
{
	# a dead row version on every page (HOT: the page has room), so that
	# autovacuum must read every page again
	$node->safe_psql('y', 'UPDATE t SET n = n + 1 WHERE id % 9 = 0');
	my $offset = -s $node->logfile;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) > 0 FROM pg_stat_prefetch_activity a
			   JOIN pg_stat_activity p ON p.pid = a.pid
			  WHERE a.datname = 'y' AND p.backend_type = 'autovacuum worker'
			    AND a.state = 'prefetching'"),
		"CREATE DATABASE #$i: autovacuum of y.t is being prefetched");
	my $av = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_prefetch_activity WHERE datname = 'y'");
	ddl_ok('postgres', "CREATE DATABASE x_$i TEMPLATE y",
		"CREATE DATABASE x_$i TEMPLATE y during the watched autovacuum");
	# CREATE DATABASE ended the autovacuum mid-scan
	is(logged_outcome('t', $av, $offset), 'did not complete',
		"CREATE DATABASE #$i: the autovacuum it ended is logged as not completed");
	is($node->safe_psql("x_$i", 'SELECT count(*) FROM t'), '27000', "x_$i is a full copy");
	ddl_ok('postgres', "DROP DATABASE x_$i", "DROP DATABASE x_$i");
}
$node->safe_psql('postgres', 'ALTER SYSTEM SET autovacuum = off');
$node->reload;
# no autovacuum left running in y (it may have been mid-way)
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'"),
	'autovacuum workers gone');
ddl_ok('postgres', 'DROP DATABASE y', 'DROP DATABASE y (the template)');
still_serving('after 10 CREATE DATABASE ... TEMPLATE');

# ---- table DDL around watched VACUUM / ANALYZE
my %ddl = (
	'DROP TABLE' => 'DROP TABLE %t',
	'TRUNCATE' => 'TRUNCATE %t',
	'VACUUM FULL' => 'VACUUM FULL %t',
	'CLUSTER' => 'CLUSTER %t USING %t_id');

sub ddl_for
{
	my ($name, $table) = @_;
	(my $sql = $ddl{$name}) =~ s/%t/$table/g;
	return $sql;
}
my $k = 0;
foreach my $command ('VACUUM (DISABLE_PAGE_SKIPPING)', 'ANALYZE')
{
	my $cmd = $command =~ /^VACUUM/ ? 'vacuum' : 'analyze';
	foreach my $name (sort keys %ddl)
	{
		$k++;
		my ($a, $b, $c) = ("a_$k", "b_$k", "c_$k");
		my $label = "$name around $cmd";
		foreach my $t ($a, $b, $c)
		{
			create_frozen_table($node, 'postgres', $t, 12000,
				"CREATE INDEX ${t}_id ON $t (id);");
		}
		my $offset = -s $node->logfile;

		# 1. while the scan of a runs: the DDL on another table b, at once;
		#    the same DDL on a, queued behind the scan by its lock.  The
		#    scan crawls (cost limit 1: one page each 20 ms, some 30 s) so
		#    that it still runs when the DDL queues, however slow the
		#    machine; once the DDL is seen waiting for the scan's backend
		#    (and for it only: nothing of ours stands in its way), the scan
		#    is cancelled rather than waited for: it ends, the queued DDL
		#    runs.
		my ($s, $spid) = start_slow($node, 'postgres', "$command $a", '20ms', 1);
		my $relid = wait_prefetching('postgres', $a, $label);
		ddl_ok('postgres', ddl_for($name, $b),
			"$label: $name of another table during the scan");
		my $q = $node->background_psql('postgres', on_error_stop => 0);
		my $qpid = $q->query_safe('SELECT pg_backend_pid()');
		$q->query_until(qr/ddl queued/,
			"\\echo ddl queued\n" . ddl_for($name, $a) . ";\n");
		ok( $node->poll_query_until(
				'postgres',
				"SELECT EXISTS (SELECT FROM pg_locks
				                 WHERE pid = $qpid AND relation = $relid AND NOT granted)
				    AND pg_blocking_pids($qpid) = ARRAY[$spid]"),
			"$label: the $name of $a waits for the lock of the scan's backend only");
		is( $node->safe_psql(
				'postgres',
				"SELECT state FROM bgw_prefetch_activity() WHERE relid = $relid"),
			'prefetching',
			"$label: the scan of $a is still prefetched while the $name waits");
		$node->safe_psql('postgres', "SELECT pg_cancel_backend($spid)");
		$s->query('SELECT 1');    # the scan ends, the queued DDL runs
		my ($out, $err) = $q->query('SELECT 1');
		is($err, 0, "$label: the queued $name of $a succeeded");
		quit_session($q);
		quit_session($s);

		# 2. the same session runs the DDL the moment the scan ends
		$s = start_slow($node, 'postgres', "$command $c; " . ddl_for($name, $c), '20ms');
		wait_prefetching('postgres', $c, $label);
		($out, $err) = $s->query('SELECT 1');
		is($err, 0, "$label: $name of $c right after its scan succeeded");
		quit_session($s);

		ok( $node->poll_query_until(
				'postgres', 'SELECT count(*) = 0 FROM bgw_prefetch_activity()'),
			"$label: the targets ended");
		my $log = slurp_file($node->logfile, $offset);
		like($log, qr/bgw_prefetch: $cmd of "public\.$a" .*: (completed|did not complete)/,
			"$label: the scan of $a was logged");
		like($log, qr/bgw_prefetch: $cmd of "public\.$c" .*: (completed|did not complete)/,
			"$label: the scan of $c was logged");
		$node->safe_psql('postgres', "DROP TABLE IF EXISTS $a, $b, $c");
	}
}
still_serving('after table DDL');

# ---- the log
no_crash_ok($node, 'no process crashed');
my $log = slurp_file($node->logfile);
unlike($log, qr/bgw_prefetch monitor (ERROR|FATAL)/, 'the monitor reported no error');
# DROP DATABASE and CREATE DATABASE wait for every process to absorb their
# ProcSignalBarrier, and log it after 5 s of waiting for one
unlike($log, qr/still waiting for backend with PID \d+ to accept ProcSignalBarrier/,
	'no ProcSignalBarrier was held up');
my @resolver_errors = $log =~ /(bgw_prefetch resolver (?:ERROR|FATAL):.*)/g;
note("resolver errors (contained, a resolver started for a database being dropped): "
	  . scalar(@resolver_errors));
unlike(join("\n", @resolver_errors), qr/ERROR/, 'no resolver ERROR');

$node->stop;
done_testing();
