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
extern BackendReadsResult backend_reads_of(int slot_no, int pid, TimestampTz at,
										   int64 *reads, int64 *read_time_us);

#endif							/* BGWP_BACKEND_READS_H */
