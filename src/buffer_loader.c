/*-------------------------------------------------------------------------
 *
 * buffer_loader.c
 *	  Loading pre-read blocks into shared buffers ahead of a scan.
 *
 * With bgw_prefetch.read_into = shared_buffers, the monitor starts one
 * short-lived worker (a "loader") per served scan, connected to the scan's
 * database.  The monitor keeps reading the planned blocks into the OS page
 * cache with io_uring; as those reads complete it hands the ranges, in plan
 * order, to the loader through a bounded queue in the loader's shared slot,
 * never more than bgw_prefetch.shared_buffers_cap ahead of the scans in
 * total (prefetcher.c does that accounting).  The loader reads each block
 * into a shared buffer (a page-cache copy, since the block was just read)
 * and unpins it at once, so that the VACUUM or ANALYZE finds a buffer hit:
 * no read system call, no insertion into its buffer ring, hence none of the
 * ring-reuse WAL flushes that slowed VACUUM even with the blocks in the OS
 * cache (doc/benchmarks.md).
 *
 * Why this is safe.  A buffer of a relation must not outlive the relation's
 * files: a relfilenode reused later would find it.  DROP, TRUNCATE, VACUUM
 * FULL, CLUSTER and every rewrite take AccessExclusiveLock and drop the
 * relation's buffers after they got it.  The loader reads only while it
 * holds AccessShareLock on the relation, taken conditionally (it never
 * waits), and only after checking that the relation's files are still the
 * ones the monitor planned; so no block is loaded after such a command got
 * its lock.  AccessShareLock conflicts with nothing VACUUM or ANALYZE take.
 *
 * Why it never blocks anyone.  Between ranges, and every few milliseconds
 * while idle, the loader checks (by lock probes that never wait) whether
 * anyone waits for a lock that conflicts with its own, on the relation or on the database object (DROP
 * DATABASE, ALTER DATABASE and CREATE DATABASE ... TEMPLATE take that, then
 * wait up to 5 s for the database's other backends to exit); if so it
 * commits, which releases its lock, logs that it let go, and exits.
 * SIGTERM and ProcSignalBarriers are served by CHECK_FOR_INTERRUPTS() in
 * the same loop.  Its transactions last at most LOADER_XACT_MS: it commits
 * and takes its lock again (without waiting) in a new one.
 *
 * It reads with no buffer access strategy: a ring would evict the blocks it
 * loaded before the scan gets to them, and shared_buffers_cap already
 * bounds how many it holds ahead of the scans.  It pins one block at a
 * time, for the copy, and leaves the blocks just ahead of a VACUUM to it,
 * so that VACUUM's ConditionalLockBufferForCleanup() does not meet its pin
 * (which would send a non-aggressive VACUUM to lazy_scan_noprune()).
 *
 * It holds no snapshot (so it holds back no VACUUM), no relcache reference (blocks are read by file, as recovery does) and exits
 * as soon as the monitor's target ends.  An ERROR ends the worker with a log
 * line; the rest of the scan is then pre-read into the OS cache only, and
 * the scan counts as a loader abort.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/smgr.h"
#include "tcop/tcopprot.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

#include "buffer_loader.h"
#include "backends.h"

/* Ranges queued per loader (each up to BGWP_MAX_READ_BLOCKS blocks). */
#define LOADER_QUEUE_SIZE 64
/* Longest sleep of an idle loader before it checks for lock waiters, ms. */
#define LOADER_IDLE_CHECK_MS 5

/*
 * Blocks just ahead of the scan that the loader leaves to it: the scan gets
 * there before the loader would have read them, and would wait for the
 * loader's read of the very block it needs (IPC:BufferIO).
 */
#define LOADER_MARGIN_BLOCKS BGWP_MAX_READ_BLOCKS

/*
 * Queued blocks the loader also leaves to the scan once the scan has caught
 * up with it (it found a block within the margin above).  The margin is in
 * block numbers, and a VACUUM jumps over its skipped ranges at no cost: at
 * 1 % dirty the 32 blocks after the scan hold one or two planned blocks,
 * some 40 microseconds of a VACUUM that finds hits, so a loader that was
 * caught once would stay just ahead and make the scan wait for each of its
 * reads.  Counted in planned blocks instead, the lead it takes is the scan's
 * time for that many blocks, whatever the density of the plan.
 */
#define LOADER_LEAP_BLOCKS (2 * BGWP_MAX_READ_BLOCKS)

