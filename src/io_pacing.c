/*-------------------------------------------------------------------------
 *
 * io_pacing.c
 *	  The prefetch's rate, set by the latency a small read sees on the disk.
 *
 * Reading ahead at the disk's full rate makes every other process's I/O
 * wait behind it.  The depth does not bound that: a VACUUM's plan is
 * advised (POSIX_FADV_WILLNEED), an advice completes once the kernel has
 * queued its reads, and one 256 kB advice in flight already moves hundreds
 * of MB a second.  The rate does: at Linux's default readahead an
 * unpaced autovacuum beside OLTP made the foreground's p99 latency five
 * times worse, a fixed 300 MB/s cap kept it at off's (doc/benchmarks.md).
 * A fixed cap is wrong on every other disk, so the rate is found by
 * feedback, the way LEDBAT, TCP's background-traffic congestion control,
 * finds its window: it keeps the queueing delay it adds below a target,
 * and so yields to traffic that does not back off.
 *
 * The prefetch is paced only beside the foreground (prefetch_pacing.c
 * decides when that is): alone, the latency it adds harms no one, and a
 * scan goes at the rate its depth allows.
 *
 * The signal is what a foreground read feels: the latency of a small
 * direct read (a probe, 8 kB, O_DIRECT, so that it goes to the disk) that
 * the prefetcher issues every few milliseconds while it reads ahead.  What
 * matters is the latency the prefetch adds, so the base is the latency
 * without it, everything else running: a pacing (re)start and each window
 * of WINDOW_US begin with a drain, DRAIN_PROBES probes during which the
 * prefetch issues nothing, sent once the scan has read what was read ahead
 * for it (prefetch_pacing.c), so that it reads for itself as it would
 * without the extension.  The base is the median of the last
 * IO_PACING_DRAINS drains' lowest probes (before the first drain, the
 * lowest of all probes).  A base taken from any probe would be wrong both
 * ways: a controller that keeps the latency near its threshold never sees
 * the lowest value again (the base drifts up), and one taken in a quiet
 * moment (between two VACUUMs) holds the prefetch to a latency the VACUUM
 * alone already exceeds: with 8 MB of kernel readahead, a VACUUM's own
 * reads set off megabytes of readahead over the ranges it skips, which the
 * prefetch, by reading just the planned blocks first, takes away.  A drain
 * costs the prefetch some 30
 * ms in five seconds.  The current value is the lowest of the last
 * IO_PACING_FILTER probes, which filters out a single slow one.
 *
 * The threshold is strict, LATENCY_FACTOR times the base plus
 * LATENCY_SLACK_US: beside OLTP traffic a prefetch that doubled the probes'
 * latency (60 to 130 us) tripled the foreground's p99.  Above it the rate
 * shrinks in proportion to the excess (by at most half a probe), from the
 * rate the prefetch actually issued over the filtered probes' intervals if
 * that is lower (a limit the scan's own pace kept far above its use would
 * take many probes to come down); below, it grows in proportion to the
 * room left, by a quarter a probe until the first congestion, then by at
 * most RATE_STEP.  A restart begins where the rate last was (START_RATE the
 * first time), not at full rate: that would be a burst of tens of
 * megabytes in front of the foreground's reads at every scan, before the
 * first probes could bring it down.
 *
 * The rate is spent as tokens, one per block, refilled as time passes up
 * to BURST_US worth of it; a read may run them into debt (io_pacing_take()),
 * so that reads go out one by one, spread over time, rather than in bursts
 * that would sit in the disk's queue in front of the foreground's reads.
 * Times are in microseconds; nothing here depends on the server.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "io_pacing.h"

#define START_RATE 8192.0		/* blocks a second: 64 MB/s */
#define MIN_RATE 512.0			/* 4 MB/s */
#define MAX_RATE 4194304.0		/* 32 GB/s: no bound */
#define RATE_STEP 1024.0		/* 8 MB/s a probe, at most */
#define SLOW_START_GROWTH 0.25	/* a quarter a probe */
#define MAX_DECREASE 0.5		/* half a probe */
#define LATENCY_FACTOR 1.2
#define LATENCY_SLACK_US 10.0
#define WINDOW_US 5000000
#define DRAIN_PROBES 3
#define BURST_US 2000.0

void
io_pacing_init(IoPacing *p, int64_t now)
{
	memset(p, 0, sizeof(*p));
	p->rate = START_RATE;
	p->slow_start = true;
	p->tokens = 0;
	p->refilled_at = now;
	p->last_probe_at = now;
	p->window_start = now;
	p->drain_min_us = -1;
	p->base_us = -1;
	p->last_us = -1;
}

/*
 * The prefetch starts reading again after a pause: at the rate it had, with
 * a drain to measure the base first; the base and the counters are kept.
 */
void
io_pacing_restart(IoPacing *p, int64_t now)
{
	IoPacing	kept = *p;

	io_pacing_init(p, now);
	p->rate = kept.rate;
	p->base_us = kept.base_us;
	memcpy(p->drains_us, kept.drains_us, sizeof(p->drains_us));
	p->ndrains = kept.ndrains;
	p->window_start = kept.window_start;
	p->congestions = kept.congestions;
	p->drain_probes = DRAIN_PROBES;
}

