/*-------------------------------------------------------------------------
 *
 * resolver.c
 *	  Short-lived per-database workers that resolve a relation's files.
 *
 * Progress reporting tells the monitor (database, relation OID); reading a
 * relation's blocks needs its file identity (tablespace, relfilenode), and
 * planning a VACUUM needs whether it is aggressive.  That takes catalog
 * access in the relation's database, which the monitor -- connected to no
 * database, so that it never holds anything DROP DATABASE or CREATE
 * DATABASE ... TEMPLATE must wait for -- does not have.  For each new target
 * it therefore starts a dynamic background worker connected to that
 * database that looks the relation up in the syscaches (no lock on the
 * relation itself), writes the answer into a shared request slot, sets the
 * latch of the monitor that asked and exits, typically within tens of
 * milliseconds.
 *
 * If no worker slot is free (max_worker_processes), the scan is only
 * watched, with a rate-limited LOG line; the monitor never retries in a
 * loop.
 *
 * Where autovacuum works, a database has a resident resolver (forecast.c's
 * forecaster) that registers here (resolver_resident_attach()): requests
 * for its database are then marked for it and its latch is set instead of
 * starting a worker, and it answers them with the same code
 * (resolver_serve_resident()), typically within a millisecond.  When it
 * leaves, the requests it has not answered fail as if their worker had
 * exited.
 *
 * Resolving a relation is in resolve_relation.c; the relations a backend
 * resolves itself before it scans them, in announce.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/reloptions.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/namespace.h"
#include "catalog/pg_tablespace.h"
#include "commands/tablespace.h"
#include "commands/vacuum.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "postmaster/bgworker.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relmapper.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bgw_prefetch.h"
#include "calibrate.h"
#include "compat.h"
#include "resolver.h"
#include "resolver_internal.h"
#include "backends.h"
#include "statement_options.h"
ResolverShared *resolver_shared = NULL;

/* Monitor-local: handles of the workers started, per request. */
static BackgroundWorkerHandle *worker_handles[BGWP_MAX_TARGETS];
static TimestampTz last_no_slot_log = 0;

/* Log "no worker slot" at most this often. */
#define NO_SLOT_LOG_INTERVAL_MS 60000

Size
resolver_shmem_size(void)
{
	return MAXALIGN(sizeof(ResolverShared));
}

void
resolver_shmem_startup(void)
{
	bool		found;

	resolver_shared = ShmemInitStruct("bgw_prefetch resolver",
									  sizeof(ResolverShared), &found);
	if (!found)
	{
		memset(resolver_shared, 0, sizeof(ResolverShared));
		resolver_shared->lock =
			&(GetNamedLWLockTranche(BGWP_LWLOCK_TRANCHE))[BGWP_LWLOCK_RESOLVER].lock;
	}
}

/*
 * Start resolving a target.  Returns the request number to poll, or -1 if
 * no request slot or no background worker slot is available (the target
 * is then not prefetched).
 */
int
resolver_start(Oid dbid, Oid relid, PrefetchCommand command, bool autovacuum,
			   int backend_slot, int backend_pid)
{
	int			request = -1;
	uint32		generation;
	ResolveRequest *req;
	Latch	   *resident_latch = NULL;
	char		name[BGW_MAXLEN];

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		if (!resolver_shared->requests[i].in_use)
		{
			request = i;
			break;
		}
	}
	if (request < 0)
	{
		LWLockRelease(resolver_shared->lock);
		return -1;
	}
	if (++resolver_shared->last_generation == 0)
		resolver_shared->last_generation = 1;
	generation = resolver_shared->last_generation;
	req = &resolver_shared->requests[request];
	memset(req, 0, sizeof(*req));
	req->in_use = true;
	req->status = RESOLVE_PENDING;
	req->generation = generation;
	req->dbid = dbid;
	req->relid = relid;
	req->command = command;
	req->autovacuum = autovacuum;
	req->backend_slot = backend_slot;
	req->backend_pid = backend_pid;
	req->requester_latch = MyLatch;

	/*
	 * A resident resolver connected to the database answers within a
	 * millisecond or so; a new worker takes tens.  The resident gives back
	 * (fails) the requests it holds when it leaves, under this lock, so a
	 * request handed to it here is answered one way or the other.
	 */
	for (int i = 0; i < BGWP_MAX_RESIDENTS; i++)
	{
		ResidentResolver *r = &resolver_shared->residents[i];

		if (r->dbid == dbid && r->latch != NULL)
		{
			req->resident = true;
			resident_latch = r->latch;
			break;
		}
	}
	LWLockRelease(resolver_shared->lock);

	if (resident_latch != NULL)
	{
		SetLatch(resident_latch);
		return request;
	}

	snprintf(name, sizeof(name), "bgw_prefetch resolver for relation %u", relid);
	if (!bgwp_start_dynamic_worker("bgwp_resolver_main", "bgw_prefetch resolver",
								   name, request, generation, MyProcPid, false,
								   &worker_handles[request]))
	{
		TimestampTz now = GetCurrentTimestamp();

		resolver_release(request);
		if (TimestampDifferenceExceeds(last_no_slot_log, now,
									   NO_SLOT_LOG_INTERVAL_MS))
		{
			ereport(LOG,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("bgw_prefetch: no background worker slot free, not prefetching relation %u of database %u",
							relid, dbid),
					 errdetail("bgw_prefetch leaves the last slot of max_worker_processes to parallel query."),
					 errhint("Consider increasing max_worker_processes (currently %d).",
							 max_worker_processes)));
			last_no_slot_log = now;
		}
		return -1;
	}
	return request;
}

