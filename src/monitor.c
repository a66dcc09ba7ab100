/*-------------------------------------------------------------------------
 *
 * monitor.c
 *	  The bgw_prefetch monitor: a static background worker's main loop.
 *
 * The monitor polls the backend status array for VACUUM and ANALYZE
 * scans (backends.c), hands them to the prefetcher (prefetcher.c), and
 * publishes its state for bgw_prefetch_status() and the
 * pg_stat_prefetch_activity view.
 *
 * It connects to no database (only shared catalogs, like the logical
 * replication launcher), so that it appears in pg_stat_activity and takes
 * part in ProcSignalBarriers, which DROP DATABASE waits for in PostgreSQL
 * 15 -- every wait below is a latch wait and every loop checks for
 * interrupts, so barriers are absorbed within one iteration.  It holds no
 * heavyweight lock, ever.
 *
 * Nothing it must see starts without setting its latch: a manual VACUUM or
 * ANALYZE announces itself from the utility hook, an autovacuum worker's
 * first transaction and every scan's commit publish a record
 * (backend_reads.c).  So while nothing runs it sleeps: it steps every
 * bgw_prefetch.naptime, and after IDLE_STEPS_BEFORE_HIBERNATION idle steps
 * only every HIBERNATE_MS (or naptime, if longer), as the background
 * writer hibernates.  It steps at a short fixed interval (or when a read
 * completes, through the I/O engine's eventfd) while it serves targets,
 * while an autovacuum worker exists, and for a moment after a backend
 * announced a manual VACUUM or ANALYZE; not at all when the reads it just
 * issued have all completed already and more could be issued.  In
 * between, while it follows a command, it wakes every SAMPLE_INTERVAL_MS
 * only to sample the command's backend (prefetcher_sample(): is it still on
 * its relation, is it waiting on a read): that is how pg_stat_prefetch
 * measures read time and the command's duration without any code in the
 * backend.
 *
 * An ERROR ends the monitor, as it ends autoprewarm's leader: the
 * background worker machinery logs it and exits with status 1, the exit
 * callback (monitor_on_exit()) gives up every target, and the postmaster
 * starts a new monitor after bgw_restart_time.  Nothing is retried inside
 * a process whose state the error may have left half-changed.
 * pg_cancel_backend() is ignored (there is no query to cancel); SIGTERM
 * ends the monitor with status 0 at a server shutdown and 1, restarted,
 * otherwise (worker_exit.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/bufmgr.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "bgw_prefetch.h"
#include "compat.h"
#include "forecast.h"
#include "io_engine.h"
#include "prefetcher.h"
#include "resolver.h"
#include "backend_reads.h"
#include "backends.h"
#include "worker_exit.h"

PG_FUNCTION_INFO_V1(bgw_prefetch_activity);
PG_FUNCTION_INFO_V1(bgw_prefetch_status);

/* Poll interval while targets are active, in ms. */
#define ACTIVE_POLL_MS 10
/* Idle steps at bgw_prefetch.naptime before the monitor hibernates */
#define IDLE_STEPS_BEFORE_HIBERNATION 2
/* The step interval of a hibernating monitor (unless naptime is longer), ms */
#define HIBERNATE_MS 1000
/* Between polls, followed commands are sampled this often, in ms. */
#define SAMPLE_INTERVAL_MS 1
/* After a scan is announced, poll at ACTIVE_POLL_MS for this long, in ms. */
#define ANNOUNCED_POLL_WINDOW_MS 2000
/* How often the databases clients use are looked for, in ms. */
#define DATABASES_POLL_MS 1000

