/*-------------------------------------------------------------------------
 *
 * read_plan.c
 *	  The VACUUM benchmark's "oracle": read exactly the planned heap blocks
 *	  of a relation into the OS cache, as fast as the disk allows, from the
 *	  moment the VACUUM starts.
 *
 * A prefetcher cannot do better than a program that knows the plan before
 * the VACUUM starts, starts reading the instant it does, and keeps DEPTH
 * reads in flight without ever pausing: this is that program.  Its VACUUM
 * time against the bound's (the same blocks already cached) says how much
 * of the gap the storage leaves to any prefetcher on this machine; its gap
 * to bgw_prefetch's time is what the prefetcher itself could still take.
 * It is written in C around plain_uring.h (engine_rate.c's reference loop,
 * here with reads coalesced) so that it costs the VACUUM as little CPU as
 * the prefetcher does: on a 2-CPU machine a Python reader's threads are not
 * free.
 *
 * Blocks (PLAN_FILE: one block number a line, ascending) live in 1 GB
 * segments: block b is in RELPATH (b < 131072) or RELPATH.N, at offset
 * (b % 131072) * 8192.  Adjacent blocks are read with one read of up to
 * MAX_RUN blocks, as the prefetcher does; kernel readahead is off
 * (POSIX_FADV_RANDOM), so that the cache holds the planned blocks only.
 *
 * With GO_FIFO the program first prints "ready" and waits for a line on
 * that FIFO, so that its own start-up is not inside the timed part.
 *
 * Usage: read_plan RELPATH PLAN_FILE DEPTH MAX_RUN [GO_FIFO]
 * Prints: blocks=N reads=N bytes=N seconds=S
 * Exits non-zero on any error or short read.
 *
 *-------------------------------------------------------------------------
 */
#include "plain_uring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLCKSZ		8192
#define RELSEG_SIZE	131072
#define MAX_SEGMENTS 64

static void
fail(const char *what, int err)
{
	fprintf(stderr, "read_plan: %s: %s\n", what, strerror(err));
	exit(1);
}

/* The descriptor of a segment of the relation, opened on first use. */
static int
segment_fd(const char *relpath, int segment)
{
	static int	fds[MAX_SEGMENTS];
	static int	nopened = 0;
	char		path[4096];
	int			rc;

	while (nopened <= segment)
		fds[nopened++] = -1;
	if (fds[segment] >= 0)
		return fds[segment];
	if (segment == 0)
		snprintf(path, sizeof(path), "%s", relpath);
	else
		snprintf(path, sizeof(path), "%s.%d", relpath, segment);
	fds[segment] = open(path, O_RDONLY);
	if (fds[segment] < 0)
		fail(path, errno);
	rc = posix_fadvise(fds[segment], 0, 0, POSIX_FADV_RANDOM);
	if (rc != 0)
		fail("posix_fadvise", rc);
	return fds[segment];
}

/*
 * The plan's blocks as reads: runs of adjacent blocks in one segment, at
 * most max_run blocks each.  Sets *nreads and *nblocks.
 */
static PlainRead *
load_plan(const char *relpath, const char *path, int max_run,
		  long *nreads, long *nblocks)
{
	FILE	   *fh = fopen(path, "r");
	PlainRead  *reads = NULL;
	long		cap = 0;
	long		n = 0;
	long		blocks = 0;
	long		block;
	long		prev = -2;
	int			prev_segment = -1;

	if (fh == NULL)
		fail(path, errno);
	while (fscanf(fh, "%ld", &block) == 1)
	{
		int			segment = (int) (block / RELSEG_SIZE);

		if (block < 0 || segment >= MAX_SEGMENTS || block <= prev)
		{
			fprintf(stderr, "read_plan: %s: block %ld out of order or range\n", path, block);
			exit(1);
		}
		blocks++;
		if (n > 0 && block == prev + 1 && segment == prev_segment &&
			reads[n - 1].length < (size_t) max_run * BLCKSZ)
			reads[n - 1].length += BLCKSZ;
		else
		{
			if (n == cap)
			{
				cap = cap ? cap * 2 : 1024;
				reads = realloc(reads, cap * sizeof(PlainRead));
				if (reads == NULL)
					fail("realloc", ENOMEM);
			}
			reads[n].fd = segment_fd(relpath, segment);
			reads[n].offset = (off_t) (block % RELSEG_SIZE) * BLCKSZ;
			reads[n].length = BLCKSZ;
			n++;
		}
		prev = block;
		prev_segment = segment;
	}
	fclose(fh);
	*nreads = n;
	*nblocks = blocks;
	return reads;
}

int
main(int argc, char **argv)
{
	PlainRead  *reads;
	PlainRing	ring;
	long		nreads;
	long		nblocks;
	long		errors;
	long long	bytes = 0;
	int			depth;
	int			max_run;
	struct timespec t0;
	struct timespec t1;

	if (argc < 5 || argc > 6)
	{
		fprintf(stderr, "usage: read_plan RELPATH PLAN_FILE DEPTH MAX_RUN [GO_FIFO]\n");
		return 2;
	}
	depth = atoi(argv[3]);
	max_run = atoi(argv[4]);
	if (depth < 1 || depth > 4096 || max_run < 1 || max_run > 1024)
	{
		fprintf(stderr, "read_plan: DEPTH must be 1-4096 and MAX_RUN 1-1024\n");
		return 2;
	}
	reads = load_plan(argv[1], argv[2], max_run, &nreads, &nblocks);
	for (long i = 0; i < nreads; i++)
		bytes += reads[i].length;
	plain_ring_init(&ring, depth, (size_t) max_run * BLCKSZ);

	if (argc == 6)
	{
		FILE	   *go;
		char		line[64];

		printf("ready\n");
		fflush(stdout);
		go = fopen(argv[5], "r");
		if (go == NULL)
			fail(argv[5], errno);
		if (fgets(line, sizeof(line), go) == NULL)
		{
			fprintf(stderr, "read_plan: %s closed without a line\n", argv[5]);
			return 1;
		}
		fclose(go);
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	errors = plain_ring_read_all(&ring, reads, nreads);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (errors > 0)
	{
		fprintf(stderr, "read_plan: %ld of %ld reads failed or came back short\n",
				errors, nreads);
		return 1;
	}
	printf("blocks=%ld reads=%ld bytes=%lld seconds=%.3f\n",
		   nblocks, nreads, bytes,
		   (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	plain_ring_destroy(&ring);
	free(reads);
	return 0;
}
