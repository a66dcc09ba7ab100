# Running out of things: worker slots, statistics entries, target slots;
# and not leaking any over hundreds of targets.
#
# - max_worker_processes = 3 (the monitor, the CLOG writer and the logical
#   replication launcher take all three): every VACUUM/ANALYZE is only
#   watched ('no worker to resolve the relation'), "no background worker
#   slot free" is logged once (rate-limited), not once per scan or per loop,
#   the monitor stays up and does not spin;
# - max_worker_processes = 6 with a parallel query holding two workers: the
#   last free slot is left to parallel query (no resolver starts, the scan
#   is watched with the reason); once the query is over, a resolver serves
#   the next scan;
# - bgw_prefetch.max_relations = 100 and 130 tables vacuumed: the statistics
#   hash stays at 100 entries and counts evictions;
# - more concurrent VACUUMs (66) than the monitor has target slots (64): the
#   surplus is ignored, nothing overflows;
# - over 250 more targets the monitor's open files and private memory do
#   not grow.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = new_bgwp_node(
	'resources', conf => q{
max_worker_processes = 3
max_parallel_workers = 0
log_line_prefix = '%m [%p] %b '
});

# /proc/<pid>/status fields (kB) and the number of open files.
sub proc_usage
{
	my ($pid) = @_;
	my %u;
	my $status = slurp_file("/proc/$pid/status");
	for my $f ('VmRSS', 'RssAnon')
	{
		($u{$f}) = $status =~ /^$f:\s+(\d+) kB/m;
	}
	$u{fds} = scalar(() = glob("/proc/$pid/fd/*"));
	return \%u;
}

# user + system CPU time of a process, in seconds
sub cpu_seconds
{
	my ($pid) = @_;
	my $stat = slurp_file("/proc/$pid/stat");
	$stat =~ s/^.*\) //;    # past the command name
	my @f = split / /, $stat;
	# fields 14 and 15 of stat(5), counted from pid = 1
	return ($f[11] + $f[12]) / 100.0;
}

# From here on, every scan is one no resolver can be started for.  The
# scans are of partition big of bigp, through its parent: a backend
# resolves in advance only the relations its command names (bigp here, a
# partitioned table, never scanned), so big needs a resolver worker.
my $offset = -s $node->logfile;
create_frozen_table($node, 'postgres', 'big', 24000);
$node->safe_psql(
	'postgres', q{
CREATE TABLE bigp (id int, pad text) PARTITION BY RANGE (id);
ALTER TABLE bigp ATTACH PARTITION big FOR VALUES FROM (MINVALUE) TO (MAXVALUE);
});
# the VACUUM (FREEZE) names big, which its backend resolves: it may be
# prefetched, and must be counted before the reset, not after
reset_prefetch_stats($node);

# ---- no background worker slot for a resolver
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(backend_type, ', ' ORDER BY backend_type) FROM pg_stat_activity
		  WHERE backend_type IN ('bgw_prefetch monitor', 'bgw_prefetch clog writer',
		                         'logical replication launcher')"),
	'bgw_prefetch clog writer, bgw_prefetch monitor, logical replication launcher',
	'the three static workers fill max_worker_processes = 3');

my $monitor = monitor_pid($node);
my $cpu0 = cpu_seconds($monitor);
my $t0 = time;
my $seen_watching = 0;
my $vacuums = 0;
while (time - $t0 < 6)
{
	my $command = $vacuums % 3 == 2 ? 'ANALYZE bigp' : 'VACUUM (DISABLE_PAGE_SKIPPING) bigp';
	my $s = start_slow($node, 'postgres', $command, '4ms');
	$seen_watching++
	  if $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
		  WHERE relid = 'big'::regclass AND state = 'watching: no worker to resolve the relation'");
	$s->quit;
	$vacuums++;
}
my $elapsed = time - $t0;
my $cpu = cpu_seconds($monitor) - $cpu0;
is($seen_watching, $vacuums,
	"no worker slot: each of $vacuums scans was shown as 'watching: no worker to resolve the relation'");
