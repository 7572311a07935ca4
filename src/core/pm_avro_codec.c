/* Avro block codecs: null, deflate (raw), snappy (+ big-endian CRC-32 of the
 * uncompressed data) and zstandard (frames without content size, so the
 * decoder streams into a growing buffer). */
#include "pm_avro_codec.h"

#include <limits.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

static const char *const codec_names[] = {"null", "deflate", "snappy", "zstandard"};

int pm_avro_codec_lookup(const char *name, size_t len) {
    for (int i = 0; i < 4; i++)
        if (strlen(codec_names[i]) == len && !memcmp(codec_names[i], name, len)) return i;
    return -1;
}

const char *pm_avro_codec_name(int id) {
    return id >= 0 && id < 4 ? codec_names[id] : "?";
}

/* Released zstd decompression contexts, reused by later readers: creating
 * one (a large zeroed allocation) per small file dominated reading many
 * manifests. Bounded in number and in size (a context that grew a large
 * window buffer is freed, not kept); pooled contexts live until the process
 * ends. */
#define DCTX_POOL_MAX 16
#define DCTX_POOL_MAX_BYTES ((size_t)1 << 20)
static pthread_mutex_t dctx_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_DCtx *dctx_pool[DCTX_POOL_MAX];
static size_t dctx_pool_n;

static ZSTD_DCtx *dctx_get(void) {
    ZSTD_DCtx *d = NULL;
    pthread_mutex_lock(&dctx_pool_mu);
    if (dctx_pool_n) d = dctx_pool[--dctx_pool_n];
    pthread_mutex_unlock(&dctx_pool_mu);
    return d ? d : ZSTD_createDCtx();
}

static void dctx_put(ZSTD_DCtx *d) {
    if (!d) return;
    if (ZSTD_sizeof_DCtx(d) > DCTX_POOL_MAX_BYTES) { ZSTD_freeDCtx(d); return; }
    ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
    pthread_mutex_lock(&dctx_pool_mu);
    if (dctx_pool_n < DCTX_POOL_MAX) { dctx_pool[dctx_pool_n++] = d; d = NULL; }
    pthread_mutex_unlock(&dctx_pool_mu);
    ZSTD_freeDCtx(d);
}

/* Released block buffers, pooled the same way: a 64 KiB buffer allocated
 * and freed per small file made malloc grow and trim the heap (brk, page
 * faults) for every manifest list read. */
#define BUF_POOL_MAX 16
static pm_buf buf_pool[BUF_POOL_MAX];
static size_t buf_pool_n;

static void buf_acquire(pm_buf *out) {
    if (out->cap) return;
    pthread_mutex_lock(&dctx_pool_mu);
    if (buf_pool_n) *out = buf_pool[--buf_pool_n];
    pthread_mutex_unlock(&dctx_pool_mu);
    out->len = 0;
}

void pm_avro_codec_buf_release(pm_buf *b) {
    if (b->cap >= 65536 && b->cap <= DCTX_POOL_MAX_BYTES) {
        pthread_mutex_lock(&dctx_pool_mu);
        if (buf_pool_n < BUF_POOL_MAX) { buf_pool[buf_pool_n++] = *b; b->data = NULL; }
        pthread_mutex_unlock(&dctx_pool_mu);
    }
    pm_buf_free(b);
}

/* Bytes of block buffers beyond PM_AVRO_FREE_BYTES held by all readers of
 * the process (see PM_AVRO_INFLATE_BUDGET). */
static size_t inflated_total;   /* __atomic */

void pm_avro_codec_done(pm_avro_codec_ctx *c) {
    if (!c) return;
    if (c->charged) __atomic_sub_fetch(&inflated_total, c->charged, __ATOMIC_ACQ_REL);
    c->charged = 0;
    dctx_put(c->zstd_d);
    ZSTD_freeCCtx(c->zstd_c);
    c->zstd_d = c->zstd_c = NULL;
}

size_t pm_avro_inflated_bytes(void) { return __atomic_load_n(&inflated_total, __ATOMIC_ACQUIRE); }

/* Grow out's storage to exactly `cap` bytes, first charging what lies
 * beyond PM_AVRO_FREE_BYTES to the process-wide budget (on the ctx, given
 * back by pm_avro_codec_done). */
