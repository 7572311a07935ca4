/* S3 FileIO: s3:// and s3a:// URIs. (Placeholder until the client lands.) */
#include "pm_fileio.h"

int pm_fileio_s3_open(const char *uri, const char *const *options, pm_fileio **out, pm_err *e) {
    (void)options;
    *out = NULL;
    return pm_fail(e, PAIMON_UNSUPPORTED, "%s: S3 support is not built in", uri);
}
