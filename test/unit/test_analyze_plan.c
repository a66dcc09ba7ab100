/*-------------------------------------------------------------------------
 *
 * test_analyze_plan.c
 *	  Tests of the ANALYZE position estimate, cost model and window.
 *
 * Besides hand-checked cases (ends of the scan, dense and sparse samples,
 * the break-even region, a relation that grows or shrinks), the position
 * estimate and the window are run against the real block sampler: the
 * BlockSampler of PostgreSQL 15's sampling.c (Knuth's Algorithm S) and the
 * pg_prng.c generator it draws from are copied below, so the picks are the
 * ones an ANALYZE with that seed would read.
 *
 * Prints each failing case and ends with "N passed, N failed"; exits 1 on
 * any failure.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze_plan.h"

static int	npassed = 0;
static int	nfailed = 0;

static void
check(bool ok, const char *what)
{
	if (ok)
		npassed++;
	else
	{
		nfailed++;
		printf("FAIL %s\n", what);
	}
}

/* check() with a formatted description */
#define CHECKF(ok, ...) \
	do { \
		char		what_[512]; \
		snprintf(what_, sizeof(what_), __VA_ARGS__); \
		check((ok), what_); \
	} while (0)

/* ---------- copy of pg_prng.c (xoroshiro128**) and sampling.c ---------- */

typedef struct PrngState
{
	uint64_t	s0,
				s1;
} PrngState;

static uint64_t
rotl(uint64_t x, int bits)
{
	return (x << bits) | (x >> (64 - bits));
}

static uint64_t
xoroshiro128ss(PrngState *state)
{
	uint64_t	s0 = state->s0,
				sx = state->s1 ^ s0,
				val = rotl(s0 * 5, 7) * 9;

	state->s0 = rotl(s0, 24) ^ sx ^ (sx << 16);
	state->s1 = rotl(sx, 37);
	return val;
}

