/* paimon.core, write side: table creation, writers and commits. */
#include "lpaimon.h"

void lp_open_write(lua_State *L, int module_idx) {
    (void)L;
    (void)module_idx;
}
