/*-------------------------------------------------------------------------
 *
 * prefetch_internal.h
 *	  What the files of the prefetcher share: the target, its parts, and
 *	  the functions one file calls in another.
 *
 * The prefetcher is split along its jobs: prefetcher.c keeps the targets'
 * lifecycle and the monitor's entry points, prefetch_follow.c follows each
 * target's consumer, prefetch_adopt.c starts targets for scans that have
 * not shown yet (announced, forecast), prefetch_reads.c plans, issues and
 * accounts the reads, and prefetch_report.c writes the log line and the
 * live view's rows.  Nothing outside these files includes this header.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_PREFETCH_INTERNAL_H
#define BGWP_PREFETCH_INTERNAL_H

#include "analyze_plan.h"
#include "bgw_prefetch.h"
#include "compat.h"
#include "io_engine.h"
#include "prefetcher.h"
#include "resolver.h"
#include "vacuum_plan.h"
#include "vm_reader.h"

/* Reads the engine keeps in flight at most, all targets together. */
#define BGWP_ENGINE_MAX_INFLIGHT 1024
/* Submitted ranges remembered per target (ahead of the consumer). */
#define BGWP_RANGE_RING 4096
/* Planned blocks fetched from the planner at a time. */
#define BGWP_PLAN_CHUNK 256
/* Segment files a target keeps open at most. */
#define BGWP_OPEN_SEGMENTS 4
/* Blocks the counting planner walks per step at most (about 1 ms). */
#define BGWP_COUNT_BUDGET 131072
/* Initial distance, in planned blocks ahead of the consumer. */
#define BGWP_INITIAL_DISTANCE 256
/* How long a target started from an announcement waits for its scan, ms. */
#define BGWP_AWAIT_START_MS 1000

/*
 * How long a scan waits, after its command left the relation, for its
 * backend to publish its reads (backend_reads.c) before it is reported with
 * the sampled estimate.
 */
#define BGWP_READS_WAIT_MS 1000
/* ... and a forecast one while its worker is on relations not forecast. */
#define BGWP_AWAIT_FORECAST_MS 10000
/*
 * Reads in flight an ANALYZE stream gets at least, unless the depth was set
 * for bgw_prefetch explicitly (tablespace_io_depth, calibration).
 * maintenance_io_concurrency counts core's 8 kB prefetches; a stream reads
 * BGWP_MAX_READ_BLOCKS at a time, and measured here (doc/benchmarks.md) 10
 * such reads in flight streamed a cold table at ~400 MB/s, 32 at the speed
 * of a cold cat of the file.
 */
#define BGWP_STREAM_MIN_DEPTH 32

/*
 * A target follows one command (VACUUM or ANALYZE) on one relation, from
 * the start of its progress reporting to its end, to measure it; whether it
 * also reads ahead for it is the separate flag "prefetch".
 */
typedef enum TargetState
{
	TARGET_RESOLVING,			/* waiting for the resolver worker */
	TARGET_ACTIVE,				/* relation known: planning (and reading) */
	TARGET_MEASURING,			/* measured only: nothing to plan */
	TARGET_FINISHING			/* scanning phase over: no more reads;
								 * waiting for the command's end and for the
								 * reads in flight */
} TargetState;

typedef struct SubmittedRange
{
	BlockNumber start;
	uint16		nblocks;
	bool		completed;
	bool		late;			/* the consumer reached it before it completed */
	bool		in_buffers;		/* handed to the buffer loader */
} SubmittedRange;

typedef struct OpenSegment
{
	int			segno;
	int			fd;
	int			inflight;
} OpenSegment;

