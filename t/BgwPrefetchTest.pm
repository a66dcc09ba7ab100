# BgwPrefetchTest: what the TAP tests under t/ share.
#
# Every test file starts a node that preloads bgw_prefetch, most of them
# with the same settings, and several make the same moves on it: start a
# VACUUM slowed by cost-based delay in the background, find a worker's pid,
# check that a later VACUUM is served, check the log for crashes.  This
# module keeps those in one place, so that the tests differ only where
# they test different things.
#
# The tests load it with
#
#	use FindBin;
#	use lib $FindBin::RealBin;
#	use BgwPrefetchTest;
#
# so it must stay in t/ next to them (prove runs t/*.pl only, not this
# file; scripts/test.sh and the manual recipe in doc/reliability.md copy
# the whole of t/).

package BgwPrefetchTest;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(
  bgwp_conf
  new_bgwp_node
  create_frozen_table
  make_cold
  resident_pages
  start_slow
  quit_session
  worker_pid
  monitor_pid
  hold_monitor
  hold_until_announced
  wait_for_scans
  wait_monitor_idle
  reload_monitor
  reset_prefetch_stats
  served_again_ok
  no_crash_ok
  create_burn_xids
  new_tpcb_node
  start_pgbench
  tpcb_consistent_ok
);

# The postgresql.conf lines of a node that preloads bgw_prefetch.  Unless
# preload_only is set, also the settings most tests run with: autovacuum
# stays away unless a test turns it on, and the monitor serves every table
# however small (min_relation_size = 0), logs every scan
# (log_min_duration = 0) and notices a scan within 20 ms.  The tests slow
# their scans with the cost-based delay, so that they last long enough to
# be looked at; such scans are read ahead for by default
# (cost_limited_depth = -1).
sub bgwp_conf
{
	my (%opts) = @_;
	my @settings = ("shared_preload_libraries = 'bgw_prefetch'");
	push @settings,
	  'autovacuum = off',
	  'bgw_prefetch.min_relation_size = 0',
	  'bgw_prefetch.log_min_duration = 0',
	  'bgw_prefetch.naptime = 20ms'
	  unless $opts{preload_only};
	# after a blank line, like the tests' own q{...} blocks
	return "\n" . join('', map { "$_\n" } @settings);
}

# A node named $name that preloads bgw_prefetch:
#
# - init => { ... }: options for $node->init (e.g. allows_streaming => 1);
# - preload_only => 1: bgwp_conf(preload_only => 1), without the usual
#   test settings;
# - conf => q{...}: the test's own postgresql.conf lines, appended after
#   bgwp_conf()'s (a leading newline is dropped, so that they can start on
#   the line after the q{);
# - start => 0: leave the node stopped; else it is started and the
#   extension is created in the postgres database.
sub new_bgwp_node
{
	my ($name, %opts) = @_;
	my $conf = $opts{conf} // '';
	$conf =~ s/^\n//;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opts{init} // {} });
	$node->append_conf('postgresql.conf',
		bgwp_conf(preload_only => $opts{preload_only}) . $conf);
	return $node if defined $opts{start} && !$opts{start};
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION bgw_prefetch');
	return $node;
}

# A frozen table $table of $rows rows of 900 bytes (8 a block) in database
# $db: VACUUM (DISABLE_PAGE_SKIPPING) then reads every block without
# dirtying any, at the pace the cost delay sets.  $extra is SQL run after
# the INSERT, before the VACUUM (FREEZE).
sub create_frozen_table
{
	my ($node, $db, $table, $rows, $extra) = @_;
	$extra //= '';
	$node->safe_psql(
		$db, qq{
CREATE TABLE $table (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = off);
INSERT INTO $table SELECT g, repeat('x', 900) FROM generate_series(1, $rows) g;
$extra
VACUUM (FREEZE) $table;
});
	return;
}

# Make the relations of the postgres database named in @relations (names or
# OIDs) cold: shared buffers empty (a restart, after a CHECKPOINT has made
# their pages clean) and every fork's files written out and dropped from
# the OS page cache (sync and dd iflag=nocache, which any user who can read
# the files may do).  Returns once the restarted server's monitor runs.
sub make_cold
{
	my ($node, @relations) = @_;
	$node->safe_psql('postgres', 'CHECKPOINT');
	my @paths = map {
		my $rel = /^\d+$/ ? $_ : "'$_'::regclass";
		$node->data_dir . '/'
		  . $node->safe_psql('postgres', "SELECT pg_relation_filepath($rel)")
	} @relations;
	$node->stop('fast');
	foreach my $path (@paths)
	{
		foreach my $file (glob("$path $path.* ${path}_vm ${path}_fsm"))
		{
			next unless -e $file;
			# pages still dirty in the page cache would stay
			system('sync', $file) == 0 or die "sync $file failed";
			system('dd', "if=$file", 'iflag=nocache', 'count=0', 'status=none') == 0
			  or die "dd iflag=nocache $file failed";
		}
	}
	$node->start;
	# A scan that starts before the monitor runs is joined where the monitor
	# finds it, as the view then says: wait for the monitor, so that the
	# caller's scan is followed from its first block.
	monitor_pid($node) ne '' or die 'the monitor did not start';
	return;
}

