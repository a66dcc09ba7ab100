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
 * A manual VACUUM or ANALYZE that names its tables needs no worker: the
 * backend running it resolves them itself, from the utility hook, just
 * before the command starts (resolver_announce_statement()), and leaves the
 * answers in shared "announcement" slots that the monitor takes when the
 * scan shows up.  That saves a worker start (tens of milliseconds, a large
 * part of a short VACUUM's prefetch window), and the backend knows what an
 * outside worker can only guess: the statement's options as parsed, and
 * its session's vacuum_freeze_table_age.  Database-wide commands, the
 * partitions and inheritance children a command expands to, and autovacuum
 * go through the workers.
 *
 * Whether a VACUUM is aggressive is computed as vacuum_set_xid_limits()
 * (vacuum_get_cutoffs() from PostgreSQL 16, the same rule up to 18) does
 * from relfrozenxid/relminmxid, the freeze table ages (the table's
 * autovacuum reloptions for autovacuum) and, for a manual VACUUM, the FREEZE
 * and DISABLE_PAGE_SKIPPING options.  A worker reads those by running the
 * server's own parser over the backend's query text; it cannot see a
 * session-level SET vacuum_freeze_table_age, so such a VACUUM of a table
 * the statement does not name is planned as non-aggressive (documented).
 *
 * If no worker slot is free (max_worker_processes), the target is skipped
 * with a rate-limited LOG line; the monitor never retries in a loop.
 *
 * Where autovacuum works, a database has a resident resolver (forecast.c's
 * forecaster) that registers here (resolver_resident_attach()): requests
 * for its database are then marked for it and its latch is set instead of
 * starting a worker, and it answers them with the same code
 * (resolver_serve_resident()), typically within a millisecond.  When it
 * leaves, the requests it has not answered fail as if their worker had
 * exited.
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
#include "targets.h"

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
	bool		wraparound;		/* known to be an anti-wraparound VACUUM */
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
} ResolverShared;

/* The options of a VACUUM that change what it reads */
typedef struct VacuumOptions
{
	bool		freeze;
	bool		disable_page_skipping;
	bool		analyze;		/* VACUUM (ANALYZE): each table analyzed too */
	bool		full;			/* VACUUM FULL: a rewrite, no lazy scan */
	bool		skip_toast;		/* PROCESS_TOAST false */
	bool		skip_main;		/* PROCESS_MAIN false (16+): the TOAST
								 * table only */
	bool		skip_locked;	/* SKIP_LOCKED: a relation whose lock is
								 * taken is passed by */
} VacuumOptions;

static ResolverShared *resolver_shared = NULL;

/* Monitor-local: handles of the workers started, per request. */
static BackgroundWorkerHandle *worker_handles[BGWP_MAX_TARGETS];
static uint32 next_generation = 1;
static TimestampTz last_no_slot_log = 0;

/* Log "no worker slot" at most this often. */
#define NO_SLOT_LOG_INTERVAL_MS 60000

/*
 * At most this many relations of one statement are resolved in advance
 * (a relation and its TOAST table count as two): the lookups run in the
 * user's backend, before the command, so they must stay few.
 */
#define MAX_ANNOUNCED_PER_STATEMENT 16

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

