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
 * It is written in C with one io_uring loop (engine_rate.c's "plain" loop,
 * with reads coalesced) so that it costs the VACUUM as little CPU as the
 * prefetcher does: on a 2-CPU machine a Python reader's threads are not
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
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLCKSZ		8192
#define RELSEG_SIZE	131072
#define MAX_SEGMENTS 64

typedef struct PlanRead
{
	int			segment;
	off_t		offset;
	size_t		length;
} PlanRead;

static void
fail(const char *what, int err)
{
	fprintf(stderr, "read_plan: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The plan's blocks as reads: runs of adjacent blocks in one segment, at
 * most max_run blocks each.  Sets *nblocks.
 */
static PlanRead *
load_plan(const char *path, int max_run, long *nreads, long *nblocks)
{
	FILE	   *fh = fopen(path, "r");
	PlanRead   *reads = NULL;
	long		cap = 0;
	long		n = 0;
	long		blocks = 0;
	long		block;
	long		prev = -2;

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
		if (n > 0 && block == prev + 1 && reads[n - 1].segment == segment &&
			reads[n - 1].length < (size_t) max_run * BLCKSZ)
			reads[n - 1].length += BLCKSZ;
		else
		{
			if (n == cap)
			{
				cap = cap ? cap * 2 : 1024;
				reads = realloc(reads, cap * sizeof(PlanRead));
				if (reads == NULL)
					fail("realloc", ENOMEM);
			}
			reads[n].segment = segment;
			reads[n].offset = (off_t) (block % RELSEG_SIZE) * BLCKSZ;
			reads[n].length = BLCKSZ;
			n++;
		}
		prev = block;
	}
	fclose(fh);
	*nreads = n;
	*nblocks = blocks;
	return reads;
}

int
main(int argc, char **argv)
{
	const char *relpath;
	PlanRead   *reads;
	long		nreads;
	long		nblocks;
	int			depth;
	int			max_run;
	int			fds[MAX_SEGMENTS];
	struct io_uring ring;
	char	   *bufs;
	int		   *free_bufs;
	int			nfree;
	long		next = 0;
	long		done = 0;
	long long	bytes = 0;
	double		t0;
	int			rc;

	if (argc < 5 || argc > 6)
	{
		fprintf(stderr, "usage: read_plan RELPATH PLAN_FILE DEPTH MAX_RUN [GO_FIFO]\n");
		return 2;
	}
	relpath = argv[1];
	depth = atoi(argv[3]);
	max_run = atoi(argv[4]);
	if (depth < 1 || depth > 4096 || max_run < 1 || max_run > 1024)
	{
		fprintf(stderr, "read_plan: DEPTH must be 1-4096 and MAX_RUN 1-1024\n");
		return 2;
	}
	reads = load_plan(argv[2], max_run, &nreads, &nblocks);

	for (int s = 0; s < MAX_SEGMENTS; s++)
		fds[s] = -1;
	for (long i = 0; i < nreads; i++)
	{
		int			s = reads[i].segment;
		char		path[4096];

		if (fds[s] >= 0)
			continue;
		if (s == 0)
			snprintf(path, sizeof(path), "%s", relpath);
		else
			snprintf(path, sizeof(path), "%s.%d", relpath, s);
		fds[s] = open(path, O_RDONLY);
		if (fds[s] < 0)
			fail(path, errno);
		rc = posix_fadvise(fds[s], 0, 0, POSIX_FADV_RANDOM);
		if (rc != 0)
			fail("posix_fadvise", rc);
	}

	free_bufs = malloc(depth * sizeof(int));
	if (free_bufs == NULL ||
		posix_memalign((void **) &bufs, 4096, (size_t) depth * max_run * BLCKSZ) != 0)
		fail("allocating buffers", ENOMEM);
	memset(bufs, 0, (size_t) depth * max_run * BLCKSZ);
	for (int i = 0; i < depth; i++)
		free_bufs[i] = i;
	nfree = depth;
	rc = io_uring_queue_init(depth, &ring, 0);
	if (rc < 0)
		fail("io_uring_queue_init", -rc);

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

	t0 = now_sec();
	while (done < nreads)
	{
		struct io_uring_cqe *cqe;
		unsigned	head;
		unsigned	seen = 0;

		while (nfree > 0 && next < nreads)
		{
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			int			b = free_bufs[--nfree];
			PlanRead   *r = &reads[next];

			io_uring_prep_read(sqe, fds[r->segment],
							   bufs + (size_t) b * max_run * BLCKSZ,
							   r->length, r->offset);
			/* the buffer in the low 32 bits, the read above */
			io_uring_sqe_set_data64(sqe, ((uint64_t) next << 32) | (uint32_t) b);
			next++;
		}
		rc = io_uring_submit_and_wait(&ring, 1);
		if (rc < 0 && rc != -EINTR)
			fail("io_uring_submit_and_wait", -rc);
		io_uring_for_each_cqe(&ring, head, cqe)
		{
			long		i = (long) (cqe->user_data >> 32);

			if (cqe->res < 0)
				fail("read", -cqe->res);
			if ((size_t) cqe->res != reads[i].length)
			{
				fprintf(stderr, "read_plan: short read in segment %d at offset %lld\n",
						reads[i].segment, (long long) reads[i].offset);
				return 1;
			}
			bytes += cqe->res;
			free_bufs[nfree++] = (int) (cqe->user_data & 0xffffffff);
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		done += seen;
	}
	printf("blocks=%ld reads=%ld bytes=%lld seconds=%.3f\n",
		   nblocks, nreads, bytes, now_sec() - t0);
	io_uring_queue_exit(&ring);
	return 0;
}
