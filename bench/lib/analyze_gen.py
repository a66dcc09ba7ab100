#!/usr/bin/env python3
"""
analyze_gen.py -- rows for the ANALYZE benchmark's tables, as COPY text.

Prints ROWS lines "id<TAB>pad": id = 1..ROWS, pad a 760-byte string that is
distinct for every row (16 hex digits derived from id, then a fixed tail),
so the text column has as many distinct values as rows and ANALYZE's
statistics work is that of a real column.  One row is 792 bytes on disk
(24-byte header, int4, 4-byte varlena header, 760 bytes): 10 rows fill an
8 kB page at fillfactor 100, so ROWS = 10 x the wanted number of blocks.

Usage: analyze_gen.py ROWS
"""
import sys

TAIL = ("abcdefghijklmnopqrstuvwxyz0123456789" * 30)[:744]


def main():
    rows = int(sys.argv[1])
    out = sys.stdout
    buf = []
    for i in range(1, rows + 1):
        buf.append("%d\t%08x%08x%s\n" % (i, i, (i * 2654435761) & 0xFFFFFFFF, TAIL))
        if len(buf) >= 4096:
            out.write("".join(buf))
            buf = []
    out.write("".join(buf))
    out.flush()


if __name__ == "__main__":
    main()
