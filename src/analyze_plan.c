/*-------------------------------------------------------------------------
 *
 * analyze_plan.c
 *	  Pure planner of the window of a relation to stream for an ANALYZE.
 *
 * The ANALYZE sampler (Knuth's Algorithm S in sampling.c) picks "total"
 * of the relation's nblocks blocks uniformly and returns them ascending,
 * from a seed the prefetcher cannot know.  The prefetcher only sees how
 * many picks are done, so it cannot prefetch the picks themselves; it can
 * stream a window of the relation ahead of the consumer when the sample is
 * dense enough that reading every block sequentially is cheaper than the
 * consumer's own scattered reads of the picks in the window.
 *
 * Position.  For a uniform sample of n out of N blocks, the j-th smallest
 * pick (1-based) has mean j (N + 1) / (n + 1) and variance
 * j (n - j + 1) (N + 1) (N - n) / ((n + 1)^2 (n + 2)).  After "done" picks
 * the consumer's next pick is j = done + 1.  It is also at least done (the
 * picks are distinct) and at most H = N - n + done (the n - done picks
 * from it on need as many blocks), which bounds both the estimate and the
 * lower bound.
 *
 * The lower bound must be below the pick almost always (a window starting
 * after a block the consumer has still to read leaves it unread) yet not
 * far below (a window starting behind the consumer reads blocks for
 * nothing).  In the middle of the scan the pick is close to normal and
 * mean - 3 sd does both; but for the last picks it has a long lower tail
 * (the last pick is N - 1 minus a roughly exponential gap), and for it
 * mean - 3 sd fails about 2 % of the time.  So the bound is taken from the
 * distance to the end, H - pick, which is a sum of n - done gaps: it is
 * approximated by the Gamma distribution with the same mean,
 * (n - done) (N - n) / (n + 1), and variance, and its upper quantile at
 * ANALYZE_POSITION_SIGMAS is taken from the Wilson-Hilferty cube-root
 * normal approximation.  That is about mean - 3 sd mid-scan and mean -
 * 5.7 sd for the last pick (the exact 0.1 % quantile is mean - 5.9 sd).
 * Against the real sampler the bound holds in about 99.9 % of the steps.
 *
 * Cost.  Streaming a window of w blocks costs w * seq; the consumer's
 * scattered reads of the w * n / N picks in it cost w * (n / N) * random,
 * so streaming pays when the sample density n / N exceeds seq / random;
 * ANALYZE_STREAM_MIN_GAIN raises that threshold so that the model's error
 * near break-even does not make the prefetcher read for nothing.  A sample
 * of the whole relation is read in order anyway, so it always streams.
 *
 * No server headers: the unit tests build this file stand-alone.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "analyze_plan.h"

/*
 * Defaults, until a calibration of the tablespace replaces them, measured
 * cold on the project's machines (bench/results/analyze_*.md): sequential
 * reads at 725 MB/s (11.3 us a block), and 26.7 us of I/O per block of a
 * sparse sample (ANALYZE's cold time less its cached time, per sampled
 * block).  Streaming then pays above a density of 11.3 / 26.7 = 0.42, and
 * is chosen above 0.47 (ANALYZE_STREAM_MIN_GAIN: a 10 % gain at least).
 */
#define BLCKSZ_BYTES 8192.0
#define MEASURED_SEQ_BYTES_PER_S 725e6
#define MEASURED_SPARSE_COLD_S 1.2
#define MEASURED_SPARSE_CACHED_S 0.40
#define MEASURED_SPARSE_SAMPLED 30000.0

void
analyze_cost_model_defaults(AnalyzeCostModel *model)
{
	model->seq_us_per_block = BLCKSZ_BYTES / MEASURED_SEQ_BYTES_PER_S * 1e6;
	model->random_us_per_block =
		(MEASURED_SPARSE_COLD_S - MEASURED_SPARSE_CACHED_S) * 1e6 /
		MEASURED_SPARSE_SAMPLED;
}

/*
 * Exponentially weighted moving average of the per-block cost: recent
 * observations dominate (a weight of 1/8 forgets an old value in a few
 * dozen observations) while one outlier moves the model by only 1/8.
 */
