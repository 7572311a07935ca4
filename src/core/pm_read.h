/* The rows of a snapshot as Java Paimon's batch read returns them
 * (docs/writing.md "Reading"):
 *  - append tables: every live data file, minus the rows its deletion
 *    vector removes (deletion-vectors.enabled);
 *  - primary-key tables, per (partition, bucket): level-0 files unseen
 *    with deletion vectors (unless deletion-vectors.merge-on-read) and with
 *    merge-engine=first-row (CoreOptions.batchScanSkipLevel0); a bucket
 *    whose files are all above level 0 with _DELETE_ROW_COUNT 0 (and
 *    deletion vectors, first-row or a single level) read file by file
 *    (MergeTreeSplitGenerator's raw-convertible split); otherwise merged
 *    by the _KEY_ columns: deduplicate keeps the row with the largest
 *    (_SEQUENCE_NUMBER, add before retract), first-row the first add; a
 *    winning -U/-D removes the key (DropDeleteReader); ignore-delete skips
 *    retract rows. Deletion vectors apply before the merge.
 *  - merge engines partial-update, aggregation (and any other) and
 *    sequence.field: PAIMON_UNSUPPORTED naming the option and the table.
 * Memory: the list of live files (not their rows), then one bucket at a
 * time: a merge holds a hash set of the bucket's distinct keys (their
 * BinaryRow bytes + 24 bytes each) while it reads the bucket once, then
 * a bit per row of the bucket's files while it reads them again to hand
 * out the winners; one data file and one deletion-vector file in memory. */
#ifndef PM_READ_H
#define PM_READ_H

#include "pm_table.h"
#include "pm_types.h"
#include "pm_avro.h"

typedef struct pm_read pm_read;

/* t's latest schema gives the columns (t->schema->fields, in order). */
int pm_read_open(paimon_table *t, const pm_snapshot *s, const pm_partition_filter *f, pm_read **out,
                 pm_err *e);
/* Next row: vals/raw as pm_datafile_reader_next (n = the schema's field
 * count), *file the data file's path relative to the table (or its
 * external path). PAIMON_DONE at the end. Valid until the next call. */
int pm_read_next(pm_read *r, pm_datum *vals, const pm_avro_value **raw, const char **file, pm_err *e);
void pm_read_close(pm_read *r);                /* NULL-safe */

/* Row positions of a deletion vector: `data` (len bytes) is the entry at
 * the range's offset of a deletion-vector index file ([int32 BE size]
 * [int32 BE magic 1581511376][portable 32-bit RoaringBitmap][int32 BE
 * CRC-32 of magic + bitmap]); `length` the range's length. Sets bit p of
 * bits (room for n_rows bits, zeroed by the caller) for each position p;
 * a position >= n_rows, a bad size, magic, checksum or bitmap ->
 * PAIMON_CORRUPT naming `display`. 64-bit bitmaps -> PAIMON_UNSUPPORTED. */
int pm_dv_decode(const uint8_t *data, size_t len, int64_t length, uint8_t *bits, int64_t n_rows,
                 const char *display, pm_err *e);

#endif
