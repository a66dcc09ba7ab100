/*-------------------------------------------------------------------------
 *
 * bgw_prefetch.h
 *	  Declarations shared by the files of the bgw_prefetch extension.
 *
 * Each .c file under src/ has one responsibility; this header lists what
 * each exports to the others.  Version-specific server details live in
 * compat.h only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGW_PREFETCH_H
#define BGW_PREFETCH_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

/* ---------- guc.c ---------- */

typedef enum PrefetchTargets
{
	PREFETCH_TARGETS_AUTOVACUUM,
	PREFETCH_TARGETS_ALL
} PrefetchTargets;

/* bgw_prefetch.read_into: where pre-read blocks go */
typedef enum PrefetchReadInto
{
	PREFETCH_READ_INTO_OS_CACHE,
	PREFETCH_READ_INTO_SHARED_BUFFERS	/* also loaded by buffer_loader.c */
} PrefetchReadInto;

/* bgw_prefetch.clog_writer */
typedef enum ClogWriterMode
{
	CLOG_WRITER_MODE_OFF,
	CLOG_WRITER_MODE_ON,		/* write dirty pages always */
	CLOG_WRITER_MODE_AUTO		/* only while others evict dirty pages */
} ClogWriterMode;

extern bool bgwp_enabled;
extern bool bgwp_vacuum;
extern bool bgwp_analyze;
extern bool bgwp_pacing;
extern int	bgwp_clog_writer;		/* ClogWriterMode */
extern int	bgwp_targets;
extern int	bgwp_min_relation_size; /* in blocks */
extern int	bgwp_naptime;			/* ms */
extern int	bgwp_max_relations;
extern int	bgwp_log_min_duration;	/* ms, -1 = off */
extern int	bgwp_io_method;			/* IoMethod */
extern int	bgwp_max_distance;		/* blocks */
extern char *bgwp_tablespace_io_depth;
extern int	bgwp_clog_writer_delay; /* ms */
extern int	bgwp_clog_writer_max_pages;	/* pages per round */
extern int	bgwp_read_into;			/* PrefetchReadInto */
extern int	bgwp_cost_limited_depth;	/* -1: no limit */
extern double bgwp_shared_buffers_cap;	/* fraction of NBuffers */

extern void bgwp_define_gucs(void);

/*
 * Look up the depth configured for a tablespace name in
 * bgw_prefetch.tablespace_io_depth; returns -1 when it has no entry.
 */
extern int	bgwp_tablespace_depth_lookup(const char *spcname);
extern void bgwp_require_preload(void);
struct BackgroundWorkerHandle;
extern int	bgwp_reserved_worker_slots(bool lingers);
extern bool bgwp_start_dynamic_worker(const char *function, const char *type,
									  const char *name, int32 arg,
									  uint32 generation, int notify_pid,
									  bool lingers,
									  struct BackgroundWorkerHandle **handle);

/* ---------- stats.c ---------- */

typedef enum PrefetchCommand
{
	PREFETCH_CMD_VACUUM = 0,
	PREFETCH_CMD_ANALYZE = 1
} PrefetchCommand;

#define PREFETCH_NUM_COMMANDS 2

extern const char *prefetch_command_name(PrefetchCommand cmd);

/*
 * What one VACUUM or ANALYZE of a relation contributes to pg_stat_prefetch.
 * A "scan" here is one command's processing of one relation, from the start
 * of its progress reporting to its end, all phases included (as the
 * "elapsed" and "I/O timings" of autovacuum's log line).
 */
typedef struct ScanReport
{
	Oid			dbid;
	Oid			relid;
	PrefetchCommand command;
	bool		prefetched;		/* read ahead for; else watched only */
	char		watched_reason[96]; /* !prefetched: why */
	int64		joined_block;	/* -1: followed from its first block; else
								 * the block it was followed from */
	int64		blocks_read;	/* VACUUM: pages scanned; ANALYZE: sampled */
	int64		blocks_skipped; /* VACUUM: skipped by the visibility map */
	int64		read_time_us;	/* time reading data files */
	bool		read_time_sampled;	/* ... estimated from wait events */
	int64		cost_delay_us;	/* sampled sleeps in the cost-based delay */
	int64		cost_limited_us;	/* reads ahead limited: the scan was
									 * cost-limited */
	int64		total_time_us;	/* the command's time on the relation */
	int64		blocks_prefetched;
	int64		blocks_late;	/* reached by the scan before being read */
	int64		blocks_unused;	/* read ahead, never reached by the scan */
	int64		prefetch_time_us;	/* wall time with reads in flight */
	int64		blocks_loaded;	/* read_into = shared_buffers: loaded */
	int64		loader_aborts;	/* loaders that let go or were refused */
	TimestampTz scan_end;
} ScanReport;

/*
 * MB/s (MiB, as autovacuum's "avg read rate") from bytes or blocks and
 * microseconds; the caller makes sure us > 0.
 */
static inline double
bytes_mb_per_s(double bytes, double us)
{
	return bytes / (1024.0 * 1024.0) / (us / 1000000.0);
}

static inline double
blocks_mb_per_s(int64 blocks, int64 us)
{
	return bytes_mb_per_s((double) blocks * BLCKSZ, (double) us);
}

extern Size stats_shmem_size(void);
extern void stats_shmem_request(void);
extern void stats_shmem_startup(void);
extern void stats_report_scan(const ScanReport *report);

/* The shared hash's own state, for bgw_prefetch_status() (monitor.c) */
typedef struct StatsStatus
{
	int64		entries;
	int64		evictions;
	TimestampTz stats_reset;
} StatsStatus;

extern void stats_get_status(StatsStatus *status);

/* ---------- shared locks (module.c requests the tranche) ---------- */

#define BGWP_LWLOCK_TRANCHE "bgw_prefetch"
#define BGWP_LWLOCK_STATS		0	/* stats.c: membership of the stats hash */
#define BGWP_LWLOCK_RESOLVER	1	/* resolver.c: request slots */
#define BGWP_LWLOCK_MONITOR		2	/* monitor.c: published status */
#define BGWP_LWLOCK_FORECAST	3	/* forecast.c: forecasters and forecasts */
#define BGWP_NUM_LWLOCKS		4

/*
 * Largest read the prefetcher issues (adjacent planned blocks are coalesced
 * up to it); the calibration measures sequential reads of the same size.
 */
#define BGWP_MAX_READ_BLOCKS 32

/* Most VACUUM/ANALYZE runs served at once (size of the live view). */
#define BGWP_MAX_TARGETS 64

/* ---------- monitor.c ---------- */

extern Size monitor_shmem_size(void);
extern void monitor_shmem_startup(void);
extern void monitor_register(void);
extern void monitor_announce_scan(void);
extern PGDLLEXPORT void bgwp_monitor_main(Datum main_arg);

/* ---------- clog_writer.c ---------- */

extern Size clog_writer_shmem_size(void);
extern void clog_writer_shmem_startup(void);	/* under AddinShmemInitLock */
extern void clog_writer_register(void); /* from _PG_init */
extern void clog_writer_reset_stats(TimestampTz now);
extern PGDLLEXPORT void bgwp_clog_writer_main(Datum main_arg);

#endif							/* BGW_PREFETCH_H */
