/*-------------------------------------------------------------------------
 *
 * forecast.c
 *	  Resident per-database resolvers that forecast autovacuum's tables.
 *
 * Why: the monitor needs a relation's files, tablespace, VACUUM skip mode
 * and I/O depth before it can prefetch a scan, and only a process connected
 * to the relation's database can look them up.  A resolver worker started
 * per scan (resolver.c) takes tens of milliseconds to start, while an
 * autovacuum of a large table with few dirty pages is over in 40-110 ms: it
 * is joined late, or not at all.  Autovacuum runs no statement that a hook
 * could see (a manual VACUUM announces its tables from the utility hook),
 * but what it will do next is written down: do_autovacuum() lists, in the
 * physical order of pg_class (tables and materialized views first, TOAST
 * tables in a second pass), the relations relation_needs_vacanalyze() says
 * need work, and then processes them in that order, passing over those another
 * worker is on.  All of that can be computed by anyone connected to the
 * database, from pg_class, the reloptions and the cumulative statistics.
 *
 * So when the monitor sees an autovacuum worker in a database, it makes
 * sure a "forecaster" runs there: a dynamic background worker connected to
 * that database that stays while autovacuum works in it, and lingers for
 * autovacuum_naptime plus a margin after the last worker left, so that it
 * is still there at autovacuum's next visit.  The forecaster
 *
 *	- recomputes autovacuum's list (autovac_rule.c, the transcription of
 *	  relation_needs_vacanalyze()) when the monitor reports a new autovacuum
 *	  worker in the database and every FORECAST_PERIOD_MS while autovacuum
 *	  works there, keeps the relations of at least
 *	  bgw_prefetch.min_relation_size blocks, resolves them as a resolver
 *	  worker would for autovacuum (resolver_resolve_autovacuum()) and
 *	  publishes them here, in shared memory, for forecast_next() and
 *	  forecast_lookup();
 *	- registers as its database's resident resolver, so that resolver_start()
 *	  hands it the requests for that database (a scan that was not forecast)
 *	  instead of starting a worker: answered within a millisecond or so.
 *
 * What it costs: one background worker slot (max_worker_processes) per
 * database autovacuum works in, while it works there and for the lingering
 * time after; one short transaction each FORECAST_PERIOD_MS then, reading
 * pg_class with a heap scan as do_autovacuum() does and the statistics with
 * stats_fetch_consistency = none.  A database without any relation of at
 * least bgw_prefetch.min_relation_size gets no forecaster: the first one
 * sees that and exits at once, and none is started there again for
 * FORECAST_EMPTY_BACKOFF_MS.
 *
 * The forecast is a forecast: a worker's list is computed when the worker
 * starts, table_recheck_autovac() drops relations that a concurrent worker
 * finished meanwhile, and a table can cross its threshold after the list
 * was made.  The prefetcher therefore starts a forecast relation the way it
 * starts one a manual VACUUM announced: it waits for the scan to show up
 * with the same relation size before following it (prefetcher.c).
 *
 * This file is the monitor's side: the shared list of databases and their
 * forecasters, starting and reaping them, and the lookups the prefetcher
 * makes; forecaster.c is the worker.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_statistic.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "autovac_rule.h"
#include "bgw_prefetch.h"
#include "compat.h"
#include "forecast.h"
#include "forecast_internal.h"
#include "resolver.h"
#include "backends.h"

PG_FUNCTION_INFO_V1(bgw_prefetch_forecast);
PG_FUNCTION_INFO_V1(bgw_prefetch_forecasters);

/*
 * A forecaster asked for this long ago that never connected is forgotten (a
 * monitor restarted meanwhile lost the handle that would tell), in ms
 */
#define FORECAST_START_TIMEOUT_MS 30000
/* Log a failed start at most this often, in ms */
#define FORECAST_START_LOG_INTERVAL_MS 60000

ForecastShared *forecast_shared = NULL;

/* Monitor-local: the handles of the forecasters it started, per slot */
static BackgroundWorkerHandle *forecaster_handles[FORECAST_MAX_DATABASES];
static uint32 handle_generations[FORECAST_MAX_DATABASES];
static TimestampTz last_start_fail_log = 0;

Size
forecast_shmem_size(void)
{
	return MAXALIGN(sizeof(ForecastShared));
}

void
forecast_shmem_startup(void)
{
	bool		found;

	forecast_shared = ShmemInitStruct("bgw_prefetch forecast",
									  sizeof(ForecastShared), &found);
	if (!found)
	{
		memset(forecast_shared, 0, sizeof(ForecastShared));
		forecast_shared->lock =
			&(GetNamedLWLockTranche(BGWP_LWLOCK_TRANCHE))[BGWP_LWLOCK_FORECAST].lock;
		forecast_shared->next_generation = 1;
	}
}

