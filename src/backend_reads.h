/*-------------------------------------------------------------------------
 *
 * backend_reads.h
 *	  What a VACUUM or ANALYZE backend read, published per transaction
 *	  (backend_reads.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_BACKEND_READS_H
#define BGWP_BACKEND_READS_H

#include "datatype/timestamp.h"
#include "storage/latch.h"

#include "bgw_prefetch.h"

/*
 * One transaction of a VACUUM or ANALYZE backend (or autovacuum worker):
 * its reads, between the end of the one before and its own, and the
 * relation it scanned, if it scanned one (relid valid).
 */
typedef struct PublishedXact
{
	TimestampTz begin;
	TimestampTz end;
	bool		committed;
	int64		reads;
	int64		read_time_us;
	Oid			relid;			/* the relation scanned, or InvalidOid */
	PrefetchCommand command;	/* ... by VACUUM or ANALYZE */
	int64		blocks_total;	/* progress: heap_blks_total, or blocks
								 * ANALYZE samples */
	int64		blocks_done;	/* progress: ANALYZE's sample_blks_scanned */
} PublishedXact;

/* ... as the reader sees it: with the backend that published it */
typedef struct PublishedXactOf
{
	int			pid;
	bool		autovacuum;		/* an autovacuum worker's */
	Oid			dbid;			/* the backend's database */
	PublishedXact xact;
} PublishedXactOf;

typedef enum BackendReadsResult
{
	BACKEND_READS_PENDING,		/* no record (yet) of that transaction */
	BACKEND_READS_FOUND,		/* it committed: *reads, *read_time_us */
	BACKEND_READS_ABORTED		/* it aborted */
} BackendReadsResult;

extern Size backend_reads_shmem_size(void);
extern void backend_reads_shmem_startup(void);
extern void backend_reads_register(void);
extern void backend_reads_statement_start(void);
extern void backend_reads_statement_end(void);
extern void backend_reads_set_reader(Latch *latch);
extern int	backend_reads_take_new(PublishedXactOf *out, int max);
extern uint64 backend_reads_unread(void);
extern BackendReadsResult backend_reads_of(int slot_no, int pid, TimestampTz at,
										   int64 *reads, int64 *read_time_us);

#endif							/* BGWP_BACKEND_READS_H */
