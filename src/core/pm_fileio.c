/* FileIO dispatch by URI scheme and the local file system implementation.
 * Atomic writes go through a temp file `.<name>.<uuid>.tmp` in the target's
 * directory (Java's Path.createTempPath naming); create-without-replace
 * publishes the temp file with link() (or renameat2(RENAME_NOREPLACE) where
 * hard links are unsupported), so the target appears complete or not at all
 * and an existing target is never overwritten. */
#define _GNU_SOURCE
#include "pm_fileio.h"
#include "pm_s3.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* ---- URI helpers ------------------------------------------------------ */

static int prefix_ci(const char *s, const char *p) {
    for (; *p; s++, p++)
        if (tolower((unsigned char)*s) != tolower((unsigned char)*p)) return 0;
    return 1;
}

const char *pm_local_path(const char *uri) {
    if (!uri) return uri;
    if (prefix_ci(uri, "file://")) return uri + 7;
    if (prefix_ci(uri, "file:")) return uri + 5;
    return uri;
}

/* Length of the URI scheme ("s3" in "s3://b/k"), 0 if there is none. A
 * scheme is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) followed by ':'. */
static size_t scheme_len(const char *uri) {
    if (!isalpha((unsigned char)uri[0])) return 0;
    size_t i = 1;
    while (isalnum((unsigned char)uri[i]) || uri[i] == '+' || uri[i] == '-' || uri[i] == '.') i++;
    return uri[i] == ':' ? i : 0;
}

/* ---- local implementation -------------------------------------------- */

static const char *file_kind(mode_t m) {
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

/* The whole file into out. Its size: `size` when the metadata records it
 * (-1: unknown, fstat says). A regular file is read until it has given that
 * many bytes (short reads, as on some network or FUSE mounts, continue),
 * with no extra read to see the end (Paimon's files are immutable once
 * published); a recorded size is asked for one byte more, so a file longer
 * than recorded is still read to its end. Anything else is read until
 * read() returns 0. With a max (out->read_max, 0: none): a file that is not regular or has more
 * bytes is refused without reading it (O_NONBLOCK: opening a FIFO does not
 * wait for a writer), and no more than max + 1 bytes are ever read. */
static int local_read(const char *path, int64_t size, pm_buf *out, pm_err *e) {
    size_t max = out->read_max;
    int fd;
    do fd = open(path, O_RDONLY | O_CLOEXEC | (max ? O_NONBLOCK : 0)); while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int err = errno;
        return pm_fail_errno(e, err == ENOENT || err == ENOTDIR ? PAIMON_NOTFOUND : PAIMON_IO, err,
                             "cannot open %s", path);
    }
    int sized = size >= 0;
    size_t want = sized ? (size_t)size : 0, got = 0, reads = 0;
    if (!sized) {
        struct stat st;
        int have_st = fstat(fd, &st) == 0;
        if (!have_st && max) {
            int err = errno;
            close(fd);
            return pm_fail_errno(e, PAIMON_IO, err, "cannot stat %s", path);
        }
        if (max && !S_ISREG(st.st_mode)) {
            close(fd);
            return pm_fail(e, PAIMON_CORRUPT, "%s: not a regular file (%s)", path, file_kind(st.st_mode));
        }
        if (max && (uint64_t)st.st_size > max) {
            close(fd);
            return pm_io_fail_too_big(e, path, (int64_t)st.st_size, max);
        }
        if (have_st && S_ISDIR(st.st_mode)) {
            close(fd);
            return pm_fail_errno(e, PAIMON_IO, EISDIR, "cannot read %s", path);
        }
        sized = have_st && S_ISREG(st.st_mode) && st.st_size > 0;
        want = sized ? (size_t)st.st_size : 0;
    } else {
        want++;   /* the byte that tells a longer file */
    }
    if (sized && pm_buf_reserve(out, want)) {
        close(fd);
        return pm_fail(e, PAIMON_NOMEM, "out of memory reading %s", path);
    }
    while (!sized || got < want) {
        size_t room = out->cap - out->len;
        if (sized && room > want - got) room = want - got;
        if (room == 0) {
            if (pm_buf_reserve(out, 8192)) {
                close(fd);
                return pm_fail(e, PAIMON_NOMEM, "out of memory reading %s", path);
            }
            room = out->cap - out->len;
        }
        if (room > ((size_t)1 << 30)) room = (size_t)1 << 30;   /* Linux returns at most ~2 GiB per read */
        if (max && room > max + 1 - got) room = max + 1 - got;    /* grew since fstat: a byte past max tells */
        ssize_t n = read(fd, out->data + out->len, room);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            close(fd);
            return pm_fail_errno(e, PAIMON_IO, err, "cannot read %s", path);
        }
        if (n == 0) break;
        out->len += (size_t)n;
        got += (size_t)n;
        reads++;
        /* one read asked for a byte more than recorded and got exactly the
         * recorded size: the whole file (a local regular file's read is
         * short only at its end). Several reads (a short read, as FUSE or
         * network mounts may give) or one byte more: read on to the end. */
        if (size >= 0 && got == (size_t)size && reads == 1) break;
        if (size >= 0 && got > (size_t)size) sized = 0;
        if (max && got > max) {
            close(fd);
            out->len -= got;
            return pm_io_fail_too_big(e, path, -1, max);
        }
    }
    close(fd);
    return PAIMON_OK;
}

