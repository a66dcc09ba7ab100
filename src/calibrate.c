/*-------------------------------------------------------------------------
 *
 * calibrate.c
 *	  Measure a tablespace's read performance; record what to prefetch with.
 *
 * bgw_prefetch_calibrate(tablespace, size_mb, max_depth) measures, in a
 * scratch file of the tablespace, what the prefetcher would get from the
 * storage: cold-cache 8 kB reads of randomly chosen blocks in ascending
 * order ("sorted random", the order of VACUUM's and ANALYZE's reads) and in
 * random order ("unsorted random", what fio's randread does) at depths 1,
 * 2, 4, ... max_depth, and 256 kB sequential reads (the prefetcher's largest
 * read, which it streams ANALYZE windows with) at depths 1 to 8.  Each step
 * reads from a cold page cache: the file is written, fdatasync'd (so that
 * every page is clean) and dropped with posix_fadvise(POSIX_FADV_DONTNEED)
 * before every step; residency is checked with mincore() afterwards.  The
 * reads go through the extension's own I/O engine (io_engine.c), with the
 * method bgw_prefetch.io_method selects: io_uring buffered reads, or, when
 * that is not available, posix_fadvise(WILLNEED) that many blocks ahead of a
 * pread(), which is what the fadvise prefetcher achieves.
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
 * virtual machine host's) and look faster than the storage is.  The
 * default run (1 GB, depths 1..256) takes about 90 s on the project's
 * virtio disk.
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
 * Results.  The recommended depth is the smallest depth whose sorted-random
 * IOPS is within 10 % of the best, and whose unsorted-random IOPS is too
 * (see summarize() for why both).  The ANALYZE cost model
 * (analyze_plan.h) compares streaming a window with large sequential reads
 * against leaving the consumer to read its sampled blocks itself; so
 * seq_us_per_block is the per-block time of the fastest sequential step,
 * and random_us_per_block the per-block time of sorted random reads at the
 * depth the consumer's own prefetch gets -- the tablespace's
 * maintenance_io_concurrency (at least 1), interpolated on the curve --
 * not at the best depth, which ANALYZE never gets by itself.
 *
 * bgw_prefetch_calibrate_apply() records those in $PGDATA/
 * bgw_prefetch_calibration, a small text file (one line per tablespace)
 * replaced atomically with durable_rename(): tablespaces are cluster-wide
 * and the resolver workers run in any database, which a per-database
 * catalog table would not serve; the file survives restarts and is read by
 * calibration_lookup() without shared memory or locks.  Writers serialize
 * on a cluster-wide advisory lock (database 0), and the same kind of lock
 * keeps two calibrations of one tablespace from running at once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "access/htup_details.h"
#include "catalog/pg_tablespace_d.h"
#include "commands/tablespace.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/spccache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "bgw_prefetch.h"
#include "calibrate.h"
#include "compat.h"
#include "io_engine.h"

PG_FUNCTION_INFO_V1(bgw_prefetch_calibrate);
PG_FUNCTION_INFO_V1(bgw_prefetch_calibrate_apply);
PG_FUNCTION_INFO_V1(bgw_prefetch_calibration_forget);
PG_FUNCTION_INFO_V1(bgw_prefetch_calibration_results);

/* Argument ranges */
#define CAL_MIN_SIZE_MB		16
#define CAL_MAX_SIZE_MB		65536
#define CAL_MIN_DEPTH		1
#define CAL_MAX_DEPTH		1024

/* Deepest depth bgw_prefetch.tablespace_io_depth accepts (guc.c) */
#define CAL_MAX_RECORDED_DEPTH 1000

/*
 * Reads: 8 kB random; 256 kB sequential, the prefetcher's largest read
 * (BGWP_MAX_READ_BLOCKS in prefetcher.c, private there: keep in step), so
 * that seq_us_per_block is what its streaming costs.
 */
