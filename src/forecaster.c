/*-------------------------------------------------------------------------
 *
 * forecaster.c
 *	  The forecaster: a background worker connected to one database that
 *	  computes autovacuum's list of tables there and publishes it
 *	  (forecast.c is the monitor's side, and says why).
 *
 * Locks: the forecaster reads catalogs only, as the syscache does (an
 * AccessShareLock on pg_class for the scan, which conflicts with nothing but
 * VACUUM FULL or CLUSTER of pg_class itself), never locks a user relation,
 * and runs every computation in its own short transaction.  Being connected
 * to the database is what would get in the way of DROP DATABASE (and of
 * ALTER DATABASE RENAME / SET TABLESPACE and CREATE DATABASE ... TEMPLATE),
 * which wait up to 5 seconds for other sessions to leave: they lock the
 * database object first, so the forecaster tries a conflicting lock on it,
 * without waiting, at least every FORECAST_IDLE_CHECK_MS, and leaves if it
 * is not available.  An ERROR in the forecaster is FATAL for it (no error
 * recovery here): it is logged, the exit callbacks give back its requests
 * and its slot, and the monitor starts another after FORECAST_ERROR_BACKOFF_MS
 * at the earliest.
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


/* Recompute this often while autovacuum works in the database, in ms */
#define FORECAST_PERIOD_MS 250
/* Recompute period while only clients are connected, in ms */
#define FORECAST_IDLE_PERIOD_MS 2000
/* Autovacuum "works" in a database seen with a worker this recently, in ms */
#define FORECAST_ACTIVE_MS 1000
/* Linger for autovacuum_naptime plus this after the last worker, in ms */
#define FORECAST_LINGER_MARGIN_MS 5000
/* While lingering, look for a pending DROP DATABASE this often, in ms */
#define FORECAST_IDLE_CHECK_MS 500
/* No forecaster in a database without a large relation for this long, ms */
#define FORECAST_EMPTY_BACKOFF_MS 60000
/* Resolutions older than this are redone even when nothing changed, in ms */
#define FORECAST_RESOLVE_MAX_AGE_MS 5000
/* A relation processed since it was forecast stays listed this long, in ms */
#define FORECAST_DONE_KEEP_MS 10000

/* Order key of the second pass (TOAST tables), above any first-pass row */
#define FORECAST_TOAST_PASS 0x80000000U

/* Forecaster-local */
static int	my_slot = -1;
static uint32 my_generation = 0;
static bool my_exit_clean = false;
static int	my_exit_backoff_ms = 0;
static const char *my_exit_reason = "error";

/*
 * Is DROP DATABASE (or RENAME, SET TABLESPACE, CREATE DATABASE ... TEMPLATE)
 * waiting for this database's sessions to leave?  They hold a lock on the
 * database object that conflicts with the RowExclusiveLock every session
 * takes to connect; try one without waiting.  In a transaction.
 */
static bool
database_wanted_alone(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, MyDatabaseId, 0);
	if (BGWP_LOCK_TRY(&tag, RowExclusiveLock) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(&tag, RowExclusiveLock, false);
	return false;
}

/* The number of blocks of a relation's main fork, by its files; 0 if none */
static BlockNumber
file_blocks(Oid spcid, Oid dbid, Oid relfilenode)
{
	BgwpRelFile rf;
	char	   *path;
	uint64		blocks = 0;

	BGWP_RELFILE_SET(rf, spcid, dbid, relfilenode);
	path = bgwp_rel_path(rf, MAIN_FORKNUM);
	for (int segno = 0;; segno++)
	{
		struct stat st;
		char	   *segpath = segno == 0 ? path : psprintf("%s.%d", path, segno);
		bool		exists = stat(segpath, &st) == 0;

		if (segpath != path)
			pfree(segpath);
		if (!exists)
			break;
		blocks += st.st_size / BLCKSZ;
		if (st.st_size < (off_t) RELSEG_SIZE * BLCKSZ)
			break;
	}
	pfree(path);
	return (BlockNumber) Min(blocks, (uint64) MaxBlockNumber);
}

static void
settings_now(AutovacSettings *s)
{
	s->vac_thresh = autovacuum_vac_thresh;
	s->vac_scale = autovacuum_vac_scale;
	s->vac_ins_thresh = autovacuum_vac_ins_thresh;
	s->vac_ins_scale = autovacuum_vac_ins_scale;
	s->vac_max_thresh = BGWP_AUTOVAC_VAC_MAX_THRESH;
	s->anl_thresh = autovacuum_anl_thresh;
	s->anl_scale = autovacuum_anl_scale;
	s->freeze_max_age = autovacuum_freeze_max_age;
	s->multixact_freeze_max_age = MultiXactMemberFreezeThreshold();
	s->active = AutoVacuumingActive();
}