/*
 * A drain ended with lowest latency us: the base becomes the median of the
 * last IO_PACING_DRAINS drains (of two, their mean).
 */
static void
record_drain(IoPacing *p, double us)
{
	double		sorted[IO_PACING_DRAINS];
	int			n;

	memmove(&p->drains_us[1], &p->drains_us[0],
			sizeof(double) * (IO_PACING_DRAINS - 1));
	p->drains_us[0] = us;
	if (p->ndrains < IO_PACING_DRAINS)
		p->ndrains++;
	n = p->ndrains;
	memcpy(sorted, p->drains_us, sizeof(double) * n);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; j--)
		{
			double		tmp = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = tmp;
		}
	p->base_us = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* The latency above which the disk counts as congested (-1: no base yet) */
double
io_pacing_threshold_us(const IoPacing *p)
{
	if (p->base_us < 0)
		return -1;
	return p->base_us * LATENCY_FACTOR + LATENCY_SLACK_US;
}

/* Is the prefetch holding its reads, so that probes measure the base? */
bool
io_pacing_draining(const IoPacing *p)
{
	return p->drain_probes > 0;
}

/* A probe completed after latency_us: learn the base, adjust the rate. */
void
io_pacing_probe(IoPacing *p, double latency_us, int64_t now)
{
	double		current;
	double		threshold;
	double		off_target;
	double		issued = 0;
	double		issued_rate;

	if (latency_us < 0)
		return;
	if (now > p->last_probe_at)
		issued = p->taken * 1e6 / (double) (now - p->last_probe_at);
	p->taken = 0;
	p->last_probe_at = now;

	/*
	 * The base: the median of the last drains' lowest probes; until a drain
	 * has measured it, the lowest of all probes.
	 */
	if (now - p->window_start >= WINDOW_US)
	{
		p->window_start = now;
		p->drain_probes = DRAIN_PROBES;
		p->drain_min_us = -1;
		return;					/* sent before the drain began */
	}
	if (p->drain_probes > 0)
	{
		if (p->drain_min_us < 0 || latency_us < p->drain_min_us)
			p->drain_min_us = latency_us;
		if (--p->drain_probes == 0)
			record_drain(p, p->drain_min_us);
		return;					/* a measure of the base only */
	}
	if (p->ndrains == 0 && (p->base_us < 0 || latency_us < p->base_us))
		p->base_us = latency_us;

	/* the current latency: the lowest of the last few probes */
	memmove(&p->recent_us[1], &p->recent_us[0],
			sizeof(double) * (IO_PACING_FILTER - 1));
	memmove(&p->recent_issued[1], &p->recent_issued[0],
			sizeof(double) * (IO_PACING_FILTER - 1));
	p->recent_us[0] = latency_us;
	p->recent_issued[0] = issued;
	if (p->nrecent < IO_PACING_FILTER)
		p->nrecent++;
	current = p->recent_us[0];
	issued_rate = p->recent_issued[0];
	for (int i = 1; i < p->nrecent; i++)
	{
		if (p->recent_us[i] < current)
			current = p->recent_us[i];
		if (p->recent_issued[i] > issued_rate)
			issued_rate = p->recent_issued[i];
	}
	p->last_us = current;

	threshold = io_pacing_threshold_us(p);
	off_target = (threshold - current) / threshold;
	if (off_target < -1.0)
		off_target = -1.0;
	if (off_target < 0)
	{
		if (issued_rate > 0 && issued_rate < p->rate)
			p->rate = issued_rate;
		p->rate *= 1.0 + MAX_DECREASE * off_target;
		if (p->rate < MIN_RATE)
			p->rate = MIN_RATE;
		p->slow_start = false;
		p->congestions++;
	}
	else
	{
		p->rate += p->slow_start ?
			p->rate * SLOW_START_GROWTH * off_target : RATE_STEP * off_target;
		if (p->rate > MAX_RATE)
			p->rate = MAX_RATE;
	}
}

/* Add the tokens earned since the last refill, up to a burst's worth. */
void
io_pacing_refill(IoPacing *p, int64_t now)
{
	double		burst = p->rate * BURST_US / 1e6;

	if (now > p->refilled_at)
	{
		p->tokens += p->rate * (double) (now - p->refilled_at) / 1e6;
		if (p->tokens > burst)
			p->tokens = burst;
	}
	p->refilled_at = now;
}

/*
 * May blocks more be issued now?  They are taken if so.  One read may run
 * the tokens into debt, so that the burst can stay smaller than a read:
 * reads go out one at a time, spread over the rate's time, rather than in
 * bursts that sit in the disk's queue in front of the foreground's reads.
 */
bool
io_pacing_take(IoPacing *p, int blocks)
{
	if (p->drain_probes > 0 || p->tokens <= 0)
		return false;
	p->tokens -= blocks;
	p->taken += blocks;
	return true;
}
