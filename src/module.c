/*-------------------------------------------------------------------------
 *
 * module.c
 *	  Loading bgw_prefetch: GUCs, shared memory, static background workers.
 *
 * Everything bgw_prefetch does happens in shared memory and in its own
 * background workers, so it only works when loaded through
 * shared_preload_libraries.  Loaded any other way (LOAD, or CREATE EXTENSION
 * in a server started without it) the library warns once and does nothing;
 * the SQL functions that read its shared state then fail with a clear
 * error (bgwp_require_preload() in guc.c); the calibration functions need
 * none and work.
 *
 * Shared memory is requested in the PostgreSQL 15 shmem_request_hook (the
 * only place where RequestAddinShmemSpace and RequestNamedLWLockTranche are
 * allowed) and set up in shmem_startup_hook; each file owning a piece of
 * shared state contributes its size and its initialisation.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "tcop/utility.h"

#include "backend_reads.h"
#include "bgw_prefetch.h"
#include "buffer_loader.h"
#include "forecast.h"
#include "resolver.h"
#include "statement_options.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;

static void bgwp_shmem_request(void);
static void bgwp_shmem_startup(void);
static void bgwp_process_utility(PlannedStmt *pstmt, const char *queryString,
								 bool readOnlyTree, ProcessUtilityContext context,
								 ParamListInfo params, QueryEnvironment *queryEnv,
								 DestReceiver *dest, QueryCompletion *qc);
static void run_utility(PlannedStmt *pstmt, const char *queryString,
						bool readOnlyTree, ProcessUtilityContext context,
						ParamListInfo params, QueryEnvironment *queryEnv,
						DestReceiver *dest, QueryCompletion *qc);

/*
 * Module load callback.
 */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bgw_prefetch is not active: it must be loaded via shared_preload_libraries"),
				 errhint("Add bgw_prefetch to shared_preload_libraries in postgresql.conf and restart the server.")));
		return;
	}

	bgwp_define_gucs();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = bgwp_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = bgwp_shmem_startup;
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = bgwp_process_utility;

	monitor_register();
	clog_writer_register();
	backend_reads_register();
}

/*
 * Ask for all of the extension's shared memory and its LWLock tranche.
 */
static void
bgwp_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(add_size(add_size(add_size(stats_shmem_size(),
													  clog_writer_shmem_size()),
											 add_size(monitor_shmem_size(),
													  resolver_shmem_size())),
									add_size(add_size(loader_shmem_size(),
													  forecast_shmem_size()),
											 add_size(backend_reads_shmem_size(),
													  statement_options_shmem_size()))));
	RequestNamedLWLockTranche(BGWP_LWLOCK_TRANCHE, BGWP_NUM_LWLOCKS);
}

/*
 * Create or attach to the extension's shared structures.
 */
static void
bgwp_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	stats_shmem_startup();
	monitor_shmem_startup();
	resolver_shmem_startup();
	clog_writer_shmem_startup();
	loader_shmem_startup();
	forecast_shmem_startup();
	backend_reads_shmem_startup();
	statement_options_shmem_startup();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * A manual VACUUM or ANALYZE is starting: resolve the relations it names,
 * so that no resolver worker has to (resolver.c), and tell the monitor, so
 * that it looks for the scan at once instead of after up to
 * bgw_prefetch.naptime.  While it runs, the backend publishes each of its
 * transactions' reads (backend_reads.c).  (Autovacuum runs no utility
 * statement; the monitor finds it by polling, and an autovacuum worker
 * always publishes.)
 */
static void
bgwp_process_utility(PlannedStmt *pstmt, const char *queryString,
					 bool readOnlyTree, ProcessUtilityContext context,
					 ParamListInfo params, QueryEnvironment *queryEnv,
					 DestReceiver *dest, QueryCompletion *qc)
{
	if (!IsA(pstmt->utilityStmt, VacuumStmt))
	{
		run_utility(pstmt, queryString, readOnlyTree, context, params,
					queryEnv, dest, qc);
		return;
	}

	resolver_announce_statement((VacuumStmt *) pstmt->utilityStmt,
								context == PROCESS_UTILITY_TOPLEVEL);
	monitor_announce_scan();
	backend_reads_statement_start();
	/* an ANALYZE in a function can fail inside a subtransaction */
	PG_TRY();
	{
		run_utility(pstmt, queryString, readOnlyTree, context, params,
					queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		backend_reads_statement_end();
	}
	PG_END_TRY();
}

/* The next ProcessUtility hook, or the standard one. */
static void
run_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			ProcessUtilityContext context, ParamListInfo params,
			QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context,
								  params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}