typedef struct MonitorShared
{
	LWLock	   *lock;			/* protects everything below */
	pid_t		pid;
	Latch	   *latch;
	TimestampTz scan_announced; /* a manual VACUUM/ANALYZE said it starts */
	char		io_method[16];
	char		io_fallback_reason[256];
	int64		targets_served;
	char		pacing[64];		/* paced, idle, off, or why unavailable */
	double		pacing_rate_mb_s;	/* -1: never measured */
	double		probe_latency_us;
	double		probe_base_us;
	TimestampTz config_loaded_at;	/* the monitor read its configuration */
	int			nrows;
	ActivityRow rows[BGWP_MAX_TARGETS];
} MonitorShared;

static MonitorShared *monitor_shared = NULL;

/* The idle state is published; false whenever the engine was (re)started. */
static bool published_idle = false;

Size
monitor_shmem_size(void)
{
	return MAXALIGN(sizeof(MonitorShared));
}

void
monitor_shmem_startup(void)
{
	bool		found;

	monitor_shared = ShmemInitStruct("bgw_prefetch monitor",
									 sizeof(MonitorShared), &found);
	if (!found)
	{
		memset(monitor_shared, 0, sizeof(MonitorShared));
		monitor_shared->lock =
			&(GetNamedLWLockTranche(BGWP_LWLOCK_TRANCHE))[BGWP_LWLOCK_MONITOR].lock;
		strlcpy(monitor_shared->io_method, "none", sizeof(monitor_shared->io_method));
	}
}

/*
 * Register the monitor as a static worker (from _PG_init).
 */
void
monitor_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 10;
	strcpy(worker.bgw_library_name, "bgw_prefetch");
	strcpy(worker.bgw_function_name, "bgwp_monitor_main");
	strcpy(worker.bgw_name, "bgw_prefetch monitor");
	strcpy(worker.bgw_type, "bgw_prefetch monitor");
	RegisterBackgroundWorker(&worker);
}

/* Wake the monitor. */
static void
monitor_wakeup(void)
{
	Latch	   *latch;

	if (monitor_shared == NULL)
		return;
	LWLockAcquire(monitor_shared->lock, LW_SHARED);
	latch = monitor_shared->latch;
	LWLockRelease(monitor_shared->lock);
	if (latch)
		SetLatch(latch);
}

/*
 * Called by a backend about to run VACUUM or ANALYZE: the monitor polls
 * closely for a while, since progress reporting starts only once the
 * command has opened its first relation.
 */
void
monitor_announce_scan(void)
{
	if (monitor_shared == NULL)
		return;
	LWLockAcquire(monitor_shared->lock, LW_EXCLUSIVE);
	monitor_shared->scan_announced = GetCurrentTimestamp();
	LWLockRelease(monitor_shared->lock);
	monitor_wakeup();
}

/* Was a scan announced recently enough to poll closely? */
static bool
scan_recently_announced(void)
{
	TimestampTz announced;

	LWLockAcquire(monitor_shared->lock, LW_SHARED);
	announced = monitor_shared->scan_announced;
	LWLockRelease(monitor_shared->lock);
	return !TimestampDifferenceExceeds(announced, GetCurrentTimestamp(),
									   ANNOUNCED_POLL_WINDOW_MS);
}

/*
 * bgw_prefetch_status(): one row on the extension's own state: shared hash
 * use (stats.c), the I/O method in force and why, the monitor, and the
 * transactions VACUUM and ANALYZE backends published that the monitor has
 * not read yet (backend_reads.c).
 */
