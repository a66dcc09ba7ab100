/*-------------------------------------------------------------------------
 *
 * backend_reads.c
 *	  What a VACUUM or ANALYZE backend read, as track_io_timing counted it,
 *	  published at the end of each of its transactions.
 *
 * pg_stat_prefetch's read_time is meant to be the figure VACUUM VERBOSE and
 * autovacuum's log line give as "I/O timings: read": the growth of the
 * backend's own pgBufferUsage read time over the relation's processing.
 * pgBufferUsage is private to the backend, and the server publishes no
 * per-command copy of it (18's per-backend I/O statistics come close, but
 * an autovacuum worker drops them when it exits, a millisecond after its
 * last table).  Sampling the backend's wait events every millisecond
 * estimates it well up to 17, where every read is one synchronous wait in
 * DataFileRead; from 18 a read's time also covers handing it to an I/O
 * worker or io_uring and completing it (checksum verification), during
 * which no wait event is set, and sampling misses a quarter to a half.
 *
 * So the backend publishes it.  A VACUUM or ANALYZE processes each relation
 * in a transaction of its own (vacuum_rel(), and analyze_rel() under
 * vacuum()'s use_own_xacts), so the growth of pgBufferUsage's read counters
 * between two transaction ends of such a backend is one relation's reads.
 * An xact callback, inherited by every backend from _PG_init in the
 * postmaster, writes that growth at each pre-commit (and marks an abort) in
 * the backend's slot of a small shared ring, with the interval of time it
 * covers; the monitor (prefetcher.c) takes the record whose interval holds
 * the moment it first saw the command on the relation.  Only autovacuum
 * workers, and a backend inside a VACUUM or ANALYZE statement (the utility
 * hook brackets it) until the end of the statement's transaction, publish:
 * in any other transaction the callback returns at its first tests.
 * Nothing allocates, and the slot's spinlock is held for a copy of one
 * record.
 *
 * Each record also says which relation the transaction scanned, if it
 * scanned one: the relation it holds a ShareUpdateExclusiveLock on (as
 * vacuum_rel() and analyze_rel() do until the commit), whether it vacuumed
 * it (PROC_IN_VACUUM) or analyzed it, and the figures its progress report
 * left (compat.h says why these and no others).  So a scan is recorded even
 * if the monitor was never scheduled while it ran (prefetch_unseen.c): the
 * record does not depend on being seen, only on being read before
 * XACT_READS_RING more records are written in the backend's slot (an
 * autovacuum worker writes only its first transaction's, its scans of at
 * least min_relation_size and its aborts).  Publishing such a record sets the
 * monitor's latch; every record of an autovacuum worker also tells the
 * monitor that autovacuum works in its database.
 *
 * The counters are pgBufferUsage's, the same VACUUM's report subtracts, so
 * they need track_io_timing on in that backend; when it is off (the reads
 * grow but not their time) the monitor uses its sampled estimate.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/progress.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "backend_reads.h"
#include "compat.h"

/*
 * Transactions remembered per backend: a relation's and those after it
 * until the monitor reports its scan (its TOAST table, an ANALYZE, the next
 * small tables of an autovacuum worker).
 */
#define XACT_READS_RING 32

/*
 * A backend status slot's records, of whichever backends had it: a record
 * says which backend wrote it, so that the records of a short session are
 * still there after the next one in the slot has written its own.
 */
typedef struct BackendReadsSlot
{
	slock_t		mutex;
	uint32		written;		/* records written in this slot */
	PublishedXactOf ring[XACT_READS_RING];
} BackendReadsSlot;

typedef struct BackendReadsShared
{
	pg_atomic_uint64 published; /* records written, all backends */
	pg_atomic_uint64 read;		/* ... of which the reader has taken */
	Latch	   *reader_latch;	/* the monitor's, set for a scan's record */
	BackendReadsSlot slots[FLEXIBLE_ARRAY_MEMBER];
} BackendReadsShared;