typedef struct PrefetchTarget
{
	bool		in_use;
	TargetState state;
	bool		prefetch;		/* reads ahead for the scan */
	bool		prefetched;		/* has been TARGET_ACTIVE with prefetch */
	char		why_not[96];	/* !prefetch: why it is only watched */
	ScanObservation obs;		/* latest observation of the consumer */
	bool		abandoned;		/* ended without the consumer finishing */
	bool		command_over;	/* report and release once reads drained */
	bool		forget;			/* release unreported (switched off) */
	bool		awaiting_start; /* started from an announcement, scan not
								 * seen yet */
	Oid			scanned_after;	/* awaiting_start: the relation its VACUUM
								 * processes before this one, or InvalidOid */
	bool		forecast;		/* awaiting_start: an autovacuum's, from
								 * forecast.c */
	bool		autovacuum;

	/* consumer figures */
	int64		join_block;		/* block the count starts from: 0, or the
								 * consumer's when planning began */
	bool		counted;		/* VACUUM: blocks_read counted from
								 * join_block on */
	int64		last_position;	/* VACUUM: block; ANALYZE: estimated block */
	TimestampTz tracked_at;		/* the target was created */
	TimestampTz since;			/* the command started no earlier */

	/* measuring (prefetcher_sample()) */
	struct PGPROC *proc;		/* the consumer's, for its wait events */
	TimestampTz command_start;	/* first seen on the relation, 0 before */
	TimestampTz command_end;	/* first seen past it, 0 before */
	TimestampTz last_sample;
	int64		read_wait_us;	/* sampled time waiting on data file reads */
	TimestampTz first_seen;		/* the monitor first saw it on the relation */
	int64		cost_delay_wait_us; /* sampled time in the cost-based delay */
	TimestampTz hold_window_start;	/* current cost_limited_depth window */
	int64		hold_window_delay_us;	/* cost_delay_wait_us at its start */
	bool		cost_limited;	/* the scan is cost-limited: reads ahead
								 * within bgw_prefetch.cost_limited_depth */
	TimestampTz cost_limited_since;

	/* relation */
	int			resolve_request;
	ResolvedRelation rel;
	BgwpRelFile relfile;
	BlockNumber nblocks;		/* blocks the consumer will scan */
	BlockNumber cur_nblocks;	/* ANALYZE: the file's size as far as known */

	/* plan */
	VacuumPlanState vplan;		/* VACUUM: the blocks to read next */
	VmReader	vm;
	VacuumPlanState count_plan; /* VACUUM: counts planned blocks, far ahead */
	VmReader	count_vm;
	bool		count_done;
	AnalyzeCostModel cost;
	BlockNumber analyze_frontier;	/* ANALYZE: first block not yet streamed */
	uint32		planbuf[BGWP_PLAN_CHUNK];
	int			planbuf_len;
	int			planbuf_pos;
	bool		plan_exhausted;
	TimestampTz files_checked;	/* last close_unlinked_files() look */
	bool		files_gone;		/* a segment file could not be opened */
	BlockNumber pending_start;	/* a read taken from the plan but not issued */
	uint16		pending_nblocks;
	bool		vm_open;		/* vm is initialised (VACUUM targets) */
	int64		distance;
	double		io_window;		/* reads it may have in flight (pacing) */
	bool		depth_bound;	/* reads stopped at the depth last step */

	/* reads */
	SubmittedRange *ranges;		/* ring, in block order */
	int			ring_head;
	int			ring_count;
	int64		blocks_ahead;	/* submitted blocks ahead of the consumer */
	BlockNumber prefetch_block; /* one past the last block submitted */
	OpenSegment segments[BGWP_OPEN_SEGMENTS];
	int			inflight;
	TimestampTz inflight_since;

	/* read_into = shared_buffers (buffer_loader.c) */
	bool		loader_tried;	/* a loader was asked for */
	bool		loading;		/* it is ours: stop it when done */
	int			handed;			/* ring entries from the head looked at */
	int64		buffers_ahead;	/* blocks handed, not yet passed */

	/* results */
	int64		blocks_planned; /* VACUUM: counted by count_plan */
	ScanReport report;
} PrefetchTarget;