const char *
depth_source_name(DepthSource source)
{
	switch (source)
	{
		case DEPTH_FROM_GUC_MAP:
			return "bgw_prefetch.tablespace_io_depth";
		case DEPTH_FROM_CALIBRATION:
			return "calibration";
		case DEPTH_FROM_TABLESPACE_OPTION:
			return "tablespace option";
		case DEPTH_FROM_STREAM_MINIMUM:
			return "sequential stream minimum";
		case DEPTH_FROM_SERVER_DEFAULT:
			break;
	}
	return "maintenance_io_concurrency";
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
	uint32		generation = next_generation++;
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
								   name, request, generation, MyProcPid,
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

/* ---------------- resolving a relation ---------------- */

/*
 * The options that matter to us from a VACUUM's option list (DefElems, as
 * the grammar leaves them).
 */
static void
vacuum_options_from_list(List *options, VacuumOptions *opts)
{
	ListCell   *lc;

	memset(opts, 0, sizeof(*opts));
	foreach(lc, options)
	{
		DefElem    *opt = lfirst_node(DefElem, lc);

		if (strcmp(opt->defname, "freeze") == 0)
			opts->freeze = defGetBoolean(opt);
		else if (strcmp(opt->defname, "disable_page_skipping") == 0)
			opts->disable_page_skipping = defGetBoolean(opt);
		else if (strcmp(opt->defname, "analyze") == 0)
			opts->analyze = defGetBoolean(opt);
		else if (strcmp(opt->defname, "full") == 0)
			opts->full = defGetBoolean(opt);
		else if (strcmp(opt->defname, "process_toast") == 0)
			opts->skip_toast = !defGetBoolean(opt);
		else if (strcmp(opt->defname, "process_main") == 0)
			opts->skip_main = !defGetBoolean(opt);
		else if (strcmp(opt->defname, "skip_locked") == 0)
			opts->skip_locked = defGetBoolean(opt);
		/* the others do not change which blocks are read, or in what order */
	}
}

/*
 * Read a manual VACUUM's options from its query text with the server's
 * parser, inside a subtransaction so that text that does not parse
 * (truncated by track_activity_query_size, say) just means "no options
 * known".
 */
static void
parse_vacuum_options(const char *query, VacuumOptions *opts)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;

	memset(opts, 0, sizeof(*opts));
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);
	PG_TRY();
	{
		List	   *stmts = raw_parser(query, RAW_PARSE_DEFAULT);
		RawStmt    *raw;

		if (list_length(stmts) == 1 &&
			IsA((raw = linitial_node(RawStmt, stmts))->stmt, VacuumStmt) &&
			((VacuumStmt *) raw->stmt)->is_vacuumcmd)
			vacuum_options_from_list(((VacuumStmt *) raw->stmt)->options, opts);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcontext);
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		memset(opts, 0, sizeof(*opts));
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcontext);
	CurrentResourceOwner = oldowner;
}

/*
 * Would vacuum_set_xid_limits() (vacuum_get_cutoffs() from 16) call this
 * VACUUM aggressive?  Mirrors
 * vacuum.c and, for autovacuum, table_recheck_autovac()'s choice of ages.
 */
static bool
vacuum_is_aggressive(Form_pg_class classForm, HeapTuple classTup,
					 bool autovacuum, bool freeze_option)
{
	int			freeze_table_age = -1;
	int			multixact_freeze_table_age = -1;
	int			freezetable;
	TransactionId limit;
	MultiXactId mxact_limit;

	if (freeze_option)
		return true;
	if (autovacuum)
	{
		HeapTuple	dbtup = SearchSysCache1(DATABASEOID,
											ObjectIdGetDatum(MyDatabaseId));
		bool		isnull;
		Datum		reloptions = SysCacheGetAttr(RELOID, classTup,
												 Anum_pg_class_reloptions,
												 &isnull);
		bytea	   *relopts = isnull ? NULL :
			heap_reloptions(classForm->relkind, reloptions, false);

		if (HeapTupleIsValid(dbtup))
		{
			Form_pg_database dbform = (Form_pg_database) GETSTRUCT(dbtup);

			if (dbform->datistemplate || !dbform->datallowconn)
				freeze_table_age = multixact_freeze_table_age = 0;
			ReleaseSysCache(dbtup);
		}
		if (relopts != NULL && freeze_table_age != 0)
		{
			AutoVacOpts *av = &((StdRdOptions *) relopts)->autovacuum;

			freeze_table_age = av->freeze_table_age;
			multixact_freeze_table_age = av->multixact_freeze_table_age;
		}
	}

	freezetable = freeze_table_age >= 0 ? freeze_table_age : vacuum_freeze_table_age;
	freezetable = Min(freezetable, autovacuum_freeze_max_age * 0.95);
	limit = ReadNextTransactionId() - freezetable;
	if (!TransactionIdIsNormal(limit))
		limit = FirstNormalTransactionId;
	if (TransactionIdPrecedesOrEquals(classForm->relfrozenxid, limit))
		return true;

	freezetable = multixact_freeze_table_age >= 0 ?
		multixact_freeze_table_age : vacuum_multixact_freeze_table_age;
	freezetable = Min(freezetable, MultiXactMemberFreezeThreshold() * 0.95);
	mxact_limit = ReadNextMultiXactId() - freezetable;
	if (mxact_limit < FirstMultiXactId)
		mxact_limit = FirstMultiXactId;
	return MultiXactIdPrecedesOrEquals(classForm->relminmxid, mxact_limit);
}

