/*-------------------------------------------------------------------------
 *
 * resolver.h
 *	  Short-lived per-database workers that resolve a relation's files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_RESOLVER_H
#define BGWP_RESOLVER_H

#include "bgw_prefetch.h"
#include "vacuum_plan.h"

typedef enum DepthSource
{
	DEPTH_FROM_GUC_MAP,			/* bgw_prefetch.tablespace_io_depth */
	DEPTH_FROM_CALIBRATION,		/* bgw_prefetch_calibrate_apply() */
	DEPTH_FROM_TABLESPACE_OPTION,	/* ALTER TABLESPACE SET (maintenance_io_concurrency) */
	DEPTH_FROM_SERVER_DEFAULT,	/* maintenance_io_concurrency */
	DEPTH_FROM_STREAM_MINIMUM	/* raised for a sequential stream (prefetcher.c) */
} DepthSource;

extern const char *depth_source_name(DepthSource source);

/* What the monitor needs to know about a target relation. */
typedef struct ResolvedRelation
{
	Oid			dbnode;			/* InvalidOid for shared catalogs */
	Oid			spcnode;
	Oid			relfilenode;
	VacuumSkipMode skip_mode;	/* VACUUM only */
	int			io_depth;
	DepthSource depth_source;
	bool		calibrated;		/* costs below come from a calibration */
	double		seq_us_per_block;
	double		random_us_per_block;
	char		relname[2 * NAMEDATALEN + 2];	/* schema.relation, for logs */
	char		watched_reason[96];	/* non-empty: do not prefetch, and why */
} ResolvedRelation;

typedef enum ResolveStatus
{
	RESOLVE_PENDING,
	RESOLVE_DONE,
	RESOLVE_FAILED
} ResolveStatus;

extern Size resolver_shmem_size(void);
extern void resolver_shmem_startup(void);

extern int	resolver_start(Oid dbid, Oid relid, PrefetchCommand command,
						   bool autovacuum, int backend_slot, int backend_pid);
extern ResolveStatus resolver_poll(int request, ResolvedRelation *out);
extern void resolver_release(int request);
extern void resolver_reclaim_requests(void);

/* Relations resolved in advance by the backend about to scan them */
struct VacuumStmt;
extern void resolver_announce_statement(const struct VacuumStmt *stmt,
										bool toplevel);
extern bool resolver_take_announced(Oid dbid, Oid relid, PrefetchCommand command,
									int backend_pid, TimestampTz backend_start,
									ResolvedRelation *out);

/* A relation a VACUUM announced it is about to scan first */
typedef struct AnnouncedScan
{
	int			backend_slot;	/* in the backend status array */
	int			backend_pid;
	TimestampTz backend_start;
	Oid			dbid;
	Oid			relid;
	Oid			scanned_after;	/* scanned right after this relation, or
								 * InvalidOid if first */
	ResolvedRelation rel;
} AnnouncedScan;

extern int	resolver_take_first_scans(AnnouncedScan *out, int max);
extern bool resolver_take_next_scan(int backend_pid, TimestampTz backend_start,
									Oid dbid, Oid relid, AnnouncedScan *out);

/* Resident resolvers: one per database, started by forecast.c */
#define BGWP_MAX_RESIDENTS 8

extern bool resolver_resident_attach(void);
extern void resolver_resident_detach(void);
extern int	resolver_serve_resident(void);
extern void resolver_resolve_autovacuum(Oid relid, ResolvedRelation *out);

extern PGDLLEXPORT void bgwp_resolver_main(Datum main_arg);

#endif							/* BGWP_RESOLVER_H */
