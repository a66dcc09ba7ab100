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

With --lock the blocks are also pinned in the cache (mmap + mlock of the
same ranges, no further I/O) and the program stays until SIGTERM: the
machine is shared, and another process's drop_caches would otherwise evict
them before the VACUUM reads them.  The result line is printed (and
flushed) once they are pinned.

Usage: read_blocks.py RELPATH BLOCKS_FILE [--max-run N] [--lock]
Prints: blocks=N reads=N bytes=N seconds=S [locked=N]
"""
import argparse
import ctypes
import os
import signal
import sys
import time

BLCKSZ = 8192
RELSEG_SIZE = 131072


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("relpath")
    ap.add_argument("blocks_file")
    ap.add_argument("--max-run", type=int, default=128)
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

    t0 = time.monotonic()
    nreads = 0
    nbytes = 0
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
        want = n * BLCKSZ
        got = os.pread(fd_of(seg), want, (start % RELSEG_SIZE) * BLCKSZ)
        if len(got) != want:
            sys.exit("read_blocks.py: short read at block %d" % start)
        nreads += 1
        nbytes += len(got)
        ranges.append((seg, (start % RELSEG_SIZE) * BLCKSZ, want))
        i += n
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
