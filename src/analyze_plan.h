/*-------------------------------------------------------------------------
 *
 * analyze_plan.h
 *	  Pure planner of the window of a relation to stream for an ANALYZE.
 *
 * A PostgreSQL 15 ANALYZE (acquire_sample_rows() with the BlockSampler of
 * sampling.c) reads targblocks = min(300 * statistics target, nblocks)
 * blocks chosen uniformly at random, in ascending order, from a seed the
 * prefetcher cannot know.  All it exposes is pg_stat_progress_analyze's
 * sample_blks_total (targblocks) and sample_blks_scanned (blocks done).
 * The prefetcher therefore cannot name the sampled blocks; what it can do
 * is read a whole window of the relation ahead of the consumer with large
 * sequential reads, when reading every block of the window costs less than
 * the consumer's scattered reads of the sampled blocks in it.  This header
 * gives the pieces of that decision: where the consumer is, whether
 * streaming pays, and which window to read next.  Plain C, no server
 * headers, so that test/unit can check it against a copy of the sampler.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_ANALYZE_PLAN_H
#define BGWP_ANALYZE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Where the consumer is: the block of its next pick (pick number "done",
 * counting from 0), which it is reading or about to read.
 */
typedef struct AnalyzePosition
{
	uint32_t	expected;		/* expected block of the next pick */
	uint32_t	lower;			/* bound at or below the next pick in
								 * ~99.9 % of cases */
} AnalyzePosition;

/*
 * I/O costs in microseconds of wall time per 8 kB block: the inverse of a
 * throughput, not the latency of one request.
 */
typedef struct AnalyzeCostModel
{
	double		seq_us_per_block;	/* streaming with large sequential
									 * reads */
	double		random_us_per_block;	/* the consumer's scattered reads,
										 * per sampled block */
} AnalyzeCostModel;

/* Blocks [start, end) of the relation; empty when end <= start */
typedef struct AnalyzeWindow
{
	uint32_t	start;
	uint32_t	end;
} AnalyzeWindow;

/*
 * Streaming must save at least this fraction of the scattered reads' cost,
 * so that near the break-even point, where the model's error decides, the
 * prefetcher leaves the scan alone.
 */
#define ANALYZE_STREAM_MIN_GAIN 0.10

/* Standard deviations between the expected position and its lower bound */
#define ANALYZE_POSITION_SIGMAS 3.0

/* Weight of a new observation in analyze_cost_model_observe_stream() */
#define ANALYZE_COST_ALPHA 0.125

/* The defaults measured on the project's machines (see analyze_plan.c) */
extern void analyze_cost_model_defaults(AnalyzeCostModel *model);

/*
 * Fold one observation of streaming into seq_us_per_block: "blocks" blocks
 * completed during wall_us microseconds of wall time with reads in flight
 * (with only per-request latencies at hand, pass latency / depth).  The
 * scattered reads' cost stays at its default or calibrated value: the
 * prefetcher never times the consumer's own reads.  Observations with no
 * blocks or a non-positive or non-finite time are ignored.
 */
extern void analyze_cost_model_observe_stream(AnalyzeCostModel *model,
											  double wall_us, int64_t blocks);

/*
 * Does streaming pay for a sample of total blocks out of nblocks?  Always
 * when the sample is the whole relation (total >= nblocks > 0); otherwise
 * when nblocks * seq <= (1 - ANALYZE_STREAM_MIN_GAIN) * total * random.
 */
extern bool analyze_should_stream(int64_t total, uint32_t nblocks,
								  const AnalyzeCostModel *model);

/*
 * The consumer's position from sample_blks_scanned (done),
 * sample_blks_total (total) and the relation size at ANALYZE start
 * (nblocks).  Finished (done >= total > 0) gives nblocks; total <= 0
 * (progress not reported yet) or nblocks == 0 gives 0; a whole-relation
 * sample (total >= nblocks) gives exactly done.
 */
extern AnalyzePosition analyze_position(int64_t done, int64_t total,
										uint32_t nblocks);

/* analyze_position().lower */
extern int64_t analyze_position_lower_bound(int64_t done, int64_t total,
											uint32_t nblocks);

/*
 * The next window to stream: start >= max(frontier, position.lower),
 * end <= min(position.expected + distance, nblocks, cur_nblocks).
 * cur_nblocks is the relation's current size (blocks past nblocks are
 * never sampled, blocks past cur_nblocks no longer exist); frontier is the
 * end of what was streamed already.  Empty when the scan is finished, the
 * window is, or streaming does not pay.
 */
extern AnalyzeWindow analyze_plan_window(int64_t done, int64_t total,
										 uint32_t nblocks,
										 uint32_t cur_nblocks,
										 uint32_t distance,
										 uint32_t frontier,
										 const AnalyzeCostModel *model);

#endif							/* BGWP_ANALYZE_PLAN_H */
