/*
 * capture.c — export datagrams from capture files and raw payload files
 * (see capture.h).
 *
 * A file whose first four bytes are a pcap or pcapng magic number is read
 * with libpcap (which handles both formats, either byte order, micro- and
 * nanosecond stamps).  Each frame is peeled down to its UDP payload:
 *
 *   link header (Ethernet + VLAN tags | Linux SLL/SLL2 | none | BSD AF word)
 *     → IPv4 (RFC 791) or IPv6 (RFC 8200, extension headers walked)
 *       → UDP (RFC 768): payload bounded by the UDP length, the IP length
 *         and the captured length.
 *
 * Fragments are never reassembled: a fragment holds only part of an export
 * datagram, so it is counted and skipped rather than handed on half.
 *
 * Any other file is a raw payload file: one export datagram, or a series of
 * IPFIX messages (RFC 5655 file format) split on each header's length, or
 * a series of NetFlow v5 packets split on their record counts.
 */
#include "net/capture.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/addr.h"
#include "core/bytes.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

enum { ETH_P_IPV4 = 0x0800, ETH_P_IPV6 = 0x86dd };

/* One frame's way down to the UDP payload. */
struct frame {
	const uint8_t *p;
	size_t len; /* captured bytes left from p, within the IP datagram */
};

struct reader {
	const char *path;
	int (*fn)(const ng_datagram *dg, void *arg);
	void *arg;
	ng_capture_stats *st;
	uint64_t time_ms;
};

/* Counts a frame that carries no export datagram; returns 0 to go on. */
static int skip(struct reader *r, uint64_t *why)
{
	r->st->skipped++;
	if (why)
		(*why)++;
	return 0;
}

/*
 * UDP header (RFC 768) at f->p, within an IP payload of `ip_len` bytes
 * (as the IP header declares it).  Hands the payload to the callback.
 */
static int udp(struct reader *r, struct frame *f, size_t ip_len, const uint8_t src[16])
{
	if (ip_len < 8)
		return skip(r, &r->st->malformed);
	if (f->len < 8) { /* the snap length cut into the UDP header */
		r->st->truncated++;
		return skip(r, NULL);
	}
	size_t ulen = ng_get_be16(f->p + 4);
	/* UDP length counts the 8-byte header; it may be less than the IP
	 * payload (padding) but never more. */
	if (ulen < 8 || ulen > ip_len)
		return skip(r, &r->st->malformed);
	size_t plen = ulen - 8;
	size_t have = f->len - 8;
	if (have < plen) {
		r->st->truncated++;
		plen = have;
	}
	ng_datagram dg = {
	    .data = f->p + 8,
	    .len = plen,
	    .exporter_port = ng_get_be16(f->p),
	    .time_received = r->time_ms,
	};
	memcpy(dg.exporter, src, 16);
	r->st->datagrams++;
	return r->fn(&dg, r->arg);
}

/* IPv4 header (RFC 791 §3.1). */
static int ipv4(struct reader *r, struct frame *f)
{
	const uint8_t *h = f->p;
	if (f->len < 20 || h[0] >> 4 != 4)
		return skip(r, &r->st->malformed);
	size_t ihl = (size_t)(h[0] & 0x0f) * 4;
	size_t total = ng_get_be16(h + 2);
	if (ihl < 20 || total < ihl || f->len < ihl)
		return skip(r, &r->st->malformed);
	/* More-fragments flag or a non-zero offset: part of a datagram. */
	if (ng_get_be16(h + 6) & 0x3fff)
		return skip(r, &r->st->fragments);
	if (h[9] != 17)
		return skip(r, NULL);
	uint8_t src[16];
	ng_addr_from_v4(src, h + 12);
	if (f->len > total)
		f->len = total; /* Ethernet padding after the IP datagram */
	f->p += ihl;
	f->len -= ihl;
	return udp(r, f, total - ihl, src);
}

/* IPv6 header (RFC 8200 §3) and the extension headers before UDP (§4). */
static int ipv6(struct reader *r, struct frame *f)
{
	const uint8_t *h = f->p;
	if (f->len < 40 || h[0] >> 4 != 6)
		return skip(r, &r->st->malformed);
	size_t plen = ng_get_be16(h + 4); /* 0: jumbogram (RFC 2675), not for UDP exports */
	if (plen == 0)
		return skip(r, &r->st->malformed);
	uint8_t src[16];
	memcpy(src, h + 8, 16);
	uint8_t next = h[6];
	if (f->len - 40 > plen)
		f->len = 40 + plen;
	f->p += 40;
	f->len -= 40;
	for (;;) {
		size_t hlen;
		switch (next) {
		case 17: return udp(r, f, plen, src);
		case 0:  /* hop-by-hop options */
		case 43: /* routing */
		case 60: /* destination options */
			if (f->len < 8)
				return skip(r, &r->st->malformed);
			hlen = ((size_t)f->p[1] + 1) * 8;
			break;
		case 51: /* authentication header (RFC 4302 §2.2): length in 4-octet units minus 2
		          */
			if (f->len < 8)
				return skip(r, &r->st->malformed);
			hlen = ((size_t)f->p[1] + 2) * 4;
			break;
		case 44: /* fragment (RFC 8200 §4.5): offset or M flag set */
			if (f->len < 8)
				return skip(r, &r->st->malformed);
			if (ng_get_be16(f->p + 2) & 0xfff9)
				return skip(r, &r->st->fragments);
			hlen = 8; /* an atomic fragment: the whole datagram */
			break;
		default: /* no next header (59), ESP, TCP, ICMPv6, … */ return skip(r, NULL);
		}
		if (hlen > f->len || hlen > plen)
			return skip(r, &r->st->malformed);
		next = f->p[0];
		f->p += hlen;
		f->len -= hlen;
		plen -= hlen;
	}
}

