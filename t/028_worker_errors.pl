# An ERROR in any of bgw_prefetch's workers ends that worker cleanly, as an
# ERROR ends autoprewarm's leader: the ERROR is logged, the process exits
# with status 1 (no crash restart), what it served carries on without it,
# and a fast shutdown afterwards completes within 5 s.
#
# - a resolver, cancelled while it waits for a lock on pg_tablespace: the
#   VACUUM it resolved for is watched without prefetch, and counted with
#   the reason;
# - a buffer loader (read_into = shared_buffers), cancelled while it loads:
#   the VACUUM is still pre-read into the OS cache, and its scan counts a
#   loader abort;
# - the monitor: pg_cancel_backend() while it prefetches changes nothing
#   (there is no query to cancel); pg_terminate_backend() ends it with
#   status 1, and the postmaster starts a new one after bgw_restart_time
#   (10 s), which serves again;
# - the CLOG writer, whose write fails (the CLOG segment made read-only):
#   the postmaster starts a new one after 10 s, which fails again and then
#   backs off (one log line, status "backing off", 10 s more) before it
#   writes, once the file is writable.
#
# Then pg_ctl stop -m fast while a VACUUM is prefetched into shared buffers
# must return within 5 s, and the monitor and the CLOG writer exit with
# status 0 (the postmaster logs no exit of theirs).  The other waits are for events, bounded by the
# framework's default timeout.  Reads ahead go at most 256 blocks ahead of
# the scan, so that they follow it (the table has 4,000).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = new_bgwp_node(
	'worker_errors', conf => q{
log_line_prefix = '%m [%p] %b '
checkpoint_timeout = 1h
bgw_prefetch.clog_writer_delay = 10ms
bgw_prefetch.max_distance = 256
});
create_burn_xids($node);

# 4,000 frozen blocks: VACUUM (DISABLE_PAGE_SKIPPING) reads them all, at
# the pace its cost delay sets.
create_frozen_table($node, 'postgres', 'big', 32000);

# Cancel process $pid (of backend_type $type), and check that it ends as an
# ERROR ends a worker: logged, exit status 1, no crash restart.
sub cancel_worker_ok
{
	my ($type, $pid) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$node->wait_for_log(qr/"$type" \(PID $pid\) exited with exit code 1/, $offset);
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/\[$pid\] $type ERROR:  canceling statement due to user request/,
		"$type: the ERROR is logged");
	unlike($log, qr/was terminated by signal|all server processes terminated/,
		"$type: no crash restart");
	return;
}

# Wait until one process of backend_type $type matches the SQL condition
# $where (a test named $name); return its pid.
sub wait_worker_pid
{
	my ($type, $where, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = '$type' AND $where"),
		$name);
	return worker_pid($node, $type);
}

# Wait for the slowed VACUUM in session $s to end, then for its scan of big
# to be counted.
sub finish_vacuum
{
	my ($s) = @_;
	$s->query_safe('SELECT 1');
	quit_session($s);
	ok(wait_for_scans($node, 'big', 'vacuum', 1), 'the VACUUM of big is counted');
	return;
}

# ---- a resolver.  It reads pg_tablespace for the tablespace's depth: an
# exclusive lock on it (which the VACUUM does not need) keeps it waiting.
# While the lock is held, queries must not need pg_tablespace either: the
# planner reads it for the page costs of a table, so query the functions,
# not the views joined with pg_class.
{
	my $big = $node->safe_psql('postgres', "SELECT 'big'::regclass::oid");
	reset_prefetch_stats($node);
	my $locker = $node->background_psql('postgres');
	$locker->query_safe('BEGIN; LOCK TABLE pg_tablespace IN ACCESS EXCLUSIVE MODE');
	my $s = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) big', '10ms');
	my $resolver = wait_worker_pid('bgw_prefetch resolver', "wait_event_type = 'Lock'",
		'resolver: it waits for the lock');
	cancel_worker_ok('bgw_prefetch resolver', $resolver);
	$locker->query_safe('COMMIT');
	quit_session($locker);
	finish_vacuum($s);
	is( $node->safe_psql(
			'postgres',
			"SELECT scans, prefetched_scans, watched_scans, last_watched_reason
			   FROM bgw_prefetch_stats() WHERE relid = $big AND command = 'vacuum'"),
		'1|0|1|relation could not be resolved',
		'resolver: the VACUUM is counted, watched without prefetch, with the reason');
	served_again_ok($node, 'big', 'resolver: a later VACUUM is prefetched');
}

