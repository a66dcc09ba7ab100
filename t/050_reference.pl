# doc/reference.md says what the extension has: every parameter (with its
# default, and its range where the reference gives it as plain numbers),
# every column of every view, every function.  This test reads the
# reference and the running server (the library preloaded, no other
# setting) and fails on any difference in either direction.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node('reference', preload_only => 1);

my $reference = slurp_file("$FindBin::RealBin/../doc/reference.md");

# The cells of a table row ("|" escaped as "\|" inside a cell).
sub cells
{
	my ($line) = @_;
	my @c = split /(?<!\\)\|/, $line;
	shift @c;
	s/^\s+|\s+$//g for @c;
	return @c;
}

# The rows of the first table under the heading $heading.
sub table_rows
{
	my ($heading) = @_;
	my ($section) = $reference =~ /^\Q$heading\E\n(.*?)(?=^#)/ms
	  or die "no section \"$heading\" in doc/reference.md";
	my @rows = grep { /^\|/ && !/^\|---/ } split /\n/, $section;
	shift @rows;    # the header
	return map { [ cells($_) ] } @rows;
}

# ---- parameters
my %doc_param;
for my $row (table_rows('## Configuration parameters'))
{
	my ($name) = $row->[0] =~ /^`(bgw_prefetch\.\w+)`$/ or next;
	$doc_param{$name} = $row->[1];
}
my %server_param = map { my @f = split /\|/; ($f[0] => [ @f[ 1 .. 3 ] ]) }
  split /\n/,
  $node->safe_psql('postgres',
	"SELECT name, vartype, coalesce(min_val, ''), coalesce(max_val, '')
	   FROM pg_settings WHERE name LIKE 'bgw\\_prefetch.%' ORDER BY name");
is( join(' ', sort keys %doc_param),
	join(' ', sort keys %server_param),
	'the reference lists exactly the parameters the library defines');

for my $name (sort keys %doc_param)
{
	next unless $server_param{$name};
	my $cell = $doc_param{$name};
	# "type, `default` ...": the first value after the type
	my ($default) = $cell =~ /^[^,]*,\s*`([^`]*)`/;
	ok(defined $default, "$name: the reference gives a default");
	next unless defined $default;
	$default = '' if $default eq "''";
	is($node->safe_psql('postgres', "SELECT current_setting('$name')"), $default,
		"$name: default as in the reference");

	# a range of plain numbers: "(min – max)"
	if ($cell =~ /\((-?[\d,.]+) – (-?[\d,.]+)\)/)
	{
		my ($min, $max) = ($1, $2);
		s/,//g for $min, $max;
		my (undef, $server_min, $server_max) = @{ $server_param{$name} };
		is("$min..$max", ($server_min + 0) . '..' . ($server_max + 0),
			"$name: range as in the reference");
	}
}

# ---- views and their columns
for my $view ('pg_stat_prefetch', 'pg_stat_prefetch_activity', 'pg_stat_prefetch_clog',
	'bgw_prefetch_calibration')
{
	my @doc;
	for my $row (table_rows("### $view"))
	{
		push @doc, $row->[0] =~ /`(\w+)`/g;
	}
	my $server = $node->safe_psql('postgres',
		"SELECT string_agg(column_name::text, ' ' ORDER BY column_name)
		   FROM information_schema.columns
		  WHERE table_schema = 'public' AND table_name = '$view'");
	is(join(' ', sort @doc), $server, "$view: the reference lists exactly its columns");
}

# ---- functions
my ($functions) = $reference =~ /^## Functions\n(.*?)(?=^## )/ms;
my %doc_fn = map { $_ => 1 } $functions =~ /`((?:bgw_prefetch|pg_stat_prefetch)\w*)\(/g;
my $server_fn = $node->safe_psql(
	'postgres', q{
SELECT string_agg(DISTINCT p.proname::text, ' ' ORDER BY p.proname::text)
  FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
 WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bgw_prefetch')});
is(join(' ', sort keys %doc_fn), $server_fn,
	'the reference lists exactly the functions of the extension');

$node->stop;
done_testing();