Datum
bgw_prefetch_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[15];
	bool		nulls[15];
	StatsStatus ss;
	int			pid;
	char		io_method[16];
	char		io_fallback_reason[256];
	int			active_targets;
	int64		targets_served;
	char		pacing[64];
	double		pacing_figures[3];
	TimestampTz config_loaded_at;

	stats_get_status(&ss);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	LWLockAcquire(monitor_shared->lock, LW_SHARED);
	pid = monitor_shared->pid;
	strlcpy(io_method, monitor_shared->io_method, sizeof(io_method));
	strlcpy(io_fallback_reason, monitor_shared->io_fallback_reason,
			sizeof(io_fallback_reason));
	active_targets = monitor_shared->nrows;
	targets_served = monitor_shared->targets_served;
	strlcpy(pacing, pid != 0 ? monitor_shared->pacing : "",
			sizeof(pacing));
	pacing_figures[0] = monitor_shared->pacing_rate_mb_s;
	pacing_figures[1] = monitor_shared->probe_latency_us;
	pacing_figures[2] = monitor_shared->probe_base_us;
	config_loaded_at = monitor_shared->config_loaded_at;
	LWLockRelease(monitor_shared->lock);

	memset(nulls, 0, sizeof(nulls));
	values[0] = Int64GetDatum(ss.entries);
	values[1] = Int32GetDatum(bgwp_max_relations);
	values[2] = Int64GetDatum(ss.evictions);
	values[3] = TimestampTzGetDatum(ss.stats_reset);
	if (pid != 0)
		values[4] = Int32GetDatum(pid);
	else
		nulls[4] = true;
	values[5] = CStringGetTextDatum(io_method);
	if (io_fallback_reason[0] != '\0')
		values[6] = CStringGetTextDatum(io_fallback_reason);
	else
		nulls[6] = true;
	values[7] = Int32GetDatum(active_targets);
	values[8] = Int64GetDatum(targets_served);
	values[9] = Int64GetDatum((int64) backend_reads_unread());
	if (pacing[0] != '\0')
		values[10] = CStringGetTextDatum(pacing);
	else
		nulls[10] = true;
	for (int i = 0; i < 3; i++)
	{
		/* a figure not measured yet (or no monitor) is NULL */
		if (pid != 0 && pacing_figures[i] >= 0)
			values[11 + i] = Float8GetDatum(pacing_figures[i]);
		else
			nulls[11 + i] = true;
	}
	if (pid != 0)
		values[14] = TimestampTzGetDatum(config_loaded_at);
	else
		nulls[14] = true;

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * The monitor has read its configuration again and applied it: say when,
 * so that whoever changed it can wait for it (bgw_prefetch_status()).
 */
static void
publish_config_loaded(void)
{
	LWLockAcquire(monitor_shared->lock, LW_EXCLUSIVE);
	monitor_shared->config_loaded_at = GetCurrentTimestamp();
	LWLockRelease(monitor_shared->lock);
}

/*
 * Copy the prefetcher's state to shared memory for the SQL functions.
 */
static void
publish_state(int64 targets_served)
{
	ActivityRow rows[BGWP_MAX_TARGETS];
	int			nrows = prefetcher_activity(rows, BGWP_MAX_TARGETS);
	const char *reason = prefetcher_fallback_reason();
	PacingState pacing;

	prefetch_pacing_state(&pacing);

	/* an idle monitor has nothing new to say after saying it once */
	if (nrows == 0 && published_idle)
		return;
	published_idle = (nrows == 0);

	LWLockAcquire(monitor_shared->lock, LW_EXCLUSIVE);
	monitor_shared->nrows = nrows;
	memcpy(monitor_shared->rows, rows, nrows * sizeof(ActivityRow));
	strlcpy(monitor_shared->io_method, prefetcher_io_method(),
			sizeof(monitor_shared->io_method));
	strlcpy(monitor_shared->io_fallback_reason, reason ? reason : "",
			sizeof(monitor_shared->io_fallback_reason));
	monitor_shared->targets_served = targets_served;
	strlcpy(monitor_shared->pacing,
			!bgwp_pacing ? "off" :
			pacing.unpaced_reason ? pacing.unpaced_reason :
			pacing.paced ? "paced" :
			pacing.alone ? "alone" : "idle",
			sizeof(monitor_shared->pacing));
	monitor_shared->pacing_rate_mb_s = pacing.rate_mb_s;
	monitor_shared->probe_latency_us = pacing.latency_us;
	monitor_shared->probe_base_us = pacing.base_us;
	LWLockRelease(monitor_shared->lock);
}

