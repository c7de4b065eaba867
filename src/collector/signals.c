/*
 * signals.c — how the collector is told to stop or to reload.
 *
 *   SIGTERM, SIGINT  a clean stop: the receive loop ends, the sockets are
 *                    drained, everything appended is flushed and the state
 *                    saved (collector.c).  The handler then steps aside, so
 *                    a second one ends the process at once (an impatient
 *                    ^C^C).
 *   SIGHUP           the enrichment tables are rebuilt and swapped in
 *                    without stopping ingest (enrich/reload.c).
 *   SIGPIPE          ignored: a closed NDJSON pipe is a write error, logged.
 *
 * A handler only sets a flag (sig_atomic_t).  The stop handler has no
 * SA_RESTART, so the signal interrupts the receive thread's epoll_wait
 * and the loop sees the flag at once; the other threads block the stop
 * signals (flush.c, live.c, maint.c, enrich/reload.c), so the kernel
 * delivers them to the receive thread.
 */
#include <signal.h>

#include "collector/collector_int.h"

volatile sig_atomic_t ng_coll_stop_requested;
volatile sig_atomic_t ng_coll_hup_requested;

static void on_hup_signal(int sig)
{
	(void)sig;
	ng_coll_hup_requested = 1;
}

/* The first SIGTERM/SIGINT asks for a clean stop; the handler then steps
 * aside, so a second one ends the process at once. */
static void on_stop_signal(int sig)
{
	ng_coll_stop_requested = 1;
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigaction(sig, &dfl, NULL);
}

void ng_coll_signals_install(void)
{
	ng_coll_stop_requested = 0;
	struct sigaction sa = {0};
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: the signal must interrupt epoll_wait */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_hup_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
