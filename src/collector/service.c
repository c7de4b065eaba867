/*
 * service.c — what systemd is told about the running collector
 * (sd_notify(3), the package's unit: Type=notify, WatchdogSec=).
 *
 *   READY=1      once the sockets are bound, the store is open and the
 *                flush thread runs (ng_collector_run, just before the
 *                receive loop): `systemctl start` returns then, and a
 *                unit ordered after nagare finds the ports taken.
 *   STATUS=      the addresses and the store, shown by `systemctl status`.
 *   WATCHDOG=1   from the receive loop, once a second, and only while the
 *                flush thread has been round its loop (flush_beat_ms)
 *                within half the watchdog interval: a receive loop that
 *                stopped, or a flush thread stuck (a hung disk), stops
 *                the keep-alives and systemd restarts the service
 *                (Restart=on-failure) after WatchdogSec.
 *   RELOADING=1  when the enrichment is being rebuilt (SIGHUP, which is
 *                the unit's ExecReload, or a changed file), READY=1 again
 *                when the rebuild is over, whether it worked or not.
 *   STOPPING=1   when the receive loop has ended, before the final flush.
 *
 * Without NOTIFY_SOCKET (not under systemd) every call does nothing;
 * built without libsystemd (NG_HAVE_SYSTEMD undefined) likewise.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#include "collector/collector_int.h"
#include "core/log.h"
#include "core/timefmt.h"

#ifdef NG_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#else
static int sd_notify(int unset, const char *state)
{
	(void)unset, (void)state;
	return 0;
}
static int sd_watchdog_enabled(int unset, uint64_t *usec)
{
	(void)unset, (void)usec;
	return 0;
}
#endif

void ng_coll_service_ready(ng_collector *c, const char *status)
{
	uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec >= 2000000)
		c->watchdog_ms = usec / 1000;
	atomic_store(&c->flush_beat_ms, ng_now_ms());
	char msg[1100];
	snprintf(msg, sizeof msg, "READY=1\nSTATUS=%s", status);
	if (sd_notify(0, msg) > 0)
		ng_info("told systemd: ready%s", c->watchdog_ms ? ", watchdog keep-alives on" : "");
}

void ng_coll_service_alive(ng_collector *c, uint64_t now)
{
	if (!c->watchdog_ms)
		return;
	uint64_t beat = atomic_load(&c->flush_beat_ms);
	if (now - beat <= c->watchdog_ms / 2) {
		sd_notify(0, "WATCHDOG=1");
		c->flush_stuck_logged = false;
	} else if (!c->flush_stuck_logged) {
		ng_error("the flush thread has not come round for %" PRIu64 " ms: no more "
		         "watchdog keep-alives (systemd restarts the service)",
		         now - beat);
		c->flush_stuck_logged = true;
	}
}

void ng_coll_service_reloading(bool done)
{
	sd_notify(0, done ? "READY=1" : "RELOADING=1");
}

void ng_coll_service_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}