static BackendReadsShared *backend_reads_shared = NULL;

/* One slot per backend status slot (backends.c's slot numbers). */
static BackendReadsSlot *backend_reads_slots = NULL;

/* In the reader (the monitor): how far it has read each slot */
static uint64 reader_published = 0;
static uint32 *reader_written = NULL;

/*
 * In the publishing backend: how deep it is in VACUUM or ANALYZE statements
 * (ANALYZE may run in a function), and whether it publishes the end of its
 * current transaction although the statement returned: a lone ANALYZE runs
 * in the statement's own transaction, which commits after it returns.
 */
static int	statement_depth = 0;
static bool publish_xact_end = false;
static bool published_before = false;	/* this process wrote a record */

/* ... and its counters at the end of its last transaction, or statement start */
static TimestampTz mark_time = 0;
static int64 mark_reads = 0;
static int64 mark_read_time_us = 0;

static void backend_reads_xact_callback(XactEvent event, void *arg);

Size
backend_reads_shmem_size(void)
{
	return add_size(offsetof(BackendReadsShared, slots),
					mul_size(BGWP_NUM_BACKEND_STATUS_SLOTS, sizeof(BackendReadsSlot)));
}

void
backend_reads_shmem_startup(void)
{
	bool		found;

	backend_reads_shared = ShmemInitStruct("bgw_prefetch backend reads",
										   backend_reads_shmem_size(), &found);
	backend_reads_slots = backend_reads_shared->slots;
	if (!found)
	{
		memset(backend_reads_shared, 0, backend_reads_shmem_size());
		pg_atomic_init_u64(&backend_reads_shared->published, 0);
		pg_atomic_init_u64(&backend_reads_shared->read, 0);
		for (int i = 0; i < BGWP_NUM_BACKEND_STATUS_SLOTS; i++)
			SpinLockInit(&backend_reads_slots[i].mutex);
	}
}

/* Called from _PG_init in the postmaster: every backend inherits it. */
void
backend_reads_register(void)
{
	RegisterXactCallback(backend_reads_xact_callback, NULL);
}

/* The backend's read counters now, in the units of "I/O timings". */
static void
current_reads(int64 *reads, int64 *read_time_us)
{
	*reads = pgBufferUsage.shared_blks_read + pgBufferUsage.local_blks_read;
	*read_time_us = BGWP_BUFFER_USAGE_READ_TIME_US(&pgBufferUsage);
}

/*
 * A VACUUM or ANALYZE statement starts in this backend.  Its transactions'
 * reads count from now, not from whatever the session did before.
 */
void
backend_reads_statement_start(void)
{
	if (statement_depth++ == 0 && !publish_xact_end)
	{
		mark_time = GetCurrentTimestamp();
		current_reads(&mark_reads, &mark_read_time_us);
	}
}

/*
 * ... and returns.  Its last transaction, the statement's own, is published
 * when it ends, unless it belongs to a transaction block, where the reads
 * of the statements after it would count too.
 */
void
backend_reads_statement_end(void)
{
	if (--statement_depth > 0)
		return;
	statement_depth = 0;
	publish_xact_end = !IsTransactionBlock();
}

/*
 * The relation this committing transaction scanned, if it scanned one (see
 * the file's head comment): rec's relid stays invalid otherwise.  An
 * ANALYZE of an inheritance tree is not one relation's scan: the children
 * it sampled are followed as scans of their own.
 */
