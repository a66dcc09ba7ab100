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
 * counters all stay core's.  It never writes during recovery (the startup
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
#include "portability/instr_time.h"
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

/* Writer-local: our view of the CLOG SLRU, valid when cw_attached. */
static SlruCtlData ClogCtlData;

#define ClogCtl (&ClogCtlData)

static bool cw_attached = false;

/*
 * Why the writer is disabled (the CLOG's layout is not the one it was
 * built for), or NULL.
 */
static const char *cw_disabled_reason = NULL;

/* Per-slot page number written in the current round (-1: none). */
static BgwpSlruPageNo *cw_written_page = NULL;

/*
 * What each slot held at the last look (-1: nothing), and whether that
 * page was dirty, being written or written by us then: its eviction since
 * needed a write, or would have without us (clog_writer_evictions()).
 */
static BgwpSlruPageNo *cw_seen_page = NULL;
static bool *cw_seen_dirty = NULL;

/* auto: write until then (0: not since the writer started) */
static TimestampTz cw_write_until = 0;

/* Our last published state (the writer is the only one to publish). */
static ClogWriterState cw_state = CLOG_WRITER_NOT_RUNNING;

/* Pacing state, reset whenever the writer stops being active. */
static FullTransactionId cw_prev_next_xid;
static TimestampTz cw_prev_round_time = 0;
static double cw_peak_rate = 0;	/* xids per ms */
static int	cw_idle_rounds = 0;

static bool clog_page_precedes(BgwpSlruPageNo page1, BgwpSlruPageNo page2);
static const char *clog_writer_attach(void);
static bool clog_writer_work_pending(int first, int last);
static int	clog_writer_select_victim(int first, int last);
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
 * Same ordering as clog.c's static CLOGPagePrecedes(): page1 is older than
 * page2 if every xid on it precedes every xid on page2, in modulo-2^32 xid
 * arithmetic.  Used as the SLRU's PagePrecedes callback and to break ties
 * between equally old slots, as SlruSelectLRUPage() does.
 */
static bool
clog_page_precedes(BgwpSlruPageNo page1, BgwpSlruPageNo page2)
{
	TransactionId xid1;
	TransactionId xid2;

	xid1 = ((TransactionId) page1) * BGWP_CLOG_XACTS_PER_PAGE;
	xid1 += FirstNormalTransactionId + 1;
	xid2 = ((TransactionId) page2) * BGWP_CLOG_XACTS_PER_PAGE;
	xid2 += FirstNormalTransactionId + 1;

	return (TransactionIdPrecedes(xid1, xid2) &&
			TransactionIdPrecedes(xid1, xid2 + BGWP_CLOG_XACTS_PER_PAGE - 1));
}

/*
 * Attach to the CLOG SLRU the way CLOGShmemInit() does in every backend,
 * and check that what we find is laid out as this server version's clog.c
 * and slru.c lay it out.  Returns NULL on success, else the reason why the
 * writer must not touch it.
 */
