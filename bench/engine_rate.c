/*-------------------------------------------------------------------------
 *
 * engine_rate.c
 *	  Raw read rate of the I/O engine against a minimal liburing loop.
 *
 * The prefetcher is only useful if its engine can read ahead at close to
 * what the disk delivers, so this program measures the engine on the access
 * pattern VACUUM and ANALYZE produce (distinct random 8 kB blocks, read in
 * ascending order, buffered, cold cache) next to the simplest liburing
 * program that does the same thing at the same depth.  Any gap between the
 * two is the engine's own overhead (eventfd signalling and draining, slot
 * bookkeeping, the extra system calls of its submit/flush/reap interface).
 * Synchronous pread and posix_fadvise-ahead + pread are measured too, as
 * the baselines a prefetcher is meant to beat.
 *
 * Usage: engine_rate MODE FILE DEPTH NBLOCKS SEED
 *	MODE	engine		io_engine, waits with io_engine_wait()
 *			engine_poll	io_engine, sleeps in poll() on its eventfd (as the
 *						worker sleeps on its latch and the eventfd)
 *			plain		minimal liburing loop, one 8 kB buffer per read
 *			pread		synchronous pread(), DEPTH ignored
 *			fadvise		posix_fadvise(WILLNEED) DEPTH blocks ahead, then pread()
 * The blocks are NBLOCKS distinct blocks chosen uniformly with SEED (the
 * same SEED gives the same blocks in every mode).  Cache dropping is the
 * caller's job (engine_rate.sh).  Prints one line:
 *	mode=... depth=... blocks=... seconds=... iops=... cpu_us_per_read=... errors=...
 * and exits non-zero on any error or short read.
 *
 *-------------------------------------------------------------------------
 */
#include "io_engine.h"
#include "plain_uring.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLCKSZ	8192

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * CPU time (user + system) of the process so far, in seconds.  It includes
 * the kernel's work done on the process's behalf: io_uring posts buffered
 * read completions from task_work run in the submitting task, and io-wq
 * workers are threads of the process.  Unlike wall time, this hardly
 * depends on the disk, so it shows the engine's overhead even when the
 * shared disk is noisy.
 */
