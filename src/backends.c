/*-------------------------------------------------------------------------
 *
 * backends.c
 *	  What other backends are doing: their VACUUM / ANALYZE progress, wait
 *	  events and statements, read from the backend status array.
 *
 * The monitor polls other backends' progress every few milliseconds while
 * it serves a scan, so it reads the shared backend status array directly,
 * one slot at a time, with the st_changecount protocol that
 * pgstat_read_current_status() uses (see backend_status.h), instead of
 * taking a full pgstat snapshot: a snapshot copies every slot and its
 * activity string and takes SInvalWriteLock per backend, which is fine for
 * a query of pg_stat_activity but not for a loop.  Only the few fields the
 * prefetcher needs are copied.
 *
 * A scan is a backend whose progress command is VACUUM in phase
 * "scanning heap" (or paused in the index/heap vacuuming phases that
 * interrupt the scan when dead-tuple memory fills), or ANALYZE in
 * "acquiring sample rows" (for inheritance trees, the current child).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/progress.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "pgstat.h"
#include "utils/backend_status.h"
#include "utils/memutils.h"
#include "utils/pgstat_internal.h"
#include "utils/wait_event.h"

#include "bgw_prefetch.h"
#include "compat.h"
#include "backends.h"

static PgBackendStatus *status_array = NULL;
static int	status_slots = 0;

/*
 * The PGPROC of each slot's process (and that process's pid), looked up
 * once per process rather than at every look: BackendPidGetProc() takes
 * ProcArrayLock, which every transaction's end takes exclusively, and the
 * monitor samples the foreground's wait events at every look (every 10 ms
 * while it serves a scan).
 */
static PGPROC **slot_proc = NULL;
static int *slot_proc_pid = NULL;

/*
 * Attach to the backend status array by its shared memory name.
 */
void
backends_attach(void)
{
	bool		found;
	Size		size = mul_size(sizeof(PgBackendStatus),
								BGWP_NUM_BACKEND_STATUS_SLOTS);

	status_array = (PgBackendStatus *)
		ShmemInitStruct(BGWP_BACKEND_STATUS_SHMEM_NAME, size, &found);
	if (!found)
		elog(ERROR, "backend status array not found in shared memory");
	status_slots = BGWP_NUM_BACKEND_STATUS_SLOTS;
	slot_proc = MemoryContextAllocZero(TopMemoryContext,
									   status_slots * sizeof(PGPROC *));
	slot_proc_pid = MemoryContextAllocZero(TopMemoryContext,
										   status_slots * sizeof(int));
}

/*
 * Copy the fields we need from one slot, consistently.  Returns false if the
 * slot is unused.
 */
static bool
read_slot(int slot, PgBackendStatus *copy)
{
	volatile PgBackendStatus *entry = &status_array[slot];

	for (;;)
	{
		int			before;
		int			after;

		pgstat_begin_read_activity(entry, before);
		copy->st_procpid = entry->st_procpid;
		copy->st_backendType = entry->st_backendType;
		copy->st_proc_start_timestamp = entry->st_proc_start_timestamp;
		copy->st_activity_start_timestamp = entry->st_activity_start_timestamp;
		copy->st_databaseid = entry->st_databaseid;
		copy->st_state = entry->st_state;
		copy->st_progress_command = entry->st_progress_command;
		copy->st_progress_command_target = entry->st_progress_command_target;
		memcpy(copy->st_progress_param, (const void *) entry->st_progress_param,
			   sizeof(copy->st_progress_param));
		pgstat_end_read_activity(entry, after);

		if (pgstat_read_activity_complete(before, after))
			break;
		/* the writer was mid-update; try again, but stay interruptible */
		CHECK_FOR_INTERRUPTS();
	}
	return copy->st_procpid > 0;
}

/*
 * How many background workers are running: the slots of
 * max_worker_processes in use, those of every library and of parallel
 * query alike (all report as B_BG_WORKER), but for workers registered that
 * have not started yet.
 */
int
backends_background_workers(void)
{
	int			n = 0;

	for (int i = 0; i < status_slots; i++)
	{
		PgBackendStatus copy;

		if (read_slot(i, &copy) && copy.st_backendType == B_BG_WORKER)
			n++;
	}
	return n;
}

/*
 * Turn a slot copy into an observation; false if it is not VACUUM or
 * ANALYZE in a phase we care about.
 */
