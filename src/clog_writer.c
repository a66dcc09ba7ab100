/*-------------------------------------------------------------------------
 *
 * clog_writer.c
 *	  Background writer for dirty CLOG (pg_xact) pages.
 *
 * When a backend needs a CLOG page that is not in the SLRU buffers, it
 * evicts the least recently used slot; if that slot is dirty, the backend
 * must first write it out (flushing WAL up to the page's group LSN) while
 * everyone else that needs the slot waits.  Under a workload that looks up
 * many old, unhinted transaction ids while new transactions keep filling
 * the latest page, those synchronous writes land in commit and query
 * latency.
 *
 * The CLOG writer is a static background worker that attaches to the CLOG
 * SLRU's shared memory and, every bgw_prefetch.clog_writer_delay
 * milliseconds, writes the dirty pages other than the latest one, oldest
 * first, so that the page a backend evicts is normally already clean.  It
 * writes with SimpleLruWritePage() under the lock that protects the page's
 * slot (the control lock up to PostgreSQL 16, the slot's bank lock from 17),
 * exactly as a backend evicting the page would: the WAL-before-data rule,
 * the fsync request forwarded to the checkpointer and the pg_stat_slru
 * counters all stay core's (clog_slru.c; this file decides when).  It never writes during recovery (the startup
 * process owns the CLOG then), so on a standby it waits and starts working
 * after promotion.  When there is nothing to do and no transaction ids are
 * being consumed it hibernates, like the bgwriter.
 *
 * With bgw_prefetch.clog_writer = auto (the default) it writes only while
 * it helps: where the CLOG buffers hold every page in use, nobody evicts a
 * dirty page and writing them early would only add writes and WAL flushes.
 * So it first only looks, and starts writing when it sees a dirty page
 * evicted (clog_writer_evictions()), for CLOG_WRITER_AUTO_HOLD_MS after the
 * last eviction that needed, or would have needed, a write.
 *
 * The worker connects to no database: it needs only shared memory, but a
 * connection-less worker has no entry in pg_stat_activity, so it asks for
 * the same "shared catalogs only" connection the logical replication
 * launcher uses, purely to be visible there.
 *
 * An ERROR (a failed write: a full disk, EIO) ends the writer; its LWLocks
 * are released first thing at exit, as the bgwriter releases its own, and
 * the postmaster starts a new writer after CLOG_WRITER_RESTART_S, which
 * waits longer after every further error in a row (clog_writer_back_off()).
 * SIGTERM ends it with status 0 at a server shutdown and 1, restarted,
 * after pg_terminate_backend() (worker_exit.c); pg_cancel_backend() is
 * ignored.
 *
 * The CLOG SLRU's layout is not an API.  Everything version-specific is in
 * compat.h, and the worker checks what it finds in shared memory against
 * it; on any mismatch it logs one line, reports itself disabled and stays
 * idle rather than touching memory it does not understand.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/clog.h"
#include "access/slru.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "bgw_prefetch.h"
#include "clog_slru.h"
#include "compat.h"
#include "worker_exit.h"

/*
 * Pacing.  A CLOG page other than the latest one gets dirty mostly right
 * after the xid counter has crossed into a new page, when the transactions
 * still running with xids on the old page commit; under a load of old-xid
 * lookups a backend then evicts it within milliseconds of its last update.
 * So besides polling every bgw_prefetch.clog_writer_delay ms, the writer
 * predicts the crossing from the xid consumption rate and closes in on it:
 * it sleeps half the predicted time (plus CLOG_WRITER_SWITCH_MARGIN_MS) and
 * predicts again.  The rate measured over one sleep is noisy (it easily
 * doubles from one 200 ms interval to the next on a busy machine), so the
 * prediction uses a decaying peak of it (halved every
 * CLOG_WRITER_PEAK_HALF_LIFE_MS): better a few early wakeups than a late
 * one.  After a round that wrote something the writer comes back within
 * CLOG_WRITER_FOLLOWUP_MS, since late commits re-dirty the page it just
 * wrote.
 *
 * Hibernation, as in bgwriter.c: after CLOG_WRITER_IDLE_ROUNDS consecutive
 * rounds without anything to write and without any xid being assigned,
 * sleep HIBERNATE_FACTOR times longer, but no longer than MAX_HIBERNATE_MS.
 * Unlike the bgwriter, nobody wakes the writer when work arrives, and
 * filling a CLOG page takes about 2 s at 15k transactions/s: hibernating
 * longer would miss the first page switches of every burst.
 */
