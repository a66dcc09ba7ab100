/*-------------------------------------------------------------------------
 *
 * calibrate.h
 *	  Measuring a tablespace's read performance, and the recorded results.
 *
 * bgw_prefetch_calibrate() measures cold-cache 8 kB random reads (sorted
 * and unsorted) at increasing depths and large sequential reads in a
 * scratch file of the tablespace; bgw_prefetch_calibrate_apply() records,
 * per tablespace, the depth it recommends and the per-block costs the
 * ANALYZE cost model uses, in $PGDATA/bgw_prefetch_calibration (cluster-wide,
 * survives restarts).  This header is what the rest of the extension reads
 * of those records.
 *
 * Precedence of the prefetch depth (resolver.c, doc/tuning.md):
 * bgw_prefetch.tablespace_io_depth > calibration > the tablespace's
 * maintenance_io_concurrency option > the server's maintenance_io_concurrency.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_CALIBRATE_H
#define BGWP_CALIBRATE_H

#include "bgw_prefetch.h"

/*
 * The recorded calibration of tablespace spcid, if there is one: the
 * recommended prefetch depth (1 .. 1000), and the costs in microseconds of
 * wall time per 8 kB block for the AnalyzeCostModel of analyze_plan.h:
 * streaming with 256 kB sequential reads, and scattered sorted reads at the
 * depth the consumer's own prefetch gets (the tablespace's
 * maintenance_io_concurrency when the calibration was applied).  Any output
 * pointer may be NULL.  Returns false, leaving the outputs alone, when the
 * tablespace has no record or the file cannot be read.
 *
 * Reads the small results file each time (no caching, no shared memory, no
 * lock: the file is replaced atomically); never throws an ERROR -- problems
 * are logged at LOG and reported as "no record".  It does no catalog
 * access, so it can be called in or out of a transaction, by any process
 * whose working directory is the data directory (every backend and
 * background worker).
 */
extern bool calibration_lookup(Oid spcid, int *depth,
							   double *seq_us_per_block,
							   double *random_us_per_block);

#endif							/* BGWP_CALIBRATE_H */
