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
 * workers from too.  So that a prefetch does not cost a query its parallel
 * workers, the workers that stay for a whole scan or longer (loaders,
 * forecasters) are started only while more slots are free than one Gather
 * of the server's settings asks for (max_parallel_workers_per_gather, at
 * least one), and a resolver, which exits within milliseconds, never takes
 * the last free slot.  Otherwise the caller goes without (the scan is
 * watched, not prefetched, and the view says why).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "optimizer/cost.h"
#include "postmaster/bgworker.h"
#include "utils/memutils.h"

#include "bgw_prefetch.h"
#include "backends.h"

/*
 * The slots of max_worker_processes this library leaves free for parallel
 * query when it starts a worker that lingers (a loader, a forecaster), or
 * one that does not (a resolver).
 */
int
bgwp_reserved_worker_slots(bool lingers)
{
	return lingers ? Max(1, max_parallel_workers_per_gather) : 1;
}

/*
 * Start a worker of this library connected to a database (a resolver, a
 * buffer loader, a forecaster): never restarted; arg and generation tell it
 * which request it serves and whether that is still the current one; lingers
 * says whether it stays longer than a lookup (see the header).  The handle
 * lives in TopMemoryContext (the caller frees it).  Returns false if no
 * background worker slot is free beyond those left to parallel query.  Only
 * the monitor starts them (it has attached the backend status array).
 */
bool
bgwp_start_dynamic_worker(const char *function, const char *type,
						  const char *name, int32 arg, uint32 generation,
						  int notify_pid, bool lingers,
						  BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;
	MemoryContext oldcontext;
	bool		registered;

	if (max_worker_processes - backends_background_workers() <=
		bgwp_reserved_worker_slots(lingers))
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
