#!/usr/bin/env python3
"""One line for an autovacuum_oltp run: what the foreground waited on while
the large tables were being vacuumed (the share of the 20 ms samples of
active pgbench backends, by wait event; CPU: none), and the pacer's rate and
probe latency while it paced (medians).

Usage: oltp_waits.py RUNDIR (with progress.txt, foreground.txt and, for a
configuration with the extension, pacing.txt)."""
import os
import statistics
import sys
from collections import Counter


def rows(run, name):
    """The lines of a \\watch output: (epoch, [the other fields])."""
    path = os.path.join(run, name)
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip('\n').split('|')
            try:
                out.append((float(parts[0]), parts[1:]))
            except (ValueError, IndexError):
                pass
    return out


def main(run):
    # the vacuums' window: from the first to the last progress sample
    progress = rows(run, 'progress.txt')
    if not progress:
        return 'no vacuum sampled'
    start, end = progress[0][0], progress[-1][0]

    waits = Counter()
    for at, r in rows(run, 'foreground.txt'):
        if start <= at <= end and len(r) >= 2:
            waits[r[0]] += int(r[1])
    total = sum(waits.values())
    shares = ', '.join('%s %d %%' % (e, round(100.0 * n / total))
                       for e, n in waits.most_common(5)) if total else 'none'

    states = Counter(r[0] for at, r in rows(run, 'pacing.txt')
                                 if start <= at <= end and r and r[0])
    paced = [r for at, r in rows(run, 'pacing.txt')
             if start <= at <= end and len(r) >= 4 and r[0] == 'paced'
             and '' not in r[1:4]]
    if paced:
        pacing = 'paced in %d of %d samples (%s): rate %.0f MB/s, probe %.0f us, base %.0f us (medians)' % (
            len(paced), sum(states.values()),
            ', '.join('%s %d' % (k, n) for k, n in states.most_common()),
            statistics.median(float(r[1]) for r in paced),
            statistics.median(float(r[2]) for r in paced),
            statistics.median(float(r[3]) for r in paced))
    else:
        pacing = 'not paced'
    return 'foreground waits during the vacuums (%d backend samples): %s; %s' % (
        total, shares, pacing)


if __name__ == '__main__':
    print(main(sys.argv[1]))
