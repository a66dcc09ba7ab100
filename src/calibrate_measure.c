/*-------------------------------------------------------------------------
 *
 * calibrate_measure.c
 *	  The measurement behind bgw_prefetch_calibrate(): cold-cache reads of a
 *	  scratch file of the tablespace, through the extension's I/O engine.
 *
 * Step length: at most 20,000 reads, at most 1 in 8 of the file's blocks
 * (the density of a sparse ANALYZE sample, so that the sorted pattern has
 * the gaps a real sample has -- reading every block would be sequential),
 * and at most a time budget.  Every (pattern, depth) is measured in
 * CAL_ROUNDS rounds, the depths ascending in one round and descending in
 * the next so that drift on a shared machine hits the curve evenly, and the
 * median round is reported.  The blocks are drawn afresh for every
 * calibration (and round): reading the same blocks as the last calibration
 * could find them in a cache below the server's (a RAID controller's, a
 * virtual machine host's) and look faster than the storage is.
 *
 * Scratch file.  It is an ordinary fd.c temporary file, pgsql_tmp<pid>.<n>
 * in the tablespace's pgsql_tmp directory, opened by OpenTemporaryFile()
 * with the transaction's temporary-tablespace list briefly replaced by the
 * one tablespace (and restored at once).  So every cleanup path the server
 * has for temporary files applies: resource-owner close-and-delete at
 * abort (ERROR, query cancel, statement_timeout), AtProcExit_Files() at
 * backend exit (pg_terminate_backend, FATAL), RemovePgTempFiles() at the
 * next start after a crash; temp_file_limit and log_temp_files apply too.
 *
 * The engine is plain malloc'd C state whose life is exactly one call of
 * the calibration, so it is destroyed in a PG_TRY/PG_CATCH block (which
 * re-throws): that runs on every ERROR (cancel and statement_timeout
 * included) at whatever nesting the function was called (savepoint,
 * PL/pgSQL exception block), which a transaction callback would miss
 * without also a subtransaction callback, and it needs no static pointer
 * as a resource-owner release callback would.  It runs before the abort
 * closes (and deletes) the scratch file, so reads still in flight are
 * waited for while their file is open.  At backend exit (FATAL) the kernel
 * tears down the ring with the process.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "commands/tablespace.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/lock.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "bgw_prefetch.h"
#include "calibrate_internal.h"
#include "compat.h"
#include "io_engine.h"

/*
 * Reads: 8 kB random; 256 kB sequential, the prefetcher's largest read
 * (BGWP_MAX_READ_BLOCKS), so that seq_us_per_block is what its streaming
 * costs.
 */
#define CAL_RANDOM_READ		BLCKSZ
#define CAL_SEQ_READ		(BGWP_MAX_READ_BLOCKS * BLCKSZ)
#define CAL_SEQ_MAX_DEPTH	8

/* Step length: reads, sample density (1 block in N), time */
#define CAL_STEP_MAX_READS	20000
#define CAL_SAMPLE_EVERY	8
#define CAL_STEP_BUDGET_US	INT64CONST(2000000)
#define CAL_ROUNDS			3

/* Writes of the fill, and the wait of one engine call */
#define CAL_FILL_CHUNK		(1024 * 1024)
#define CAL_WAIT_MS			100

/* A step warns when more than this fraction of the file stayed cached */
#define CAL_MAX_CACHED_FRACTION 0.01

const char *const cal_pattern_names[CAL_NUM_PATTERNS] = {
	"sorted random", "unsorted random", "sequential"
};

/* Everything a measurement step needs */
typedef struct CalState
{
	File		file;
	char		path[MAXPGPATH];
	int64		file_bytes;
	IoEngine   *engine;
	uint32	   *latencies;		/* one per read of the longest step */
	char	   *pread_buf;		/* fadvise method's reads */
	unsigned char *mincore_vec;
	double		max_cached_fraction;
	int			round;
} CalState;

/* Microseconds on the I/O engine's clock, which its latencies use too */
static int64
now_us(void)
{
	return (int64) (io_engine_clock_ns() / 1000);
}

/*
 * One calibration of a tablespace at a time (the second would measure the
 * first's load).  A transaction-level advisory lock in database 0, so that
 * it is cluster-wide and goes away with the transaction, aborted or not.
 */