#define CAL_RANDOM_READ		BLCKSZ
#define CAL_SEQ_READ		(BGWP_MAX_READ_BLOCKS * BLCKSZ)
#define CAL_SEQ_MAX_DEPTH	8

/* Step length: reads, sample density (1 block in N), time */
#define CAL_STEP_MAX_READS	20000
#define CAL_SAMPLE_EVERY	8
#define CAL_STEP_BUDGET_US	INT64CONST(2000000)
#define CAL_ROUNDS			3

/* The recommended depth is the smallest within this of the best IOPS */
#define CAL_GOOD_ENOUGH		0.90

/* Writes of the fill, and the wait of one engine call */
#define CAL_FILL_CHUNK		(1024 * 1024)
#define CAL_WAIT_MS			100

/* A step warns when more than this fraction of the file stayed cached */
#define CAL_MAX_CACHED_FRACTION 0.01

/* Advisory lock keys, in database 0 so that they are cluster-wide */
#define CAL_LOCK_MAGIC		0x62677770	/* "bgwp" */
#define CAL_LOCK_FILE_KEY	0		/* the results file; spcid otherwise */

#define CALIBRATION_FILE_TMP CALIBRATION_FILE ".tmp"
#define CALIBRATION_FILE_HEADER "bgw_prefetch calibration 1"
#define CALIBRATION_LINE_MAX 1024

typedef enum CalPattern
{
	CAL_SORTED,
	CAL_UNSORTED,
	CAL_SEQUENTIAL
} CalPattern;

#define CAL_NUM_PATTERNS 3

static const char *const pattern_names[CAL_NUM_PATTERNS] = {
	"sorted random", "unsorted random", "sequential"
};

/* log2(CAL_MAX_DEPTH) + 1 powers of two, plus a last depth */
#define CAL_MAX_STEPS_PER_PATTERN 12

/* What one step measured */
typedef struct StepResult
{
	int64		reads;
	int64		bytes;
	double		elapsed_us;
	double		mean_latency_us;
	double		p99_latency_us;
} StepResult;

/* Arguments, checked */
typedef struct CalArgs
{
	Oid			spcid;
	char		spcname[NAMEDATALEN];
	int			size_mb;
	int			max_depth;
} CalArgs;

/* One row of the curve */
typedef struct CalRow
{
	CalPattern	pattern;
	int			depth;
	StepResult	step;			/* the median round */
	double		iops;
	double		mb_per_s;
	double		speedup;
} CalRow;

/*
 * One calibration record: in the results file, the view, and this
 * session's last calibration.
 */
typedef struct CalibrationRecord
{
	Oid			spcid;
	int			depth;			/* recommended */
	double		seq_us_per_block;
	double		random_us_per_block;
	int			random_depth;	/* depth random_us_per_block is for */
	double		best_iops;		/* best sorted-random IOPS */
	int			size_mb;
	char		io_method[16];
	TimestampTz measured_at;
} CalibrationRecord;

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

/* This session's last calibration, for apply(reuse_last => true) */
static CalibrationRecord last_calibration;
static bool have_last_calibration = false;

/* Microseconds on the I/O engine's clock, which its latencies use too */
static int64
now_us(void)
{
	return (int64) (io_engine_clock_ns() / 1000);
}

/* ---------------- arguments ---------------- */

/*
 * Check the arguments of calibrate/apply (the first three are the same) and
 * the caller's right to fill the tablespace.
 */