/*
 * Check on a request.  A worker that exited without answering (database
 * dropped, FATAL at connection) counts as failed.
 */
ResolveStatus
resolver_poll(int request, ResolvedRelation *out)
{
	ResolveRequest *req = &resolver_shared->requests[request];
	ResolveStatus status;
	pid_t		pid;

	LWLockAcquire(resolver_shared->lock, LW_SHARED);
	status = req->status;
	if (status == RESOLVE_DONE)
		*out = req->result;
	LWLockRelease(resolver_shared->lock);

	if (status == RESOLVE_PENDING && worker_handles[request] != NULL &&
		GetBackgroundWorkerPid(worker_handles[request], &pid) == BGWH_STOPPED)
	{
		/* it may have answered just before exiting */
		LWLockAcquire(resolver_shared->lock, LW_SHARED);
		status = req->status;
		if (status == RESOLVE_DONE)
			*out = req->result;
		LWLockRelease(resolver_shared->lock);
		if (status == RESOLVE_PENDING)
			status = RESOLVE_FAILED;
	}
	return status;
}

/*
 * Free every request slot: called by the monitor when it starts.  The
 * monitor is the only requester, so any slot in use then was left by a
 * predecessor that could not give it back; a worker still serving one
 * finds its generation gone.
 */
void
resolver_reclaim_requests(void)
{
	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		resolver_shared->requests[i].in_use = false;
		resolver_shared->requests[i].generation = 0;
	}
	LWLockRelease(resolver_shared->lock);
}

/* Give a request slot back (the worker, if still running, finds it gone). */
void
resolver_release(int request)
{
	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	resolver_shared->requests[request].in_use = false;
	resolver_shared->requests[request].generation = 0;
	LWLockRelease(resolver_shared->lock);
	if (worker_handles[request] != NULL)
	{
		pfree(worker_handles[request]);
		worker_handles[request] = NULL;
	}
}

/*
 * Resolve a request in a transaction of its own and answer it (unless the
 * monitor gave it up meanwhile), waking the monitor.  req is a copy of the
 * request slot.
 */
static void
answer_request(int request, const ResolveRequest *req)
{
	VacuumOptions opts;
	ResolvedRelation res;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, "resolving relation");
	vacuum_options_init(&opts);
	if (req->command == PREFETCH_CMD_VACUUM && !req->autovacuum)
		statement_options_of(req->backend_slot, req->backend_pid, &opts);
	resolve_relation(req, &opts, &res);
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	if (resolver_shared->requests[request].in_use &&
		resolver_shared->requests[request].generation == req->generation)
	{
		resolver_shared->requests[request].result = res;
		resolver_shared->requests[request].status = RESOLVE_DONE;
	}
	LWLockRelease(resolver_shared->lock);
	SetLatch(req->requester_latch);
}

/*
 * Entry point of a resolver worker.
 */
