/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every server-version-specific detail bgw_prefetch relies on.
 *
 * bgw_prefetch reads a few server structures that are not a stable API: the
 * backend status array, one table's cumulative statistics in another
 * database, the buffer mapping table, the lock table's PROCLOCKs, the
 * progress parameters a finished command leaves behind, the
 * visibility map's page layout and the CLOG SLRU.  Each section below says
 * why no exported function serves, and which test fails if a release
 * changes what it relies on.  Everything that depends on the server version
 * is here, so that supporting a newer server means editing this file only.  PostgreSQL 15, 16, 17 and 18 are supported (see
 * doc/versions.md for what was tested on each); other versions are refused
 * at compile time rather than guessed at.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_COMPAT_H
#define BGWP_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "bgw_prefetch supports PostgreSQL 15, 16, 17 and 18 only (see compat.h)"
#endif

#include "common/relpath.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/backend_status.h"
#include "utils/relmapper.h"
#include "utils/resowner.h"
#if PG_VERSION_NUM >= 160000
#include "storage/relfilelocator.h"
#else
#include "storage/relfilenode.h"
#endif

/* ---------- backend status array ---------- */

/*
 * backend_status.c allocates the array with this ShmemInitStruct name and
 * size (its NumBackendStatSlots); attaching by name gives read access to
 * other backends' progress with the changecount protocol, without
 * pgstat_read_current_status()'s per-backend SInvalWriteLock and
 * activity-string copies.  A regular backend's own slot is the one
 * pgstat_beinit() gives it: MyBackendId - 1 up to 16, MyProcNumber from 17.
 *
 * Why not the exported snapshot (pgstat_read_current_status(), behind
 * pgstat_get_beentry_by_backend_id() and pgstat_fetch_stat_numbackends()):
 * it copies every slot with its activity string, and must be thrown away
 * (pgstat_clear_backend_activity_snapshot()) before the next read; the
 * monitor reads the one slot of the scan it serves every millisecond or so.
 * If a release changes the array's size, ShmemInitStruct() reports the size
 * mismatch when the monitor attaches and the monitor exits; every TAP test
 * then fails, first t/001_monitor_basic.pl (no monitor publishes a pid).
 */
#define BGWP_BACKEND_STATUS_SHMEM_NAME "Backend Status Array"
#if PG_VERSION_NUM >= 170000
#define BGWP_NUM_BACKEND_STATUS_SLOTS (MaxBackends + NUM_AUXILIARY_PROCS)
#define BGWP_MY_BACKEND_STATUS_SLOT() (MyProcNumber)
#else
#define BGWP_NUM_BACKEND_STATUS_SLOTS (MaxBackends + NUM_AUXPROCTYPES)
#define BGWP_MY_BACKEND_STATUS_SLOT() (MyBackendId - 1)
#endif

/* ---------- relation files ---------- */

/*
 * A relation's file identity: RelFileNode up to 15, RelFileLocator (with
 * renamed fields) from 16.  BGWP_RELFILE_SPC() is an lvalue.
 */
#if PG_VERSION_NUM >= 160000
typedef RelFileLocator BgwpRelFile;

#define BGWP_RELFILE_SPC(rf)	((rf).spcOid)
#define BGWP_RELFILE_NUMBER(rf)	((rf).relNumber)
#define BGWP_RELFILE_SET(rf, spcid, dbid, relnumber) \
	((rf).spcOid = (spcid), (rf).dbOid = (dbid), (rf).relNumber = (relnumber))
#define BGWP_RELATION_MAP_OID_TO_FILE(relid, shared) \
	RelationMapOidToFilenumber((relid), (shared))
#else
typedef RelFileNode BgwpRelFile;

#define BGWP_RELFILE_SPC(rf)	((rf).spcNode)
#define BGWP_RELFILE_NUMBER(rf)	((rf).relNode)
#define BGWP_RELFILE_SET(rf, spcid, dbid, relnumber) \
	((rf).spcNode = (spcid), (rf).dbNode = (dbid), (rf).relNode = (relnumber))
#define BGWP_RELATION_MAP_OID_TO_FILE(relid, shared) \
	RelationMapOidToFilenode((relid), (shared))
#endif