static void
parse_args(FunctionCallInfo fcinfo, CalArgs *args)
{
	static const char *const argnames[] = {"tablespace", "size_mb", "max_depth"};
	Name		spcname;

	for (int i = 0; i < 3; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null", argnames[i]),
					 errhint("Omit the argument to use its default.")));

	spcname = PG_GETARG_NAME(0);
	strlcpy(args->spcname, NameStr(*spcname), NAMEDATALEN);
	args->size_mb = PG_GETARG_INT32(1);
	args->max_depth = PG_GETARG_INT32(2);

	args->spcid = get_tablespace_oid(args->spcname, true);
	if (!OidIsValid(args->spcid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("tablespace \"%s\" does not exist", args->spcname),
				 errhint("The tablespaces are listed in pg_tablespace.")));
	if (args->spcid == GLOBALTABLESPACE_OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot calibrate tablespace \"%s\"", args->spcname),
				 errdetail("pg_global holds only shared catalogs and has no directory for temporary files."),
				 errhint("Calibrate pg_default: pg_global is in the same data directory.")));
	if (args->size_mb < CAL_MIN_SIZE_MB || args->size_mb > CAL_MAX_SIZE_MB)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("size_mb %d is out of range", args->size_mb),
				 errhint("size_mb must be between %d and %d; the default, 1024, is enough for most storage.",
						 CAL_MIN_SIZE_MB, CAL_MAX_SIZE_MB)));
	if (args->max_depth < CAL_MIN_DEPTH || args->max_depth > CAL_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_depth %d is out of range", args->max_depth),
				 errhint("max_depth must be between %d and %d.",
						 CAL_MIN_DEPTH, CAL_MAX_DEPTH)));

	/* As for temp_tablespaces: CREATE on it, unless it is the database's */
	if (args->spcid != MyDatabaseTableSpace && !superuser())
	{
		AclResult	aclresult = BGWP_TABLESPACE_ACLCHECK(args->spcid,
															 GetUserId(),
															 ACL_CREATE);

		if (aclresult != ACLCHECK_OK)
			aclcheck_error(aclresult, OBJECT_TABLESPACE, args->spcname);
	}
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
					pattern_names[pattern], depth, out->reads / secs,
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
static CalRow *
run_calibration(const CalArgs *args, int *nrows, IoMethod *method)
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

/*
 * Sorted-random IOPS at a depth, interpolated linearly in log2(depth)
 * between the measured depths (flat beyond them).
 */
static double
sorted_iops_at(const CalRow *rows, int nrows, int depth)
{
	const CalRow *prev = NULL;

	for (int i = 0; i < nrows; i++)
	{
		const CalRow *r = &rows[i];

		if (r->pattern != CAL_SORTED)
			continue;
		if (r->depth == depth || (prev == NULL && depth < r->depth))
			return r->iops;
		if (prev != NULL && depth < r->depth)
		{
			double		t = (log2(depth) - log2(prev->depth)) /
				(log2(r->depth) - log2(prev->depth));

			return prev->iops + t * (r->iops - prev->iops);
		}
		prev = r;
	}
	return prev ? prev->iops : 0;
}

/*
 * Turn the curve into a record, and say what it recommends.
 *
 * The recommended depth is the smallest whose sorted-random IOPS is within
 * CAL_GOOD_ENOUGH of the best -- and whose unsorted-random IOPS is too.  The
 * second condition is there because at low depth the sorted pattern is
 * helped by the kernel's readahead (one sampled block in eight is next to
 * the previous one, which starts a readahead window that then covers the
 * following ones): on some runs that alone brings depth 1 within 10 % of
 * the best, although a sparser scan, which readahead does not help, needs
 * many more reads in flight.  The unsorted curve is that readahead-free
 * case.  When no depth meets both, the sorted curve alone decides.
 */