/* ---------------- monitor side ---------------- */

/*
 * The slot of dbid; with create, else a free slot or the idle one
 * autovacuum visited least recently, taken for it.  -1 if none.  The
 * caller holds the lock (exclusively with create).
 */
static int
database_slot(Oid dbid, bool create)
{
	int			victim = -1;

	for (int i = 0; i < FORECAST_MAX_DATABASES; i++)
		if (forecast_shared->databases[i].dbid == dbid)
			return i;
	if (!create)
		return -1;
	for (int i = 0; i < FORECAST_MAX_DATABASES; i++)
	{
		ForecastDatabase *db = &forecast_shared->databases[i];

		if (!OidIsValid(db->dbid))
		{
			victim = i;
			break;
		}
		if (db->state == FORECASTER_NONE &&
			(victim < 0 ||
			 db->last_seen < forecast_shared->databases[victim].last_seen))
			victim = i;
	}
	if (victim >= 0)
	{
		ForecastDatabase *db = &forecast_shared->databases[victim];

		memset(db, 0, sizeof(*db));
		db->dbid = dbid;
	}
	return victim;
}

/*
 * The forecaster of generation started in slot never ran, or stopped
 * without saying so: the slot has none, and none is started there again
 * before FORECAST_ERROR_BACKOFF_MS.
 */
static void
give_slot_back(int slot, uint32 generation, TimestampTz now, const char *why)
{
	ForecastDatabase *db = &forecast_shared->databases[slot];

	LWLockAcquire(forecast_shared->lock, LW_EXCLUSIVE);
	if (db->generation == generation && db->state != FORECASTER_NONE)
	{
		db->state = FORECASTER_NONE;
		db->pid = 0;
		db->latch = NULL;
		db->retry_after = TimestampTzPlusMilliseconds(now, FORECAST_ERROR_BACKOFF_MS);
		strlcpy(db->last_exit, why, sizeof(db->last_exit));
	}
	LWLockRelease(forecast_shared->lock);
}

/*
 * Start the forecaster of a slot.  A failure (no background worker slot
 * free) is logged now and then, never raised: the monitor must go on.
 */
static void
start_forecaster(int slot, Oid dbid, uint32 generation, TimestampTz now)
{
	char		name[BGW_MAXLEN];

	if (forecaster_handles[slot] != NULL)
	{
		pfree(forecaster_handles[slot]);
		forecaster_handles[slot] = NULL;
	}
	snprintf(name, sizeof(name), "bgw_prefetch forecaster for database %u", dbid);
	if (bgwp_start_dynamic_worker("bgwp_forecaster_main", "bgw_prefetch forecaster",
								  name, slot, generation, MyProcPid, true,
								  &forecaster_handles[slot]))
	{
		handle_generations[slot] = generation;
		return;
	}

	forecaster_handles[slot] = NULL;
	give_slot_back(slot, generation, now, "no background worker slot");
	if (TimestampDifferenceExceeds(last_start_fail_log, now,
								   FORECAST_START_LOG_INTERVAL_MS))
	{
		ereport(LOG,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("bgw_prefetch: no background worker slot free for the autovacuum forecaster of database %u",
						dbid),
				 errdetail("Slots of max_worker_processes bgw_prefetch leaves to parallel query: %d (max_parallel_workers_per_gather, at least 1).",
						   bgwp_reserved_worker_slots(true)),
				 errhint("Consider increasing max_worker_processes (currently %d).",
						 max_worker_processes)));
		last_start_fail_log = now;
	}
}

/*
 * Should a forecaster be started for db?  Yes if it has none (or one asked
 * for that never connected) and its backoff is over; then the caller starts
 * it, as *generation.  Caller holds the lock exclusively.
 */
static bool
claim_start(ForecastDatabase *db, TimestampTz now, uint32 *generation)
{
	if (db->state == FORECASTER_STARTING &&
		TimestampDifferenceExceeds(db->started_at, now, FORECAST_START_TIMEOUT_MS))
		db->state = FORECASTER_NONE;
	if (db->state != FORECASTER_NONE || now < db->retry_after)
		return false;
	db->state = FORECASTER_STARTING;
	db->started_at = now;
	db->generation = forecast_shared->next_generation++;
	*generation = db->generation;
	return true;
}

/*
 * The monitor saw autovacuum worker worker_pid in database dbid: make sure
 * a forecaster runs there, and have it recompute at once if the worker is
 * new (a new worker builds a new list).
 */