/*
 * The palloc'd path of a fork's first segment.  GetRelationPath() returns
 * a palloc'd string up to 17 and a RelPathStr by value from 18.
 */
static inline char *
bgwp_rel_path(BgwpRelFile rf, ForkNumber forknum)
{
#if PG_VERSION_NUM >= 180000
	return pstrdup(GetRelationPath(rf.dbOid, rf.spcOid, rf.relNumber,
								   INVALID_PROC_NUMBER, forknum).str);
#elif PG_VERSION_NUM >= 170000
	return GetRelationPath(rf.dbOid, rf.spcOid, rf.relNumber,
						   INVALID_PROC_NUMBER, forknum);
#elif PG_VERSION_NUM >= 160000
	return GetRelationPath(rf.dbOid, rf.spcOid, rf.relNumber,
						   InvalidBackendId, forknum);
#else
	return GetRelationPath(rf.dbNode, rf.spcNode, rf.relNode,
						   InvalidBackendId, forknum);
#endif
}

/* ---------- GUCs ---------- */

/*
 * A check hook's "extra" is released by guc.c: with free() up to 15, with
 * guc_free() -- pfree() of GUC memory-context memory -- from 16, so from 16
 * it must come from guc_malloc().  Both return NULL when out of memory.
 */
#if PG_VERSION_NUM >= 160000
#define BGWP_GUC_EXTRA_ALLOC(size)	guc_malloc(LOG, (size))
#define BGWP_GUC_EXTRA_FREE(ptr)	guc_free(ptr)
#else
#define BGWP_GUC_EXTRA_ALLOC(size)	malloc(size)
#define BGWP_GUC_EXTRA_FREE(ptr)	free(ptr)
#endif

/* ---------- privileges ---------- */

/*
 * May roleid use the tablespace this way?  pg_tablespace_aclcheck() up to
 * 15, the generic object_aclcheck() from 16.  Expand only where
 * utils/acl.h and catalog/pg_tablespace_d.h are included.
 */
#if PG_VERSION_NUM >= 160000
#define BGWP_TABLESPACE_ACLCHECK(spcid, roleid, mode) \
	object_aclcheck(TableSpaceRelationId, (spcid), (roleid), (mode))
#else
#define BGWP_TABLESPACE_ACLCHECK(spcid, roleid, mode) \
	pg_tablespace_aclcheck((spcid), (roleid), (mode))
#endif

/* ---------- cumulative statistics ---------- */

/*
 * The counts relation_needs_vacanalyze() compares with its thresholds in
 * PgStat_StatTabEntry (forecast.c), renamed in 16.
 */
#if PG_VERSION_NUM >= 160000
#define BGWP_TAB_DEAD_TUPLES(tab)		((tab)->dead_tuples)
#define BGWP_TAB_INS_SINCE_VACUUM(tab)	((tab)->ins_since_vacuum)
#define BGWP_TAB_MOD_SINCE_ANALYZE(tab)	((tab)->mod_since_analyze)
#else
#define BGWP_TAB_DEAD_TUPLES(tab)		((tab)->n_dead_tuples)
#define BGWP_TAB_INS_SINCE_VACUUM(tab)	((tab)->inserts_since_vacuum)
#define BGWP_TAB_MOD_SINCE_ANALYZE(tab)	((tab)->changes_since_analyze)
#endif

/*
 * When a table's last VACUUM and ANALYZE, manual or automatic, completed:
 * renamed in 16.  Each is set when the command reports its completion,
 * before it ends its progress reporting.
 *
 * The monitor reads them with pgstat_fetch_entry() (pgstat_internal.h):
 * the exported pgstat_fetch_stat_tabentry() looks only in the caller's own
 * database, and the monitor is connected to none, so that it never holds
 * up DROP DATABASE.  If that changes, a scan that ran to its end is logged
 * as "did not complete": t/020_server_first.pl fails.
 */
#if PG_VERSION_NUM >= 160000
#define BGWP_TAB_LAST_VACUUM(tab) \
	Max((tab)->last_vacuum_time, (tab)->last_autovacuum_time)
#define BGWP_TAB_LAST_ANALYZE(tab) \
	Max((tab)->last_analyze_time, (tab)->last_autoanalyze_time)