/*
 * The depth for a tablespace and where it comes from: the GUC map, then a
 * recorded calibration, then the tablespace's maintenance_io_concurrency
 * option, then the server's.  A calibration's read costs are passed on for
 * the ANALYZE cost model whatever decides the depth.
 */
static void
resolve_depth(Oid spcid, ResolvedRelation *res)
{
	char	   *spcname = get_tablespace_name(spcid);
	int			depth = spcname ? bgwp_tablespace_depth_lookup(spcname) : -1;
	int			calibrated_depth;
	HeapTuple	spctup;

	res->calibrated = calibration_lookup(spcid, &calibrated_depth,
										 &res->seq_us_per_block,
										 &res->random_us_per_block);
	if (depth > 0)
	{
		res->io_depth = depth;
		res->depth_source = DEPTH_FROM_GUC_MAP;
		return;
	}
	if (res->calibrated)
	{
		res->io_depth = calibrated_depth;
		res->depth_source = DEPTH_FROM_CALIBRATION;
		return;
	}
	res->io_depth = maintenance_io_concurrency;
	res->depth_source = DEPTH_FROM_SERVER_DEFAULT;

	spctup = SearchSysCache1(TABLESPACEOID, ObjectIdGetDatum(spcid));
	if (HeapTupleIsValid(spctup))
	{
		bool		isnull;
		Datum		options = SysCacheGetAttr(TABLESPACEOID, spctup,
											  Anum_pg_tablespace_spcoptions,
											  &isnull);

		if (!isnull)
		{
			TableSpaceOpts *opts = (TableSpaceOpts *) tablespace_reloptions(options, false);

			if (opts->maintenance_io_concurrency >= 0)
			{
				res->io_depth = opts->maintenance_io_concurrency;
				res->depth_source = DEPTH_FROM_TABLESPACE_OPTION;
			}
		}
		ReleaseSysCache(spctup);
	}
	/* a depth of 0 disables core prefetching; we still need one read */
	res->io_depth = Max(res->io_depth, 1);
}

/*
 * Fill res for req; sets skip_reason for relations we deliberately leave
 * alone.
 */
