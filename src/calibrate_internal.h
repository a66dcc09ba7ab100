/*-------------------------------------------------------------------------
 *
 * calibrate_internal.h
 *	  What the three files of the calibration share: calibrate.c (the SQL
 *	  functions and the summary), calibrate_measure.c (the measurement) and
 *	  calibration_store.c (the results file).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_CALIBRATE_INTERNAL_H
#define BGWP_CALIBRATE_INTERNAL_H

#include "datatype/timestamp.h"

#include "io_engine.h"

/* Deepest max_depth the calibration accepts */
#define CAL_MAX_DEPTH		1024

/* Deepest depth bgw_prefetch.tablespace_io_depth accepts (guc.c) */
#define CAL_MAX_RECORDED_DEPTH 1000

/* Advisory lock keys, in database 0 so that they are cluster-wide */
#define CAL_LOCK_MAGIC		0x62677770	/* "bgwp" */
#define CAL_LOCK_FILE_KEY	0		/* the results file; spcid otherwise */

typedef enum CalPattern
{
	CAL_SORTED,
	CAL_UNSORTED,
	CAL_SEQUENTIAL
} CalPattern;

#define CAL_NUM_PATTERNS 3

extern const char *const cal_pattern_names[CAL_NUM_PATTERNS];

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

/* calibrate_measure.c */
extern CalRow *calibration_measure(const CalArgs *args, int *nrows,
								   IoMethod *method);

/* calibration_store.c */
typedef bool (*CalibrationRecordFn) (const CalibrationRecord *rec, void *arg);
extern void calibration_read_records(int elevel, CalibrationRecordFn fn,
									 void *arg);
extern void calibration_store(const CalibrationRecord *rec);
extern bool calibration_forget(Oid spcid);

#endif							/* BGWP_CALIBRATE_INTERNAL_H */
