/* paimon.core, maintenance: snapshot expiration, partition drop/expiry,
 * orphan-file cleaning. */
#include "lpaimon.h"

void lp_open_maint(lua_State *L, int module_idx) {
    (void)L;
    (void)module_idx;
}
