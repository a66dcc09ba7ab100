# When io_uring cannot be set up, the monitor falls back to
# posix_fadvise(WILLNEED), says so once in the log with the reason, shows
# the method in force and the reason in bgw_prefetch_status(), and keeps
# prefetching; asking for io_uring again at reload tries again.
#
# How io_uring is taken away:
#
# - seccomp, as container runtimes do: the server is started through a
#   pg_ctl wrapper that installs a seccomp filter making io_uring_setup(2)
#   fail with EPERM (Docker's default profile) or ENOSYS (older runtimes),
#   then execs the real pg_ctl; the postmaster and all its children inherit
#   the filter.  This needs no privilege (PR_SET_NO_NEW_PRIVS first) and
#   runs everywhere the test runs (Linux x86-64 and aarch64).
#
# - the kernel.io_uring_disabled sysctl (Linux 6.6+), which only root can
#   set and which affects the whole machine: this part runs only if
#   /proc/sys/kernel/io_uring_disabled is writable by the test, or
#   BGWP_TEST_SYSCTL_HELPER names a command that sets it (it is run as
#   "$BGWP_TEST_SYSCTL_HELPER <value>", e.g. a root-owned script allowed in
#   sudoers), or "sudo -n sysctl" works.  The sysctl is set to 2 only while
#   the server starts, and restored at once (and again at exit).
use strict;
use warnings;

use Config;
use FindBin;
use lib $FindBin::RealBin;

use BgwPrefetchTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_bgwp_node(
	'io_uring_fallback', conf => q{
log_line_prefix = '%m [%p] %b '
});
create_frozen_table($node, 'postgres', 'big', 24000);

my $fallback_line = qr/bgw_prefetch: io_uring is not available, prefetching with posix_fadvise/;

sub status
{
	return $node->safe_psql('postgres',
		"SELECT io_method || '|' || coalesce(io_fallback_reason, '') FROM bgw_prefetch_status()");
}

sub wait_io_method
{
	my ($method, $what) = @_;
	ok( $node->poll_query_until(
			'postgres', "SELECT io_method = '$method' FROM bgw_prefetch_status()"),
		"$what: io_method in force is $method");
}

# A slowed VACUUM of big; returns "io_method of the live row|prefetched > 0".
sub served_vacuum
{
	reset_prefetch_stats($node);
	my $s = start_slow($node, 'postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) big', '4ms');
	my $method = '';
	if ($node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_stat_prefetch_activity
			  WHERE relid = 'big'::regclass AND state = 'prefetching' AND blocks_prefetched > 0"))
	{
		$method = $node->safe_psql('postgres',
			"SELECT io_method FROM pg_stat_prefetch_activity WHERE relid = 'big'::regclass");
	}
	$s->query('SELECT 1');
	$s->quit;
	wait_for_scans($node, 'big', 'vacuum', 1);
	my $prefetched = $node->safe_psql('postgres',
		"SELECT blocks_prefetched > 0 FROM pg_stat_prefetch WHERE relid = 'big'::regclass AND command = 'vacuum'");
	return "$method|$prefetched";
}

sub set_io_method
{
	my ($method) = @_;
	if (defined $method)
	{
		$node->safe_psql('postgres', "ALTER SYSTEM SET bgw_prefetch.io_method = '$method'");
	}
	else
	{
		$node->safe_psql('postgres', 'ALTER SYSTEM RESET bgw_prefetch.io_method');
	}
	$node->reload;
	return;
}

# Checks common to every way io_uring is taken away, on a server that has
# just started without it.  $reason matches the expected reason; with
# $still_unavailable, io_uring is still unavailable at the next reload.
sub check_fallback
{
	my ($label, $reason, $offset, $still_unavailable) = @_;
	# (once the monitor has published its state after the start)
	my $monitor = monitor_pid($node);
	$node->wait_for_log($fallback_line, $offset);
	like(slurp_file($node->logfile, $offset),
		qr/$fallback_line\n.*DETAIL:  $reason/, "$label: the fallback is logged, with the reason as DETAIL");
	wait_io_method('fadvise', $label);
	like(status(), qr/^fadvise\|.*$reason/, "$label: bgw_prefetch_status() gives the reason");
	is($node->safe_psql('postgres', 'SHOW bgw_prefetch.io_method'),
		'io_uring', "$label: the setting still asks for io_uring");
	is(served_vacuum(), 'fadvise|t', "$label: a VACUUM is prefetched with fadvise");

	# a VACUUM and some loops later, the fallback was still logged once
	my $lines = () = slurp_file($node->logfile, $offset) =~ /$fallback_line/g;
	is($lines, 1, "$label: logged once, not once per loop or per scan");

	# choosing fadvise explicitly: no reason to give
	set_io_method('fadvise');
	ok( $node->poll_query_until(
			'postgres',
			"SELECT io_method = 'fadvise' AND io_fallback_reason IS NULL FROM bgw_prefetch_status()"),
		"$label: fadvise chosen at reload, no fallback reason");

	return unless $still_unavailable;

	# asking for io_uring again tries again, fails again, says so again
	my $reload_offset = -s $node->logfile;
	set_io_method(undef);
	$node->wait_for_log($fallback_line, $reload_offset);
	my $again = () = slurp_file($node->logfile, $reload_offset) =~ /$fallback_line/g;
	is($again, 1, "$label: io_uring asked for again at reload: the fallback is logged again, once");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT io_method = 'fadvise' AND io_fallback_reason IS NOT NULL FROM bgw_prefetch_status()"),
		"$label: and the reason is back");
	is(monitor_pid($node), $monitor, "$label: same monitor through the reloads");
	unlike(slurp_file($node->logfile, $offset), qr/bgw_prefetch monitor (ERROR|FATAL)|was terminated by signal/,
		"$label: no error");
	return;
}