static void
resolve_relation(const ResolveRequest *req, const VacuumOptions *opts,
				 ResolvedRelation *res)
{
	HeapTuple	tup;
	Form_pg_class classForm;
	char	   *nspname;

	memset(res, 0, sizeof(*res));
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(req->relid));
	if (!HeapTupleIsValid(tup))
	{
		strlcpy(res->skip_reason, "relation no longer exists", sizeof(res->skip_reason));
		return;
	}
	classForm = (Form_pg_class) GETSTRUCT(tup);
	nspname = get_namespace_name(classForm->relnamespace);
	snprintf(res->relname, sizeof(res->relname), "%s.%s",
			 nspname ? nspname : "?", NameStr(classForm->relname));

	if (classForm->relpersistence == RELPERSISTENCE_TEMP)
		strlcpy(res->skip_reason, "temporary table", sizeof(res->skip_reason));
	else if ((classForm->relkind != RELKIND_RELATION &&
			  classForm->relkind != RELKIND_MATVIEW &&
			  classForm->relkind != RELKIND_TOASTVALUE) ||
			 classForm->relam != HEAP_TABLE_AM_OID)
		strlcpy(res->skip_reason, "not a heap table", sizeof(res->skip_reason));
	else
	{
		res->relfilenode = OidIsValid(classForm->relfilenode) ?
			classForm->relfilenode :
			BGWP_RELATION_MAP_OID_TO_FILE(req->relid, classForm->relisshared);
		res->spcnode = classForm->relisshared ? GLOBALTABLESPACE_OID :
			OidIsValid(classForm->reltablespace) ? classForm->reltablespace :
			MyDatabaseTableSpace;
		res->dbnode = classForm->relisshared ? InvalidOid : MyDatabaseId;
		resolve_depth(res->spcnode, res);

		if (req->command == PREFETCH_CMD_VACUUM)
		{
			bool		wraparound = req->wraparound;

			if (req->autovacuum && req->backend_pid != 0 && !wraparound)
			{
				char		query[1024];

				if (targets_read_activity(req->backend_slot, req->backend_pid,
										  query, sizeof(query)))
					wraparound = strstr(query, "(to prevent wraparound)") != NULL;
			}
			if (opts->disable_page_skipping)
				res->skip_mode = VACUUM_SKIP_DISABLED;
			else if (wraparound ||
					 vacuum_is_aggressive(classForm, tup, req->autovacuum,
										  opts->freeze))
				res->skip_mode = VACUUM_SKIP_AGGRESSIVE;
			else
				res->skip_mode = VACUUM_SKIP_NORMAL;
		}
	}
	ReleaseSysCache(tup);
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
	memset(&opts, 0, sizeof(opts));
	if (req->command == PREFETCH_CMD_VACUUM && !req->autovacuum)
	{
		char		query[1024];

		if (targets_read_activity(req->backend_slot, req->backend_pid,
								  query, sizeof(query)))
			parse_vacuum_options(query, &opts);
	}
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
	targets_attach();

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
 * transaction, as a resolver worker would for an autovacuum worker's scan:
 * wraparound tells that autovacuum will force it (then it is aggressive).
 */
void
resolver_resolve_autovacuum(Oid relid, bool wraparound, ResolvedRelation *out)
{
	ResolveRequest req;
	VacuumOptions opts;

	memset(&req, 0, sizeof(req));
	memset(&opts, 0, sizeof(opts));
	req.dbid = MyDatabaseId;
	req.relid = relid;
	req.command = PREFETCH_CMD_VACUUM;
	req.autovacuum = true;
	req.wraparound = wraparound;
	resolve_relation(&req, &opts, out);
}

/* ---------------- relations announced by the backend about to scan them ---------------- */

/*
 * Resolve one relation in this backend and leave the answer for the
 * monitor, in a free slot or else in the oldest one.  Relations that will
 * not be prefetched (temporary, not heap, gone) are left to the monitor's
 * usual path: their slots would never be taken.
 */
static void
announce_relation(Oid relid, PrefetchCommand command, const VacuumOptions *opts,
				  bool scanned_first, Oid scanned_after)
{
	ResolveRequest req;
	ResolvedRelation res;
	AnnouncedRelation *slot = NULL;

	memset(&req, 0, sizeof(req));
	req.dbid = MyDatabaseId;
	req.relid = relid;
	req.command = command;
	req.backend_pid = MyProcPid;
	resolve_relation(&req, opts, &res);
	if (res.skip_reason[0] != '\0')
		return;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		AnnouncedRelation *a = &resolver_shared->announced[i];

		if (!a->in_use)
		{
			slot = a;
			break;
		}
		if (slot == NULL || a->announced_at < slot->announced_at)
			slot = a;
	}
	slot->in_use = true;
	slot->scanned_first = scanned_first;
	slot->scanned_after = scanned_after;
	slot->backend_slot = BGWP_MY_BACKEND_STATUS_SLOT();
	slot->backend_pid = MyProcPid;
	slot->backend_start = MyStartTimestamp;
	slot->dbid = MyDatabaseId;
	slot->relid = relid;
	slot->command = command;
	slot->announced_at = GetCurrentTimestamp();
	slot->result = res;
	LWLockRelease(resolver_shared->lock);
}

static Oid
toast_relid_of(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			toastrelid = InvalidOid;

	if (HeapTupleIsValid(tup))
	{
		toastrelid = ((Form_pg_class) GETSTRUCT(tup))->reltoastrelid;
		ReleaseSysCache(tup);
	}
	return toastrelid;
}