static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t	val = (*state += UINT64_C(0x9E3779B97f4A7C15));

	val = (val ^ (val >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	val = (val ^ (val >> 27)) * UINT64_C(0x94D049BB133111EB);
	return val ^ (val >> 31);
}

static void
prng_seed(PrngState *state, uint64_t seed)
{
	state->s0 = splitmix64(&seed);
	state->s1 = splitmix64(&seed);
	if (state->s0 == 0 && state->s1 == 0)
	{
		state->s0 = UINT64_C(0x5851F42D4C957F2D);
		state->s1 = UINT64_C(0x14057B7EF767814F);
	}
}

/* sampler_random_fract(): pg_prng_double() in (0, 1) */
static double
sampler_random_fract(PrngState *state)
{
	double		res;

	do
	{
		res = ldexp((double) (xoroshiro128ss(state) >> (64 - 52)), -52);
	} while (res == 0.0);
	return res;
}

typedef struct BlockSampler
{
	uint32_t	N;				/* number of blocks, known in advance */
	int			n;				/* desired sample size */
	uint32_t	t;				/* current block number */
	int			m;				/* blocks selected so far */
	PrngState	randstate;
} BlockSampler;

static uint32_t
BlockSampler_Init(BlockSampler *bs, uint32_t nblocks, int samplesize,
				  uint32_t randseed)
{
	bs->N = nblocks;
	bs->n = samplesize;
	bs->t = 0;
	bs->m = 0;
	prng_seed(&bs->randstate, randseed);
	return (uint32_t) bs->n < bs->N ? (uint32_t) bs->n : bs->N;
}

static bool
BlockSampler_HasMore(BlockSampler *bs)
{
	return (bs->t < bs->N) && (bs->m < bs->n);
}

static uint32_t
BlockSampler_Next(BlockSampler *bs)
{
	uint32_t	K = bs->N - bs->t;
	int			k = bs->n - bs->m;
	double		p;
	double		V;

	if ((uint32_t) k >= K)
	{
		bs->m++;
		return bs->t++;
	}
	V = sampler_random_fract(&bs->randstate);
	p = 1.0 - (double) k / (double) K;
	while (V < p)
	{
		bs->t++;
		K--;
		p *= 1.0 - (double) k / (double) K;
	}
	bs->m++;
	return bs->t++;
}

/* The picks of one ANALYZE; returns their number (targblocks) */
static uint32_t
sample_blocks(uint32_t nblocks, int targrows, uint32_t seed, uint32_t *picks)
{
	BlockSampler bs;
	uint32_t	total = BlockSampler_Init(&bs, nblocks, targrows, seed);
	uint32_t	k = 0;

	while (BlockSampler_HasMore(&bs))
		picks[k++] = BlockSampler_Next(&bs);
	if (k != total)
		printf("sampler returned %u blocks, announced %u\n", k, total);
	return k;
}

/* ---------- position ---------- */

static bool
position_is(AnalyzePosition pos, uint32_t expected, uint32_t lower)
{
	return pos.expected == expected && pos.lower == lower;
}

static void
test_position_ends(void)
{
	AnalyzePosition pos;

	/* nothing known or nothing to read: 0 */
	check(position_is(analyze_position(0, 0, 1000), 0, 0), "position, total 0");
	check(position_is(analyze_position(5, 0, 1000), 0, 0), "position, total 0, done 5");
	check(position_is(analyze_position(0, 100, 0), 0, 0), "position, nblocks 0");
	check(position_is(analyze_position(0, 0, 0), 0, 0), "position, all 0");

	/* finished: past the end */
	check(position_is(analyze_position(30000, 30000, 60000), 60000, 60000),
		  "position, done == total");
	check(position_is(analyze_position(30001, 30000, 60000), 60000, 60000),
		  "position, done > total");

	/* start: the first pick's mean is (N + 1) / (n + 1) - 1 */
	pos = analyze_position(0, 30000, 60000);
	check(position_is(pos, 1, 0), "position, done 0 of 30000/60000 is {1, 0}");
	pos = analyze_position(0, 300, 100000);
	CHECKF(position_is(pos, 331, 0), "position, done 0 of 300/100000: {%u, %u}, want {331, 0}",
		   pos.expected, pos.lower);
	check(position_is(analyze_position(-3, 300, 100000), 331, 0),
		  "position, negative done is done 0");

	/* last pick: at most the last block, at least done */
	pos = analyze_position(29999, 30000, 60000);
	CHECKF(pos.expected <= 59999 && pos.expected >= 59997 && pos.lower >= 29999 &&
		   pos.lower <= pos.expected,
		   "position, last pick of 30000/60000: {%u, %u}", pos.expected, pos.lower);

	/* whole relation: exactly done, whether total == or > nblocks */
	for (int64_t done = 0; done < 1000; done++)
	{
		pos = analyze_position(done, 1000, 1000);
		if (!position_is(pos, (uint32_t) done, (uint32_t) done))
			break;
		pos = analyze_position(done, 30000, 1000);
		if (!position_is(pos, (uint32_t) done, (uint32_t) done))
			break;
	}
	CHECKF(position_is(pos, 999, 999), "position, whole relation is done (stopped at {%u, %u})",
		   pos.expected, pos.lower);
	check(position_is(analyze_position(1500, 30000, 1000), 1000, 1000),
		  "position, whole relation, done past nblocks");

	/* the largest relation: no overflow */
	pos = analyze_position(15000, 30000, UINT32_MAX);
	CHECKF(fabs((double) pos.expected - 15001.0 * 4294967296.0 / 30001.0 + 1.0) < 1.0 &&
		   pos.lower < pos.expected,
		   "position, nblocks 2^32-1: {%u, %u}", pos.expected, pos.lower);
}

/* expected and lower never move backwards as done grows */
static void
test_position_monotone(void)
{
	static const uint32_t configs[][2] = {
		{60000, 30000}, {258621, 30000}, {1000000, 30000}, {1000, 30},
		{31000, 30000}, {100, 99}
	};

	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++)
	{
		AnalyzePosition prev = {0, 0};
		int64_t		bad = -1;

		for (int64_t done = 0; done <= configs[c][1] && bad < 0; done++)
		{
			AnalyzePosition pos = analyze_position(done, configs[c][1], configs[c][0]);

			if (pos.expected < prev.expected || pos.lower < prev.lower ||
				pos.lower > pos.expected || pos.lower < done ||
				pos.expected > configs[c][0])
				bad = done;
			prev = pos;
		}
		CHECKF(bad < 0, "position monotone and bounded, %u of %u (broke at done %lld)",
			   configs[c][1], configs[c][0], (long long) bad);
	}
}

/* ---------- cost model ---------- */