static int local_read_all(pm_fileio *io, const char *uri, pm_buf *out, pm_err *e) {
    (void)io;
    return local_read(pm_local_path(uri), -1, out, e);
}

static int dirent_cmp(const void *a, const void *b) {
    return strcmp(((const pm_dirent *)a)->name, ((const pm_dirent *)b)->name);
}

static int local_list(pm_fileio *io, const char *uri, pm_dirent **out, size_t *n, pm_err *e) {
    (void)io;
    const char *path = pm_local_path(uri);
    *out = NULL;
    *n = 0;
    DIR *d = opendir(path);
    if (!d) {
        int err = errno;
        return pm_fail_errno(e, err == ENOENT ? PAIMON_NOTFOUND : PAIMON_IO, err,
                             "cannot list %s", path);
    }
    pm_dirent *v = NULL;
    size_t len = 0, cap = 0;
    int rc = PAIMON_OK;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno) rc = pm_fail_errno(e, PAIMON_IO, errno, "cannot list %s", path);
            break;
        }
        const char *nm = de->d_name;
        if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0'))) continue;
        int is_dir = 0, is_link = 0;
#ifdef DT_DIR
        if (de->d_type == DT_DIR) is_dir = 1;
        else if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK)
#endif
        {
            struct stat st;
            if (fstatat(dirfd(d), nm, &st, AT_SYMLINK_NOFOLLOW) == 0) is_link = S_ISLNK(st.st_mode);
            if (fstatat(dirfd(d), nm, &st, 0) == 0) is_dir = S_ISDIR(st.st_mode);
        }
        if (len == cap) {
            size_t nc = cap ? cap * 2 : 16;
            pm_dirent *nv = realloc(v, nc * sizeof *nv);
            if (!nv) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory listing %s", path); break; }
            v = nv;
            cap = nc;
        }
        v[len].name = pm_strdup(nm);
        if (!v[len].name) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory listing %s", path); break; }
        v[len].is_dir = is_dir;
        v[len].is_link = is_link;
        len++;
    }
    closedir(d);
    if (rc != PAIMON_OK) {
        pm_dirents_free(v, len);
        return rc;
    }
    if (len > 1) qsort(v, len, sizeof *v, dirent_cmp);
    *out = v;
    *n = len;
    return PAIMON_OK;
}

static void fill_stat(pm_stat *out, const struct stat *st) {
    out->size = (int64_t)st->st_size;
    out->mtime_ms = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
    out->is_dir = S_ISDIR(st->st_mode) ? 1 : 0;
}

static int local_stat(pm_fileio *io, const char *uri, pm_stat *out, pm_err *e) {
    (void)io;
    const char *path = pm_local_path(uri);
    struct stat st;
    if (stat(path, &st) != 0) {
        int err = errno;
        return pm_fail_errno(e, err == ENOENT || err == ENOTDIR ? PAIMON_NOTFOUND : PAIMON_IO, err,
                             "cannot stat %s", path);
    }
    fill_stat(out, &st);
    return PAIMON_OK;
}

static int local_exists(pm_fileio *io, const char *uri, int *exists, pm_err *e) {
    (void)io;
    const char *path = pm_local_path(uri);
    struct stat st;
    if (stat(path, &st) == 0) { *exists = 1; return PAIMON_OK; }
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) { *exists = 0; return PAIMON_OK; }
    *exists = 0;
    return pm_fail_errno(e, PAIMON_IO, err, "cannot stat %s", path);
}

static int local_mkdirs(pm_fileio *io, const char *uri, pm_err *e) {
    (void)io;
    const char *path = pm_local_path(uri);
    size_t len = strlen(path);
    if (len == 0) return pm_fail(e, PAIMON_MISUSE, "mkdirs: empty path");
    char *p = pm_strdup(path);
    if (!p) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    while (len > 1 && p[len - 1] == '/') p[--len] = '\0';
    int rc = PAIMON_OK;
    /* Create each prefix ending before a '/' and then the whole path. */
    for (size_t i = 1; i <= len; i++) {
        if (i < len && p[i] != '/') continue;
        if (i < len && p[i - 1] == '/') continue;   /* doubled separator */
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) != 0) {
            int err = errno;
            struct stat st;
            if (err == EEXIST || err == EISDIR || err == EROFS || err == EACCES || err == EPERM) {
                if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
                    p[i] = saved;
                    continue;
                }
                if (err == EEXIST) err = ENOTDIR;
            }
            rc = pm_fail_errno(e, PAIMON_IO, err, "cannot create directory %s", p);
            p[i] = saved;
            break;
        }
        p[i] = saved;
    }
    free(p);
    return rc;
}

