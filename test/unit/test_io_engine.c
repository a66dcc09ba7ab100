/*-------------------------------------------------------------------------
 *
 * test_io_engine.c
 *	  Unit test of the I/O engine against the real kernel.
 *
 * The engine's value is in what the kernel does with its requests, so this
 * test uses no mocks: it writes a 64 MB temporary file (under $TMPDIR, else
 * /tmp), and for both methods checks that every submitted read and advice
 * comes back exactly once with the right byte count (8 kB blocks and
 * coalesced 128 kB ranges, end of file, bad descriptors, invalid
 * arguments), the in-flight
 * accounting and the capacity limit, the eventfd protocol, bounded waits,
 * destruction with reads in flight, and, with mincore(), that the pages
 * read or advised really end up in the page cache after
 * POSIX_FADV_DONTNEED emptied it.  A forked child with a seccomp filter checks the fallback to fadvise
 * when io_uring_setup is refused.
 *
 * The temporary file is unlinked as soon as it is created, so it goes away
 * however the test ends.  Prints each failure, then "N passed, N failed";
 * exits 1 if anything failed.
 *
 *-------------------------------------------------------------------------
 */
#include "io_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE	((off_t) 64 * 1024 * 1024)
#define BLCKSZ		8192
#define RANGE_SIZE	(128 * 1024)	/* a coalesced read of 16 blocks */
#define DEPTH		32
#define TMPFS_MAGIC_NUMBER 0x01021994

static int	npassed;
static int	nfailed;
static const char *current = "";	/* method under test, for messages */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static void *file_map;			/* the test file, mapped for mincore() only */

