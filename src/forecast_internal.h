/*-------------------------------------------------------------------------
 *
 * forecast_internal.h
 *	  The shared state of the forecast: what the monitor's side (forecast.c)
 *	  and the forecaster workers (forecaster.c) both read and write.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_FORECAST_INTERNAL_H
#define BGWP_FORECAST_INTERNAL_H

#include "datatype/timestamp.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

#include "bgw_prefetch.h"
#include "resolver.h"

/* Databases with a forecaster at once (each is a resident resolver) */
#define FORECAST_MAX_DATABASES BGWP_MAX_RESIDENTS
/* Relations published per database, first in autovacuum's order */
#define FORECAST_MAX_RELATIONS BGWP_MAX_TARGETS
/* After a failed start or a forecaster's ERROR, wait this long, in ms */
#define FORECAST_ERROR_BACKOFF_MS 10000
/* Autovacuum workers remembered per database, to tell a new one */
#define FORECAST_KNOWN_WORKERS 8

typedef enum ForecasterState
{
	FORECASTER_NONE,			/* none running */
	FORECASTER_STARTING,		/* requested from the postmaster */
	FORECASTER_RUNNING			/* connected, forecasting */
} ForecasterState;

/* One relation autovacuum is expected to process */
typedef struct ForecastEntry
{
	Oid			relid;
	uint32		order;			/* pg_class scan position, TOAST pass last */
	bool		dovacuum;
	bool		doanalyze;
	bool		wraparound;
	bool		done;			/* no longer needs work: processed since */
	TimestampTz done_at;		/* first found done */
	BlockNumber nblocks;		/* file size when computed */
	TimestampTz resolved_at;
	ResolvedRelation rel;
} ForecastEntry;

typedef struct ForecastDatabase
{
	Oid			dbid;			/* InvalidOid: slot free */
	ForecasterState state;
	uint32		generation;		/* of the forecaster started last */
	TimestampTz started_at;		/* when it was asked for */
	int			pid;
	Latch	   *latch;
	TimestampTz last_seen;		/* the monitor saw an autovacuum worker here */
	TimestampTz last_in_use;	/* ... or a client backend */
	TimestampTz retry_after;	/* start no forecaster before */
	int			known_workers[FORECAST_KNOWN_WORKERS];
	int			next_known;
	bool		recompute;		/* a new worker came: recompute at once */
	char		last_exit[64];	/* why the last forecaster left */
	/* published by the forecaster */
	TimestampTz computed_at;
	int64		computations;
	int64		requests_answered;	/* resolve requests it served */
	int			nentries;
	ForecastEntry entries[FORECAST_MAX_RELATIONS];
} ForecastDatabase;

typedef struct ForecastShared
{
	LWLock	   *lock;
	uint32		next_generation;
	ForecastDatabase databases[FORECAST_MAX_DATABASES];
} ForecastShared;

/* In shared memory; its lock protects everything in it */
extern ForecastShared *forecast_shared;

#endif							/* BGWP_FORECAST_INTERNAL_H */