/* Splits path into a malloc'd directory ("." if none) and a name pointer. */
static char *dir_of(const char *path, const char **name) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        *name = path;
        return pm_strdup(".");
    }
    *name = slash + 1;
    if (slash == path) return pm_strdup("/");
    return pm_strndup(path, (size_t)(slash - path));
}

/* fsync a directory so an entry just linked or renamed into it survives a
 * crash: 0, or the errno. EINVAL means the file system cannot sync a
 * directory at all (nothing more can be done there), not a failure. */
static int fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    int err = fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
    close(fd);
    return err;
}

/* The file is in place (readers see it) but may not survive a crash. */
static int synced_or_uncertain(const char *path, const char *dir, pm_err *e) {
    int err = fsync_dir(dir);
    if (!err) return PAIMON_OK;
    return pm_fail_errno(e, PAIMON_UNCERTAIN, err,
                         "%s was created, but syncing its directory %s failed, so it may not survive a crash", path,
                         dir);
}

/* Write the content into a fresh temp file next to `path` and fsync it. On
 * success *tmp_out is the malloc'd temp path and *dir_out its directory. */
static int write_temp(const char *path, const void *p, size_t n, char **tmp_out, char **dir_out,
                      pm_err *e) {
    const char *name;
    char *dir = dir_of(path, &name);
    if (!dir) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if (!*name) {
        free(dir);
        return pm_fail(e, PAIMON_MISUSE, "cannot write %s: path names a directory", path);
    }
    char uuid[37];
    pm_uuid4(uuid);
    size_t tl = strlen(dir) + strlen(name) + 48;
    char *tmp = malloc(tl);
    if (!tmp) { free(dir); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    snprintf(tmp, tl, "%s/.%s.%s.tmp", strcmp(dir, "/") == 0 ? "" : dir, name, uuid);

    int fd, tried_mkdir = 0;
    for (;;) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) break;
        if (errno == EINTR) continue;
        if (errno == ENOENT && !tried_mkdir) {
            /* Java's LocalFileIO creates missing parent directories. */
            tried_mkdir = 1;
            pm_err e2;
            if (local_mkdirs(NULL, dir, &e2) == PAIMON_OK) continue;
            errno = e2.sys_errno ? e2.sys_errno : ENOENT;
        }
        int err = errno;
        int rc = pm_fail_errno(e, PAIMON_IO, err, "cannot create temp file for %s", path);
        free(tmp);
        free(dir);
        return rc;
    }
    const uint8_t *b = p;
    size_t off = 0;
    int err = 0;
    while (off < n) {
        ssize_t w = write(fd, b + off, n - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            err = errno;
            break;
        }
        off += (size_t)w;
    }
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err && errno != EINTR) err = errno;
    if (err) {
        unlink(tmp);
        free(tmp);
        free(dir);
        return pm_fail_errno(e, PAIMON_IO, err, "cannot write %s", path);
    }
    *tmp_out = tmp;
    *dir_out = dir;
    return PAIMON_OK;
}

static int local_write_atomic(pm_fileio *io, const char *uri, const void *p, size_t n, pm_err *e) {
    (void)io;
    const char *path = pm_local_path(uri);
    char *tmp, *dir;
    int rc = write_temp(path, p, n, &tmp, &dir, e);
    if (rc) return rc;
    if (rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        rc = pm_fail_errno(e, PAIMON_IO, err, "cannot rename temp file to %s", path);
    } else {
        (void)fsync_dir(dir);   /* best effort: hints and consumer files are rewritten anyway */
    }
    free(tmp);
    free(dir);
    return rc;
}

static int link_unsupported(int err) {
    return err == EPERM || err == EXDEV || err == ENOTSUP || err == EOPNOTSUPP || err == ENOSYS ||
           err == EMLINK || err == EINVAL;
}

/* link(2) or renameat2(2) failed with an error that does not say whether
 * the entry was made (EIO; an NFS server whose answer was lost, the known
 * case where link reports failure after linking): whether `path` is now our
 * temp file tells (issue 22: an outcome not proven failed is uncertain).
 * Ours: created. Another file: PAIMON_EXISTS. Missing: nothing was made.
 * Cannot be checked: PAIMON_UNCERTAIN. */
static int settle_link_error(const char *path, const struct stat *ours, const char *dir, int err, const char *how,
                             pm_err *e) {
    struct stat now;
    if (stat(path, &now) == 0) {
        if (now.st_dev == ours->st_dev && now.st_ino == ours->st_ino) return synced_or_uncertain(path, dir, e);
        return pm_fail_errno(e, PAIMON_EXISTS, err, "%s already exists", path);
    }
    int serr = errno;
    if (serr == ENOENT) return pm_fail_errno(e, PAIMON_IO, err, "cannot create %s (%s failed)", path, how);
    return pm_fail_errno(e, PAIMON_UNCERTAIN, serr, "%s: outcome uncertain: %s failed (%s) and checking whether it "
                         "was created failed too", path, how, strerror(err));
}

