/* paimon.core, partition drop and expiry. */
#include "lpaimon.h"

void lp_open_partition(lua_State *L, int module_idx) {
    (void)L;
    (void)module_idx;
}