/*
 * Resolve and announce the relations a statement names, at most
 * MAX_ANNOUNCED_PER_STATEMENT.  A VACUUM scans them in this order, each
 * relation followed by its TOAST table (vacuum_rel() processes the TOAST
 * table right after its relation): each VACUUM announcement records the
 * relation scanned just before it, so that the monitor can start it, from
 * block 0, while that one is still being processed (a TOAST table that
 * skips most of its blocks is scanned in milliseconds, too fast to be
 * joined at its start once it shows in progress reporting).
 */
static void
announce_statement_relations(const VacuumStmt *stmt, bool do_vacuum,
							 bool do_analyze, const VacuumOptions *opts)
{
	int			announced = 0;
	Oid			previous = InvalidOid;	/* the VACUUM's previous relation */
	ListCell   *lc;

	foreach(lc, stmt->rels)
	{
		VacuumRelation *vrel = lfirst_node(VacuumRelation, lc);
		Oid			relid = vrel->oid;

		if (!OidIsValid(relid) && vrel->relation != NULL)
			relid = RangeVarGetRelidExtended(vrel->relation, NoLock,
											 RVR_MISSING_OK, NULL, NULL);
		if (!OidIsValid(relid))
			continue;			/* the command will say what is wrong */
		if (do_vacuum)
		{
			Oid			toastrelid = toast_relid_of(relid);

			/*
			 * The command scans the relations in this order, the first at
			 * once -- unless SKIP_LOCKED may pass it by: then each is read
			 * only once its scan shows.
			 */
			if (!opts->skip_main)
			{
				if (announced >= MAX_ANNOUNCED_PER_STATEMENT)
					return;
				announce_relation(relid, PREFETCH_CMD_VACUUM, opts,
								  announced == 0 && !opts->skip_locked, previous);
				announced++;
				previous = relid;
			}
			if (OidIsValid(toastrelid) && !opts->skip_toast)
			{
				if (announced >= MAX_ANNOUNCED_PER_STATEMENT)
					return;
				announce_relation(toastrelid, PREFETCH_CMD_VACUUM, opts,
								  announced == 0 && !opts->skip_locked,
								  opts->skip_main ? previous : relid);
				announced++;
				previous = toastrelid;
			}
		}
		if (do_analyze)
		{
			if (announced++ >= MAX_ANNOUNCED_PER_STATEMENT)
				return;
			announce_relation(relid, PREFETCH_CMD_ANALYZE, opts, false,
							  InvalidOid);
		}
	}
}

/*
 * Called from the utility hook of the backend about to run a VACUUM or
 * ANALYZE (toplevel: not from a function): resolve the relations it names
 * (and, for VACUUM, their TOAST tables), so that the monitor can start
 * prefetching without a resolver worker.
 *
 * Nothing here may make the command fail or wait where it would not have.
 * The lookups run in a subtransaction: an error there only means "not
 * announced", except a query cancel (or statement or lock timeout), which
 * is re-thrown, as the command would have raised it a moment later.  The
 * only catalog the command itself does not read, pg_tablespace, is locked
 * conditionally; the others (pg_class, pg_namespace) it waits for anyway,
 * and such a wait here can be cancelled.  No lock is taken on the relations:
 * they are looked up by name as they are now, as the command is about to.
 * Statements that are bound to fail (VACUUM in a transaction block or a
 * function, either command during recovery or in parallel mode) are not
 * looked at.
 */