static int local_create_no_replace(pm_fileio *io, const char *uri, const void *p, size_t n,
                                   pm_err *e) {
    (void)io;
    const char *path = pm_local_path(uri);
    char *tmp, *dir;
    int rc = write_temp(path, p, n, &tmp, &dir, e);
    if (rc) return rc;
    struct stat ours;
    if (stat(tmp, &ours) != 0) {
        rc = pm_fail_errno(e, PAIMON_IO, errno, "cannot create %s (its temp file %s vanished)", path, tmp);
        unlink(tmp);
        free(tmp);
        free(dir);
        return rc;
    }
    if (link(tmp, path) == 0) {
        unlink(tmp);
        rc = synced_or_uncertain(path, dir, e);
    } else {
        int err = errno;
        if (err == EEXIST) {
            rc = pm_fail_errno(e, PAIMON_EXISTS, err, "%s already exists", path);
        } else if (link_unsupported(err)) {
            /* No hard links here: atomic no-replace rename instead. */
            if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) {
                rc = synced_or_uncertain(path, dir, e);
            } else {
                int err2 = errno;
                if (err2 == EEXIST)
                    rc = pm_fail_errno(e, PAIMON_EXISTS, err2, "%s already exists", path);
                else
                    rc = settle_link_error(path, &ours, dir, err2, "renameat2 (link unsupported)", e);
            }
        } else {
            rc = settle_link_error(path, &ours, dir, err, "link", e);
        }
        unlink(tmp);   /* no-op if renameat2 consumed it */
    }
    free(tmp);
    free(dir);
    return rc;
}

static int local_remove(pm_fileio *io, const char *uri, pm_err *e) {
    (void)io;
    const char *path = pm_local_path(uri);
    if (unlink(path) == 0) return PAIMON_OK;
    int err = errno;
    if (err == EISDIR || err == EPERM) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (rmdir(path) == 0) return PAIMON_OK;
            err = errno;
        }
    }
    return pm_fail_errno(e, err == ENOENT || err == ENOTDIR ? PAIMON_NOTFOUND : PAIMON_IO, err,
                         "cannot remove %s", path);
}

/* Every component of rel: not empty, not "." or "..", at most NAME_MAX. */
static int check_components(const char *root, const char *rel, pm_err *e) {
    for (const char *c = rel;;) {
        const char *end = strchr(c, '/');
        size_t cl = end ? (size_t)(end - c) : strlen(c);
        if (cl == 0 || cl > NAME_MAX || (cl == 1 && c[0] == '.') || (cl == 2 && c[0] == '.' && c[1] == '.'))
            return pm_fail(e, PM_IO_OUTSIDE, "%s/%s: empty, '.', '..' or overlong path component", root, rel);
        if (!end) return PAIMON_OK;
        c = end + 1;
    }
}

static int open_root_dir(const char *root, int *fd, pm_err *e) {
    *fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd >= 0) return PAIMON_OK;
    int err = errno;
    return pm_fail_errno(e, err == ENOENT || err == ENOTDIR ? PAIMON_NOTFOUND : PAIMON_IO, err,
                         "cannot open the table directory %s", root);
}

/* The directory rel[0, dir_len) below rootfd in one openat2: the kernel
 * refuses a symlink anywhere on the way (RESOLVE_NO_SYMLINKS) and anything
 * outside rootfd (RESOLVE_BENEATH), which is what the walk in
 * open_dir_within checks one component at a time. -1 on any failure (the
 * caller walks to find out why), or where openat2 is missing (Linux < 5.6,
 * a seccomp filter): then it is not asked again. */
static int openat_beneath(int rootfd, const char *rel, size_t dir_len) {
#ifdef SYS_openat2
    static int unsupported;   /* __atomic */
    char dir[PATH_MAX];
    if (dir_len >= sizeof dir || __atomic_load_n(&unsupported, __ATOMIC_RELAXED)) return -1;
    memcpy(dir, rel, dir_len);
    dir[dir_len] = '\0';
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
    long fd;
    do fd = syscall(SYS_openat2, rootfd, dir, &how, sizeof how); while (fd < 0 && errno == EINTR);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG))
        __atomic_store_n(&unsupported, 1, __ATOMIC_RELAXED);
    return fd < 0 ? -1 : (int)fd;
#else
    (void)rootfd; (void)rel; (void)dir_len;
    return -1;
#endif
}

/* Descend from the table directory (rootfd) through the first dir_len
 * bytes of rel ("a/b" of "a/b/file"), one directory at a time with
 * O_NOFOLLOW: a symlink on the way is refused, never followed. *out: the
 * last directory, a new descriptor (rootfd dup'ed when dir_len is 0). */
