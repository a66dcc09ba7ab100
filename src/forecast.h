/*-------------------------------------------------------------------------
 *
 * forecast.h
 *	  Resident per-database resolvers that forecast autovacuum's tables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_FORECAST_H
#define BGWP_FORECAST_H

#include "bgw_prefetch.h"
#include "resolver.h"
#include "backends.h"

extern Size forecast_shmem_size(void);
extern void forecast_shmem_startup(void);

/*
 * Monitor side.  forecast_monitor_step() calls forecast_autovacuum_seen()
 * for each autovacuum worker the monitor found.  Both are cheap when nothing
 * changed, and never raise an ERROR for a worker that cannot be started.
 */
extern void forecast_monitor_step(const ScanObservation *workers,
								  int nworkers);
extern void forecast_autovacuum_seen(Oid dbid, int worker_pid);
extern void forecast_database_in_use(Oid dbid);

/*
 * Integration (prefetcher.c, not done here): for an autovacuum worker W in
 * database D,
 *
 *	- when W's first scan is not yet known: forecast_next(D, InvalidOid,
 *	  busy, ...), with busy[] the relations other workers in D are on, then
 *	  fill out->backend_slot/backend_pid/backend_start from W's observation
 *	  and start it as start_announced_target() starts an announced scan (it
 *	  waits for the scan and is adopted by it if the size matches);
 *	- when W's scan of relation X is served: forecast_next(D, X, busy, ...),
 *	  started the same way with scanned_after = X, so that it waits while W
 *	  is still on X (autovacuum may ANALYZE X right after its VACUUM);
 *	- for a scan that was not forecast: forecast_lookup() before
 *	  resolver_start() (which the forecaster answers anyway, in about a
 *	  millisecond).
 *
 * The relation autovacuum will most likely VACUUM next in dbid, after
 * after_relid (InvalidOid: its first), other than the busy[] ones (other
 * workers are on them): out is filled for start_announced_target(), with
 * scanned_after = after_relid; its backend fields (slot, pid, start) are
 * left -1/0/0 for the caller, who knows which worker it expects to scan it.
 */
extern bool forecast_next(Oid dbid, Oid after_relid, const Oid *busy,
						  int nbusy, AnnouncedScan *out);

/* The forecaster's resolution of a relation, if it has one */
extern bool forecast_lookup(Oid dbid, Oid relid, PrefetchCommand command,
							ResolvedRelation *out);

extern PGDLLEXPORT void bgwp_forecaster_main(Datum main_arg);

#endif							/* BGWP_FORECAST_H */