# How many pages of the first segment of relation $rel's main fork (a name
# or an OID, in the postgres database) are in the OS page cache (fincore).
sub resident_pages
{
	my ($node, $rel) = @_;
	$rel = "'$rel'::regclass" unless $rel =~ /^\d+$/;
	my $path = $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath($rel)");
	my $out = `fincore --noheadings --output PAGES '$path'`;
	die "fincore $path failed" if $? != 0;
	$out =~ s/\s+//g;
	return $out;
}

# Run $sql in database $db in the background, slowed by the cost delay
# (vacuum_cost_delay $delay, vacuum_cost_limit $limit, 20 by default).
# Returns the BackgroundPsql session (the statement is running when it
# returns), and in list context the backend's pid too.
sub start_slow
{
	my ($node, $db, $sql, $delay, $limit) = @_;
	$limit //= 20;
	my $s = $node->background_psql($db, on_error_stop => 0);
	my $pid = $s->query_safe(
		"SET vacuum_cost_delay = '$delay'; SET vacuum_cost_limit = $limit; SELECT pg_backend_pid()");
	$s->query_until(qr/slow statement starts/, "\\echo slow statement starts\n$sql;\n");
	return wantarray ? ($s, $pid) : $s;
}

# The session's psql may be gone (terminated backend, crash restart): quit
# without dying.
sub quit_session
{
	my ($s) = @_;
	eval { $s->quit; };
	return;
}

# The pid of the process of backend_type $type ('' if there is none).
sub worker_pid
{
	my ($node, $type) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = '$type'");
}

# The pid of the monitor, once it has published its state.  Right after a
# (re)start, a crash restart or a kill of the monitor, its process shows in
# pg_stat_activity before it has said anything: bgw_prefetch_status() may
# still give no pid, the old one, or io_method 'none' (until the monitor's
# first loop).  So wait until bgw_prefetch_status() names the process
# pg_stat_activity shows, with an I/O method in force; '' if that did not
# happen within the default timeout.
sub monitor_pid
{
	my ($node) = @_;
	return ''
	  unless $node->poll_query_until(
		'postgres', q{
SELECT s.monitor_pid = a.pid AND s.io_method <> 'none'
  FROM bgw_prefetch_status() s
  JOIN pg_stat_activity a ON a.backend_type = 'bgw_prefetch monitor'});
	return $node->safe_psql('postgres', 'SELECT monitor_pid FROM bgw_prefetch_status()');
}

# The waits below are the only places that know which pg_stat_prefetch
# columns say that the monitor has counted a scan.

# Wait until pg_stat_prefetch has counted at least $n scans of relation $rel
# (an OID, or a name) by $command ('vacuum' or 'analyze'); returns what
# poll_query_until returns (wrap it in ok()).  The monitor adds a scan to
# pg_stat_prefetch after it has seen it end, some time after the VACUUM or
# ANALYZE returned to its client: this is the way to know that a scan which
# the monitor served (one slowed so that it is seen) is counted.
sub wait_for_scans
{
	my ($node, $rel, $command, $n) = @_;
	my $relid = $rel =~ /^\d+$/ ? $rel : "'$rel'::regclass";
	return $node->poll_query_until('postgres',
		"SELECT scans >= $n FROM pg_stat_prefetch WHERE relid = $relid AND command = '$command'");
}

# Stop the monitor (SIGSTOP) and return its pid; the caller sends it SIGCONT.
# It is stopped only while it waits on its latch (wait event Extension),
# where it holds no lock that anything else could need.
sub hold_monitor
{
	my ($node) = @_;
	my $pid = monitor_pid($node);
	for (my $try = 0; $try < 1000; $try++)
	{
		kill 'STOP', $pid;
		return $pid
		  if $node->safe_psql('postgres',
			"SELECT wait_event_type FROM pg_stat_activity WHERE pid = $pid") eq 'Extension';
		kill 'CONT', $pid;
	}
	die 'the monitor was never seen waiting on its latch';
}

