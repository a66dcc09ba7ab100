/*-------------------------------------------------------------------------
 *
 * dynamic_worker.c
 *	  Starting the library's short-lived per-database workers.
 *
 * Resolvers (resolver.c) and buffer loaders (buffer_loader.c) are dynamic
 * background workers of this library with the same life: connected to one
 * database, never restarted, told by (arg, generation) which request they
 * serve.  Their registration lives here, below both, so that neither calls
 * up into module.c (the layering of doc/architecture.md).
 *
 * They take slots of max_worker_processes, which parallel query draws its
 * workers from too.  So that a prefetch never costs a query its parallel
 * workers, a worker is started only while more slots are free than one
 * Gather of the server's settings asks for (max_parallel_workers_per_gather,
 * at least one); otherwise the caller goes without (the scan is watched,
 * not prefetched, and the view says why).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "optimizer/cost.h"
#include "postmaster/bgworker.h"
#include "utils/memutils.h"

#include "bgw_prefetch.h"
#include "targets.h"

/*
 * The slots of max_worker_processes this library leaves free for parallel
 * query.
 */
int
bgwp_reserved_worker_slots(void)
{
	return Max(1, max_parallel_workers_per_gather);
}

/*
 * Start a short-lived worker of this library, connected to a database
 * (a resolver, a buffer loader): never restarted; arg and generation tell
 * it which request it serves and whether that is still the current one.
 * The handle lives in TopMemoryContext (the caller frees it).  Returns false
 * if no background worker slot is free beyond those left to parallel query.
 * Only the monitor starts them (it has attached the backend status array).
 */
bool
bgwp_start_dynamic_worker(const char *function, const char *type,
						  const char *name, int32 arg, uint32 generation,
						  int notify_pid, BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;
	MemoryContext oldcontext;
	bool		registered;

	if (max_worker_processes - targets_background_workers() <=
		bgwp_reserved_worker_slots())
		return false;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strcpy(worker.bgw_library_name, "bgw_prefetch");
	strlcpy(worker.bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, type, BGW_MAXLEN);
	worker.bgw_main_arg = Int32GetDatum(arg);
	memcpy(worker.bgw_extra, &generation, sizeof(generation));
	worker.bgw_notify_pid = notify_pid;

	oldcontext = MemoryContextSwitchTo(TopMemoryContext);
	registered = RegisterDynamicBackgroundWorker(&worker, handle);
	MemoryContextSwitchTo(oldcontext);
	return registered;
}
