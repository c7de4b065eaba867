/* Compiled with decode/'s include root by ctest (layering_up), which
 * expects the compiler to fail: decode/ comes before store/ in the data
 * path and must not include it (docs/architecture.md, "Layers"). */
#include "store/store.h"

int ng_layering_up(void);
int ng_layering_up(void)
{
	return 0;
}
