/* paimon.h: creating tables, writing rows and committing, over pm_write.
 * Errors go to the table's message (paimon_table_errmsg). */
#include <stdlib.h>
#include <string.h>

#include "pm_alter.h"
#include "pm_ops.h"
#include "pm_upkeep.h"
#include "pm_write.h"

int paimon_table_create_v2(const char *uri, const paimon_table_spec *spec, const char *const *options,
                           paimon_table **out, char **errmsg) {
    pm_err e = {0};
    if (errmsg) *errmsg = NULL;
    if (!out) return PAIMON_MISUSE;
    *out = NULL;
    int rc = uri ? pm_create_from_spec(uri, spec, options, &e) : pm_fail(&e, PAIMON_MISUSE, "table path is NULL");
    if (!rc) rc = pm_table_open_opts(uri, NULL, options, out, &e);
    if (rc && errmsg) *errmsg = pm_strdup(e.msg);
    return rc;
}

int paimon_table_create(const char *path, const paimon_table_spec *spec, paimon_table **out, char **errmsg) {
    return paimon_table_create_v2(path, spec, NULL, out, errmsg);
}

int paimon_writer_open(paimon_table *t, paimon_writer **out) {
    if (!t || !out) return PAIMON_MISUSE;
    return pm_writer_open(t, out, &t->err);
}

int paimon_writer_set(paimon_writer *w, size_t column, const paimon_value *v) {
    if (!w || !v) return PAIMON_MISUSE;
    return pm_writer_set(w, column, v, &w->t->err);
}

int paimon_writer_write_row(paimon_writer *w) {
    if (!w) return PAIMON_MISUSE;
    return pm_writer_write_row(w, &w->t->err);
}

int paimon_writer_write(paimon_writer *w, const paimon_value *row, size_t n) {
    if (!w || (n && !row)) return PAIMON_MISUSE;
    if (n != w->n)
        return pm_fail(&w->t->err, PAIMON_MISUSE, "a row of %zu values for a table of %zu columns", n, w->n);
    for (size_t i = 0; i < n; i++) {
        int rc = pm_writer_set(w, i, &row[i], &w->t->err);
        if (rc) { pm_writer_clear_row(w); return rc; }   /* no half row for the next call */
    }
    return pm_writer_write_row(w, &w->t->err);
}

int64_t paimon_writer_rows(const paimon_writer *w) { return w ? w->rows : 0; }

void paimon_writer_close(paimon_writer *w) { pm_writer_free(w); }

/* Messages own deep copies of the writer's entries (which live only until
 * its next prepare). */
struct paimon_messages {
    pm_arena *a;
    pm_manifest_entry *ents;
    char **paths;
    size_t n;
};

void paimon_messages_free(paimon_messages *m) {
    if (!m) return;
    if (m->paths) for (size_t i = 0; i < m->n; i++) free(m->paths[i]);
    free(m->paths);
    pm_arena_free(m->a);
    free(m);
}

int paimon_writer_prepare_commit(paimon_writer *w, paimon_messages **out) {
    if (!w || !out) return PAIMON_MISUSE;
    *out = NULL;
    pm_err *e = &w->t->err;
    const pm_manifest_entry *ents;
    size_t n;
    int rc = pm_append_writer_prepare(w->w, &ents, &n, e);
    if (rc) return rc;
    paimon_messages *m = calloc(1, sizeof *m);
    if (!m || !(m->a = pm_arena_new(16384)) || !(m->ents = pm_arena_alloc(m->a, (n ? n : 1) * sizeof *m->ents)) ||
        !(m->paths = calloc(n ? n : 1, sizeof *m->paths))) {
        paimon_messages_free(m);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        pm_buf b = {0};
        if (pm_manifest_entry_copy(m->a, &ents[i], &m->ents[i])) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
        else if (!(rc = pm_table_file_path(w->t, &ents[i], &b, e)) && !(m->paths[i] = pm_strdup((const char *)b.data)))
            rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
        pm_buf_free(&b);
        m->n = i + 1;
        if (rc) { paimon_messages_free(m); return rc; }
    }
    m->n = n;
    *out = m;
    return PAIMON_OK;
}

size_t paimon_messages_count(const paimon_messages *m) { return m ? m->n : 0; }

int64_t paimon_messages_row_count(const paimon_messages *m) {
    int64_t rows = 0;
    for (size_t i = 0; m && i < m->n; i++)
        if (m->ents[i].kind == PM_FILE_ADD) rows += m->ents[i].file.row_count;
    return rows;
}

const char *paimon_messages_file_path(const paimon_messages *m, size_t i) {
    return m && i < m->n ? m->paths[i] : NULL;
}

struct paimon_commit {
    paimon_table *t;
    pm_commit_opts o;
    char *user;
    pm_commit_history h;
    int64_t partition_last_check;   /* Java's PartitionExpire.lastCheck: the committer's creation */
    paimon_result *upkeep;          /* the last commit's upkeep */
};

