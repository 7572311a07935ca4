/* Table discovery in a warehouse (pm_warehouse.h). */
#include "pm_warehouse.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

const char *pm_wh_kind_name(pm_wh_kind k) {
    return k == PM_WH_TABLE ? "table" : k == PM_WH_DATABASE ? "database" : "warehouse";
}

void pm_table_refs_free(pm_table_ref *v, size_t n) {
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].database);
        free(v[i].table);
        free(v[i].path);
    }
    free(v);
}

static int is_schema_file(const char *name) {
    if (strncmp(name, "schema-", 7) || !name[7]) return 0;
    for (const char *p = name + 7; *p; p++) if (*p < '0' || *p > '9') return 0;
    return 1;
}

/* dir holds schema/schema-N (a listing of dir/schema). */
static int is_table_dir(pm_fileio *io, const char *dir, int *yes, pm_err *e) {
    *yes = 0;
    char *sd = pm_path_join(dir, "schema");
    if (!sd) return pm_nomem(e);
    pm_dirent *d = NULL;
    size_t n = 0;
    int rc = pm_io_list(io, sd, &d, &n, e);
    free(sd);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (rc) return rc;
    for (size_t i = 0; i < n && !*yes; i++) *yes = !d[i].is_dir && is_schema_file(d[i].name);
    pm_dirents_free(d, n);
    return PAIMON_OK;
}

static int matches(const char *pattern, const char *name) {
    return !pattern || !*pattern || fnmatch(pattern, name, 0) == 0;
}

typedef struct refs { pm_table_ref *v; size_t n, cap; } refs;

static int add_ref(refs *r, const char *db, const char *table, const char *path, pm_err *e) {
    if (r->n == r->cap) {
        size_t c = r->cap ? r->cap * 2 : 8;
        pm_table_ref *nv = realloc(r->v, c * sizeof *nv);
        if (!nv) return pm_nomem(e);
        r->v = nv;
        r->cap = c;
    }
    pm_table_ref *t = &r->v[r->n];
    t->database = pm_strdup(db);
    t->table = pm_strdup(table);
    t->path = pm_strdup(path);
    r->n++;
    return t->database && t->table && t->path ? PAIMON_OK : pm_nomem(e);
}

/* The last path component of uri (trailing slashes dropped), malloc'd. */
static char *base_name(const char *uri, size_t *dir_len) {
    size_t l = strlen(uri);
    while (l > 1 && uri[l - 1] == '/') l--;
    size_t s = l;
    while (s > 0 && uri[s - 1] != '/') s--;
    if (dir_len) *dir_len = s ? s - 1 : 0;
    return pm_strndup(uri + s, l - s);
}

static int db_name_of(const char *dirname, char **out, pm_err *e) {
    size_t l = strlen(dirname);
    *out = l > 3 && !strcmp(dirname + l - 3, ".db") ? pm_strndup(dirname, l - 3) : NULL;
    return *out || !(l > 3 && !strcmp(dirname + l - 3, ".db")) ? PAIMON_OK : pm_nomem(e);
}

/* The tables of database directory dbdir (named db). */
static int database_tables(pm_fileio *io, const char *dbdir, const char *db, const char *table_pattern, refs *r,
                           pm_err *e) {
    pm_dirent *d = NULL;
    size_t n = 0;
    int rc = pm_io_list(io, dbdir, &d, &n, e);
    if (rc) return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!d[i].is_dir || d[i].is_link || d[i].name[0] == '.' || !matches(table_pattern, d[i].name)) continue;
        char *p = pm_path_join(dbdir, d[i].name);
        int yes = 0;
        rc = p ? is_table_dir(io, p, &yes, e) : pm_nomem(e);
        if (!rc && yes) rc = add_ref(r, db, d[i].name, p, e);
        free(p);
    }
    pm_dirents_free(d, n);
    return rc;
}

static int cmp_ref(const void *a, const void *b) {
    const pm_table_ref *x = a, *y = b;
    int c = strcmp(x->database, y->database);
    return c ? c : strcmp(x->table, y->table);
}

int pm_warehouse_tables(pm_fileio *io, const char *uri, const char *db_pattern, const char *table_pattern,
                        pm_table_ref **out, size_t *n, pm_wh_kind *kind, pm_err *e) {
    *out = NULL;
    *n = 0;
    refs r = {0};
    size_t dl = 0;
    char *base = base_name(uri, &dl), *parent = pm_strndup(uri, dl), *db = NULL, *pdb = NULL;
    int yes = 0, rc = base && parent ? PAIMON_OK : pm_nomem(e);
    if (!rc) rc = is_table_dir(io, uri, &yes, e);
    if (!rc && yes) {
        *kind = PM_WH_TABLE;
        char *pbase = base_name(parent, NULL);
        rc = pbase ? db_name_of(pbase, &pdb, e) : pm_nomem(e);
        free(pbase);
        if (!rc && matches(db_pattern, pdb ? pdb : "") && matches(table_pattern, base))
            rc = add_ref(&r, pdb ? pdb : "", base, uri, e);
    } else if (!rc && !(rc = db_name_of(base, &db, e)) && db) {
        *kind = PM_WH_DATABASE;
        if (matches(db_pattern, db)) rc = database_tables(io, uri, db, table_pattern, &r, e);
    } else if (!rc) {
        *kind = PM_WH_WAREHOUSE;
        pm_dirent *d = NULL;
        size_t nd = 0;
        rc = pm_io_list(io, uri, &d, &nd, e);
        for (size_t i = 0; i < nd && !rc; i++) {
            if (!d[i].is_dir || d[i].is_link || d[i].name[0] == '.') continue;
            char *name = NULL;
            if ((rc = db_name_of(d[i].name, &name, e)) || !name) continue;
            if (matches(db_pattern, name)) {
                char *p = pm_path_join(uri, d[i].name);
                rc = p ? database_tables(io, p, name, table_pattern, &r, e) : pm_nomem(e);
                free(p);
            }
            free(name);
        }
        pm_dirents_free(d, nd);
    }
    free(base);
    free(parent);
    free(db);
    free(pdb);
    if (rc) {
        pm_table_refs_free(r.v, r.n);
        return rc;
    }
    if (r.n > 1) qsort(r.v, r.n, sizeof *r.v, cmp_ref);
    *out = r.v;
    *n = r.n;
    return PAIMON_OK;
}