#define CLOG_WRITER_SWITCH_MARGIN_MS	1
#define CLOG_WRITER_PEAK_HALF_LIFE_MS	1000.0
#define CLOG_WRITER_FOLLOWUP_MS		10
#define CLOG_WRITER_IDLE_ROUNDS		2
#define CLOG_WRITER_AUTO_HOLD_MS	60000
#define HIBERNATE_FACTOR			50
#define MAX_HIBERNATE_MS			1000

/* What the writer is doing, as shown by bgw_prefetch_clog_stats().status */
typedef enum ClogWriterState
{
	CLOG_WRITER_NOT_RUNNING,	/* no writer process attached */
	CLOG_WRITER_WRITING,		/* enabled, polling at clog_writer_delay */
	CLOG_WRITER_IDLE,			/* enabled, hibernating: nothing to do */
	CLOG_WRITER_STANDBY,		/* auto: no dirty page evicted lately */
	CLOG_WRITER_RECOVERY,		/* server in recovery: never writes */
	CLOG_WRITER_OFF,			/* turned off by configuration */
	CLOG_WRITER_BACKING_OFF,	/* waiting after consecutive errors */
	CLOG_WRITER_DISABLED		/* CLOG shared memory not as expected */
} ClogWriterState;

#define CLOG_WRITER_REASON_LEN		128

/*
 * Restarts after errors.  The postmaster starts a new writer
 * CLOG_WRITER_RESTART_S after one ends with an ERROR; after the second
 * error in a row the new writer itself waits before writing, so that the
 * interval doubles with every error (20 s, 40 s, ...) up to
 * CLOG_WRITER_MAX_BACKOFF_S, rather than failing every 10 s on a full or
 * broken disk.  Meanwhile the server writes its CLOG pages itself, as
 * without the extension.
 */
#define CLOG_WRITER_RESTART_S		10
#define CLOG_WRITER_MAX_BACKOFF_S	600

/*
 * Shared state.  Only the writer updates the counters and its state; a
 * reset from pg_stat_prefetch_reset() zeroes them.  Everything is read and
 * written under the spinlock.
 */
typedef struct ClogWriterShared
{
	slock_t		mutex;
	ClogWriterState state;
	char		disabled_reason[CLOG_WRITER_REASON_LEN];
	int64		pages_written;
	double		write_time;		/* ms spent in SimpleLruWritePage */
	int64		rounds;			/* looks at the CLOG buffers, writing or
								 * not */
	TimestampTz last_write;		/* 0 = never */
	TimestampTz stats_reset;
	int			consecutive_errors; /* writers ended by an error since the
									 * last page written */
} ClogWriterShared;

static ClogWriterShared *cw_shared = NULL;

static bool cw_attached = false;

/*
 * Why the writer is disabled (the CLOG's layout is not the one it was
 * built for), or NULL.
 */
static const char *cw_disabled_reason = NULL;

/* auto: write until then (0: not since the writer started) */
static TimestampTz cw_write_until = 0;

/* Our last published state (the writer is the only one to publish). */
static ClogWriterState cw_state = CLOG_WRITER_NOT_RUNNING;

/* Pacing state, reset whenever the writer stops being active. */
static FullTransactionId cw_prev_next_xid;
static TimestampTz cw_prev_round_time = 0;
static double cw_peak_rate = 0;	/* xids per ms */
static int	cw_idle_rounds = 0;