static bool
classify(int slot, const PgBackendStatus *st, ScanObservation *obs)
{
	const int64 *param = st->st_progress_param;

	memset(obs, 0, sizeof(*obs));
	obs->slot = slot;
	obs->pid = st->st_procpid;
	obs->autovacuum = (st->st_backendType == B_AUTOVAC_WORKER);
	obs->dbid = st->st_databaseid;
	obs->relid = st->st_progress_command_target;
	obs->proc_start = st->st_proc_start_timestamp;
	obs->activity_start = st->st_activity_start_timestamp;

	if (st->st_progress_command == PROGRESS_COMMAND_VACUUM)
	{
		obs->command = PREFETCH_CMD_VACUUM;
		obs->position = param[PROGRESS_VACUUM_HEAP_BLKS_SCANNED];
		obs->total = param[PROGRESS_VACUUM_TOTAL_HEAP_BLKS];
		switch (param[PROGRESS_VACUUM_PHASE])
		{
			case PROGRESS_VACUUM_PHASE_SCAN_HEAP:
				obs->phase = SCAN_PHASE_SCANNING;
				break;
			case PROGRESS_VACUUM_PHASE_VACUUM_INDEX:
			case PROGRESS_VACUUM_PHASE_VACUUM_HEAP:
				obs->phase = SCAN_PHASE_PAUSED;
				break;
			default:
				obs->phase = SCAN_PHASE_OTHER;
				break;
		}
		return obs->phase != SCAN_PHASE_OTHER;
	}
	if (st->st_progress_command == PROGRESS_COMMAND_ANALYZE)
	{
		int64		phase = param[PROGRESS_ANALYZE_PHASE];

		obs->command = PREFETCH_CMD_ANALYZE;
		obs->position = param[PROGRESS_ANALYZE_BLOCKS_DONE];
		obs->total = param[PROGRESS_ANALYZE_BLOCKS_TOTAL];
		if (phase == PROGRESS_ANALYZE_PHASE_ACQUIRE_SAMPLE_ROWS_INH)
			obs->relid = (Oid) param[PROGRESS_ANALYZE_CURRENT_CHILD_TABLE_RELID];
		obs->phase = (phase == PROGRESS_ANALYZE_PHASE_ACQUIRE_SAMPLE_ROWS ||
					  phase == PROGRESS_ANALYZE_PHASE_ACQUIRE_SAMPLE_ROWS_INH)
			? SCAN_PHASE_SCANNING : SCAN_PHASE_OTHER;
		/* the sample size is advertised once sampling starts */
		return obs->phase == SCAN_PHASE_SCANNING && OidIsValid(obs->relid) &&
			obs->total > 0;
	}
	return false;
}

/*
 * The process of the given slot (NULL if it has exited), from the cache.
 * A PGPROC is reused after its process exits: the pid tells.
 */
static PGPROC *
slot_proc_of(int slot, int pid)
{
	PGPROC	   *proc = slot_proc[slot];

	if (slot_proc_pid[slot] != pid || proc == NULL || proc->pid != pid)
	{
		proc = BackendPidGetProc(pid);
		slot_proc[slot] = proc;
		slot_proc_pid[slot] = pid;
	}
	return proc;
}

/*
 * Does a client backend's running statement compete for the server's disk
 * and CPU now: is it on CPU or waiting on anything but a timeout (a
 * pg_sleep(), a monitoring loop between two looks) or its client (sending
 * rows, reading the next message)?  A statement that sleeps or waits for
 * its client is not delayed by the prefetch.
 */
static bool
statement_busy(int slot, const PgBackendStatus *st)
{
	PGPROC	   *proc = slot_proc_of(slot, st->st_procpid);

	return proc != NULL &&
		backends_wait(proc, st->st_procpid) != BACKEND_WAIT_IDLE;
}

/*
 * Fill out[] with every backend currently running a scan of a
 * relation of at least bgw_prefetch.min_relation_size (as far as known yet).
 * Returns the number found (at most max).  *autovacuum_running tells whether
 * any autovacuum worker exists: its next table may start at any moment;
 * *foreground_running how many client backends run a statement other than
 * a VACUUM or ANALYZE that is busy (statement_busy(); as far as looked
 * at), for the pacing.
 */
int
backends_discover(ScanObservation *out, int max, bool *autovacuum_running,
				  int *foreground_running)
{
	int			n = 0;

	*autovacuum_running = false;
	*foreground_running = 0;
	for (int slot = 0; slot < status_slots && n < max; slot++)
	{
		PgBackendStatus copy;
		ScanObservation *obs = &out[n];

		if (!read_slot(slot, &copy))
			continue;
		if (copy.st_backendType == B_AUTOVAC_WORKER)
			*autovacuum_running = true;
		if (!classify(slot, &copy, obs))
		{
			if (copy.st_backendType == B_BACKEND &&
				copy.st_state == STATE_RUNNING &&
				copy.st_progress_command == PROGRESS_COMMAND_INVALID &&
				statement_busy(slot, &copy))
				(*foreground_running)++;
			continue;
		}
		/*
		 * VACUUM advertises the relation size.  ANALYZE advertises its
		 * sample size, which is the relation size for relations smaller than
		 * the sample, and never more than it: a sample below the minimum is
		 * either a small relation or one too sparsely sampled to stream.
		 */
		if (obs->total < bgwp_min_relation_size)
			continue;
		n++;
	}
	return n;
}

/*
 * Fill out[] with the autovacuum workers connected to a database (a worker
 * still starting up has none yet): slot, pid, proc_start and dbid are set.
 * Returns how many (at most max).  For forecast.c, which keeps a resident
 * resolver in the databases autovacuum works in, and the prefetcher, which
 * starts the relation each worker is expected to vacuum next.
 */
