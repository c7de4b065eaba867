#!/usr/bin/perl
# mkgeodb.pl COUNTRY.mmdb ASN.mmdb [MAX_RANGES] — real-size MaxMind-format
# databases for bench/ingest-enrich, from Debian packages only:
#   COUNTRY.mmdb: the IPv4 and IPv6 country ranges of tor-geoipdb
#     (/usr/share/tor/geoip{,6}: "LOW,HIGH,CC" lines), GeoLite2-Country
#     layout (country.iso_code);
#   ASN.mmdb: synthetic, of comparable size: the IPv4 space cut into ranges
#     of 256 × 2^k addresses (k random 0-6, ~ 400k ranges) and the IPv6
#     ranges of tor's file, each given one of 60000 AS numbers and an
#     organisation name, GeoLite2-ASN layout.
# Written with libmaxmind-db-writer-perl (MaxMind::DB::Writer::Tree).
use strict;
use warnings;
use MaxMind::DB::Writer::Tree;
use Socket qw(inet_ntoa);

my ($cout, $aout, $max) = @ARGV;
die "usage: mkgeodb.pl COUNTRY.mmdb ASN.mmdb [MAX_RANGES]\n" unless $aout;
$max ||= 1e9;
my %types = (
	country => 'map', iso_code => 'utf8_string',
	autonomous_system_number => 'uint32', autonomous_system_organization => 'utf8_string',
);
sub tree {
	my ($type) = @_;
	return MaxMind::DB::Writer::Tree->new(
		ip_version => 6, record_size => 28, database_type => $type,
		languages => ['en'], description => { en => "nagare benchmark $type" },
		alias_ipv6_to_ipv4 => 1, remove_reserved_networks => 0,
		merge_strategy => 'none',
		map_key_type_callback => sub { $types{ $_[0] } },
	);
}
sub v4 { inet_ntoa(pack('N', $_[0])) }

my $t = tree('GeoLite2-Country');
my $n = 0;
for my $f ('/usr/share/tor/geoip', '/usr/share/tor/geoip6') {
	open(my $fh, '<', $f) or die "$f: $! (apt-get install tor-geoipdb)\n";
	while (<$fh>) {
		next if /^#/;
		chomp;
		my ($lo, $hi, $cc) = split /,/;
		next if !defined $cc || $cc eq '??';
		($lo, $hi) = ("::" . v4($lo), "::" . v4($hi)) if $lo =~ /^\d+$/;
		# ranges over the IPv4 aliases (2002::/16 6to4, ::ffff:0:0/96) are refused
		eval { $t->insert_range($lo, $hi, { country => { iso_code => $cc } }); 1 } or next;
		last if ++$n >= $max;
	}
}
open(my $out, '>', $cout) or die "$cout: $!\n";
$t->write_tree($out);
close $out;
print "$cout: $n country ranges\n";

srand(42);
$t = tree('GeoLite2-ASN');
$n = 0;
my $a = 1 << 24;
while ($a < (224 << 24) && $n < $max) {
	my $len = 256 << int(rand(7));
	my $asn = 1 + int(rand(60000));
	$t->insert_range("::" . v4($a), "::" . v4($a + $len - 1),
		{ autonomous_system_number => $asn, autonomous_system_organization => "Synthetic Networks $asn" });
	$a += $len;
	$n++;
}
open($out, '>', $aout) or die "$aout: $!\n";
$t->write_tree($out);
close $out;
print "$aout: $n ASN ranges\n";
