/* Internal: Avro block codecs (null, deflate, snappy, zstandard). */
#ifndef PM_AVRO_CODEC_H
#define PM_AVRO_CODEC_H

#include "pm_common.h"

typedef enum pm_avro_codec_id {
    PM_AVRO_CODEC_NULL, PM_AVRO_CODEC_DEFLATE, PM_AVRO_CODEC_SNAPPY, PM_AVRO_CODEC_ZSTD
} pm_avro_codec_id;

/* Largest decompressed block accepted by the reader. */
#define PM_AVRO_MAX_BLOCK ((size_t)1 << 30)

/* Codec id for a name (not NUL-terminated), or -1 if unknown. */
int pm_avro_codec_lookup(const char *name, size_t len);
const char *pm_avro_codec_name(int id);

/* Reusable (de)compression state; zero-initialise, release with _done. */
typedef struct pm_avro_codec_ctx {
    void *zstd_d;   /* ZSTD_DCtx */
    void *zstd_c;   /* ZSTD_CCtx */
} pm_avro_codec_ctx;
void pm_avro_codec_done(pm_avro_codec_ctx *c);
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

#endif