static void
test_cost_model(void)
{
	AnalyzeCostModel model;
	AnalyzeCostModel m2;

	analyze_cost_model_defaults(&model);
	CHECKF(fabs(model.seq_us_per_block - 11.30) < 0.01 &&
		   fabs(model.random_us_per_block - 26.67) < 0.01,
		   "defaults are 11.30 / 26.67 us, got %.2f / %.2f",
		   model.seq_us_per_block, model.random_us_per_block);

	/* the measured tables and the densities of the brief, at the defaults */
	check(analyze_should_stream(30000, 60000, &model), "defaults: 50 % streams");
	check(!analyze_should_stream(30000, 258621, &model), "defaults: 11.6 % does not stream");
	check(!analyze_should_stream(30000, 300000, &model), "defaults: 10 % does not stream");
	check(!analyze_should_stream(30000, 1000000, &model), "defaults: 3 % does not stream");
	check(analyze_should_stream(30000, 30000, &model), "defaults: whole relation streams");
	check(analyze_should_stream(30000, 20000, &model), "defaults: total > nblocks streams");
	check(!analyze_should_stream(0, 60000, &model), "total 0 does not stream");
	check(!analyze_should_stream(-1, 60000, &model), "total < 0 does not stream");
	check(!analyze_should_stream(30000, 0, &model), "nblocks 0 does not stream");

	/*
	 * Break-even region: seq 10, random 20 breaks even at density 0.5 and
	 * streams from 0.5 / 0.9 = 0.5556 (total 55,556 of 100,000).
	 */
	model.seq_us_per_block = 10.0;
	model.random_us_per_block = 20.0;
	check(!analyze_should_stream(50000, 100000, &model), "break-even density does not stream");
	check(!analyze_should_stream(53000, 100000, &model), "6 % gain does not stream");
	check(!analyze_should_stream(55555, 100000, &model), "just under 10 % gain does not stream");
	check(analyze_should_stream(55556, 100000, &model), "10 % gain streams");
	check(analyze_should_stream(70000, 100000, &model), "clear gain streams");

	/* observe: a moving average with weight 1/8, of streaming only */
	model.seq_us_per_block = 10.0;
	model.random_us_per_block = 20.0;
	analyze_cost_model_observe_stream(&model, 1800.0, 100);
	CHECKF(fabs(model.seq_us_per_block - 11.0) < 1e-9 && model.random_us_per_block == 20.0,
		   "one streaming observation of 18 us moves 10 to 11, got %.3f / %.3f",
		   model.seq_us_per_block, model.random_us_per_block);

	m2 = model;
	analyze_cost_model_observe_stream(&m2, 100.0, 0);
	analyze_cost_model_observe_stream(&m2, 100.0, -5);
	analyze_cost_model_observe_stream(&m2, 0.0, 10);
	analyze_cost_model_observe_stream(&m2, -1.0, 10);
	analyze_cost_model_observe_stream(&m2, NAN, 10);
	analyze_cost_model_observe_stream(&m2, INFINITY, 10);
	check(m2.seq_us_per_block == model.seq_us_per_block &&
		  m2.random_us_per_block == model.random_us_per_block,
		  "invalid observations are ignored");

	for (int i = 0; i < 200; i++)
		analyze_cost_model_observe_stream(&m2, 5000.0, 1000);
	CHECKF(fabs(m2.seq_us_per_block - 5.0) < 1e-6, "observations converge, got %.6f",
		   m2.seq_us_per_block);

	/*
	 * The model follows the device: a whole-relation-sized window that
	 * streams at the defaults stops streaming once streaming is observed
	 * to cost as much per block as the scattered reads (a device that
	 * gains nothing from large reads).
	 */
	analyze_cost_model_defaults(&model);
	{
		int			nobs = 0;

		check(analyze_should_stream(60000, 100000, &model), "a 60 %% sample streams at the defaults");
		while (analyze_should_stream(60000, 100000, &model) && nobs < 100)
		{
			analyze_cost_model_observe_stream(&model, 1000.0 * model.random_us_per_block, 1000);
			nobs++;
		}
		CHECKF(nobs > 0 && nobs < 30, "slow streaming stops a 60 %% sample from streaming after %d observations",
			   nobs);
	}
}

/* ---------- window ---------- */

static bool
window_is(AnalyzeWindow w, uint32_t start, uint32_t end)
{
	return w.start == start && w.end == end;
}

static bool
window_empty(AnalyzeWindow w)
{
	return w.end <= w.start;
}