static void
summarize(const CalArgs *args, const CalRow *rows, int nrows,
		  const char *io_method, bool applying, CalibrationRecord *rec)
{
	const CalRow *sorted = NULL;
	const CalRow *unsorted = NULL;
	int			ndepths = 0;
	double		best = 0;
	double		best_unsorted = 0;
	int			best_depth = 1;
	double		seq_us = 0;
	double		random_iops;

	memset(rec, 0, sizeof(*rec));
	for (int i = 0; i < nrows; i++)
	{
		if (rows[i].pattern == CAL_SORTED)
		{
			if (sorted == NULL)
				sorted = &rows[i];
			ndepths++;
		}
		else if (rows[i].pattern == CAL_UNSORTED && unsorted == NULL)
			unsorted = &rows[i];
		else if (rows[i].pattern == CAL_SEQUENTIAL && rows[i].step.bytes > 0)
		{
			double		us = rows[i].step.elapsed_us /
				((double) rows[i].step.bytes / BLCKSZ);

			if (seq_us == 0 || us < seq_us)
				seq_us = us;
		}
	}
	if (sorted == NULL || unsorted == NULL)
		elog(ERROR, "calibration produced no random-read rows");

	/* the two random patterns have a row for each depth, in the same order */
	for (int i = 0; i < ndepths; i++)
	{
		if (sorted[i].iops > best)
		{
			best = sorted[i].iops;
			best_depth = sorted[i].depth;
		}
		best_unsorted = Max(best_unsorted, unsorted[i].iops);
	}
	rec->depth = 0;
	for (int i = 0; i < ndepths && rec->depth == 0; i++)
		if (sorted[i].iops >= CAL_GOOD_ENOUGH * best &&
			unsorted[i].iops >= CAL_GOOD_ENOUGH * best_unsorted)
			rec->depth = sorted[i].depth;
	for (int i = 0; i < ndepths && rec->depth == 0; i++)
		if (sorted[i].iops >= CAL_GOOD_ENOUGH * best)
			rec->depth = sorted[i].depth;
	rec->depth = Min(Max(rec->depth, 1), CAL_MAX_RECORDED_DEPTH);

	rec->spcid = args->spcid;
	rec->random_depth = Max(1, get_tablespace_maintenance_io_concurrency(args->spcid));
	random_iops = sorted_iops_at(rows, nrows, rec->random_depth);
	rec->random_us_per_block = random_iops > 0 ? 1e6 / random_iops : 0;
	rec->seq_us_per_block = seq_us;
	rec->best_iops = best;
	rec->size_mb = args->size_mb;
	strlcpy(rec->io_method, io_method, sizeof(rec->io_method));
	rec->measured_at = GetCurrentTimestamp();

	ereport(NOTICE,
			(errmsg("tablespace \"%s\": recommended depth %d (best sorted random: %.0f IOPS at depth %d, best unsorted random: %.0f IOPS); %.1f us per block sequential, %.1f us per block sorted random at depth %d",
					args->spcname, rec->depth, best, best_depth, best_unsorted,
					rec->seq_us_per_block, rec->random_us_per_block,
					rec->random_depth),
			 rec->depth == args->max_depth && args->max_depth < CAL_MAX_DEPTH ?
			 errdetail("IOPS were still rising at max_depth %d: a larger max_depth may find a better depth.",
					   args->max_depth) : 0,
			 applying ? 0 :
			 errhint("Record it with bgw_prefetch_calibrate_apply('%s', reuse_last => true).",
					 args->spcname)));
}

/* Calibrate, summarize, remember as this session's last calibration. */
static CalRow *
calibrate(const CalArgs *args, bool applying, int *nrows,
		  CalibrationRecord *rec)
{
	IoMethod	method;
	CalRow	   *rows = run_calibration(args, nrows, &method);

	summarize(args, rows, *nrows, io_method_name(method), applying, rec);
	last_calibration = *rec;
	have_last_calibration = true;
	return rows;
}

/* ---------------- the results file ---------------- */

/* Parse one data line; false if it is not a valid record. */
static bool
parse_record(const char *line, CalibrationRecord *rec)
{
	long long	measured_at;

	memset(rec, 0, sizeof(*rec));
	if (sscanf(line, "%u %d %lf %lf %d %lf %d %15s %lld",
			   &rec->spcid, &rec->depth, &rec->seq_us_per_block,
			   &rec->random_us_per_block, &rec->random_depth,
			   &rec->best_iops, &rec->size_mb, rec->io_method,
			   &measured_at) != 9)
		return false;
	rec->measured_at = (TimestampTz) measured_at;
	return OidIsValid(rec->spcid) &&
		rec->depth >= 1 && rec->depth <= CAL_MAX_RECORDED_DEPTH &&
		isfinite(rec->seq_us_per_block) && rec->seq_us_per_block > 0 &&
		isfinite(rec->random_us_per_block) && rec->random_us_per_block > 0;
}