/* A pg_class row's autovacuum reloptions, as extract_autovac_opts() reads them */
static void
table_options(HeapTuple tuple, TupleDesc pg_class_desc, AutovacTableOptions *o)
{
	bytea	   *relopts = extractRelOptions(tuple, pg_class_desc, NULL);
	AutoVacOpts *av;

	memset(o, 0, sizeof(*o));
	if (relopts == NULL)
		return;
	av = &((StdRdOptions *) relopts)->autovacuum;
	o->has_options = true;
	o->enabled = av->enabled;
	o->vacuum_threshold = av->vacuum_threshold;
	o->vacuum_scale_factor = av->vacuum_scale_factor;
	o->vacuum_ins_threshold = av->vacuum_ins_threshold;
	o->vacuum_ins_scale_factor = av->vacuum_ins_scale_factor;
	o->vacuum_max_threshold = BGWP_AUTOVAC_OPTS_VAC_MAX_THRESH(av);
	o->analyze_threshold = av->analyze_threshold;
	o->analyze_scale_factor = av->analyze_scale_factor;
	o->freeze_max_age = av->freeze_max_age;
	o->multixact_freeze_max_age = av->multixact_freeze_max_age;
	pfree(relopts);
}

static void
table_state(Form_pg_class classForm, AutovacTableState *t)
{
	PgStat_StatTabEntry *tab;

	memset(t, 0, sizeof(*t));
	t->relfrozenxid = classForm->relfrozenxid;
	t->relminmxid = classForm->relminmxid;
	t->reltuples = classForm->reltuples;
	t->relpages = classForm->relpages;
	t->relallfrozen = BGWP_CLASS_RELALLFROZEN(classForm);
	t->is_pg_statistic = classForm->oid == StatisticRelationId;
	/* stats_fetch_consistency = none: a fresh copy, in our context */
	tab = pgstat_fetch_stat_tabentry_ext(classForm->relisshared, classForm->oid);
	if (tab != NULL)
	{
		t->has_stats = true;
		t->dead_tuples = BGWP_TAB_DEAD_TUPLES(tab);
		t->ins_since_vacuum = BGWP_TAB_INS_SINCE_VACUUM(tab);
		t->mod_since_analyze = BGWP_TAB_MOD_SINCE_ANALYZE(tab);
		pfree(tab);
	}
}

/* What the last computation published, to carry forward */
typedef struct PreviousForecast
{
	int			n;
	ForecastEntry *entries;		/* sorted by relid */
} PreviousForecast;

static int
entry_relid_cmp(const void *a, const void *b)
{
	Oid			x = ((const ForecastEntry *) a)->relid;
	Oid			y = ((const ForecastEntry *) b)->relid;

	return x < y ? -1 : x > y ? 1 : 0;
}

static ForecastEntry *
previous_entry(const PreviousForecast *prev, Oid relid)
{
	ForecastEntry key;

	memset(&key, 0, sizeof(key));
	key.relid = relid;
	return bsearch(&key, prev->entries, prev->n, sizeof(ForecastEntry),
				   entry_relid_cmp);
}

/* The toast relid -> main table options map of do_autovacuum() */
typedef struct ToastOptions
{
	Oid			toastrelid;
	AutovacTableOptions options;
} ToastOptions;

/*
 * Consider one pg_class row in autovacuum's order; adds it to entries[] if
 * autovacuum will process it and it is large enough.  Returns true if the
 * relation is at least bgw_prefetch.min_relation_size, needed or not.
 */