/* Count one check; print it, with its line and message, if it failed. */
#define CHECK(cond, ...) \
	do { \
		if (cond) \
			npassed++; \
		else \
		{ \
			nfailed++; \
			printf("FAIL [%s] line %d: ", current, __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
		} \
	} while (0)

/* xorshift64: reproducible offsets without depending on libc's rand(). */
static uint64_t
rng_next(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Milliseconds elapsed since *start (CLOCK_MONOTONIC). */
static double
elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000.0 +
		(now.tv_nsec - start->tv_nsec) / 1e6;
}

/* One read to drive through the engine, and what came back. */
typedef struct Req
{
	int			fd;
	off_t		offset;
	size_t		len;
	bool		advise;			/* io_engine_advise() instead of a read */
	int			expect;			/* expected result */
	int			result;
	int			seen;			/* completions carrying this tag */
} Req;

/* Submit a request as a read or an advice, as it says. */
static bool
submit_req(IoEngine *engine, const Req *req, uint64_t tag)
{
	if (req->advise)
		return io_engine_advise(engine, req->fd, req->offset, req->len, tag);
	return io_engine_submit(engine, req->fd, req->offset, req->len, tag);
}

/*
 * Push reqs[0..n-1] through the engine keeping it as full as it accepts
 * (tag = index), the way the prefetch worker does: submit until refused,
 * flush, reap, wait when nothing was ready.  Records every completion in
 * its Req and returns the largest in-flight count seen; stops early if a
 * wait times out (10 s) so that a lost completion fails instead of hanging.
 */
static int
drive(IoEngine *engine, Req *reqs, int n, int capacity)
{
	IoCompletion out[16];
	int			next = 0;
	int			done = 0;
	int			max_seen = 0;
	int			early_refusals = 0;
	int			flush_errors = 0;
	int			unknown_tags = 0;

	while (done < n)
	{
		int			got;

		while (next < n && submit_req(engine, &reqs[next], (uint64_t) next))
			next++;
		if (io_engine_inflight(engine) > max_seen)
			max_seen = io_engine_inflight(engine);
		if (next < n && io_engine_inflight(engine) != capacity)
			early_refusals++;
		if (io_engine_flush(engine) != 0)
			flush_errors++;

		got = io_engine_reap(engine, out, 16);
		for (int i = 0; i < got; i++)
		{
			uint64_t	tag = out[i].tag;

			if (tag >= (uint64_t) n)
			{
				unknown_tags++;
				continue;
			}
			reqs[tag].seen++;
			reqs[tag].result = out[i].result;
		}
		done += got;
		if (got == 0 && io_engine_wait(engine, 1, 10000) <= 0)
		{
			CHECK(false, "no completion within 10 s (%d of %d done)", done, n);
			break;
		}
	}
	CHECK(early_refusals == 0, "submit refused below capacity %d times", early_refusals);
	CHECK(flush_errors == 0, "flush failed %d times", flush_errors);
	CHECK(unknown_tags == 0, "%d completions with unknown tags", unknown_tags);
	return max_seen;
}

/* Check that every request came back once with its expected result. */
static void
check_reqs(const Req *reqs, int n, const char *what)
{
	int			bad_seen = 0;
	int			bad_result = 0;
	int			first = -1;

	for (int i = 0; i < n; i++)
	{
		if (reqs[i].seen != 1)
			bad_seen++;
		else if (reqs[i].result != reqs[i].expect)
			bad_result++;
		else
			continue;
		if (first < 0)
			first = i;
	}
	CHECK(bad_seen == 0, "%s: %d of %d tags not returned exactly once (tag %d seen %d times)",
		  what, bad_seen, n, first, first >= 0 ? reqs[first].seen : 0);
	CHECK(bad_result == 0, "%s: %d of %d wrong results (tag %d: got %d, expected %d)",
		  what, bad_result, n, first, first >= 0 ? reqs[first].result : 0,
		  first >= 0 ? reqs[first].expect : 0);
}

/* A read of an 8 kB block or a 128 kB range at a random aligned offset. */
static void
random_req(Req *req, int fd)
{
	bool		range = (rng_next() % 4) == 0;

	req->fd = fd;
	req->len = range ? RANGE_SIZE : BLCKSZ;
	req->offset = (off_t) (rng_next() % ((FILE_SIZE - req->len) / BLCKSZ + 1)) * BLCKSZ;
	req->advise = false;
	req->expect = (int) req->len;
	req->result = 0;
	req->seen = 0;
}

/* mincore() of the whole file into vec; false on error. */
static bool
file_mincore(unsigned char *vec)
{
	return mincore(file_map, FILE_SIZE, vec) == 0;
}

/*
 * Drop the file from the page cache (clean pages: it was fsync'ed).  Pages
 * under readahead I/O started by fadvise cannot be dropped until the I/O
 * ends, so retry for a while until mincore shows none.
 */
static void
evict(int fd)
{
	long		page = sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(FILE_SIZE / page);

	for (int attempt = 0; attempt < 300; attempt++)
	{
		int			resident = 0;

		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (vec == NULL || !file_mincore(vec))
			break;
		for (off_t p = 0; p < FILE_SIZE / page; p++)
			resident += vec[p] & 1;
		if (resident == 0)
			break;
		usleep(10000);
	}
	free(vec);
}

/* Number of pages of [offset, offset+len) resident according to mincore. */
static int
resident_pages(const unsigned char *vec, off_t offset, size_t len)
{
	long		page = sysconf(_SC_PAGESIZE);
	int			n = 0;

	for (off_t p = offset / page; p < (off_t) ((offset + len + page - 1) / page); p++)
		n += vec[p] & 1;
	return n;
}


/* Create the engine under test, failing loudly if io_uring fell back. */
static IoEngine *
make_engine(IoMethod method, int depth, size_t max_read)
{
	const char *reason = "";
	IoEngine   *engine = io_engine_create(method, depth, max_read, &reason);

	CHECK(engine != NULL, "io_engine_create returned NULL");
	if (engine == NULL)
		return NULL;
	CHECK(io_engine_method(engine) == method, "got method %s (fallback: %s)",
		  io_method_name(io_engine_method(engine)), reason ? reason : "none");
	CHECK(reason == NULL, "fallback_reason not NULL: %s", reason ? reason : "");
	if (io_engine_method(engine) != method)
	{
		io_engine_destroy(engine);
		return NULL;
	}
	return engine;
}

/*
 * A full batch: submit until refused, check the refusal happens exactly at
 * capacity, flush, wait for all, reap all.
 */
static void
test_capacity(IoMethod method, int fd)
{
	IoEngine   *engine = make_engine(method, DEPTH, RANGE_SIZE);
	Req			reqs[DEPTH + 1];
	IoCompletion out[2 * DEPTH];
	int			n = 0;
	int			got;

	if (engine == NULL)
		return;
	for (int i = 0; i < DEPTH; i++)
	{
		random_req(&reqs[i], fd);
		CHECK(io_engine_submit(engine, fd, reqs[i].offset, reqs[i].len, i),
			  "submit %d of %d refused", i, DEPTH);
		CHECK(io_engine_inflight(engine) == i + 1, "inflight %d after %d submits",
			  io_engine_inflight(engine), i + 1);
	}
	CHECK(!io_engine_submit(engine, fd, 0, BLCKSZ, DEPTH),
		  "submit beyond capacity accepted");
	CHECK(io_engine_inflight(engine) == DEPTH, "inflight %d at capacity",
		  io_engine_inflight(engine));
	CHECK(io_engine_flush(engine) == 0, "flush failed");
	got = io_engine_wait(engine, DEPTH, 10000);
	CHECK(got == DEPTH, "wait for %d returned %d", DEPTH, got);
	CHECK(io_engine_inflight(engine) == DEPTH, "inflight %d before reap",
		  io_engine_inflight(engine));
	while ((got = io_engine_reap(engine, out, 2 * DEPTH)) > 0)
	{
		for (int i = 0; i < got; i++)
		{
			if (out[i].tag < DEPTH)
			{
				reqs[out[i].tag].seen++;
				reqs[out[i].tag].result = out[i].result;
				CHECK(out[i].latency_us < 10000000, "latency %llu us",
					  (unsigned long long) out[i].latency_us);
			}
			else
				CHECK(false, "unexpected tag %llu", (unsigned long long) out[i].tag);
		}
		n += got;
	}
	CHECK(n == DEPTH, "reaped %d of %d", n, DEPTH);
	check_reqs(reqs, DEPTH, "capacity batch");
	CHECK(io_engine_inflight(engine) == 0, "inflight %d after reaping all",
		  io_engine_inflight(engine));
	CHECK(io_engine_reap(engine, out, 2 * DEPTH) == 0, "reap of nothing returned something");
	CHECK(io_engine_submit(engine, fd, 0, BLCKSZ, 0), "submit refused after reaping all");
	io_engine_destroy(engine);

	/* Out-of-range parameters are clamped, not refused: depth 0 means 1. */
	engine = make_engine(method, 0, 0);
	if (engine == NULL)
		return;
	CHECK(io_engine_submit(engine, fd, 0, 0, 1), "depth-1 engine refused its first read");
	CHECK(!io_engine_submit(engine, fd, 0, 0, 2), "depth-1 engine accepted two reads");
	CHECK(io_engine_wait(engine, 1, 10000) == 1, "zero-length read did not complete");
	got = io_engine_reap(engine, out, 1);
	CHECK(got == 1 && out[0].tag == 1 && out[0].result == 0,
		  "zero-length read: got %d completions, result %d", got, got ? out[0].result : 0);
	io_engine_destroy(engine);
}

/* Many reads streamed through a depth-32 engine, cold cache. */
static void
test_stream(IoMethod method, int fd)
{
	enum
	{
	NREQ = 3000};
	IoEngine   *engine = make_engine(method, DEPTH, RANGE_SIZE);
	Req		   *reqs = calloc(NREQ, sizeof(Req));
	int			max_seen;

	if (engine == NULL || reqs == NULL)
	{
		io_engine_destroy(engine);
		free(reqs);
		return;
	}
	evict(fd);
	for (int i = 0; i < NREQ; i++)
		random_req(&reqs[i], fd);
	max_seen = drive(engine, reqs, NREQ, DEPTH);
	check_reqs(reqs, NREQ, "stream");
	CHECK(max_seen == DEPTH, "in-flight peak %d, expected %d", max_seen, DEPTH);
	CHECK(io_engine_inflight(engine) == 0, "inflight %d at end", io_engine_inflight(engine));
	io_engine_destroy(engine);
	free(reqs);
}

/*
 * End of file, bad descriptors and bad arguments: each gives a completion
 * with a short, zero or negative result, never a crash, and the engine goes
 * on working afterwards.
 */
static void
test_edges(IoMethod method, int fd)
{
	IoEngine   *engine = make_engine(method, 4, RANGE_SIZE);
	int			closed_fd;
	int			pipefd[2];
	Req			reqs[12];
	int			n = 0;

	if (engine == NULL)
		return;
	if (pipe(pipefd) != 0)
	{
		CHECK(false, "pipe: %s", strerror(errno));
		io_engine_destroy(engine);
		return;
	}
	/* after pipe(), so that the pipe does not reuse the closed number */
	closed_fd = dup(fd);
	close(closed_fd);

	/* the same cases as reads, then as advices: the same results */
	for (int advise = 0; advise <= 1; advise++)
	{
		n = 0;
#define ADD(f, o, l, e) \
	(reqs[n].fd = (f), reqs[n].offset = (o), reqs[n].len = (l), \
	 reqs[n].advise = advise, reqs[n].expect = (e), reqs[n].result = 0, \
	 reqs[n].seen = 0, n++)
		ADD(fd, FILE_SIZE - 4096, BLCKSZ, 4096);	/* short read at EOF */
		ADD(fd, FILE_SIZE - 4096, RANGE_SIZE, 4096);
		ADD(fd, FILE_SIZE, BLCKSZ, 0);	/* at EOF */
		ADD(fd, FILE_SIZE + 1024 * 1024, BLCKSZ, 0);	/* past EOF */
		ADD(fd, 0, 0, 0);		/* empty read */
		ADD(closed_fd, 0, BLCKSZ, -EBADF);
		ADD(-1, 0, BLCKSZ, -EBADF);
		ADD(fd, -BLCKSZ, BLCKSZ, -EINVAL);	/* negative offset */
		ADD(fd, 0, RANGE_SIZE + 1, -EINVAL);	/* would overrun the scratch */
		ADD(fd, 0, RANGE_SIZE, RANGE_SIZE); /* still works after errors */
		ADD(fd, 3 * BLCKSZ, BLCKSZ, BLCKSZ);
#undef ADD
		drive(engine, reqs, n, 4);
		check_reqs(reqs, n, advise ? "edges, advices" : "edges");
		CHECK(io_engine_inflight(engine) == 0, "inflight %d after edges",
			  io_engine_inflight(engine));
	}
	io_engine_destroy(engine);

	/* A pipe: io_uring waits for data, fadvise says ESPIPE. */
	engine = make_engine(method, 4, RANGE_SIZE);
	if (engine != NULL)
	{
		IoCompletion out[4];
		struct timespec start;
		int			rc;
		double		ms;

		CHECK(io_engine_submit(engine, pipefd[0], 0, BLCKSZ, 7), "pipe read refused");
		clock_gettime(CLOCK_MONOTONIC, &start);
		rc = io_engine_wait(engine, 1, 200);
		ms = elapsed_ms(&start);
		if (method == IO_METHOD_IO_URING)
		{
			CHECK(rc == 0, "wait on a blocked read returned %d", rc);
			CHECK(ms >= 150 && ms < 2000, "wait(200 ms) took %.0f ms", ms);
			CHECK(io_engine_reap(engine, out, 4) == 0, "blocked read reaped");
			CHECK(io_engine_inflight(engine) == 1, "inflight %d with a blocked read",
				  io_engine_inflight(engine));

			/* Destroy must give up on it after its bounded wait. */
			clock_gettime(CLOCK_MONOTONIC, &start);
			io_engine_destroy(engine);
			ms = elapsed_ms(&start);
			CHECK(ms >= 900 && ms < 5000, "destroy with a blocked read took %.0f ms", ms);
		}
		else
		{
			CHECK(rc == 1, "fadvise wait returned %d", rc);
			rc = io_engine_reap(engine, out, 4);
			CHECK(rc == 1 && out[0].tag == 7 && out[0].result == -ESPIPE,
				  "fadvise of a pipe: %d completions, result %d", rc, rc ? out[0].result : 0);
			io_engine_destroy(engine);
		}
	}
	close(pipefd[0]);
	close(pipefd[1]);
}

/*
 * Waits: nothing in flight returns at once even without a timeout; the
 * eventfd becomes readable when reads finish, stays readable while
 * completions are left after a partial reap, and is drained by the reap
 * that takes the last one.
 */
static void
test_wait_and_eventfd(IoMethod method, int fd)
{
	IoEngine   *engine = make_engine(method, DEPTH, RANGE_SIZE);
	IoCompletion out[DEPTH];
	struct timespec start;
	struct pollfd pfd;
	int			total = 0;
	int			spurious = 0;
	int			rc;

	if (engine == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &start);
	rc = io_engine_wait(engine, 5, -1);
	CHECK(rc == 0 && elapsed_ms(&start) < 100, "idle wait returned %d after %.0f ms",
		  rc, elapsed_ms(&start));

	if (method == IO_METHOD_FADVISE)
	{
		CHECK(io_engine_event_fd(engine) == -1, "fadvise event fd %d",
			  io_engine_event_fd(engine));
		io_engine_destroy(engine);
		return;
	}

	pfd.fd = io_engine_event_fd(engine);
	pfd.events = POLLIN;
	CHECK(pfd.fd >= 0, "io_uring event fd %d", pfd.fd);
	CHECK(poll(&pfd, 1, 0) == 0, "event fd readable before any read");

	evict(fd);
	for (int i = 0; i < 4; i++)
		CHECK(io_engine_submit(engine, fd, (off_t) i * 1024 * 1024, BLCKSZ, i), "submit");
	CHECK(io_engine_flush(engine) == 0, "flush failed");

	/*
	 * Sleep on the eventfd, as the worker does, until all four are back,
	 * reaping one at a time.  A wakeup may be spurious (a CQE posted by
	 * task_work between the drain and the ring read signals the eventfd
	 * after its completion was taken), but never repeatedly: the next reap
	 * drains it.
	 */
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (total < 4 && elapsed_ms(&start) < 10000)
	{
		rc = poll(&pfd, 1, 10000);
		CHECK(rc == 1, "poll on event fd returned %d", rc);
		if (rc != 1)
			break;
		rc = io_engine_reap(engine, out, 1);
		if (rc == 0)
			spurious++;
		total += rc > 0 ? rc : 0;
	}
	CHECK(total == 4, "%d of 4 reads seen through the event fd", total);
	CHECK(spurious <= 4, "%d spurious wakeups for 4 reads", spurious);
	rc = poll(&pfd, 1, 0) == 1 ? io_engine_reap(engine, out, DEPTH) : 0;
	CHECK(rc == 0, "%d completions after the last one", rc);
	CHECK(poll(&pfd, 1, 0) == 0, "event fd still readable after draining reap");

	/* A completion refused at submission must wake an eventfd sleeper too. */
	CHECK(io_engine_submit(engine, fd, -1, BLCKSZ, 99), "submit of bad offset refused");
	CHECK(poll(&pfd, 1, 1000) == 1, "event fd not readable for an -EINVAL completion");
	rc = io_engine_reap(engine, out, DEPTH);
	CHECK(rc == 1 && out[0].result == -EINVAL, "bad offset: %d completions, result %d",
		  rc, rc ? out[0].result : 0);

	/* wait() with min_complete above what is in flight returns them all. */
	for (int i = 0; i < 3; i++)
		CHECK(io_engine_submit(engine, fd, (off_t) (i + 8) * 1024 * 1024, BLCKSZ, i), "submit");
	rc = io_engine_wait(engine, 10, 10000);
	CHECK(rc == 3, "wait(10) with 3 in flight returned %d", rc);
	CHECK(io_engine_reap(engine, out, DEPTH) == 3, "reap after wait");
	io_engine_destroy(engine);
}

/*
 * Which pages stay in the page cache is the kernel's business: it may evict
 * any page at any moment (memory pressure from anything else on the
 * machine), so no exact count of resident pages can be asserted after the
 * reads.  What the engine guarantees is that the reads happened and brought
 * the data into the cache: the reads themselves are checked exactly (every
 * tag back once, with the byte count asked for: check_reqs()), and of their
 * pages a large majority, RESIDENT_PCT per cent, must be resident right
 * after.  An engine that read nothing (a lost io_uring read, an fadvise
 * that is a no-op) leaves next to none.
 */
#define RESIDENT_PCT 75

/* The TAP framework's default timeout, PG_TEST_TIMEOUT_DEFAULT (180 s). */
static long
timeout_default_ms(void)
{
	const char *s = getenv("PG_TEST_TIMEOUT_DEFAULT");
	long		secs = (s && atol(s) > 0) ? atol(s) : 180;

	return secs * 1000;
}

/*
 * Pages of reqs[0..n) resident after the reads (vec: mincore() buffer),
 * once at least RESIDENT_PCT per cent of the wanted pages are or, if they
 * never are, at the end.  io_uring reads are in the cache once reaped: one
 * look.  Readahead (the fadvise method, or advices) has no completion to
 * wait for: it is looked at until it has brought in that share, up to the
 * default timeout (only a failure waits that long).  -1 if mincore()
 * failed.
 */
static int
resident_after_reads(IoMethod method, unsigned char *vec, const Req *reqs, int n,
					 int wanted)
{
	bool		readahead = method == IO_METHOD_FADVISE || (n > 0 && reqs[0].advise);

	int			resident = -1;

	for (long waited = 0;; waited += 10)
	{
		if (!file_mincore(vec))
			return -1;
		resident = 0;
		for (int i = 0; i < n; i++)
			resident += resident_pages(vec, reqs[i].offset, reqs[i].len);
		if ((long) resident * 100 >= (long) wanted * RESIDENT_PCT ||
			!readahead || waited >= timeout_default_ms())
			return resident;
		usleep(10000);
	}
}

/*
 * The point of the engine: after reading, the pages are in the page cache.
 * The file is evicted first (skipped, not failed, where eviction does not
 * work, e.g. tmpfs); see resident_after_reads() for what is checked.  Also
 * destroy with reads in flight: it must wait for them, so their pages are
 * in the cache when it returns; and destroy with reads queued but not
 * flushed: io_uring drops them, unread.
 */
static void
test_page_cache(IoMethod method, int fd)
{
	enum
	{
	NREQ = 200};
	long		page = sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(FILE_SIZE / page);
	IoEngine   *engine = make_engine(method, DEPTH, RANGE_SIZE);
	Req			reqs[NREQ];
	int			before = 0;
	int			wanted = 0;
	int			resident = 0;

	if (engine == NULL || vec == NULL)
	{
		io_engine_destroy(engine);
		free(vec);
		return;
	}
	evict(fd);
	for (int i = 0; i < NREQ; i++)
		random_req(&reqs[i], fd);
	CHECK(file_mincore(vec), "mincore: %s", strerror(errno));
	for (int i = 0; i < NREQ; i++)
	{
		before += resident_pages(vec, reqs[i].offset, reqs[i].len);
		wanted += (reqs[i].len + page - 1) / page;
	}
	if (before > 0)
	{
		printf("SKIP [%s] page cache check: %d pages still resident after POSIX_FADV_DONTNEED\n",
			   current, before);
		io_engine_destroy(engine);
		free(vec);
		return;
	}

	/* The ranges read, then advised instead: either brings the pages in. */
	for (int advise = 0; advise <= 1; advise++)
	{
		const char *what = advise ? "advices" : "reads";

		if (advise)
		{
			evict(fd);
			for (int i = 0; i < NREQ; i++)
			{
				reqs[i].advise = true;
				reqs[i].result = 0;
				reqs[i].seen = 0;
			}
		}
		drive(engine, reqs, NREQ, DEPTH);
		check_reqs(reqs, NREQ, what);
		resident = resident_after_reads(method, vec, reqs, NREQ, wanted);
		CHECK((long) resident * 100 >= (long) wanted * RESIDENT_PCT,
			  "%d of %d pages resident after the %s, fewer than %d%%",
			  resident, wanted, what, RESIDENT_PCT);
	}

	/* Destroy right after flushing: it waits, so the pages are there. */
	evict(fd);
	wanted = 0;
	for (int i = 0; i < DEPTH; i++)
	{
		random_req(&reqs[i], fd);
		wanted += (reqs[i].len + page - 1) / page;
		CHECK(io_engine_submit(engine, fd, reqs[i].offset, reqs[i].len, i), "submit");
	}
	CHECK(io_engine_flush(engine) == 0, "flush failed");
	io_engine_destroy(engine);
	if (method == IO_METHOD_IO_URING)
	{
		resident = resident_after_reads(method, vec, reqs, DEPTH, wanted);
		CHECK((long) resident * 100 >= (long) wanted * RESIDENT_PCT,
			  "%d of %d pages resident after destroy with reads in flight, fewer than %d%%",
			  resident, wanted, RESIDENT_PCT);
	}

	/*
	 * Destroy with reads queued but never flushed: accepted, then dropped
	 * with the ring by io_uring, so none of them reads a page (checked where
	 * the ranges were not resident to begin with; nothing else reads this
	 * file).  fadvise issues each advice at submit: nothing to drop.
	 */
	engine = make_engine(method, DEPTH, RANGE_SIZE);
	if (engine != NULL)
	{
		int			accepted = 0;
		int			before_unflushed = -1;

		evict(fd);
		if (file_mincore(vec))
		{
			before_unflushed = 0;
			for (int i = 0; i < DEPTH; i++)
				before_unflushed += resident_pages(vec, (off_t) i * RANGE_SIZE, RANGE_SIZE);
		}
		for (int i = 0; i < DEPTH; i++)
			accepted += io_engine_submit(engine, fd, (off_t) i * RANGE_SIZE, RANGE_SIZE, i);
		CHECK(accepted == DEPTH, "destroy with unflushed reads: %d of %d submissions accepted",
			  accepted, DEPTH);
		CHECK(io_engine_inflight(engine) == DEPTH,
			  "destroy with unflushed reads: %d of %d reads held before destroy",
			  io_engine_inflight(engine), DEPTH);
		io_engine_destroy(engine);
		if (method == IO_METHOD_IO_URING && before_unflushed == 0 && file_mincore(vec))
		{
			resident = 0;
			for (int i = 0; i < DEPTH; i++)
				resident += resident_pages(vec, (off_t) i * RANGE_SIZE, RANGE_SIZE);
			CHECK(resident == 0,
				  "destroy with unflushed reads: %d pages read, the dropped reads should read none",
				  resident);
		}
	}
	free(vec);
}

/*
 * In a child (the filter cannot be removed), make io_uring_setup fail with
 * EPERM as a container runtime's seccomp profile does, and check that
 * creation falls back to fadvise with a reason naming the failure.
 * Returns the child's number of failed checks, or -1 if it could not run.
 */
static int
run_fallback_child(int fd)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};
	pid_t		pid;
	int			status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
	{
		const char *reason = NULL;
		IoEngine   *engine;
		IoCompletion out[1];

		npassed = nfailed = 0;
		current = "fallback";
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
			prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		{
			printf("FAIL [fallback] cannot install seccomp filter: %s\n", strerror(errno));
			_exit(100);
		}
		engine = io_engine_create(IO_METHOD_IO_URING, 8, BLCKSZ, &reason);
		CHECK(engine != NULL, "create returned NULL");
		if (engine == NULL)
			_exit(nfailed);
		CHECK(io_engine_method(engine) == IO_METHOD_FADVISE, "method %s under seccomp",
			  io_method_name(io_engine_method(engine)));
		CHECK(reason != NULL && strstr(reason, "io_uring_queue_init failed") != NULL &&
			  strstr(reason, strerror(EPERM)) != NULL,
			  "reason \"%s\"", reason ? reason : "(null)");
		if (reason != NULL)
			printf("fallback reason under seccomp: %s\n", reason);
		CHECK(io_engine_event_fd(engine) == -1, "event fd %d after fallback",
			  io_engine_event_fd(engine));
		CHECK(io_engine_submit(engine, fd, 0, BLCKSZ, 5), "submit after fallback");
		CHECK(io_engine_reap(engine, out, 1) == 1 && out[0].result == BLCKSZ,
			  "read after fallback");
		io_engine_destroy(engine);
		fflush(stdout);
		_exit(nfailed);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		WEXITSTATUS(status) == 100)
		return -1;
	return WEXITSTATUS(status);
}