void
resolver_announce_statement(const VacuumStmt *stmt, bool toplevel)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	VacuumOptions opts;
	bool		runnable;
	bool		do_vacuum;
	bool		do_analyze;

	if (resolver_shared == NULL)
		return;

	/* what this backend announced before is no longer wanted */
	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (resolver_shared->announced[i].backend_pid == MyProcPid)
			resolver_shared->announced[i].in_use = false;
	LWLockRelease(resolver_shared->lock);

	/*
	 * Announced whether or not it is to be prefetched for: a scan that is
	 * only watched is still measured from its first block.
	 */
	if (!bgwp_enabled ||
		stmt->rels == NIL || !IsTransactionState() ||
		IsInParallelMode() || RecoveryInProgress())
		return;

	/*
	 * VACUUM runs only at top level, outside a transaction block.  Asked
	 * before the subtransaction begins: inside it, every statement is in a
	 * transaction block.
	 */
	runnable = !stmt->is_vacuumcmd || (toplevel && !IsTransactionBlock());
	if (!runnable)
		return;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);
	PG_TRY();
	{
		vacuum_options_from_list(stmt->options, &opts);
		do_vacuum = stmt->is_vacuumcmd && !opts.full;
		do_analyze = !stmt->is_vacuumcmd || opts.analyze;

		if ((do_vacuum || do_analyze) &&
			ConditionalLockRelationOid(TableSpaceRelationId, AccessShareLock))
		{
			announce_statement_relations(stmt, do_vacuum, do_analyze, &opts);
			UnlockRelationOid(TableSpaceRelationId, AccessShareLock);
		}
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(edata);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcontext);
	CurrentResourceOwner = oldowner;
}

/*
 * The monitor found a scan: did its backend resolve the relation already?
 * If so the answer is handed over (and its slot freed).
 */
bool
resolver_take_announced(Oid dbid, Oid relid, PrefetchCommand command,
						int backend_pid, TimestampTz backend_start,
						ResolvedRelation *out)
{
	bool		found = false;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		AnnouncedRelation *a = &resolver_shared->announced[i];

		if (a->in_use && a->backend_pid == backend_pid &&
			a->backend_start == backend_start && a->dbid == dbid &&
			a->relid == relid && a->command == command)
		{
			*out = a->result;
			a->in_use = false;
			found = true;
			break;
		}
	}
	LWLockRelease(resolver_shared->lock);
	return found;
}

/* Hand over one announcement; the caller holds the lock exclusively. */
static void
hand_over(AnnouncedRelation *a, AnnouncedScan *out)
{
	out->backend_slot = a->backend_slot;
	out->backend_pid = a->backend_pid;
	out->backend_start = a->backend_start;
	out->dbid = a->dbid;
	out->relid = a->relid;
	out->scanned_after = a->scanned_after;
	out->rel = a->result;
	a->in_use = false;
}

/*
 * Hand over (and free) the announcements of relations a VACUUM is about to
 * scan first, so that the monitor can start prefetching them before the
 * scan shows up in progress reporting: a VACUUM that skips most of its
 * table runs through it at thousands of blocks per millisecond, and the few
 * milliseconds until the monitor would see it are a large part of its
 * reads.  (An ANALYZE is not started so: measured, a whole-relation sample
 * started at block 0 was no faster, see doc/benchmarks.md.)  Returns how
 * many were written to out (at most max).
 */
int
resolver_take_first_scans(AnnouncedScan *out, int max)
{
	int			n = 0;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS && n < max; i++)
	{
		AnnouncedRelation *a = &resolver_shared->announced[i];

		if (a->in_use && a->scanned_first)
			hand_over(a, &out[n++]);
	}
	LWLockRelease(resolver_shared->lock);
	return n;
}

/*
 * Hand over (and free) the announcement of the relation the VACUUM of
 * backend (pid, start) scans right after relid, if there is one: the
 * monitor starts it as soon as relid is served, so that it is planned from
 * block 0 before the VACUUM reaches it (see announce_statement_relations()).
 */
bool
resolver_take_next_scan(int backend_pid, TimestampTz backend_start, Oid dbid,
						Oid relid, AnnouncedScan *out)
{
	bool		found = false;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS && !found; i++)
	{
		AnnouncedRelation *a = &resolver_shared->announced[i];

		if (a->in_use && a->command == PREFETCH_CMD_VACUUM &&
			a->backend_pid == backend_pid && a->backend_start == backend_start &&
			a->dbid == dbid && a->scanned_after == relid)
		{
			hand_over(a, out);
			found = true;
		}
	}
	LWLockRelease(resolver_shared->lock);
	return found;
}