static int	clog_writer_round(void);
static int	clog_writer_evictions(void);
static long clog_writer_hibernate_ms(void);
static void clog_writer_pace_reset(void);
static long clog_writer_pace(int written, bool *hibernate);
static void clog_writer_set_state(ClogWriterState state);
static void clog_writer_on_exit(int code, Datum arg);
static void clog_writer_handle_interrupts(void);

PG_FUNCTION_INFO_V1(bgw_prefetch_clog_stats);

/*
 * Shared memory needed by the writer's statistics.
 */
Size
clog_writer_shmem_size(void)
{
	return MAXALIGN(sizeof(ClogWriterShared));
}

/*
 * Create or attach to the writer's shared state.  Called from the
 * extension's shmem_startup_hook with AddinShmemInitLock held.
 */
void
clog_writer_shmem_startup(void)
{
	bool		found;

	cw_shared = ShmemInitStruct("bgw_prefetch clog writer",
								sizeof(ClogWriterShared), &found);
	if (!found)
	{
		memset(cw_shared, 0, sizeof(ClogWriterShared));
		SpinLockInit(&cw_shared->mutex);
		cw_shared->state = CLOG_WRITER_NOT_RUNNING;
		cw_shared->stats_reset = GetCurrentTimestamp();
	}
}

/*
 * Register the static CLOG writer.  Called from _PG_init while the library
 * is being preloaded.  The worker is registered even when
 * bgw_prefetch.clog_writer is off, since that can be changed by a reload.
 */
void
clog_writer_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* consistent state, so that it runs (idle) on a hot standby too */
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = CLOG_WRITER_RESTART_S;
	strlcpy(worker.bgw_library_name, "bgw_prefetch", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "bgwp_clog_writer_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "bgw_prefetch clog writer", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "bgw_prefetch clog writer", BGW_MAXLEN);
	worker.bgw_main_arg = (Datum) 0;
	worker.bgw_notify_pid = 0;

	RegisterBackgroundWorker(&worker);
}

/*
 * Zero the writer's counters; called by pg_stat_prefetch_reset().
 */
void
clog_writer_reset_stats(TimestampTz now)
{
	if (cw_shared == NULL)
		return;

	SpinLockAcquire(&cw_shared->mutex);
	cw_shared->pages_written = 0;
	cw_shared->write_time = 0;
	cw_shared->rounds = 0;
	cw_shared->last_write = 0;
	cw_shared->stats_reset = now;
	SpinLockRelease(&cw_shared->mutex);
}

/*
 * One round of writing (clog_slru_write_round()), counted in the shared
 * statistics: a page written also ends a streak of errors.
 */
static int
clog_writer_round(void)
{
	double		write_ms = 0;
	int			written;

	written = clog_slru_write_round(bgwp_clog_writer_max_pages, &write_ms);
	if (written > 0)
	{
		TimestampTz now = GetCurrentTimestamp();

		SpinLockAcquire(&cw_shared->mutex);
		cw_shared->pages_written += written;
		cw_shared->write_time += write_ms;
		cw_shared->last_write = now;
		cw_shared->consecutive_errors = 0;
		SpinLockRelease(&cw_shared->mutex);
	}
	return written;
}

/*
 * The dirty pages evicted since the last look (clog_slru_evictions()); a
 * look counts as a round in the statistics, writing or not.
 */
static int
clog_writer_evictions(void)
{
	int			evicted = clog_slru_evictions();

	SpinLockAcquire(&cw_shared->mutex);
	cw_shared->rounds++;
	SpinLockRelease(&cw_shared->mutex);
	return evicted;
}

/*
 * How long to sleep when there is nothing to do (or in recovery, waiting for
 * a promotion): bgwriter's factor, bounded.
 */
static long
clog_writer_hibernate_ms(void)
{
	return Max(bgwp_clog_writer_delay,
			   Min(bgwp_clog_writer_delay * HIBERNATE_FACTOR,
				   MAX_HIBERNATE_MS));
}

/*
 * Forget the observed xid rate and idle streak (after a pause in writing).
 */