void
forecast_autovacuum_seen(Oid dbid, int worker_pid)
{
	TimestampTz now = GetCurrentTimestamp();
	ForecastDatabase *db;
	int			slot;
	bool		new_worker = true;
	bool		start;
	uint32		generation = 0;
	Latch	   *latch = NULL;

	if (forecast_shared == NULL || !OidIsValid(dbid))
		return;

	LWLockAcquire(forecast_shared->lock, LW_EXCLUSIVE);
	slot = database_slot(dbid, true);
	if (slot < 0)
	{
		LWLockRelease(forecast_shared->lock);
		return;					/* every slot has a running forecaster */
	}
	db = &forecast_shared->databases[slot];
	db->last_seen = now;
	for (int i = 0; i < FORECAST_KNOWN_WORKERS; i++)
	{
		if (db->known_workers[i] == worker_pid)
		{
			new_worker = false;
			break;
		}
	}
	if (new_worker)
	{
		db->known_workers[db->next_known] = worker_pid;
		db->next_known = (db->next_known + 1) % FORECAST_KNOWN_WORKERS;
		db->recompute = true;
	}
	start = claim_start(db, now, &generation);
	if (!start && new_worker && db->state == FORECASTER_RUNNING)
		latch = db->latch;
	LWLockRelease(forecast_shared->lock);

	if (start)
		start_forecaster(slot, dbid, generation, now);
	else if (latch != NULL)
		SetLatch(latch);
}

/*
 * The monitor saw client backends connected to dbid: keep (or start) a
 * forecaster there, so that the forecast is ready before autovacuum's next
 * visit -- an autovacuum of a large table with few dirty pages is over
 * before a forecaster started on its arrival could tell anything.  The
 * forecaster recomputes every FORECAST_IDLE_PERIOD_MS then.
 */
void
forecast_database_in_use(Oid dbid)
{
	TimestampTz now = GetCurrentTimestamp();
	ForecastDatabase *db;
	int			slot;
	bool		start;
	uint32		generation = 0;

	if (forecast_shared == NULL || !OidIsValid(dbid))
		return;
	LWLockAcquire(forecast_shared->lock, LW_EXCLUSIVE);
	slot = database_slot(dbid, true);
	if (slot < 0)
	{
		LWLockRelease(forecast_shared->lock);
		return;
	}
	db = &forecast_shared->databases[slot];
	db->last_in_use = now;
	start = claim_start(db, now, &generation);
	LWLockRelease(forecast_shared->lock);
	if (start)
		start_forecaster(slot, dbid, generation, now);
}

/*
 * A forecaster that stopped without saying so (FATAL at connection: the
 * database was dropped meanwhile) leaves its slot STARTING or RUNNING; give
 * the slot back, with a pause before the next start.
 */
static void
reap_forecasters(TimestampTz now)
{
	for (int slot = 0; slot < FORECAST_MAX_DATABASES; slot++)
	{
		pid_t		pid;

		if (forecaster_handles[slot] == NULL ||
			GetBackgroundWorkerPid(forecaster_handles[slot], &pid) != BGWH_STOPPED)
			continue;
		give_slot_back(slot, handle_generations[slot], now,
					   "exited before connecting");
		pfree(forecaster_handles[slot]);
		forecaster_handles[slot] = NULL;
	}
}

/*
 * One look of the monitor's: every autovacuum worker connected to a
 * database (workers[], from backends_autovacuum_workers()) keeps (or gets) a
 * forecaster there.
 */
void
forecast_monitor_step(const ScanObservation *workers, int nworkers)
{
	if (forecast_shared == NULL)
		return;
	reap_forecasters(GetCurrentTimestamp());
	for (int i = 0; i < nworkers; i++)
		forecast_autovacuum_seen(workers[i].dbid, workers[i].pid);
}

static bool
oid_in(Oid relid, const Oid *list, int n)
{
	for (int i = 0; i < n; i++)
		if (list[i] == relid)
			return true;
	return false;
}

bool
forecast_next(Oid dbid, Oid after_relid, const Oid *busy, int nbusy,
			  AnnouncedScan *out)
{
	ForecastDatabase *db;
	bool		found = false;
	int			slot;
	int			start = 0;

	if (forecast_shared == NULL)
		return false;
	LWLockAcquire(forecast_shared->lock, LW_SHARED);
	slot = database_slot(dbid, false);
	if (slot < 0)
	{
		LWLockRelease(forecast_shared->lock);
		return false;
	}
	db = &forecast_shared->databases[slot];
	if (OidIsValid(after_relid))
	{
		/* done entries stay listed so that "after" them is known */
		start = -1;
		for (int i = 0; i < db->nentries; i++)
		{
			if (db->entries[i].relid == after_relid)
			{
				start = i + 1;
				break;
			}
		}
	}
	for (int i = start; start >= 0 && i < db->nentries; i++)
	{
		ForecastEntry *e = &db->entries[i];

		if (!e->dovacuum || e->done || e->rel.watched_reason[0] != '\0' ||
			e->relid == after_relid || oid_in(e->relid, busy, nbusy))
			continue;
		memset(out, 0, sizeof(*out));
		out->backend_slot = -1;
		out->dbid = dbid;
		out->relid = e->relid;
		out->scanned_after = after_relid;
		out->rel = e->rel;
		found = true;
		break;
	}
	LWLockRelease(forecast_shared->lock);
	return found;
}

