/*-------------------------------------------------------------------------
 *
 * prefetcher.h
 *	  Serving scans: planning, pacing, issuing and accounting reads.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_PREFETCHER_H
#define BGWP_PREFETCHER_H

#include "bgw_prefetch.h"
#include "backends.h"

/* One row of pg_stat_prefetch_activity. */
typedef struct ActivityRow
{
	int			pid;
	Oid			dbid;
	Oid			relid;
	PrefetchCommand command;
	char		state[48];
	int64		consumer_block;
	int64		total_blocks;
	int64		prefetch_block;
	int64		distance;
	int			reads_in_flight;
	int			io_depth;
	char		io_depth_source[40];
	int64		planned_blocks;
	int64		prefetched_blocks;
} ActivityRow;

/* The pacer's state (prefetch_pacing.c), for bgw_prefetch_status() */
typedef struct PacingState
{
	bool		paced;			/* the prefetch reads ahead under a rate now */
	bool		alone;			/* it reads ahead unpaced: no foreground */
	const char *unpaced_reason; /* why it never is, or NULL */
	double		rate_mb_s;		/* the rate (-1: never measured) */
	double		latency_us;		/* the probes' latency, filtered (-1: none) */
	double		base_us;		/* their uncontended latency (-1: none) */
} PacingState;

extern void prefetcher_start(void);
extern void prefetcher_stop(bool report);
extern int	prefetcher_event_fd(void);
extern const char *prefetcher_io_method(void);
extern const char *prefetcher_fallback_reason(void);
extern void prefetcher_track(const ScanObservation *obs);
struct AnnouncedScan;
extern void prefetcher_start_announced(const struct AnnouncedScan *a);
extern int	prefetcher_forecast(const ScanObservation *workers, int nworkers);
extern int	prefetcher_take_started(void);
extern void prefetcher_step(void);
extern void prefetcher_record_published(void);
extern void prefetcher_sample(TimestampTz now);
extern bool prefetcher_sampling(void);
extern int	prefetcher_active_targets(void);
extern bool prefetcher_wants_next_step(void);
extern int	prefetcher_activity(ActivityRow *rows, int max);
extern void prefetch_pacing_note_foreground(int running, TimestampTz now);
extern void prefetch_pacing_state(PacingState *s);

#endif							/* BGWP_PREFETCHER_H */