static void
clog_writer_pace_reset(void)
{
	cw_prev_next_xid = InvalidFullTransactionId;
	cw_prev_round_time = 0;
	cw_peak_rate = 0;
	cw_idle_rounds = 0;
}

/*
 * Decide how long to sleep after an active round that wrote "written"
 * pages; see the comment on pacing at the top of the file.  Sets
 * *hibernate when the server looks idle.
 */
static long
clog_writer_pace(int written, bool *hibernate)
{
	FullTransactionId next_xid = ReadNextFullTransactionId();
	TimestampTz now = GetCurrentTimestamp();
	long		sleep_ms = bgwp_clog_writer_delay;
	uint64		consumed = 0;
	long		elapsed_ms = 0;

	if (FullTransactionIdIsValid(cw_prev_next_xid))
	{
		consumed = U64FromFullTransactionId(next_xid) -
			U64FromFullTransactionId(cw_prev_next_xid);
		elapsed_ms = TimestampDifferenceMilliseconds(cw_prev_round_time, now);
	}
	cw_prev_next_xid = next_xid;
	cw_prev_round_time = now;

	if (written > 0 || consumed > 0)
		cw_idle_rounds = 0;
	else if (++cw_idle_rounds >= CLOG_WRITER_IDLE_ROUNDS)
	{
		*hibernate = true;
		return clog_writer_hibernate_ms();
	}
	*hibernate = false;

	if (written > 0)
		sleep_ms = Min(sleep_ms, CLOG_WRITER_FOLLOWUP_MS);

	if (elapsed_ms > 0)
	{
		double		decay = pow(0.5,
								elapsed_ms / CLOG_WRITER_PEAK_HALF_LIFE_MS);

		cw_peak_rate = Max((double) consumed / elapsed_ms,
						   cw_peak_rate * decay);
	}
	if (cw_peak_rate > 0)
	{
		uint32		offset;
		uint32		xids_left;
		double		half_way;

		/* 0 left when the next xid to assign is the first of a new page */
		offset = XidFromFullTransactionId(next_xid) % BGWP_CLOG_XACTS_PER_PAGE;
		xids_left = (BGWP_CLOG_XACTS_PER_PAGE - offset) %
			BGWP_CLOG_XACTS_PER_PAGE;
		half_way = xids_left / cw_peak_rate / 2;
		if (half_way + CLOG_WRITER_SWITCH_MARGIN_MS < sleep_ms)
			sleep_ms = (long) half_way + CLOG_WRITER_SWITCH_MARGIN_MS;
	}

	return sleep_ms;
}

/*
 * Publish what the writer is doing (only the writer calls this).
 */
static void
clog_writer_set_state(ClogWriterState state)
{
	if (state == cw_state)
		return;
	cw_state = state;

	SpinLockAcquire(&cw_shared->mutex);
	cw_shared->state = state;
	if (state == CLOG_WRITER_DISABLED)
		strlcpy(cw_shared->disabled_reason, cw_disabled_reason,
				CLOG_WRITER_REASON_LEN);
	SpinLockRelease(&cw_shared->mutex);
}

/*
 * before_shmem_exit callback, the first to run at every exit: after an
 * ERROR (in SimpleLruWritePage(), say: a full disk, EIO) the writer may hold
 * the CLOG's control lock, which every commit needs, and a slot's buffer
 * lock.  They are released at once, not at the end of the exit (ProcKill()),
 * as the background writer releases its LWLocks before anything else.  A
 * slot left write-in-progress is recovered by the next process that waits
 * for it (SimpleLruWaitIO()).
 */
static void
clog_writer_release_locks(int code, Datum arg)
{
	LWLockReleaseAll();
}

/*
 * on_shmem_exit callback: the status no longer describes a live writer,
 * and an exit that nobody asked for (an ERROR) counts towards the next
 * writer's back-off.
 */
