/*
 * fuzz_stream.c — libFuzzer target for IPFIX over TCP/SCTP: the stream
 * reassembly (net/reasm.c) and the session-scoped decoder state it feeds
 * (decode/decoder.c: ng_decoder_session_end).
 *
 * Input: byte 0 picks the read sizes (a small pseudo-random sequence, 1 to
 * 64 + 2^(b & 15) bytes a read, so both byte-at-a-time and whole-message
 * reads occur); byte 1 how many sessions the stream is dealt out to; the
 * rest is the stream.  Each read goes through ng_reasm_dst/ng_reasm_got of
 * the current session's reassembler as recv() would fill it, each whole
 * message is decoded with its session id, and a session ends (its
 * reassembler freed, ng_decoder_session_end) after every 7th message and
 * at the end.  Checked: a message is whole (version 10, Length = its
 * size, >= 16), the messages of a session are exactly its bytes in order
 * up to an error, after an error nothing more is read, reads never exceed
 * what was asked, and the decoder holds no template of an ended session.
 * Seeds: the IPFIX payloads of the capture corpus (any IPFIX message is a
 * stream of one).
 */
#include "fuzz_common.h"
#include "core/bytes.h"
#include "net/reasm.h"

#define MAX_SESS 4

struct sess {
	ng_reasm r;
	size_t fed;     /* stream bytes given to r */
	size_t out;     /* bytes of whole messages r gave back */
	bool dead;      /* an error: no more reads */
	uint32_t id;    /* session id, 0 when not open */
	size_t nmsg;    /* messages in this session */
	uint8_t *bytes; /* what it was fed, to compare */
};

static void end_session(ng_decoder *d, struct sess *s, uint32_t *next_id)
{
	static const uint8_t ex[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 7};
	ng_decoder_session_end(d, ex, s->id);
	ng_reasm_free(&s->r);
	s->fed = s->out = s->nmsg = 0;
	s->dead = false;
	s->id = ++*next_id;
}

/* One whole message of s: check it and decode it. */
static void on_message(ng_decoder *d, struct sess *s, const uint8_t *msg, size_t len,
                       ng_flow_batch *out)
{
	if (len < 16 || ng_get_be16(msg) != 10 || ng_get_be16(msg + 2) != len)
		abort();
	if (memcmp(msg, s->bytes + s->out, len))
		abort(); /* not the bytes of the stream, in order */
	s->out += len;
	ng_datagram dg = {.data = msg, .len = len, .time_received = 1000, .session = s->id};
	dg.exporter[10] = dg.exporter[11] = 0xff;
	dg.exporter[12] = 192;
	dg.exporter[14] = 2;
	dg.exporter[15] = 7;
	size_t before = out->n;
	size_t n = ng_decode(d, &dg, out);
	ng_fuzz_check(out, n, before);
	s->nmsg++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint32_t rnd = data[0] * 2654435761u + 1, next_id = 0;
	size_t nsess = (size_t)(data[1] % MAX_SESS) + 1, o = 2;
	struct sess ss[MAX_SESS] = {0};
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	for (size_t i = 0; i < nsess; i++) {
		ng_reasm_init(&ss[i].r);
		ss[i].id = ++next_id;
		ss[i].bytes = malloc(size);
		if (!ss[i].bytes)
			abort();
	}
	for (size_t k = 0; o < size; k++) {
		struct sess *s = &ss[k % nsess];
		rnd = rnd * 1103515245u + 12345u;
		size_t chunk = 1 + (rnd >> 16) % (64 + (1u << (data[0] & 15)));
		if (chunk > size - o)
			chunk = size - o;
		if (s->dead) {
			o += chunk; /* a closed connection: its bytes go nowhere */
			continue;
		}
		size_t want;
		uint8_t *dst = ng_reasm_dst(&s->r, &want);
		if (!want)
			abort();
		size_t n = chunk < want ? chunk : want;
		memcpy(dst, data + o, n);
		memcpy(s->bytes + s->fed, data + o, n);
		s->fed += n;
		o += n;
		const uint8_t *msg;
		size_t len;
		int rc = ng_reasm_got(&s->r, n, &msg, &len);
		if (rc == NG_REASM_MESSAGE) {
			on_message(d, s, msg, len, &out);
			if (s->nmsg % 7 == 0)
				end_session(d, s, &next_id);
		} else if (rc < 0) {
			s->dead = true;
		} else if (rc != NG_REASM_MORE || s->fed - s->out > 65535) {
			abort();
		}
	}
	for (size_t i = 0; i < nsess; i++) {
		end_session(d, &ss[i], &next_id);
		free(ss[i].bytes);
	}
	ng_limit_stats lim;
	ng_decoder_limit_stats(d, &lim);
	if (lim.templates || lim.held_bytes)
		abort(); /* every session ended: nothing of theirs may stay */
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
	return 0;
}