/* Write the test file: a non-zero pattern, fsync'ed so it can be evicted. */
static bool
write_file(int fd)
{
	static char buf[1024 * 1024];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char) (i * 131 + 7);
	for (off_t off = 0; off < FILE_SIZE; off += sizeof(buf))
		if (pwrite(fd, buf, sizeof(buf), off) != (ssize_t) sizeof(buf))
			return false;
	return fsync(fd) == 0;
}

int
main(void)
{
	static const IoMethod methods[] = {IO_METHOD_IO_URING, IO_METHOD_FADVISE};
	const char *dir = getenv("TMPDIR");
	char		path[4096];
	struct statfs sfs;
	int			fd;
	int			rc;

	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/test_io_engine.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
	{
		printf("FAIL cannot create a file in %s: %s\n0 passed, 1 failed\n", dir, strerror(errno));
		return 1;
	}
	unlink(path);				/* gone however we exit */
	if (!write_file(fd))
	{
		printf("FAIL cannot write %s: %s\n0 passed, 1 failed\n", path, strerror(errno));
		return 1;
	}
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC_NUMBER)
		printf("note: %s is tmpfs, the page cache checks will be skipped\n", dir);
	file_map = mmap(NULL, FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (file_map == MAP_FAILED)
	{
		printf("FAIL mmap: %s\n0 passed, 1 failed\n", strerror(errno));
		return 1;
	}

	current = "names";
	CHECK(strcmp(io_method_name(IO_METHOD_IO_URING), "io_uring") == 0, "io_uring name");
	CHECK(strcmp(io_method_name(IO_METHOD_FADVISE), "fadvise") == 0, "fadvise name");

	for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++)
	{
		current = io_method_name(methods[m]);
		test_capacity(methods[m], fd);
		test_stream(methods[m], fd);
		test_edges(methods[m], fd);
		test_wait_and_eventfd(methods[m], fd);
		test_page_cache(methods[m], fd);
	}

	current = "fallback";
	rc = run_fallback_child(fd);
	CHECK(rc == 0, rc < 0 ? "child could not run" : "%d checks failed in the child", rc);

	munmap(file_map, FILE_SIZE);
	close(fd);
	printf("%d passed, %d failed\n", npassed, nfailed);
	return nfailed > 0 ? 1 : 0;
}
