/* Write operations shared by paimon.h and the Lua binding (pm_write.h). */
#include "pm_write.h"

#include <stdlib.h>
#include <string.h>

#include "pm_create.h"
#include "pm_deleter.h"

/* ---- create from a spec ----------------------------------------------------- */

static int dup_into(char **dst, const char *s, pm_err *e) {
    *dst = pm_strdup(s);
    return *dst || !s ? PAIMON_OK : pm_fail(e, PAIMON_NOMEM, "out of memory");
}

static int dup_list(char ***dst, size_t *n_dst, const char *const *src, size_t n, const char *what, pm_err *e) {
    if (!n) return PAIMON_OK;
    if (!src) return pm_fail(e, PAIMON_MISUSE, "spec.%s is NULL with a count of %zu", what, n);
    if (!(*dst = calloc(n, sizeof **dst))) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!src[i]) return pm_fail(e, PAIMON_MISUSE, "spec.%s[%zu] must be a string", what, i + 1);
        int rc = dup_into(&(*dst)[i], src[i], e);
        if (rc) return rc;
        *n_dst = i + 1;
    }
    return PAIMON_OK;
}

static int schema_from_spec(const paimon_table_spec *spec, pm_schema *s, pm_err *e) {
    int rc;
    if (spec->n_columns && !spec->columns) return pm_fail(e, PAIMON_MISUSE, "spec.fields is NULL with a count of %zu", spec->n_columns);
    if (!(s->fields = calloc(spec->n_columns ? spec->n_columns : 1, sizeof *s->fields))) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < spec->n_columns; i++) {
        const paimon_column *c = &spec->columns[i];
        if (!c->name || !c->type) return pm_fail(e, PAIMON_MISUSE, "spec.fields[%d] needs string name and type", (int)i + 1);
        pm_data_field *f = &s->fields[i];
        if ((rc = dup_into(&f->name, c->name, e))) return rc;
        s->n_fields = i + 1;
        if (pm_type_parse_sql(c->type, &f->type, e)) {
            char why[sizeof e->msg];
            memcpy(why, e->msg, sizeof why);
            return pm_fail(e, PAIMON_MISUSE, "spec.fields[%d] ('%s'): %s", (int)i + 1, f->name, why);
        }
        if ((rc = dup_into(&f->description, c->description, e))) return rc;
    }
    if ((rc = dup_list(&s->partition_keys, &s->n_partition_keys, spec->partition_keys, spec->n_partition_keys, "partition_keys", e)) ||
        (rc = dup_list(&s->primary_keys, &s->n_primary_keys, spec->primary_keys, spec->n_primary_keys, "primary_keys", e)))
        return rc;
    if (spec->n_options) {
        if (!spec->options) return pm_fail(e, PAIMON_MISUSE, "spec.options is NULL with a count of %zu", spec->n_options);
        if (!(s->options = calloc(spec->n_options, sizeof *s->options))) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        for (size_t i = 0; i < spec->n_options; i++) {
            const char *k = spec->options[2 * i], *v = spec->options[2 * i + 1];
            if (!k || !v) return pm_fail(e, PAIMON_MISUSE, "spec.options: option %zu needs a key and a value", i + 1);
            if ((rc = dup_into(&s->options[i].key, k, e)) || (rc = dup_into(&s->options[i].value, v, e))) {
                s->n_options = i + 1;
                return rc;
            }
            s->n_options = i + 1;
        }
        /* deterministic input order before Java's HashMap order is applied */
        for (size_t i = 1; i < s->n_options; i++)
            for (size_t j = i; j > 0 && strcmp(s->options[j - 1].key, s->options[j].key) > 0; j--) {
                pm_kv tmp = s->options[j];
                s->options[j] = s->options[j - 1];
                s->options[j - 1] = tmp;
            }
    }
    return dup_into(&s->comment, spec->comment, e);
}

int pm_create_from_spec(const char *path, const paimon_table_spec *spec, const char *const *options, pm_err *e) {
    if (!spec) return pm_fail(e, PAIMON_MISUSE, "no table spec");
    pm_schema *s = calloc(1, sizeof *s);
    if (!s) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = schema_from_spec(spec, s, e);
    if (!rc) rc = pm_create_table_opts(path, s, options, e);
    pm_schema_free(s);
    return rc;
}

/* ---- row writer ------------------------------------------------------------- */

void pm_writer_clear_row(paimon_writer *w) {
    memset(w->row, 0, w->n * sizeof *w->row);
    for (size_t i = 0; i < w->n; i++) w->row[i].is_null = 1;
}