/*
 * before_shmem_exit callback, run at every exit, an ERROR's included: give
 * up every target (its resolver and loader are told to stop, its files
 * closed) and clear what the monitor published.  After an ERROR the
 * background worker code exits without releasing anything, so the
 * LWLocks the failed step held are released first.
 */
static void
monitor_on_exit(int code, Datum arg)
{
	LWLockReleaseAll();
	ConditionVariableCancelSleep();
	pgstat_report_wait_end();
	backend_reads_set_reader(NULL);
	prefetcher_stop(false);

	LWLockAcquire(monitor_shared->lock, LW_EXCLUSIVE);
	monitor_shared->pid = 0;
	monitor_shared->latch = NULL;
	monitor_shared->nrows = 0;
	strlcpy(monitor_shared->io_method, "none", sizeof(monitor_shared->io_method));
	LWLockRelease(monitor_shared->lock);
}

/*
 * Look for new scans and serve the known ones.  Returns true if the monitor
 * should poll closely: it serves targets, or an autovacuum worker exists
 * (its next table may start at any moment; autovacuum runs no statement a
 * hook could see).
 */
static bool
monitor_iteration(int64 *targets_served)
{
	ScanObservation found[BGWP_MAX_TARGETS];
	AnnouncedScan starting[BGWP_MAX_TARGETS];
	ScanObservation workers[BGWP_MAX_TARGETS];
	int			nworkers = 0;
	int			nfound = 0;
	int			nstarting = 0;
	bool		autovacuum_running = false;
	int			foreground_running = 0;

	/*
	 * Scans over before they could be seen, from what their backends
	 * published (prefetch_unseen.c); autovacuum's visits to databases.
	 */
	prefetcher_record_published();
	if (bgwp_enabled)
	{
		/*
		 * Manual VACUUMs announced since the last look first: planned from
		 * block 0 whether or not their scan shows yet, so that the discovery
		 * below finds them served already.  The backend announces before it
		 * sets scan_announced, so the announcement slots (and their lock)
		 * are looked at only for a while after an announcement.
		 */
		if (scan_recently_announced())
			nstarting = resolver_take_first_scans(starting, BGWP_MAX_TARGETS);
		for (int i = 0; i < nstarting; i++)
			prefetcher_start_announced(&starting[i]);
		nfound = backends_discover(found, BGWP_MAX_TARGETS, &autovacuum_running,
								   &foreground_running);
		prefetch_pacing_note_foreground(foreground_running,
										GetCurrentTimestamp());
		if (autovacuum_running)
		{
			nworkers = backends_autovacuum_workers(workers, BGWP_MAX_TARGETS);
			forecast_monitor_step(workers, nworkers);
		}
	}
	for (int i = 0; i < nfound; i++)
		prefetcher_track(&found[i]);
	prefetcher_forecast(workers, nworkers);
	prefetcher_step();
	*targets_served += prefetcher_take_started();
	publish_state(*targets_served);
	return prefetcher_active_targets() > 0 || autovacuum_running;
}

/*
 * Every database client backends are connected to keeps a forecaster
 * (forecast.c), so that autovacuum's next visit is forecast before it
 * comes.
 */
static void
keep_forecasters(void)
{
	Oid			dbids[BGWP_MAX_TARGETS];
	int			n;

	if (!bgwp_enabled)
		return;
	n = backends_connected_databases(dbids, BGWP_MAX_TARGETS);
	for (int i = 0; i < n; i++)
		forecast_database_in_use(dbids[i]);
}

/* The monitor loop's wait event set (monitor_wait()) */
static WaitEventSet *wait_set = NULL;
static int	wait_set_fd = -1;
static int	wait_set_socket_pos = -1;

/* Forget the wait event set: the engine (and its eventfd) is made anew. */
static void
monitor_wait_reset(void)
{
	if (wait_set != NULL)
		FreeWaitEventSet(wait_set);
	wait_set = NULL;
}

