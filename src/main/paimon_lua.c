/* paimon-lua: a Lua 5.4 interpreter with paimon and cjson preloaded.
 * Modelled on lua.c, reduced to what maintenance jobs need:
 *   paimon-lua [-e stat] [-l mod] [SCRIPT [args...]]
 * SCRIPT is looked up in the current directory first, then in the scripts
 * folder (the source tree's scripts/ or the installed one). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "paimon.h"

#ifndef PAIMON_LUA_DIR
#define PAIMON_LUA_DIR "/usr/local/share/lua/5.4"
#endif
#ifndef PAIMON_SCRIPTS_DIR
#define PAIMON_SCRIPTS_DIR "/usr/local/share/paimon-lua/scripts"
#endif
#ifndef PAIMON_POLICIES_DIR
#define PAIMON_POLICIES_DIR "/usr/local/share/paimon-lua/policies"
#endif

int luaopen_paimon_core(lua_State *L);

static const char *progname = "paimon-lua";
static char lua_dir[PATH_MAX + 32], scripts_dir[PATH_MAX + 32], policies_dir[PATH_MAX + 32];

static int is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Source tree (build/paimon-lua next to lua/ and scripts/) or installed. */
static void find_dirs(void) {
    char exe[PATH_MAX - 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    snprintf(lua_dir, sizeof lua_dir, "%s", PAIMON_LUA_DIR);
    snprintf(scripts_dir, sizeof scripts_dir, "%s", PAIMON_SCRIPTS_DIR);
    snprintf(policies_dir, sizeof policies_dir, "%s", PAIMON_POLICIES_DIR);
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';                       /* exe = directory of the binary */
    slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';                       /* exe = its parent: tree root or PREFIX */
    const char *root = exe[0] ? exe : "/";
    char probe[PATH_MAX + 64];
    snprintf(probe, sizeof probe, "%s/lua/paimon/init.lua", root);
    if (is_file(probe)) {                /* build/paimon-lua in a source tree */
        snprintf(lua_dir, sizeof lua_dir, "%s/lua", root);
        snprintf(scripts_dir, sizeof scripts_dir, "%s/scripts", root);
        snprintf(policies_dir, sizeof policies_dir, "%s/examples/policies", root);
        return;
    }
    /* installed as PREFIX/bin/paimon-lua, possibly moved (or under DESTDIR) */
    snprintf(probe, sizeof probe, "%s/share/lua/5.4/paimon/init.lua", root);
    if (is_file(probe)) snprintf(lua_dir, sizeof lua_dir, "%s/share/lua/5.4", root);
    snprintf(probe, sizeof probe, "%s/share/paimon-lua/scripts/inspect.lua", root);
    if (is_file(probe)) snprintf(scripts_dir, sizeof scripts_dir, "%s/share/paimon-lua/scripts", root);
    snprintf(probe, sizeof probe, "%s/share/paimon-lua/policies", root);
    struct stat st;
    if (stat(probe, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(policies_dir, sizeof policies_dir, "%s/share/paimon-lua/policies", root);
}

static void print_usage(FILE *f) {
    fprintf(f,
            "usage: %s [options] [SCRIPT [args...]]\n"
            "  -e STAT     execute string STAT\n"
            "  -l MOD      require library MOD\n"
            "  -v, --version  show version\n"
            "  -h, --help     show this help and the bundled scripts\n"
            "  -           execute stdin\n"
            "SCRIPT is searched in the current directory, then in %s\n",
            progname, scripts_dir);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.lua in the scripts folder, sorted. */
static void list_scripts(FILE *f) {
    fprintf(f, "bundled scripts in %s (run with `%s SCRIPT --help`):\n", scripts_dir, progname);
    DIR *d = opendir(scripts_dir);
    if (!d) { fprintf(f, "  (none: %s)\n", strerror(errno)); return; }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len <= 4 || de->d_name[0] == '.' || strcmp(de->d_name + len - 4, ".lua")) continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *names);
            if (!nn) break;
            names = nn;
        }
        if (!(names[n] = malloc(len + 1))) break;
        memcpy(names[n++], de->d_name, len + 1);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %s\n", names[i]);
        free(names[i]);
    }
    free(names);
}

static int msghandler(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

static int docall(lua_State *L, int narg, int nres) {
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    int status = lua_pcall(L, narg, nres, base);
    lua_remove(L, base);
    return status;
}

static int report(lua_State *L, int status) {
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fprintf(stderr, "%s: %s\n", progname, msg ? msg : "(error)");
        lua_pop(L, 1);
    }
    return status;
}

static void setup_paths(lua_State *L) {
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "path");
    lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", lua_dir, lua_dir, lua_tostring(L, -1));
    lua_setfield(L, -3, "path");
    lua_pop(L, 1);
    /* preload the core module so require "paimon.core" needs no .so */
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, luaopen_paimon_core);
    lua_setfield(L, -2, "paimon.core");
    lua_pop(L, 2);
}

static int preload(lua_State *L, const char *mod, const char *global) {
    lua_getglobal(L, "require");
    lua_pushstring(L, mod);
    int status = docall(L, 1, 1);
    if (status != LUA_OK) return report(L, status);
    if (global) lua_setglobal(L, global);
    else lua_pop(L, 1);
    return LUA_OK;
}