ok(wait_monitor_idle($node), 'no worker slot: targets ended');
my $log = slurp_file($node->logfile, $offset);
my $complaints = () = $log =~ /bgw_prefetch: no background worker slot free, not prefetching/g;
is($complaints, 1,
	sprintf('no worker slot: logged once over %.1f s and %d scans', $elapsed, $vacuums));
my $forecaster_complaints = () = $log =~ /bgw_prefetch: no background worker slot free for the autovacuum forecaster/g;
cmp_ok($forecaster_complaints, '<=', 1,
	'no worker slot: the forecaster that could not start is logged once at most');
like($log, qr/no background worker slot free.*\n.*DETAIL:  bgw_prefetch leaves the last slot of max_worker_processes to parallel query\.\n.*HINT:  Consider increasing max_worker_processes \(currently 3\)/,
	'no worker slot: the detail names the slots left to parallel query, the hint max_worker_processes');
my $lines = () = $log =~ /bgw_prefetch: (vacuum|analyze) of ".*" .* watched \(no worker to resolve the relation\)/g;
cmp_ok($lines, '>=', $vacuums, "no worker slot: each scan is logged with the reason ($lines)");
unlike($log, qr/bgw_prefetch monitor (ERROR|FATAL)/, 'no worker slot: no error');
is(monitor_pid($node), $monitor, 'no worker slot: same monitor');
cmp_ok($cpu, '<', 0.25 * $elapsed,
	sprintf('no worker slot: the monitor used %.2f s of CPU in %.1f s (no busy loop)', $cpu, $elapsed));
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_prefetch WHERE relid = 'big'::regclass AND blocks_prefetched > 0"),
	'0', 'no worker slot: nothing was prefetched');

# ---- the last free worker slots are left to parallel query
# Six slots: the three static workers, and three free.  While a parallel
# query holds two workers, one slot is free: no resolver takes it, the scan
# is only watched, with the reason, and the query keeps its workers.  Once
# the query is over, the next scan gets its resolver.
$node->append_conf(
	'postgresql.conf', q{
max_worker_processes = 6
max_parallel_workers = 6
max_parallel_workers_per_gather = 2
});
$node->restart;
$monitor = monitor_pid($node);
$node->safe_psql('postgres',
	'CREATE TABLE filler AS SELECT g FROM generate_series(1, 3000) g; ANALYZE filler');
my $pq = $node->background_psql('postgres', on_error_stop => 0);
$pq->query_safe(
	'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0');
$pq->query_until(qr/parallel query starts/,
	"\\echo parallel query starts\nSELECT count(*) FROM filler WHERE pg_sleep(0.02)::text = '';\n");
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 2 FROM pg_stat_activity WHERE backend_type = 'parallel worker'"),
	'parallel query: it holds two workers, one slot is left');
my $s = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) bigp', '4ms');
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
		  WHERE relid = 'big'::regclass AND state = 'watching: no worker to resolve the relation'"),
	'parallel query: the scan is watched, with the reason; the last slot stays free');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type IN ('parallel worker', 'bgw_prefetch resolver')"),
	'2', 'parallel query: it still has its two workers, and no resolver runs');
$node->safe_psql('postgres',
	"SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	   WHERE backend_type = 'client backend' AND query LIKE 'SELECT count(*) FROM filler%'");
$pq->quit;
$s->quit;
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'parallel worker'"),
	'parallel query: over');
reset_prefetch_stats($node, [ 'big', 'vacuum', 1 ]);
$node->safe_psql('postgres',
	"SET vacuum_cost_delay = '4ms'; SET vacuum_cost_limit = 20; VACUUM (DISABLE_PAGE_SKIPPING) bigp");