/*
 * How long one of the loader's transactions lasts at most, ms.  It commits
 * and starts anew (taking its lock again, without waiting, and checking the
 * relation's files again) so that pg_stat_activity shows short
 * transactions, and its lock is given back between them, as a scan served
 * for an hour would otherwise hold both for the hour.
 */
#define LOADER_XACT_MS 100

typedef enum LoaderState
{
	LOADER_FREE,
	LOADER_STARTING,			/* registered, not yet holding its lock */
	LOADER_RUNNING,				/* holding its lock, loading */
	LOADER_EXITED				/* gone (any reason) */
} LoaderState;

typedef struct LoaderRange
{
	BlockNumber start;
	uint16		nblocks;
} LoaderRange;

typedef struct LoaderSlot
{
	slock_t		mutex;
	LoaderState state;
	uint32		generation;		/* tells a stale worker from the current */
	bool		stop;			/* the monitor's target ended */
	bool		aborted;		/* let go for a lock waiter, or refused */
	Oid			dbid;
	Oid			relid;
	BgwpRelFile relfile;		/* the files the monitor planned */
	int			backend_slot;	/* the scan's backend, to follow a VACUUM */
	int			backend_pid;
	bool		follow_vacuum;
	Latch	   *latch;			/* the loader's, once it runs */
	int64		consumer;		/* the scan's position */
	int64		loaded_blocks;
	int			head;
	int			count;
	LoaderRange queue[LOADER_QUEUE_SIZE];
} LoaderSlot;

typedef struct LoaderShared
{
	uint32		last_generation;	/* written by the monitor only; kept
									 * across monitor restarts */
	LoaderSlot	slots[BGWP_MAX_TARGETS];
} LoaderShared;

/* What the loader works with, copied from its slot. */
typedef struct LoaderJob
{
	LoaderSlot *slot;
	uint32		generation;
	Oid			dbid;
	Oid			relid;
	BgwpRelFile relfile;
	int			backend_slot;
	int			backend_pid;
	bool		follow_vacuum;
	bool		permanent;		/* not an unlogged relation */
	BlockNumber nblocks;		/* the file's size when the lock was taken */
	LOCKTAG		reltag;
	LOCKTAG		dbtag;
} LoaderJob;

static LoaderShared *loader_shared = NULL;

/* Monitor-local: handles of the loaders started, per slot. */
static BackgroundWorkerHandle *loader_handles[BGWP_MAX_TARGETS];

Size
loader_shmem_size(void)
{
	return MAXALIGN(sizeof(LoaderShared));
}

void
loader_shmem_startup(void)
{
	bool		found;

	loader_shared = ShmemInitStruct("bgw_prefetch buffer loaders",
									sizeof(LoaderShared), &found);
	if (!found)
	{
		memset(loader_shared, 0, sizeof(LoaderShared));
		for (int i = 0; i < BGWP_MAX_TARGETS; i++)
			SpinLockInit(&loader_shared->slots[i].mutex);
	}
}

/* ---------------- monitor side ---------------- */

/*
 * Start a loader for the target in slot, for the relation whose files are
 * relfile.  Returns false if no background worker slot is free (the target
 * then stays os_cache).
 */
bool
loader_start(int slot, const ScanObservation *scan, const BgwpRelFile *relfile)
{
	LoaderSlot *s = &loader_shared->slots[slot];
	uint32		generation;
	char		name[BGW_MAXLEN];

	/* 0 means "no loader" */
	if (++loader_shared->last_generation == 0)
		loader_shared->last_generation = 1;
	generation = loader_shared->last_generation;
	SpinLockAcquire(&s->mutex);
	s->state = LOADER_STARTING;
	s->generation = generation;
	s->stop = false;
	s->aborted = false;
	s->dbid = scan->dbid;
	s->relid = scan->relid;
	s->relfile = *relfile;
	s->backend_slot = scan->slot;
	s->backend_pid = scan->pid;
	s->follow_vacuum = scan->command == PREFETCH_CMD_VACUUM;
	s->latch = NULL;
	s->consumer = -1;
	s->loaded_blocks = 0;
	s->head = s->count = 0;
	SpinLockRelease(&s->mutex);

	snprintf(name, sizeof(name), "bgw_prefetch buffer loader for relation %u",
			 scan->relid);
	Assert(loader_handles[slot] == NULL);
	if (!bgwp_start_dynamic_worker("bgwp_loader_main", "bgw_prefetch buffer loader",
								   name, slot, generation, 0, true,
								   &loader_handles[slot]))
	{
		SpinLockAcquire(&s->mutex);
		s->state = LOADER_FREE;
		s->generation = 0;
		SpinLockRelease(&s->mutex);
		elog(DEBUG1, "bgw_prefetch: no background worker slot for a buffer loader, relation %u stays os_cache",
			 scan->relid);
		return false;
	}
	return true;
}

