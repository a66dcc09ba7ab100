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
 * Nothing allocates, and the slot's spinlock is held for a copy of 40
 * bytes.
 *
 * The counters are pgBufferUsage's, the same VACUUM's report subtracts, so
 * they need track_io_timing on in that backend; when it is off (the reads
 * grow but not their time) the monitor uses its sampled estimate.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "backend_reads.h"
#include "compat.h"

/*
 * Transactions remembered per backend: a relation's and those after it
 * until the monitor reports its scan (its TOAST table, an ANALYZE, the next
 * small tables of an autovacuum worker).
 */
#define XACT_READS_RING 16

/* One transaction's reads, between the end of the one before and its own. */
typedef struct XactReads
{
	TimestampTz begin;
	TimestampTz end;
	bool		committed;
	int64		reads;
	int64		read_time_us;
} XactReads;

typedef struct BackendReadsSlot
{
	slock_t		mutex;
	int			pid;			/* the backend that wrote the records */
	uint32		written;		/* records written by that backend */
	XactReads	ring[XACT_READS_RING];
} BackendReadsSlot;

/* One slot per backend status slot (backends.c's slot numbers). */
static BackendReadsSlot *backend_reads_slots = NULL;

/*
 * In the publishing backend: how deep it is in VACUUM or ANALYZE statements
 * (ANALYZE may run in a function), and whether it publishes the end of its
 * current transaction although the statement returned: a lone ANALYZE runs
 * in the statement's own transaction, which commits after it returns.
 */
static int	statement_depth = 0;
static bool publish_xact_end = false;

/* ... and its counters at the end of its last transaction, or statement start */
static TimestampTz mark_time = 0;
static int64 mark_reads = 0;
static int64 mark_read_time_us = 0;

static void backend_reads_xact_callback(XactEvent event, void *arg);

Size
backend_reads_shmem_size(void)
{
	return mul_size(BGWP_NUM_BACKEND_STATUS_SLOTS, sizeof(BackendReadsSlot));
}

void
backend_reads_shmem_startup(void)
{
	bool		found;

	backend_reads_slots = ShmemInitStruct("bgw_prefetch backend reads",
										  backend_reads_shmem_size(), &found);
	if (!found)
	{
		memset(backend_reads_slots, 0, backend_reads_shmem_size());
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
 * At each top-level pre-commit and abort of a publishing backend, write the
 * transaction's reads to its slot.
 */
static void
backend_reads_xact_callback(XactEvent event, void *arg)
{
	BackendReadsSlot *slot;
	XactReads	rec;
	int64		reads;
	int64		read_time_us;

	if (event != XACT_EVENT_PRE_COMMIT && event != XACT_EVENT_ABORT)
		return;
	if (statement_depth == 0 && !publish_xact_end &&
		MyBackendType != B_AUTOVAC_WORKER)
		return;
	if (backend_reads_slots == NULL ||
		BGWP_MY_BACKEND_STATUS_SLOT() < 0 ||
		BGWP_MY_BACKEND_STATUS_SLOT() >= BGWP_NUM_BACKEND_STATUS_SLOTS)
		return;

	current_reads(&reads, &read_time_us);
	rec.begin = mark_time;
	rec.end = GetCurrentTimestamp();
	rec.committed = event == XACT_EVENT_PRE_COMMIT;
	rec.reads = reads - mark_reads;
	rec.read_time_us = read_time_us - mark_read_time_us;
	mark_time = rec.end;
	mark_reads = reads;
	mark_read_time_us = read_time_us;
	publish_xact_end = false;

	slot = &backend_reads_slots[BGWP_MY_BACKEND_STATUS_SLOT()];
	SpinLockAcquire(&slot->mutex);
	if (slot->pid != MyProcPid)
	{
		slot->pid = MyProcPid;
		slot->written = 0;
	}
	slot->ring[slot->written % XACT_READS_RING] = rec;
	slot->written++;
	SpinLockRelease(&slot->mutex);
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

	if (backend_reads_slots == NULL || slot_no < 0 ||
		slot_no >= BGWP_NUM_BACKEND_STATUS_SLOTS)
		return BACKEND_READS_PENDING;
	slot = &backend_reads_slots[slot_no];
	SpinLockAcquire(&slot->mutex);
	if (slot->pid == pid)
	{
		uint32		n = Min(slot->written, XACT_READS_RING);

		for (uint32 i = 1; i <= n; i++)
		{
			XactReads  *rec = &slot->ring[(slot->written - i) % XACT_READS_RING];

			if (rec->begin <= at && at <= rec->end)
			{
				result = rec->committed ?
					BACKEND_READS_FOUND : BACKEND_READS_ABORTED;
				*reads = rec->reads;
				*read_time_us = rec->read_time_us;
				break;
			}
		}
	}
	SpinLockRelease(&slot->mutex);
	return result;
}