/*
 * Read the results file, calling fn on each valid record until it returns
 * false.  A missing file is no records; other problems are reported at
 * elevel (never above WARNING) and end the reading.
 */
static void
read_records(int elevel, bool (*fn) (const CalibrationRecord *rec, void *arg),
			 void *arg)
{
	FILE	   *f;
	char		line[CALIBRATION_LINE_MAX];
	int			lineno = 0;

	f = AllocateFile(CALIBRATION_FILE, "r");
	if (f == NULL)
	{
		if (errno != ENOENT)
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", CALIBRATION_FILE)));
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL)
	{
		CalibrationRecord rec;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (lineno == 1)
		{
			if (strcmp(line, CALIBRATION_FILE_HEADER) != 0)
			{
				ereport(elevel,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("file \"%s\" is not a bgw_prefetch calibration file, ignored",
								CALIBRATION_FILE)));
				break;
			}
			continue;
		}
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (!parse_record(line, &rec))
		{
			ereport(elevel,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid line %d in file \"%s\" ignored",
							lineno, CALIBRATION_FILE)));
			continue;
		}
		if (!fn(&rec, arg))
			break;
	}
	FreeFile(f);
}

typedef struct LookupArg
{
	Oid			spcid;
	bool		found;
	CalibrationRecord rec;
} LookupArg;

static bool
lookup_cb(const CalibrationRecord *rec, void *arg)
{
	LookupArg  *la = arg;

	if (rec->spcid != la->spcid)
		return true;
	la->rec = *rec;
	la->found = true;
	return false;
}

/* See calibrate.h. */
bool
calibration_lookup(Oid spcid, int *depth, double *seq_us_per_block,
				   double *random_us_per_block)
{
	LookupArg	la;

	la.spcid = spcid;
	la.found = false;
	read_records(LOG, lookup_cb, &la);
	if (!la.found)
		return false;
	if (depth)
		*depth = la.rec.depth;
	if (seq_us_per_block)
		*seq_us_per_block = la.rec.seq_us_per_block;
	if (random_us_per_block)
		*random_us_per_block = la.rec.random_us_per_block;
	return true;
}

typedef struct CollectArg
{
	CalibrationRecord *recs;
	int			n;
	int			size;
} CollectArg;

static bool
collect_cb(const CalibrationRecord *rec, void *arg)
{
	CollectArg *ca = arg;

	if (ca->n == ca->size)
	{
		ca->size = ca->size ? ca->size * 2 : 16;
		ca->recs = ca->recs ? repalloc(ca->recs, ca->size * sizeof(*rec)) :
			palloc(ca->size * sizeof(*rec));
	}
	ca->recs[ca->n++] = *rec;
	return true;
}

/*
 * Serialize writers of the results file (read, change, replace): a
 * transaction-level advisory lock in database 0.
 */
static void
lock_results_file(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, InvalidOid, CAL_LOCK_MAGIC, CAL_LOCK_FILE_KEY, 2);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/*
 * Replace the results file with these records, leaving out tablespaces
 * that no longer exist.  Written to a temporary file, fsync'd and renamed
 * with durable_rename(), so that a reader sees the old or the new file and
 * a crash leaves one of them.  The file's fsyncs follow the server's fsync
 * setting, like its own files.
 */
