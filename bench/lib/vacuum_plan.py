#!/usr/bin/env python3
"""
vacuum_plan.py -- the heap blocks a PostgreSQL 15 VACUUM will read.

Reads pg_visibility_map() output on stdin, one block a line, as
"blkno<TAB>all_visible<TAB>all_frozen" (t/f), e.g. from
    COPY (SELECT blkno, all_visible, all_frozen
            FROM pg_visibility_map('tab') ORDER BY blkno) TO STDOUT
and writes the block numbers the VACUUM reads, ascending, one a line, to
--out (or prints only the count with --count).

This is written from vacuumlazy.c of PostgreSQL 15 (lazy_scan_heap and
lazy_scan_skip) for the benchmark, independently of the extension's own
planner (src/vacuum_plan.c), so that the benchmark checks the extension
rather than repeating it:

    next_unskippable = lazy_scan_skip(0)
    for blkno in 0 .. rel_pages-1:
        if blkno == next_unskippable:
            next_unskippable = lazy_scan_skip(blkno + 1)
        elif skipping_current_range:
            continue                      # skipped
        read blkno

    lazy_scan_skip(next): walk from next while the block is all-visible,
    is not the last block, and (aggressive only) is all-frozen;
    skipping_current_range = (blocks walked >= SKIP_PAGES_THRESHOLD = 32).

Usage: vacuum_plan.py [--aggressive] [--out FILE] [--count] < vm.tsv
"""
import argparse
import sys

SKIP_PAGES_THRESHOLD = 32


def plan(visible, frozen, aggressive=False):
    """Yield the blocks read, given per-block all_visible/all_frozen lists."""
    rel_pages = len(visible)

    def scan_skip(next_block):
        blk = next_block
        n = 0
        while blk < rel_pages:
            if not visible[blk]:
                break
            if blk == rel_pages - 1:
                break
            if aggressive and not frozen[blk]:
                break
            blk += 1
            n += 1
        return blk, n >= SKIP_PAGES_THRESHOLD

    next_unskippable, skipping = scan_skip(0)
    blkno = 0
    while blkno < rel_pages:
        if blkno == next_unskippable:
            next_unskippable, skipping = scan_skip(blkno + 1)
        elif skipping:
            blkno = next_unskippable   # jump over the skipped range
            continue
        yield blkno
        blkno += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--aggressive", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--count", action="store_true")
    args = ap.parse_args()

    visible, frozen = [], []
    for line in sys.stdin:
        f = line.rstrip("\n").split("\t")
        if len(f) < 3:
            continue
        blk = int(f[0])
        if blk != len(visible):
            sys.exit("vacuum_plan.py: blocks not consecutive at %d" % blk)
        visible.append(f[1] == "t")
        frozen.append(f[2] == "t")

    blocks = list(plan(visible, frozen, args.aggressive))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("".join("%d\n" % b for b in blocks))
    notvis = visible.count(False)
    if args.count or not args.out:
        print("%d" % len(blocks))
    else:
        print("rel_pages=%d not_all_visible=%d planned=%d"
              % (len(visible), notvis, len(blocks)))


if __name__ == "__main__":
    main()
