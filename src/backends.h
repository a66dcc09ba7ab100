/*-------------------------------------------------------------------------
 *
 * backends.h
 *	  What other backends are doing, from the backend status array.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_BACKENDS_H
#define BGWP_BACKENDS_H

#include "bgw_prefetch.h"

/* Where a scan's command is, as far as prefetching is concerned. */
typedef enum ScanPhase
{
	SCAN_PHASE_SCANNING,		/* VACUUM scanning heap / ANALYZE sampling */
	SCAN_PHASE_PAUSED,			/* VACUUM index/heap vacuuming mid-scan */
	SCAN_PHASE_OTHER			/* anything else: the scan is over */
} ScanPhase;

/* One backend's progress, copied consistently out of shared memory. */
typedef struct ScanObservation
{
	int			slot;			/* index in the backend status array */
	int			pid;
	bool		autovacuum;
	Oid			dbid;
	Oid			relid;			/* for inherited ANALYZE: the current child */
	PrefetchCommand command;
	ScanPhase	phase;
	int64		position;		/* VACUUM: block being read; ANALYZE: blocks done */
	int64		total;			/* VACUUM: rel_pages; ANALYZE: sample blocks */
	TimestampTz proc_start;		/* tells a reused slot from the same backend */
	TimestampTz activity_start; /* its statement's start (autovacuum: the
								 * table's) */
} ScanObservation;

extern void backends_attach(void);
extern int	backends_discover(ScanObservation *out, int max,
							  bool *autovacuum_running,
							  int *foreground_running);
/* What re-reading a known scan's slot found. */
typedef enum ObserveResult
{
	OBSERVE_RUNNING,			/* still on the relation: *out is filled */
	OBSERVE_PHASE_DONE,			/* the command is past its scanning phase */
	OBSERVE_ENDED,				/* the same process, no command running */
	OBSERVE_GONE				/* the process has exited */
} ObserveResult;

extern int	backends_autovacuum_workers(ScanObservation *out, int max);
extern int	backends_background_workers(void);
extern int	backends_connected_databases(Oid *dbids, int max);
extern ObserveResult backends_observe(int slot, int pid, ScanObservation *out);
extern TimestampTz backends_statement_start(int slot, int pid);
extern bool backends_completed_since(Oid dbid, Oid relid,
									 PrefetchCommand command, TimestampTz since);
struct PGPROC;
extern struct PGPROC *backends_proc_of(int pid);
typedef enum BackendWait
{
	BACKEND_WAIT_OTHER,			/* running, or waiting on anything else */
	BACKEND_WAIT_DATA_READ,		/* a read of a relation data file */
	BACKEND_WAIT_COST_DELAY,	/* VACUUM's cost-based delay (VacuumDelay) */
	BACKEND_WAIT_LOCK,			/* a heavyweight lock */
	BACKEND_WAIT_IDLE			/* asleep (a timeout) or waiting on its client */
} BackendWait;
extern BackendWait backends_wait(struct PGPROC *proc, int pid);

#endif							/* BGWP_BACKENDS_H */
