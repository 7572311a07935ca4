/* Caller values (paimon_value of paimon.h) -> Paimon values: the type
 * rules of writing (exact integers with range checks, decimals, dates,
 * times, timestamps, strings) and the Avro encoding of ARRAY / MAP /
 * MULTISET / ROW values. Both faces, paimon.h and the Lua binding, convert
 * through here, so they accept and refuse the same values with the same
 * messages ("column 'c' (INT): '2147483648' is out of range ..."). */
#ifndef PM_VALUE_H
#define PM_VALUE_H

#include "pm_common.h"
#include "pm_types.h"

/* How exactly a value is an int64: decimal text, an integer, or a double
 * with no fraction below 2^53 (above it the caller may already have
 * rounded it). */
enum { PM_INT_OK, PM_INT_NOT_INTEGER, PM_INT_RANGE, PM_INT_INEXACT };
int pm_value_int64(const paimon_value *v, int64_t *out);

int pm_type_is_composite(const pm_type *t);

/* An atomic value -> datum of type ty for column col. Strings are not
 * copied (d points into v); a DECIMAL wider than 18 digits goes into dec.
 * PAIMON_MISUSE with the binding's message for a value the type refuses,
 * PAIMON_UNSUPPORTED for types that cannot be written. */
int pm_value_to_datum(const paimon_value *v, const pm_type *ty, const char *col, pm_datum *d,
                      uint8_t dec[16], pm_err *e);

/* Append the Avro binary of v as a value of composite type ty, not null
 * (what pm_datafile_encode_value takes for ARRAY/MAP/ROW columns). */
int pm_value_encode_composite(pm_buf *b, const paimon_value *v, const pm_type *ty, const char *col,
                              pm_err *e);

#endif
