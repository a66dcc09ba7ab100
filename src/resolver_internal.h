/*-------------------------------------------------------------------------
 *
 * resolver_internal.h
 *	  What the resolver's files share: the worker protocol (resolver.c),
 *	  resolving a relation in its database (resolve_relation.c) and the
 *	  relations a backend announces before it scans them (announce.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_RESOLVER_INTERNAL_H
#define BGWP_RESOLVER_INTERNAL_H

#include "nodes/pg_list.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

#include "bgw_prefetch.h"
#include "resolver.h"

/* One request: filled by the monitor, answered by a resolver worker. */
typedef struct ResolveRequest
{
	bool		in_use;
	ResolveStatus status;
	uint32		generation;		/* tells a stale worker from the current one */
	Oid			dbid;
	Oid			relid;
	PrefetchCommand command;
	bool		autovacuum;
	int			backend_slot;
	int			backend_pid;
	bool		resident;		/* served by the database's resident
								 * resolver, not by a worker of its own */
	Latch	   *requester_latch;	/* the monitor's, set when answered */
	ResolvedRelation result;
} ResolveRequest;

/*
 * A resident resolver (forecast.c's forecaster) registered for its
 * database: requests for that database are left to it instead of a new
 * worker.
 */
typedef struct ResidentResolver
{
	Oid			dbid;			/* InvalidOid: free */
	int			pid;
	Latch	   *latch;
} ResidentResolver;

/*
 * One relation resolved in advance by the backend about to scan it; taken
 * (freed) by the monitor when the scan appears.  Slots not taken (the scan
 * never came, or was not served) are recycled oldest first.
 */
typedef struct AnnouncedRelation
{
	bool		in_use;
	bool		scanned_first;	/* a VACUUM's first scan: start it early */
	Oid			scanned_after;	/* the VACUUM scans it right after this one */
	int			backend_slot;	/* in the backend status array */
	int			backend_pid;
	TimestampTz backend_start;	/* with the pid, tells a reused pid apart */
	Oid			dbid;
	Oid			relid;
	PrefetchCommand command;
	TimestampTz announced_at;
	ResolvedRelation result;
} AnnouncedRelation;

typedef struct ResolverShared
{
	LWLock	   *lock;
	ResolveRequest requests[BGWP_MAX_TARGETS];
	AnnouncedRelation announced[BGWP_MAX_TARGETS];
	ResidentResolver residents[BGWP_MAX_RESIDENTS];
	uint32		last_generation;	/* of the last request started; in
									 * shared memory, so that a restarted
									 * monitor never reuses one a worker of
									 * its predecessor may still carry */
} ResolverShared;

/* The options of a VACUUM that change what it reads */
typedef struct VacuumOptions
{
	bool		freeze;
	bool		disable_page_skipping;
	bool		analyze;		/* VACUUM (ANALYZE): each table analyzed too */
	bool		full;			/* VACUUM FULL: a rewrite, no lazy scan */
	bool		process_toast;	/* PROCESS_TOAST (default true) */
	bool		process_main;	/* PROCESS_MAIN (16+, default true); false:
								 * the TOAST table only */
	bool		skip_locked;	/* SKIP_LOCKED: a relation whose lock is
								 * taken is passed by */
	int			freeze_table_age;	/* the session's vacuum_freeze_table_age,
									 * -1: this process's */
	int			multixact_freeze_table_age; /* ... and
											 * vacuum_multixact_freeze_table_age */
} VacuumOptions;

/* In shared memory; its lock protects everything in it */
extern ResolverShared *resolver_shared;

/* resolve_relation.c */
extern void vacuum_options_init(VacuumOptions *opts);
extern void vacuum_options_from_list(List *options, VacuumOptions *opts);
extern void resolve_relation(const ResolveRequest *req,
							 const VacuumOptions *opts, ResolvedRelation *res);

#endif							/* BGWP_RESOLVER_INTERNAL_H */