int pm_writer_open(paimon_table *t, paimon_writer **out, pm_err *e) {
    *out = NULL;
    paimon_writer *w = calloc(1, sizeof *w);
    if (!w) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    w->t = t;
    int rc = pm_append_writer_open(t, &w->w, e);
    if (rc) { free(w); return rc; }
    w->n = pm_append_writer_schema(w->w)->n_fields;
    size_t n = w->n ? w->n : 1;
    w->row = calloc(n, sizeof *w->row);
    w->dec = calloc(n, sizeof *w->dec);
    w->cbuf = calloc(n, sizeof *w->cbuf);
    if (!w->row || !w->dec || !w->cbuf) { pm_writer_free(w); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    pm_writer_clear_row(w);
    *out = w;
    return PAIMON_OK;
}

int pm_writer_set(paimon_writer *w, size_t col, const paimon_value *v, pm_err *e) {
    if (col >= w->n) return pm_fail(e, PAIMON_MISUSE, "column %zu: the table has %zu columns", col, w->n);
    const pm_data_field *f = &pm_append_writer_schema(w->w)->fields[col];
    pm_datum *d = &w->row[col];
    int rc;
    if (!pm_type_is_composite(f->type)) {
        rc = pm_value_to_datum(v, f->type, f->name, d, w->dec[col], e);
    } else if (v->kind == PAIMON_VALUE_NULL) {
        memset(d, 0, sizeof *d);
        d->is_null = 1;
        rc = f->type->nullable ? PAIMON_OK : pm_fail(e, PAIMON_MISUSE, "column '%s' is NOT NULL but the value is null", f->name);
    } else {
        /* the datafile writer takes composite values already encoded */
        w->cbuf[col].len = 0;
        rc = pm_value_encode_composite(&w->cbuf[col], v, f->type, f->name, e);
        memset(d, 0, sizeof *d);
        d->v.bin.ptr = w->cbuf[col].data;
        d->v.bin.len = w->cbuf[col].len;
    }
    if (rc) {
        memset(d, 0, sizeof *d);
        d->is_null = 1;
    }
    return rc;
}

int pm_writer_write_row(paimon_writer *w, pm_err *e) {
    int rc = pm_append_writer_write(w->w, w->row, e);
    if (!rc) w->rows++;
    pm_writer_clear_row(w);
    return rc;
}

void pm_writer_detach(paimon_writer *w) {
    if (w && w->w) pm_append_writer_detach(w->w);
}

void pm_writer_free(paimon_writer *w) {
    if (!w) return;
    pm_append_writer_free(w->w);
    if (w->cbuf) for (size_t i = 0; i < w->n; i++) pm_buf_free(&w->cbuf[i]);
    free(w->cbuf);
    free(w->row);
    free(w->dec);
    free(w);
}

/* ---- commit and abort ------------------------------------------------------- */

int pm_write_commit(paimon_table *t, const pm_manifest_entry *ents, size_t n, const pm_commit_opts *o,
                    int force, pm_commit_history *h, int64_t *snapshot_id, int *created, pm_err *e) {
    *created = 0;
    *snapshot_id = 0;
    if (n == 0 && !force && !(o->kind && !strcmp(o->kind, "COMPACT"))) {
        int rc = pm_snapshot_latest_id(t->io, t->branch_root, snapshot_id, e);
        if (rc == PAIMON_NOTFOUND) { *snapshot_id = 0; pm_err_clear(e); rc = PAIMON_OK; }
        return rc;
    }
    if (!h->first_seen) {
        int64_t latest = 0;
        pm_err ignored;
        if (pm_snapshot_latest_id(t->io, t->branch_root, &latest, &ignored) != PAIMON_OK) latest = 0;
        h->first_seen = latest + 1;
    }
    int rc = pm_commit(t, ents, n, o, snapshot_id, e);
    if (!rc) *created = 1;
    if (rc == PAIMON_UNCERTAIN) h->uncertain = 1;
    return rc;
}

int pm_write_abort(paimon_table *t, const pm_commit_history *h, const pm_manifest_entry *ents, size_t n,
                   int64_t *removed, int64_t *kept, pm_err *e) {
    *removed = *kept = 0;
    if (h->uncertain) {
        for (size_t i = 0; i < n; i++) *kept += ents[i].kind == PM_FILE_ADD && !ents[i].file.external_path;
        return PAIMON_OK;
    }
    uint8_t *found = calloc(n ? n : 1, 1);
    if (!found) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = pm_commit_find_added(t, h->first_seen ? h->first_seen : 1, ents, n, found, e);
    if (rc) {
        pm_err_prefix(e, "abort: deleting nothing");
        free(found);
        return rc;
    }
    pm_deleter *del = pm_deleter_new();
    if (!del) { free(found); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    for (size_t i = 0; i < n && !rc; i++) {
        if (ents[i].kind != PM_FILE_ADD || ents[i].file.external_path) continue;
        if (found[i]) { (*kept)++; continue; }
        pm_buf full = {0};
        int prc = pm_data_file_full_path(t, &ents[i], &full, e);   /* a path it cannot form: skipped */
        if (prc == PAIMON_NOMEM) rc = prc;
        else if (prc == PAIMON_OK) rc = pm_deleter_add(del, (const char *)full.data, PM_K_DATA, e);
        pm_buf_free(&full);
    }
    pm_clean_result res;
    memset(&res, 0, sizeof res);
    pm_clean_opts co = {1, 0, 0, NULL, NULL, 0};
    if (!rc) rc = pm_deleter_run(del, t->io, t->root, &co, "aborting", &res, e);
    pm_deleter_free(del);
    *removed = res.count[PM_K_DATA];
    pm_clean_result_free(&res);
    free(found);
    return rc;
}