/*
 * The loop's wait: for its latch, the postmaster's death, the timeout and,
 * if events has WL_SOCKET_READABLE, the I/O engine's eventfd.  The loop
 * wakes up to a thousand times a second while it samples a scan, so the
 * wait event set is made once and kept (WaitLatchOrSocket() would create
 * and close an epoll set at every wait), and made again only when the
 * engine's eventfd changes (a new engine after an io_method reload or an
 * error).  Returns the WL_* events that occurred.
 */
static int
monitor_wait(int events, int event_fd, long timeout)
{
	WaitEvent	occurred;

	if (wait_set != NULL && event_fd != wait_set_fd)
		monitor_wait_reset();
	if (wait_set == NULL)
	{
		wait_set = BGWP_CREATE_PROCESS_WAIT_EVENT_SET(3);
		AddWaitEventToSet(wait_set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		AddWaitEventToSet(wait_set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET,
						  NULL, NULL);
		wait_set_socket_pos = event_fd >= 0 ?
			AddWaitEventToSet(wait_set, 0, event_fd, NULL, NULL) : -1;
		wait_set_fd = event_fd;
	}
	if (wait_set_socket_pos >= 0)
		ModifyWaitEvent(wait_set, wait_set_socket_pos,
						events & WL_SOCKET_READABLE, NULL);
	if (WaitEventSetWait(wait_set, timeout, &occurred, 1, PG_WAIT_EXTENSION) == 0)
		return WL_TIMEOUT;
	return occurred.events;
}

/*
 * Entry point of the monitor.
 */
void
bgwp_monitor_main(Datum main_arg)
{
	MemoryContext loop_context;
	int			engine_method;
	int64		targets_served = 0;
	TimestampTz last_step;
	long		step_interval;
	bool		step_now;
	int			idle_steps;
	TimestampTz last_databases;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	/* pg_cancel_backend(): there is no query to cancel, only scans to lose */
	pqsignal(SIGINT, SIG_IGN);
	worker_exit_install_sigterm();
	BackgroundWorkerUnblockSignals();

	/* shared catalogs only: visible in pg_stat_activity, bound to no database */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("bgw_prefetch monitor");

	/* backends_completed_since() wants fresh statistics, not a snapshot */
	SetConfigOption("stats_fetch_consistency", "none", PGC_SUSET, PGC_S_OVERRIDE);

	CurrentResourceOwner = ResourceOwnerCreate(NULL, "bgw_prefetch monitor");
	loop_context = AllocSetContextCreate(TopMemoryContext,
										 "bgw_prefetch monitor loop",
										 ALLOCSET_DEFAULT_SIZES);
	backends_attach();
	resolver_reclaim_requests();

	LWLockAcquire(monitor_shared->lock, LW_EXCLUSIVE);
	monitor_shared->pid = MyProcPid;
	monitor_shared->latch = MyLatch;
	monitor_shared->config_loaded_at = GetCurrentTimestamp();
	LWLockRelease(monitor_shared->lock);
	before_shmem_exit(monitor_on_exit, (Datum) 0);
	backend_reads_set_reader(MyLatch);

	MemoryContextSwitchTo(loop_context);
	prefetcher_start();
	published_idle = false;
	engine_method = bgwp_io_method;

	last_step = 0;
	last_databases = 0;
	step_interval = ACTIVE_POLL_MS;
	step_now = true;
	idle_steps = 0;
	while (!ShutdownRequestPending)
	{
		long		timeout;
		int			event_fd;
		int			events = 0;
		int			rc;
		TimestampTz now;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			if (engine_method != bgwp_io_method)
			{
				/* io_method changed: new engine, targets start over */
				prefetcher_stop(true);
				monitor_wait_reset();
				prefetcher_start();
				published_idle = false;
				engine_method = bgwp_io_method;
			}
			publish_config_loaded();
		}

		now = GetCurrentTimestamp();
		if (TimestampDifferenceExceeds(last_databases, now, DATABASES_POLL_MS))
		{
			keep_forecasters();
			last_databases = now;
		}
		/* between steps, only a sample */
		if (!step_now &&
			!TimestampDifferenceExceeds(last_step, now, step_interval))
			prefetcher_sample(now);
		if (step_now ||
			TimestampDifferenceExceeds(last_step, now, step_interval))
		{
			bool		busy = monitor_iteration(&targets_served);

			MemoryContextReset(loop_context);
			/* let the statistics system release entries of dropped relations */
			if (busy)
				pgstat_report_stat(false);
			if (busy || scan_recently_announced())
			{
				idle_steps = 0;
				step_interval = ACTIVE_POLL_MS;
			}
			else if (++idle_steps <= IDLE_STEPS_BEFORE_HIBERNATION)
				step_interval = bgwp_naptime;
			else
				step_interval = Max(bgwp_naptime, HIBERNATE_MS);
			last_step = now;
			step_now = false;
		}

		event_fd = prefetcher_event_fd();
		if (prefetcher_active_targets() > 0 && event_fd >= 0)
			events |= WL_SOCKET_READABLE;
		if (prefetcher_wants_next_step())
			timeout = 0;
		else
		{
			long		secs;
			int			usecs;

			TimestampDifference(GetCurrentTimestamp(),
								TimestampTzPlusMilliseconds(last_step, step_interval),
								&secs, &usecs);
			timeout = secs * 1000 + usecs / 1000;
			if (prefetcher_sampling())
				timeout = Min(timeout, SAMPLE_INTERVAL_MS);
		}
		rc = monitor_wait(events, event_fd, timeout);
		/* a wakeup (announcement, completed read) or a timed step */
		if ((rc & (WL_LATCH_SET | WL_SOCKET_READABLE)) != 0 || timeout == 0)
			step_now = true;
	}

	prefetcher_stop(true);
	worker_exit_on_request();
}