static const char *
clog_writer_attach(void)
{
	SlruShared	shared;
	bool		found;
	int			nslots = BGWP_CLOG_NUM_BUFFERS();
	char	   *base;
	char	   *end;
	const char *lock_problem;

	shared = (SlruShared) ShmemInitStruct(BGWP_CLOG_SLRU_NAME,
										  CLOGShmemSize(), &found);
	if (!found)
		return "CLOG shared memory \"" BGWP_CLOG_SLRU_NAME "\" not found";
	if (shared->num_slots != nslots)
		return "unexpected number of CLOG buffers";
	if (shared->group_lsn == NULL ||
		shared->lsn_groups_per_page != BGWP_CLOG_LSNS_PER_PAGE)
		return "unexpected CLOG LSN groups";
	if (shared->slru_stats_idx != pgstat_get_slru_index(BGWP_CLOG_SLRU_NAME))
		return "unexpected CLOG statistics slot";

	/* every array and page buffer must lie inside the structure */
	base = (char *) shared;
	end = base + CLOGShmemSize();
#define CLOG_ARRAY_INSIDE(ptr, len) \
	((char *) (ptr) >= base + sizeof(SlruSharedData) && \
	 (char *) (ptr) + (len) <= end)
	if (!CLOG_ARRAY_INSIDE(shared->page_buffer, nslots * sizeof(char *)) ||
		!CLOG_ARRAY_INSIDE(shared->page_status,
						   nslots * sizeof(SlruPageStatus)) ||
		!CLOG_ARRAY_INSIDE(shared->page_dirty, nslots * sizeof(bool)) ||
		!CLOG_ARRAY_INSIDE(shared->page_number,
						   nslots * sizeof(shared->page_number[0])) ||
		!CLOG_ARRAY_INSIDE(shared->page_lru_count, nslots * sizeof(int)) ||
		!CLOG_ARRAY_INSIDE(shared->buffer_locks,
						   nslots * sizeof(LWLockPadded)) ||
		!CLOG_ARRAY_INSIDE(shared->group_lsn, nslots *
						   BGWP_CLOG_LSNS_PER_PAGE * sizeof(XLogRecPtr)))
		return "unexpected CLOG shared memory layout";
	for (int slotno = 0; slotno < nslots; slotno++)
	{
		if (!CLOG_ARRAY_INSIDE(shared->page_buffer[slotno], BLCKSZ))
			return "unexpected CLOG page buffer address";
	}

	/* what SimpleLruInit() sets up in the local control struct */
	ClogCtl->shared = shared;
	ClogCtl->sync_handler = SYNC_HANDLER_CLOG;
	ClogCtl->PagePrecedes = clog_page_precedes;
	strlcpy(ClogCtl->Dir, "pg_xact", sizeof(ClogCtl->Dir));

	/* the control lock, or the banks and their locks (compat.h) */
	lock_problem = BGWP_CLOG_CHECK_LOCKS(ClogCtl, nslots, CLOG_ARRAY_INSIDE);
#undef CLOG_ARRAY_INSIDE
	if (lock_problem != NULL)
	{
		ClogCtl->shared = NULL;
		return lock_problem;
	}

	cw_written_page = MemoryContextAlloc(TopMemoryContext,
										 nslots * sizeof(BgwpSlruPageNo));
	cw_seen_page = MemoryContextAlloc(TopMemoryContext,
									  nslots * sizeof(BgwpSlruPageNo));
	cw_seen_dirty = MemoryContextAllocZero(TopMemoryContext,
										   nslots * sizeof(bool));
	for (int slotno = 0; slotno < nslots; slotno++)
	{
		cw_written_page[slotno] = -1;
		cw_seen_page[slotno] = -1;
	}

	return NULL;
}

/*
 * Is there any page to write in slots first..last-1?  A peek without the
 * lock, so that a round with nothing to do never contends with committing
 * transactions; slru.c itself relies on int and bool reads being atomic (and
 * on 64-bit page numbers being read whole, which holds on the 64-bit
 * platforms bgw_prefetch is built for; a torn read could only make the
 * answer stale).  A stale answer only delays or wastes one round:
 * clog_writer_round() decides under the lock.
 */
static bool
clog_writer_work_pending(int first, int last)
{
	SlruShared	shared = ClogCtl->shared;
	BgwpSlruPageNo latest = BGWP_CLOG_LATEST_PAGE(shared);

	for (int slotno = first; slotno < last; slotno++)
	{
		if (shared->page_status[slotno] == SLRU_PAGE_VALID &&
			shared->page_dirty[slotno] &&
			shared->page_number[slotno] != latest)
			return true;
	}
	return false;
}

/*
 * Choose the next page to write in the lock group of slots first..last-1:
 * the least recently used slot holding a valid, dirty page that is not the
 * latest page and that we have not written in this round already.  Ages
 * are computed as in SlruSelectLRUPage(), with the group's LRU counter and
 * without advancing it.  Returns -1 when there is none.  The group's lock
 * (compat.h) must be held exclusively.
 */
static int
clog_writer_select_victim(int first, int last)
{
	SlruShared	shared = ClogCtl->shared;
	int			cur_count = BGWP_CLOG_CUR_LRU_COUNT(shared, first);
	BgwpSlruPageNo latest = BGWP_CLOG_LATEST_PAGE(shared);
	int			best = -1;
	int			best_delta = -1;

	for (int slotno = first; slotno < last; slotno++)
	{
		BgwpSlruPageNo pageno = shared->page_number[slotno];
		int			delta;

		if (shared->page_status[slotno] != SLRU_PAGE_VALID ||
			!shared->page_dirty[slotno] ||
			pageno == latest ||
			cw_written_page[slotno] == pageno)
			continue;

		delta = Max(cur_count - shared->page_lru_count[slotno], 0);
		if (delta > best_delta ||
			(delta == best_delta &&
			 clog_page_precedes(pageno, shared->page_number[best])))
		{
			best = slotno;
			best_delta = delta;
		}
	}
	return best;
}

