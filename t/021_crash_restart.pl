# Crashes, signals and shutdowns of bgw_prefetch's processes.
#
# - kill -9 of the monitor, of the CLOG writer and of a resolver (caught
#   while it waits for a lock on pg_tablespace) while a slowed VACUUM is
#   being prefetched: the postmaster runs crash recovery, both static workers
#   come back with new pids, the data is intact and the next VACUUM is
#   served again;
# - SIGTERM (not from the postmaster) of the monitor while it prefetches,
#   and of the CLOG writer: each exits with status 1 (the monitor's exit
#   callback clears the activity view) and is restarted by the postmaster
#   (bgw_restart_time is 10 s), and the monitor serves again;
# - pg_ctl stop -m fast and -m immediate while a VACUUM is being
#   prefetched: the stop completes and the server restarts and serves.
#
# Nothing is timed: a process that does not exit, does not come back or
# holds up a stop fails the test when the framework's default timeout
# ($PostgreSQL::Test::Utils::timeout_default) runs out.
#
# Throughout, no process may die by a signal we did not send, and no server
# process may end in a crash restart we did not cause.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node(
	'crash_restart', conf => q{
restart_after_crash = on
log_line_prefix = '%m [%p] %b '
});

# A 3,000-block table, frozen, so that VACUUM (DISABLE_PAGE_SKIPPING) reads
# every block without dirtying any: its pace is then set by the cost delay.
create_frozen_table($node, 'postgres', 'big', 24000);
$node->safe_psql(
	'postgres', q{
CREATE TABLE ledger (id int PRIMARY KEY, val bigint) WITH (autovacuum_enabled = off);
INSERT INTO ledger SELECT g, g * 7 FROM generate_series(1, 50000) g;
});

my $checksum_query = q{
SELECT count(*), sum(val), md5(string_agg(id || ':' || val, ',' ORDER BY id))
  FROM ledger};
my $ledger_rows = 50000;

# Wait until a worker of this type runs with a pid other than $old; a test,
# whose result is returned.
sub wait_new_worker
{
	my ($type, $old, $what) = @_;
	return ok(
		$node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_activity
			  WHERE backend_type = '$type' AND pid <> $old"),
		"$what: $type is back with a new pid");
}

# Start a VACUUM of big in the background, slowed to last several seconds;
# returns the psql session (BackgroundPsql).
sub start_slow_vacuum
{
	my ($delay) = @_;
	return start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) big', $delay);
}

# Cancel the slowed VACUUM of big, if one runs, rather than wait for it.
sub cancel_vacuum
{
	$node->safe_psql('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_progress_vacuum WHERE relid = 'big'::regclass");
	return;
}

sub wait_prefetching
{
	my ($what) = @_;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
			  WHERE relid = 'big'::regclass AND state = 'prefetching'
			    AND blocks_prefetched > 0"),
		"$what: the VACUUM of big is being prefetched");
}

# A later VACUUM is served: pg_stat_prefetch gets a scan with reads.
sub check_served_again
{
	my ($what) = @_;
	return served_again_ok($node, 'big', "$what: a later VACUUM is prefetched again");
}

sub check_data
{
	my ($expected, $what) = @_;
	is($node->safe_psql('postgres', $checksum_query), $expected,
		"$what: ledger is intact");
}

# Commit more rows before each crash: what was committed must survive.
sub add_rows
{
	my $from = $ledger_rows + 1;
	$ledger_rows += 1000;
	$node->safe_psql('postgres',
		"INSERT INTO ledger SELECT g, g * 7 FROM generate_series($from, $ledger_rows) g");
	return $node->safe_psql('postgres', $checksum_query);
}

# Kill -9 one process of ours while a VACUUM is prefetched; check recovery.
sub crash_and_recover
{
	my ($what, $victim_query, $checksum) = @_;
	my $monitor = monitor_pid($node);
	my $writer = worker_pid($node, 'bgw_prefetch clog writer');
	my $victim = $node->safe_psql('postgres', $victim_query);
	like($victim, qr/^\d+$/, "$what: victim pid found");

	my $offset = -s $node->logfile;
	kill 'KILL', $victim;
	# the postmaster runs a crash restart
	$node->wait_for_log(
		qr/\(PID $victim\) was terminated by signal 9: Killed.*all server processes terminated; reinitializing.*database system is ready to accept connections/s,
		$offset);
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/database system was interrupted|database system was not properly shut down/,
		"$what: crash recovery ran");
	wait_new_worker('bgw_prefetch monitor', $monitor, $what);
	wait_new_worker('bgw_prefetch clog writer', $writer, $what);
	check_data($checksum, $what);
	# the new monitor publishes its pid once it runs: wait for it
	my $new_monitor = monitor_pid($node);
	like($new_monitor, qr/^\d+$/, "$what: bgw_prefetch_status() shows the new monitor");
	isnt($new_monitor, $monitor, "$what: ... not the old one");
	# the statistics live in shared memory, which the crash restart made
	# anew: empty, and the hash's count agrees (nothing has run since; the
	# VACUUM's backend was terminated by the crash)
	is( $node->safe_psql(
			'postgres',
			'SELECT count(*), (SELECT entries FROM bgw_prefetch_status()) FROM pg_stat_prefetch'),
		'0|0', "$what: pg_stat_prefetch starts empty after the crash restart");
	return;
}

my $crashes_caused = 0;