/*
 * SRF behind pg_stat_prefetch_activity.
 */
Datum
bgw_prefetch_activity(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ActivityRow rows[BGWP_MAX_TARGETS];
	int			nrows;
	char		io_method[16];

	bgwp_require_preload();
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(monitor_shared->lock, LW_SHARED);
	nrows = monitor_shared->nrows;
	memcpy(rows, monitor_shared->rows, nrows * sizeof(ActivityRow));
	strlcpy(io_method, monitor_shared->io_method, sizeof(io_method));
	LWLockRelease(monitor_shared->lock);

	for (int i = 0; i < nrows; i++)
	{
		ActivityRow *r = &rows[i];
		Datum		values[15];
		bool		nulls[15];
		int			c = 0;

		memset(nulls, 0, sizeof(nulls));
		values[c++] = Int32GetDatum(r->pid);
		values[c++] = ObjectIdGetDatum(r->dbid);
		values[c++] = ObjectIdGetDatum(r->relid);
		values[c++] = CStringGetTextDatum(prefetch_command_name(r->command));
		values[c++] = CStringGetTextDatum(r->state);
		values[c++] = Int64GetDatum(r->consumer_block);
		values[c++] = Int64GetDatum(r->total_blocks);
		values[c++] = Int64GetDatum(r->prefetch_block);
		values[c++] = Int64GetDatum(r->distance);
		values[c++] = Int32GetDatum(r->reads_in_flight);
		values[c++] = Int32GetDatum(r->io_depth);
		if (r->io_depth_source[0])
			values[c++] = CStringGetTextDatum(r->io_depth_source);
		else
			nulls[c++] = true;
		values[c++] = CStringGetTextDatum(io_method);
		values[c++] = Int64GetDatum(r->planned_blocks);
		values[c++] = Int64GetDatum(r->prefetched_blocks);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