static int reserve_exact(pm_avro_codec_ctx *c, pm_buf *out, size_t cap, pm_err *e) {
    if (cap <= out->cap) return PAIMON_OK;
    size_t charge = cap > PM_AVRO_FREE_BYTES ? cap - PM_AVRO_FREE_BYTES : 0;
    if (charge > c->charged) {
        size_t more = charge - c->charged;
        size_t total = __atomic_add_fetch(&inflated_total, more, __ATOMIC_ACQ_REL);
        if (total > PM_AVRO_INFLATE_BUDGET) {
            __atomic_sub_fetch(&inflated_total, more, __ATOMIC_ACQ_REL);
            return pm_fail(e, PAIMON_CORRUPT,
                           "decompressing needs %zu bytes while the blocks being read already hold %zu; the "
                           "process-wide limit is %zu", cap, total - more, (size_t)PM_AVRO_INFLATE_BUDGET);
        }
        c->charged = charge;
    }
    uint8_t *p = realloc(out->data, cap);
    if (!p) return pm_fail(e, PAIMON_NOMEM, "out of memory decompressing block");
    out->data = p;
    out->cap = cap;
    return PAIMON_OK;
}

/* Called when out has no free space left: add room (at least 64 KiB, else
 * doubling), never beyond max_out in total. */
static int grow(pm_avro_codec_ctx *c, pm_buf *out, size_t max_out, pm_err *e) {
    if (out->len >= max_out)
        return pm_fail(e, PAIMON_CORRUPT, "decompressed block larger than %zu bytes", max_out);
    size_t extra = out->len < 65536 ? 65536 : out->len;
    if (extra > max_out - out->len) extra = max_out - out->len;
    return reserve_exact(c, out, out->len + extra, e);
}

static int inflate_block(pm_avro_codec_ctx *c, const uint8_t *src, size_t n, size_t max_out, pm_buf *out, pm_err *e) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK) return pm_fail(e, PAIMON_NOMEM, "inflateInit2 failed");
    int rc = PAIMON_OK;
    size_t in_left = n;
    zs.next_in = (Bytef *)(uintptr_t)src;
    for (;;) {
        if (zs.avail_in == 0 && in_left) {
            zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
            in_left -= zs.avail_in;
        }
        if (out->cap == out->len && (rc = grow(c, out, max_out, e))) break;
        size_t room = out->cap - out->len;
        if (room > max_out - out->len) room = max_out - out->len;
        if (room > UINT_MAX) room = UINT_MAX;
        if (room == 0) { rc = grow(c, out, max_out, e); if (rc) break; continue; }
        zs.next_out = out->data + out->len;
        zs.avail_out = (uInt)room;
        int zr = inflate(&zs, Z_NO_FLUSH);
        out->len += room - zs.avail_out;
        if (zr == Z_STREAM_END) break;
        if (zr == Z_OK) continue;
        if (zr == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0) {
            rc = pm_fail(e, PAIMON_CORRUPT, "truncated deflate data");
            break;
        }
        if (zr == Z_BUF_ERROR) continue;  /* output full: grow */
        if (zr == Z_MEM_ERROR) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory inflating block"); break; }
        rc = pm_fail(e, PAIMON_CORRUPT, "bad deflate data: %s", zs.msg ? zs.msg : "inflate error");
        break;
    }
    inflateEnd(&zs);
    return rc;
}