#else
#define BGWP_TAB_LAST_VACUUM(tab) \
	Max((tab)->vacuum_timestamp, (tab)->autovac_vacuum_timestamp)
#define BGWP_TAB_LAST_ANALYZE(tab) \
	Max((tab)->analyze_timestamp, (tab)->autovac_analyze_timestamp)
#endif

/* ---------- autovacuum's thresholds (forecaster.c) ---------- */

/*
 * 18 adds autovacuum_vacuum_max_threshold (-1: no cap), its reloption
 * (-2 where unset, as the other thresholds) and pg_class.relallfrozen, which
 * scales the insert threshold by the unfrozen pages; before 18 there is no
 * cap and no such scaling (autovac_rule.c reads relallfrozen 0 as that).
 */
#if PG_VERSION_NUM >= 180000
#define BGWP_AUTOVAC_VAC_MAX_THRESH				autovacuum_vac_max_thresh
#define BGWP_AUTOVAC_OPTS_VAC_MAX_THRESH(av)	((av)->vacuum_max_threshold)
#define BGWP_CLASS_RELALLFROZEN(classForm)		((classForm)->relallfrozen)
#else
#define BGWP_AUTOVAC_VAC_MAX_THRESH				(-1)
#define BGWP_AUTOVAC_OPTS_VAC_MAX_THRESH(av)	(-2)
#define BGWP_CLASS_RELALLFROZEN(classForm)		(0)
#endif

/* ---------- wait events ---------- */

/*
 * Is a backend waiting on a read of a relation data file?  Up to 17 that
 * is all the time track_io_timing counts as read time: every read is a
 * synchronous FileRead() (DataFileRead); from 18 a read may be started
 * asynchronously and waited for in AioIoCompletion, or in io_uring's
 * submission and execution waits (io_method = io_uring).  The sampled
 * waits are the read time only where the backend publishes none
 * (backend_reads.c).
 */
#if PG_VERSION_NUM >= 180000
#define BGWP_WAIT_IS_DATA_READ(w) \
	((w) == WAIT_EVENT_DATA_FILE_READ || \
	 (w) == WAIT_EVENT_AIO_IO_COMPLETION || \
	 (w) == WAIT_EVENT_AIO_IO_URING_SUBMIT || \
	 (w) == WAIT_EVENT_AIO_IO_URING_EXECUTION)
#else
#define BGWP_WAIT_IS_DATA_READ(w)	((w) == WAIT_EVENT_DATA_FILE_READ)
#endif

/*
 * A backend's read time so far, as track_io_timing adds it up in
 * pgBufferUsage and "I/O timings: read" reports it (shared and local
 * buffers), in microseconds: one counter up to 16, two from 17.
 */
#if PG_VERSION_NUM >= 170000
#define BGWP_BUFFER_USAGE_READ_TIME_US(bu) \
	((int64) (INSTR_TIME_GET_MICROSEC((bu)->shared_blk_read_time) + \
			  INSTR_TIME_GET_MICROSEC((bu)->local_blk_read_time)))
#else
#define BGWP_BUFFER_USAGE_READ_TIME_US(bu) \
	((int64) INSTR_TIME_GET_MICROSEC((bu)->blk_read_time))
#endif

/* ---------- buffer mapping (visibility map reads) ---------- */

/*
 * vm_reader.c copies a visibility map page from shared buffers when it is
 * there (where VACUUM sets and clears bits before any checkpoint writes
 * them), looked up with BufTableLookup() under the mapping partition lock
 * and pinned with the exported ReadRecentBuffer().  The exported
 * PrefetchSharedBuffer() makes the same lookup, but when the page is not
 * in shared buffers it goes on to prefetch it through md.c, which ERRORs
 * (EXTENSION_FAIL) when the map's fork or segment does not exist: a table
 * without a map yet, or one dropped meanwhile, would end the monitor.  If
 * the lookup stops finding the pages, the plans are made over stale or
 * zeroed maps: t/010_vacuum_prefetch.pl fails (its patterns are set just
 * before each VACUUM, in shared buffers).
 */
