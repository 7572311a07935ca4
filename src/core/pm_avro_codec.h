/* Internal: Avro block codecs (null, deflate, snappy, zstandard). */
#ifndef PM_AVRO_CODEC_H
#define PM_AVRO_CODEC_H

#include "pm_common.h"

typedef enum pm_avro_codec_id {
    PM_AVRO_CODEC_NULL, PM_AVRO_CODEC_DEFLATE, PM_AVRO_CODEC_SNAPPY, PM_AVRO_CODEC_ZSTD
} pm_avro_codec_id;

/* Largest decompressed block accepted by the reader. Java cuts a block
 * once its uncompressed bytes reach Avro's sync interval (64000 bytes,
 * paimon-format.md §6), so a real block is 64 KB plus at most one record;
 * 64 MiB leaves room for rows of that size in Avro data files and stops a
 * bomb (a 133 KB manifest inflating to the old 1 GiB cap) early. */
#define PM_AVRO_MAX_BLOCK ((size_t)64 << 20)
/* Block buffers up to this size are free (the pooled size; every real
 * manifest block fits); beyond it, their bytes count against a budget
 * shared by every reader of the process, whatever the thread count: the
 * memory of all decompressed blocks stays below the budget plus
 * threads x 1 MiB. Four blocks at the per-block cap fit at once. */
#define PM_AVRO_FREE_BYTES ((size_t)1 << 20)
#define PM_AVRO_INFLATE_BUDGET ((size_t)256 << 20)

/* Codec id for a name (not NUL-terminated), or -1 if unknown. */
int pm_avro_codec_lookup(const char *name, size_t len);
const char *pm_avro_codec_name(int id);

/* Reusable (de)compression state; zero-initialise, release with _done. */
typedef struct pm_avro_codec_ctx {
    void *zstd_d;   /* ZSTD_DCtx */
    void *zstd_c;   /* ZSTD_CCtx */
    size_t charged; /* budget bytes held by the output buffer decompressed into */
} pm_avro_codec_ctx;
/* Releases the state and the budget charged for its output buffer: call it
 * when that buffer is freed (the reader does both at close). */
void pm_avro_codec_done(pm_avro_codec_ctx *c);
/* Budget bytes held now by all block buffers (tests). */
size_t pm_avro_inflated_bytes(void);
/* Free a block buffer, or keep it for a later reader (bounded pool). */
void pm_avro_codec_buf_release(pm_buf *b);

/* Decompress src into out (out->len reset to 0 first; out's storage is
 * reused). Output is limited to max_out bytes. On failure returns
 * PAIMON_CORRUPT / PAIMON_NOMEM with a short problem text in e (no file
 * name: the caller prefixes it). Not called for the null codec. */
int pm_avro_decompress(pm_avro_codec_ctx *c, int codec, const uint8_t *src, size_t n,
                       size_t max_out, pm_buf *out, pm_err *e);
/* Compress src, appending to out. */
int pm_avro_compress(pm_avro_codec_ctx *c, int codec, int level, const uint8_t *src, size_t n,
                     pm_buf *out, pm_err *e);

/* What can be checked of a compressed block without decompressing it.
 * zstandard: its frames fill exactly n bytes (ZSTD_findFrameCompressedSize)
 * and none has a broken header (ZSTD_getFrameContentSize); snappy: the
 * length header and the CRC's room; null: the size. *ulen (when *known):
 * the uncompressed size, within max_out. Deflate has no such check. */
int pm_avro_check_stored(int codec, const uint8_t *src, size_t n, size_t max_out, uint64_t *ulen, int *known,
                         pm_err *e);

#endif