static void
write_records(const CalibrationRecord *recs, int n)
{
	StringInfoData buf;
	int			fd;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s\n", CALIBRATION_FILE_HEADER);
	appendStringInfoString(&buf,
						   "# Written by bgw_prefetch_calibrate_apply(); see the view bgw_prefetch_calibration.\n"
						   "# spcoid depth seq_us_per_block random_us_per_block random_depth best_sorted_iops size_mb io_method measured_at\n");
	for (int i = 0; i < n; i++)
	{
		const CalibrationRecord *r = &recs[i];
		char	   *name;

		if (!SearchSysCacheExists1(TABLESPACEOID, ObjectIdGetDatum(r->spcid)))
			continue;
		name = get_tablespace_name(r->spcid);
		appendStringInfo(&buf, "%u %d %.4f %.4f %d %.1f %d %s %lld # %s, %s\n",
						 r->spcid, r->depth, r->seq_us_per_block,
						 r->random_us_per_block, r->random_depth, r->best_iops,
						 r->size_mb, r->io_method, (long long) r->measured_at,
						 name ? name : "?", timestamptz_to_str(r->measured_at));
	}

	fd = OpenTransientFile(CALIBRATION_FILE_TMP, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", CALIBRATION_FILE_TMP)));
	errno = 0;
	if (write(fd, buf.data, buf.len) != buf.len)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", CALIBRATION_FILE_TMP)));
	}
	if (pg_fsync(fd) != 0)
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", CALIBRATION_FILE_TMP)));
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", CALIBRATION_FILE_TMP)));
	(void) durable_rename(CALIBRATION_FILE_TMP, CALIBRATION_FILE, ERROR);
	pfree(buf.data);
}

/* Record (replace) one tablespace's calibration. */
static void
store_record(const CalibrationRecord *rec)
{
	CollectArg	ca = {NULL, 0, 0};
	bool		replaced = false;

	lock_results_file();
	read_records(WARNING, collect_cb, &ca);
	for (int i = 0; i < ca.n; i++)
	{
		if (ca.recs[i].spcid == rec->spcid)
		{
			ca.recs[i] = *rec;
			replaced = true;
		}
	}
	if (!replaced)
		collect_cb(rec, &ca);
	write_records(ca.recs, ca.n);
}

/* ---------------- SQL functions ---------------- */

/*
 * bgw_prefetch_calibrate(tablespace name, size_mb int, max_depth int)
 *	RETURNS SETOF (pattern, depth, iops, mb_per_s, mean_latency_us,
 *				   p99_latency_us, speedup)
 */