static void
lock_tablespace_calibration(const CalArgs *args)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, InvalidOid, CAL_LOCK_MAGIC, args->spcid, 2);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("a calibration of tablespace \"%s\" is already running",
						args->spcname),
				 errhint("Wait for it to finish, or cancel it with pg_cancel_backend().")));
}

/*
 * Refuse sizes that would hit temp_file_limit half-way, or leave the file
 * system almost full (pg_wal may live there too).
 */
static void
check_room(const CalArgs *args, const char *dir)
{
	struct statvfs fs;
	int64		want = (int64) args->size_mb * 1024 * 1024;

	if (temp_file_limit >= 0 && (int64) args->size_mb * 1024 > temp_file_limit)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("size_mb %d exceeds temp_file_limit (%dkB)",
						args->size_mb, temp_file_limit),
				 errhint("Use a smaller size_mb, or raise temp_file_limit for this session.")));

	if (statvfs(dir, &fs) == 0)
	{
		int64		avail = (int64) fs.f_bavail * fs.f_frsize;
		int64		total = (int64) fs.f_blocks * fs.f_frsize;
		int64		headroom = Min(total / 20, INT64CONST(1024) * 1024 * 1024);

		if (avail - want < headroom)
			ereport(ERROR,
					(errcode(ERRCODE_DISK_FULL),
					 errmsg("not enough free space in tablespace \"%s\" for a %d MB scratch file",
							args->spcname, args->size_mb),
					 errdetail("%lld MB are free; the calibration leaves at least %lld MB free.",
							   (long long) (avail >> 20),
							   (long long) (headroom >> 20)),
					 errhint("Use a smaller size_mb.")));
	}
}

/* ---------------- the scratch file ---------------- */

/*
 * Create the scratch file in the tablespace's temporary directory; see the
 * header comment.  Fails if the server put it anywhere else (it silently
 * falls back to the database's tablespace when the asked one fails).
 */
static File
open_scratch_file(const CalArgs *args, char *path)
{
	char		dir[MAXPGPATH];
	Oid		   *saved;
	Oid		   *mine;
	int			nsaved;
	int			size = 8;
	size_t		dirlen;
	File		file;

	TempTablespacePath(dir, args->spcid);
	if (MakePGDirectory(dir) < 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", dir)));
	check_room(args, dir);

	/* the transaction's list, to put back: it lives until its end */
	PrepareTempTablespaces();
	for (;;)
	{
		saved = MemoryContextAlloc(TopTransactionContext, size * sizeof(Oid));
		nsaved = GetTempTablespaces(saved, size);
		if (nsaved < size)
			break;
		size *= 2;
	}
	mine = MemoryContextAlloc(TopTransactionContext, sizeof(Oid));
	*mine = args->spcid;

	SetTempTablespaces(mine, 1);
	PG_TRY();
	{
		file = OpenTemporaryFile(false);
	}
	PG_FINALLY();
	{
		SetTempTablespaces(saved, nsaved);
	}
	PG_END_TRY();

	strlcpy(path, FilePathName(file), MAXPGPATH);
	dirlen = strlen(dir);
	if (strncmp(path, dir, dirlen) != 0 || path[dirlen] != '/')
	{
		FileClose(file);
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not create a scratch file in tablespace \"%s\"",
						args->spcname),
				 errdetail("The server created \"%s\" instead of a file in \"%s\".",
						   path, dir)));
	}
	return file;
}

/* The file's kernel descriptor, reopened by fd.c if it had closed it. */
static int
scratch_fd(CalState *st)
{
	if (FileSize(st->file) < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not access scratch file \"%s\": %m", st->path)));
	return FileGetRawDesc(st->file);
}

/*
 * Write the file with pseudo-random bytes (no holes, nothing a compressing
 * or deduplicating file system could shortcut) and make every page clean.
 * fdatasync() is called directly, not pg_fsync(): the point is clean pages
 * that POSIX_FADV_DONTNEED can drop, which fsync = off must not prevent.
 */