#if PG_VERSION_NUM >= 160000
#define BGWP_INIT_BUFFERTAG(tag, relfile, forknum, blkno) \
	InitBufferTag(&(tag), &(relfile), (forknum), (blkno))
#else
#define BGWP_INIT_BUFFERTAG(tag, relfile, forknum, blkno) \
	INIT_BUFFERTAG((tag), (relfile), (forknum), (blkno))
#endif

/* ---------- loading blocks into shared buffers (buffer_loader.c) ---------- */

/* The relation's files as its relcache entry names them (renamed in 16) */
#if PG_VERSION_NUM >= 160000
#define BGWP_RELATION_FILE(rel) ((rel)->rd_locator)
#define BGWP_SAME_REL_FILE(a, b) RelFileLocatorEquals((a), (b))
#else
#define BGWP_RELATION_FILE(rel) ((rel)->rd_node)
#define BGWP_SAME_REL_FILE(a, b) RelFileNodeEquals((a), (b))
#endif

/*
 * Try a heavyweight lock without waiting and without reporting a memory
 * error; 18 adds the logLockFailure argument (false: as before).  Expand
 * only where storage/lock.h is included.
 */
#if PG_VERSION_NUM >= 180000
#define BGWP_LOCK_TRY(tag, lockmode) \
	LockAcquireExtended((tag), (lockmode), false, true, true, NULL, false)
#else
#define BGWP_LOCK_TRY(tag, lockmode) \
	LockAcquireExtended((tag), (lockmode), false, true, true, NULL)
#endif

/*
 * Is a lock that conflicts with probe_mode held by another process, or
 * awaited, on tag?  The caller holds a lock on tag in a mode that does not
 * conflict with probe_mode (the buffer loader: AccessShareLock on its
 * relation, probing with RowShareLock).  Nothing waits.
 *
 * Up to 16 a try of probe_mode, given back at once, tells: a request that
 * conflicts with a waiter's is refused without waiting (lock.c's
 * LockAcquireExtended() checks lock->waitMask, then returns
 * LOCKACQUIRE_NOT_AVAIL if dontWait).
 *
 * From 17 it no longer does.  A non-waiting request that conflicts with a
 * waiter goes through the same queue placement as a waiting one (ProcSleep()
 * in 17, JoinWaitQueue() from 18): when the requester already holds a lock
 * that the waiter's mode conflicts with -- the loader's AccessShareLock and
 * DROP TABLE's AccessExclusiveLock -- it is placed ahead of that waiter and,
 * conflicting with no granted lock, granted at once.  So the try succeeds
 * exactly while the DROP waits for the loader.  From 17 the lock's masks are
 * read instead, as LockAcquireExtended() tests them, through the caller's
 * own PROCLOCK (listed in MyProc->myProcLocks under the lock's partition
 * lock).  If the caller has none, its lock is a fast-path one: then no
 * lock stronger than ShareUpdateExclusiveLock has been requested on the
 * relation since it was taken (FastPathTransferRelationLocks() moves it to
 * the main table before such a request joins the queue), and a probe_mode
 * weaker than that conflicts with such locks only.
 *
 * The exported LockHasWaiters() asks the same question, but reads the
 * PROCLOCK through the caller's LOCALLOCK, which is NULL for a fast-path
 * lock such as the loader's AccessShareLock (lock.c, 15 to 18): it would
 * crash.  If the walk stops finding the waiter, DROP TABLE waits for the
 * loader to finish its relation: t/026_shared_buffers.pl fails.
 */