static void
identify_scan(PublishedXact *rec)
{
	int64		params[PROGRESS_ANALYZE_CHILD_TABLES_TOTAL + 1];
	Oid			dbid;
	Oid			relid;

	if (!bgwp_take_my_progress_params(params, lengthof(params)) ||
		params[PROGRESS_VACUUM_TOTAL_HEAP_BLKS] <= 0 ||
		!bgwp_my_only_relation_locked(ShareUpdateExclusiveLock, &dbid, &relid))
		return;
	rec->command = (MyProc->statusFlags & PROC_IN_VACUUM) != 0 ?
		PREFETCH_CMD_VACUUM : PREFETCH_CMD_ANALYZE;
	if (rec->command == PREFETCH_CMD_ANALYZE &&
		params[PROGRESS_ANALYZE_CHILD_TABLES_TOTAL] > 0)
		return;
	rec->relid = relid;
	rec->blocks_total = params[PROGRESS_VACUUM_TOTAL_HEAP_BLKS];
	rec->blocks_done = rec->command == PREFETCH_CMD_ANALYZE ?
		params[PROGRESS_ANALYZE_BLOCKS_DONE] : 0;
}

/*
 * At each top-level pre-commit and abort of a publishing backend, write the
 * transaction's reads, and the relation it scanned, to its slot.  The
 * monitor is woken for a scan it may have to record, and for an autovacuum
 * worker's first transaction.
 */
static void
backend_reads_xact_callback(XactEvent event, void *arg)
{
	BackendReadsSlot *slot;
	PublishedXactOf *entry;
	PublishedXact rec;
	int64		reads;
	int64		read_time_us;
	bool		wake;
	Latch	   *reader;

	if (event != XACT_EVENT_PRE_COMMIT && event != XACT_EVENT_ABORT)
		return;
	if (statement_depth == 0 && !publish_xact_end &&
		MyBackendType != B_AUTOVAC_WORKER)
		return;
	if (backend_reads_slots == NULL ||
		BGWP_MY_BACKEND_STATUS_SLOT() < 0 ||
		BGWP_MY_BACKEND_STATUS_SLOT() >= BGWP_NUM_BACKEND_STATUS_SLOTS)
		return;

	memset(&rec, 0, sizeof(rec));
	current_reads(&reads, &read_time_us);
	rec.begin = mark_time;
	rec.end = GetCurrentTimestamp();
	rec.committed = event == XACT_EVENT_PRE_COMMIT;
	rec.reads = reads - mark_reads;
	rec.read_time_us = read_time_us - mark_read_time_us;
	if (rec.committed)
		identify_scan(&rec);
	mark_time = rec.end;
	mark_reads = reads;
	mark_read_time_us = read_time_us;
	publish_xact_end = false;

	/*
	 * An autovacuum worker runs many transactions that scan nothing worth
	 * telling (its catalog lookups, small tables): it writes only its first
	 * one, which says that it started, its scans of at least
	 * min_relation_size and its aborts (a followed scan that aborted is
	 * reported at once), so that a slot's ring holds what the monitor needs
	 * through a long starvation.  The first two wake the monitor.
	 */
	wake = (OidIsValid(rec.relid) &&
			rec.blocks_total >= (int64) bgwp_min_relation_size) ||
		(MyBackendType == B_AUTOVAC_WORKER && !published_before);
	if (!wake && rec.committed && MyBackendType == B_AUTOVAC_WORKER)
		return;
	published_before = true;

	slot = &backend_reads_slots[BGWP_MY_BACKEND_STATUS_SLOT()];
	SpinLockAcquire(&slot->mutex);
	entry = &slot->ring[slot->written % XACT_READS_RING];
	entry->pid = MyProcPid;
	entry->autovacuum = MyBackendType == B_AUTOVAC_WORKER;
	entry->dbid = MyDatabaseId;
	entry->xact = rec;
	slot->written++;
	SpinLockRelease(&slot->mutex);
	pg_atomic_fetch_add_u64(&backend_reads_shared->published, 1);
	reader = backend_reads_shared->reader_latch;
	if (wake && reader != NULL)
		SetLatch(reader);
}

/*
 * The reader (the monitor) says where it is to be woken; NULL when it
 * leaves.
 */
void
backend_reads_set_reader(Latch *latch)
{
	if (backend_reads_shared != NULL)
		backend_reads_shared->reader_latch = latch;
}