static void
fill_scratch_file(CalState *st)
{
	char	   *buf = palloc(CAL_FILL_CHUNK);
	pg_prng_state prng;

	pg_prng_seed(&prng, UINT64CONST(0x62677770));
	for (int i = 0; i < CAL_FILL_CHUNK / (int) sizeof(uint64); i++)
		((uint64 *) buf)[i] = pg_prng_uint64(&prng);

	for (int64 off = 0; off < st->file_bytes; off += CAL_FILL_CHUNK)
	{
		int			rc;

		CHECK_FOR_INTERRUPTS();
		for (int b = 0; b < CAL_FILL_CHUNK; b += BLCKSZ)
			*(uint64 *) (buf + b) = (uint64) (off + b);
		rc = FileWrite(st->file, buf, CAL_FILL_CHUNK, off, PG_WAIT_EXTENSION);
		if (rc != CAL_FILL_CHUNK)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write scratch file \"%s\": %m", st->path)));
	}
	pfree(buf);

	pgstat_report_wait_start(PG_WAIT_EXTENSION);
	if (fdatasync(scratch_fd(st)) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not fdatasync scratch file \"%s\": %m", st->path)));
	pgstat_report_wait_end();
}

/*
 * Drop the file from the page cache, and check with mincore() that it
 * went: a page that stays (mapped or locked by someone, or dirty) would
 * make the step look faster than the storage is.
 */
static void
make_cold(CalState *st)
{
	int			fd = scratch_fd(st);
	int			rc;
	void	   *map;

	rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (rc != 0)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not drop scratch file \"%s\" from the page cache: %s",
						st->path, strerror(rc))));

	map = mmap(NULL, st->file_bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (map != MAP_FAILED)
	{
		int64		pages = (st->file_bytes + getpagesize() - 1) / getpagesize();
		int64		cached = 0;

		if (mincore(map, st->file_bytes, st->mincore_vec) == 0)
		{
			for (int64 i = 0; i < pages; i++)
				cached += st->mincore_vec[i] & 1;
			st->max_cached_fraction = Max(st->max_cached_fraction,
										  (double) cached / pages);
		}
		munmap(map, st->file_bytes);
	}
}

/* ---------------- measuring ---------------- */

static int
cmp_uint32(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return (x > y) - (x < y);
}

/* Fill *out from the latencies of the step's reads. */
static void
step_summary(CalState *st, int nlat, int64 bytes, int64 elapsed_us,
			 StepResult *out)
{
	double		sum = 0;

	out->reads = nlat;
	out->bytes = bytes;
	out->elapsed_us = Max(elapsed_us, 1);
	out->mean_latency_us = 0;
	out->p99_latency_us = 0;
	if (nlat == 0)
		return;
	for (int i = 0; i < nlat; i++)
		sum += st->latencies[i];
	qsort(st->latencies, nlat, sizeof(uint32), cmp_uint32);
	out->mean_latency_us = sum / nlat;
	out->p99_latency_us = st->latencies[(int) ceil(0.99 * nlat) - 1];
}

/* A read came back short or failed. */
static void
report_bad_read(CalState *st, int result, size_t len)
{
	if (result < 0)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not read scratch file \"%s\": %s",
						st->path, strerror(-result))));
	ereport(ERROR,
			(errcode(ERRCODE_IO_ERROR),
			 errmsg("short read of scratch file \"%s\": %d of %zu bytes",
					st->path, result, len)));
}

/*
 * io_uring: keep "depth" reads in flight until nreads are done or the time
 * budget is spent (then the reads in flight are drained); latency is the
 * engine's submit-to-completion time.
 */