static void create_arg_table(lua_State *L, char **argv, int argc, int script) {
    lua_createtable(L, argc - script, script + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

static const char *resolve_script(const char *name, char *buf, size_t n) {
    if (!strcmp(name, "-")) return NULL;
    if (is_file(name) || strchr(name, '/')) return name;
    snprintf(buf, n, "%s/%s", scripts_dir, name);
    if (is_file(buf)) return buf;
    return name;    /* let luaL_loadfile report it */
}

static int run_script(lua_State *L, char **argv, int argc, int script) {
    char buf[PATH_MAX * 2];
    const char *path = resolve_script(argv[script], buf, sizeof buf);
    int status = luaL_loadfile(L, path);
    if (status != LUA_OK) {
        /* exit codes a caller can trust: a script that is not there is a
         * usage error (2), one that does not compile is a failure (1); the
         * raw Lua status (6, 3) would read as something else, 3 as conflict */
        report(L, status);
        return status == LUA_ERRFILE ? 2 : 1;
    }
    int nargs = argc - script - 1;
    luaL_checkstack(L, nargs + 3, "too many arguments to script");
    for (int i = script + 1; i < argc; i++) lua_pushstring(L, argv[i]);
    status = docall(L, nargs, 1);
    if (status != LUA_OK) { report(L, status); return 1; }
    /* a script may return its exit code */
    int code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    return code;
}

struct ctx { int argc; char **argv; int exit_code; };

static int pmain(lua_State *L) {
    struct ctx *c = lua_touserdata(L, 1);
    int argc = c->argc;
    char **argv = c->argv;
    luaL_openlibs(L);
    setup_paths(L);
    if (preload(L, "paimon", NULL) != LUA_OK) { c->exit_code = 1; return 0; }
    /* where `--policy NAME.lua` finds the bundled policies (paimon.maint) */
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "loaded");
    lua_getfield(L, -1, "paimon");
    if (lua_istable(L, -1)) {
        lua_pushstring(L, policies_dir);
        lua_setfield(L, -2, "policies_dir");
    }
    lua_pop(L, 3);
    if (preload(L, "cjson", NULL) != LUA_OK) { c->exit_code = 1; return 0; }
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !strcmp(a, "-")) break;
        if (!strcmp(a, "--")) { i++; break; }
        if (!strcmp(a, "-v") || !strcmp(a, "--version")) {
            printf("paimon-lua %s (%s)\n", paimon_version(), LUA_RELEASE);
            c->exit_code = 0;
            return 0;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            print_usage(stdout);
            list_scripts(stdout);
            c->exit_code = 0;
            return 0;
        }
        if ((!strcmp(a, "-e") || !strcmp(a, "-l")) && i + 1 < argc) {
            int status;
            if (a[1] == 'e') {
                status = luaL_loadbuffer(L, argv[i + 1], strlen(argv[i + 1]), "=(command line)");
                if (status == LUA_OK) status = docall(L, 0, 0);
            } else {
                status = preload(L, argv[i + 1], argv[i + 1]);
            }
            if (report(L, status) != LUA_OK) { c->exit_code = 1; return 0; }
            i++;
            continue;
        }
        fprintf(stderr, "%s: unrecognized option '%s'\n", progname, a);
        print_usage(stderr);
        c->exit_code = 2;
        return 0;
    }
    if (i >= argc) {
        if (argc > 1) { c->exit_code = 0; return 0; }   /* only -e / -l */
        if (isatty(0)) { print_usage(stdout); list_scripts(stdout); c->exit_code = 0; return 0; }
    }
    create_arg_table(L, argv, argc, i < argc ? i : argc - 1);
    if (i >= argc || !strcmp(argv[i], "-")) {
        int status = luaL_loadfile(L, NULL);
        if (status == LUA_OK) status = docall(L, 0, 0);
        c->exit_code = report(L, status) == LUA_OK ? 0 : 1;
        return 0;
    }
    c->exit_code = run_script(L, argv, argc, i);
    return 0;
}

/* SIGINT/SIGTERM: while an interruptible operation runs (expiration,
 * orphan cleaning), the first one asks it to stop at its next consistent
 * point (it then fails with "interrupted", exit 130); anything else, or a
 * second signal, ends the process at once as before. */
static volatile sig_atomic_t stop_asked;

static void on_stop_signal(int sig) {
    if (!stop_asked && paimon_interruptible()) {
        static const char msg[] = "\ninterrupted: stopping at the next consistent point (again to stop at once)\n";
        stop_asked = 1;
        paimon_interrupt();
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_stop_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int i = 0; i < 2; i++) {
        int sig = i ? SIGTERM : SIGINT;
        struct sigaction old;
        /* a signal ignored by whoever started us (nohup, cron) stays ignored */
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(sig, &sa, NULL);
    }
}

int main(int argc, char **argv) {
    if (argv[0] && argv[0][0]) {
        const char *b = strrchr(argv[0], '/');
        progname = b ? b + 1 : argv[0];
    }
    find_dirs();
    catch_stop_signals();
    lua_State *L = luaL_newstate();
    if (!L) { fprintf(stderr, "%s: cannot create Lua state: not enough memory\n", progname); return 1; }
    struct ctx c = {argc, argv, 0};
    lua_pushcfunction(L, pmain);
    lua_pushlightuserdata(L, &c);
    int status = lua_pcall(L, 1, 0, 0);
    if (status != LUA_OK) { report(L, status); c.exit_code = 1; }
    lua_close(L);
    return c.exit_code;
}
