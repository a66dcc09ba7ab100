#!/usr/bin/perl
# test/validate_meta.pl: check META.json against the PGXN Meta Spec 1.0.0
# (https://pgxn.org/spec/) -- the required keys and the formats of the
# values this distribution uses -- and against the rest of the tree: the
# files it names exist, and its version is the Debian package's upstream
# version.  Prints what is wrong; exits non-zero if anything is.
#
#   perl test/validate_meta.pl [META.json]
use strict;
use warnings;
use JSON::PP;

my $file = shift // 'META.json';
my @errors;
sub fail { push @errors, join('', @_); return; }

open my $fh, '<', $file or die "cannot open $file: $!\n";
my $meta = eval { JSON::PP->new->utf8->decode(do { local $/; <$fh> }) };
close $fh;
die "$file is not valid JSON: $@" unless $meta;

my $semver = qr/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+)?$/;
my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1
  artistic_2 bsd freebsd gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0
  mit mozilla_1_0 mozilla_1_1 openssl perl_5 postgresql qpl_1_0 ssleay sun
  zlib open_source restricted unrestricted unknown);

# required keys
for my $key (qw(name abstract maintainer license provides meta-spec version))
{
	fail("missing required key \"$key\"") unless exists $meta->{$key};
}
fail('name must be a string without whitespace, "/", "\\\\" or control characters')
  unless defined $meta->{name} && !ref $meta->{name}
  && $meta->{name} =~ /^[^\s\/\\\p{Cc}]+$/;
fail('abstract must be a non-empty string')
  unless defined $meta->{abstract} && !ref $meta->{abstract} && length $meta->{abstract};
my $maint = $meta->{maintainer};
fail('maintainer must be a string or a non-empty array of strings')
  unless defined $maint
  && (!ref $maint || (ref $maint eq 'ARRAY' && @$maint && !grep { ref } @$maint));
my $license = $meta->{license};
if (!ref $license)
{
	fail("license \"$license\" is not a PGXN license key") unless $licenses{ $license // '' };
}
elsif (ref $license eq 'ARRAY')
{
	$licenses{$_} or fail("license \"$_\" is not a PGXN license key") for @$license;
}
elsif (ref $license ne 'HASH')
{
	fail('license must be a key, an array of keys or an object');
}
fail("version \"$meta->{version}\" is not a semantic version")
  unless ($meta->{version} // '') =~ $semver;
fail('meta-spec.version must be "1.0.0"')
  unless ref $meta->{'meta-spec'} eq 'HASH' && ($meta->{'meta-spec'}{version} // '') eq '1.0.0';
if (exists $meta->{release_status})
{
	fail("release_status \"$meta->{release_status}\" is not stable, testing or unstable")
	  unless $meta->{release_status} =~ /^(stable|testing|unstable)$/;
}

# provides: each extension has a file that exists and a semantic version
if (ref $meta->{provides} eq 'HASH' && %{ $meta->{provides} })
{
	while (my ($ext, $p) = each %{ $meta->{provides} })
	{
		fail("provides.$ext must be an object"), next unless ref $p eq 'HASH';
		fail("provides.$ext.file is missing") unless defined $p->{file};
		fail("provides.$ext.file $p->{file} does not exist")
		  if defined $p->{file} && !-f $p->{file};
		fail("provides.$ext.docfile $p->{docfile} does not exist")
		  if defined $p->{docfile} && !-f $p->{docfile};
		fail("provides.$ext.version \"" . ($p->{version} // '') . '" is not a semantic version')
		  unless ($p->{version} // '') =~ $semver;
		fail("provides.$ext: no $ext.control") unless -f "$ext.control";
	}
}
else
{
	fail('provides must be a non-empty object');
}

# prereqs: phase -> relationship -> { name: version }
if (exists $meta->{prereqs})
{
	my %phases = map { $_ => 1 } qw(configure build test runtime develop);
	my %rels = map { $_ => 1 } qw(requires recommends suggests conflicts);
	while (my ($phase, $r) = each %{ $meta->{prereqs} })
	{
		fail("prereqs: unknown phase \"$phase\"") unless $phases{$phase};
		while (my ($rel, $deps) = each %$r)
		{
			fail("prereqs.$phase: unknown relationship \"$rel\"") unless $rels{$rel};
			while (my ($dep, $v) = each %$deps)
			{
				fail("prereqs.$phase.$rel.$dep: \"$v\" is not a version (or 0)")
				  unless $v eq '0' || $v =~ $semver;
			}
		}
	}
}

# the Debian package's upstream version is the distribution's
if (open my $cl, '<', 'debian/changelog')
{
	my ($first) = <$cl>;
	close $cl;
	my ($upstream) = $first =~ /^\S+ \(([^-)]+)/;
	fail("debian/changelog's upstream version " . ($upstream // '?')
		  . " is not META.json's $meta->{version}")
	  unless defined $upstream && $upstream eq ($meta->{version} // '');
}

if (@errors)
{
	print "$file: $_\n" for @errors;
	exit 1;
}
print "$file: valid (PGXN Meta Spec 1.0.0)\n";
exit 0;
