/* FileIO: local implementation and scheme dispatch. */
#include "test.h"
#include "pm_fileio.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char *make_tmpdir(void) { return tu_make_tmpdir("/tmp/pm_test_fileio."); }

static int count_entries(const char *dir, int hidden_only) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        if (hidden_only && de->d_name[0] != '.') continue;
        n++;
    }
    closedir(d);
    return n;
}

static int read_text(pm_fileio *io, const char *path, char *out, size_t cap) {
    pm_buf b = {0};
    pm_err e;
    int rc = pm_io_read_all(io, path, &b, &e);
    if (rc == PAIMON_OK) {
        size_t n = b.len < cap - 1 ? b.len : cap - 1;
        memcpy(out, b.data, n);
        out[n] = '\0';
    }
    pm_buf_free(&b);
    return rc;
}

TEST(scheme_dispatch) {
    pm_fileio *io = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_fileio_for_uri("/tmp/x", &io, &e), PAIMON_OK);
    CHECK(io != NULL && strcmp(io->ops->scheme, "file") == 0);
    pm_fileio_destroy(io);
    CHECK_EQ_INT(pm_fileio_for_uri("relative/dir", &io, &e), PAIMON_OK);
    pm_fileio_destroy(io);
    CHECK_EQ_INT(pm_fileio_for_uri("file:///tmp/x", &io, &e), PAIMON_OK);
    pm_fileio_destroy(io);
    CHECK_EQ_INT(pm_fileio_for_uri("file:/tmp/x", &io, &e), PAIMON_OK);
    pm_fileio_destroy(io);
    CHECK_EQ_INT(pm_fileio_for_uri("", &io, &e), PAIMON_OK);
    pm_fileio_destroy(io);
    CHECK_EQ_INT(pm_fileio_for_uri("oss://b/k", &io, &e), PAIMON_UNSUPPORTED);
    CHECK(strstr(e.msg, "'oss'") != NULL);
    CHECK_EQ_INT(pm_fileio_for_uri("hdfs://nn:8020/wh", &io, &e), PAIMON_UNSUPPORTED);
    CHECK(strstr(e.msg, "'hdfs'") != NULL);
    pm_fileio_destroy(NULL);
}

TEST(local_path_strip) {
    CHECK_EQ_STR(pm_local_path("file:///a/b"), "/a/b");
    CHECK_EQ_STR(pm_local_path("file:/a/b"), "/a/b");
    CHECK_EQ_STR(pm_local_path("/a/b"), "/a/b");
    CHECK_EQ_STR(pm_local_path("a/b"), "a/b");
    CHECK_EQ_STR(pm_local_path("FILE:/a"), "/a");
}