static bool
consider_relation(HeapTuple tuple, const AutovacTableOptions *opts,
				  const AutovacSettings *settings, uint32 order,
				  bool toast_pass, bool full, TimestampTz now,
				  const PreviousForecast *prev, ForecastEntry *entries,
				  int *nentries)
{
	Form_pg_class classForm = (Form_pg_class) GETSTRUCT(tuple);
	AutovacTableState state;
	AutovacDecision decision;
	ForecastEntry *old = previous_entry(prev, classForm->oid);
	ForecastEntry *e;
	BlockNumber nblocks = classForm->relpages > 0 ? classForm->relpages : 0;
	bool		large = nblocks >= (BlockNumber) bgwp_min_relation_size;
	Oid			spcid;

	table_state(classForm, &state);
	autovac_needs_vacanalyze(settings, opts, &state, ReadNextTransactionId(),
							 ReadNextMultiXactId(), &decision);
	if (toast_pass)
		decision.doanalyze = false; /* autovacuum ignores it for TOAST */
	/*
	 * A relation processed since it was forecast stays listed for a while,
	 * done: forecast_next() is asked what comes after it while its scan is
	 * served, which may be after its statistics said it is done.
	 */
	if (!decision.dovacuum && !decision.doanalyze &&
		(old == NULL ||
		 (old->done && TimestampDifferenceExceeds(old->done_at, now,
												  FORECAST_DONE_KEEP_MS))))
		return large;

	/*
	 * relpages is as of the last VACUUM or ANALYZE; the files say what the
	 * scan will see.  Mapped catalogs (no relfilenode) are small, left out.
	 */
	if (!OidIsValid(classForm->relfilenode))
		return large;
	spcid = OidIsValid(classForm->reltablespace) ? classForm->reltablespace :
		MyDatabaseTableSpace;
	nblocks = file_blocks(spcid, classForm->relisshared ? InvalidOid : MyDatabaseId,
						  classForm->relfilenode);
	large = large || nblocks >= (BlockNumber) bgwp_min_relation_size;
	if (nblocks < (BlockNumber) bgwp_min_relation_size ||
		*nentries >= FORECAST_MAX_RELATIONS)
		return large;

	e = &entries[(*nentries)++];
	memset(e, 0, sizeof(*e));
	e->relid = classForm->oid;
	e->order = order;
	e->dovacuum = decision.dovacuum;
	e->doanalyze = decision.doanalyze;
	e->wraparound = decision.wraparound;
	e->done = !decision.dovacuum && !decision.doanalyze;
	e->nblocks = nblocks;
	if (e->done)
	{
		/* old is set: only forecast relations are kept once done */
		e->done_at = old->done ? old->done_at : now;
		e->rel = old->rel;
		e->resolved_at = old->resolved_at;
		return true;
	}

	/*
	 * Resolve again only what may have changed: a new autovacuum worker
	 * (full), new files, or an old answer (the skip mode follows the xid
	 * counter).
	 */
	if (old != NULL && !full && old->rel.relfilenode == classForm->relfilenode &&
		old->rel.spcnode == spcid &&
		!TimestampDifferenceExceeds(old->resolved_at, now,
									FORECAST_RESOLVE_MAX_AGE_MS))
	{
		e->rel = old->rel;
		e->resolved_at = old->resolved_at;
	}
	else
	{
		resolver_resolve_autovacuum(e->relid, &e->rel);
		e->resolved_at = now;
	}
	return true;
}

/*
 * Compute autovacuum's list for this database, as do_autovacuum() does,
 * and publish its large relations.  Returns false if the database has no
 * relation of at least bgw_prefetch.min_relation_size (or is wanted alone).
 */