/*
 * Does the loader of slot take ranges?  Not once it exited, whatever the
 * reason (let go, refused, ERROR, never started).
 */
bool
loader_accepting(int slot)
{
	LoaderSlot *s = &loader_shared->slots[slot];
	LoaderState state;
	pid_t		pid;

	SpinLockAcquire(&s->mutex);
	state = s->state;
	SpinLockRelease(&s->mutex);
	if (state != LOADER_STARTING && state != LOADER_RUNNING)
		return false;
	if (loader_handles[slot] != NULL &&
		GetBackgroundWorkerPid(loader_handles[slot], &pid) == BGWH_STOPPED)
		return false;			/* exited without saying: an ERROR */
	return true;
}

/*
 * Queue a range of blocks, just read into the OS cache, for loading.
 * Returns false when the queue is full (offer it again later).
 */
bool
loader_offer(int slot, BlockNumber start, uint16 nblocks)
{
	LoaderSlot *s = &loader_shared->slots[slot];
	Latch	   *latch;
	bool		queued = false;

	SpinLockAcquire(&s->mutex);
	if (s->count < LOADER_QUEUE_SIZE)
	{
		LoaderRange *r = &s->queue[(s->head + s->count) % LOADER_QUEUE_SIZE];

		r->start = start;
		r->nblocks = nblocks;
		s->count++;
		queued = true;
	}
	latch = s->latch;
	SpinLockRelease(&s->mutex);
	if (queued && latch != NULL)
		SetLatch(latch);
	return queued;
}

/* Tell the loader where the scan is: it leaves out blocks the scan passed. */
void
loader_set_consumer(int slot, int64 consumer)
{
	LoaderSlot *s = &loader_shared->slots[slot];

	SpinLockAcquire(&s->mutex);
	s->consumer = consumer;
	SpinLockRelease(&s->mutex);
}

/*
 * The target ends: ask the loader to exit, and collect what it did.  The
 * slot may be reused at once; a loader still running sees another
 * generation, or the stop flag, and exits at its next check.
 */
void
loader_stop(int slot, LoaderOutcome *out)
{
	LoaderSlot *s = &loader_shared->slots[slot];
	Latch	   *latch;
	LoaderState state;
	pid_t		pid;

	SpinLockAcquire(&s->mutex);
	out->loaded_blocks = s->loaded_blocks;
	out->aborted = s->aborted;
	state = s->state;
	s->stop = true;
	s->count = 0;
	s->generation = 0;
	s->state = LOADER_FREE;
	latch = s->latch;
	s->latch = NULL;
	SpinLockRelease(&s->mutex);
	if (latch != NULL)
		SetLatch(latch);
	if (loader_handles[slot] != NULL)
	{
		/* gone without saying how it ended: an ERROR, or it never started */
		if ((state == LOADER_STARTING || state == LOADER_RUNNING) &&
			GetBackgroundWorkerPid(loader_handles[slot], &pid) == BGWH_STOPPED)
			out->aborted = true;
		pfree(loader_handles[slot]);
		loader_handles[slot] = NULL;
	}
}

/*
 * The monitor has no target (it starts, or recovers from an ERROR): a
 * loader still running belongs to a monitor process that exited without
 * stopping it.  Ask every one to exit.
 */
void
loader_stop_all(void)
{
	LoaderOutcome ignored;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		loader_stop(i, &ignored);
}

/* ---------------- the loader worker ---------------- */

/* Is the slot still ours, and not asked to stop?  Caller holds the mutex. */
static inline bool
still_wanted(const LoaderJob *job)
{
	return job->slot->generation == job->generation && !job->slot->stop;
}

/* Record how the loader ended, if the slot is still its own. */
static void
loader_finish(const LoaderJob *job, bool aborted)
{
	LoaderSlot *s = job->slot;

	SpinLockAcquire(&s->mutex);
	if (s->generation == job->generation)
	{
		s->state = LOADER_EXITED;
		s->aborted = aborted;
		s->latch = NULL;
	}
	SpinLockRelease(&s->mutex);
}

/*
 * Take the relation's lock without waiting and check that its files are
 * still the ones planned.  Returns NULL on success, else why not (the lock
 * is then not held, or released with the transaction).
 */