static uint32_t crc32_all(const uint8_t *p, size_t n) {
    uLong crc = crc32(0L, Z_NULL, 0);
    while (n) {
        uInt k = n > UINT_MAX ? UINT_MAX : (uInt)n;
        crc = crc32(crc, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)crc;
}

static int snappy_block(pm_avro_codec_ctx *c, const uint8_t *src, size_t n, size_t max_out, pm_buf *out, pm_err *e) {
    if (n < 4) return pm_fail(e, PAIMON_CORRUPT, "snappy block shorter than its CRC (%zu bytes)", n);
    size_t clen = n - 4, ulen = 0;
    if (snappy_uncompressed_length((const char *)src, clen, &ulen) != SNAPPY_OK)
        return pm_fail(e, PAIMON_CORRUPT, "bad snappy data (invalid length header)");
    /* A snappy copy element of >= 2 bytes expands to at most 64 bytes, so a
     * larger claim is a lie: reject it before allocating. */
    if (ulen > max_out || ulen / 32 > clen)
        return pm_fail(e, PAIMON_CORRUPT, "snappy block claims %zu uncompressed bytes from %zu (limit %zu)",
                       ulen, clen, max_out);
    int rc = reserve_exact(c, out, ulen ? ulen : 1, e);
    if (rc) return rc;
    size_t got = ulen;
    if (snappy_uncompress((const char *)src, clen, (char *)out->data, &got) != SNAPPY_OK || got != ulen)
        return pm_fail(e, PAIMON_CORRUPT, "bad snappy data");
    out->len = got;
    const uint8_t *crc = src + clen;
    uint32_t want = (uint32_t)crc[0] << 24 | (uint32_t)crc[1] << 16 | (uint32_t)crc[2] << 8 | crc[3];
    uint32_t have = crc32_all(out->data, out->len);
    if (want != have)
        return pm_fail(e, PAIMON_CORRUPT, "snappy CRC-32 mismatch (stored %08x, computed %08x)", want, have);
    return PAIMON_OK;
}

static int zstd_block(pm_avro_codec_ctx *c, const uint8_t *src, size_t n, size_t max_out, pm_buf *out, pm_err *e) {
    if (!c->zstd_d && !(c->zstd_d = dctx_get()))
        return pm_fail(e, PAIMON_NOMEM, "out of memory (ZSTD_createDCtx)");
    ZSTD_DCtx *d = c->zstd_d;
    if (n == 0) return pm_fail(e, PAIMON_CORRUPT, "empty zstandard data");
    if (n >= 4) {   /* one-shot reports a short non-frame as truncated: say what it is */
        uint32_t magic = (uint32_t)src[0] | (uint32_t)src[1] << 8 | (uint32_t)src[2] << 16 | (uint32_t)src[3] << 24;
        if (magic != ZSTD_MAGICNUMBER && (magic & ZSTD_MAGIC_SKIPPABLE_MASK) != ZSTD_MAGIC_SKIPPABLE_START)
            return pm_fail(e, PAIMON_CORRUPT, "bad zstandard data: not a zstandard frame (magic %08x)", magic);
    }
    /* One-shot decompression straight into the buffer the reader keeps,
     * retried into a larger one while it is too small. Unlike the stream
     * API this needs no window buffer (up to 128 MiB that a frame header
     * may ask for, outside any budget), and the output only grows as far
     * as the data really inflates, within max_out and the process budget. */
    buf_acquire(out);
    if (out->cap < 65536 && max_out >= 65536) (void)pm_buf_reserve(out, 65536);   /* room for a usual block */
    for (;;) {
        size_t space = out->cap < max_out ? out->cap : max_out;
        if (space > 0) {
            ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
            size_t r = ZSTD_decompressDCtx(d, out->data, space, src, n);
            if (!ZSTD_isError(r)) { out->len = r; return PAIMON_OK; }
            ZSTD_ErrorCode code = ZSTD_getErrorCode(r);
            if (code == ZSTD_error_srcSize_wrong) return pm_fail(e, PAIMON_CORRUPT, "truncated zstandard data");
            if (code != ZSTD_error_dstSize_tooSmall)
                return pm_fail(e, PAIMON_CORRUPT, "bad zstandard data: %s", ZSTD_getErrorName(r));
        }
        out->len = space;   /* full: grow() doubles from here, up to max_out */
        int rc = grow(c, out, max_out, e);
        out->len = 0;
        if (rc) return rc;
    }
}

int pm_avro_decompress(pm_avro_codec_ctx *c, int codec, const uint8_t *src, size_t n,
                       size_t max_out, pm_buf *out, pm_err *e) {
    out->len = 0;
    switch (codec) {
    case PM_AVRO_CODEC_NULL:
        if (n > max_out) return pm_fail(e, PAIMON_CORRUPT, "block larger than %zu bytes", max_out);
        return pm_buf_append(out, src, n) ? pm_fail(e, PAIMON_NOMEM, "out of memory") : PAIMON_OK;
    case PM_AVRO_CODEC_DEFLATE: return inflate_block(c, src, n, max_out, out, e);
    case PM_AVRO_CODEC_SNAPPY: return snappy_block(c, src, n, max_out, out, e);
    case PM_AVRO_CODEC_ZSTD: return zstd_block(c, src, n, max_out, out, e);
    default: return pm_fail(e, PAIMON_UNSUPPORTED, "unknown codec id %d", codec);
    }
}

int pm_avro_check_stored(int codec, const uint8_t *src, size_t n, size_t max_out, uint64_t *ulen, int *known,
                         pm_err *e) {
    *ulen = 0;
    *known = 0;
    switch (codec) {
    case PM_AVRO_CODEC_NULL:
        if (n > max_out) return pm_fail(e, PAIMON_CORRUPT, "block larger than %zu bytes", max_out);
        *ulen = n;
        *known = 1;
        return PAIMON_OK;
    case PM_AVRO_CODEC_SNAPPY: {
        if (n < 4) return pm_fail(e, PAIMON_CORRUPT, "snappy block shorter than its CRC (%zu bytes)", n);
        size_t u = 0;
        if (snappy_uncompressed_length((const char *)src, n - 4, &u) != SNAPPY_OK)
            return pm_fail(e, PAIMON_CORRUPT, "bad snappy data (invalid length header)");
        if (u > max_out || u / 32 > n - 4)
            return pm_fail(e, PAIMON_CORRUPT, "snappy block claims %zu uncompressed bytes from %zu (limit %zu)", u,
                           n - 4, max_out);
        *ulen = u;
        *known = 1;
        return PAIMON_OK;
    }
    case PM_AVRO_CODEC_ZSTD: {
        if (n == 0) return pm_fail(e, PAIMON_CORRUPT, "empty zstandard data");
        /* a block may hold several frames; each must end inside it */
        uint64_t total = 0;
        int all_known = 1;
        for (size_t at = 0; at < n;) {
            size_t fs = ZSTD_findFrameCompressedSize(src + at, n - at);
            if (ZSTD_isError(fs))
                return pm_fail(e, PAIMON_CORRUPT, "bad zstandard frame at byte %zu: %s", at, ZSTD_getErrorName(fs));
            unsigned long long cs = ZSTD_getFrameContentSize(src + at, fs);
            if (cs == ZSTD_CONTENTSIZE_ERROR)
                return pm_fail(e, PAIMON_CORRUPT, "bad zstandard frame header at byte %zu", at);
            if (cs == ZSTD_CONTENTSIZE_UNKNOWN) all_known = 0;
            else if ((total += cs) > max_out)
                return pm_fail(e, PAIMON_CORRUPT, "zstandard block claims more than %zu uncompressed bytes", max_out);
            at += fs;
        }
        *ulen = total;
        *known = all_known;
        return PAIMON_OK;
    }
    case PM_AVRO_CODEC_DEFLATE: return PAIMON_OK;
    default: return pm_fail(e, PAIMON_UNSUPPORTED, "unknown codec id %d", codec);
    }
}

static int deflate_block(int level, const uint8_t *src, size_t n, pm_buf *out, pm_err *e) {
    if (level < 0 || level > 9) level = level < 0 ? Z_DEFAULT_COMPRESSION : 9;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return pm_fail(e, PAIMON_NOMEM, "deflateInit2 failed");
    int rc = PAIMON_OK;
    size_t in_left = n;
    zs.next_in = (Bytef *)(uintptr_t)src;
    for (;;) {
        if (zs.avail_in == 0 && in_left) {
            zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
            in_left -= zs.avail_in;
        }
        if (pm_buf_reserve(out, 65536)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
        size_t room = out->cap - out->len;
        if (room > UINT_MAX) room = UINT_MAX;
        zs.next_out = out->data + out->len;
        zs.avail_out = (uInt)room;
        int zr = deflate(&zs, in_left ? Z_NO_FLUSH : Z_FINISH);
        out->len += room - zs.avail_out;
        if (zr == Z_STREAM_END) break;
        if (zr != Z_OK && zr != Z_BUF_ERROR) { rc = pm_fail(e, PAIMON_ERROR, "deflate failed (%d)", zr); break; }
    }
    deflateEnd(&zs);
    return rc;
}

int pm_avro_compress(pm_avro_codec_ctx *c, int codec, int level, const uint8_t *src, size_t n,
                     pm_buf *out, pm_err *e) {
    switch (codec) {
    case PM_AVRO_CODEC_NULL:
        return pm_buf_append(out, src, n) ? pm_fail(e, PAIMON_NOMEM, "out of memory") : PAIMON_OK;
    case PM_AVRO_CODEC_DEFLATE:
        return deflate_block(level, src, n, out, e);
    case PM_AVRO_CODEC_SNAPPY: {
        size_t max = snappy_max_compressed_length(n);
        if (pm_buf_reserve(out, max + 4)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        size_t olen = max;
        if (snappy_compress((const char *)src, n, (char *)out->data + out->len, &olen) != SNAPPY_OK)
            return pm_fail(e, PAIMON_ERROR, "snappy_compress failed");
        out->len += olen;
        uint32_t crc = crc32_all(src, n);
        uint8_t be[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc};
        memcpy(out->data + out->len, be, 4);
        out->len += 4;
        return PAIMON_OK;
    }
    case PM_AVRO_CODEC_ZSTD: {
        if (!c->zstd_c && !(c->zstd_c = ZSTD_createCCtx()))
            return pm_fail(e, PAIMON_NOMEM, "out of memory (ZSTD_createCCtx)");
        ZSTD_CCtx *z = c->zstd_c;
        ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
        if (level < ZSTD_minCLevel()) level = ZSTD_minCLevel();
        if (level > ZSTD_maxCLevel()) level = ZSTD_maxCLevel();
        ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level);
        ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0);
        size_t bound = ZSTD_compressBound(n);
        if (pm_buf_reserve(out, bound)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        size_t r = ZSTD_compress2(z, out->data + out->len, bound, src, n);
        if (ZSTD_isError(r)) return pm_fail(e, PAIMON_ERROR, "zstd compression failed: %s", ZSTD_getErrorName(r));
        out->len += r;
        return PAIMON_OK;
    }
    default:
        return pm_fail(e, PAIMON_UNSUPPORTED, "unknown codec id %d", codec);
    }
}