/* Dispatches on an EtherType (or the Linux cooked protocol field). */
static int ethertype(struct reader *r, struct frame *f, uint16_t type)
{
	if (type == ETH_P_IPV4)
		return ipv4(r, f);
	if (type == ETH_P_IPV6)
		return ipv6(r, f);
	return skip(r, NULL);
}

/* Raw IP: the version nibble tells the family. */
static int raw_ip(struct reader *r, struct frame *f)
{
	if (f->len < 1)
		return skip(r, &r->st->malformed);
	if (f->p[0] >> 4 == 4)
		return ipv4(r, f);
	if (f->p[0] >> 4 == 6)
		return ipv6(r, f);
	return skip(r, NULL);
}

/* Ethernet II with any number of 802.1Q (0x8100), 802.1ad (0x88a8) or
 * pre-standard QinQ (0x9100) tags between the MACs and the EtherType. */
static int ethernet(struct reader *r, struct frame *f)
{
	if (f->len < 14)
		return skip(r, &r->st->malformed);
	uint16_t type = ng_get_be16(f->p + 12);
	f->p += 14;
	f->len -= 14;
	while (type == 0x8100 || type == 0x88a8 || type == 0x9100) {
		if (f->len < 4)
			return skip(r, &r->st->malformed);
		type = ng_get_be16(f->p + 2);
		f->p += 4;
		f->len -= 4;
	}
	return ethertype(r, f, type);
}

/* BSD loopback: a 4-byte address family, host order of the capturing
 * machine (NULL) or network order (LOOP).  AF_INET is 2 everywhere;
 * AF_INET6 is 10 (Linux), 24 (NetBSD, OpenBSD), 28 (FreeBSD), 30 (macOS). */
static int bsd_loop(struct reader *r, struct frame *f)
{
	if (f->len < 4)
		return skip(r, &r->st->malformed);
	uint32_t af = ng_get_le32(f->p);
	if (af > 0xffff)
		af = ng_get_be32(f->p);
	f->p += 4;
	f->len -= 4;
	if (af == 2)
		return ipv4(r, f);
	if (af == 10 || af == 24 || af == 28 || af == 30)
		return ipv6(r, f);
	return skip(r, NULL);
}

static int frame(struct reader *r, int dlt, struct frame *f)
{
	switch (dlt) {
	case DLT_EN10MB: return ethernet(r, f);
	case DLT_LINUX_SLL: /* 16-byte header, protocol at 14 */
		if (f->len < 16)
			return skip(r, &r->st->malformed);
		f->p += 16, f->len -= 16;
		return ethertype(r, f, ng_get_be16(f->p - 2));
	case DLT_LINUX_SLL2: /* 20-byte header, protocol at 0 */
		if (f->len < 20)
			return skip(r, &r->st->malformed);
		f->p += 20, f->len -= 20;
		return ethertype(r, f, ng_get_be16(f->p - 20));
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6: return raw_ip(r, f);
	case DLT_NULL:
	case DLT_LOOP: return bsd_loop(r, f);
	}
	return skip(r, NULL);
}

static bool dlt_supported(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP: return true;
	}
	return false;
}

static int read_pcap(struct reader *r, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	pcap_t *pc = pcap_open_offline(r->path, perr);
	if (!pc) {
		snprintf(err, errlen, "%s: not a readable capture: %s", r->path, perr);
		return -1;
	}
	int dlt = pcap_datalink(pc);
	if (!dlt_supported(dlt)) {
		const char *name = pcap_datalink_val_to_name(dlt);
		snprintf(err, errlen,
		         "%s: link type %d (%s) is not supported (Ethernet, Linux cooked, raw IP, "
		         "loopback are)",
		         r->path, dlt, name ? name : "unknown");
		pcap_close(pc);
		return -1;
	}
	struct pcap_pkthdr *hdr;
	const u_char *data;
	int rc, ret = 0;
	while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
		r->st->packets++;
		r->time_ms = (uint64_t)hdr->ts.tv_sec * 1000 + (uint64_t)hdr->ts.tv_usec / 1000;
		struct frame f = {.p = data, .len = hdr->caplen};
		ret = frame(r, dlt, &f);
		if (ret)
			break;
	}
	if (!ret && rc == PCAP_ERROR) {
		snprintf(err, errlen, "%s: read error after %llu frames: %s", r->path,
		         (unsigned long long)r->st->packets, pcap_geterr(pc));
		ret = -1;
	}
	pcap_close(pc);
	return ret;
}