# ---- a buffer loader.  The VACUUM crawls (cost limit 2), so that it still
# runs when the loader is cancelled.
{
	$node->append_conf('postgresql.conf', "bgw_prefetch.read_into = shared_buffers\n");
	# evict big from shared buffers
	$node->restart;
	reset_prefetch_stats($node);
	my $s = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) big', '10ms', 2);
	my $loader = wait_worker_pid('bgw_prefetch buffer loader', "state = 'active'",
		'loader: it loads');
	cancel_worker_ok('bgw_prefetch buffer loader', $loader);
	my $prefetched = $node->safe_psql('postgres',
		"SELECT blocks_prefetched FROM pg_stat_prefetch_activity WHERE relid = 'big'::regclass");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT blocks_prefetched > $prefetched FROM pg_stat_prefetch_activity
			  WHERE relid = 'big'::regclass AND state = 'prefetching'"),
		'loader: the VACUUM is still read ahead into the OS cache');
	$node->safe_psql('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_progress_vacuum WHERE relid = 'big'::regclass");
	quit_session($s);
	ok(wait_for_scans($node, 'big', 'vacuum', 1), 'loader: the VACUUM is counted');
	is( $node->safe_psql(
			'postgres',
			"SELECT prefetched_scans, loader_aborts FROM pg_stat_prefetch
			  WHERE relid = 'big'::regclass AND command = 'vacuum'"),
		'1|1', 'loader: the scan counts a loader abort');
}

# ---- the monitor
{
	my $monitor = monitor_pid($node);
	my $s = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) big', '10ms', 2);
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
			  WHERE relid = 'big'::regclass AND state = 'prefetching'"),
		'monitor: it prefetches');
	my $offset = -s $node->logfile;
	my $activity = "FROM pg_stat_prefetch_activity WHERE relid = 'big'::regclass";
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($monitor)");
	# the same monitor reads further ahead after the signal: it went through
	# its loop (CHECK_FOR_INTERRUPTS()) since
	my $block = $node->safe_psql('postgres', "SELECT prefetch_block $activity");
	ok( $node->poll_query_until(
			'postgres', qq{
SELECT (SELECT pid FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch monitor') = $monitor
       AND prefetch_block > $block AND state = 'prefetching' $activity}),
		'monitor: pg_cancel_backend() leaves it prefetching');
	unlike(slurp_file($node->logfile, $offset), qr/\[$monitor\].*ERROR/,
		'monitor: ... and logs no ERROR');
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($monitor)");
	$node->wait_for_log(qr/"bgw_prefetch monitor" \(PID $monitor\) exited with exit code 1/,
		$offset);
	$node->safe_psql('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_progress_vacuum WHERE relid = 'big'::regclass");
	quit_session($s);
	wait_worker_pid('bgw_prefetch monitor', "pid <> $monitor",
		'monitor: the postmaster starts a new one');
	served_again_ok($node, 'big', 'monitor: a later VACUUM is prefetched');
}

# ---- the CLOG writer.  With the writer off, leave a dirty page behind the
# latest one, make its segment read-only, turn the writer on: its write
# fails.  A checkpoint first writes the latest page (creating its segment
# file if it is the first of a new segment); one page of xids later that
# page is the dirty one behind the latest, in a segment that exists.
{
	my $pid = worker_pid($node, 'bgw_prefetch clog writer');
	$node->safe_psql('postgres', 'ALTER SYSTEM SET bgw_prefetch.clog_writer = off');
	$node->reload;
	ok($node->poll_query_until('postgres', "SELECT status = 'off' FROM pg_stat_prefetch_clog"),
		'CLOG writer: off');
	$node->safe_psql('postgres', 'CHECKPOINT');
	$node->safe_psql('postgres', 'SET synchronous_commit = off; CALL burn_xids(32768)');
	my $xid = $node->safe_psql('postgres',
		'SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint');
	# 32 pages of 32768 xids a segment
	my $prev_page = int($xid / 32768) - 1;
	my $segment = sprintf('%s/pg_xact/%04X', $node->data_dir, int($prev_page / 32));
	ok(-f $segment, "CLOG writer: segment $segment exists");
	chmod 0400, $segment or die "chmod $segment: $!";
	my $written = $node->safe_psql('postgres', 'SELECT pages_written FROM pg_stat_prefetch_clog');
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', 'ALTER SYSTEM SET bgw_prefetch.clog_writer = on');
	$node->reload;
	$node->wait_for_log(
		qr/"bgw_prefetch clog writer" \(PID $pid\) exited with exit code 1/, $offset);
	my $log = slurp_file($node->logfile, $offset);
	like($log,
		qr/\[$pid\] bgw_prefetch clog writer ERROR:  could not access status of transaction/,
		'CLOG writer: the write error is logged');
	unlike($log, qr/was terminated by signal|all server processes terminated/,
		'CLOG writer: no crash restart');

	# the next writer, 10 s later, fails on the same page; the one after it
	# backs off before writing
	$node->wait_for_log(
		qr/bgw_prefetch clog writer backs off after 2 consecutive errors: it writes again in 10 s/,
		$offset);
	ok( $node->poll_query_until(
			'postgres', "SELECT status = 'backing off' FROM pg_stat_prefetch_clog"),
		'CLOG writer: after a second error in a row, the next writer backs off');
	my $errors = () = slurp_file($node->logfile, $offset) =~ /clog writer ERROR/g;
	is($errors, 2, 'CLOG writer: one ERROR per writer, two writers');
	chmod 0600, $segment or die "chmod $segment: $!";
	ok( $node->poll_query_until(
			'postgres', "SELECT pages_written > $written FROM pg_stat_prefetch_clog"),
		'CLOG writer: after its back-off, a writer writes once the file is writable');
	isnt(worker_pid($node, 'bgw_prefetch clog writer'), $pid,
		'CLOG writer: ... and it is a new process');
}

# ---- a fast shutdown while a VACUUM is prefetched into shared buffers
{
	my $s = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) big', '10ms', 2);
	wait_worker_pid('bgw_prefetch buffer loader', "state = 'active'",
		'shutdown: a loader loads');
	my $offset = -s $node->logfile;
	my $start = time();
	$node->stop('fast');
	my $elapsed = time() - $start;
	cmp_ok($elapsed, '<', 5, sprintf('pg_ctl stop -m fast returned in %.1f s', $elapsed));
	quit_session($s);
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/database system is shut down/, 'shutdown: clean');
	unlike($log, qr/"bgw_prefetch (monitor|clog writer)" \(PID \d+\) exited with exit code/,
		'shutdown: the monitor and the CLOG writer exit with status 0');
}

no_crash_ok($node, 'no process crashed, no crash restart');
done_testing();