static bool
compute_forecast(bool full, bool *wanted_alone)
{
	ForecastDatabase *db = &forecast_shared->databases[my_slot];
	TimestampTz now = GetCurrentTimestamp();
	AutovacSettings settings;
	PreviousForecast prev;
	ForecastEntry *entries;
	int			nentries = 0;
	bool		any_large = false;
	Relation	classRel;
	TupleDesc	desc;
	SysScanDesc scan;
	HeapTuple	tuple;
	HTAB	   *toast_map;
	HASHCTL		ctl;
	uint32		order = 0;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, "forecasting autovacuum");
	*wanted_alone = database_wanted_alone();
	if (*wanted_alone)
	{
		CommitTransactionCommand();
		return false;
	}

	/* the statistics as they are now, not as first read in this process */
	pgstat_clear_snapshot();
	settings_now(&settings);

	prev.entries = palloc(sizeof(ForecastEntry) * FORECAST_MAX_RELATIONS);
	LWLockAcquire(forecast_shared->lock, LW_SHARED);
	prev.n = db->nentries;
	memcpy(prev.entries, db->entries, sizeof(ForecastEntry) * prev.n);
	LWLockRelease(forecast_shared->lock);
	qsort(prev.entries, prev.n, sizeof(ForecastEntry), entry_relid_cmp);
	entries = palloc(sizeof(ForecastEntry) * FORECAST_MAX_RELATIONS);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(ToastOptions);
	ctl.hcxt = CurrentMemoryContext;
	toast_map = hash_create("bgw_prefetch forecast TOAST map", 256, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/*
	 * do_autovacuum() scans pg_class in physical order, twice: tables and
	 * materialized views, then TOAST tables (with their table's options if
	 * they have none).  Temporary tables are never processed.
	 */
	classRel = table_open(RelationRelationId, AccessShareLock);
	desc = RelationGetDescr(classRel);
	scan = systable_beginscan(classRel, InvalidOid, false, NULL, 0, NULL);
	while ((tuple = systable_getnext(scan)) != NULL)
	{
		Form_pg_class classForm = (Form_pg_class) GETSTRUCT(tuple);
		AutovacTableOptions opts;

		order++;
		if ((classForm->relkind != RELKIND_RELATION &&
			 classForm->relkind != RELKIND_MATVIEW) ||
			classForm->relpersistence == RELPERSISTENCE_TEMP)
			continue;
		CHECK_FOR_INTERRUPTS();
		table_options(tuple, desc, &opts);
		if (consider_relation(tuple, &opts, &settings, order, false, full, now,
							  &prev, entries, &nentries))
			any_large = true;
		if (OidIsValid(classForm->reltoastrelid) && opts.has_options)
		{
			ToastOptions *t = hash_search(toast_map, &classForm->reltoastrelid,
										  HASH_ENTER, NULL);

			t->options = opts;
		}
	}
	systable_endscan(scan);

	order = FORECAST_TOAST_PASS;
	scan = systable_beginscan(classRel, InvalidOid, false, NULL, 0, NULL);
	while ((tuple = systable_getnext(scan)) != NULL)
	{
		Form_pg_class classForm = (Form_pg_class) GETSTRUCT(tuple);
		AutovacTableOptions opts;

		order++;
		if (classForm->relkind != RELKIND_TOASTVALUE ||
			classForm->relpersistence == RELPERSISTENCE_TEMP)
			continue;
		CHECK_FOR_INTERRUPTS();
		table_options(tuple, desc, &opts);
		if (!opts.has_options)
		{
			ToastOptions *t = hash_search(toast_map, &classForm->oid,
										  HASH_FIND, NULL);

			if (t != NULL)
				opts = t->options;
		}
		if (consider_relation(tuple, &opts, &settings, order, true, full, now,
							  &prev, entries, &nentries))
			any_large = true;
	}
	systable_endscan(scan);
	table_close(classRel, AccessShareLock);

	LWLockAcquire(forecast_shared->lock, LW_EXCLUSIVE);
	if (db->generation == my_generation)
	{
		db->nentries = nentries;
		memcpy(db->entries, entries, sizeof(ForecastEntry) * nentries);
		db->computed_at = now;
		db->computations++;
	}
	LWLockRelease(forecast_shared->lock);

	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	return any_large;
}

/* In a short transaction of its own: is the database wanted alone? */
static bool
check_wanted_alone(void)
{
	bool		alone;

	StartTransactionCommand();
	alone = database_wanted_alone();
	CommitTransactionCommand();
	return alone;
}

static int
answer_requests(void)
{
	int			n = resolver_serve_resident();

	if (n > 0)
	{
		LWLockAcquire(forecast_shared->lock, LW_EXCLUSIVE);
		if (forecast_shared->databases[my_slot].generation == my_generation)
			forecast_shared->databases[my_slot].requests_answered += n;
		LWLockRelease(forecast_shared->lock);
	}
	return n;
}

/*
 * Leaving, one way or another (also after an ERROR, which is FATAL here):
 * no more requests come to this process, and its slot says when the next
 * forecaster may start.
 */
static void
forecaster_exit(int code, Datum arg)
{
	TimestampTz now = GetCurrentTimestamp();
	ForecastDatabase *db = &forecast_shared->databases[my_slot];

	/* after an ERROR (FATAL here) nothing else may be held */
	LWLockReleaseAll();
	resolver_resident_detach();
	LWLockAcquire(forecast_shared->lock, LW_EXCLUSIVE);
	if (db->generation == my_generation)
	{
		db->state = FORECASTER_NONE;
		db->pid = 0;
		db->latch = NULL;
		db->nentries = 0;
		db->retry_after = TimestampTzPlusMilliseconds(now, my_exit_clean ?
													  my_exit_backoff_ms :
													  FORECAST_ERROR_BACKOFF_MS);
		strlcpy(db->last_exit, my_exit_clean ? my_exit_reason : "error",
				sizeof(db->last_exit));
	}
	LWLockRelease(forecast_shared->lock);
}

/*
 * Entry point of a forecaster: main_arg is its slot, bgw_extra its
 * generation.
 */