ok(wait_for_scans($node, 'big', 'vacuum', 1), 'parallel query over: the next scan is counted');
is( $node->safe_psql(
		'postgres',
		"SELECT scans, blocks_prefetched > 0 FROM pg_stat_prefetch
		  WHERE relid = 'big'::regclass AND command = 'vacuum'"),
	'1|t', 'parallel query over: three slots are free, and a resolver serves the next scan');

# ---- a full statistics hash; enough worker slots from here on
$node->append_conf(
	'postgresql.conf', qq{
max_worker_processes = 80
bgw_prefetch.max_relations = 100
});
$node->restart;
$monitor = monitor_pid($node);

# Tables ${prefix}_1 .. ${prefix}_$n, each of $rows rows of 900 bytes (8 a
# block).
sub create_tables
{
	my ($prefix, $n, $rows) = @_;
	$node->safe_psql(
		'postgres', qq{
DO \$\$
BEGIN
  FOR i IN 1..$n LOOP
    EXECUTE format('CREATE TABLE ${prefix}_%s (id int, pad text) WITH (autovacuum_enabled = off)', i);
    EXECUTE format('INSERT INTO ${prefix}_%s SELECT g, repeat(''x'', 900) FROM generate_series(1, $rows) g', i);
  END LOOP;
END
\$\$;
});
	return;
}

# 5-block tables, scanned at 10 ms a block: about 0.05 s each, long enough
# for the monitor (polling every 10 ms while a scan runs or was just
# announced, else every naptime = 20 ms) to see every one.
my $ntables = 130;
create_tables('s', $ntables, 40);
my $slow_small = "SET vacuum_cost_delay = '10ms'; SET vacuum_cost_limit = 1;";

sub vacuum_tables
{
	my ($command, $from, $to) = @_;
	my $list = join(', ', map { "s_$_" } $from .. $to);
	$node->safe_psql('postgres', "$slow_small $command $list;");
	return;
}

vacuum_tables('VACUUM (DISABLE_PAGE_SKIPPING)', 1, $ntables);
ok( $node->poll_query_until(
		'postgres', 'SELECT active_targets = 0 FROM bgw_prefetch_status()'),
	'full hash: targets ended');
my ($entries, $max, $evictions, $served) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT entries, max_relations, evictions, targets_served FROM bgw_prefetch_status()');
note("after $ntables VACUUMs: entries $entries, evictions $evictions, targets served $served");
cmp_ok($served, '>=', $ntables - 5, "full hash: most of the $ntables VACUUMs were served ($served)");
is($max, 100, 'full hash: max_relations is 100');
is($entries, 100, 'full hash: the hash holds max_relations entries');
cmp_ok($evictions, '>=', $served - 100, "full hash: evictions counted ($evictions)");
cmp_ok($evictions, '>', 0, 'full hash: evictions > 0');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_prefetch'),
	$entries, 'full hash: pg_stat_prefetch shows the entries');
# the least recently used went first: the last tables vacuumed are all there
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_prefetch
		  WHERE relname IN ('s_121','s_122','s_123','s_124','s_125','s_126','s_127','s_128','s_129','s_130')"),
	'10', 'full hash: the most recent tables were kept');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_prefetch WHERE relname IN ('s_1', 's_2', 's_3')"),
	'0', 'full hash: the oldest tables were evicted');