/* Where a followed command is, as far as its target is concerned. */
typedef enum FollowResult
{
	FOLLOW_SCANNING,			/* in (or paused in) its scanning phase */
	FOLLOW_PAST_SCAN,			/* on the relation, past its scanning phase */
	FOLLOW_OVER					/* no longer on the relation */
} FollowResult;

/* prefetcher.c */
extern PrefetchTarget prefetch_targets[BGWP_MAX_TARGETS];
extern IoEngine *prefetch_engine;
extern int	prefetch_targets_started;	/* since prefetcher_take_started() */

/* prefetcher.c: the target lifecycle */
extern bool same_scan(const ScanObservation *a, const ScanObservation *b);
extern void stop_reading(PrefetchTarget *t, const char *why);
extern PrefetchTarget *free_target_for(const ScanObservation *obs);
extern void init_target(PrefetchTarget *t, const ScanObservation *obs,
						TimestampTz since);
extern void command_seen(PrefetchTarget *t, const ScanObservation *obs,
						 TimestampTz now);
extern void activate_target(PrefetchTarget *t);
extern void end_scan_phase(PrefetchTarget *t, bool completed);
extern void forget_target(PrefetchTarget *t);
extern void release_target(PrefetchTarget *t);

/* prefetch_reads.c: relation files, plans, reads, read costs, loading */
extern void close_unlinked_files(PrefetchTarget *t, TimestampTz now);
extern BlockNumber relation_nblocks(PrefetchTarget *t);
extern AnalyzeCostModel *tablespace_cost(Oid spcnode);
extern void calibrate_cost_model(AnalyzeCostModel *model,
								 const ResolvedRelation *rel);
extern void learn_read_cost(const PrefetchTarget *t);
extern void submit_reads(PrefetchTarget *t);

/* prefetch_pacing.c: the prefetch's rate */
extern void prefetch_pacing_step(TimestampTz now);
extern bool prefetch_pacing_take(int blocks);
extern bool prefetch_pacing_completed(const IoCompletion *c);
extern void prefetch_pacing_stop(void);
extern void reap_completions(void);
extern void retire_consumed(PrefetchTarget *t);
extern void note_read_wait(PrefetchTarget *t, int64 position);
extern void count_planned_blocks(PrefetchTarget *t, BlockNumber consumer,
								 uint32 budget, bool fresh_map);
extern int64 shared_buffers_room(void);
extern void load_into_buffers(PrefetchTarget *t, int64 *room);
extern void stop_loader(PrefetchTarget *t);

/* prefetch_adopt.c: scans started before they show, and whose scan a completion is */
extern void start_next_scan(int backend_pid, TimestampTz backend_start,
							Oid dbid, Oid relid);
extern void remember_ended_scan(Oid dbid, Oid relid, PrefetchCommand command,
								int pid, TimestampTz ended);
extern bool scan_recorded_or_followed(Oid relid, PrefetchCommand command,
									  int pid, TimestampTz since);
extern void note_autovacuum_vacuumed(int pid, Oid relid, TimestampTz at);
extern bool followed_by_another_since(Oid dbid, Oid relid,
									  PrefetchCommand command, int pid,
									  TimestampTz since);

/* prefetch_follow.c: following the consumer, sampling it, the cost hold */
extern bool scan_completed(const PrefetchTarget *t);
extern FollowResult follow_consumer(PrefetchTarget *t, TimestampTz now);
extern void update_cost_limited(PrefetchTarget *t, TimestampTz now);
extern void set_cost_limited(PrefetchTarget *t, bool limited, TimestampTz now);

/* prefetch_report.c: the log line and the live view */
extern void log_scan(const PrefetchTarget *t);
extern void log_scan_report(const ScanReport *r, bool autovacuum,
							const char *relname, int pid, bool abandoned);
extern void vacuum_blocks(PrefetchTarget *t);

#endif							/* BGWP_PREFETCH_INTERNAL_H */
