/*
 * reuseport.c — the reuseport program and its mirror (reuseport.h).
 *
 * What a reuseport program sees.  The kernel runs a SO_ATTACH_REUSEPORT_CBPF
 * program on the datagram with its data pulled past the UDP header
 * (net/core/sock_reuseport.c, run_bpf_filter: pskb_pull(skb, hdr_len)), so
 * offset 0 is the first byte of the payload and the addresses are not at
 * any positive offset.  Classic BPF's negative offsets reach them: a load
 * at SKF_NET_OFF + k reads byte k of the network header
 * (linux/filter.h; bpf_internal_load_pointer_neg_helper), which is set on
 * every received UDP datagram.  So the program reads the IP version
 * nibble, then the IPv4 source (offset 12) or the four words of the IPv6
 * source (offsets 8-20), and returns hash % n.  A return value of n or
 * more would make the kernel fall back to its own hash of the 4-tuple
 * (the port included), which never happens here.  SKF_AD_RXHASH would
 * not do: it hashes the ports too.  No eBPF, so no libbpf and no
 * CAP_BPF: a classic program is attached by an unprivileged process.
 *
 * The hash: the source word w (IPv4: the address; IPv6: the XOR of its
 * four 32-bit words), h = w × 0x9E3779B1 mod 2^32 (Fibonacci hashing:
 * consecutive addresses spread), h ^= h >> 16, worker = h mod n.  BPF
 * loads are big-endian, as ng_get_be32 reads.  An IPv4 datagram on a dual
 * "::" socket has an IPv4 network header, so it hashes as IPv4, and its
 * source appears to the decoder as ::ffff:a.b.c.d, which
 * ng_reuseport_worker hashes as IPv4 too.
 */
#include "net/reuseport.h"

#include <errno.h>
#include <stdbool.h>
#include <linux/filter.h>
#include <sys/socket.h>

#include "core/bytes.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

#define MIX 0x9E3779B1u

static uint32_t mix(uint32_t w, uint32_t n)
{
	uint32_t h = w * MIX;
	h ^= h >> 16;
	return h % n;
}

uint32_t ng_reuseport_worker(const uint8_t addr[16], uint32_t n)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (n <= 1)
		return 0;
	bool v4 = true;
	for (int i = 0; i < 12; i++)
		v4 = v4 && addr[i] == mapped[i];
	uint32_t w = ng_get_be32(addr + 12);
	if (!v4)
		w ^= ng_get_be32(addr) ^ ng_get_be32(addr + 4) ^ ng_get_be32(addr + 8);
	return mix(w, n);
}

int ng_reuseport_attach(int fd, uint32_t n)
{
	if (n < 1 || n > NG_REUSEPORT_MAX) {
		errno = EINVAL;
		return -1;
	}
	struct sock_filter code[] = {
	    /* 0 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF),
	    /* 1 */ BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 4),
	    /* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, 2, 0), /* IPv6: to 5 */
	    /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SKF_NET_OFF + 12),
	    /* 4 */ BPF_JUMP(BPF_JMP | BPF_JA, 10, 0, 0), /* IPv4: to 15 */
	    /* 5 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SKF_NET_OFF + 8),
	    /* 6 */ BPF_STMT(BPF_MISC | BPF_TAX, 0),
	    /* 7 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SKF_NET_OFF + 12),
	    /* 8 */ BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),
	    /* 9 */ BPF_STMT(BPF_MISC | BPF_TAX, 0),
	    /* 10 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SKF_NET_OFF + 16),
	    /* 11 */ BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),
	    /* 12 */ BPF_STMT(BPF_MISC | BPF_TAX, 0),
	    /* 13 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SKF_NET_OFF + 20),
	    /* 14 */ BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),
	    /* 15 */ BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, MIX),
	    /* 16 */ BPF_STMT(BPF_MISC | BPF_TAX, 0),
	    /* 17 */ BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 16),
	    /* 18 */ BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),
	    /* 19 */ BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, n),
	    /* 20 */ BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog);
}