# Hold the next VACUUM of $table (in the postgres database) on its table's
# lock until the monitor has taken its announcement: every relation in
# @relids (OIDs) shows in bgw_prefetch_activity(), planned from block 0.
# A session takes SHARE UPDATE EXCLUSIVE on $table and lets go as soon as
# it sees them; an announced target waits for its VACUUM as long as the
# VACUUM waits for a lock.  Without this a monitor whose wakeup a busy
# machine delays finds a short VACUUM over, or past its first blocks.
# Returns the session: run the VACUUM, then quit it.
sub hold_until_announced
{
	my ($node, $table, @relids) = @_;
	my $n = scalar @relids;
	my $in = join(',', @relids);
	my $locker = $node->background_psql('postgres');
	$locker->query_safe("BEGIN; LOCK $table IN SHARE UPDATE EXCLUSIVE MODE");
	$locker->query_until(
		qr/waiting for the announcement/, qq{\\echo waiting for the announcement
DO \$\$
BEGIN
	FOR i IN 1 .. 180000 LOOP
		EXIT WHEN (SELECT count(DISTINCT relid) = $n FROM bgw_prefetch_activity()
		            WHERE relid IN ($in));
		PERFORM pg_sleep(0.001);
	END LOOP;
END
\$\$;
COMMIT;
});
	return $locker;
}

# Wait until the monitor is idle: no scan it saw is still being served or
# left to count, and it has read every transaction VACUUM and ANALYZE
# backends published (a scan it did not see is recorded from that);
# returns what poll_query_until returns (wrap it in ok()).
# Use it before a statistics reset and before checking that there is no
# row, after scans that the monitor may or may not have seen (an unslowed
# setup VACUUM may be over before its next look).
#
# No row in bgw_prefetch_activity() is not enough on its own: the monitor
# publishes its targets at the end of each loop, so one it took on in a loop
# still running is not shown yet.  So the monitor must first be seen asleep
# between two loops (wait event Extension, in WaitLatchOrSocket): the loop
# that ran when the scan ended is over, and has published every target of
# that scan.  After that the rows are read: none means that every such
# target has ended, and a target ends by counting its scan first.  The
# published transactions are looked at before: read before the monitor is
# seen asleep, they were read (and recorded) in a loop that is over.  The
# order of the reads matters: a CASE evaluates its conditions in order, and
# an uncorrelated sub-select is evaluated when it is first needed.
sub wait_monitor_idle
{
	my ($node) = @_;
	return $node->poll_query_until(
		'postgres', q{
SELECT CASE WHEN (SELECT transactions_unread > 0 FROM bgw_prefetch_status())
            THEN false
            WHEN (SELECT wait_event_type = 'Extension' FROM pg_stat_activity
                   WHERE backend_type = 'bgw_prefetch monitor')
            THEN (SELECT count(*) = 0 FROM bgw_prefetch_activity())
            ELSE false END});
}

# Reload the configuration and wait until the monitor has read and applied
# it: bgw_prefetch_status().monitor_conf_load_time passes the moment before
# the reload.  Returns whether it did.
sub reload_monitor
{
	my ($node) = @_;
	my $before = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
	$node->reload;
	return $node->poll_query_until('postgres',
		"SELECT monitor_conf_load_time > '$before' FROM bgw_prefetch_status()");
}

# Reset pg_stat_prefetch once no scan run so far can still be counted after
# the reset.  Each of @scans, [ $rel, $command, $n ], is a scan just run that
# the monitor served: wait_for_scans() first, so that it is counted before
# the reset, not after; then wait_monitor_idle().  Each wait is a test.
sub reset_prefetch_stats
{
	my ($node, @scans) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	foreach my $scan (@scans)
	{
		my ($rel, $command, $n) = @$scan;
		ok(wait_for_scans($node, $rel, $command, $n),
			"before the statistics reset: $n $command scan(s) of $rel counted");
	}
	ok(wait_monitor_idle($node), 'before the statistics reset: the monitor is idle');
	$node->safe_psql('postgres', 'SELECT pg_stat_prefetch_reset()');
	return;
}