static inline bool
bgwp_held_lock_contended(const LOCKTAG *tag, LOCKMODE probe_mode)
{
#if PG_VERSION_NUM >= 170000
	uint32		hashcode = LockTagHashCode(tag);
	LWLock	   *partition_lock = LockHashPartitionLock(hashcode);
	dlist_head *proclocks = &MyProc->myProcLocks[LockHashPartition(hashcode)];
	dlist_iter	iter;
	bool		contended = false;

	LWLockAcquire(partition_lock, LW_SHARED);
	dlist_foreach(iter, proclocks)
	{
		PROCLOCK   *proclock = dlist_container(PROCLOCK, procLink, iter.cur);
		LOCK	   *lock = proclock->tag.myLock;

		if (memcmp(&lock->tag, tag, sizeof(LOCKTAG)) == 0)
		{
			contended = (GetLocksMethodTable(lock)->conflictTab[probe_mode] &
						 (lock->waitMask | lock->grantMask)) != 0;
			break;
		}
	}
	LWLockRelease(partition_lock);
	return contended;
#else
	if (BGWP_LOCK_TRY(tag, probe_mode) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(tag, probe_mode, false);
	return false;
#endif
}

/* ---------- the relation a VACUUM or ANALYZE transaction processed ---------- */

/*
 * At the end of each relation's transaction, a VACUUM or ANALYZE backend
 * publishes which relation it processed (backend_reads.c), so that a scan
 * the monitor never saw is still recorded.  No exported function says it:
 * the progress report that named it has ended before the commit
 * (pgstat_progress_end_command() clears st_progress_command_target), and no
 * hook runs in an autovacuum worker.  But the transaction still holds, until
 * its commit, the ShareUpdateExclusiveLock that vacuum_rel() and
 * analyze_rel() took on the relation: a mode no fast-path slot holds (those
 * are for weaker modes), so it is one of the PROCLOCKs listed in
 * MyProc->myProcLocks, each list read under its partition lock in share
 * mode (another backend adds to it only under that lock in exclusive mode,
 * when it moves a fast-path lock of ours to the main table).  SHM_QUEUE
 * lists up to 15, dlist from 16.  Returns true, with the relation, only if
 * exactly one relation is held in that mode.  If a release stops holding
 * that lock until the commit, scans the monitor did not see are no longer
 * recorded: t/013_unseen_scans.pl fails.
 */
static inline bool
bgwp_held_relation_lock_matches(const PROCLOCK *proclock, LOCKMODE mode,
								Oid *dbid, Oid *relid)
{
	const LOCK *lock = proclock->tag.myLock;

	if (lock->tag.locktag_type != LOCKTAG_RELATION ||
		lock->tag.locktag_lockmethodid != DEFAULT_LOCKMETHOD ||
		(proclock->holdMask & LOCKBIT_ON(mode)) == 0)
		return false;
	*dbid = lock->tag.locktag_field1;
	*relid = lock->tag.locktag_field2;
	return true;
}

static inline bool
bgwp_my_only_relation_locked(LOCKMODE mode, Oid *dbid, Oid *relid)
{
	int			held = 0;

	if (MyProc == NULL)
		return false;
	for (int p = 0; p < NUM_LOCK_PARTITIONS; p++)
	{
		LWLock	   *partition_lock = LockHashPartitionLockByIndex(p);
#if PG_VERSION_NUM >= 160000
		dlist_iter	iter;

		LWLockAcquire(partition_lock, LW_SHARED);
		dlist_foreach(iter, &MyProc->myProcLocks[p])
		{
			if (bgwp_held_relation_lock_matches(dlist_container(PROCLOCK, procLink, iter.cur),
												mode, dbid, relid))
				held++;
		}
#else
		SHM_QUEUE  *head = &MyProc->myProcLocks[p];
		PROCLOCK   *proclock;

		LWLockAcquire(partition_lock, LW_SHARED);
		proclock = (PROCLOCK *) SHMQueueNext(head, head, offsetof(PROCLOCK, procLink));
		while (proclock != NULL)
		{
			if (bgwp_held_relation_lock_matches(proclock, mode, dbid, relid))
				held++;
			proclock = (PROCLOCK *) SHMQueueNext(head, &proclock->procLink,
												 offsetof(PROCLOCK, procLink));
		}
#endif
		LWLockRelease(partition_lock);
	}
	return held == 1;
}

/*
 * The parameters the backend's last progress report left in its own status
 * slot, taken: copied, then zeroed, so that a transaction that reported no
 * progress (a relation skipped, or found gone) is not credited the figures
 * of the one before.  pgstat_progress_end_command() clears the command and
 * its target, not the parameters, in 15-18.  Nothing else reads them while
 * no command is reported; a report in progress is left alone (false).  If
 * a release starts clearing them at the command's end, scans the monitor did
 * not see are recorded with no size and dropped: t/013_unseen_scans.pl
 * fails.
 */
static inline bool
bgwp_take_my_progress_params(int64 *params, int n)
{
	volatile PgBackendStatus *beentry = MyBEEntry;

	if (beentry == NULL || beentry->st_progress_command != PROGRESS_COMMAND_INVALID)
		return false;
	n = Min(n, PGSTAT_NUM_PROGRESS_PARAM);
	PGSTAT_BEGIN_WRITE_ACTIVITY(beentry);
	for (int i = 0; i < n; i++)
		params[i] = beentry->st_progress_param[i];
	for (int i = 0; i < PGSTAT_NUM_PROGRESS_PARAM; i++)
		beentry->st_progress_param[i] = 0;
	PGSTAT_END_WRITE_ACTIVITY(beentry);
	return true;
}

/* ---------- visibility map layout (private to visibilitymap.c) ---------- */

/*
 * Unchanged in 15-18; visibilitymap.c exports no way to read a map page
 * that is not in shared buffers without reading it in (visibilitymap_pin()
 * needs a Relation and reads through shared buffers).  If the layout
 * changes, the plans are wrong: t/010_vacuum_prefetch.pl fails.
 */
#define BGWP_VM_MAPSIZE (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define BGWP_VM_HEAPBLOCKS_PER_BYTE 4	/* 2 bits per heap block */
#define BGWP_VM_HEAPBLOCKS_PER_PAGE (BGWP_VM_MAPSIZE * BGWP_VM_HEAPBLOCKS_PER_BYTE)
#define BGWP_VM_BITS(page, heapblk) \
	((((const uint8 *) PageGetContents(page))[((heapblk) % BGWP_VM_HEAPBLOCKS_PER_PAGE) / BGWP_VM_HEAPBLOCKS_PER_BYTE] \
	  >> (((heapblk) % BGWP_VM_HEAPBLOCKS_PER_BYTE) * 2)) & 0x03)

/* ---------- CLOG writer (clog_writer.c) ---------- */

/*
 * clog.c's CLOGShmemInit() creates the CLOG SLRU with these parameters:
 * ShmemInitStruct name, CLOGShmemBuffers() slots, and 2 status
 * bits per xid with one LSN group per 32 xids.  The CLOG page layout
 * constants are static in clog.c and copied here.  Expand these macros only
 * where access/clog.h and access/slru.h are included.
 *
 * Locking, which SimpleLruWritePage() relies on its caller for:
 *
 *	- up to 16 one control lock (XactSLRULock) protects every slot's state,
 *	  and pages are numbered with int;
 *	- from 17 the slots are split into banks of SLRU_BANK_SIZE (16, private
 *	  to slru.c) consecutive slots, a page lives only in the bank
 *	  pageno % nbanks, each bank's state is protected by its own bank lock
 *	  and has its own LRU counter, page numbers are int64 and
 *	  latest_page_number is an atomic read without any lock.
 *
 * The writer therefore works on "lock groups": consecutive slots sharing
 * one lock (all slots up to 16, one bank from 17), and calls
 * SimpleLruWritePage() holding exactly the lock of the slot's group in
 * exclusive mode, as SlruSelectLRUPage()'s callers do.
 *
 * No exported function cleans an SLRU page ahead of eviction (the
 * checkpointer's SimpleLruWriteAll() writes all of them, at checkpoints),
 * so the writer attaches to the CLOG's shared control by its ShmemInitStruct
 * name and checks the layout before it writes anything (clog_writer.c's
 * clog_writer_attach() and BGWP_CLOG_CHECK_LOCKS(); on a mismatch it logs
 * "clog writer disabled" with the reason and writes nothing).  A
 * change that slips past the checks is caught by t/030_clog_writer.pl
 * (pages written, commit statuses intact under pgbench) and
 * t/032_clog_crash_loop.pl (statuses intact across crashes).
 */
#define BGWP_CLOG_XACTS_PER_PAGE	(BLCKSZ * 4)
#define BGWP_CLOG_LSNS_PER_PAGE	(BGWP_CLOG_XACTS_PER_PAGE / 32)

#if PG_VERSION_NUM >= 170000

typedef int64 BgwpSlruPageNo;

/*
 * CLOGShmemBuffers() is static in clog.c from 17: its rule (the
 * transaction_buffers GUC, which CLOGShmemInit() has set to the autotuned
 * value when it was 0, clamped to clog.c's CLOG_MAX_ALLOWED_BUFFERS).
 */
#define BGWP_CLOG_MAX_ALLOWED_BUFFERS \
	Min(SLRU_MAX_ALLOWED_BUFFERS, \
		(((MaxTransactionId / 2) + (BGWP_CLOG_XACTS_PER_PAGE - 1)) / \
		 BGWP_CLOG_XACTS_PER_PAGE))

#define BGWP_CLOG_NUM_BUFFERS() \
	(transaction_buffers == 0 ? SimpleLruAutotuneBuffers(512, 1024) : \
	 Min(Max(16, transaction_buffers), BGWP_CLOG_MAX_ALLOWED_BUFFERS))
#define BGWP_CLOG_SLRU_NAME		"transaction"
#define BGWP_SLRU_BANK_SIZE		16
#define BGWP_CLOG_GROUP_SIZE(ctl)	BGWP_SLRU_BANK_SIZE
#define BGWP_CLOG_GROUP_LOCK(ctl, slotno) \
	(&(ctl)->shared->bank_locks[(slotno) / BGWP_SLRU_BANK_SIZE].lock)
#define BGWP_CLOG_CUR_LRU_COUNT(shared, slotno) \
	((shared)->bank_cur_lru_count[(slotno) / BGWP_SLRU_BANK_SIZE])
#define BGWP_CLOG_LATEST_PAGE(shared) \
	((BgwpSlruPageNo) pg_atomic_read_u64(&(shared)->latest_page_number))

/*
 * Check the locks SimpleLruInit() set up, and complete the local control
 * struct as it does (the caller sets shared, PagePrecedes, sync handler and
 * directory).  Returns NULL or why the layout is not the expected one.
 * "inside" tells whether an array lies in the SLRU's shared memory.
 */
#define BGWP_CLOG_CHECK_LOCKS(ctl, nslots, inside) \
	((nslots) % BGWP_SLRU_BANK_SIZE != 0 ? "unexpected number of CLOG banks" : \
	 !inside((ctl)->shared->bank_locks, \
			 ((nslots) / BGWP_SLRU_BANK_SIZE) * sizeof(LWLockPadded)) || \
	 !inside((ctl)->shared->bank_cur_lru_count, \
			 ((nslots) / BGWP_SLRU_BANK_SIZE) * sizeof(int)) ? \
	 "unexpected CLOG bank layout" : \
	 ((ctl)->nbanks = (nslots) / BGWP_SLRU_BANK_SIZE, \
	  (ctl)->long_segment_names = false, \
	  (const char *) NULL))

#else

typedef int BgwpSlruPageNo;

#define BGWP_CLOG_NUM_BUFFERS()	((int) CLOGShmemBuffers())
#define BGWP_CLOG_SLRU_NAME		"Xact"
#define BGWP_CLOG_GROUP_SIZE(ctl)	((ctl)->shared->num_slots)
#define BGWP_CLOG_GROUP_LOCK(ctl, slotno)	(XactSLRULock)
#define BGWP_CLOG_CUR_LRU_COUNT(shared, slotno)	((shared)->cur_lru_count)
#define BGWP_CLOG_LATEST_PAGE(shared)	((shared)->latest_page_number)
#define BGWP_CLOG_CHECK_LOCKS(ctl, nslots, inside) \
	((ctl)->shared->ControlLock != XactSLRULock ? \
	 "unexpected CLOG control lock" : (const char *) NULL)

#endif

/* ---------- end of CLOG writer section ---------- */

/*
 * A wait event set kept for the process's lifetime: 17 ties a set to a
 * resource owner (NULL: none), 15 and 16 to a memory context.
 */
#if PG_VERSION_NUM >= 170000
#define BGWP_CREATE_PROCESS_WAIT_EVENT_SET(nevents) \
	CreateWaitEventSet(NULL, (nevents))
#else
#define BGWP_CREATE_PROCESS_WAIT_EVENT_SET(nevents) \
	CreateWaitEventSet(TopMemoryContext, (nevents))
#endif

#endif							/* BGWP_COMPAT_H */