# ---- more concurrent scans than target slots (64)
{
	my $nsessions = 66;
	create_tables('c', $nsessions, 480);
	$node->safe_psql('postgres',
		'VACUUM (FREEZE) ' . join(', ', map { "c_$_" } 1 .. $nsessions));
	my @sessions;
	for my $i (1 .. $nsessions)
	{
		my $s = $node->background_psql('postgres');
		# 60 blocks at 100 ms each: 6 s
		$s->query_safe("SET vacuum_cost_delay = '100ms'; SET vacuum_cost_limit = 1");
		push @sessions, $s;
	}
	for my $i (1 .. $nsessions)
	{
		$sessions[ $i - 1 ]->query_until(qr/go/, "\\echo go\nVACUUM (DISABLE_PAGE_SKIPPING) c_$i;\n");
	}
	my ($max_rows, $max_active, $running) = (0, 0, 0);
	my $t1 = time;
	while (time - $t1 < 5)
	{
		my ($rows, $active, $vac) = split /\|/,
		  $node->safe_psql(
			'postgres',
			"SELECT (SELECT count(*) FROM pg_stat_prefetch_activity),
			        (SELECT active_targets FROM bgw_prefetch_status()),
			        (SELECT count(*) FROM pg_stat_progress_vacuum)");
		$max_rows = $rows if $rows > $max_rows;
		$max_active = $active if $active > $max_active;
		$running = $vac if $vac > $running;
		usleep(100_000);
	}
	note("concurrent: up to $running VACUUMs ran, up to $max_active targets, $max_rows activity rows");
	cmp_ok($running, '>', 64, "concurrent: more than 64 VACUUMs ran at once ($running)");
	is($max_active, 64, 'concurrent: the monitor served its 64 target slots, no more');
	cmp_ok($max_rows, '<=', 64, 'concurrent: pg_stat_prefetch_activity never showed more than 64 rows');
	$_->quit for @sessions;
	ok( $node->poll_query_until(
			'postgres', 'SELECT active_targets = 0 FROM bgw_prefetch_status()'),
		'concurrent: targets ended');
	is(monitor_pid($node), $monitor, 'concurrent: same monitor');
}

# ---- no leak over 250 targets (the 130 above were the warm-up)
my $before = proc_usage($monitor);
my $served_before = $node->safe_psql('postgres', 'SELECT targets_served FROM bgw_prefetch_status()');
vacuum_tables('VACUUM (DISABLE_PAGE_SKIPPING)', 1, 100);
vacuum_tables('ANALYZE', 1, 50);
vacuum_tables('VACUUM (DISABLE_PAGE_SKIPPING)', 31, 130);
$node->safe_psql('postgres',
	"SET vacuum_cost_delay = '4ms'; SET vacuum_cost_limit = 20; VACUUM (DISABLE_PAGE_SKIPPING) big;");
ok( $node->poll_query_until(
		'postgres', 'SELECT active_targets = 0 FROM bgw_prefetch_status()'),
	'leaks: targets ended');
my $after = proc_usage($monitor);
my $served_now = $node->safe_psql('postgres', 'SELECT targets_served FROM bgw_prefetch_status()');
my $targets = $served_now - $served_before;
note("monitor before: fds $before->{fds}, VmRSS $before->{VmRSS} kB, RssAnon $before->{RssAnon} kB; "
	  . "after $targets targets: fds $after->{fds}, VmRSS $after->{VmRSS} kB, RssAnon $after->{RssAnon} kB");
cmp_ok($targets, '>=', 200, "leaks: $targets more targets served");
cmp_ok(abs($after->{fds} - $before->{fds}), '<=', 2,
	"leaks: open files of the monitor unchanged ($before->{fds} -> $after->{fds})");
cmp_ok($after->{RssAnon} - $before->{RssAnon}, '<', 5 * 1024,
	"leaks: private memory of the monitor grew < 5 MB ($before->{RssAnon} -> $after->{RssAnon} kB)");
cmp_ok($after->{VmRSS} - $before->{VmRSS}, '<', 5 * 1024,
	"leaks: RSS of the monitor grew < 5 MB ($before->{VmRSS} -> $after->{VmRSS} kB)");
is(monitor_pid($node), $monitor, 'leaks: same monitor');

no_crash_ok($node, 'no process crashed');
unlike(slurp_file($node->logfile), qr/bgw_prefetch (monitor|resolver) (ERROR|FATAL)/,
	'no bgw_prefetch error');

$node->stop;
done_testing();