TEST(read_list_stat_exists) {
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char *f = pm_path_join(dir, "f.txt");
    char *sub = pm_path_join(dir, "sub");
    CHECK_EQ_INT(pm_io_write_atomic(io, f, "hello", 5, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_mkdirs(io, sub, &e), PAIMON_OK);
    char t[64];
    CHECK_EQ_INT(read_text(io, f, t, sizeof t), PAIMON_OK);
    CHECK_EQ_STR(t, "hello");
    /* via a file:// URI */
    char uri[1100];
    snprintf(uri, sizeof uri, "file://%s", f);
    CHECK_EQ_INT(read_text(io, uri, t, sizeof t), PAIMON_OK);
    CHECK_EQ_STR(t, "hello");

    pm_stat st;
    CHECK_EQ_INT(pm_io_stat(io, f, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.size, 5);
    CHECK_EQ_INT(st.is_dir, 0);
    int64_t now = pm_now_millis();
    CHECK(st.mtime_ms > now - 600000 && st.mtime_ms <= now + 1000);
    CHECK_EQ_INT(pm_io_stat(io, sub, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.is_dir, 1);

    int ex = -1;
    CHECK_EQ_INT(pm_io_exists(io, f, &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    char *missing = pm_path_join(dir, "missing");
    CHECK_EQ_INT(pm_io_exists(io, missing, &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 0);
    char *under_file = pm_path_join(f, "x");   /* ENOTDIR counts as missing */
    CHECK_EQ_INT(pm_io_exists(io, under_file, &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 0);

    /* a large file is read completely */
    size_t big = 300000;
    char *data = malloc(big);
    for (size_t i = 0; i < big; i++) data[i] = (char)(i * 7 + 3);
    char *bf = pm_path_join(dir, "big");
    CHECK_EQ_INT(pm_io_write_atomic(io, bf, data, big, &e), PAIMON_OK);
    pm_buf b = {0};
    CHECK_EQ_INT(pm_io_read_all(io, bf, &b, &e), PAIMON_OK);
    CHECK(b.len == big && memcmp(b.data, data, big) == 0);
    pm_buf_free(&b);
    free(data);

    pm_dirent *ents = NULL;
    size_t n = 0;
    CHECK_EQ_INT(pm_io_list(io, dir, &ents, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 3);
    if (n == 3) {   /* sorted by name */
        CHECK_EQ_STR(ents[0].name, "big");
        CHECK_EQ_STR(ents[1].name, "f.txt");
        CHECK_EQ_INT(ents[1].is_dir, 0);
        CHECK_EQ_STR(ents[2].name, "sub");
        CHECK_EQ_INT(ents[2].is_dir, 1);
    }
    pm_dirents_free(ents, n);
    /* empty directory */
    CHECK_EQ_INT(pm_io_list(io, sub, &ents, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 0);
    pm_dirents_free(ents, n);

    /* missing paths: NOTFOUND, message names the path and has strerror */
    CHECK_EQ_INT(pm_io_read_all(io, missing, &b, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, missing) != NULL);
    CHECK(strstr(e.msg, strerror(ENOENT)) != NULL);
    CHECK_EQ_INT(e.sys_errno, ENOENT);
    pm_buf_free(&b);
    CHECK_EQ_INT(pm_io_list(io, missing, &ents, &n, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, missing) != NULL);
    CHECK_EQ_INT(pm_io_stat(io, missing, &st, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, missing) != NULL);
    /* reading a directory is an I/O error naming it */
    CHECK_EQ_INT(pm_io_read_all(io, sub, &b, &e), PAIMON_IO);
    CHECK(strstr(e.msg, sub) != NULL);
    pm_buf_free(&b);
    /* listing a file */
    CHECK_EQ_INT(pm_io_list(io, f, &ents, &n, &e), PAIMON_IO);
    CHECK(strstr(e.msg, f) != NULL);

    free(bf);
    free(under_file);
    free(missing);
    free(f);
    free(sub);
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

TEST(write_atomic_replaces_without_temp_files) {
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char *f = pm_path_join(dir, "LATEST");
    CHECK_EQ_INT(pm_io_write_atomic(io, f, "1", 1, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_write_atomic(io, f, "22", 2, &e), PAIMON_OK);
    char t[16];
    CHECK_EQ_INT(read_text(io, f, t, sizeof t), PAIMON_OK);
    CHECK_EQ_STR(t, "22");
    CHECK_EQ_INT(pm_io_write_atomic(io, f, "", 0, &e), PAIMON_OK);   /* empty content */
    CHECK_EQ_INT(read_text(io, f, t, sizeof t), PAIMON_OK);
    CHECK_EQ_STR(t, "");
    CHECK_EQ_INT(count_entries(dir, 0), 1);
    CHECK_EQ_INT(count_entries(dir, 1), 0);
    /* missing parent directories are created (Java LocalFileIO does so) */
    char *deep = pm_path_join(dir, "a/b/c/file");
    CHECK_EQ_INT(pm_io_write_atomic(io, deep, "x", 1, &e), PAIMON_OK);
    CHECK_EQ_INT(read_text(io, deep, t, sizeof t), PAIMON_OK);
    CHECK_EQ_STR(t, "x");
    /* a parent that is a file: error naming the path */
    char *bad = pm_path_join(f, "child");
    CHECK_EQ_INT(pm_io_write_atomic(io, bad, "x", 1, &e), PAIMON_IO);
    CHECK(strstr(e.msg, bad) != NULL);
    /* target is a directory: rename fails, temp file removed */
    char *adir = pm_path_join(dir, "a");
    CHECK(pm_io_write_atomic(io, adir, "x", 1, &e) != PAIMON_OK);
    CHECK(strstr(e.msg, adir) != NULL);
    CHECK_EQ_INT(count_entries(dir, 1), 0);
    free(adir);
    free(bad);
    free(deep);
    free(f);
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

TEST(create_no_replace_twice) {
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char *f = pm_path_join(dir, "snapshot-1");
    CHECK_EQ_INT(pm_io_create_no_replace(io, f, "first", 5, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_create_no_replace(io, f, "second!", 7, &e), PAIMON_EXISTS);
    CHECK(strstr(e.msg, f) != NULL);
    CHECK(strstr(e.msg, "already exists") != NULL);
    char t[16];
    CHECK_EQ_INT(read_text(io, f, t, sizeof t), PAIMON_OK);
    CHECK_EQ_STR(t, "first");
    CHECK_EQ_INT(count_entries(dir, 0), 1);   /* no temp files after success or EEXIST */
    /* create_no_replace into a missing directory creates it */
    char *g = pm_path_join(dir, "tag/tag-a");
    CHECK_EQ_INT(pm_io_create_no_replace(io, g, "{}", 2, &e), PAIMON_OK);
    char *tagdir = pm_path_join(dir, "tag");
    CHECK_EQ_INT(count_entries(tagdir, 0), 1);
    free(tagdir);
    free(g);
    free(f);
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

TEST(create_no_replace_concurrent) {
    enum { NPROC = 8, ROUNDS = 5 };
    char *dir = make_tmpdir();
    for (int round = 0; round < ROUNDS; round++) {
        char name[64];
        snprintf(name, sizeof name, "snapshot-%d", round + 1);
        char *f = pm_path_join(dir, name);
        pid_t pids[NPROC];
        int pipefd[2];
        CHECK(pipe(pipefd) == 0);
        for (int i = 0; i < NPROC; i++) {
            pid_t p = fork();
            if (p == 0) {
                char c;
                close(pipefd[1]);
                /* wait for the start signal so all race together */
                if (read(pipefd[0], &c, 1) < 0) _exit(3);
                pm_fileio *io = pm_fileio_local();
                pm_err e;
                char content[4096];
                memset(content, 'a' + i, sizeof content);
                int rc = pm_io_create_no_replace(io, f, content, sizeof content, &e);
                pm_fileio_destroy(io);
                _exit(rc == PAIMON_OK ? 0 : rc == PAIMON_EXISTS ? 1 : 2);
            }
            pids[i] = p;
        }
        close(pipefd[0]);
        char go[NPROC];
        memset(go, 'g', sizeof go);
        CHECK(write(pipefd[1], go, sizeof go) == (ssize_t)sizeof go);
        close(pipefd[1]);
        int ok = 0, exists = 0, other = 0, winner = -1;
        for (int i = 0; i < NPROC; i++) {
            int status = 0;
            waitpid(pids[i], &status, 0);
            int code = WIFEXITED(status) ? WEXITSTATUS(status) : 9;
            if (code == 0) { ok++; winner = i; }
            else if (code == 1) exists++;
            else other++;
        }
        CHECK_EQ_INT(ok, 1);
        CHECK_EQ_INT(exists, NPROC - 1);
        CHECK_EQ_INT(other, 0);
        /* the file holds exactly the winner's complete content */
        pm_fileio *io = pm_fileio_local();
        pm_buf b = {0};
        pm_err e;
        CHECK_EQ_INT(pm_io_read_all(io, f, &b, &e), PAIMON_OK);
        CHECK_EQ_INT(b.len, 4096);
        int uniform = b.len == 4096 && winner >= 0;
        for (size_t k = 0; uniform && k < b.len; k++) uniform = b.data[k] == 'a' + winner;
        CHECK(uniform);
        pm_buf_free(&b);
        pm_fileio_destroy(io);
        free(f);
    }
    CHECK_EQ_INT(count_entries(dir, 0), ROUNDS);
    CHECK_EQ_INT(count_entries(dir, 1), 0);
    tu_rm_rf(dir);
    free(dir);
}

TEST(remove_and_mkdirs) {
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char *f = pm_path_join(dir, "x");
    CHECK_EQ_INT(pm_io_write_atomic(io, f, "1", 1, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_remove(io, f, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_remove(io, f, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, f) != NULL);
    CHECK(strstr(e.msg, strerror(ENOENT)) != NULL);

    char *deep = pm_path_join(dir, "a//b/c/");
    CHECK_EQ_INT(pm_io_mkdirs(io, deep, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_mkdirs(io, deep, &e), PAIMON_OK);   /* idempotent */
    char *c = pm_path_join(dir, "a/b/c");
    pm_stat st;
    CHECK_EQ_INT(pm_io_stat(io, c, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.is_dir, 1);
    /* empty directory removal */
    CHECK_EQ_INT(pm_io_remove(io, c, &e), PAIMON_OK);
    int ex = 1;
    pm_io_exists(io, c, &ex, &e);
    CHECK_EQ_INT(ex, 0);
    /* mkdirs through a file fails naming the path */
    CHECK_EQ_INT(pm_io_write_atomic(io, f, "1", 1, &e), PAIMON_OK);
    char *through = pm_path_join(f, "sub");
    CHECK_EQ_INT(pm_io_mkdirs(io, through, &e), PAIMON_IO);
    CHECK(strstr(e.msg, f) != NULL);
    CHECK_EQ_INT(pm_io_mkdirs(io, f, &e), PAIMON_IO);
    CHECK(strstr(e.msg, f) != NULL);
    free(through);
    free(c);
    free(deep);
    free(f);
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

/* remove_within reaches the file from the root without following
 * symlinks: a directory swapped for a symlink to elsewhere (after any check
 * a caller made) cannot redirect the deletion outside the root. */
TEST(remove_within_never_leaves_the_root) {
    char *dir = make_tmpdir();
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p root/a/b out/b && printf 1 > root/a/b/f && printf 22 > root/a/b/g && "
             "printf 333 > out/b/f && printf 4 > out/target", dir);
    CHECK(tu_sh(cmd) == 0);
    char *root = pm_path_join(dir, "root");
    char *out_f = pm_path_join(dir, "out/b/f"), *target = pm_path_join(dir, "out/target");
    char *in_g = pm_path_join(dir, "root/a/b/g");
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    pm_stat st = {0};
    /* a dry run only looks */
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a/b/g", 1, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.size, 2);
    CHECK(tu_file_exists(in_g));
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a/b/g", 0, &st, &e), PAIMON_OK);
    CHECK(!tu_file_exists(in_g));
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a/b/g", 0, &st, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "a/b/g") != NULL);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "nope/b/g", 0, &st, &e), PAIMON_NOTFOUND);
    /* the swap: root/a becomes a symlink to out/ */
    snprintf(cmd, sizeof cmd, "cd '%s' && mv root/a root/a.old && ln -s '%s/out' root/a", dir, dir);
    CHECK(tu_sh(cmd) == 0);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a/b/f", 0, &st, &e), PM_IO_OUTSIDE);
    CHECK(strstr(e.msg, "symlink") != NULL);
    CHECK(tu_file_exists(out_f));
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a/b/f", 1, &st, &e), PM_IO_OUTSIDE);
    /* a symlink as the last component is removed itself, never its target */
    snprintf(cmd, sizeof cmd, "cd '%s' && ln -s '%s' root/a.old/b/link", dir, target);
    CHECK(tu_sh(cmd) == 0);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a.old/b/link", 0, &st, &e), PAIMON_OK);
    CHECK(tu_file_exists(target));
    snprintf(cmd, sizeof cmd, "test ! -e '%s/root/a.old/b/link' && test ! -L '%s/root/a.old/b/link'", dir, dir);
    CHECK(tu_sh(cmd) == 0);
    /* directories are never removed; a file on the way is no directory */
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a.old/b", 0, &st, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "directory") != NULL);
    snprintf(cmd, sizeof cmd, "test -d '%s/root/a.old/b' && test -f '%s/root/a.old/b/f'", dir, dir);
    CHECK(tu_sh(cmd) == 0);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a.old/b/f/x", 0, &st, &e), PAIMON_NOTFOUND);
    /* ".", ".." and empty components are refused by the operation itself */
    static const char *const dotted[] = {"../out/target", "a.old/../../out/target", "./a.old/b/f", "a.old//b/f",
                                         "a.old/b/.", "a.old/b/..", ""};
    for (size_t k = 0; k < sizeof dotted / sizeof *dotted; k++)
        CHECK_EQ_INT(pm_io_remove_within(io, root, dotted[k], 0, &st, &e), PM_IO_OUTSIDE);
    /* PM_RM_EMPTY_DIR: only an empty directory, never through or at a symlink */
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a.old/b", PM_RM_EMPTY_DIR, &st, &e), PAIMON_EXISTS);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a.old/b/f", PM_RM_EMPTY_DIR, &st, &e), PAIMON_IO);
    CHECK(tu_file_exists(out_f));
    snprintf(cmd, sizeof cmd, "cd '%s' && mkdir -p root/e/empty out/empty2 && ln -s '%s/out/empty2' root/e/link", dir, dir);
    CHECK(tu_sh(cmd) == 0);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "e/link", PM_RM_EMPTY_DIR, &st, &e), PAIMON_IO);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "a/empty2", PM_RM_EMPTY_DIR, &st, &e), PM_IO_OUTSIDE);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "e/empty", PM_RM_EMPTY_DIR | PM_RM_DRY_RUN, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_remove_within(io, root, "e/empty", PM_RM_EMPTY_DIR, &st, &e), PAIMON_OK);
    snprintf(cmd, sizeof cmd, "test ! -e '%s/root/e/empty' && test -d '%s/out/empty2' && test -L '%s/root/e/link'", dir, dir, dir);
    CHECK(tu_sh(cmd) == 0);
    CHECK(tu_file_exists(out_f));
    CHECK(tu_file_exists(target));
    pm_fileio_destroy(io);
    free(in_g);
    free(target);
    free(out_f);
    free(root);
    tu_rm_rf(dir);
    free(dir);
}

/* read_all returns every byte whatever the size relative to its buffer
 * steps (and an empty file as empty) */
TEST(read_all_sizes) {
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    static const size_t sizes[] = {0, 1, 4095, 4096, 8193, 65535, 65536, 65537, 131072, 200003};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        uint8_t *data = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) data[i] = (uint8_t)(i * 31 + k);
        char *f = pm_path_join(dir, "f");
        CHECK(tu_write_file(f, data, n) == 0);
        pm_buf b = {0};
        pm_err e;
        CHECK_EQ_INT(pm_io_read_all(io, f, &b, &e), PAIMON_OK);
        CHECK_EQ_INT(b.len, n);
        CHECK(n == 0 || memcmp(b.data, data, n) == 0);
        pm_buf_free(&b);
        free(f);
        free(data);
    }
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

/* A size the metadata records only saves the fstat: a file shorter or
 * longer than recorded is still read whole. */
TEST(read_sized_reads_the_whole_file_whatever_is_recorded) {
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    static const size_t sizes[] = {0, 1, 4096, 65537, 200003};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        uint8_t *data = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) data[i] = (uint8_t)(i * 7 + k);
        char *f = pm_path_join(dir, "f");
        CHECK(tu_write_file(f, data, n) == 0);
        const int64_t recorded[] = {(int64_t)n, (int64_t)n - 1, (int64_t)n + 1, 0, (int64_t)n / 2, -1};
        for (size_t r = 0; r < sizeof recorded / sizeof *recorded; r++) {
            pm_buf b = {0};
            pm_err e;
            CHECK_EQ_INT(pm_io_read_sized(io, f, recorded[r], &b, &e), PAIMON_OK);
            CHECK_EQ_INT(b.len, n);
            CHECK(n == 0 || (b.len == n && memcmp(b.data, data, n) == 0));
            pm_buf_free(&b);
        }
        free(f);
        free(data);
    }
    /* missing, and a directory: the errors read_all gives, naming the path */
    pm_buf b = {0};
    pm_err e;
    char *gone = pm_path_join(dir, "gone");
    CHECK_EQ_INT(pm_io_read_sized(io, gone, 10, &b, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, gone) != NULL);
    CHECK_EQ_INT(pm_io_read_sized(io, dir, 10, &b, &e), PAIMON_IO);
    CHECK(strstr(e.msg, dir) != NULL);
    pm_buf_free(&b);
    free(gone);
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

TEST(permission_errors_name_path) {
    if (geteuid() == 0) return;   /* root ignores permissions */
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char *f = pm_path_join(dir, "secret");
    CHECK_EQ_INT(pm_io_write_atomic(io, f, "1", 1, &e), PAIMON_OK);
    chmod(f, 0);
    pm_buf b = {0};
    CHECK_EQ_INT(pm_io_read_all(io, f, &b, &e), PAIMON_IO);
    CHECK(strstr(e.msg, f) != NULL);
    CHECK(strstr(e.msg, strerror(EACCES)) != NULL);
    pm_buf_free(&b);
    free(f);
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

typedef struct tree_seen { char names[8][64]; int64_t size[8]; int n; } tree_seen;

static int tree_cb(void *ctx, const char *rel, const pm_stat *st, pm_err *e) {
    (void)e;
    tree_seen *t = ctx;
    if (t->n == 8) return PAIMON_CORRUPT;
    snprintf(t->names[t->n], sizeof t->names[0], "%s", rel);
    t->size[t->n++] = st->size;
    return PAIMON_OK;
}

static int tree_find(const tree_seen *t, const char *rel) {
    for (int i = 0; i < t->n; i++) if (!strcmp(t->names[i], rel)) return i;
    return -1;
}

TEST(list_tree_streams_every_file_with_its_size) {
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char p[512];
    snprintf(p, sizeof p, "%s/a/b", dir);
    CHECK_EQ_INT(pm_io_mkdirs(io, p, &e), PAIMON_OK);
    snprintf(p, sizeof p, "%s/empty", dir);
    CHECK_EQ_INT(pm_io_mkdirs(io, p, &e), PAIMON_OK);
    snprintf(p, sizeof p, "%s/top", dir);
    CHECK_EQ_INT(pm_io_write_atomic(io, p, "12", 2, &e), PAIMON_OK);
    snprintf(p, sizeof p, "%s/a/b/deep", dir);
    CHECK_EQ_INT(pm_io_write_atomic(io, p, "12345", 5, &e), PAIMON_OK);
    tree_seen t = {0};
    CHECK_EQ_INT(pm_io_list_tree(io, dir, tree_cb, &t, &e), PAIMON_OK);
    CHECK_EQ_INT(t.n, 2);
    CHECK(tree_find(&t, "top") >= 0 && t.size[tree_find(&t, "top")] == 2);
    CHECK(tree_find(&t, "a/b/deep") >= 0 && t.size[tree_find(&t, "a/b/deep")] == 5);
    /* a missing directory lists nothing; the callback's code stops the walk */
    snprintf(p, sizeof p, "%s/missing", dir);
    tree_seen none = {0};
    CHECK_EQ_INT(pm_io_list_tree(io, p, tree_cb, &none, &e), PAIMON_OK);
    CHECK_EQ_INT(none.n, 0);
    tree_seen full = {.n = 8};
    CHECK_EQ_INT(pm_io_list_tree(io, dir, tree_cb, &full, &e), PAIMON_CORRUPT);
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

TEST(remove_batch_reports_each_item) {
    char *dir = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char p[512];
    snprintf(p, sizeof p, "%s/x", dir);
    CHECK_EQ_INT(pm_io_write_atomic(io, p, "abc", 3, &e), PAIMON_OK);
    const char *rels[] = {"x", "gone", "../escape"};
    pm_stat sts[3];
    int rcs[3];
    char *msgs[3];
    CHECK_EQ_INT(pm_io_remove_batch(io, dir, rels, 3, PM_RM_DRY_RUN, sts, rcs, msgs, &e), PAIMON_OK);
    CHECK_EQ_INT(rcs[0], PAIMON_OK);
    CHECK(sts[0].size == 3);
    CHECK_EQ_INT(rcs[1], PAIMON_NOTFOUND);
    CHECK(rcs[2] != PAIMON_OK && msgs[2] != NULL);
    for (int i = 0; i < 3; i++) free(msgs[i]);
    CHECK(access(p, F_OK) == 0);   /* dry run */
    CHECK_EQ_INT(pm_io_remove_batch(io, dir, rels, 1, 0, sts, rcs, msgs, &e), PAIMON_OK);
    CHECK_EQ_INT(rcs[0], PAIMON_OK);
    CHECK(access(p, F_OK) != 0);
    free(msgs[0]);
    CHECK_EQ_INT(pm_io_remove_batch(io, dir, rels, 1, PM_RM_EMPTY_DIR, sts, rcs, msgs, &e), PAIMON_MISUSE);
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

/* The local batch keeps a few directories open between items: it must
 * give, item by item, what remove_within gives (same codes, sizes, and the
 * same files left), on a tree with symlinked directories, a symlink as the
 * last component, directories, dotted paths, missing files, and more
 * directories than the cache holds, revisited after eviction. */
TEST(local_remove_batch_matches_remove_within) {
    char *dir = make_tmpdir();
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p out && printf 9 > out/t && for r in r1 r2; do mkdir -p $r/x && "
             "for d in 0 1 2 3 4 5 6 7 8 9 10 11; do mkdir -p $r/p=$d/bucket-0 && "
             "printf $d > $r/p=$d/bucket-0/f && printf ab$d > $r/p=$d/bucket-0/g; done && "
             "printf top > $r/top && ln -s '%s/out' $r/lnk && ln -s '%s/out/t' $r/p=3/bucket-0/l; done",
             dir, dir, dir);
    CHECK(tu_sh(cmd) == 0);
    static const char *const rels[] = {
        "p=0/bucket-0/f", "p=0/bucket-0/g", "p=1/bucket-0/f", "lnk/t", "p=2/bucket-0/f", "p=3/bucket-0/l",
        "p=4/bucket-0/f", "p=5/bucket-0/f", "p=6/bucket-0/f", "p=7/bucket-0/f", "p=8/bucket-0/f", "p=9/bucket-0/f",
        "p=10/bucket-0/f", "p=0/bucket-0/gone", "p=1/bucket-0/g", "p=11/bucket-0", "top", "../out/t",
        "p=2//bucket-0/g", "nope/bucket-0/f", "p=4/bucket-0/f/z", "x", "p=11/bucket-0/f", "p=0/bucket-0/f",
        "p=10/bucket-0/g", "p=2/bucket-0/g"};
    enum { N = sizeof rels / sizeof *rels };
    char *r1 = pm_path_join(dir, "r1"), *r2 = pm_path_join(dir, "r2");
    pm_fileio *io = pm_fileio_local();
    for (int dry = 1; dry >= 0; dry--) {
        pm_stat sts[N];
        int rcs[N];
        char *msgs[N];
        pm_err e;
        CHECK_EQ_INT(pm_io_remove_batch(io, r1, rels, N, dry ? PM_RM_DRY_RUN : 0, sts, rcs, msgs, &e), PAIMON_OK);
        for (int i = 0; i < N; i++) {
            pm_stat st = {0};
            pm_err ie;
            int want = pm_io_remove_within(io, r2, rels[i], dry ? PM_RM_DRY_RUN : 0, &st, &ie);
            if (rcs[i] != want || (want == PAIMON_OK && sts[i].size != st.size))
                fprintf(stderr, "  item %s: batch %d size %lld, remove_within %d size %lld\n", rels[i], rcs[i],
                        (long long)sts[i].size, want, (long long)st.size);
            CHECK_EQ_INT(rcs[i], want);
            CHECK(want == PAIMON_OK ? msgs[i] == NULL : msgs[i] != NULL && strstr(msgs[i], "r1") != NULL);
            free(msgs[i]);
        }
    }
    /* the same files are left, and nothing outside was touched */
    snprintf(cmd, sizeof cmd, "cd '%s' && test \"$(cd r1 && find . | sort)\" = \"$(cd r2 && find . | sort)\" && "
             "test -f out/t && test -f r1/p=11/bucket-0/g && test ! -e r1/p=0/bucket-0/f", dir);
    CHECK(tu_sh(cmd) == 0);
    pm_fileio_destroy(io);
    free(r1);
    free(r2);
    tu_rm_rf(dir);
    free(dir);
}

/* Ordered deletions (snapshot files) in one batch: after an item fails,
 * nothing later is tried, so no gap opens; missing and refused items do
 * not stop it. Locally and through the generic per-item loop. */
TEST(remove_batch_stops_after_a_failure) {
    char *dir = make_tmpdir();
    char cmd[1024];
    for (int mapped = 0; mapped <= 1; mapped++) {
        snprintf(cmd, sizeof cmd, "cd '%s' && rm -rf s && mkdir -p s/snapshot-3 && printf a > s/snapshot-1 && "
                 "printf b > s/snapshot-4 && printf c > s/snapshot-5", dir);
        CHECK(tu_sh(cmd) == 0);
        pm_fileio *io = mapped ? pm_fileio_mapped_new("pmtest://", dir) : pm_fileio_local();
        char *root = mapped ? pm_strdup("pmtest://s") : pm_path_join(dir, "s");
        /* 2 is missing, 3 is a directory (never removed: a failure) */
        const char *rels[] = {"snapshot-1", "snapshot-2", "snapshot-3", "snapshot-4", "snapshot-5"};
        pm_stat sts[5];
        int rcs[5];
        char *msgs[5];
        pm_err e;
        CHECK_EQ_INT(pm_io_remove_batch(io, root, rels, 5, PM_RM_STOP_ON_FAILURE, sts, rcs, msgs, &e), PAIMON_OK);
        CHECK_EQ_INT(rcs[0], PAIMON_OK);
        CHECK_EQ_INT(rcs[1], PAIMON_NOTFOUND);
        CHECK_EQ_INT(rcs[2], PAIMON_IO);
        CHECK(msgs[2] && strstr(msgs[2], "snapshot-3"));
        CHECK_EQ_INT(rcs[3], PM_IO_NOT_TRIED);
        CHECK_EQ_INT(rcs[4], PM_IO_NOT_TRIED);
        for (int i = 0; i < 5; i++) free(msgs[i]);
        snprintf(cmd, sizeof cmd, "cd '%s/s' && test ! -e snapshot-1 && test -d snapshot-3 && test -f snapshot-4 && "
                 "test -f snapshot-5", dir);
        CHECK(tu_sh(cmd) == 0);
        /* without the flag every item is tried */
        CHECK_EQ_INT(pm_io_remove_batch(io, root, rels, 5, 0, sts, rcs, msgs, &e), PAIMON_OK);
        CHECK_EQ_INT(rcs[3], PAIMON_OK);
        CHECK_EQ_INT(rcs[4], PAIMON_OK);
        for (int i = 0; i < 5; i++) free(msgs[i]);
        free(root);
        pm_fileio_destroy(io);
    }
    tu_rm_rf(dir);
    free(dir);
}

/* What the S3 opener was handed (the stand-in records, then refuses). */
static int s3_calls;
static char s3_uri[256], s3_opts[512];

static int recording_s3_open(const char *uri, const char *const *options, pm_fileio **out, pm_err *e) {
    s3_calls++;
    snprintf(s3_uri, sizeof s3_uri, "%s", uri);
    s3_opts[0] = '\0';
    for (size_t i = 0; options && options[i]; i += 2)
        snprintf(s3_opts + strlen(s3_opts), sizeof s3_opts - strlen(s3_opts), "%s=%s;", options[i], options[i + 1]);
    *out = NULL;
    return pm_fail(e, PAIMON_UNSUPPORTED, "recorded");
}

TEST(s3_and_s3a_reach_the_s3_fileio_with_their_options) {
    pm_fileio_opener old = pm_fileio_set_s3_opener(recording_s3_open);
    pm_fileio *io = NULL;
    pm_err e;
    s3_calls = 0;
    const char *opts[] = {"s3.endpoint", "http://127.0.0.1:7480", "s3.path.style.access", "true", "bucket", "-1", NULL};
    CHECK_EQ_INT(pm_fileio_open("s3://lake/wh/db.db/t", opts, &io, &e), PAIMON_UNSUPPORTED);
    CHECK_EQ_STR(s3_uri, "s3://lake/wh/db.db/t");
    CHECK_EQ_STR(s3_opts, "s3.endpoint=http://127.0.0.1:7480;s3.path.style.access=true;bucket=-1;");
    CHECK_EQ_INT(pm_fileio_open("S3A://lake/wh/db.db/t", opts, &io, &e), PAIMON_UNSUPPORTED);
    CHECK_EQ_STR(s3_uri, "S3A://lake/wh/db.db/t");
    CHECK_EQ_INT(s3_calls, 2);
    /* local paths never reach it, options or not */
    CHECK_EQ_INT(pm_fileio_open("/tmp/x", opts, &io, &e), PAIMON_OK);
    CHECK(io != NULL && pm_io_has(io, PM_IO_LOCAL));
    pm_fileio_destroy(io);
    CHECK_EQ_INT(s3_calls, 2);
    pm_fileio_set_s3_opener(old);
    CHECK_EQ_INT(pm_fileio_open("s3://lake/t", NULL, &io, &e) == PAIMON_OK, io != NULL);
    pm_fileio_destroy(io);
    CHECK_EQ_INT(s3_calls, 2);
}

TEST(fileio_options_are_checked_without_echoing_values) {
    pm_fileio_opener old = pm_fileio_set_s3_opener(recording_s3_open);
    pm_fileio *io = NULL;
    pm_err e;
    s3_calls = 0;
    const char *misspelt[] = {"s3.secret-key", "S3CR3T-VALUE-1", "s3.endpiont", "S3CR3T-VALUE-2", NULL};
    CHECK_EQ_INT(pm_fileio_open("s3://lake/t", misspelt, &io, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "'s3.endpiont'") != NULL && strstr(e.msg, "s3.endpoint") != NULL);
    CHECK(strstr(e.msg, "S3CR3T") == NULL);
    CHECK_EQ_INT(s3_calls, 0);   /* refused before the FileIO */
    const char *empty_key[] = {"", "S3CR3T", NULL};
    CHECK_EQ_INT(pm_fileio_open("s3://lake/t", empty_key, &io, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "S3CR3T") == NULL);
    const char *no_value[] = {"s3.region", NULL};
    CHECK_EQ_INT(pm_fileio_open("/tmp/x", no_value, &io, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "'s3.region'") != NULL);
    /* another FileIO's namespace is just a table option here */
    const char *other[] = {"s3.endpiont", "x", NULL};
    CHECK_EQ_INT(pm_fileio_open("/tmp/x", other, &io, &e), PAIMON_OK);
    pm_fileio_destroy(io);
    CHECK_EQ_INT(s3_calls, 0);
    pm_fileio_set_s3_opener(old);
    CHECK(pm_fileio_option_known("s3://b/t", "s3.endpoint"));
    CHECK(pm_fileio_option_known("s3a://b/t", "s3.secret-key"));
    CHECK(!pm_fileio_option_known("s3://b/t", "s3.endpiont"));
    /* every key the S3 configuration reads is known, under each prefix */
    CHECK(pm_fileio_option_known("s3://b/t", "s3.max-retries"));
    CHECK(pm_fileio_option_known("s3://b/t", "s3.session.token"));
    CHECK(pm_fileio_option_known("s3://b/t", "fs.s3a.endpoint"));
    CHECK(pm_fileio_option_known("s3://b/t", "s3a.path.style.access"));
    CHECK(!pm_fileio_option_known("/tmp/t", "s3.endpoint"));
    CHECK(pm_fileio_option_known("pmtest://b/t", "pmtest.root"));
}

TEST(secret_option_keys) {
    const char *secret[] = {"s3.secret-key", "s3.access-key", "fs.s3a.access.key", "S3.SESSION-TOKEN", "password",
                            "oss.accessKeySecret", "s3.session.token", "dlf.token-path", NULL};
    const char *plain[] = {"s3.endpoint", "s3.region", "s3.path.style.access", "bucket", "file.format", NULL};
    for (size_t i = 0; secret[i]; i++) { t_cur = secret[i]; CHECK(pm_option_is_secret(secret[i])); }
    for (size_t i = 0; plain[i]; i++) { t_cur = plain[i]; CHECK(!pm_option_is_secret(plain[i])); }
    t_cur = "secret_option_keys";
}

TEST(uris_of_one_fileio) {
    CHECK(pm_uri_same_fileio("/a/t", "file:/b/x"));
    CHECK(pm_uri_same_fileio("file:///a/t", "rel/x"));
    CHECK(pm_uri_same_fileio("s3://b/t", "S3A://c/x"));
    CHECK(pm_uri_same_fileio("oss://b/t", "OSS://c/x"));
    CHECK(!pm_uri_same_fileio("/a/t", "s3://b/x"));
    CHECK(!pm_uri_same_fileio("s3://b/t", "/b/x"));
    CHECK(!pm_uri_same_fileio("oss://b/t", "hdfs://c/x"));
}

/* pmtest://: a directory behind a URI, configured by an option; not local. */
TEST(pmtest_scheme_maps_a_directory_through_its_option) {
    char *dir = tu_make_tmpdir("/tmp/pm_test_fileio.");
    CHECK(dir != NULL);
    if (!dir) return;
    pm_fileio *io = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_fileio_open("pmtest://bk/t", NULL, &io, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "pmtest.root") != NULL);
    const char *bad[] = {"pmtest.root", dir, "pmtest.rooot", "x", NULL};
    CHECK_EQ_INT(pm_fileio_open("pmtest://bk/t", bad, &io, &e), PAIMON_MISUSE);
    const char *opts[] = {"pmtest.root", dir, "pmtest.secret-key", "S3CR3T", NULL};
    CHECK_EQ_INT(pm_fileio_open("pmtest://bk/t", opts, &io, &e), PAIMON_OK);
    if (io) {
        CHECK(!pm_io_has(io, PM_IO_LOCAL));
        CHECK_EQ_INT(pm_io_mkdirs(io, "pmtest://bk/t/schema", &e), PAIMON_OK);
        CHECK_EQ_INT(pm_io_create_no_replace(io, "pmtest://bk/t/schema/x", "abc", 3, &e), PAIMON_OK);
        char p[300];
        snprintf(p, sizeof p, "%s/bk/t/schema/x", dir);
        CHECK(tu_file_exists(p));
        pm_stat st;
        CHECK_EQ_INT(pm_io_stat(io, "pmtest://bk/t/schema/x", &st, &e), PAIMON_OK);
        CHECK_EQ_INT(st.size, 3);
        CHECK_EQ_INT(pm_io_remove_within(io, "pmtest://bk/t", "schema/x", 0, &st, &e), PAIMON_OK);
        CHECK(!tu_file_exists(p));
        CHECK_EQ_INT(pm_io_stat(io, "/elsewhere/x", &st, &e), PAIMON_IO);   /* not its URI */
        pm_fileio_destroy(io);
    }
    tu_rm_rf(dir);
    free(dir);
}

int main(void) {
    RUN(scheme_dispatch);
    RUN(local_path_strip);
    RUN(read_list_stat_exists);
    RUN(write_atomic_replaces_without_temp_files);
    RUN(create_no_replace_twice);
    RUN(create_no_replace_concurrent);
    RUN(remove_and_mkdirs);
    RUN(remove_within_never_leaves_the_root);
    RUN(read_all_sizes);
    RUN(permission_errors_name_path);
    RUN(list_tree_streams_every_file_with_its_size);
    RUN(remove_batch_reports_each_item);
    RUN(local_remove_batch_matches_remove_within);
    RUN(remove_batch_stops_after_a_failure);
    RUN(read_sized_reads_the_whole_file_whatever_is_recorded);
    RUN(s3_and_s3a_reach_the_s3_fileio_with_their_options);
    RUN(fileio_options_are_checked_without_echoing_values);
    RUN(secret_option_keys);
    RUN(uris_of_one_fileio);
    RUN(pmtest_scheme_maps_a_directory_through_its_option);
    return TEST_SUMMARY();
}
