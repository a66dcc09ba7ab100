/*-------------------------------------------------------------------------
 *
 * test_io_pacing.c
 *	  Tests of the prefetch's rate controller (io_pacing.c).
 *
 * The controller is driven with probe latencies as a disk would give them:
 * flat (nobody queues behind the prefetch: the rate only grows), a latency
 * that rises with the rate past a knee (the rate settles where the probe
 * reaches the threshold, not beyond), a foreground
 * that arrives (the rate falls within a few probes) and leaves (it grows
 * back), a single slow probe (filtered out), the base learnt again in each
 * window while the prefetch holds its reads, the threshold, a restart at
 * the rate last learnt that begins with a drain, a cut that starts from the
 * rate the prefetch issued, not a limit far above it, and the token bucket (the
 * blocks issued over a second match the rate, a burst is bounded).
 *
 * Prints each failing case and ends with "N passed, N failed"; exits 1 on
 * any failure.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>

#include "io_pacing.h"

static int	passed = 0;
static int	failed = 0;

#define PROBE_US 10000			/* a probe every 10 ms */
#define BLOCK_MB (8192.0 / 1e6)

static void
check(int ok, const char *what, double value)
{
	if (ok)
		passed++;
	else
	{
		failed++;
		printf("FAILED: %s (%.3f)\n", what, value);
	}
}

/* The rate in MB/s */
static double
mb_s(const IoPacing *p)
{
	return p->rate * BLOCK_MB;
}

/*
 * A disk with latency base_us while the offered rate is below knee_mb_s,
 * and rising by base_us for every further knee_mb_s / 4 (the queue grows),
 * plus whatever the foreground adds.
 */
static double
disk_latency(double rate_mb_s, double base_us, double knee_mb_s,
			 double foreground_us)
{
	double		lat = base_us + foreground_us;

	if (rate_mb_s > knee_mb_s)
		lat += base_us * (rate_mb_s - knee_mb_s) / (knee_mb_s / 4);
	return lat;
}

static int64_t
run(IoPacing *p, int64_t now, int probes, double base_us, double knee_mb_s,
	double foreground_us)
{
	for (int i = 0; i < probes; i++)
	{
		now += PROBE_US;
		io_pacing_probe(p, disk_latency(io_pacing_draining(p) ? 0 : mb_s(p),
										base_us, knee_mb_s, foreground_us),
						now);
	}
	return now;
}

/* A pacer whose base, 100 us, was learnt on an idle disk at time 0 */
static void
start_pacer(IoPacing *p)
{
	io_pacing_init(p, 0);
	io_pacing_probe(p, 100, 0);
}

static void
test_flat_disk(void)
{
	IoPacing	p;
	int64_t		now = 0;

	io_pacing_init(&p, now);
	now = run(&p, now, 100, 100, 1e9, 0);
	check(p.congestions == 0, "a flat disk is never congested", (double) p.congestions);
	check(mb_s(&p) > 10000, "a flat disk: the rate grows without bound", mb_s(&p));
	check(p.slow_start, "a flat disk: still in slow start", p.slow_start);
}

static void
test_knee(void)
{
	IoPacing	p;
	int64_t		now = 0;
	double		lo = 1e18;
	double		hi = 0;

	start_pacer(&p);
	now = run(&p, now, 1000, 100, 400, 0);
	for (int i = 0; i < 500; i++)
	{
		now = run(&p, now, 1, 100, 400, 0);
		if (mb_s(&p) < lo)
			lo = mb_s(&p);
		if (mb_s(&p) > hi)
			hi = mb_s(&p);
	}
	check(!p.slow_start, "past the knee: congestion seen", p.slow_start);
	/* the threshold, 1.2 x 100 + 10 us, is reached at 430 MB/s */
	check(lo > 380, "past the knee: the rate stays near the knee", lo);
	check(hi < 440, "past the knee: the rate stays at or below the threshold's", hi);
	check(p.base_us == 100, "the base is the idle latency, windows later", p.base_us);
}

static void
test_foreground_arrives_and_leaves(void)
{
	IoPacing	p;
	int64_t		now = 0;
	double		before;

	start_pacer(&p);
	now = run(&p, now, 300, 100, 800, 0);
	before = mb_s(&p);
	check(before > 700, "the disk to itself: near the knee", before);

	/* others double every read's latency: the prefetch yields */
	now = run(&p, now, 20, 100, 800, 400);
	check(mb_s(&p) < before * 0.1, "others arrive: the rate falls within 20 probes", mb_s(&p));

	/* it leaves: the rate grows back, additively */
	now = run(&p, now, 2000, 100, 800, 0);
	check(mb_s(&p) > 700, "they leave: the rate grows back", mb_s(&p));
}

static void
test_single_slow_probe(void)
{
	IoPacing	p;
	int64_t		now = 0;
	double		before;

	start_pacer(&p);
	now = run(&p, now, 50, 100, 1e9, 0);
	before = mb_s(&p);
	now += PROBE_US;
	io_pacing_probe(&p, 5000, now);
	check(p.congestions == 0, "one slow probe is filtered out", (double) p.congestions);
	check(mb_s(&p) >= before, "one slow probe does not lower the rate", mb_s(&p));
	now += PROBE_US;
	io_pacing_probe(&p, 5000, now);
	now += PROBE_US;
	io_pacing_probe(&p, 5000, now);
	check(p.congestions == 1, "three slow probes in a row are congestion", (double) p.congestions);
	check(mb_s(&p) <= before * 0.75 + 1e-6, "... and lower the rate", mb_s(&p));
	check(mb_s(&p) >= before * 0.5 - 1e-6, "... by at most half", mb_s(&p));
}