void
bgwp_resolver_main(Datum main_arg)
{
	int			request = DatumGetInt32(main_arg);
	uint32		generation;
	ResolveRequest req;

	memcpy(&generation, MyBgworkerEntry->bgw_extra, sizeof(generation));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	if (request < 0 || request >= BGWP_MAX_TARGETS)
		proc_exit(1);

	LWLockAcquire(resolver_shared->lock, LW_SHARED);
	req = resolver_shared->requests[request];
	LWLockRelease(resolver_shared->lock);
	if (!req.in_use || req.generation != generation)
		proc_exit(0);			/* the monitor gave up on this one */

	BackgroundWorkerInitializeConnectionByOid(req.dbid, InvalidOid,
											  BGWORKER_BYPASS_ALLOWCONN);
	backends_attach();

	answer_request(request, &req);
	proc_exit(0);
}

/* ---------------- resident resolvers (forecast.c) ---------------- */

/*
 * Register this process, connected to its database, as the database's
 * resident resolver: from now on resolver_start() leaves that database's
 * requests to it (resolver_serve_resident()).  Returns false if the
 * database has one already or all BGWP_MAX_RESIDENTS are taken.
 */
bool
resolver_resident_attach(void)
{
	int			free_slot = -1;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_RESIDENTS; i++)
	{
		ResidentResolver *r = &resolver_shared->residents[i];

		if (r->dbid == MyDatabaseId)
		{
			LWLockRelease(resolver_shared->lock);
			return false;
		}
		if (!OidIsValid(r->dbid) && free_slot < 0)
			free_slot = i;
	}
	if (free_slot >= 0)
	{
		resolver_shared->residents[free_slot].dbid = MyDatabaseId;
		resolver_shared->residents[free_slot].pid = MyProcPid;
		resolver_shared->residents[free_slot].latch = MyLatch;
	}
	LWLockRelease(resolver_shared->lock);
	return free_slot >= 0;
}

/*
 * Stop taking requests.  The requests left to this process and not yet
 * answered are marked failed (the monitor then treats them as a worker that
 * exited without answering); a caller able to run transactions answers them
 * first with resolver_serve_resident(), just before detaching.  Safe to call when
 * not attached, and from a before_shmem_exit callback.
 */
void
resolver_resident_detach(void)
{
	Latch	   *wake[BGWP_MAX_TARGETS];
	int			nwake = 0;

	if (resolver_shared == NULL)
		return;
	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_RESIDENTS; i++)
	{
		ResidentResolver *r = &resolver_shared->residents[i];

		if (r->pid == MyProcPid && OidIsValid(r->dbid))
		{
			r->dbid = InvalidOid;
			r->pid = 0;
			r->latch = NULL;
		}
	}
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		ResolveRequest *req = &resolver_shared->requests[i];

		if (req->in_use && req->resident && req->dbid == MyDatabaseId &&
			req->status == RESOLVE_PENDING)
		{
			req->status = RESOLVE_FAILED;
			wake[nwake++] = req->requester_latch;
		}
	}
	LWLockRelease(resolver_shared->lock);
	for (int i = 0; i < nwake; i++)
		SetLatch(wake[i]);
}

/*
 * Answer the pending requests left to this database's resident resolver,
 * each in a transaction of its own.  Returns how many were answered.
 */
int
resolver_serve_resident(void)
{
	int			served = 0;

	for (;;)
	{
		ResolveRequest req;
		int			request = -1;

		CHECK_FOR_INTERRUPTS();
		LWLockAcquire(resolver_shared->lock, LW_SHARED);
		for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		{
			ResolveRequest *r = &resolver_shared->requests[i];

			if (r->in_use && r->resident && r->dbid == MyDatabaseId &&
				r->status == RESOLVE_PENDING)
			{
				request = i;
				req = *r;
				break;
			}
		}
		LWLockRelease(resolver_shared->lock);
		if (request < 0)
			return served;
		/* a request given up meanwhile is left alone, and not found again */
		answer_request(request, &req);
		served++;
	}
}

/*
 * Resolve a relation autovacuum is expected to VACUUM, in the caller's
 * transaction, as a resolver worker would for an autovacuum worker's scan.
 */
void
resolver_resolve_autovacuum(Oid relid, ResolvedRelation *out)
{
	ResolveRequest req;
	VacuumOptions opts;

	memset(&req, 0, sizeof(req));
	vacuum_options_init(&opts);
	req.dbid = MyDatabaseId;
	req.relid = relid;
	req.command = PREFETCH_CMD_VACUUM;
	req.autovacuum = true;
	resolve_relation(&req, &opts, out);
}