/* Hands one raw payload to the callback. */
static int raw_datagram(struct reader *r, const uint8_t *p, size_t len)
{
	ng_datagram dg = {.data = p, .len = len, .time_received = r->time_ms};
	static const uint8_t any[4] = {0, 0, 0, 0};
	ng_addr_from_v4(dg.exporter, any);
	r->st->packets++;
	r->st->datagrams++;
	return r->fn(&dg, r->arg);
}

/*
 * NetFlow v5 files are often several export packets back to back (the
 * corpus' netflow5.dat is twelve).  A v5 packet's size follows from its
 * header: 24 bytes + count × 48 (Cisco NetFlow v5 format, count 1..30).
 * Returns true when `buf` is exactly such a series, more than one packet.
 */
static bool is_v5_series(const uint8_t *buf, size_t size)
{
	size_t off = 0, n = 0;
	while (size - off >= 24 && ng_get_be16(buf + off) == 5) {
		size_t count = ng_get_be16(buf + off + 2);
		if (count < 1 || count > 30 || 24 + count * 48 > size - off)
			return false;
		off += 24 + count * 48;
		n++;
	}
	return off == size && n > 1;
}

/*
 * A raw payload file.  IPFIX version 10 at the start means a series of
 * messages (RFC 5655 §6: an IPFIX file is a stream of messages), each
 * carrying its own length (RFC 7011 §3.1); a length that cannot be right
 * (below the 16-byte header or past the end) ends the splitting and the
 * rest is handed on as one datagram, for the decoder to count as bad.
 * A file that is exactly a series of NetFlow v5 packets is split on their
 * counts; anything else is one datagram.
 */
static int raw_payloads(struct reader *r, const uint8_t *buf, size_t size)
{
	size_t off = 0;
	if (size >= 16 && ng_get_be16(buf) == 10) {
		while (size - off >= 16 && ng_get_be16(buf + off) == 10) {
			size_t mlen = ng_get_be16(buf + off + 2);
			if (mlen < 16 || mlen > size - off)
				break;
			int rc = raw_datagram(r, buf + off, mlen);
			if (rc)
				return rc;
			off += mlen;
		}
	} else if (is_v5_series(buf, size)) {
		while (off < size) {
			size_t mlen = 24 + (size_t)ng_get_be16(buf + off + 2) * 48;
			int rc = raw_datagram(r, buf + off, mlen);
			if (rc)
				return rc;
			off += mlen;
		}
	}
	if (off < size)
		return raw_datagram(r, buf + off, size - off);
	return 0;
}

static int read_raw(struct reader *r, FILE *fp, char *err, size_t errlen)
{
	struct stat sb;
	if (fstat(fileno(fp), &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", r->path);
		return -1;
	}
	r->time_ms = (uint64_t)sb.st_mtim.tv_sec * 1000 + (uint64_t)sb.st_mtim.tv_nsec / 1000000;
	size_t size = (size_t)sb.st_size;
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory for %zu bytes", r->path, size);
		return -1;
	}
	if (size && (fseek(fp, 0, SEEK_SET) != 0 || fread(buf, 1, size, fp) != size)) {
		snprintf(err, errlen, "%s: read error: %s", r->path,
		         ferror(fp) ? strerror(errno) : "file shrank while reading");
		free(buf);
		return -1;
	}
	int rc = raw_payloads(r, buf, size);
	free(buf);
	return rc;
}

/* pcap (either byte order, µs or ns, and the "modified" Kuznetzov format)
 * and pcapng section header block magic numbers. */
static bool is_capture_magic(const uint8_t m[4])
{
	static const uint32_t magics[] = {0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1,
	                                  0xa1b2cd34, 0x34cdb2a1, 0x0a0d0d0a};
	uint32_t v = ng_get_be32(m);
	for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++)
		if (v == magics[i])
			return true;
	return false;
}

int ng_capture_read(const char *path, int (*fn)(const ng_datagram *dg, void *arg), void *arg,
                    ng_capture_stats *st, char *err, size_t errlen)
{
	ng_capture_stats local = {0};
	struct reader r = {.path = path, .fn = fn, .arg = arg, .st = st ? st : &local};
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	uint8_t magic[4] = {0};
	size_t got = fread(magic, 1, 4, fp);
	int rc;
	if (got == 4 && is_capture_magic(magic)) {
		fclose(fp);
		return read_pcap(&r, err, errlen);
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
		rc = -1;
	} else {
		rc = read_raw(&r, fp, err, errlen);
	}
	fclose(fp);
	return rc;
}
