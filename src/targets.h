/*-------------------------------------------------------------------------
 *
 * targets.h
 *	  Finding running VACUUM / ANALYZE scans through progress reporting.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_TARGETS_H
#define BGWP_TARGETS_H

#include "bgw_prefetch.h"

/* Where a watched command is, as far as prefetching is concerned. */
typedef enum ScanPhase
{
	SCAN_PHASE_SCANNING,		/* VACUUM scanning heap / ANALYZE sampling */
	SCAN_PHASE_PAUSED,			/* VACUUM index/heap vacuuming mid-scan */
	SCAN_PHASE_OTHER			/* anything else: the scan is over */
} ScanPhase;

/* One backend's progress, copied consistently out of shared memory. */
typedef struct TargetObservation
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
} TargetObservation;

extern void targets_attach(void);
extern int	targets_discover(TargetObservation *out, int max,
							 bool *autovacuum_running);
/* What re-reading a known target's slot found. */
typedef enum ObserveResult
{
	OBSERVE_WATCHED,			/* still a watched command: *out is filled */
	OBSERVE_PHASE_DONE,			/* the command is past its scanning phase */
	OBSERVE_ENDED,				/* the same process, no command running */
	OBSERVE_GONE				/* the process has exited */
} ObserveResult;

extern int	targets_autovacuum_workers(TargetObservation *out, int max);
extern int	targets_background_workers(void);
extern int	targets_connected_databases(Oid *dbids, int max);
extern ObserveResult targets_observe(int slot, int pid, TargetObservation *out);
extern TimestampTz targets_statement_start(int slot, int pid);
extern bool targets_read_activity(int slot, int pid, char *buf, int buflen);
extern bool targets_completed_since(Oid dbid, Oid relid,
									PrefetchCommand command, TimestampTz since);
struct PGPROC;
extern struct PGPROC *targets_proc_of(int pid);
typedef enum TargetWait
{
	TARGET_WAIT_OTHER,			/* running, or waiting on anything else */
	TARGET_WAIT_DATA_READ,		/* a read of a relation data file */
	TARGET_WAIT_COST_DELAY		/* VACUUM's cost-based delay (VacuumDelay) */
} TargetWait;
extern TargetWait targets_wait(struct PGPROC *proc, int pid);

#endif							/* BGWP_TARGETS_H */