static void
measure_uring(CalState *st, const off_t *offsets, int nreads, size_t len,
			  int depth, StepResult *out)
{
	IoEngine   *engine = st->engine;
	IoCompletion comps[64];
	int			fd = scratch_fd(st);
	int			next = 0;
	int			done = 0;
	int			limit = nreads;
	int64		start = now_us();
	int64		deadline = start + CAL_STEP_BUDGET_US;

	while (done < limit)
	{
		int			rc;
		int			n;

		while (next < limit && io_engine_inflight(engine) < depth &&
			   io_engine_submit(engine, fd, offsets[next], len, next))
			next++;

		pgstat_report_wait_start(PG_WAIT_EXTENSION);
		rc = io_engine_wait(engine, 1, CAL_WAIT_MS);
		pgstat_report_wait_end();
		if (rc < 0)
			ereport(ERROR,
					(errcode(ERRCODE_IO_ERROR),
					 errmsg("io_uring failed while reading scratch file \"%s\": %s",
							st->path, strerror(-rc))));

		while ((n = io_engine_reap(engine, comps, lengthof(comps))) > 0)
		{
			for (int i = 0; i < n; i++)
			{
				if (comps[i].result != (int) len)
					report_bad_read(st, comps[i].result, len);
				st->latencies[done + i] = (uint32) Min(comps[i].latency_us, PG_UINT32_MAX);
			}
			done += n;
		}

		if (next < limit && now_us() >= deadline)
			limit = next;
		CHECK_FOR_INTERRUPTS();
	}
	step_summary(st, done, (int64) done * len, now_us() - start, out);
}

/*
 * fadvise: posix_fadvise(WILLNEED) up to "depth" reads ahead, then pread()
 * the oldest, as a consumer behind the fadvise prefetcher (or core's own
 * prefetch) does; latency is the pread()'s.
 */
static void
measure_fadvise(CalState *st, const off_t *offsets, int nreads, size_t len,
				int depth, StepResult *out)
{
	IoEngine   *engine = st->engine;
	IoCompletion comps[64];
	int			fd = scratch_fd(st);
	int			advised = 0;
	int			limit = nreads;
	int			done = 0;
	int64		start = now_us();
	int64		deadline = start + CAL_STEP_BUDGET_US;

	for (done = 0; done < limit; done++)
	{
		int64		t0;
		ssize_t		rc;
		int			n;

		while (advised < limit && advised < done + depth &&
			   io_engine_submit(engine, fd, offsets[advised], len, advised))
			advised++;
		while ((n = io_engine_reap(engine, comps, lengthof(comps))) > 0)
			for (int i = 0; i < n; i++)
				if (comps[i].result < 0)
					report_bad_read(st, comps[i].result, len);

		t0 = now_us();
		pgstat_report_wait_start(PG_WAIT_EXTENSION);
		rc = pg_pread(fd, st->pread_buf, len, offsets[done]);
		pgstat_report_wait_end();
		if (rc != (ssize_t) len)
			report_bad_read(st, rc < 0 ? -errno : (int) rc, len);
		st->latencies[done] = (uint32) (now_us() - t0);

		if (advised < limit && now_us() >= deadline)
			limit = advised;
		CHECK_FOR_INTERRUPTS();
	}
	step_summary(st, done, (int64) done * len, now_us() - start, out);
}

/* One step from a cold cache, with a progress NOTICE. */
static void
measure_step(CalState *st, const CalArgs *args, CalPattern pattern,
			 const off_t *offsets, int nreads, int depth, StepResult *out)
{
	size_t		len = pattern == CAL_SEQUENTIAL ? CAL_SEQ_READ : CAL_RANDOM_READ;
	double		secs;

	make_cold(st);
	if (io_engine_method(st->engine) == IO_METHOD_IO_URING)
		measure_uring(st, offsets, nreads, len, depth, out);
	else
		measure_fadvise(st, offsets, nreads, len, depth, out);

	secs = out->elapsed_us / 1e6;
	ereport(NOTICE,
			(errmsg("calibrating \"%s\", round %d of %d: %s, depth %d: %.0f IOPS, %.1f MB/s, mean latency %.0f us, p99 %.0f us",
					args->spcname, st->round + 1, CAL_ROUNDS,
					cal_pattern_names[pattern], depth, out->reads / secs,
					bytes_mb_per_s(out->bytes, out->elapsed_us),
					out->mean_latency_us, out->p99_latency_us)));
}

/*
 * nsample distinct blocks out of nblocks, ascending: Knuth's Algorithm S,
 * the selection ANALYZE's BlockSampler makes.
 */
static void
sample_blocks(pg_prng_state *prng, int64 nblocks, int nsample, off_t *out)
{
	int			k = 0;

	for (int64 b = 0; b < nblocks && k < nsample; b++)
	{
		if (pg_prng_double(prng) * (nblocks - b) < nsample - k)
			out[k++] = (off_t) b * BLCKSZ;
	}
}