void
bgwp_forecaster_main(Datum main_arg)
{
	ForecastDatabase *db;
	Oid			dbid;
	TimestampTz next_compute = 0;

	my_slot = DatumGetInt32(main_arg);
	memcpy(&my_generation, MyBgworkerEntry->bgw_extra, sizeof(my_generation));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	if (my_slot < 0 || my_slot >= FORECAST_MAX_DATABASES)
		proc_exit(1);
	db = &forecast_shared->databases[my_slot];
	LWLockAcquire(forecast_shared->lock, LW_SHARED);
	dbid = db->dbid;
	if (db->generation != my_generation || db->state != FORECASTER_STARTING)
		dbid = InvalidOid;
	LWLockRelease(forecast_shared->lock);
	if (!OidIsValid(dbid))
		proc_exit(0);			/* superseded before it started */

	/* autovacuum also works in databases that do not allow connections */
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid,
											  BGWORKER_BYPASS_ALLOWCONN);
	pgstat_report_appname("bgw_prefetch forecaster");
	backends_attach();
	/* relation_needs_vacanalyze() on current counts, not a cached snapshot */
	SetConfigOption("stats_fetch_consistency", "none", PGC_SUSET, PGC_S_OVERRIDE);

	before_shmem_exit(forecaster_exit, (Datum) 0);
	LWLockAcquire(forecast_shared->lock, LW_EXCLUSIVE);
	if (db->generation != my_generation)
	{
		LWLockRelease(forecast_shared->lock);
		my_exit_clean = true;
		proc_exit(0);
	}
	db->state = FORECASTER_RUNNING;
	db->pid = MyProcPid;
	db->latch = MyLatch;
	db->recompute = true;
	LWLockRelease(forecast_shared->lock);

	/* a resident resolver of the same database still leaving: forecast only */
	if (!resolver_resident_attach())
		ereport(DEBUG1,
				(errmsg_internal("bgw_prefetch: forecaster of database %u does not answer resolve requests",
								 dbid)));

	for (;;)
	{
		TimestampTz now;
		TimestampTz last_seen;
		TimestampTz last_in_use;
		bool		recompute;
		bool		active;
		bool		in_use;
		long		timeout;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		/* a scan waits for these: first */
		(void) answer_requests();

		LWLockAcquire(forecast_shared->lock, LW_EXCLUSIVE);
		recompute = db->recompute;
		db->recompute = false;
		last_seen = db->last_seen;
		last_in_use = db->last_in_use;
		LWLockRelease(forecast_shared->lock);

		now = GetCurrentTimestamp();
		active = !TimestampDifferenceExceeds(last_seen, now, FORECAST_ACTIVE_MS);
		in_use = !TimestampDifferenceExceeds(last_in_use, now, FORECAST_ACTIVE_MS);
		if (recompute || ((active || in_use) && now >= next_compute))
		{
			bool		wanted_alone;

			if (!compute_forecast(recompute, &wanted_alone))
			{
				my_exit_reason = wanted_alone ? "database wanted alone" :
					"no relation of min_relation_size";
				my_exit_backoff_ms = wanted_alone ? FORECAST_ERROR_BACKOFF_MS :
					FORECAST_EMPTY_BACKOFF_MS;
				break;
			}
			next_compute = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   active ? FORECAST_PERIOD_MS :
													   FORECAST_IDLE_PERIOD_MS);
			continue;			/* requests may have come meanwhile */
		}
		if (TimestampDifferenceExceeds(Max(last_seen, last_in_use), now,
									   autovacuum_naptime * 1000L +
									   FORECAST_LINGER_MARGIN_MS))
		{
			my_exit_reason = "autovacuum idle";
			my_exit_backoff_ms = 0;
			break;
		}
		if (!active && check_wanted_alone())
		{
			my_exit_reason = "database wanted alone";
			my_exit_backoff_ms = FORECAST_ERROR_BACKOFF_MS;
			break;
		}

		if (active || in_use)
		{
			long		secs;
			int			usecs;

			TimestampDifference(now, next_compute, &secs, &usecs);
			timeout = Max(1, secs * 1000 + usecs / 1000);
		}
		else
			timeout = FORECAST_IDLE_CHECK_MS;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
	}

	/* answer what came in the meantime, then take no more */
	(void) answer_requests();
	my_exit_clean = true;
	ereport(DEBUG1,
			(errmsg_internal("bgw_prefetch: forecaster of database %u exits: %s",
							 dbid, my_exit_reason)));
	proc_exit(0);
}