static int open_dir_within(int rootfd, const char *root, const char *rel, size_t dir_len, int *out, pm_err *e) {
    if (dir_len && (*out = openat_beneath(rootfd, rel, dir_len)) >= 0) return PAIMON_OK;
    int dfd = dir_len ? rootfd : dup(rootfd);   /* rootfd is the caller's: never closed here */
    if (dfd < 0) return pm_fail_errno(e, PAIMON_IO, errno, "cannot open %s", root);
    char comp[NAME_MAX + 1];
    for (const char *p = rel, *slash; p < rel + dir_len; p = slash + 1) {
        slash = strchr(p, '/');
        size_t cl = (size_t)(slash - p);
        memcpy(comp, p, cl);
        comp[cl] = '\0';
        int next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        if (next < 0) {
            /* ENOTDIR: a symlink (O_NOFOLLOW) or a plain file on the way */
            struct stat lst;
            int is_link = err == ELOOP || (err == ENOTDIR && fstatat(dfd, comp, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
                                           S_ISLNK(lst.st_mode));
            if (dfd != rootfd) close(dfd);
            if (is_link)
                return pm_fail(e, PM_IO_OUTSIDE, "%s/%.*s is a symlink; nothing is removed through it (it may lead outside the table directory)",
                               root, (int)(slash - rel), rel);
            if (err == ENOENT || err == ENOTDIR)
                return pm_fail_errno(e, PAIMON_NOTFOUND, err, "cannot open %s/%.*s", root, (int)(slash - rel), rel);
            return pm_fail_errno(e, PAIMON_IO, err, "cannot open %s/%.*s", root, (int)(slash - rel), rel);
        }
        if (dfd != rootfd) close(dfd);
        dfd = next;
    }
    *out = dfd;
    return PAIMON_OK;
}

/* fstatat/unlinkat of `name` in the directory dfd (reached by
 * open_dir_within): every check applies to the very directory the file is
 * removed from (no check-then-use window). */
static int remove_in_dir(int dfd, const char *root, const char *rel, const char *name, int flags, pm_stat *out,
                         pm_err *e) {
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int err = errno;
        return pm_fail_errno(e, err == ENOENT || err == ENOTDIR ? PAIMON_NOTFOUND : PAIMON_IO, err,
                             "cannot stat %s/%s", root, rel);
    }
    if (flags & PM_RM_EMPTY_DIR) {
        fill_stat(out, &st);
        if (!S_ISDIR(st.st_mode)) return pm_fail(e, PAIMON_IO, "%s/%s is not a directory", root, rel);
        if (!(flags & PM_RM_DRY_RUN) && unlinkat(dfd, name, AT_REMOVEDIR) != 0) {
            int err = errno;
            return pm_fail_errno(e, err == ENOENT ? PAIMON_NOTFOUND : err == ENOTEMPTY || err == EEXIST ? PAIMON_EXISTS : PAIMON_IO,
                                 err, "cannot remove the directory %s/%s", root, rel);
        }
        return PAIMON_OK;
    }
    if (S_ISDIR(st.st_mode)) return pm_fail(e, PAIMON_IO, "%s/%s is a directory; cleanup never removes directories", root, rel);
    fill_stat(out, &st);
    if (!(flags & PM_RM_DRY_RUN) && unlinkat(dfd, name, 0) != 0) {
        int err = errno;
        return pm_fail_errno(e, err == ENOENT ? PAIMON_NOTFOUND : PAIMON_IO, err, "cannot remove %s/%s", root, rel);
    }
    return PAIMON_OK;
}

static size_t dir_part_len(const char *rel) {
    const char *slash = strrchr(rel, '/');
    return slash ? (size_t)(slash - rel) : 0;
}

static int local_remove_within(pm_fileio *io, const char *root_uri, const char *rel, int flags, pm_stat *out,
                               pm_err *e) {
    (void)io;
    const char *root = pm_local_path(root_uri);
    int rootfd, dfd, rc;
    if ((rc = open_root_dir(root, &rootfd, e))) return rc;
    size_t dl = dir_part_len(rel);
    if (!(rc = check_components(root, rel, e)) && !(rc = open_dir_within(rootfd, root, rel, dl, &dfd, e))) {
        rc = remove_in_dir(dfd, root, rel, rel + (dl ? dl + 1 : 0), flags, out, e);
        close(dfd);
    }
    close(rootfd);
    return rc;
}

/* The same for a batch, with the last few directories kept open: a plan
 * deletes many files per bucket directory, and rm-like cost is fstatat +
 * unlinkat per file instead of a fresh descent (3 opens, 3 closes) each.
 * A cached directory was reached by the same O_NOFOLLOW descent; renaming
 * it elsewhere while the batch runs is the same window one descent has. */
#define DIR_CACHE 8
typedef struct dir_slot { char *rel; size_t len; int fd; } dir_slot;

