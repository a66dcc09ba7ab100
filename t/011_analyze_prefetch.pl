# ANALYZE prefetch: a dense sample is streamed ahead of the consumer with
# little waste; a sparse one causes no prefetch reads at all.
#
# ANALYZE samples min(300 x statistics target, relpages) blocks; the tests
# set the per-column statistics target to choose the density.  ANALYZE is
# slowed with cost-based delay so that the monitor serves it for a while.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node(
	'analyze_prefetch', conf => q{
vacuum_cost_delay = 2ms
vacuum_cost_limit = 20
});

# About 8 rows a page: 6,000 pages.
$node->safe_psql(
	'postgres', q{
CREATE TABLE samp (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = off);
INSERT INTO samp SELECT g, repeat('x', 900) FROM generate_series(1, 48000) g;
VACUUM samp;
});
my $nblocks = $node->safe_psql('postgres', "SELECT pg_relation_size('samp') / 8192");

# Run ANALYZE with a given statistics target, return the LOG line's figures.
# The statistics are reset first, once the scans run before (the setup
# VACUUM, or those in @scans: [ rel, command, n ] as reset_prefetch_stats()
# takes them) are counted and the monitor is idle.
sub analyze_with_target
{
	my ($target, @scans) = @_;
	$node->safe_psql('postgres',
		"ALTER TABLE samp ALTER id SET STATISTICS $target, ALTER pad SET STATISTICS $target");
	reset_prefetch_stats($node, @scans);
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', 'ANALYZE samp');
	# the scan is logged, after it is counted
	$node->wait_for_log(qr/bgw_prefetch: analyze of "public.samp"/, $offset);
	my $log = slurp_file($node->logfile, $offset);
	my ($line) = $log =~ /(bgw_prefetch: analyze of "public.samp".*\n(?:\t.*\n)*)/;
	my %f;
	($f{state}) = $line =~ /pid \d+\): [^,]+, (prefetched|watched \(([^)]*)\))/;
	$f{state} = $2 if defined $2;
	@f{qw(prefetched late unused)} =
	  $line =~ /prefetch: (\d+) blocks, \d+ ready, (\d+) late, (\d+) unused/;
	$f{prefetched} //= 0;
	note "target $target: $line";
	return \%f;
}

# Whole relation (30,000 >= 6,000 blocks): a plain sequential stream.
my $whole = analyze_with_target(100);
is($whole->{state}, 'prefetched', 'whole-relation sample: streamed');
cmp_ok($whole->{prefetched}, '>', $nblocks / 2, "whole-relation sample: most blocks prefetched ($whole->{prefetched})");
ok(defined $whole->{unused} && $whole->{unused} <= 0.1 * $whole->{prefetched},
	'whole-relation sample: little waste (' . ($whole->{unused} // 'no prefetch line') . ' unused)');

# 60 % of the blocks (3,600 of 6,000): dense, streamed.
my $dense = analyze_with_target(12);
is($dense->{state}, 'prefetched', 'dense sample: streamed');
cmp_ok($dense->{prefetched}, '>', 0, "dense sample: blocks prefetched ($dense->{prefetched})");
ok(defined $dense->{unused} && $dense->{unused} <= 0.1 * $dense->{prefetched},
	'dense sample: unused small relative to the window (' . ($dense->{unused} // 'no prefetch line') . ' unused)');

my $row = $node->safe_psql('postgres',
	"SELECT scans, blocks_read > 0, blocks_prefetched > 0 FROM pg_stat_prefetch WHERE relname = 'samp' AND command = 'analyze'");
is($row, '1|t|t', 'pg_stat_prefetch shows the analyze scan');

# The stream's reads in flight: maintenance_io_concurrency (by default 10 up
# to 17, 16 from 18) counts core's 8 kB prefetches; a stream of large reads
# gets at least 32.
{
	my $s = start_slow($node, 'postgres', 'ANALYZE samp', '5ms');
	ok( $node->poll_query_until(
			'postgres',
			"SELECT io_depth || ' ' || io_depth_source = '32 sequential stream minimum'
			   FROM pg_stat_prefetch_activity WHERE relid = 'samp'::regclass AND state = 'prefetching'"),
		'dense sample: the stream gets 32 reads in flight (sequential stream minimum)');
	$s->quit;    # once the ANALYZE is over
}

# 5 % (300 of 6,000): sparse, no prefetch reads at all.
# (after the dense ANALYZE and the slowed one just above: 2 scans)
my $sparse = analyze_with_target(1, [ 'samp', 'analyze', 2 ]);
is($sparse->{state}, 'sample too sparse to stream', 'sparse sample: deliberately not streamed');
is($sparse->{prefetched}, 0, 'sparse sample: no prefetch reads');
$row = $node->safe_psql('postgres',
	"SELECT scans, blocks_prefetched FROM pg_stat_prefetch WHERE relname = 'samp' AND command = 'analyze'");
is($row, '1|0', 'pg_stat_prefetch shows the sparse scan with no prefetch');

$node->stop;
done_testing();
