/*
 * services.c — service names of server ports, from the system's services
 * database (/etc/services via getservent, read once when the table set is
 * built: getservbyport per record would parse the file each time).
 */
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "enrich/enrich_int.h"

struct ng_services {
	uint32_t tcp[65536], udp[65536], sctp[65536]; /* interned names, 0 none */
};

/* getservent is not thread-safe; only table builds call it. */
static pthread_mutex_t servent_lock = PTHREAD_MUTEX_INITIALIZER;

ng_services *ng_services_new(void)
{
	ng_services *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	pthread_mutex_lock(&servent_lock);
	setservent(1);
	struct servent *e;
	while ((e = getservent())) {
		uint16_t port = ntohs((uint16_t)e->s_port);
		uint32_t *tab = !strcmp(e->s_proto, "tcp")    ? s->tcp
		                : !strcmp(e->s_proto, "udp")  ? s->udp
		                : !strcmp(e->s_proto, "sctp") ? s->sctp
		                                              : NULL;
		if (tab && !tab[port]) /* the first (primary) name of a port wins */
			tab[port] = ng_intern_cstr(e->s_name);
	}
	endservent();
	pthread_mutex_unlock(&servent_lock);
	return s;
}

uint32_t ng_services_lookup(const ng_services *s, uint8_t proto, uint16_t sport, uint16_t dport)
{
	const uint32_t *tab = proto == 6     ? s->tcp
	                      : proto == 17  ? s->udp
	                      : proto == 132 ? s->sctp
	                                     : NULL;
	if (!tab)
		return 0;
	uint32_t a = tab[sport], b = tab[dport];
	if (a && b)
		return sport < dport ? a : b;
	return a ? a : b;
}

void ng_services_free(ng_services *s)
{
	free(s);
}
