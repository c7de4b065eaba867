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
		struct ng_svc_proto *t = !strcmp(e->s_proto, "tcp")    ? &s->tcp
		                         : !strcmp(e->s_proto, "udp")  ? &s->udp
		                         : !strcmp(e->s_proto, "sctp") ? &s->sctp
		                                                       : NULL;
		if (t && !t->name[port]) { /* the first (primary) name of a port wins */
			t->name[port] = ng_intern_cstr(e->s_name);
			if (t->name[port])
				t->named[port >> 6] |= UINT64_C(1) << (port & 63);
		}
	}
	endservent();
	pthread_mutex_unlock(&servent_lock);
	return s;
}

void ng_services_free(ng_services *s)
{
	free(s);
}
