/*
 * samplers.c — a data record's sampler ID matched against the sampler
 * options of its exporter's other observation domains (issue 18 part 3,
 * docs/exporters.md "Sampler options under another source ID").
 *
 * RFC 3954 §6.2 and RFC 7011 §4 scope options data to the observation
 * domain (v9 source ID) it is sent under, and record.c looks a record's
 * sampler ID (IE 48 samplerId / 302 selectorId) up in its own domain's
 * table first.  Cisco Catalyst 9300 (IOS XE, "option sampler-table")
 * sends the sampler table under one source ID and the monitors' data
 * under others (akvorado issue 89): its own domain never learns the rate.
 * The sampler ID names one sampler of the device, so when the record's
 * own domain has no entry for it the other domains of the same exporter
 * (the same address: the same device) are asked.  Their answer is taken
 * only when it is unambiguous: every other domain that has that ID gives
 * the same rate.  Two domains that disagree say the IDs are per domain
 * there, and neither is used.  A record whose sampler ID no table gives
 * a rate for, and which has no other rate, is counted in its domain's
 * sampler_unmatched (record.c).
 *
 * This runs only for a record whose sampler ID its own domain lacks, not
 * on the common path.  The walk looks at the exporter's
 * NG_SAMPLER_PEER_DOMAINS most recently seen domains at most, so a sender
 * that makes many domains cannot make every record cost a scan of all of
 * them (limits.domains_per_exporter allows 256).
 */
#include "decode/decode_int.h"

/* Domains of the exporter looked at for a sampler ID, most recently seen
 * first. */
#define NG_SAMPLER_PEER_DOMAINS 16

uint32_t ng_sampler_rate_elsewhere(struct ng_domain *dom, uint64_t id)
{
	uint32_t rate = 0;
	unsigned seen = 0;
	const struct ng_lru *h = &dom->ex->doms;
	for (const struct ng_lru *n = h->next; n != h && seen < NG_SAMPLER_PEER_DOMAINS;
	     n = n->next, seen++) {
		const struct ng_domain *o = ng_lru_entry(n, const struct ng_domain, ex_lru);
		uint32_t r = o == dom ? 0 : ng_sampler_own_rate(o, id);
		if (!r)
			continue;
		if (rate && r != rate) {
			rate = 0; /* two domains disagree: the IDs are per domain */
			break;
		}
		rate = r;
	}
	if (rate)
		dom->st.sampler_other_domain++;
	return rate;
}