static int local_remove_batch(pm_fileio *io, const char *root_uri, const char *const *rels, size_t n, int flags,
                              pm_stat *sts, int *rcs, char **msgs, pm_err *e) {
    (void)io;
    const char *root = pm_local_path(root_uri);
    int rootfd, rc;
    if ((rc = open_root_dir(root, &rootfd, e))) return rc;
    dir_slot cache[DIR_CACHE];
    memset(cache, 0, sizeof cache);
    for (size_t k = 0; k < DIR_CACHE; k++) cache[k].fd = -1;
    size_t victim = 0;
    int stopped = 0;
    for (size_t i = 0; i < n; i++) {
        pm_err ie;
        pm_err_clear(&ie);
        sts[i] = (pm_stat){0};
        msgs[i] = NULL;
        if (stopped) { rcs[i] = PM_IO_NOT_TRIED; continue; }
        const char *rel = rels[i];
        size_t dl = dir_part_len(rel);
        int dfd = -1;
        rcs[i] = check_components(root, rel, &ie);
        for (size_t k = 0; !rcs[i] && k < DIR_CACHE && dfd < 0; k++)
            if (cache[k].fd >= 0 && cache[k].len == dl && !memcmp(cache[k].rel, rel, dl)) dfd = cache[k].fd;
        if (!rcs[i] && dfd < 0 && !(rcs[i] = open_dir_within(rootfd, root, rel, dl, &dfd, &ie))) {
            dir_slot *sl = &cache[victim];
            victim = (victim + 1) % DIR_CACHE;
            if (sl->fd >= 0) close(sl->fd);
            free(sl->rel);
            sl->rel = pm_strndup(rel, dl);
            sl->len = dl;
            sl->fd = sl->rel ? dfd : -1;
            if (!sl->rel) {   /* no memory for the cache: use this fd once */
                rcs[i] = remove_in_dir(dfd, root, rel, rel + (dl ? dl + 1 : 0), flags, &sts[i], &ie);
                close(dfd);
                if (rcs[i]) msgs[i] = pm_strdup(ie.msg);
                stopped = (flags & PM_RM_STOP_ON_FAILURE) && pm_rm_failed(rcs[i]);
                continue;
            }
        }
        if (!rcs[i]) rcs[i] = remove_in_dir(dfd, root, rel, rel + (dl ? dl + 1 : 0), flags, &sts[i], &ie);
        if (rcs[i]) msgs[i] = pm_strdup(ie.msg);
        stopped = (flags & PM_RM_STOP_ON_FAILURE) && pm_rm_failed(rcs[i]);
    }
    for (size_t k = 0; k < DIR_CACHE; k++) {
        if (cache[k].fd >= 0) close(cache[k].fd);
        free(cache[k].rel);
    }
    close(rootfd);
    return PAIMON_OK;
}

static void local_destroy(pm_fileio *io) {
    free(io);
}

static const pm_fileio_ops local_ops = {
    "file",
    local_read_all,
    local_list,
    local_stat,
    local_exists,
    local_write_atomic,
    local_create_no_replace,
    local_remove,
    local_remove_within,
    local_mkdirs,
    local_destroy,
    PM_IO_LOCAL,
    NULL,   /* list_tree: the generic walk */
    local_remove_batch,
};

pm_fileio *pm_fileio_local(void) {
    pm_fileio *io = malloc(sizeof *io);
    if (!io) return NULL;
    io->ops = &local_ops;
    io->ctx = NULL;
    io->parallel_requests = 0;   /* CPU-bound reads: the caller's threads */
    return io;
}

/* ---- dispatch --------------------------------------------------------- */

typedef enum { SCHEME_LOCAL, SCHEME_S3, SCHEME_PMTEST, SCHEME_OTHER } scheme_kind;

static scheme_kind scheme_of(const char *uri, size_t *len) {
    size_t sl = scheme_len(uri);
    if (len) *len = sl;
    if (sl == 0 || (sl == 4 && prefix_ci(uri, "file"))) return SCHEME_LOCAL;
    if ((sl == 2 && prefix_ci(uri, "s3")) || (sl == 3 && prefix_ci(uri, "s3a"))) return SCHEME_S3;
    if (sl == 6 && prefix_ci(uri, "pmtest")) return SCHEME_PMTEST;
    return SCHEME_OTHER;
}

/* The option namespace of each FileIO and the keys it knows: S3's are
 * the S3 configuration's own (pm_s3_config.c), so the two cannot drift. */
static const char *const pmtest_keys[] = {"pmtest.root", "pmtest.secret-key", NULL};

static const char *const *known_keys(scheme_kind k, const char **prefix) {
    switch (k) {
    case SCHEME_S3: *prefix = "s3."; return NULL;
    case SCHEME_PMTEST: *prefix = "pmtest."; return pmtest_keys;
    default: *prefix = NULL; return NULL;
    }
}

int pm_uri_same_fileio(const char *a, const char *b) {
    size_t la, lb;
    scheme_kind ka = scheme_of(a, &la), kb = scheme_of(b, &lb);
    if (ka != kb) return 0;
    return ka != SCHEME_OTHER || (la == lb && !strncasecmp(a, b, la));
}

int pm_uri_is_bucket_root(const char *uri) {
    size_t sl;
    if (!uri || scheme_of(uri, &sl) == SCHEME_LOCAL || strncmp(uri + sl, "://", 3)) return 0;
    const char *rest = strchr(uri + sl + 3, '/');
    if (!rest) return 1;
    while (*rest == '/') rest++;
    return *rest == '\0';
}