# ---- baseline: io_uring where the machine allows it (read once the
# monitor has published its state)
like(monitor_pid($node), qr/^\d+$/, 'baseline: the monitor runs');
my ($baseline_method) = split /\|/, status();
if ($baseline_method eq 'io_uring')
{
	is(status(), 'io_uring|', 'baseline: io_uring in force, no fallback reason');
	is(served_vacuum(), 'io_uring|t', 'baseline: a VACUUM is prefetched with io_uring');
	ok(!$node->log_contains($fallback_line), 'baseline: no fallback logged');
}
else
{
	note('io_uring is not available on this machine to begin with: ' . status());
	is($baseline_method, 'fadvise', 'baseline: io_uring unavailable here, fadvise in force');
}
$node->stop;

# ---- seccomp: io_uring_setup fails with EPERM, then with ENOSYS
my ($audit_arch, $nr_prctl);
if ($^O eq 'linux' && $Config{archname} =~ /^x86_64/)
{
	($audit_arch, $nr_prctl) = (0xC000003E, 157);
}
elsif ($^O eq 'linux' && $Config{archname} =~ /^aarch64/)
{
	($audit_arch, $nr_prctl) = (0xC00000B7, 167);
}

SKIP:
{
	skip "seccomp filter not written for $^O/$Config{archname}", 1
	  unless defined $audit_arch;

	# The real pg_ctl, and a wrapper in front of it in PATH.
	my ($real_pg_ctl) = grep { -x "$_/pg_ctl" } split /:/, $ENV{PATH};
	die 'pg_ctl not found in PATH' unless defined $real_pg_ctl;
	$real_pg_ctl .= '/pg_ctl';
	my $wrapdir = PostgreSQL::Test::Utils::tempdir;
	my $wrapper = "$wrapdir/pg_ctl";
	open my $fh, '>', $wrapper or die "could not write $wrapper: $!";
	# seccomp BPF: if arch matches and nr == io_uring_setup (425 on every
	# architecture since Linux 5.1): return the errno, else allow
	print $fh qq{#!$^X
use strict;
use warnings;
my \$errno = \$ENV{BGWP_SECCOMP_ERRNO} or die 'BGWP_SECCOMP_ERRNO not set';
my \$filter = join('',
	pack('SCCL', 0x20, 0, 0, 4),
	pack('SCCL', 0x15, 0, 3, $audit_arch),
	pack('SCCL', 0x20, 0, 0, 0),
	pack('SCCL', 0x15, 0, 1, 425),
	pack('SCCL', 0x06, 0, 0, 0x00050000 | \$errno),
	pack('SCCL', 0x06, 0, 0, 0x7fff0000));
my \$prog = pack('S x6 P', length(\$filter) / 8, \$filter);
syscall($nr_prctl, 38, 1, 0, 0, 0) == 0 or die "prctl(PR_SET_NO_NEW_PRIVS): \$!";
syscall($nr_prctl, 22, 2, \$prog, 0, 0) == 0 or die "prctl(PR_SET_SECCOMP): \$!";
exec { '$real_pg_ctl' } '$real_pg_ctl', \@ARGV or die "exec $real_pg_ctl: \$!";
};
	close $fh;
	chmod 0755, $wrapper;

	foreach my $case ([ 1, 'EPERM', 'Operation not permitted' ],
		[ 38, 'ENOSYS', 'Function not implemented' ])
	{
		my ($errno, $name, $text) = @$case;
		my $offset = -s $node->logfile;
		{
			local $ENV{PATH} = "$wrapdir:$ENV{PATH}";
			local $ENV{BGWP_SECCOMP_ERRNO} = $errno;
			$node->start;
		}
		check_fallback("seccomp $name", qr/io_uring_queue_init failed: $text/, $offset, 1);
		$node->stop;
	}
}