static void
clog_writer_on_exit(int code, Datum arg)
{
	clog_writer_set_state(CLOG_WRITER_NOT_RUNNING);
	if (code != 0 && !ShutdownRequestPending)
	{
		SpinLockAcquire(&cw_shared->mutex);
		cw_shared->consecutive_errors++;
		SpinLockRelease(&cw_shared->mutex);
	}
}

/*
 * After two or more writers in a row ended with an error, wait before
 * writing (see CLOG_WRITER_RESTART_S), saying so once in the log.  Signals
 * are served as in the main loop.
 */
static void
clog_writer_back_off(void)
{
	int			errors;
	long		wait_s;
	TimestampTz until;

	SpinLockAcquire(&cw_shared->mutex);
	errors = cw_shared->consecutive_errors;
	SpinLockRelease(&cw_shared->mutex);
	if (errors < 2)
		return;

	wait_s = Min((long) CLOG_WRITER_RESTART_S << Min(errors - 1, 10),
				 (long) CLOG_WRITER_MAX_BACKOFF_S) - CLOG_WRITER_RESTART_S;
	ereport(LOG,
			(errmsg("bgw_prefetch clog writer backs off after %d consecutive errors: it writes again in %ld s",
					errors, wait_s),
			 errhint("The errors logged before say what failed; the server writes its CLOG pages itself meanwhile.")));

	clog_writer_set_state(CLOG_WRITER_BACKING_OFF);
	until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_s * 1000);
	for (;;)
	{
		long		left_ms;

		ResetLatch(MyLatch);
		clog_writer_handle_interrupts();
		left_ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), until);
		if (left_ms <= 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 left_ms, PG_WAIT_EXTENSION);
	}
}

/*
 * Process interrupts and signals between rounds, like
 * HandleMainLoopInterrupts(), except that a shutdown request exits with
 * the status worker_exit.c chooses: 0 at a server shutdown, 1 (restarted
 * after bgw_restart_time) after pg_terminate_backend().
 */
static void
clog_writer_handle_interrupts(void)
{
	/* includes ProcSignal barriers and memory context logging requests */
	CHECK_FOR_INTERRUPTS();

	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}

	if (ShutdownRequestPending)
		worker_exit_on_request();
}

/*
 * Main entry point of the CLOG writer.
 */
