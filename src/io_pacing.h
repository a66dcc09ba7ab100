/*-------------------------------------------------------------------------
 *
 * io_pacing.h
 *	  The prefetch's rate, set by the latency a small read sees on the disk.
 *
 * Server-independent (plain C, times in microseconds), so that the unit
 * tests drive it exhaustively (test/unit/test_io_pacing.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_IO_PACING_H
#define BGWP_IO_PACING_H

#include <stdbool.h>
#include <stdint.h>

/* Probe latencies the controller filters (the lowest of the last few) */
#define IO_PACING_FILTER 3
#define IO_PACING_DRAINS 3

typedef struct IoPacing
{
	double		rate;			/* blocks a second the prefetch may issue */
	bool		slow_start;		/* no congestion seen yet: grow fast */
	double		tokens;			/* blocks that may be issued now */
	double		taken;			/* blocks issued since the last probe */
	int64_t		last_probe_at;	/* us */
	int64_t		refilled_at;	/* us */

	/* the probe's latency without the prefetch, from the last drains */
	double		base_us;
	double		drain_min_us;	/* lowest probe of the drain under way */
	double		drains_us[IO_PACING_DRAINS];	/* the last drains' lowest
												 * probes, newest first */
	int			ndrains;
	int64_t		window_start;	/* us */
	int			drain_probes;	/* probes left with nothing issued */

	double		recent_us[IO_PACING_FILTER];	/* last probe latencies */
	double		recent_issued[IO_PACING_FILTER];	/* blocks a second issued
													 * before each */
	int			nrecent;
	double		last_us;		/* filtered latency of the last probe */
	int64_t		congestions;	/* probes that found the disk congested */
} IoPacing;

extern void io_pacing_init(IoPacing *p, int64_t now);
extern void io_pacing_restart(IoPacing *p, int64_t now);
extern void io_pacing_probe(IoPacing *p, double latency_us, int64_t now);
extern double io_pacing_threshold_us(const IoPacing *p);
extern bool io_pacing_draining(const IoPacing *p);
extern void io_pacing_refill(IoPacing *p, int64_t now);
extern bool io_pacing_take(IoPacing *p, int blocks);

#endif							/* BGWP_IO_PACING_H */