int paimon_commit_open(paimon_table *t, const char *commit_user, paimon_commit **out) {
    if (!t || !out) return PAIMON_MISUSE;
    *out = NULL;
    if (commit_user && !*commit_user) return pm_fail(&t->err, PAIMON_MISUSE, "commit_user must be a non-empty string");
    paimon_commit *c = calloc(1, sizeof *c);
    char uuid[37];
    if (!commit_user) { pm_uuid4(uuid); commit_user = uuid; }
    if (!c || !(c->user = pm_strdup(commit_user))) { free(c); return pm_fail(&t->err, PAIMON_NOMEM, "out of memory"); }
    c->t = t;
    pm_commit_opts_from_table(t, &c->o);
    c->o.commit_user = c->user;
    c->partition_last_check = pm_now_millis();
    *out = c;
    return PAIMON_OK;
}

const char *paimon_commit_user(const paimon_commit *c) { return c ? c->user : NULL; }

int paimon_commit_commit(paimon_commit *c, const paimon_messages *m, int64_t identifier, const char *kind,
                         int64_t *snapshot_id, int *created) {
    if (!c || !m) return PAIMON_MISUSE;
    pm_commit_opts o = c->o;
    o.identifier = identifier;
    if (kind) o.kind = kind;
    int64_t id = 0;
    int made = 0;
    int rc = pm_write_commit(c->t, m->ents, m->n, &o, 0, &c->h, &id, &made, &c->t->err);
    if (snapshot_id) *snapshot_id = id;
    if (created) *created = made;
    if (rc) return rc;
    /* Java's TableCommitImpl: upkeep after every commit (none with
     * write-only=true). Whatever happens to it, the commit stands: its
     * failures are in paimon_commit_upkeep's result. */
    paimon_result_free(c->upkeep);
    c->upkeep = NULL;
    pm_upkeep_opts u;
    memset(&u, 0, sizeof u);
    u.partition_last_check_ms = &c->partition_last_check;
    u.commit_identifier = identifier;
    pm_result *tree = NULL;
    pm_err ue = {0};
    if (!pm_upkeep_run(c->t, &u, &tree, &ue)) pm_api_result_wrap(tree, &c->upkeep, &ue);
    return PAIMON_OK;
}

const paimon_result *paimon_commit_upkeep(const paimon_commit *c) { return c ? c->upkeep : NULL; }

int paimon_commit_abort(paimon_commit *c, const paimon_messages *m, int64_t *removed, int64_t *kept) {
    if (!c || !m) return PAIMON_MISUSE;
    int64_t r = 0, k = 0;
    int rc = pm_write_abort(c->t, &c->h, m->ents, m->n, &r, &k, &c->t->err);
    if (removed) *removed = r;
    if (kept) *kept = k;
    return rc;
}

int paimon_commit_filter_committed(paimon_commit *c, const int64_t *identifiers, size_t n, uint8_t *committed) {
    if (!c || (n && (!identifiers || !committed))) return PAIMON_MISUSE;
    int64_t last = 0, last_snapshot = 0;
    int rc = pm_commit_last_of_user(c->t, c->user, &last, &last_snapshot, &c->t->err);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) committed[i] = last_snapshot && identifiers[i] <= last;
    return PAIMON_OK;
}

void paimon_commit_close(paimon_commit *c) {
    if (!c) return;
    free(c->user);
    paimon_result_free(c->upkeep);
    free(c);
}

int paimon_alter_table(paimon_table *t, const paimon_schema_change *changes, size_t n, int dry_run,
                       int64_t *schema_id, char **schema_json) {
    if (schema_json) *schema_json = NULL;
    if (!t) return PAIMON_MISUSE;
    pm_err_clear(&t->err);
    if (!changes && n) return pm_fail(&t->err, PAIMON_MISUSE, "alter table: changes is NULL");
    pm_schema_change *c = calloc(n ? n : 1, sizeof *c);
    if (!c) return pm_fail(&t->err, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (changes[i].kind < PAIMON_ALTER_SET_OPTION || changes[i].kind > PAIMON_ALTER_UPDATE_COLUMN_POSITION) {
            free(c);
            return pm_fail(&t->err, PAIMON_MISUSE, "alter table: change %zu has an unknown kind %d", i + 1,
                           changes[i].kind);
        }
        c[i] = (pm_schema_change){(pm_alter_kind)changes[i].kind, changes[i].name, changes[i].value,
                                  changes[i].comment, changes[i].after, changes[i].first, changes[i].nullable};
    }
    pm_schema *s = NULL;
    int rc = pm_alter_table(t, c, n, dry_run, &s, &t->err);
    free(c);
    if (rc) return rc;
    if (schema_id) *schema_id = s->id;
    if (schema_json) {
        pm_buf b = {0};
        if (pm_schema_to_json(s, &b) || pm_buf_cstr(&b)) {
            pm_buf_free(&b);
            pm_schema_free(s);
            return pm_fail(&t->err, PAIMON_NOMEM, "out of memory");
        }
        *schema_json = (char *)b.data;
    }
    pm_schema_free(s);
    return PAIMON_OK;
}
