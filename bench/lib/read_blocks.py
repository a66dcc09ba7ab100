#!/usr/bin/env python3
"""
read_blocks.py -- pre-read given 8 kB blocks of a relation into the OS cache.

Reads the block numbers in BLOCKS_FILE (one a line, ascending) from the
relation's main fork: RELPATH is the path of its first segment (the data
directory joined with pg_relation_filepath()); block b lives in segment
b // 131072 (1 GB segments: RELPATH, RELPATH.1, ...) at offset
(b % 131072) * 8192.  Adjacent blocks are read with one pread of up to
--max-run blocks; readahead is switched off (POSIX_FADV_RANDOM) so that the
cache holds those blocks and not their neighbours.  Used by the VACUUM
benchmark's "bound" configuration: the server is stopped, the cache
dropped, then exactly the blocks the VACUUM will read are loaded.

With --threads N the reads are issued by N threads at once (N reads in
flight, like the prefetcher's depth), each taking the next range in
ascending order; the "seconds" printed is then how long the disk takes to
deliver exactly these blocks with that depth, nothing else running: a
floor for any prefetcher, which must read the same blocks while the
VACUUM runs.  (The reads release the GIL, so the threads do overlap.)

With --lock the blocks are also pinned in the cache (mmap + mlock of the
same ranges, no further I/O) and the program stays until SIGTERM: the
machine is shared, and another process's drop_caches would otherwise evict
them before the VACUUM reads them.  The result line is printed (and
flushed) once they are pinned.

Usage: read_blocks.py RELPATH BLOCKS_FILE [--max-run N] [--threads N] [--lock]
Prints: blocks=N reads=N bytes=N seconds=S [locked=N]
"""
import argparse
import ctypes
import os
import signal
import sys
import threading
import time

BLCKSZ = 8192
RELSEG_SIZE = 131072


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("relpath")
    ap.add_argument("blocks_file")
    ap.add_argument("--max-run", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lock", action="store_true")
    args = ap.parse_args()

    with open(args.blocks_file) as fh:
        blocks = [int(x) for x in fh if x.strip()]

    fds = {}

    def fd_of(seg):
        if seg not in fds:
            path = args.relpath if seg == 0 else "%s.%d" % (args.relpath, seg)
            fd = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            fds[seg] = fd
        return fds[seg]

    # the reads: (segment, offset, length), adjacent blocks coalesced
    ranges = []
    i = 0
    while i < len(blocks):
        start = blocks[i]
        seg = start // RELSEG_SIZE
        n = 1
        while (i + n < len(blocks) and n < args.max_run
               and blocks[i + n] == start + n
               and (start + n) // RELSEG_SIZE == seg):
            n += 1
        ranges.append((seg, (start % RELSEG_SIZE) * BLCKSZ, n * BLCKSZ))
        i += n
    for seg in sorted({r[0] for r in ranges}):
        fd_of(seg)

    next_range = iter(ranges)
    lock = threading.Lock()
    failures = []

    def reader():
        while True:
            with lock:
                r = next(next_range, None)
            if r is None:
                return
            seg, off, want = r
            got = os.pread(fds[seg], want, off)
            if len(got) != want:
                failures.append("short read in segment %d at offset %d" % (seg, off))
                return

    t0 = time.monotonic()
    threads = [threading.Thread(target=reader) for _ in range(max(args.threads, 1))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        sys.exit("read_blocks.py: " + failures[0])
    nreads = len(ranges)
    nbytes = sum(r[2] for r in ranges)
    secs = time.monotonic() - t0
    if not args.lock:
        for fd in fds.values():
            os.close(fd)
        print("blocks=%d reads=%d bytes=%d seconds=%.3f"
              % (len(blocks), nreads, nbytes, secs))
        return

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    PROT_READ, MAP_SHARED = 1, 1
    maps = {}
    for seg, fd in fds.items():
        size = os.fstat(fd).st_size
        addr = libc.mmap(None, size, PROT_READ, MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            sys.exit("read_blocks.py: mmap: %s" % os.strerror(ctypes.get_errno()))
        maps[seg] = addr
        libc.madvise(ctypes.c_void_p(addr), ctypes.c_size_t(size), 1)  # MADV_RANDOM: no read-around
    locked = 0
    for seg, off, length in ranges:
        if libc.mlock(maps[seg] + off, length) != 0:
            sys.exit("read_blocks.py: mlock: %s" % os.strerror(ctypes.get_errno()))
        locked += length
    print("blocks=%d reads=%d bytes=%d seconds=%.3f locked=%d"
          % (len(blocks), nreads, nbytes, secs, locked // BLCKSZ), flush=True)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