# ---- kernel.io_uring_disabled = 2
my $sysctl = '/proc/sys/kernel/io_uring_disabled';
my $set_sysctl;
if (!-e $sysctl)
{
	$set_sysctl = undef;
}
elsif (-w $sysctl)
{
	$set_sysctl = sub {
		open my $fh, '>', $sysctl or return 0;
		print $fh "$_[0]\n";
		return close $fh;
	};
}
elsif ($ENV{BGWP_TEST_SYSCTL_HELPER})
{
	$set_sysctl = sub { system("$ENV{BGWP_TEST_SYSCTL_HELPER} $_[0]") == 0 };
}
elsif (system('sudo -n true >/dev/null 2>&1') == 0)
{
	$set_sysctl = sub {
		system("sudo -n sysctl -q -w kernel.io_uring_disabled=$_[0] >/dev/null") == 0;
	};
}

my $sysctl_before;
END
{
	# never leave the machine without io_uring
	$set_sysctl->($sysctl_before) if defined $sysctl_before && $set_sysctl;
}

SKIP:
{
	skip "$sysctl does not exist (Linux before 6.6)", 1 unless -e $sysctl;
	skip "cannot set kernel.io_uring_disabled as this user (not root, no BGWP_TEST_SYSCTL_HELPER, no sudo -n)", 1
	  unless $set_sysctl;
	$sysctl_before = slurp_file($sysctl);
	chomp $sysctl_before;

	my $offset = -s $node->logfile;
	ok($set_sysctl->(2), 'kernel.io_uring_disabled set to 2');
	$node->start;
	# the monitor creates its engine as it starts: once it has logged, the
	# sysctl can go back
	my $logged = eval { $node->wait_for_log($fallback_line, $offset); 1 };
	ok($set_sysctl->($sysctl_before), "kernel.io_uring_disabled restored to $sysctl_before");
	ok($logged, 'io_uring_disabled: the fallback is logged');
	check_fallback('io_uring_disabled',
		qr/io_uring_queue_init failed: Operation not permitted \(kernel\.io_uring_disabled=2\)/, $offset, 0);

	# io_uring is allowed again: the next engine uses it (check_fallback
	# left io_method = fadvise set)
	set_io_method(undef);
	wait_io_method('io_uring', 'io_uring_disabled lifted, io_uring asked for at reload');
	is(status(), 'io_uring|', 'io_uring_disabled lifted: no fallback reason any more');
	$node->stop;
}

done_testing();