int
backends_autovacuum_workers(ScanObservation *out, int max)
{
	int			n = 0;

	for (int slot = 0; slot < status_slots && n < max; slot++)
	{
		PgBackendStatus copy;

		if (!read_slot(slot, &copy) ||
			copy.st_backendType != B_AUTOVAC_WORKER ||
			!OidIsValid(copy.st_databaseid))
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].slot = slot;
		out[n].pid = copy.st_procpid;
		out[n].proc_start = copy.st_proc_start_timestamp;
		out[n].dbid = copy.st_databaseid;
		out[n].autovacuum = true;
		n++;
	}
	return n;
}

/*
 * Fill dbids[] with the databases client backends are connected to, each
 * once (at most max).  For forecast.c, which keeps a forecaster in them.
 */
int
backends_connected_databases(Oid *dbids, int max)
{
	int			n = 0;

	for (int slot = 0; slot < status_slots && n < max; slot++)
	{
		PgBackendStatus copy;
		bool		known = false;

		if (!read_slot(slot, &copy) || copy.st_backendType != B_BACKEND ||
			!OidIsValid(copy.st_databaseid))
			continue;
		for (int i = 0; i < n && !known; i++)
			known = dbids[i] == copy.st_databaseid;
		if (!known)
			dbids[n++] = copy.st_databaseid;
	}
	return n;
}

/*
 * Re-read one known scan: is its process still running the
 * command, past its scanning phase, done with the command, or gone?
 */
ObserveResult
backends_observe(int slot, int pid, ScanObservation *out)
{
	PgBackendStatus copy;

	if (!read_slot(slot, &copy) || copy.st_procpid != pid)
		return OBSERVE_GONE;
	if (classify(slot, &copy, out))
		return OBSERVE_RUNNING;
	if (copy.st_progress_command == PROGRESS_COMMAND_VACUUM ||
		copy.st_progress_command == PROGRESS_COMMAND_ANALYZE)
		return OBSERVE_PHASE_DONE;
	return OBSERVE_ENDED;
}

/*
 * When the statement a backend runs now started (0 if the process is gone):
 * a command it runs started no earlier.
 */
TimestampTz
backends_statement_start(int slot, int pid)
{
	PgBackendStatus copy;

	if (!read_slot(slot, &copy) || copy.st_procpid != pid)
		return 0;
	return copy.st_activity_start_timestamp;
}

/*
 * Did a VACUUM (or ANALYZE) of a relation complete at or after since?  A
 * VACUUM or ANALYZE reports its completion to the cumulative statistics
 * (with its time) before it ends its progress reporting, so this tells a
 * scan that finished from one that was cancelled or terminated -- even when
 * its process exits right after finishing, or when the monitor first looks
 * after the scan is over, as long as since is no later than the command's
 * start (the announcement of a manual command, or the moment the monitor
 * first saw it running).  The monitor reads with stats_fetch_consistency =
 * none, so this is a fresh copy.
 */
bool
backends_completed_since(Oid dbid, Oid relid, PrefetchCommand command,
						 TimestampTz since)
{
	PgStat_StatTabEntry *tab;
	TimestampTz last;

	tab = pgstat_fetch_entry(PGSTAT_KIND_RELATION, dbid, relid);
	if (tab == NULL)
		return false;
	last = command == PREFETCH_CMD_VACUUM ?
		BGWP_TAB_LAST_VACUUM(tab) : BGWP_TAB_LAST_ANALYZE(tab);
	pfree(tab);
	return last >= since;
}

/*
 * The process behind a backend status slot, for sampling its wait events;
 * NULL if pid has exited.
 */
PGPROC *
backends_proc_of(int pid)
{
	return BackendPidGetProc(pid);
}

/*
 * What is the process waiting on right now: a read of a relation data file
 * (the time track_io_timing counts as read time), VACUUM's cost-based delay
 * (itself a timeout, so tested first), a heavyweight lock, a timeout or its
 * client, or something else?  proc must come from backends_proc_of(pid); it is
 * checked to still be that process (a PGPROC is reused after exit).
 * wait_event_info is a single 4-byte word, read without a lock as
 * pg_stat_activity does.
 */
BackendWait
backends_wait(PGPROC *proc, int pid)
{
	uint32		wait_event_info;

	if (proc == NULL || proc->pid != pid)
		return BACKEND_WAIT_OTHER;
	wait_event_info = *((volatile uint32 *) &proc->wait_event_info);
	if (BGWP_WAIT_IS_DATA_READ(wait_event_info))
		return BACKEND_WAIT_DATA_READ;
	if (wait_event_info == WAIT_EVENT_VACUUM_DELAY)
		return BACKEND_WAIT_COST_DELAY;
	if ((wait_event_info & 0xFF000000) == PG_WAIT_LOCK)
		return BACKEND_WAIT_LOCK;
	if ((wait_event_info & 0xFF000000) == PG_WAIT_TIMEOUT ||
		(wait_event_info & 0xFF000000) == PG_WAIT_CLIENT)
		return BACKEND_WAIT_IDLE;
	return BACKEND_WAIT_OTHER;
}