void
analyze_cost_model_observe_stream(AnalyzeCostModel *model,
								  double wall_us, int64_t blocks)
{
	if (blocks <= 0 || !(wall_us > 0.0) || !isfinite(wall_us))
		return;
	model->seq_us_per_block +=
		ANALYZE_COST_ALPHA * (wall_us / (double) blocks - model->seq_us_per_block);
}

/*
 * The density test; see the file header.
 */
bool
analyze_should_stream(int64_t total, uint32_t nblocks,
					  const AnalyzeCostModel *model)
{
	if (nblocks == 0 || total <= 0)
		return false;
	if (total >= (int64_t) nblocks)
		return true;
	return (double) nblocks * model->seq_us_per_block <=
		(1.0 - ANALYZE_STREAM_MIN_GAIN) * (double) total *
		model->random_us_per_block;
}

/*
 * Expected block of the consumer's next pick and its lower bound, from the
 * order-statistic mean and variance in the file header.
 */
AnalyzePosition
analyze_position(int64_t done, int64_t total, uint32_t nblocks)
{
	AnalyzePosition pos = {0, 0};
	double		k,
				n,
				N,
				mean,
				var,
				to_end,
				shape,
				wh,
				lowest,
				highest,
				expected,
				lower;

	if (nblocks == 0 || total <= 0)
		return pos;
	if (done < 0)
		done = 0;
	if (done >= total)
	{
		pos.expected = pos.lower = nblocks;
		return pos;
	}
	if (total >= (int64_t) nblocks)
	{
		/* every block is picked: the next pick is block "done" */
		pos.expected = pos.lower = done < (int64_t) nblocks ?
			(uint32_t) done : nblocks;
		return pos;
	}

	/* 0 <= done < total < nblocks from here */
	k = (double) done;
	n = (double) total;
	N = (double) nblocks;
	lowest = k;
	highest = N - n + k;
	mean = (k + 1.0) * (N + 1.0) / (n + 1.0) - 1.0;
	var = (k + 1.0) * (n - k) * (N + 1.0) * (N - n) /
		((n + 1.0) * (n + 1.0) * (n + 2.0));

	/* Gamma fit of H - pick, upper quantile by Wilson-Hilferty */
	to_end = (n - k) * (N - n) / (n + 1.0);
	shape = to_end * to_end / var;
	wh = 1.0 - 1.0 / (9.0 * shape) +
		ANALYZE_POSITION_SIGMAS / (3.0 * sqrt(shape));

	expected = fmin(fmax(floor(mean + 0.5), lowest), highest);
	lower = fmin(fmax(floor(highest - to_end * wh * wh * wh), lowest),
				 expected);
	pos.expected = (uint32_t) expected;
	pos.lower = (uint32_t) lower;
	return pos;
}

/*
 * The lower bound alone, for callers that track only where the consumer
 * safely is.
 */
int64_t
analyze_position_lower_bound(int64_t done, int64_t total, uint32_t nblocks)
{
	return analyze_position(done, total, nblocks).lower;
}

/*
 * The next window: from the streamed frontier (or the consumer's lower
 * bound, if the consumer has overtaken the stream) to "distance" blocks
 * past the consumer's expected position, clipped to the blocks that can
 * still be sampled and still exist.
 */
AnalyzeWindow
analyze_plan_window(int64_t done, int64_t total, uint32_t nblocks,
					uint32_t cur_nblocks, uint32_t distance, uint32_t frontier,
					const AnalyzeCostModel *model)
{
	AnalyzeWindow window = {0, 0};
	AnalyzePosition pos;
	uint64_t	start,
				end,
				clip;

	if (!analyze_should_stream(total, nblocks, model))
		return window;

	pos = analyze_position(done, total, nblocks);
	clip = nblocks < cur_nblocks ? nblocks : cur_nblocks;
	start = frontier > pos.lower ? frontier : pos.lower;
	end = (uint64_t) pos.expected + distance;
	if (end > clip)
		end = clip;
	if (start < end)
	{
		window.start = (uint32_t) start;
		window.end = (uint32_t) end;
	}
	return window;
}
