#!/usr/bin/python3
"""Decode a manifest with python3-avro's DataFileReader (the baseline of
bench/run.sh).

    /usr/bin/python3 bench/py_decode.py FILE [--reps N]

Each repetition opens the file and iterates every record (python3-avro
materializes every field as Python objects; no further walk, which favours
the baseline). Prints per-repetition times on stderr and a final line
    RESULT entries=N reps=R best_s=.. median_s=..
"""

import argparse
import statistics
import sys
import time

try:
    import avro.datafile
    import avro.io
except ImportError as ex:  # pragma: no cover
    sys.stderr.write("py_decode: %s (run with /usr/bin/python3)\n" % ex)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    times = []
    entries = None
    for i in range(args.reps):
        t0 = time.perf_counter()
        n = 0
        with open(args.file, "rb") as fh:
            reader = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
            for _rec in reader:
                n += 1
            reader.close()
        dt = time.perf_counter() - t0
        times.append(dt)
        if entries is not None and n != entries:
            sys.stderr.write("py_decode: repetitions disagree\n")
            return 1
        entries = n
        sys.stderr.write("  rep %d: %.2f s (%.0f entries/s)\n" % (i + 1, dt, n / dt))
    print("RESULT entries=%d reps=%d best_s=%.6f median_s=%.6f"
          % (entries, args.reps, min(times), statistics.median(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
