/* filter_reverse.c — a filter turned to the other direction (filter.h). */
#include "query/filter_int.h"

/* f's partner (core/field.h), or f itself when it has no side. */
static int other_side(int f)
{
	if (f < 0)
		return f;
	int p = ng_field_partner((enum ng_field_id)f);
	return p >= 0 ? p : f;
}

static void reverse_node(node *n)
{
	if (!n)
		return;
	reverse_node(n->l);
	reverse_node(n->r);
	n->f1 = other_side(n->f1);
	n->f2 = other_side(n->f2);
}

void ng_filter_reverse(ng_filter *f)
{
	if (!f)
		return;
	reverse_node(f->root);
	ng_colset c = {{0}};
	for (unsigned i = 0; i < NG_FIELD_COUNT; i++)
		if (ng_colset_has(f->columns, i))
			ng_colset_add(&c, (unsigned)other_side((int)i));
	f->columns = c;
}
