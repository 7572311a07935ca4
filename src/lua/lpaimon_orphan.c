/* paimon.core, orphan-file cleaning. */
#include "lpaimon.h"

void lp_open_orphan(lua_State *L, int module_idx) {
    (void)L;
    (void)module_idx;
}