static void
test_base_window(void)
{
	IoPacing	p;
	int64_t		now = 0;

	io_pacing_init(&p, now);
	check(io_pacing_threshold_us(&p) < 0, "no threshold before a probe", io_pacing_threshold_us(&p));
	io_pacing_probe(&p, 50, now);
	check(p.base_us == 50, "before any drain, the base is the lowest probe", p.base_us);
	/* 6 s of probes at 200 us: the first drain (at 5 s) sets the base */
	for (int i = 0; i < 600; i++)
	{
		now += PROBE_US;
		io_pacing_probe(&p, 200, now);
	}
	check(p.base_us == 200, "the base follows the disk from the first drain", p.base_us);
}

/* A restart's drain, every probe of it at us */
static int64_t
restart_and_drain(IoPacing *p, int64_t now, double us)
{
	io_pacing_restart(p, now);
	while (io_pacing_draining(p))
		io_pacing_probe(p, us, now += PROBE_US);
	return now;
}

/*
 * Drains that find the disk slower (a VACUUM's own kernel readahead, which
 * the prefetch takes away) raise the base; one slow drain alone does not.
 */
static void
test_base_from_drains(void)
{
	IoPacing	p;
	int64_t		now = 0;

	start_pacer(&p);
	now = restart_and_drain(&p, now, 100);
	now = restart_and_drain(&p, now, 300);
	check(p.base_us == 200, "two drains: the base is their mean", p.base_us);
	now = restart_and_drain(&p, now, 300);
	check(p.base_us == 300, "three drains: the base is their median", p.base_us);
	(void) restart_and_drain(&p, now, 5000);
	check(p.base_us == 300, "one slow drain does not move the median", p.base_us);
}

static void
test_threshold(void)
{
	IoPacing	p;

	start_pacer(&p);
	check(io_pacing_threshold_us(&p) == 130, "the threshold: 1.2 x base + 10 us", io_pacing_threshold_us(&p));
}

static void
test_restart(void)
{
	IoPacing	p;
	int64_t		now = 0;
	double		learnt;
	int			drained = 0;

	start_pacer(&p);
	now = run(&p, now, 300, 100, 200, 0);
	learnt = mb_s(&p);
	io_pacing_restart(&p, now);
	check(mb_s(&p) == learnt, "a restart is at the rate last learnt", mb_s(&p));
	check(p.base_us == 100, "a restart keeps the base", p.base_us);
	check(!io_pacing_take(&p, 1), "a restart begins with a drain: nothing issued", 0);
	while (io_pacing_draining(&p) && drained < 10)
	{
		now += PROBE_US;
		io_pacing_probe(&p, 90, now);
		drained++;
	}
	check(drained == 3, "the drain lasts three probes", drained);
	check(p.base_us == 90, "the drain measures the base", p.base_us);
}

static void
test_cut_from_issued_rate(void)
{
	IoPacing	p;
	int64_t		now = 0;

	start_pacer(&p);
	/* a flat disk: the limit grows far above what the scan takes */
	now = run(&p, now, 50, 100, 1e9, 0);
	check(mb_s(&p) > 1000, "a limit far above use", mb_s(&p));
	/* 10 ms at 100 MB/s (1280 blocks a second: 12.8 blocks), then congestion */
	p.tokens = 1e9;
	for (int i = 0; i < 13; i++)
		io_pacing_take(&p, 1);
	for (int i = 0; i < 3; i++)
	{
		now += PROBE_US;
		io_pacing_probe(&p, 1000, now);
	}
	check(mb_s(&p) < 100, "congestion cuts from the issued rate, not the limit", mb_s(&p));
}

static void
test_tokens(void)
{
	IoPacing	p;
	int64_t		now = 0;
	long		issued = 0;

	io_pacing_init(&p, now);
	p.rate = 12800;				/* 100 MB/s */
	/* one second in 1 ms steps, issuing 32-block reads while tokens last */
	for (int ms = 1; ms <= 1000; ms++)
	{
		now += 1000;
		io_pacing_refill(&p, now);
		while (io_pacing_take(&p, 32))
			issued += 32;
	}
	check(issued >= 12800 - 64 && issued <= 12800 + 64 + 256,
		  "a second's blocks match the rate", (double) issued);

	/* after a long pause, at most a burst (2 ms of the rate) and one read */
	now += 5000000;
	io_pacing_refill(&p, now);
	issued = 0;
	while (io_pacing_take(&p, 32))
		issued += 32;
	check(issued <= 12800 / 500 + 32, "a pause earns a burst, not more", (double) issued);
	check(issued >= 32, "a read larger than the burst still goes", (double) issued);

	/* ... and the next read waits until the debt (6.4 blocks) is earned back */
	now += 400;
	io_pacing_refill(&p, now);
	check(!io_pacing_take(&p, 32), "a read's debt is earned back first", p.tokens);
	now += 200;
	io_pacing_refill(&p, now);
	check(io_pacing_take(&p, 32), "... then the next read goes", p.tokens);
}

int
main(void)
{
	test_flat_disk();
	test_knee();
	test_foreground_arrives_and_leaves();
	test_single_slow_probe();
	test_base_window();
	test_base_from_drains();
	test_threshold();
	test_restart();
	test_cut_from_issued_rate();
	test_tokens();
	printf("%d passed, %d failed\n", passed, failed);
	return failed > 0;
}