int pm_fileio_option_known(const char *uri, const char *key) {
    const char *prefix;
    if (!uri || !key) return 0;
    if (scheme_of(uri, NULL) == SCHEME_S3) return pm_s3_option_known(key);
    const char *const *keys = known_keys(scheme_of(uri, NULL), &prefix);
    for (size_t i = 0; keys && keys[i]; i++)
        if (!strcmp(keys[i], key)) return 1;
    return 0;
}

int pm_fileio_options_check(const char *uri, const char *const *options, pm_err *e) {
    if (!options) return PAIMON_OK;
    const char *prefix;
    const char *const *keys = known_keys(scheme_of(uri, NULL), &prefix);
    for (size_t i = 0; options[i]; i += 2) {
        const char *key = options[i];
        if (!*key) return pm_fail(e, PAIMON_MISUSE, "%s: an option has an empty key", uri);
        if (!options[i + 1]) return pm_fail(e, PAIMON_MISUSE, "%s: option '%s' has no value", uri, key);
        if (!prefix || strncmp(key, prefix, strlen(prefix)) || pm_fileio_option_known(uri, key)) continue;
        char list[400] = "";
        if (!keys) pm_s3_option_names(list, sizeof list);
        for (size_t k = 0; keys && keys[k]; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", keys[k]);
        return pm_fail(e, PAIMON_MISUSE, "%s: unknown option '%s' for this FileIO (known: %s)", uri, key, list);
    }
    return PAIMON_OK;
}

int pm_option_is_secret(const char *key) {
    static const char *const words[] = {"secret", "password", "token", "access-key", "access.key", "session", NULL};
    for (const char *p = key; p && *p; p++)
        for (size_t w = 0; words[w]; w++)
            if (prefix_ci(p, words[w])) return 1;
    return 0;
}

int pm_options_dup(const char *const *options, char ***out, pm_err *e) {
    *out = NULL;
    if (!options) return PAIMON_OK;
    size_t n = 0;
    while (options[n]) n++;
    char **v = calloc(n + 1, sizeof *v);
    if (!v) return pm_nomem(e);
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = pm_strdup(options[i]))) { pm_options_free(v); return pm_nomem(e); }
    *out = v;
    return PAIMON_OK;
}

void pm_options_free(char **options) {
    for (size_t i = 0; options && options[i]; i++) free(options[i]);
    free(options);
}

static pm_fileio_opener s3_opener = pm_fileio_s3_open;

pm_fileio_opener pm_fileio_set_s3_opener(pm_fileio_opener opener) {
    pm_fileio_opener old = s3_opener;
    s3_opener = opener ? opener : pm_fileio_s3_open;
    return old;
}

static const char *option_value(const char *const *options, const char *key) {
    for (size_t i = 0; options && options[i] && options[i + 1]; i += 2)
        if (!strcmp(options[i], key)) return options[i + 1];
    return NULL;
}

static int pmtest_open(const char *uri, size_t sl, const char *const *options, pm_fileio **out, pm_err *e) {
    const char *root = option_value(options, "pmtest.root");
    if (!root || !*root) return pm_fail(e, PAIMON_MISUSE, "%s: the pmtest FileIO needs the option pmtest.root", uri);
    char prefix[16];
    snprintf(prefix, sizeof prefix, "%.*s://", (int)sl, uri);
    *out = pm_fileio_mapped_new(prefix, root);
    return *out ? PAIMON_OK : pm_nomem(e);
}