static const char *
loader_lock_relation(LoaderJob *job)
{
	Relation	rel;
	bool		same_files;

	if (!ConditionalLockRelationOid(job->relid, AccessShareLock))
		return "its lock is not available";
	rel = try_relation_open(job->relid, NoLock);
	if (rel == NULL)
		return "the relation was dropped";
	same_files = BGWP_SAME_REL_FILE(BGWP_RELATION_FILE(rel), job->relfile) &&
		rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP &&
		RELKIND_HAS_STORAGE(rel->rd_rel->relkind);
	job->permanent = rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;
	SET_LOCKTAG_RELATION(job->reltag,
						 rel->rd_rel->relisshared ? InvalidOid : MyDatabaseId,
						 job->relid);
	if (same_files)
		job->nblocks = RelationGetNumberOfBlocks(rel);
	relation_close(rel, NoLock);
	/* no snapshot stays registered: this worker holds back no VACUUM */
	InvalidateCatalogSnapshot();
	if (!same_files)
		return "its files are no longer the ones planned";
	SET_LOCKTAG_OBJECT(job->dbtag, InvalidOid, DatabaseRelationId,
					   job->dbid, 0);
	return NULL;
}

/*
 * Would a request for lockmode on tag have to wait?  Asked without waiting
 * and given back at once.  It has to wait exactly when a conflicting lock
 * is held or awaited: the lock manager queues a request behind conflicting
 * waiters -- as long as the requester holds no lock on tag (see
 * bgwp_held_lock_contended() for a tag it does hold a lock on).
 */