static void
test_window_cases(void)
{
	AnalyzeCostModel model;
	AnalyzeWindow w;
	AnalyzePosition pos;

	analyze_cost_model_defaults(&model);

	/* dense: from the lower bound (or frontier) to expected + distance */
	w = analyze_plan_window(0, 30000, 60000, 60000, 512, 0, &model);
	check(window_is(w, 0, 513), "dense, start: [0, 513)");
	pos = analyze_position(10000, 30000, 60000);
	w = analyze_plan_window(10000, 30000, 60000, 60000, 512, 0, &model);
	CHECKF(window_is(w, pos.lower, pos.expected + 512) && pos.lower < pos.expected,
		   "dense, frontier behind consumer: [lower, expected + 512), got [%u, %u)",
		   w.start, w.end);
	w = analyze_plan_window(10000, 30000, 60000, 60000, 512, pos.expected + 100, &model);
	check(window_is(w, pos.expected + 100, pos.expected + 512),
		  "dense, frontier ahead: [frontier, expected + 512)");
	w = analyze_plan_window(10000, 30000, 60000, 60000, 512, pos.expected + 512, &model);
	check(window_empty(w), "dense, frontier at the end of the distance: empty");
	w = analyze_plan_window(10000, 30000, 60000, 60000, 0, 0, &model);
	check(window_is(w, pos.lower, pos.expected), "dense, distance 0: up to expected");

	/* sparse: never */
	w = analyze_plan_window(0, 30000, 300000, 300000, 512, 0, &model);
	check(window_empty(w), "10 %: empty");
	w = analyze_plan_window(15000, 30000, 1000000, 1000000, 100000, 0, &model);
	check(window_empty(w), "3 %: empty");

	/* whole relation: exactly from done */
	w = analyze_plan_window(100, 30000, 30000, 30000, 512, 0, &model);
	check(window_is(w, 100, 612), "whole: [done, done + distance)");
	w = analyze_plan_window(100, 30000, 30000, 30000, 512, 400, &model);
	check(window_is(w, 400, 612), "whole: [frontier, done + distance)");
	w = analyze_plan_window(29900, 30000, 30000, 30000, 512, 29950, &model);
	check(window_is(w, 29950, 30000), "whole: clipped at nblocks");

	/* ends */
	check(window_empty(analyze_plan_window(30000, 30000, 60000, 60000, 512, 0, &model)),
		  "done == total: empty");
	check(window_empty(analyze_plan_window(0, 0, 60000, 60000, 512, 0, &model)),
		  "total 0: empty");
	check(window_empty(analyze_plan_window(0, 100, 0, 0, 512, 0, &model)),
		  "nblocks 0: empty");

	/* shrunk: nothing past the current size; grown: nothing past nblocks */
	w = analyze_plan_window(20000, 30000, 60000, 50000, 100000, 0, &model);
	CHECKF(!window_empty(w) && w.end == 50000, "shrunk: end at current size, got [%u, %u)",
		   w.start, w.end);
	check(window_empty(analyze_plan_window(20000, 30000, 60000, 50000, 100000, 50000, &model)),
		  "shrunk to the frontier: empty");
	check(window_empty(analyze_plan_window(29000, 30000, 60000, 50000, 100000, 0, &model)),
		  "shrunk below the consumer: empty");
	check(window_empty(analyze_plan_window(0, 30000, 60000, 0, 512, 0, &model)),
		  "shrunk to nothing: empty");
	w = analyze_plan_window(20000, 30000, 60000, 90000, 100000, 0, &model);
	CHECKF(!window_empty(w) && w.end == 60000, "grown: end at nblocks, got [%u, %u)",
		   w.start, w.end);

	/* no wrap-around near 2^32 */
	w = analyze_plan_window(100, 1000, UINT32_MAX, UINT32_MAX, UINT32_MAX, 0, &model);
	check(window_empty(w), "2^32 blocks at 0.00002 %: empty");
	w = analyze_plan_window(UINT32_MAX - 10, UINT32_MAX, UINT32_MAX, UINT32_MAX,
							UINT32_MAX, 0, &model);
	check(window_is(w, UINT32_MAX - 10, UINT32_MAX), "whole 2^32 blocks: end clipped, no wrap");
}

/* splitmix64-based test input generator (fixed seed) */
static uint64_t rng_state = 42;