static double
cpu_sec(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* xorshift64*, seeded so that every mode reads the same blocks. */
static uint64_t
rng_next(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545F4914F6CDD1DULL;
}

/*
 * Choose n distinct blocks out of nfile, in ascending order (Knuth's
 * selection sampling, algorithm S: one pass, already sorted).  NULL if out
 * of memory or n > nfile.
 */
static off_t *
choose_blocks(long nfile, long n, uint64_t seed)
{
	off_t	   *offsets = malloc(n * sizeof(off_t));
	uint64_t	state = seed * 0x9E3779B97F4A7C15ULL + 1;
	long		chosen = 0;

	if (offsets == NULL)
		return NULL;
	for (long b = 0; b < nfile && chosen < n; b++)
	{
		double		u = (rng_next(&state) >> 11) * (1.0 / 9007199254740992.0);

		if ((nfile - b) * u < n - chosen)
			offsets[chosen++] = (off_t) b * BLCKSZ;
	}
	if (chosen < n)				/* only if n > nfile */
	{
		free(offsets);
		return NULL;
	}
	return offsets;
}

/*
 * The engine, used the way the prefetch worker uses it: submit until it
 * refuses, flush, reap; when nothing was ready, wait (io_engine_wait, or
 * poll() on the eventfd when use_poll).
 */
static long
run_engine(int fd, const off_t *offsets, long n, int depth, bool use_poll)
{
	const char *reason;
	IoEngine   *engine = io_engine_create(IO_METHOD_IO_URING, depth, BLCKSZ, &reason);
	IoCompletion out[64];
	struct pollfd pfd;
	long		next = 0;
	long		done = 0;
	long		errors = 0;

	if (engine == NULL || reason != NULL)
	{
		fprintf(stderr, "engine_rate: no io_uring engine: %s\n",
				reason ? reason : "out of memory");
		exit(1);
	}
	pfd.fd = io_engine_event_fd(engine);
	pfd.events = POLLIN;

	while (done < n)
	{
		int			got;

		while (next < n && io_engine_submit(engine, fd, offsets[next], BLCKSZ,
											(uint64_t) next))
			next++;
		if (io_engine_flush(engine) != 0)
			errors++;
		got = io_engine_reap(engine, out, 64);
		for (int i = 0; i < got; i++)
			if (out[i].result != BLCKSZ)
				errors++;
		done += got;
		if (got == 0)
		{
			if (use_poll)
				(void) poll(&pfd, 1, -1);
			else
				(void) io_engine_wait(engine, 1, -1);
		}
	}
	io_engine_destroy(engine);
	return errors;
}

/*
 * The reference: the smallest liburing loop that keeps depth reads in
 * flight (plain_uring.h), one 8 kB read per block.
 */
static long
run_plain(int fd, const off_t *offsets, long n, int depth)
{
	PlainRead  *reads = malloc(n * sizeof(PlainRead));
	PlainRing	ring;
	long		errors;

	if (reads == NULL)
	{
		fprintf(stderr, "engine_rate: out of memory\n");
		exit(1);
	}
	for (long i = 0; i < n; i++)
	{
		reads[i].fd = fd;
		reads[i].offset = offsets[i];
		reads[i].length = BLCKSZ;
	}
	plain_ring_init(&ring, depth, BLCKSZ);
	errors = plain_ring_read_all(&ring, reads, n);
	plain_ring_destroy(&ring);
	free(reads);
	return errors;
}

/*
 * Synchronous reads, optionally with posix_fadvise(WILLNEED) issued
 * distance blocks ahead (PostgreSQL's own prefetch scheme).
 */
static long
run_pread(int fd, const off_t *offsets, long n, int distance)
{
	char		buf[BLCKSZ];
	long		ahead = 0;
	long		errors = 0;

	for (long i = 0; i < n; i++)
	{
		while (distance > 0 && ahead < n && ahead <= i + distance)
			(void) posix_fadvise(fd, offsets[ahead++], BLCKSZ, POSIX_FADV_WILLNEED);
		if (pread(fd, buf, BLCKSZ, offsets[i]) != BLCKSZ)
			errors++;
	}
	return errors;
}

int
main(int argc, char **argv)
{
	const char *mode;
	struct stat st;
	off_t	   *offsets;
	long		nblocks;
	long		errors;
	int			depth;
	int			fd;
	double		start;
	double		cpu_start;
	double		secs;
	double		cpu;

	if (argc != 6)
	{
		fprintf(stderr, "usage: engine_rate engine|engine_poll|plain|pread|fadvise FILE DEPTH NBLOCKS SEED\n");
		return 2;
	}
	mode = argv[1];
	depth = atoi(argv[3]);
	nblocks = atol(argv[4]);
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0)
	{
		fprintf(stderr, "engine_rate: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (depth < 1 || nblocks < 1 || nblocks > st.st_size / BLCKSZ)
	{
		fprintf(stderr, "engine_rate: bad depth or block count\n");
		return 2;
	}
	if (strcmp(mode, "engine") != 0 && strcmp(mode, "engine_poll") != 0 &&
		strcmp(mode, "plain") != 0 && strcmp(mode, "pread") != 0 &&
		strcmp(mode, "fadvise") != 0)
	{
		fprintf(stderr, "engine_rate: unknown mode \"%s\"\n", mode);
		return 2;
	}
	offsets = choose_blocks(st.st_size / BLCKSZ, nblocks, strtoull(argv[5], NULL, 10));
	if (offsets == NULL)
		return 1;

	start = now_sec();
	cpu_start = cpu_sec();
	if (strcmp(mode, "engine") == 0)
		errors = run_engine(fd, offsets, nblocks, depth, false);
	else if (strcmp(mode, "engine_poll") == 0)
		errors = run_engine(fd, offsets, nblocks, depth, true);
	else if (strcmp(mode, "plain") == 0)
		errors = run_plain(fd, offsets, nblocks, depth);
	else if (strcmp(mode, "pread") == 0)
		errors = run_pread(fd, offsets, nblocks, 0);
	else
		errors = run_pread(fd, offsets, nblocks, depth);
	secs = now_sec() - start;
	cpu = cpu_sec() - cpu_start;

	printf("mode=%s depth=%d blocks=%ld seconds=%.4f iops=%.0f cpu_us_per_read=%.2f errors=%ld\n",
		   mode, strcmp(mode, "pread") == 0 ? 1 : depth, nblocks, secs,
		   nblocks / secs, cpu * 1e6 / nblocks, errors);
	free(offsets);
	close(fd);
	return errors == 0 ? 0 : 1;
}