/*
 * One round of writing: at most bgw_prefetch.clog_writer_max_pages pages,
 * oldest first within each lock group (compat.h: all slots up to
 * PostgreSQL 16, one bank from 17, where backends also evict within a
 * bank).  SimpleLruWritePage() must be called with the slot's group lock
 * held exclusively; it releases the lock during the write and takes it
 * back, so every choice is made afresh under the lock.  Returns the number
 * of pages written; the shared counters are updated.
 */
static int
clog_writer_round(void)
{
	SlruShared	shared = ClogCtl->shared;
	int			group = BGWP_CLOG_GROUP_SIZE(ClogCtl);
	int			written = 0;
	instr_time	elapsed;
	TimestampTz now;

	INSTR_TIME_SET_ZERO(elapsed);

	for (int first = 0; first < shared->num_slots; first += group)
	{
		int			last = Min(first + group, shared->num_slots);
		LWLock	   *lock = BGWP_CLOG_GROUP_LOCK(ClogCtl, first);

		if (written >= bgwp_clog_writer_max_pages ||
			ShutdownRequestPending || ConfigReloadPending)
			break;
		if (!clog_writer_work_pending(first, last))
			continue;

		LWLockAcquire(lock, LW_EXCLUSIVE);
		while (written < bgwp_clog_writer_max_pages &&
			   !ShutdownRequestPending && !ConfigReloadPending)
		{
			int			slotno = clog_writer_select_victim(first, last);
			instr_time	start;
			instr_time	end;

			if (slotno < 0)
				break;

			cw_written_page[slotno] = shared->page_number[slotno];

			INSTR_TIME_SET_CURRENT(start);
			SimpleLruWritePage(ClogCtl, slotno);
			INSTR_TIME_SET_CURRENT(end);
			INSTR_TIME_ACCUM_DIFF(elapsed, end, start);
			written++;
		}
		LWLockRelease(lock);
	}

	if (written > 0)
	{
		now = GetCurrentTimestamp();
		SpinLockAcquire(&cw_shared->mutex);
		cw_shared->pages_written += written;
		cw_shared->write_time += INSTR_TIME_GET_MILLISEC(elapsed);
		cw_shared->last_write = now;
		cw_shared->consecutive_errors = 0;
		SpinLockRelease(&cw_shared->mutex);
	}

	return written;
}

/*
 * How many dirty pages were evicted since the last look: slots that then
 * held a page that was dirty, being written or just written by us, and
 * now hold another.  Whoever evicted such a page had to write it first,
 * unless we had (or the checkpointer had, since: a rare false alarm, which
 * costs only some early writes).  Then remember what each slot holds for
 * the next look.  A peek without the lock, like clog_writer_work_pending():
 * a torn or stale view only delays or advances the writer's start.  Must
 * follow the round, if any: it reads the pages the round wrote.  Counts a
 * round in the statistics, writing or not.
 */
static int
clog_writer_evictions(void)
{
	SlruShared	shared = ClogCtl->shared;
	int			evicted = 0;

	for (int slotno = 0; slotno < shared->num_slots; slotno++)
	{
		SlruPageStatus status = shared->page_status[slotno];
		BgwpSlruPageNo pageno = shared->page_number[slotno];

		if (status == SLRU_PAGE_EMPTY)
			pageno = -1;
		if (cw_seen_dirty[slotno] && pageno != cw_seen_page[slotno])
			evicted++;

		cw_seen_page[slotno] = pageno;
		cw_seen_dirty[slotno] = pageno >= 0 &&
			(shared->page_dirty[slotno] ||
			 status == SLRU_PAGE_WRITE_IN_PROGRESS ||
			 cw_written_page[slotno] == pageno);
		cw_written_page[slotno] = -1;
	}

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
			cw_disabled_reason = clog_writer_attach();
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