static uint32_t
rng_u32(uint32_t bound)
{
	return (uint32_t) (splitmix64(&rng_state) % bound);
}

/*
 * The window's contract on random inputs: empty, or start >= frontier,
 * start >= lower, end <= expected + distance, end <= min(nblocks,
 * cur_nblocks), and only when streaming pays.
 */
static void
test_window_contract(void)
{
	AnalyzeCostModel model;
	int			bad = 0;
	char		first[200] = "";

	for (int i = 0; i < 200000; i++)
	{
		uint32_t	nblocks = rng_u32(4) == 0 ? rng_u32(100) : rng_u32(2000000);
		int64_t		total = rng_u32(4) == 0 ? nblocks : rng_u32(nblocks + 2);
		int64_t		done = rng_u32((uint32_t) total + 2);
		uint32_t	cur = rng_u32(2) ? nblocks : rng_u32(2 * nblocks + 2);
		uint32_t	distance = rng_u32(4) == 0 ? UINT32_MAX - rng_u32(1000) : rng_u32(10000);
		uint32_t	frontier = rng_u32(nblocks + 2);
		AnalyzePosition pos;
		AnalyzeWindow w;
		bool		ok;

		model.seq_us_per_block = 1.0 + rng_u32(30);
		model.random_us_per_block = 1.0 + rng_u32(60);
		pos = analyze_position(done, total, nblocks);
		w = analyze_plan_window(done, total, nblocks, cur, distance, frontier, &model);
		ok = window_empty(w) ||
			(w.start >= frontier && w.start >= pos.lower &&
			 (uint64_t) w.end <= (uint64_t) pos.expected + distance &&
			 w.end <= nblocks && w.end <= cur &&
			 analyze_should_stream(total, nblocks, &model));
		if (!ok && bad++ == 0)
			snprintf(first, sizeof(first),
					 "done %lld total %lld nblocks %u cur %u distance %u frontier %u -> [%u, %u)",
					 (long long) done, (long long) total, nblocks, cur, distance,
					 frontier, w.start, w.end);
	}
	CHECKF(bad == 0, "window contract on 200000 random inputs: %d violations, first: %s",
		   bad, first);
}

/* ---------- simulation with the real sampler ---------- */

/*
 * For each step of real ANALYZE scans: the lower bound is at or below the
 * consumer's next pick in >= 99 % of steps, and not far below it (the mean
 * lag is at most 4.5 times the RMS error of the estimate: the bound sits
 * about 3 sigmas below).  A whole-relation sample is exact.
 */
static void
test_simulation_position(void)
{
	static const uint32_t configs[][2] = {
		{60000, 30000}, {258621, 30000}, {1000000, 30000}, {10000, 300},
		{31000, 30000}, {2000, 30}, {5000, 30000}
	};
	uint32_t   *picks = malloc(sizeof(uint32_t) * 30000);

	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++)
	{
		uint32_t	nblocks = configs[c][0];
		uint64_t	steps = 0,
					held = 0,
					exact = 0;
		double		lag = 0.0,
					sqerr = 0.0;

		for (uint32_t seed = 1; seed <= 5; seed++)
		{
			uint32_t	total = sample_blocks(nblocks, (int) configs[c][1],
											  seed * 2654435761u, picks);

			for (uint32_t k = 0; k < total; k++)
			{
				AnalyzePosition pos = analyze_position(k, total, nblocks);
				double		err = (double) picks[k] - pos.expected;

				steps++;
				held += pos.lower <= picks[k];
				exact += pos.lower == picks[k] && pos.expected == picks[k];
				lag += (double) picks[k] - pos.lower;
				sqerr += err * err;
			}
		}
		printf("position vs sampler, %u of %u blocks: lower bound held in %.3f %% of %llu steps, "
			   "RMS error %.1f blocks, mean lag %.1f blocks\n",
			   configs[c][1], nblocks, 100.0 * held / steps,
			   (unsigned long long) steps, sqrt(sqerr / steps), lag / steps);
		if (configs[c][1] >= nblocks)
			CHECKF(exact == steps, "whole relation %u: position exact in %llu of %llu steps",
				   nblocks, (unsigned long long) exact, (unsigned long long) steps);
		else
		{
			CHECKF(held >= 0.99 * steps, "%u of %u: lower bound held in %.3f %% of steps",
				   configs[c][1], nblocks, 100.0 * held / steps);
			CHECKF(lag / steps <= 4.5 * sqrt(sqerr / steps),
				   "%u of %u: mean lag %.1f > 4.5 x RMS error %.1f",
				   configs[c][1], nblocks, lag / steps, sqrt(sqerr / steps));
		}
	}
	free(picks);
}