bool
forecast_lookup(Oid dbid, Oid relid, PrefetchCommand command,
				ResolvedRelation *out)
{
	bool		found = false;
	int			slot;

	if (forecast_shared == NULL)
		return false;
	LWLockAcquire(forecast_shared->lock, LW_SHARED);
	slot = database_slot(dbid, false);
	for (int i = 0; slot >= 0 && i < forecast_shared->databases[slot].nentries; i++)
	{
		ForecastEntry *e = &forecast_shared->databases[slot].entries[i];

		if (e->relid == relid && e->rel.watched_reason[0] == '\0')
		{
			*out = e->rel;
			/* resolved for VACUUM; an ANALYZE has no skip mode */
			if (command == PREFETCH_CMD_ANALYZE)
				out->skip_mode = VACUUM_SKIP_NORMAL;
			found = true;
			break;
		}
	}
	LWLockRelease(forecast_shared->lock);
	return found;
}

/* ---------------- SQL functions ---------------- */

/*
 * bgw_prefetch_forecast(): the relations published, per database, in
 * autovacuum's expected order.
 */
Datum
bgw_prefetch_forecast(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ForecastDatabase *copy;

	bgwp_require_preload();
	InitMaterializedSRF(fcinfo, 0);

	copy = palloc(sizeof(ForecastDatabase));
	for (int slot = 0; slot < FORECAST_MAX_DATABASES; slot++)
	{
		LWLockAcquire(forecast_shared->lock, LW_SHARED);
		memcpy(copy, &forecast_shared->databases[slot], sizeof(ForecastDatabase));
		LWLockRelease(forecast_shared->lock);
		if (!OidIsValid(copy->dbid))
			continue;
		for (int i = 0; i < copy->nentries; i++)
		{
			ForecastEntry *e = &copy->entries[i];
			Datum		values[11];
			bool		nulls[11];
			int			c = 0;

			memset(nulls, 0, sizeof(nulls));
			values[c++] = ObjectIdGetDatum(copy->dbid);
			values[c++] = ObjectIdGetDatum(e->relid);
			values[c++] = Int32GetDatum(i + 1);
			values[c++] = CStringGetTextDatum(e->rel.relname);
			values[c++] = BoolGetDatum(e->dovacuum);
			values[c++] = BoolGetDatum(e->doanalyze);
			values[c++] = BoolGetDatum(e->wraparound);
			values[c++] = BoolGetDatum(e->done);
			values[c++] = CStringGetTextDatum(e->rel.skip_mode == VACUUM_SKIP_AGGRESSIVE ?
											  "aggressive" : "normal");
			values[c++] = Int64GetDatum((int64) e->nblocks);
			values[c++] = Int32GetDatum(e->rel.io_depth);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	pfree(copy);
	return (Datum) 0;
}

/*
 * bgw_prefetch_forecasters(): one row per database slot in use.
 */
Datum
bgw_prefetch_forecasters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	bgwp_require_preload();
	InitMaterializedSRF(fcinfo, 0);

	for (int slot = 0; slot < FORECAST_MAX_DATABASES; slot++)
	{
		ForecastDatabase *db = &forecast_shared->databases[slot];
		Datum		values[9];
		bool		nulls[9];
		int			c = 0;
		static const char *const state_names[] = {"none", "starting", "running"};

		memset(nulls, 0, sizeof(nulls));
		LWLockAcquire(forecast_shared->lock, LW_SHARED);
		if (!OidIsValid(db->dbid))
		{
			LWLockRelease(forecast_shared->lock);
			continue;
		}
		values[c++] = ObjectIdGetDatum(db->dbid);
		values[c++] = CStringGetTextDatum(state_names[db->state]);
		if (db->pid != 0)
			values[c++] = Int32GetDatum(db->pid);
		else
			nulls[c++] = true;
		if (db->computed_at != 0)
			values[c++] = TimestampTzGetDatum(db->computed_at);
		else
			nulls[c++] = true;
		values[c++] = Int64GetDatum(db->computations);
		values[c++] = Int32GetDatum(db->nentries);
		values[c++] = Int64GetDatum(db->requests_answered);
		if (db->last_seen != 0)
			values[c++] = TimestampTzGetDatum(db->last_seen);
		else
			nulls[c++] = true;
		if (db->last_exit[0] != '\0')
			values[c++] = CStringGetTextDatum(db->last_exit);
		else
			nulls[c++] = true;
		LWLockRelease(forecast_shared->lock);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