Datum
bgw_prefetch_calibrate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	CalArgs		args;
	CalibrationRecord rec;
	CalRow	   *rows;
	int			nrows;

	parse_args(fcinfo, &args);
	InitMaterializedSRF(fcinfo, 0);

	rows = calibrate(&args, false, &nrows, &rec);
	for (int i = 0; i < nrows; i++)
	{
		Datum		values[7];
		bool		nulls[7] = {0};

		values[0] = CStringGetTextDatum(pattern_names[rows[i].pattern]);
		values[1] = Int32GetDatum(rows[i].depth);
		values[2] = Float8GetDatum(rows[i].iops);
		values[3] = Float8GetDatum(rows[i].mb_per_s);
		values[4] = Float8GetDatum(rows[i].step.mean_latency_us);
		values[5] = Float8GetDatum(rows[i].step.p99_latency_us);
		values[6] = Float8GetDatum(rows[i].speedup);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * bgw_prefetch_calibrate_apply(tablespace name, size_mb int, max_depth int,
 *								reuse_last boolean)
 *	RETURNS (tablespace, recommended_depth, seq_us_per_block,
 *			 random_us_per_block, random_seq_ratio, random_cost_depth,
 *			 measured_at)
 *
 * Calibrates (or, with reuse_last, takes this session's last calibration
 * of the tablespace) and records the result.  The file is written at once,
 * not at commit: like the statistics resets, the change is not
 * transactional.
 */
Datum
bgw_prefetch_calibrate_apply(PG_FUNCTION_ARGS)
{
	CalArgs		args;
	CalibrationRecord rec;
	TupleDesc	tupdesc;
	Datum		values[7];
	bool		nulls[7] = {0};
	bool		reuse_last;
	NameData   *name;

	parse_args(fcinfo, &args);
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("reuse_last must not be null"),
				 errhint("Omit the argument to measure anew, or pass true to record the last measurement.")));
	reuse_last = PG_GETARG_BOOL(3);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	if (reuse_last && have_last_calibration &&
		last_calibration.spcid == args.spcid)
	{
		rec = last_calibration;
		ereport(NOTICE,
				(errmsg("recording this session's calibration of tablespace \"%s\" from %s (%d MB)",
						args.spcname, timestamptz_to_str(rec.measured_at),
						rec.size_mb)));
	}
	else
	{
		int			nrows;

		if (reuse_last)
			ereport(NOTICE,
					(errmsg("this session has not calibrated tablespace \"%s\" yet: calibrating it now",
							args.spcname)));
		(void) calibrate(&args, true, &nrows, &rec);
	}
	store_record(&rec);

	name = palloc0(sizeof(NameData));
	namestrcpy(name, args.spcname);
	values[0] = NameGetDatum(name);
	values[1] = Int32GetDatum(rec.depth);
	values[2] = Float8GetDatum(rec.seq_us_per_block);
	values[3] = Float8GetDatum(rec.random_us_per_block);
	values[4] = Float8GetDatum(rec.random_us_per_block / rec.seq_us_per_block);
	values[5] = Int32GetDatum(rec.random_depth);
	values[6] = TimestampTzGetDatum(rec.measured_at);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/*
 * bgw_prefetch_calibration_forget(tablespace name DEFAULT NULL) RETURNS bool
 *
 * Remove a tablespace's record (all records if NULL); true if one was
 * removed.  Records of dropped tablespaces go at every rewrite.
 */
Datum
bgw_prefetch_calibration_forget(PG_FUNCTION_ARGS)
{
	CollectArg	ca = {NULL, 0, 0};
	Oid			spcid = InvalidOid;
	bool		removed = false;
	int			kept = 0;

	if (!PG_ARGISNULL(0))
	{
		const char *spcname = NameStr(*PG_GETARG_NAME(0));

		spcid = get_tablespace_oid(spcname, true);
		if (!OidIsValid(spcid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("tablespace \"%s\" does not exist", spcname),
					 errhint("Records of dropped tablespaces are removed whenever the file is rewritten; forget(NULL) removes all records.")));
	}

	lock_results_file();
	read_records(WARNING, collect_cb, &ca);
	for (int i = 0; i < ca.n; i++)
	{
		if (!OidIsValid(spcid) || ca.recs[i].spcid == spcid)
			removed = true;
		else
			ca.recs[kept++] = ca.recs[i];
	}
	write_records(ca.recs, kept);
	PG_RETURN_BOOL(removed);
}

static bool
emit_cb(const CalibrationRecord *rec, void *arg)
{
	ReturnSetInfo *rsinfo = arg;
	Datum		values[9];
	bool		nulls[9] = {0};

	values[0] = ObjectIdGetDatum(rec->spcid);
	values[1] = Int32GetDatum(rec->depth);
	values[2] = Float8GetDatum(rec->seq_us_per_block);
	values[3] = Float8GetDatum(rec->random_us_per_block);
	values[4] = Int32GetDatum(rec->random_depth);
	values[5] = Float8GetDatum(rec->best_iops);
	values[6] = Int32GetDatum(rec->size_mb);
	values[7] = CStringGetTextDatum(rec->io_method);
	values[8] = TimestampTzGetDatum(rec->measured_at);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return true;
}

/*
 * SRF behind the bgw_prefetch_calibration view: the records of the file.
 */
Datum
bgw_prefetch_calibration_results(PG_FUNCTION_ARGS)
{
	InitMaterializedSRF(fcinfo, 0);
	read_records(WARNING, emit_cb, fcinfo->resultinfo);
	return (Datum) 0;
}
