/* Compiled with decode/'s include root by ctest (layering_down): a layer
 * may include the layers it uses (CMakeLists.txt, NG_USES_decode). */
#include "core/flow.h"
#include "decode/decoder.h"

int ng_layering_down(void);
int ng_layering_down(void)
{
	return (int)sizeof(ng_flow);
}
