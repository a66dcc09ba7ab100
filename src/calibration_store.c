/*-------------------------------------------------------------------------
 *
 * calibration_store.c
 *	  The recorded calibrations: $PGDATA/bgw_prefetch_calibration.
 *
 * bgw_prefetch_calibrate_apply() records its results in $PGDATA/
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
#include <unistd.h>

#include "commands/tablespace.h"
#include "lib/stringinfo.h"
#include "storage/fd.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "calibrate.h"
#include "calibrate_internal.h"

/* The results file, relative to the data directory. */
#define CALIBRATION_FILE "bgw_prefetch_calibration"
#define CALIBRATION_FILE_TMP CALIBRATION_FILE ".tmp"
#define CALIBRATION_FILE_HEADER "bgw_prefetch calibration 1"
#define CALIBRATION_LINE_MAX 1024

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
void
calibration_read_records(int elevel, CalibrationRecordFn fn, void *arg)
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
	calibration_read_records(LOG, lookup_cb, &la);
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
void
calibration_store(const CalibrationRecord *rec)
{
	CollectArg	ca = {NULL, 0, 0};
	bool		replaced = false;

	lock_results_file();
	calibration_read_records(WARNING, collect_cb, &ca);
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


/*
 * Remove a tablespace's record (every record if spcid is InvalidOid); true
 * if one was removed.
 */
bool
calibration_forget(Oid spcid)
{
	CollectArg	ca = {NULL, 0, 0};
	bool		removed = false;
	int			kept = 0;

	lock_results_file();
	calibration_read_records(WARNING, collect_cb, &ca);
	for (int i = 0; i < ca.n; i++)
	{
		if (!OidIsValid(spcid) || ca.recs[i].spcid == spcid)
			removed = true;
		else
			ca.recs[kept++] = ca.recs[i];
	}
	write_records(ca.recs, kept);
	return removed;
}