# ---- kill -9 of the monitor, then of the CLOG writer, while the monitor
# prefetches
foreach my $victim ([ 'monitor', 'bgw_prefetch monitor' ],
	[ 'CLOG writer', 'bgw_prefetch clog writer' ])
{
	my ($who, $type) = @$victim;
	my $checksum = add_rows();
	my $s = start_slow_vacuum('10ms');
	wait_prefetching("$who kill");
	crash_and_recover("$who kill",
		"SELECT pid FROM pg_stat_activity WHERE backend_type = '$type'",
		$checksum);
	$crashes_caused++;
	quit_session($s);
	check_served_again("after the $who was killed");
}

# ---- kill -9 of a resolver.  A resolver lives for one catalog lookup; hold
# an exclusive lock on pg_tablespace (which it reads to find the
# tablespace's depth, and the VACUUM does not need) so that it waits long
# enough to be caught.  While the lock is held, queries must not need
# pg_tablespace either: the planner reads it for the page costs of a table,
# so query the functions, not the views joined with pg_class.
{
	my $big = $node->safe_psql('postgres', "SELECT 'big'::regclass::oid");
	my $checksum = add_rows();
	my $locker = $node->background_psql('postgres');
	$locker->query_safe('BEGIN; LOCK TABLE pg_tablespace IN ACCESS EXCLUSIVE MODE');
	my $s = start_slow_vacuum('10ms');
	# (a resolver worker, or the database's forecaster, which resolves for
	# it when it is there)
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) >= 1 FROM pg_stat_activity
			  WHERE backend_type IN ('bgw_prefetch resolver', 'bgw_prefetch forecaster')
			    AND wait_event_type = 'Lock'"),
		'resolver kill: a resolver waits for the lock');
	ok( $node->poll_query_until(
			'postgres',
			"SELECT state = 'resolving' FROM bgw_prefetch_activity() WHERE relid = $big"),
		'resolver kill: the target is resolving meanwhile');
	crash_and_recover('resolver kill',
		"SELECT pid FROM pg_stat_activity
		  WHERE backend_type IN ('bgw_prefetch resolver', 'bgw_prefetch forecaster')
		    AND wait_event_type = 'Lock' LIMIT 1",
		$checksum);
	$crashes_caused++;
	quit_session($s);
	quit_session($locker);
	check_served_again('after a resolver was killed');
}

# ---- SIGTERM of the monitor and of the CLOG writer: each exits with
# status 1 and is restarted (bgw_restart_time = 10 s).  (pg_cancel_backend()
# does nothing to either: t/028.)
foreach my $type ('bgw_prefetch monitor', 'bgw_prefetch clog writer')
{
	my $s;
	$s = start_slow_vacuum('10ms') if $type eq 'bgw_prefetch monitor';
	wait_prefetching('SIGTERM') if $s;
	my $pid = worker_pid($node, $type);
	my $offset = -s $node->logfile;
	kill 'TERM', $pid;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid"),
		"SIGTERM: $type exits");
	if ($s)
	{
		is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_prefetch_activity'),
			'0', 'SIGTERM: the monitor\'s exit cleared the activity view');
		cancel_vacuum();
		quit_session($s);
	}

	# back after bgw_restart_time (10 s)
	my $back = wait_new_worker($type, $pid, 'SIGTERM');
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/"$type" \(PID $pid\) exited with exit code 1/,
		"SIGTERM: $type exited with status 1");
	unlike($log, qr/was terminated by signal|all server processes terminated/,
		"SIGTERM: $type: no crash restart");
	if (!$back)
	{
		# keep testing the rest with a complete server
		diag("$type did not come back after SIGTERM; restarting the server");
		$node->restart;
	}
}
check_served_again('after SIGTERM');

# ---- pg_ctl stop while a VACUUM is being prefetched
foreach my $mode ('fast', 'immediate')
{
	my $checksum = add_rows();
	my $s = start_slow_vacuum('10ms');
	wait_prefetching("stop -m $mode");
	# pg_ctl waits for the stop up to PGCTLTIMEOUT, here the framework's
	# default timeout; stop() dies if the stop did not complete by then
	{
		local $ENV{PGCTLTIMEOUT} = $PostgreSQL::Test::Utils::timeout_default;
		$node->stop($mode);
	}
	quit_session($s);
	my $offset = -s $node->logfile;
	$node->start;
	my $log = slurp_file($node->logfile, $offset);
	if ($mode eq 'immediate')
	{
		like($log, qr/database system was interrupted|not properly shut down/,
			'stop -m immediate: recovery at restart');
	}
	else
	{
		like($log, qr/database system was shut down at/, 'stop -m fast: clean shutdown');
	}
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(DISTINCT backend_type) = 2 FROM pg_stat_activity
			  WHERE backend_type IN ('bgw_prefetch monitor', 'bgw_prefetch clog writer')"),
		"stop -m $mode: both workers run after the restart");
	check_data($checksum, "stop -m $mode");
	check_served_again("after stop -m $mode");
}

# ---- the whole log: only the crashes we caused
my $log = slurp_file($node->logfile);
my $restarts = () = $log =~ /all server processes terminated; reinitializing/g;
is($restarts, $crashes_caused, "exactly the $crashes_caused crash restarts we caused");
my $signalled = () = $log =~ /was terminated by signal/g;
is($signalled, $crashes_caused, 'no process died by a signal we did not send');
unlike($log, qr/TRAP:|PANIC:|was terminated by exception/, 'no assertion failure or PANIC');

$node->stop;
done_testing();