# Test $name: a VACUUM (DISABLE_PAGE_SKIPPING) of $table in the postgres
# database, slowed a little, is served: after a statistics reset,
# pg_stat_prefetch gets one scan of it with blocks prefetched.
sub served_again_ok
{
	my ($node, $table, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	reset_prefetch_stats($node);
	$node->safe_psql('postgres',
		"SET vacuum_cost_delay = '4ms'; SET vacuum_cost_limit = 20; VACUUM (DISABLE_PAGE_SKIPPING) $table;"
	);
	wait_for_scans($node, $table, 'vacuum', 1);
	return is(
		$node->safe_psql(
			'postgres',
			"SELECT scans, blocks_prefetched > 0 FROM pg_stat_prefetch
			  WHERE relid = '$table'::regclass AND command = 'vacuum'"),
		'1|t', $name);
}

# Test $name: nothing in the node's whole log says that a process crashed
# or the server went through a crash restart.
sub no_crash_ok
{
	my ($node, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return unlike(slurp_file($node->logfile),
		qr/was terminated by signal|TRAP:|PANIC:|server processes terminated/,
		$name);
}

# The procedure burn_xids(n): n transactions, each with an xid, committed
# one after the other, to fill CLOG pages quickly.
sub create_burn_xids
{
	my ($node) = @_;
	$node->safe_psql(
		'postgres', q{
CREATE PROCEDURE burn_xids(n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    PERFORM pg_current_xact_id();
    COMMIT;
  END LOOP;
END $$;
});
	return;
}

# A started node for the CLOG crash and standby tests: the CLOG writer on
# with clog_writer_delay = 10ms, shared_buffers = 16MB (4 CLOG buffers) and
# synchronous_commit = off, plus $opts{conf}; amcheck, burn_xids() and
# pgbench -i -s $scale in the postgres database.  init => { ... } goes to
# $node->init.  Returns the node and a pgbench script that calls
# burn_xids($burn).
sub new_tpcb_node
{
	my ($name, $scale, $burn, %opts) = @_;
	my $node = new_bgwp_node(
		$name,
		init => $opts{init},
		preload_only => 1,
		conf => q{
shared_buffers = 16MB
synchronous_commit = off
bgw_prefetch.clog_writer = on
bgw_prefetch.clog_writer_delay = 10ms
} . ($opts{conf} // ''));
	$node->safe_psql('postgres', 'CREATE EXTENSION amcheck');
	create_burn_xids($node);
	$node->command_ok(
		[
			'pgbench', '-i', '-s', $scale, '-q', '-h', $node->host,
			'-p', $node->port, 'postgres'
		],
		"pgbench -i -s $scale");
	my $script = PostgreSQL::Test::Utils::tempdir() . '/burn.sql';
	PostgreSQL::Test::Utils::append_to_file($script,
		"CALL burn_xids($burn);\n");
	return ($node, $script);
}

# Start pgbench -n on the node's postgres database in the background, with
# the arguments in @$args; returns [ IPC::Run handle, \stdout, \stderr ].
# -n: without it, every pgbench run would start by truncating
# pgbench_history, and sum(delta) would no longer match the balances
# (issue 16).  %env is added to the environment (e.g. PGOPTIONS).
sub start_pgbench
{
	my ($node, $args, %env) = @_;
	my ($out, $err) = ('', '');
	local %ENV = (%ENV, %env);
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-h', $node->host, '-p', $node->port,
			@$args, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return [ $h, \$out, \$err ];
}

# The result of $sql in the postgres database, or "ERROR: ..." if it
# failed: a check whose query fails (a status lost in pg_xact makes a
# tuple's xmin unreadable) is a failed check, not a broken test.
sub query_or_error
{
	my ($node, $sql) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql);
	return $ret == 0 ? $stdout : "ERROR: $stderr";
}

# Tests "$what: ...": the tables of pgbench -i are consistent.  The
# invariant sum(abalance) = sum(bbalance) = sum(tbalance) = sum(delta) over
# a non-empty history holds after any number of complete transactions, so a
# transaction half visible after crash recovery (a wrong status in pg_xact,
# a lost heap change) breaks it; bt_index_check(heapallindexed) checks the
# pgbench indexes against their tables, and verify_heapam() checks every
# tuple's xmin/xmax against the CLOG and the xid horizon.  Needs amcheck.
sub tpcb_consistent_ok
{
	my ($node, $what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is( query_or_error($node, q{
SELECT (SELECT sum(abalance) FROM pgbench_accounts) =
       (SELECT sum(bbalance) FROM pgbench_branches) AND
       (SELECT sum(bbalance) FROM pgbench_branches) =
       (SELECT sum(tbalance) FROM pgbench_tellers) AND
       (SELECT sum(tbalance) FROM pgbench_tellers) =
       (SELECT coalesce(sum(delta), 0) FROM pgbench_history) AND
       (SELECT count(*) FROM pgbench_history) > 0}),
		't',
		"$what: balances add up");
	is( query_or_error($node, q{
SELECT count(*) FROM (
  SELECT bt_index_check(c.oid, true)
    FROM pg_class c JOIN pg_am a ON a.oid = c.relam
   WHERE a.amname = 'btree' AND c.relname LIKE 'pgbench%') s}),
		'3',
		"$what: bt_index_check on the pgbench indexes");
	return is(
		query_or_error($node, q{
SELECT count(*) FROM
  unnest(ARRAY['pgbench_accounts', 'pgbench_branches',
               'pgbench_tellers', 'pgbench_history']::regclass[]) r,
  verify_heapam(r)}),
		'0',
		"$what: verify_heapam finds nothing");
}

1;
