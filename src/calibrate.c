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
 * The measurement is in calibrate_measure.c, the recorded results in
 * calibration_store.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_tablespace_d.h"
#include "commands/tablespace.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/spccache.h"
#include "utils/timestamp.h"

#include "bgw_prefetch.h"
#include "calibrate_internal.h"
#include "compat.h"

PG_FUNCTION_INFO_V1(bgw_prefetch_calibrate);
PG_FUNCTION_INFO_V1(bgw_prefetch_calibrate_apply);
PG_FUNCTION_INFO_V1(bgw_prefetch_calibration_forget);
PG_FUNCTION_INFO_V1(bgw_prefetch_calibration_results);

/* Argument ranges */
#define CAL_MIN_SIZE_MB		16
#define CAL_MAX_SIZE_MB		65536
#define CAL_MIN_DEPTH		1

/* The recommended depth is the smallest within this of the best IOPS */
#define CAL_GOOD_ENOUGH		0.90

/* This session's last calibration, for apply(reuse_last => true) */
static CalibrationRecord last_calibration;
static bool have_last_calibration = false;

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
	CalRow	   *rows = calibration_measure(args, nrows, &method);

	summarize(args, rows, *nrows, io_method_name(method), applying, rec);
	last_calibration = *rec;
	have_last_calibration = true;
	return rows;
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

		values[0] = CStringGetTextDatum(cal_pattern_names[rows[i].pattern]);
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
	calibration_store(&rec);

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
	Oid			spcid = InvalidOid;

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
	PG_RETURN_BOOL(calibration_forget(spcid));
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
	calibration_read_records(WARNING, emit_cb, fcinfo->resultinfo);
	return (Datum) 0;
}

