/*
 * session.c — the token and the session cookie (docs/security.md "HTTP").
 *
 * The token is the one secret of the HTTP server.  A configured one must
 * be at least NG_HTTP_TOKEN_MIN (16) characters (server.c refuses to
 * start otherwise: a one-character token falls to the first few guesses);
 * when one is wanted and none is given (off loopback, or "auto"), the
 * server makes one of 128 bits from getrandom(2), 32 hex digits, which
 * its owner prints with the URL to open.
 *
 * The browser is let in once with `?token=TOKEN`; the answer is a 303
 * redirect to the same URL without the token (so it leaves the address
 * bar, the history and any Referer) and sets the cookie
 * `nagare_session`, which never holds the token itself: it holds
 * HMAC-SHA256(key, "nagare-session\0" || token) in hex (RFC 2104, with
 * nettle, the hash library libmicrohttpd's TLS stack already loads), the
 * key 32 random bytes drawn at server start.  A cookie read off a disk
 * or a proxy log thus does not give the token (which also works as a
 * bearer token, from anywhere, for ever), and every session ends when the
 * server restarts.  The cookie is HttpOnly and SameSite=Strict; it is
 * compared in constant time like the token (ng_http_token_equal).
 */
#include <microhttpd.h>
#include <nettle/hmac.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "http/http_int.h"

/* Fills b[n] from the kernel's generator.  Returns 0, or -1. */
static int random_bytes(uint8_t *b, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = getrandom(b + got, n - got, 0);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* Writes n bytes as 2n lower-case hex digits and a NUL into out. */
static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = 0;
}

int ng_http_token_new(char *buf, size_t len)
{
	uint8_t b[16];
	if (len < 2 * sizeof b + 1 || random_bytes(b, sizeof b) < 0)
		return -1;
	hex(b, sizeof b, buf);
	return 0;
}

int ng_http_session_init(ng_http_server *s)
{
	s->session[0] = 0;
	if (!s->token)
		return 0;
	uint8_t key[32], mac[SHA256_DIGEST_SIZE];
	if (random_bytes(key, sizeof key) < 0)
		return -1;
	static const char label[] = "nagare-session"; /* its NUL separates it from the token */
	struct hmac_sha256_ctx ctx;
	hmac_sha256_set_key(&ctx, sizeof key, key);
	hmac_sha256_update(&ctx, sizeof label, (const uint8_t *)label);
	hmac_sha256_update(&ctx, strlen(s->token), (const uint8_t *)s->token);
	hmac_sha256_digest(&ctx, sizeof mac, mac);
	_Static_assert(sizeof((ng_http_server *)0)->session == 2 * SHA256_DIGEST_SIZE + 1,
	               "the session holds the hex digest");
	hex(mac, sizeof mac, s->session);
	memset(key, 0, sizeof key);
	memset(&ctx, 0, sizeof ctx);
	return 0;
}

/* Appends s percent-encoded (RFC 3986 §2.1: all but the unreserved
 * characters, and '/' when keep_slash) to buf[len] at *at.  False when
 * it does not fit. */
static bool put_encoded(char *buf, size_t len, size_t *at, const char *s, bool keep_slash)
{
	static const char d[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		             (c >= '0' && c <= '9') || strchr("-._~", c) ||
		             (keep_slash && c == '/');
		if (*at + 4 > len)
			return false;
		if (plain && c) {
			buf[(*at)++] = (char)c;
		} else {
			buf[(*at)++] = '%';
			buf[(*at)++] = d[c >> 4];
			buf[(*at)++] = d[c & 15];
		}
	}
	buf[*at] = 0;
	return true;
}

struct rebuild {
	char *buf;
	size_t len, at;
	bool first, ok;
};

/* MHD_KeyValueIterator: appends one argument but the token. */
static enum MHD_Result put_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
	(void)kind;
	struct rebuild *r = cls;
	if (!strcmp(key, "token"))
		return MHD_YES;
	if (r->at + 2 > r->len) {
		r->ok = false;
		return MHD_NO;
	}
	r->buf[r->at++] = r->first ? '?' : '&';
	r->first = false;
	r->ok = r->ok && put_encoded(r->buf, r->len, &r->at, key, false);
	if (value && r->ok) {
		r->buf[r->at++] = '=';
		r->ok = put_encoded(r->buf, r->len, &r->at, value, false);
	}
	return r->ok ? MHD_YES : MHD_NO;
}

bool ng_http_url_without_token(void *conn, const char *path, char *buf, size_t len)
{
	struct rebuild r = {.buf = buf, .len = len, .first = true, .ok = true};
	if (!len || !put_encoded(buf, len, &r.at, path, true))
		return false;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, put_arg, &r);
	return r.ok;
}
