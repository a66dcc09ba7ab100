/*-------------------------------------------------------------------------
 *
 * clog_slru.c
 *	  The CLOG writer's hands on the CLOG SLRU: attach to it, write its
 *	  oldest dirty pages as an evicting backend would, see evictions.
 *
 * The writer attaches to the CLOG SLRU's shared memory the way
 * CLOGShmemInit() does in every backend, with a local SlruCtlData of its
 * own, after checking that what it finds is laid out as this server
 * version's clog.c and slru.c lay it out (compat.h); it writes with
 * SimpleLruWritePage() under the lock of the page's slot group (the
 * control lock up to PostgreSQL 16, the slot's bank lock from 17), so the
 * WAL-before-data rule, the fsync request and the pg_stat_slru counters
 * stay core's.  What to write and when is clog_writer.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/clog.h"
#include "access/slru.h"
#include "access/transam.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "postmaster/interrupt.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

#include "clog_slru.h"
#include "compat.h"

/* Our view of the CLOG SLRU, valid once clog_slru_attach() succeeded */
static SlruCtlData ClogCtlData;

#define ClogCtl (&ClogCtlData)

/* Per-slot page number written in the current round (-1: none). */
static BgwpSlruPageNo *written_page = NULL;

/*
 * What each slot held at the last look (-1: nothing), and whether that
 * page was dirty, being written or written by us then: its eviction since
 * needed a write, or would have without us (clog_slru_evictions()).
 */
static BgwpSlruPageNo *seen_page = NULL;
static bool *seen_dirty = NULL;

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
const char *
clog_slru_attach(void)
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

	written_page = MemoryContextAlloc(TopMemoryContext,
										 nslots * sizeof(BgwpSlruPageNo));
	seen_page = MemoryContextAlloc(TopMemoryContext,
									  nslots * sizeof(BgwpSlruPageNo));
	seen_dirty = MemoryContextAllocZero(TopMemoryContext,
										   nslots * sizeof(bool));
	for (int slotno = 0; slotno < nslots; slotno++)
	{
		written_page[slotno] = -1;
		seen_page[slotno] = -1;
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
 * clog_slru_write_round() decides under the lock.
 */
static bool
slot_group_has_work(int first, int last)
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
select_victim(int first, int last)
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
			written_page[slotno] == pageno)
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
 * One round of writing: at most max_pages pages,
 * oldest first within each lock group (compat.h: all slots up to
 * PostgreSQL 16, one bank from 17, where backends also evict within a
 * bank).  SimpleLruWritePage() must be called with the slot's group lock
 * held exclusively; it releases the lock during the write and takes it
 * back, so every choice is made afresh under the lock.  A shutdown or
 * reload request ends the round early.  Returns the number of pages
 * written, and in *write_ms the time spent writing them.
 */
int
clog_slru_write_round(int max_pages, double *write_ms)
{
	SlruShared	shared = ClogCtl->shared;
	int			group = BGWP_CLOG_GROUP_SIZE(ClogCtl);
	int			written = 0;
	instr_time	elapsed;

	INSTR_TIME_SET_ZERO(elapsed);

	for (int first = 0; first < shared->num_slots; first += group)
	{
		int			last = Min(first + group, shared->num_slots);
		LWLock	   *lock = BGWP_CLOG_GROUP_LOCK(ClogCtl, first);

		if (written >= max_pages ||
			ShutdownRequestPending || ConfigReloadPending)
			break;
		if (!slot_group_has_work(first, last))
			continue;

		LWLockAcquire(lock, LW_EXCLUSIVE);
		while (written < max_pages &&
			   !ShutdownRequestPending && !ConfigReloadPending)
		{
			int			slotno = select_victim(first, last);
			instr_time	start;
			instr_time	end;

			if (slotno < 0)
				break;

			written_page[slotno] = shared->page_number[slotno];

			INSTR_TIME_SET_CURRENT(start);
			SimpleLruWritePage(ClogCtl, slotno);
			INSTR_TIME_SET_CURRENT(end);
			INSTR_TIME_ACCUM_DIFF(elapsed, end, start);
			written++;
		}
		LWLockRelease(lock);
	}

	*write_ms = INSTR_TIME_GET_MILLISEC(elapsed);
	return written;
}

/*
 * How many dirty pages were evicted since the last look: slots that then
 * held a page that was dirty, being written or just written by us, and
 * now hold another.  Whoever evicted such a page had to write it first,
 * unless we had (or the checkpointer had, since: a rare false alarm, which
 * costs only some early writes).  Then remember what each slot holds for
 * the next look.  A peek without the lock, like slot_group_has_work():
 * a torn or stale view only delays or advances the writer's start.  Must
 * follow the round, if any: it reads the pages the round wrote.
 */
int
clog_slru_evictions(void)
{
	SlruShared	shared = ClogCtl->shared;
	int			evicted = 0;

	for (int slotno = 0; slotno < shared->num_slots; slotno++)
	{
		SlruPageStatus status = shared->page_status[slotno];
		BgwpSlruPageNo pageno = shared->page_number[slotno];

		if (status == SLRU_PAGE_EMPTY)
			pageno = -1;
		if (seen_dirty[slotno] && pageno != seen_page[slotno])
			evicted++;

		seen_page[slotno] = pageno;
		seen_dirty[slotno] = pageno >= 0 &&
			(shared->page_dirty[slotno] ||
			 status == SLRU_PAGE_WRITE_IN_PROGRESS ||
			 written_page[slotno] == pageno);
		written_page[slotno] = -1;
	}

	return evicted;
}