int pm_fileio_open(const char *uri, const char *const *options, pm_fileio **out, pm_err *e) {
    *out = NULL;
    if (!uri) return pm_fail(e, PAIMON_MISUSE, "no path given");
    size_t sl;
    scheme_kind kind = scheme_of(uri, &sl);
    if (kind == SCHEME_OTHER) return pm_fail(e, PAIMON_UNSUPPORTED, "no FileIO for scheme '%.*s' (%s)", (int)sl, uri, uri);
    int rc = pm_fileio_options_check(uri, options, e);
    if (rc) return rc;
    if (kind == SCHEME_S3) return s3_opener(uri, options, out, e);
    if (kind == SCHEME_PMTEST) return pmtest_open(uri, sl, options, out, e);
    *out = pm_fileio_local();
    if (!*out) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

int pm_fileio_for_uri(const char *uri, pm_fileio **out, pm_err *e) {
    return pm_fileio_open(uri, NULL, out, e);
}

/* ---- generic list_tree and remove_batch -------------------------------- */

/* Every file below dir, and every empty directory (is_dir 1: what an
 * object store's marker object stands for); symlinked directories are not
 * descended. *n_entries: what dir itself holds. */
static int tree_walk(pm_fileio *io, const char *dir, const char *rel, pm_tree_cb cb, void *cb_ctx, size_t *n_entries,
                     pm_err *e) {
    pm_dirent *d = NULL;
    size_t n = 0;
    *n_entries = 0;
    int rc = pm_io_list(io, dir, &d, &n, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (rc) return rc;
    *n_entries = n;
    for (size_t i = 0; i < n && !rc; i++) {
        char *path = pm_path_join(dir, d[i].name);
        char *r = *rel ? pm_path_join(rel, d[i].name) : pm_strdup(d[i].name);
        if (!path || !r) { free(path); free(r); rc = pm_nomem(e); break; }
        if (d[i].is_dir && !d[i].is_link) {
            size_t below = 0;
            rc = tree_walk(io, path, r, cb, cb_ctx, &below, e);
            pm_stat st;
            if (!rc && below == 0 && pm_io_stat(io, path, &st, e) == PAIMON_OK && st.is_dir) rc = cb(cb_ctx, r, &st, e);
            else pm_err_clear(e);
        } else if (!d[i].is_dir) {
            pm_stat st;
            rc = pm_io_stat(io, path, &st, e);
            if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }   /* vanished meanwhile */
            else if (!rc && !st.is_dir) rc = cb(cb_ctx, r, &st, e);
        }
        free(path);
        free(r);
    }
    pm_dirents_free(d, n);
    return rc;
}

int pm_io_list_tree_dirs(pm_fileio *io, const char *dir, pm_tree_cb cb, void *cb_ctx, pm_err *e) {
    size_t n = 0;
    if (io->ops->list_tree) return io->ops->list_tree(io, dir, cb, cb_ctx, e);
    return tree_walk(io, dir, "", cb, cb_ctx, &n, e);
}

typedef struct files_only_ctx { pm_tree_cb cb; void *ctx; } files_only_ctx;

static int files_only(void *ud, const char *rel, const pm_stat *st, pm_err *e) {
    const files_only_ctx *f = ud;
    return st->is_dir ? 0 : f->cb(f->ctx, rel, st, e);
}

int pm_io_list_tree(pm_fileio *io, const char *dir, pm_tree_cb cb, void *cb_ctx, pm_err *e) {
    files_only_ctx f = {cb, cb_ctx};
    return pm_io_list_tree_dirs(io, dir, files_only, &f, e);
}

int pm_io_remove_batch(pm_fileio *io, const char *root, const char *const *rels, size_t n, int flags,
                       pm_stat *sts, int *rcs, char **msgs, pm_err *e) {
    if (flags & ~(PM_RM_DRY_RUN | PM_RM_STOP_ON_FAILURE))
        return pm_fail(e, PAIMON_MISUSE, "remove_batch: unsupported flags %d", flags);
    if (io->ops->remove_batch) return io->ops->remove_batch(io, root, rels, n, flags, sts, rcs, msgs, e);
    int stopped = 0;
    for (size_t i = 0; i < n; i++) {
        pm_err ie;
        pm_err_clear(&ie);
        sts[i] = (pm_stat){0};
        msgs[i] = NULL;
        if (stopped) { rcs[i] = PM_IO_NOT_TRIED; continue; }
        rcs[i] = pm_io_remove_within(io, root, rels[i], flags & PM_RM_DRY_RUN, &sts[i], &ie);
        if (rcs[i]) msgs[i] = pm_strdup(ie.msg);
        stopped = (flags & PM_RM_STOP_ON_FAILURE) && pm_rm_failed(rcs[i]);
    }
    return PAIMON_OK;
}

int pm_io_fail_too_big(pm_err *e, const char *path, int64_t size, size_t max) {
    char lim[32];
    if (max % ((size_t)1 << 20) == 0) snprintf(lim, sizeof lim, "%zu MiB", max >> 20);
    else snprintf(lim, sizeof lim, "%zu bytes", max);
    if (size < 0) return pm_fail(e, PAIMON_CORRUPT, "%s is more than the %s allowed for metadata", path, lim);
    return pm_fail(e, PAIMON_CORRUPT, "%s is %lld bytes, more than the %s allowed for metadata", path,
                   (long long)size, lim);
}

int pm_io_read_meta(pm_fileio *io, const char *path, size_t max, pm_buf *out, pm_err *e) {
    size_t was = out->read_max;
    out->read_max = max;
    int rc = pm_io_read_all(io, path, out, e);
    out->read_max = was;
    return rc;
}

/* Recorded sizes above this are not trusted with an allocation (corrupt
 * metadata): fstat says. Manifests roll at 8 MiB by default. */
#define READ_HINT_MAX ((int64_t)16 << 20)

int pm_io_read_sized(pm_fileio *io, const char *path, int64_t size, pm_buf *out, pm_err *e) {
    /* the local FileIO itself, not a wrapper with its own read_all (fault injection) */
    if (size >= 0 && size <= READ_HINT_MAX && io->ops->read_all == local_read_all)
        return local_read(pm_local_path(path), size, out, e);
    return pm_io_read_all(io, path, out, e);
}

void pm_fileio_destroy(pm_fileio *io) {
    if (io && io->ops && io->ops->destroy) io->ops->destroy(io);
}

void pm_dirents_free(pm_dirent *d, size_t n) {
    if (!d) return;
    for (size_t i = 0; i < n; i++) free(d[i].name);
    free(d);
}