/* Fisher-Yates shuffle */
static void
shuffle(pg_prng_state *prng, off_t *a, int n)
{
	for (int i = n - 1; i > 0; i--)
	{
		int			j = (int) pg_prng_uint64_range(prng, 0, i);
		off_t		t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

static int
cmp_step_iops(const void *a, const void *b)
{
	const StepResult *x = a;
	const StepResult *y = b;
	double		rx = x->reads / x->elapsed_us;
	double		ry = y->reads / y->elapsed_us;

	return (rx > ry) - (rx < ry);
}

/* What to measure, and where the results go */
typedef struct CalPlan
{
	int			depths[CAL_MAX_STEPS_PER_PATTERN];
	int			ndepths;		/* random patterns */
	int			nseqdepths;		/* the first ones, for sequential */
	int64		nblocks;
	int			nrandom;		/* reads per random step */
	int			nseq;			/* reads per sequential step */
	off_t	   *sorted;
	off_t	   *unsorted;
	off_t	   *seq;
	StepResult	(*results)[CAL_MAX_STEPS_PER_PATTERN][CAL_ROUNDS];
	IoMethod	method;			/* what was measured */
	uint64		seed;			/* of the block choice; + round */
} CalPlan;

/*
 * Fill the scratch file and run every step, creating the engine in
 * st->engine.  Kept out of line so that the PG_TRY in measure_all() has no
 * local variable that changes under it.
 */
static pg_noinline void
fill_and_measure(CalState *st, const CalArgs *args, CalPlan *plan)
{
	const char *fallback_reason = NULL;

	fill_scratch_file(st);

	st->engine = io_engine_create((IoMethod) bgwp_io_method, args->max_depth,
								  CAL_SEQ_READ, &fallback_reason);
	if (st->engine == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not create the I/O engine")));
	plan->method = io_engine_method(st->engine);
	if (plan->method != IO_METHOD_IO_URING)
		ereport(NOTICE,
				(errmsg("measuring posix_fadvise(WILLNEED) ahead of pread(), not io_uring reads"),
				 fallback_reason ? errdetail("%s", fallback_reason) : 0));

	for (st->round = 0; st->round < CAL_ROUNDS; st->round++)
	{
		pg_prng_state prng;
		bool		descending = (st->round % 2) == 1;
		int			r = st->round;

		pg_prng_seed(&prng, plan->seed + r);
		sample_blocks(&prng, plan->nblocks, plan->nrandom, plan->sorted);
		memcpy(plan->unsorted, plan->sorted, plan->nrandom * sizeof(off_t));
		shuffle(&prng, plan->unsorted, plan->nrandom);

		for (int k = 0; k < plan->ndepths; k++)
		{
			int			i = descending ? plan->ndepths - 1 - k : k;

			measure_step(st, args, CAL_SORTED, plan->sorted, plan->nrandom,
						 plan->depths[i], &plan->results[CAL_SORTED][i][r]);
			measure_step(st, args, CAL_UNSORTED, plan->unsorted, plan->nrandom,
						 plan->depths[i], &plan->results[CAL_UNSORTED][i][r]);
		}
		for (int k = 0; k < plan->nseqdepths; k++)
		{
			int			i = descending ? plan->nseqdepths - 1 - k : k;

			measure_step(st, args, CAL_SEQUENTIAL, plan->seq, plan->nseq,
						 plan->depths[i], &plan->results[CAL_SEQUENTIAL][i][r]);
		}
	}
}

/*
 * fill_and_measure(), with the engine destroyed whatever happens: on
 * success, and in PG_CATCH (then re-thrown) on ERROR and cancel alike; see
 * the header comment for why.  (PG_CATCH rather than PG_FINALLY: GCC 12
 * reports PG_FINALLY's own _do_rethrow flag as clobbered here.)
 */
static void
measure_all(CalState *st, const CalArgs *args, CalPlan *plan)
{
	PG_TRY();
	{
		fill_and_measure(st, args, plan);
	}
	PG_CATCH();
	{
		io_engine_destroy(st->engine);	/* NULL-safe */
		st->engine = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	io_engine_destroy(st->engine);
	st->engine = NULL;
}

/*
 * The whole measurement: returns the rows of the curve (palloc'd, *nrows
 * of them) and the I/O method measured.  The scratch file is deleted before
 * returning; after an ERROR, at abort.
 */
CalRow *
calibration_measure(const CalArgs *args, int *nrows, IoMethod *method)
{
	CalState	st;
	CalPlan		plan;
	CalRow	   *rows;
	int			n = 0;

	memset(&plan, 0, sizeof(plan));
	plan.seed = pg_prng_uint64(&pg_global_prng_state);
	for (int d = 1; d < args->max_depth; d *= 2)
		plan.depths[plan.ndepths++] = d;
	plan.depths[plan.ndepths++] = args->max_depth;
	while (plan.nseqdepths < plan.ndepths &&
		   plan.depths[plan.nseqdepths] <= CAL_SEQ_MAX_DEPTH)
		plan.nseqdepths++;

	memset(&st, 0, sizeof(st));
	st.file_bytes = (int64) args->size_mb * 1024 * 1024;
	plan.nblocks = st.file_bytes / BLCKSZ;
	plan.nrandom = (int) Min(CAL_STEP_MAX_READS, plan.nblocks / CAL_SAMPLE_EVERY);
	plan.nseq = (int) (st.file_bytes / CAL_SEQ_READ);

	plan.sorted = palloc(plan.nrandom * sizeof(off_t));
	plan.unsorted = palloc(plan.nrandom * sizeof(off_t));
	plan.seq = palloc(plan.nseq * sizeof(off_t));
	for (int i = 0; i < plan.nseq; i++)
		plan.seq[i] = (off_t) i * CAL_SEQ_READ;
	plan.results = palloc0(CAL_NUM_PATTERNS * sizeof(*plan.results));
	st.latencies = palloc(Max(plan.nrandom, plan.nseq) * sizeof(uint32));
	st.pread_buf = palloc(CAL_SEQ_READ);
	st.mincore_vec = palloc(st.file_bytes / getpagesize() + 1);

	lock_tablespace_calibration(args);
	st.file = open_scratch_file(args, st.path);
	ereport(NOTICE,
			(errmsg("calibrating tablespace \"%s\" with scratch file \"%s\" (%d MB), depths 1 to %d",
					args->spcname, st.path, args->size_mb, args->max_depth)));

	measure_all(&st, args, &plan);
	FileClose(st.file);			/* deletes it */

	if (st.max_cached_fraction > CAL_MAX_CACHED_FRACTION)
		ereport(WARNING,
				(errmsg("up to %.1f%% of the scratch file stayed in the page cache after posix_fadvise(DONTNEED)",
						100.0 * st.max_cached_fraction),
				 errdetail("The figures are optimistic.")));

	/* the median round of every (pattern, depth) */
	rows = palloc(CAL_NUM_PATTERNS * CAL_MAX_STEPS_PER_PATTERN * sizeof(CalRow));
	for (int p = 0; p < CAL_NUM_PATTERNS; p++)
	{
		int			nd = p == CAL_SEQUENTIAL ? plan.nseqdepths : plan.ndepths;
		double		base = 0;

		for (int i = 0; i < nd; i++)
		{
			CalRow	   *row = &rows[n++];
			double		secs;

			qsort(plan.results[p][i], CAL_ROUNDS, sizeof(StepResult), cmp_step_iops);
			row->pattern = (CalPattern) p;
			row->depth = plan.depths[i];
			row->step = plan.results[p][i][(CAL_ROUNDS - 1) / 2];
			secs = row->step.elapsed_us / 1e6;
			row->iops = row->step.reads / secs;
			row->mb_per_s = bytes_mb_per_s(row->step.bytes, row->step.elapsed_us);
			if (i == 0)
				base = row->iops;
			row->speedup = base > 0 ? row->iops / base : 0;
		}
	}

	pfree(plan.sorted);
	pfree(plan.unsorted);
	pfree(plan.seq);
	pfree(plan.results);
	pfree(st.latencies);
	pfree(st.pread_buf);
	pfree(st.mincore_vec);
	*method = plan.method;
	*nrows = n;
	return rows;
}

