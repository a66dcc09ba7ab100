# Pacing by the disk's latency (io_pacing.c, prefetch_pacing.c): while the
# prefetch reads ahead for a VACUUM beside client statements, the monitor
# probes the disk with small direct reads and paces the prefetch by their
# latency; alone, it reads ahead unpaced.
#
# - bgw_prefetch_status() says so while a slow VACUUM is read ahead for:
#   'alone' while no client statement runs (the test's own polls are too
#   brief to count), 'paced' with a rate, the probes' latency and their
#   base for a VACUUM started while a session runs a long, CPU-bound
#   statement,
#   'alone' again once that is cancelled, although another session still
#   sleeps in pg_sleep() (a statement asleep is no foreground: were it
#   counted, the state would stay 'paced');
# - bgw_prefetch.pacing = off at reload: 'off', the VACUUM still read ahead
#   for; io_method = fadvise: 'no io_uring: nothing to time';
# - with nothing read ahead, 'idle'; a malformed value is rejected.
#
# The controller's rule itself (the threshold, the cuts and the growth, the
# base measured while the prefetch holds its reads, the tokens) is tested
# exhaustively without a server: test/unit/test_io_pacing.c.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node('pacing');

# 3,000 blocks, read in full by VACUUM (DISABLE_PAGE_SKIPPING), made cold
# so that the probes and the reads go to the disk
create_frozen_table($node, 'postgres', 'paced', 24000);
make_cold($node, 'paced');

is($node->safe_psql('postgres', 'SELECT pacing FROM bgw_prefetch_status()'),
	'idle', 'nothing read ahead: idle');

# One block every 100 ms or more: the VACUUM lasts minutes, and is
# cancelled once the checks are done.
my ($s, $pid) = start_slow($node, 'postgres',
	'VACUUM (DISABLE_PAGE_SKIPPING) paced', '100ms', 1);
ok( $node->poll_query_until(
		'postgres', "SELECT pacing = 'alone' FROM bgw_prefetch_status()"),
	'read ahead for a VACUUM with no client statement running: alone, unpaced');

# That VACUUM has been read ahead for far beyond where it is, unpaced: the
# prefetch issues nothing more (and sends no probe) until it comes close.
# The rest is checked on a VACUUM that starts beside the foreground, whose
# reads are paced from its first block (the probes, direct reads, go to the
# disk whatever the page cache holds).
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
quit_session($s);
ok( $node->poll_query_until(
		'postgres', "SELECT pacing = 'idle' FROM bgw_prefetch_status()"),
	'the unpaced VACUUM cancelled: idle');

# A session asleep in a statement, until it is cancelled: no foreground.
my $sleeper = $node->background_psql('postgres', on_error_stop => 0);
my $sleeper_pid = $sleeper->query_safe('SELECT pg_backend_pid()');
$sleeper->query_until(qr/sleeper starts/,
	"\\echo sleeper starts\nSELECT pg_sleep(3600);\n");

# A foreground: a statement that runs on CPU until it is cancelled.
my $fg = $node->background_psql('postgres', on_error_stop => 0);
my $fg_pid = $fg->query_safe('SELECT pg_backend_pid()');
$fg->query_until(qr/foreground starts/,
	"\\echo foreground starts\nSELECT count(*) FROM (SELECT generate_series(1, 1000000000000)) g;\n");
($s, $pid) = start_slow($node, 'postgres',
	'VACUUM (DISABLE_PAGE_SKIPPING) paced', '100ms', 1);
ok( $node->poll_query_until(
		'postgres', "
SELECT pacing = 'paced' AND pacing_rate_mb_s > 0 AND probe_latency_us > 0
       AND probe_base_latency_us > 0
  FROM bgw_prefetch_status()"),
	'beside a running statement: paced, with a rate, the probes\' latency and their base');
ok( $node->poll_query_until(
		'postgres', "
SELECT state = 'prefetching' AND blocks_prefetched > 0
  FROM pg_stat_prefetch_activity WHERE relid = 'paced'::regclass"),
	'the VACUUM is read ahead for');

$node->safe_psql('postgres', 'ALTER SYSTEM SET bgw_prefetch.pacing = off');
$node->reload;
ok( $node->poll_query_until(
		'postgres', "SELECT pacing = 'off' FROM bgw_prefetch_status()"),
	'pacing = off at reload: off');
my $prefetched = $node->safe_psql('postgres',
	"SELECT blocks_prefetched FROM pg_stat_prefetch_activity WHERE relid = 'paced'::regclass"
);
ok( $node->poll_query_until(
		'postgres', "
SELECT blocks_prefetched > $prefetched
  FROM pg_stat_prefetch_activity WHERE relid = 'paced'::regclass"),
	'and the VACUUM is still read ahead for, unpaced');

$node->safe_psql('postgres',
	"ALTER SYSTEM RESET bgw_prefetch.pacing; ALTER SYSTEM SET bgw_prefetch.io_method = 'fadvise'");
$node->reload;
ok( $node->poll_query_until(
		'postgres',
		"SELECT pacing = 'no io_uring: nothing to time' FROM bgw_prefetch_status()"),
	'io_method = fadvise: nothing to time');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET bgw_prefetch.io_method');
$node->reload;
ok( $node->poll_query_until(
		'postgres', "SELECT pacing = 'paced' FROM bgw_prefetch_status()"),
	'io_uring again: paced again');

$node->safe_psql('postgres', "SELECT pg_cancel_backend($fg_pid)");
quit_session($fg);
is( $node->safe_psql(
		'postgres',
		"SELECT wait_event FROM pg_stat_activity WHERE pid = $sleeper_pid AND state = 'active'"),
	'PgSleep', 'a session still sleeps in a statement');
ok( $node->poll_query_until(
		'postgres', "SELECT pacing = 'alone' FROM bgw_prefetch_status()"),
	'the running statement cancelled: alone again, beside the sleeping one');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($sleeper_pid)");
quit_session($sleeper);

$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
quit_session($s);
ok( $node->poll_query_until(
		'postgres', "SELECT pacing = 'idle' FROM bgw_prefetch_status()"),
	'the VACUUM cancelled: idle');

my ($ret, $out, $err) =
  $node->psql('postgres', "ALTER SYSTEM SET bgw_prefetch.pacing = 'sometimes'");
isnt($ret, 0, 'a malformed value is rejected');
like($err, qr/requires a Boolean value/, 'with the reason');

no_crash_ok($node, 'no crash');
$node->stop;
done_testing();