/*
 * Stream a dense scan as the prefetcher would: every "interval" picks ask
 * for the next window, stream it, move the frontier to its end.  The
 * windows must be ascending and disjoint (frontier monotone), stay within
 * the size bounds when the relation shrinks or grows mid-scan, and the
 * picks must have been streamed before the consumer reads them in >= 99 %
 * of cases.  A sparse scan must stream nothing.
 */
static void
run_stream(const char *name, uint32_t nblocks, int targrows, uint32_t seed,
		   uint32_t interval, uint32_t distance, uint32_t resize_to,
		   bool expect_stream)
{
	uint32_t   *picks = malloc(sizeof(uint32_t) * (size_t) targrows);
	uint8_t    *streamed = calloc(nblocks, 1);
	AnalyzeCostModel model;
	uint32_t	total = sample_blocks(nblocks, targrows, seed, picks);
	uint32_t	frontier = 0;
	uint32_t	cur_nblocks = nblocks;
	uint64_t	covered = 0,
				nstreamed = 0,
				reachable = 0;
	int			bad = 0;

	analyze_cost_model_defaults(&model);
	for (uint32_t k = 0; k < total; k++)
	{
		if (k == total / 2)
			cur_nblocks = resize_to;
		if (k % interval == 0)
		{
			AnalyzeWindow w = analyze_plan_window(k, total, nblocks, cur_nblocks,
												  distance, frontier, &model);

			if (!window_empty(w))
			{
				if (w.start < frontier || w.end > cur_nblocks || w.end > nblocks)
					bad++;
				else
				{
					for (uint32_t b = w.start; b < w.end; b++)
						streamed[b] = 1;
					nstreamed += w.end - w.start;
					frontier = w.end;
				}
			}
		}
		/* the consumer reads picks[k] now; only blocks that exist count */
		if (picks[k] < cur_nblocks)
		{
			reachable++;
			covered += streamed[picks[k]];
		}
	}
	printf("stream %s: %llu of %llu picks streamed ahead, %llu blocks streamed of %u\n",
		   name, (unsigned long long) covered, (unsigned long long) reachable,
		   (unsigned long long) nstreamed, nblocks);
	CHECKF(bad == 0 && nstreamed <= nblocks,
		   "stream %s: %d windows behind the frontier or past the size, %llu blocks streamed",
		   name, bad, (unsigned long long) nstreamed);
	if (expect_stream)
		CHECKF(covered >= 0.99 * reachable, "stream %s: %llu of %llu picks covered",
			   name, (unsigned long long) covered, (unsigned long long) reachable);
	else
		CHECKF(nstreamed == 0, "stream %s: streamed %llu blocks of a sparse sample",
			   name, (unsigned long long) nstreamed);
	free(picks);
	free(streamed);
}

static void
test_simulation_stream(void)
{
	char		name[80];

	for (uint32_t seed = 1; seed <= 3; seed++)
	{
		snprintf(name, sizeof(name), "50 %%, every pick, seed %u", seed);
		run_stream(name, 60000, 30000, seed, 1, 1024, 60000, true);
		snprintf(name, sizeof(name), "50 %%, every 50 picks, seed %u", seed);
		run_stream(name, 60000, 30000, seed, 50, 1024, 60000, true);
	}
	run_stream("50 %, shrinks to 45000 halfway", 60000, 30000, 7, 10, 1024, 45000, true);
	run_stream("50 %, grows to 90000 halfway", 60000, 30000, 8, 10, 1024, 90000, true);
	run_stream("whole relation", 20000, 30000, 9, 10, 256, 20000, true);
	run_stream("11.6 %", 258621, 30000, 10, 10, 1024, 258621, false);
	run_stream("3 %", 1000000, 30000, 11, 10, 1024, 1000000, false);
}

int
main(void)
{
	test_position_ends();
	test_position_monotone();
	test_cost_model();
	test_window_cases();
	test_window_contract();
	test_simulation_position();
	test_simulation_stream();

	printf("%d passed, %d failed\n", npassed, nfailed);
	return nfailed > 0 ? 1 : 0;
}
