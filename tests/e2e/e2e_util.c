/*
 * e2e_util.c — helpers shared by the tests that run nagare as a process
 * (e2e_util.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "e2e_util.h"

void eu_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int rm_one(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb, (void)type, (void)ftw;
	return remove(p);
}

void eu_rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *eu_bin_or_skip(void)
{
	const char *bin = getenv("NG_BIN");
	if (!bin || access(bin, X_OK) != 0) {
		print_message("skipped: NG_BIN (the nagare binary) not set\n");
		skip();
	}
	return bin;
}

uint16_t eu_free_port(int type)
{
	int fd = socket(AF_INET, type, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	getsockname(fd, (struct sockaddr *)&a, &al);
	close(fd);
	return ntohs(a.sin_port);
}

void eu_send_udp(uint32_t src, uint16_t port, const void *p, size_t len)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	if (src) {
		struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(src)};
		assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof me), 0);
	}
	struct sockaddr_in to = {.sin_family = AF_INET,
	                         .sin_port = htons(port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(sendto(fd, p, len, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)len);
	close(fd);
}

char *eu_slurp(const char *path, size_t *len)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

bool eu_wait_log(const char *log, pid_t pid, const char *what, int ms)
{
	for (int t = 0; t < ms; t += 50) {
		char *s = eu_slurp(log, NULL);
		if (s && strstr(s, what))
			return true;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return false;
		eu_sleep_ms(50);
	}
	return false;
}

pid_t eu_spawn(const char *log, char *const argv[])
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		dup2(fd, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

int eu_stop(pid_t pid)
{
	int status;
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int eu_run(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, len - 1, p);
	out[n] = 0;
	return WEXITSTATUS(pclose(p));
}

static const char *count_suffix;
static size_t count_n;

static int count_one(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb, (void)ftw;
	size_t l = strlen(p), s = strlen(count_suffix);
	count_n += type == FTW_F && l > s && strcmp(p + l - s, count_suffix) == 0;
	return 0;
}

size_t eu_count_suffix(const char *dir, const char *suffix)
{
	count_suffix = suffix;
	count_n = 0;
	nftw(dir, count_one, 16, FTW_PHYS);
	return count_n;
}

void eu_nth_file(const char *dir, const char *pattern, size_t n, char *path, size_t len)
{
	char cmd[4400];
	snprintf(cmd, sizeof cmd, "find '%s' -name '%s' | sort | sed -n %zup", dir, pattern, n + 1);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *got = fgets(path, (int)len, p);
	pclose(p);
	assert_non_null(got);
	path[strcspn(path, "\n")] = 0;
}

const char *eu_verdict(const char *path, int *lines)
{
	char vp[4300];
	const char *name = strrchr(path, '/') + 1, *verdict = "";
	snprintf(vp, sizeof vp, "%.*s/checked", (int)(name - 1 - path), path);
	struct stat sb;
	const bool present = stat(path, &sb) == 0;
	const unsigned long long mt = present
	                                  ? (unsigned long long)sb.st_mtim.tv_sec * 1000000000ull +
	                                        (unsigned long long)sb.st_mtim.tv_nsec
	                                  : 0;
	int n = 0;
	char *text = eu_slurp(vp, NULL);
	for (char *l = text, *nl; l && *l; l = nl ? nl + 1 : l + strlen(l)) {
		nl = strchr(l, '\n');
		char nm[256], v[16];
		unsigned long long ino, size, m;
		if (sscanf(l, "%255s %llu %llu %llu %15s", nm, &ino, &size, &m, v) != 5 ||
		    strcmp(nm, name))
			continue;
		n++;
		const bool same = present && ino == (unsigned long long)sb.st_ino &&
		                  size == (unsigned long long)sb.st_size && m == mt;
		verdict = !same                   ? ""
		          : !strcmp(v, "ok")      ? "ok"
		          : !strcmp(v, "damaged") ? "damaged"
		                                  : "";
	}
	if (lines)
		*lines = n;
	return verdict;
}

void eu_damage_row(ng_flow *r, size_t k)
{
	memset(r, 0, sizeof *r);
	r->flow_start = UINT64_C(1764460800000) + k * 10; /* 2025-11-30T00:00:00Z */
	r->flow_end = r->flow_start + k % 5000;
	r->time_received = r->flow_end + 100;
	r->src_addr[10] = r->src_addr[11] = 0xff;
	r->src_addr[12] = 10;
	r->src_addr[14] = (uint8_t)(k % 200);
	r->src_addr[15] = (uint8_t)(k % 7);
	memcpy(r->dst_addr, r->src_addr, 16);
	r->dst_addr[12] = 192;
	r->src_port = (uint16_t)(1024 + k % 3000);
	r->dst_port = (uint16_t)(k % 50);
	r->protocol = k % 3 ? 6 : 17;
	r->tcp_flags = (uint8_t)(k * 2654435761u >> 24);
	r->ip_version = 4;
	r->packets = r->packets_raw = 1 + k % 13;
	r->bytes = r->bytes_raw = 40 + (k * 7919) % 100000;
	r->sampling_rate = 1;
}