/*
 * For the reader: the records published since its last call, oldest first
 * per backend, at most max (the rest at the next call).  A record
 * overwritten before it was read is lost: the ring holds XACT_READS_RING
 * per backend.  Nothing is looked at while nothing was published.
 */
int
backend_reads_take_new(PublishedXactOf *out, int max)
{
	uint64		published;
	int			n = 0;

	if (backend_reads_shared == NULL)
		return 0;
	published = pg_atomic_read_u64(&backend_reads_shared->published);
	if (reader_written == NULL)
	{
		/* a new reader starts from now: older records were someone's */
		reader_written = MemoryContextAllocZero(TopMemoryContext,
												sizeof(uint32) * BGWP_NUM_BACKEND_STATUS_SLOTS);
		for (int s = 0; s < BGWP_NUM_BACKEND_STATUS_SLOTS; s++)
		{
			SpinLockAcquire(&backend_reads_slots[s].mutex);
			reader_written[s] = backend_reads_slots[s].written;
			SpinLockRelease(&backend_reads_slots[s].mutex);
		}
		reader_published = published;
		pg_atomic_write_u64(&backend_reads_shared->read, published);
		return 0;
	}
	if (published == reader_published)
		return 0;
	for (int s = 0; s < BGWP_NUM_BACKEND_STATUS_SLOTS; s++)
	{
		BackendReadsSlot *slot = &backend_reads_slots[s];

		SpinLockAcquire(&slot->mutex);
		if (slot->written - reader_written[s] > XACT_READS_RING)
			reader_written[s] = slot->written - XACT_READS_RING;
		while (reader_written[s] != slot->written && n < max)
		{
			out[n++] = slot->ring[reader_written[s] % XACT_READS_RING];
			reader_written[s]++;
		}
		SpinLockRelease(&slot->mutex);
		if (n == max)
			return n;			/* the rest next time */
	}
	reader_published = published;
	pg_atomic_write_u64(&backend_reads_shared->read, published);
	return n;
}

/*
 * Records published that the reader has not taken yet: 0 once it has read
 * everything published before its last look.  For bgw_prefetch_status(),
 * so that a test knows when every finished scan is accounted for.
 */
uint64
backend_reads_unread(void)
{
	uint64		published;
	uint64		read;

	if (backend_reads_shared == NULL)
		return 0;
	read = pg_atomic_read_u64(&backend_reads_shared->read);
	published = pg_atomic_read_u64(&backend_reads_shared->published);
	return published > read ? published - read : 0;
}

/*
 * The reads of the transaction of process pid (in backend status slot
 * slot) that was running at time at.  BACKEND_READS_PENDING while no record
 * of it is there (not over yet, or the process is not publishing), and
 * BACKEND_READS_ABORTED for a transaction that aborted.
 */
BackendReadsResult
backend_reads_of(int slot_no, int pid, TimestampTz at, int64 *reads,
				 int64 *read_time_us)
{
	BackendReadsSlot *slot;
	BackendReadsResult result = BACKEND_READS_PENDING;
	uint32		n;

	if (backend_reads_slots == NULL || slot_no < 0 ||
		slot_no >= BGWP_NUM_BACKEND_STATUS_SLOTS)
		return BACKEND_READS_PENDING;
	slot = &backend_reads_slots[slot_no];
	SpinLockAcquire(&slot->mutex);
	n = Min(slot->written, XACT_READS_RING);
	for (uint32 i = 1; i <= n; i++)
	{
		PublishedXactOf *entry = &slot->ring[(slot->written - i) % XACT_READS_RING];
		PublishedXact *rec = &entry->xact;

		if (entry->pid == pid && rec->begin <= at && at <= rec->end)
		{
			result = rec->committed ?
				BACKEND_READS_FOUND : BACKEND_READS_ABORTED;
			*reads = rec->reads;
			*read_time_us = rec->read_time_us;
			break;
		}
	}
	SpinLockRelease(&slot->mutex);
	return result;
}