static bool
lock_is_contended(const LOCKTAG *tag, LOCKMODE lockmode)
{
	if (BGWP_LOCK_TRY(tag, lockmode) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(tag, lockmode, false);
	return false;
}

/*
 * Is anyone waiting for a lock that conflicts with the loader's, on the
 * relation (AccessExclusiveLock: DROP, TRUNCATE, VACUUM FULL, CLUSTER,
 * ALTER TABLE...) or on the database (DROP/ALTER DATABASE, CREATE DATABASE
 * from it as template, which then wait up to 5 s for its other backends)?
 *
 * LockHasWaitersRelation() cannot be used: the loader's AccessShareLock is
 * a fast-path lock, which that function does not handle.  On the relation,
 * which the loader holds a lock on, compat.h's bgwp_held_lock_contended()
 * asks with RowShareLock (conflicting with Exclusive and AccessExclusive
 * only): a probe that version-dependently tries that lock (up to 16) or
 * reads the lock's wait and grant masks (from 17, where the try would be
 * granted ahead of the waiter).  For the database, which the loader holds no
 * lock on, a try of RowExclusiveLock, what every connecting backend takes.
 * Neither probe processes invalidations (no catalog access, no snapshot).
 */
static bool
loader_must_let_go(const LoaderJob *job)
{
	return bgwp_held_lock_contended(&job->reltag, RowShareLock) ||
		lock_is_contended(&job->dbtag, RowExclusiveLock);
}

/*
 * Where the scan is: for a VACUUM, read fresh from its progress (the
 * position the monitor published is up to one monitor step old, while a
 * VACUUM finding hits moves through some 15k blocks a second); else as the
 * monitor published it.
 */
static int64
scan_position(const LoaderJob *job, int64 published)
{
	ScanObservation obs;

	if (job->follow_vacuum &&
		backends_observe(job->backend_slot, job->backend_pid, &obs) ==
		OBSERVE_RUNNING &&
		obs.relid == job->relid)
		return Max(published, obs.position);
	return published;
}

/*
 * Load queued ranges until the monitor stops the loader (returns NULL) or
 * it must let go (returns why): someone waits for a conflicting lock, or
 * its next transaction could not take its lock or found other files.  Runs
 * in transactions of at most LOADER_XACT_MS, each holding the lock; the
 * caller started the first and commits the last.
 */
static const char *
loader_run(LoaderJob *job)
{
	LoaderSlot *s = job->slot;
	int			leap = 0;		/* queued blocks still to leave to the scan */
	TimestampTz xact_start = GetCurrentTimestamp();

	for (;;)
	{
		LoaderRange r;
		int64		consumer;
		bool		have = false;
		int64		loaded = 0;
		const char *refused;

		CHECK_FOR_INTERRUPTS();
		/* interrupts may have rebuilt catalog caches: hold no snapshot */
		InvalidateCatalogSnapshot();
		if (loader_must_let_go(job))
			return "a conflicting lock is awaited";
		if (TimestampDifferenceExceeds(xact_start, GetCurrentTimestamp(),
									   LOADER_XACT_MS))
		{
			CommitTransactionCommand();
			SetCurrentStatementStartTimestamp();
			StartTransactionCommand();
			xact_start = GetCurrentTimestamp();
			refused = loader_lock_relation(job);
			if (refused != NULL)
				return refused;
		}

		SpinLockAcquire(&s->mutex);
		if (!still_wanted(job))
		{
			SpinLockRelease(&s->mutex);
			return NULL;
		}
		if (s->count > 0)
		{
			r = s->queue[s->head];
			s->head = (s->head + 1) % LOADER_QUEUE_SIZE;
			s->count--;
			have = true;
		}
		consumer = s->consumer;
		SpinLockRelease(&s->mutex);

		if (!have)
		{
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 LOADER_IDLE_CHECK_MS, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			continue;
		}

		for (BlockNumber blk = r.start; blk < r.start + r.nblocks; blk++)
		{
			Buffer		buf;

			/*
			 * The scan is (nearly) there: leave it this block and the next
			 * LOADER_LEAP_BLOCKS queued ones.  Looked at before every block:
			 * a scan finding hits can be faster than the loader, and would
			 * then follow right behind it, waiting for each of its reads.
			 */
			if ((int64) blk <= scan_position(job, consumer) + LOADER_MARGIN_BLOCKS)
			{
				leap = LOADER_LEAP_BLOCKS;
				continue;
			}
			if (leap > 0)
			{
				leap--;
				continue;
			}
			if (blk >= job->nblocks)
				continue;
			buf = ReadBufferWithoutRelcache(job->relfile, MAIN_FORKNUM, blk,
											RBM_NORMAL, NULL, job->permanent);
			ReleaseBuffer(buf);
			loaded++;
		}
		SpinLockAcquire(&s->mutex);
		if (s->generation == job->generation)
			s->loaded_blocks += loaded;
		SpinLockRelease(&s->mutex);
	}
}

/*
 * Entry point of a loader worker.
 */
void
bgwp_loader_main(Datum main_arg)
{
	int			slot = DatumGetInt32(main_arg);
	LoaderJob	job;
	const char *refused;
	const char *let_go;

	memset(&job, 0, sizeof(job));
	memcpy(&job.generation, MyBgworkerEntry->bgw_extra, sizeof(job.generation));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	if (slot < 0 || slot >= BGWP_MAX_TARGETS)
		proc_exit(1);
	job.slot = &loader_shared->slots[slot];

	SpinLockAcquire(&job.slot->mutex);
	if (!still_wanted(&job))
	{
		SpinLockRelease(&job.slot->mutex);
		proc_exit(0);			/* the target ended before we started */
	}
	job.dbid = job.slot->dbid;
	job.relid = job.slot->relid;
	job.relfile = job.slot->relfile;
	job.backend_slot = job.slot->backend_slot;
	job.backend_pid = job.slot->backend_pid;
	job.follow_vacuum = job.slot->follow_vacuum;
	SpinLockRelease(&job.slot->mutex);
	if (job.follow_vacuum)
		backends_attach();

	BackgroundWorkerInitializeConnectionByOid(job.dbid, InvalidOid,
											  BGWORKER_BYPASS_ALLOWCONN);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	refused = loader_lock_relation(&job);
	if (refused != NULL)
	{
		CommitTransactionCommand();
		loader_finish(&job, true);
		ereport(LOG,
				(errmsg("bgw_prefetch: not loading relation %u into shared buffers: %s",
						job.relid, refused)));
		proc_exit(0);
	}

	SpinLockAcquire(&job.slot->mutex);
	if (job.slot->generation == job.generation)
	{
		job.slot->state = LOADER_RUNNING;
		job.slot->latch = MyLatch;
	}
	SpinLockRelease(&job.slot->mutex);
	pgstat_report_activity(STATE_RUNNING, "loading blocks into shared buffers");

	let_go = loader_run(&job);

	/* releases the lock; nothing is read after this */
	CommitTransactionCommand();
	loader_finish(&job, let_go != NULL);
	if (let_go != NULL)
		ereport(LOG,
				(errmsg("bgw_prefetch: buffer loader for relation %u let go: %s",
						job.relid, let_go),
				 errdetail("The rest of the scan is pre-read into the OS page cache only.")));
	proc_exit(0);
}