void
bgwp_clog_writer_main(Datum main_arg)
{
	MemoryContext writer_context;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGINT, SIG_IGN);	/* there is no query to cancel */
	worker_exit_install_sigterm();
	BackgroundWorkerUnblockSignals();

	if (cw_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bgw_prefetch clog writer started without its shared memory")));

	/* no database: this only makes the worker visible in pg_stat_activity */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	on_shmem_exit(clog_writer_on_exit, (Datum) 0);
	before_shmem_exit(clog_writer_release_locks, (Datum) 0);

	writer_context = AllocSetContextCreate(TopMemoryContext,
										   "bgw_prefetch clog writer",
										   ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(writer_context);

	/*
	 * No sigsetjmp() here: an ERROR ends the writer (status 1) and the
	 * postmaster starts it again after bgw_restart_time, as autoprewarm's
	 * leader.  A slot whose write the ERROR interrupted is left
	 * write-in-progress with its buffer lock released first thing at exit
	 * (clog_writer_release_locks()), which slru.c's SimpleLruWaitIO()
	 * already recovers from: the next process that waits for it finds the
	 * lock free and marks the page valid and still dirty.
	 */

	clog_writer_back_off();
	clog_writer_pace_reset();

	for (;;)
	{
		ClogWriterState state;
		long		timeout;
		bool		long_sleep = true;

		ResetLatch(MyLatch);
		clog_writer_handle_interrupts();

		/* attach once */
		if (!cw_attached && cw_disabled_reason == NULL)
		{
			cw_disabled_reason = clog_slru_attach();
			if (cw_disabled_reason == NULL)
				cw_attached = true;
		}
		if (!cw_attached)
		{
			ereport(LOG,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("bgw_prefetch clog writer disabled: %s",
							cw_disabled_reason)));
			clog_writer_set_state(CLOG_WRITER_DISABLED);
			break;
		}

		if (!bgwp_enabled || bgwp_clog_writer == CLOG_WRITER_MODE_OFF)
		{
			/* turned off: sleep until a reload sets our latch */
			state = CLOG_WRITER_OFF;
			clog_writer_pace_reset();
			timeout = -1;
		}
		else if (RecoveryInProgress())
		{
			/* the startup process owns the CLOG; poll for promotion */
			state = CLOG_WRITER_RECOVERY;
			timeout = clog_writer_hibernate_ms();
		}
		else
		{
			int			written = 0;
			bool		writing = true;

			if (bgwp_clog_writer == CLOG_WRITER_MODE_AUTO)
				writing = GetCurrentTimestamp() < cw_write_until;

			/*
			 * Say so before writing, in case the round fails; but not when
			 * waking from hibernation ("idle" promises flushed statistics).
			 */
			if (writing && cw_state != CLOG_WRITER_IDLE)
				clog_writer_set_state(CLOG_WRITER_WRITING);
			if (writing)
				written = clog_writer_round();

			/* auto: write from now on, if a dirty page had to be evicted */
			if (clog_writer_evictions() > 0 &&
				bgwp_clog_writer == CLOG_WRITER_MODE_AUTO)
			{
				cw_write_until =
					TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
												CLOG_WRITER_AUTO_HOLD_MS);
				if (!writing)
					continue;	/* was standing by: write at once */
			}

			timeout = clog_writer_pace(written, &long_sleep);
			if (!writing)
				state = CLOG_WRITER_STANDBY;
			else
				state = long_sleep ? CLOG_WRITER_IDLE : CLOG_WRITER_WRITING;
		}

		/*
		 * Our SLRU writes reach pg_stat_slru only when this process flushes
		 * its statistics (at most once a second unless forced): flush them
		 * before any long sleep, and before saying so in our status.
		 */
		pgstat_report_stat(long_sleep);
		clog_writer_set_state(state);

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
						 (timeout >= 0 ? WL_TIMEOUT : 0),
						 timeout, PG_WAIT_EXTENSION);
	}

	/* disabled: stay alive, so that the status says why, until told to exit */
	for (;;)
	{
		ResetLatch(MyLatch);
		clog_writer_handle_interrupts();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1L,
						 PG_WAIT_EXTENSION);
	}
}

/*
 * bgw_prefetch_clog_stats() - one row describing the CLOG writer.
 */
Datum
bgw_prefetch_clog_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {0};
	ClogWriterShared snap;
	const char *status;

	bgwp_require_preload();

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	SpinLockAcquire(&cw_shared->mutex);
	memcpy(&snap, cw_shared, sizeof(ClogWriterShared));
	SpinLockRelease(&cw_shared->mutex);

	switch (snap.state)
	{
		case CLOG_WRITER_WRITING:
			status = "writing";
			break;
		case CLOG_WRITER_IDLE:
			status = "idle";
			break;
		case CLOG_WRITER_STANDBY:
			status = "standby";
			break;
		case CLOG_WRITER_RECOVERY:
			status = "recovery";
			break;
		case CLOG_WRITER_OFF:
			status = "off";
			break;
		case CLOG_WRITER_BACKING_OFF:
			status = "backing off";
			break;
		case CLOG_WRITER_DISABLED:
			status = psprintf("disabled: %s", snap.disabled_reason);
			break;
		case CLOG_WRITER_NOT_RUNNING:
		default:
			status = "disabled: worker not running";
			break;
	}

	values[0] = Int64GetDatum(snap.pages_written);
	values[1] = Float8GetDatum(snap.write_time);
	values[2] = Int64GetDatum(snap.rounds);
	if (snap.last_write != 0)
		values[3] = TimestampTzGetDatum(snap.last_write);
	else
		nulls[3] = true;
	values[4] = TimestampTzGetDatum(snap.stats_reset);
	values[5] = CStringGetTextDatum(status);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}
