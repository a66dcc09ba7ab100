/*-------------------------------------------------------------------------
 *
 * prefetcher.c
 *	  Serving watched scans: planning, pacing, issuing and accounting reads.
 *
 * The monitor hands every VACUUM/ANALYZE it discovers to this file, which
 * keeps one PrefetchTarget per scan and, at every step of the monitor's
 * loop:
 *	- re-reads the consumer's progress and ends the target when its scan is
 *	  over (command finished, phase moved on, backend gone, files dropped);
 *	- waits for the resolver worker to tell the relation's files and depth;
 *	- takes the next blocks from the target's plan (the VACUUM planner over
 *	  the current visibility map, or the ANALYZE window planner), coalesces
 *	  adjacent blocks into reads of up to BGWP_MAX_READ_BLOCKS, and hands them
 *	  to the single I/O engine while the target is less than its distance
 *	  ahead, has fewer reads in flight than its I/O window and its
 *	  tablespace fewer than its depth;
 *	- reaps completions and accounts for them: read time, and "late" blocks
 *	  the consumer reached before their read completed.
 *
 * Pacing follows the idea of read_stream.c: the distance (in planned blocks
 * ahead of the consumer) starts small and doubles whenever a read completes
 * late, up to bgw_prefetch.max_distance, so a slow consumer costs little
 * page cache and a fast one gets a deep window.  Reads never go behind the
 * consumer or outside the plan.  How many reads are in flight at once is
 * paced the same way (the I/O window, widen_io_window()): the depth is a
 * ceiling, and reads beyond what the scan consumes would only queue in the
 * device ahead of other processes' reads and WAL flushes.
 *
 * When a target ends, what it did is added to pg_stat_prefetch and, past
 * bgw_prefetch.log_min_duration, logged.  Its reads still in flight are
 * drained before its files are closed (the engine reads into them).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "analyze_plan.h"
#include "bgw_prefetch.h"
#include "buffer_loader.h"
#include "compat.h"
#include "forecast.h"
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
	TargetObservation obs;		/* latest observation of the consumer */
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
	int64		join_block;		/* consumer's position when planning began */
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

/*
 * What reads cost in each tablespace, for the ANALYZE decision: seeded with
 * the measured defaults; the sequential cost is then learned from finished
 * ANALYZE streams.  The random cost is the consumer's own scattered reads,
 * which the engine never performs, so it is not learned here (the engine's
 * deep io_uring reads would make it look several times cheaper than what
 * the ANALYZE backend gets).  An observation much cheaper than the default
 * came from the page cache and says nothing about the storage: ignored.
 */
typedef struct TablespaceCost
{
	Oid			spcnode;
	AnalyzeCostModel model;
} TablespaceCost;

#define BGWP_COST_TABLESPACES 32
/* An observation below this fraction of the default cost is a cache hit. */
#define BGWP_CACHED_COST_FRACTION 0.2

static TablespaceCost tablespace_costs[BGWP_COST_TABLESPACES];
static int	ntablespace_costs = 0;	/* entries ever created */

static PrefetchTarget targets[BGWP_MAX_TARGETS];
static IoEngine *engine = NULL;
static const char *fallback_reason = NULL;
static MemoryContext prefetch_context = NULL;

/* New targets since the last prefetcher_take_started() */
static int	targets_started = 0;

static void activate_target(PrefetchTarget *t);
static void end_scan_phase(PrefetchTarget *t, bool completed);
static void finish_target(PrefetchTarget *t, TimestampTz now);
static BlockNumber relation_nblocks(PrefetchTarget *t);
static void release_target(PrefetchTarget *t);
static void count_planned_blocks(PrefetchTarget *t, BlockNumber consumer,
								 uint32 budget);
static void stop_loader(PrefetchTarget *t);
static void start_next_scan(int backend_pid, TimestampTz backend_start,
							Oid dbid, Oid relid);
static void widen_io_window(PrefetchTarget *t);
static bool followed_by_another_since(Oid dbid, Oid relid,
									  PrefetchCommand command, int pid,
									  TimestampTz since);
static void remember_ended_scan(const PrefetchTarget *t, TimestampTz ended);
static void narrow_io_window(PrefetchTarget *t);

/*
 * Create the engine with the configured method.  The fallback reason, if
 * any, is logged once per engine creation (each reload that changes
 * io_method creates a new one).
 */
void
prefetcher_start(void)
{
	loader_stop_all();			/* no target yet: any loader is an orphan */
	if (prefetch_context == NULL)
		prefetch_context = AllocSetContextCreate(TopMemoryContext,
												 "bgw_prefetch targets",
												 ALLOCSET_DEFAULT_SIZES);
	engine = io_engine_create((IoMethod) bgwp_io_method,
							  BGWP_ENGINE_MAX_INFLIGHT,
							  BGWP_MAX_READ_BLOCKS * BLCKSZ,
							  &fallback_reason);
	if (engine == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("bgw_prefetch: could not create the I/O engine")));
	if (fallback_reason != NULL)
		ereport(LOG,
				(errmsg("bgw_prefetch: io_uring is not available, prefetching with posix_fadvise"),
				 errdetail("%s", fallback_reason)));
}

/*
 * End every target and destroy the engine (which waits for reads still in
 * flight: they write into its scratch buffer).  With report, each target's
 * scan is added to pg_stat_prefetch as abandoned; without, targets are just
 * dropped -- that is the path taken after an ERROR, which must not risk
 * another one.
 */
void
prefetcher_stop(bool report)
{
	if (engine != NULL)
		io_engine_destroy(engine);
	engine = NULL;
	fallback_reason = NULL;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		PrefetchTarget *t = &targets[i];

		if (!t->in_use)
			continue;
		t->inflight = 0;		/* the engine is gone, and its reads */
		for (int s = 0; s < BGWP_OPEN_SEGMENTS; s++)
			t->segments[s].inflight = 0;
		if (report)
		{
			/* recorded as it stands: its command is followed no further */
			t->abandoned = true;
			end_scan_phase(t, false);
			finish_target(t, GetCurrentTimestamp());
		}
		else
			release_target(t);
	}
	if (prefetch_context != NULL)
		MemoryContextReset(prefetch_context);
}

int
prefetcher_event_fd(void)
{
	return engine ? io_engine_event_fd(engine) : -1;
}

const char *
prefetcher_io_method(void)
{
	return engine ? io_method_name(io_engine_method(engine)) : "none";
}

const char *
prefetcher_fallback_reason(void)
{
	return fallback_reason;
}

int
prefetcher_active_targets(void)
{
	int			n = 0;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (targets[i].in_use)
			n++;
	return n;
}

static bool
same_scan(const TargetObservation *a, const TargetObservation *b)
{
	return a->slot == b->slot && a->pid == b->pid &&
		a->proc_start == b->proc_start && a->relid == b->relid &&
		a->command == b->command;
}

/*
 * Does the configuration (possibly just reloaded) ask for such a scan to be
 * prefetched for?  If not, *why says why, for the view; the scan is then
 * still followed and measured (unless bgw_prefetch.enabled is off), so that
 * prefetch off and on can be compared in pg_stat_prefetch.
 */
static bool
prefetch_wanted(PrefetchCommand command, bool autovacuum, const char **why)
{
	if (bgwp_targets == PREFETCH_TARGETS_AUTOVACUUM && !autovacuum)
		*why = "bgw_prefetch.targets is autovacuum";
	else if (command == PREFETCH_CMD_VACUUM && !bgwp_vacuum)
		*why = "bgw_prefetch.vacuum is off";
	else if (command == PREFETCH_CMD_ANALYZE && !bgwp_analyze)
		*why = "bgw_prefetch.analyze is off";
	else
		return true;
	return false;
}

/* Decide, at a target's start, whether it reads ahead. */
static void
set_prefetch(PrefetchTarget *t)
{
	const char *why = NULL;

	t->prefetch = prefetch_wanted(t->obs.command, t->autovacuum, &why);
	if (!t->prefetch)
		strlcpy(t->why_not, why, sizeof(t->why_not));
}

/* The target will not read ahead from now on, for the reason why. */
static void
stop_reading(PrefetchTarget *t, const char *why)
{
	if (!t->prefetch)
		return;
	t->prefetch = false;
	if (!t->prefetched)
		strlcpy(t->why_not, why, sizeof(t->why_not));
}

/*
 * A free target slot for the scan obs, or NULL if it is followed already or
 * all slots are busy (then the scan goes unseen).
 */
static PrefetchTarget *
free_target_for(const TargetObservation *obs)
{
	PrefetchTarget *t = NULL;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		if (targets[i].in_use && !targets[i].command_over &&
			same_scan(&targets[i].obs, obs))
			return NULL;
		if (!targets[i].in_use && t == NULL)
			t = &targets[i];
	}
	return t;
}

/*
 * Set up a target for the scan obs.  since is a moment no later than the
 * command's start, for telling a completed command from a cancelled one
 * (targets_completed_since()).
 */
static void
init_target(PrefetchTarget *t, const TargetObservation *obs, TimestampTz since)
{
	memset(t, 0, sizeof(*t));
	for (int s = 0; s < BGWP_OPEN_SEGMENTS; s++)
		t->segments[s].fd = -1;
	t->in_use = true;
	t->obs = *obs;
	t->autovacuum = obs->autovacuum;
	/* ANALYZE's block is estimated once the relation size is known */
	t->last_position = obs->command == PREFETCH_CMD_VACUUM ? obs->position : 0;
	t->tracked_at = GetCurrentTimestamp();
	t->since = since;
	t->report.dbid = obs->dbid;
	t->report.relid = obs->relid;
	t->report.command = obs->command;
	t->report.joined_block = -1;
	t->distance = BGWP_INITIAL_DISTANCE;
	t->io_window = 1;
	t->resolve_request = -1;
	set_prefetch(t);
}

/*
 * The command is running on the target's relation as of now: start its
 * clock if not started.  An autovacuum worker reports each table as a new
 * statement just before it opens it, so its statement start is the
 * command's start, more precisely than the monitor's polling.
 */
static void
command_seen(PrefetchTarget *t, const TargetObservation *obs, TimestampTz now)
{
	if (t->command_start != 0)
		return;
	t->command_start = now;
	if (obs->autovacuum && obs->activity_start >= t->since &&
		obs->activity_start < now)
		t->command_start = obs->activity_start;
	t->last_sample = now;
}

/*
 * Start following a scan the monitor discovered, unless it is followed
 * already.
 */
void
prefetcher_track(const TargetObservation *obs)
{
	PrefetchTarget *t;
	TimestampTz now;

	if (!bgwp_enabled)
		return;
	t = free_target_for(obs);
	if (t == NULL)
		return;
	now = GetCurrentTimestamp();
	/* the statement started before the command, and was seen running it */
	init_target(t, obs, obs->activity_start != 0 ? Min(obs->activity_start, now) : now);
	command_seen(t, obs, now);
	targets_started++;
	/* the relation its VACUUM scans next can be planned before it starts */
	if (!obs->autovacuum && obs->command == PREFETCH_CMD_VACUUM)
		start_next_scan(obs->pid, obs->proc_start, obs->dbid, obs->relid);

	/*
	 * An ANALYZE that is only watched needs nothing of its relation: its
	 * progress tells the blocks it reads.  A VACUUM's blocks are counted
	 * over the visibility map, which needs the relation's file.
	 */
	if (!t->prefetch && obs->command == PREFETCH_CMD_ANALYZE)
	{
		t->state = TARGET_MEASURING;
		return;
	}

	/*
	 * A manual command's backend may have resolved the relation already, and
	 * autovacuum's forecaster may have.
	 */
	if (obs->autovacuum ?
		forecast_lookup(obs->dbid, obs->relid, obs->command, &t->rel) :
		resolver_take_announced(obs->dbid, obs->relid, obs->command, obs->pid,
								obs->proc_start, &t->rel))
	{
		elog(DEBUG1, "bgw_prefetch: relation %u resolved already, consumer at block %lld",
			 obs->relid, (long long) obs->position);
		activate_target(t);
		return;
	}

	t->resolve_request = resolver_start(obs->dbid, obs->relid, obs->command,
										obs->autovacuum, obs->slot, obs->pid);
	if (t->resolve_request < 0)
	{
		t->state = TARGET_MEASURING;
		stop_reading(t, "no worker to resolve the relation");
	}
	else
		t->state = TARGET_RESOLVING;
}

/*
 * Start following a relation a manual VACUUM announced, from block 0,
 * before its scan appears in progress reporting: the relation it scans
 * first (resolver_take_first_scans()), or the one it scans right after a
 * followed one (start_next_scan()).  Its blocks are counted over the
 * visibility map now, before the VACUUM can set a bit, and, if it is
 * prefetched for, read ahead.  The target waits for the scan
 * (awaiting_start), having read no more than its distance: while its VACUUM
 * is still processing the relation before it, and else at most
 * BGWP_AWAIT_START_MS; it is adopted by the scan when that shows up with the
 * same relation size.  Returns true if it is a new target.
 */
static bool
start_announced_target(const AnnouncedScan *a, TimestampTz forecast_since)
{
	bool		forecast = forecast_since != 0;
	TargetObservation obs;
	TargetObservation now_obs;
	PrefetchTarget *t;
	TimestampTz since;

	if (!bgwp_enabled)
		return false;
	memset(&obs, 0, sizeof(obs));
	obs.slot = a->backend_slot;
	obs.pid = a->backend_pid;
	obs.proc_start = a->backend_start;
	obs.dbid = a->dbid;
	obs.relid = a->relid;
	obs.command = PREFETCH_CMD_VACUUM;
	obs.phase = SCAN_PHASE_SCANNING;
	obs.autovacuum = forecast;
	t = free_target_for(&obs);
	if (t == NULL)
		return false;

	/*
	 * A manual VACUUM's statement started before it announced the relation:
	 * a VACUUM of the relation that completed since is this one.  An
	 * autovacuum worker's relation comes after the one it was seen on (or
	 * after its start): a VACUUM of it completed since then is the worker's,
	 * even if the forecast comes too late to see it.
	 */
	since = forecast ? forecast_since :
		targets_statement_start(obs.slot, obs.pid);
	if (since == 0)
		return false;			/* the backend is gone */
	init_target(t, &obs, since);
	t->awaiting_start = true;
	t->forecast = forecast;
	t->scanned_after = a->scanned_after;
	t->rel = a->rel;

	/*
	 * The monitor may come late: if the VACUUM is on the relation already,
	 * follow it from where it is, as a discovered scan; if it is past it,
	 * the scan is over.
	 */
	if (targets_observe(obs.slot, obs.pid, &now_obs) == OBSERVE_WATCHED &&
		same_scan(&now_obs, &obs))
	{
		t->obs = now_obs;
		t->last_position = now_obs.position;
		t->awaiting_start = false;
		command_seen(t, &now_obs, GetCurrentTimestamp());
	}
	else if (forecast &&
			 followed_by_another_since(a->dbid, a->relid, PREFETCH_CMD_VACUUM,
									   obs.pid, since))
	{
		/* another worker has vacuumed it since: the forecast was wrong */
		release_target(t);
		return false;
	}
	else if (targets_completed_since(a->dbid, a->relid, PREFETCH_CMD_VACUUM, since))
	{
		/* recorded, though nothing of it could be measured */
		BGWP_RELFILE_SET(t->relfile, t->rel.spcnode, t->rel.dbnode,
						 t->rel.relfilenode);
		t->nblocks = relation_nblocks(t);
		if (t->nblocks == 0 || t->nblocks < (BlockNumber) bgwp_min_relation_size)
		{
			release_target(t);	/* too small to be followed */
			return false;
		}
		t->last_position = t->nblocks;
		t->awaiting_start = false;
		t->command_over = true;
		t->state = TARGET_MEASURING;
		t->prefetch = false;
		strlcpy(t->why_not, "over before the monitor saw it start",
				sizeof(t->why_not));
		targets_started++;
		return true;
	}
	activate_target(t);
	/* an empty relation (a TOAST table with no value yet) has nothing to plan */
	if (t->state != TARGET_ACTIVE || t->nblocks == 0 ||
		t->nblocks < (BlockNumber) bgwp_min_relation_size)
	{
		release_target(t);		/* nothing read yet */
		return false;
	}
	elog(DEBUG1, "bgw_prefetch: relation %u %s, following from block %lld of %u",
		 a->relid, forecast ? "forecast for autovacuum" : "announced by its VACUUM",
		 (long long) t->join_block, t->nblocks);
	targets_started++;
	return true;
}

/*
 * Start the relation a manual VACUUM scans first, and the one it scans
 * after that.
 */
void
prefetcher_start_announced(const AnnouncedScan *a)
{
	(void) start_announced_target(a, 0);
	start_next_scan(a->backend_pid, a->backend_start, a->dbid, a->relid);
}

/*
 * The VACUUM of backend (pid, start) is being served on relid: start the
 * relation it announced it scans next (a TOAST table after its table), so
 * that it is planned from block 0 while the VACUUM is still on relid.  One
 * relation ahead only: each is started when the one before it is served.
 */
static void
start_next_scan(int backend_pid, TimestampTz backend_start, Oid dbid, Oid relid)
{
	AnnouncedScan next;

	if (resolver_take_next_scan(backend_pid, backend_start, dbid, relid, &next))
		(void) start_announced_target(&next, 0);
}

/*
 * What the prefetcher remembers of each autovacuum worker, to start the
 * relation it is expected to vacuum next (forecast.c) before it gets
 * there: the last relation it was seen vacuuming (autovacuum processes its
 * list in order), and whether that next relation was started already.
 */
typedef struct AutovacuumWorkerState
{
	int			pid;			/* 0: free */
	TimestampTz proc_start;
	Oid			after;			/* last relation seen vacuumed, or invalid */
	TimestampTz after_start;	/* when it was seen starting on it */
	bool		started;		/* the relation after it was started */
	bool		seen;			/* still there at this look */
} AutovacuumWorkerState;

static AutovacuumWorkerState autovacuum_workers[BGWP_MAX_TARGETS];

static AutovacuumWorkerState *
autovacuum_worker_state(const TargetObservation *w)
{
	AutovacuumWorkerState *free_state = NULL;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		AutovacuumWorkerState *st = &autovacuum_workers[i];

		if (st->pid == w->pid && st->proc_start == w->proc_start)
			return st;
		if (st->pid == 0 && free_state == NULL)
			free_state = st;
	}
	if (free_state != NULL)
	{
		memset(free_state, 0, sizeof(*free_state));
		free_state->pid = w->pid;
		free_state->proc_start = w->proc_start;
	}
	return free_state;
}

/*
 * Start, for every autovacuum worker (workers[], from
 * targets_autovacuum_workers()), the relation it is expected to vacuum
 * next, from block 0: the forecast's first relation for a worker that has
 * vacuumed none yet, and else the one after the relation it vacuums now.
 * It waits for the worker as a manual VACUUM's next relation does
 * (awaiting_start), so that a fast autovacuum is counted and read ahead
 * from its first block.  One relation ahead of each worker only, and once
 * per relation: a forecast that missed is not tried again.  Returns how
 * many targets it started.
 */
int
prefetcher_forecast(const TargetObservation *workers, int nworkers)
{
	int			started = 0;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		autovacuum_workers[i].seen = false;
	for (int w = 0; w < nworkers && bgwp_enabled; w++)
	{
		AutovacuumWorkerState *st = autovacuum_worker_state(&workers[w]);
		Oid			busy[BGWP_MAX_TARGETS];
		int			nbusy = 0;
		AnnouncedScan next;

		if (st == NULL)
			continue;
		st->seen = true;
		for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		{
			PrefetchTarget *t = &targets[i];

			if (!t->in_use || t->command_over || !t->autovacuum ||
				t->obs.command != PREFETCH_CMD_VACUUM)
				continue;
			if (t->obs.pid != workers[w].pid ||
				t->obs.proc_start != workers[w].proc_start)
			{
				/* another worker's, or expected to be */
				if (t->obs.dbid == workers[w].dbid)
					busy[nbusy++] = t->obs.relid;
			}
			else if ((!t->awaiting_start || t->command_start != 0) &&
					 t->obs.relid != st->after)
			{
				/*
				 * It is on this one (seen by the sampler, perhaps not yet
				 * adopted by a step): the next one is after it.
				 */
				st->after = t->obs.relid;
				st->after_start = t->command_start != 0 ? t->command_start : t->since;
				st->started = false;
			}
		}
		if (st->started ||
			!forecast_next(workers[w].dbid, st->after, busy, nbusy, &next))
			continue;
		next.backend_slot = workers[w].slot;
		next.backend_pid = workers[w].pid;
		next.backend_start = workers[w].proc_start;
		if (start_announced_target(&next, OidIsValid(st->after) ?
								   st->after_start : workers[w].proc_start))
			started++;
		st->started = true;
	}
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (!autovacuum_workers[i].seen)
			autovacuum_workers[i].pid = 0;
	return started;
}

/*
 * How many targets were started since the last call (for the monitor's
 * targets_served).
 */
int
prefetcher_take_started(void)
{
	int			n = targets_started;

	targets_started = 0;
	return n;
}

/* ---------------- relation files ---------------- */

/*
 * The fd of segment segno of the target's main fork, opened on demand.
 * Returns -1 if it cannot be opened (the relation was dropped or
 * truncated): the caller abandons or stops.
 */
static int
segment_fd(PrefetchTarget *t, int segno)
{
	OpenSegment *victim = NULL;
	char	   *path;
	char	   *segpath;

	for (int s = 0; s < BGWP_OPEN_SEGMENTS; s++)
		if (t->segments[s].fd >= 0 && t->segments[s].segno == segno)
			return t->segments[s].fd;
	/* reuse a closed slot, else one with no read in flight */
	for (int s = 0; s < BGWP_OPEN_SEGMENTS && victim == NULL; s++)
		if (t->segments[s].fd < 0)
			victim = &t->segments[s];
	for (int s = 0; s < BGWP_OPEN_SEGMENTS && victim == NULL; s++)
		if (t->segments[s].inflight == 0)
			victim = &t->segments[s];
	if (victim == NULL)
	{
		errno = EMFILE;			/* every open segment has reads in flight:
								 * retry later, as when out of descriptors */
		return -1;
	}
	if (victim->fd >= 0)
		close(victim->fd);
	victim->fd = -1;

	path = bgwp_rel_path(t->relfile, MAIN_FORKNUM);
	segpath = segno == 0 ? pstrdup(path) : psprintf("%s.%d", path, segno);
	victim->fd = BasicOpenFile(segpath, O_RDONLY | PG_BINARY);

	/*
	 * A VACUUM plan skips all-visible ranges: read exactly the planned
	 * blocks, without the kernel's readahead, which would otherwise read the
	 * skipped ranges too (up to read_ahead_kb past every read) and take disk
	 * time from the planned blocks and the VACUUM's own WAL flushes.  An
	 * ANALYZE stream is sequential and keeps the readahead.
	 */
	if (victim->fd >= 0 && t->obs.command == PREFETCH_CMD_VACUUM)
		(void) posix_fadvise(victim->fd, 0, 0, POSIX_FADV_RANDOM);
	victim->segno = segno;
	victim->inflight = 0;
	pfree(segpath);
	pfree(path);
	return victim->fd;
}

static OpenSegment *
segment_of(PrefetchTarget *t, int segno)
{
	for (int s = 0; s < BGWP_OPEN_SEGMENTS; s++)
		if (t->segments[s].fd >= 0 && t->segments[s].segno == segno)
			return &t->segments[s];
	return NULL;
}

/*
 * Size of the main fork in blocks, from its segment files.
 */
static BlockNumber
relation_nblocks(PrefetchTarget *t)
{
	BlockNumber nblocks = 0;

	for (int segno = 0;; segno++)
	{
		int			fd = segment_fd(t, segno);
		off_t		size;

		if (fd < 0)
			break;
		size = lseek(fd, 0, SEEK_END);
		if (size < 0)
			break;
		nblocks += size / BLCKSZ;
		if (size < (off_t) RELSEG_SIZE * BLCKSZ)
			break;
	}
	return nblocks;
}

/* ---------------- planning ---------------- */

/*
 * Next planned block at or after the consumer, or InvalidBlockNumber when
 * the plan has nothing more now.
 */
static BlockNumber
next_planned_block(PrefetchTarget *t, BlockNumber consumer)
{
	for (;;)
	{
		bool		overtaken = false;

		while (t->planbuf_pos < t->planbuf_len)
		{
			BlockNumber blk = t->planbuf[t->planbuf_pos];

			if (blk > consumer || (blk == consumer && t->obs.command == PREFETCH_CMD_ANALYZE))
				break;
			t->planbuf_pos++;	/* the consumer is already there */
			overtaken = true;
		}

		/*
		 * A VACUUM that went past the planner itself: re-join it where it
		 * is, as when it was first joined.  Walking on from behind would
		 * decide the ranges around it on visibility-map bits the VACUUM has
		 * just set.
		 */
		if (t->obs.command == PREFETCH_CMD_VACUUM && !t->plan_exhausted &&
			t->planbuf_pos >= t->planbuf_len &&
			vacuum_plan_position(&t->vplan) <= consumer && consumer > 0)
		{
			vacuum_plan_init_at(&t->vplan, t->nblocks, t->rel.skip_mode,
								consumer + 1);
			overtaken = true;
		}

		/*
		 * The consumer reached planned blocks before they were even issued:
		 * the prefetch is too close behind, look further ahead.
		 */
		if (overtaken)
		{
			t->distance = Min(t->distance * 2, (int64) bgwp_max_distance);
			widen_io_window(t);
		}
		if (t->planbuf_pos < t->planbuf_len)
			return t->planbuf[t->planbuf_pos];
		if (t->plan_exhausted)
			return InvalidBlockNumber;

		t->planbuf_pos = 0;
		if (t->obs.command == PREFETCH_CMD_VACUUM)
		{
			t->planbuf_len = vacuum_plan_next(&t->vplan, vm_reader_bits, &t->vm,
											  t->planbuf, BGWP_PLAN_CHUNK);
			if (t->planbuf_len == 0)
				t->plan_exhausted = true;
		}
		else
		{
			AnalyzeWindow w;

			w = analyze_plan_window(t->obs.position, t->obs.total, t->nblocks,
									t->cur_nblocks, (uint32) t->distance,
									t->analyze_frontier, &t->cost);
			t->planbuf_len = 0;
			for (BlockNumber b = w.start; b < w.end && t->planbuf_len < BGWP_PLAN_CHUNK; b++)
				t->planbuf[t->planbuf_len++] = b;
			if (t->planbuf_len == 0)
				return InvalidBlockNumber;	/* nothing worth reading now */
			t->analyze_frontier = t->planbuf[t->planbuf_len - 1] + 1;
		}
	}
}

/* ---------------- cost model ---------------- */

static AnalyzeCostModel *
tablespace_cost(Oid spcnode)
{
	TablespaceCost *tc;

	for (int i = 0; i < Min(ntablespace_costs, BGWP_COST_TABLESPACES); i++)
		if (tablespace_costs[i].spcnode == spcnode)
			return &tablespace_costs[i].model;
	/* a new tablespace; when full, recycle entries in turn, oldest first */
	tc = &tablespace_costs[ntablespace_costs++ % BGWP_COST_TABLESPACES];
	tc->spcnode = spcnode;
	analyze_cost_model_defaults(&tc->model);
	return &tc->model;
}

/*
 * A calibration of the tablespace is on record: its random cost is the
 * consumer's (measured at the depth ANALYZE's own prefetch gets) and is
 * taken as is; its sequential cost replaces the default once, after which
 * finished streams refine it.
 */
static void
calibrate_cost_model(AnalyzeCostModel *model, const ResolvedRelation *rel)
{
	AnalyzeCostModel defaults;

	analyze_cost_model_defaults(&defaults);
	model->random_us_per_block = rel->random_us_per_block;
	if (model->seq_us_per_block == defaults.seq_us_per_block)
		model->seq_us_per_block = rel->seq_us_per_block;
}

/*
 * Teach the tablespace's cost model what a finished ANALYZE stream cost.
 */
static void
learn_read_cost(const PrefetchTarget *t)
{
	AnalyzeCostModel defaults;
	double		per_block;

	if (t->obs.command != PREFETCH_CMD_ANALYZE ||
		t->report.blocks_prefetched <= 0 || t->report.prefetch_time_us <= 0 ||
		io_engine_method(engine) != IO_METHOD_IO_URING)
		return;					/* nothing streamed, or fadvise: no read timed */
	analyze_cost_model_defaults(&defaults);
	per_block = (double) t->report.prefetch_time_us / t->report.blocks_prefetched;
	if (per_block < BGWP_CACHED_COST_FRACTION * defaults.seq_us_per_block)
		return;
	analyze_cost_model_observe(tablespace_cost(BGWP_RELFILE_SPC(t->relfile)),
							   ANALYZE_READ_SEQUENTIAL,
							   (double) t->report.prefetch_time_us,
							   t->report.blocks_prefetched);
}

/* ---------------- reads ---------------- */

/*
 * Pacing: how many reads a target keeps in flight.  The tablespace's depth
 * is a ceiling, not a goal: reads beyond what the scan consumes queue in
 * the device ahead of every other process's reads and WAL flushes, and a
 * scan of a table that is mostly skipped or already cached needs few.  So
 * a VACUUM's target starts with half its depth in flight, takes one more
 * whenever its scan waited on a read or went past blocks not yet issued
 * (late), and gives one back per window's worth of ranges its scan found
 * ready, as TCP's congestion window moves.  It settles where about one
 * range in io_window is late: the fewest reads in flight that keep the
 * scan fed.  Streams that read every block of a window (ANALYZE, the
 * buffer loader) go at their depth from the start.
 */
static void
widen_io_window(PrefetchTarget *t)
{
	t->io_window = Min(t->io_window + 1, (double) Max(t->rel.io_depth, 1));
}

static void
narrow_io_window(PrefetchTarget *t)
{
	t->io_window = Max(t->io_window - 1 / t->io_window, 1.0);
}

static int
tablespace_inflight(Oid spcnode)
{
	int			n = 0;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (targets[i].in_use && BGWP_RELFILE_SPC(targets[i].relfile) == spcnode)
			n += targets[i].inflight;
	return n;
}

/*
 * Issue reads for one target while it is within its distance and its
 * tablespace within its depth.
 */
static void
submit_reads(PrefetchTarget *t)
{
	BlockNumber consumer = (BlockNumber) t->last_position;

	if (t->obs.command == PREFETCH_CMD_VACUUM)
		vm_reader_invalidate(&t->vm);

	while (t->blocks_ahead < t->distance &&
		   !t->files_gone &&
		   t->ring_count < BGWP_RANGE_RING)
	{
		BlockNumber start;
		uint16		n;
		int			segno;
		int			fd;
		int			slot;
		uint64		tag;

		if (io_engine_inflight(engine) >= BGWP_ENGINE_MAX_INFLIGHT ||
			t->inflight >= (int) t->io_window ||
			tablespace_inflight(BGWP_RELFILE_SPC(t->relfile)) >= t->rel.io_depth)
		{
			t->depth_bound = true;
			break;
		}

		/* the next read: one that could not be issued last time, or new */
		if (t->pending_nblocks == 0)
		{
			start = next_planned_block(t, consumer);
			if (start == InvalidBlockNumber)
				break;
			t->planbuf_pos++;
			n = 1;
			/* coalesce following adjacent planned blocks of the same segment */
			while (n < BGWP_MAX_READ_BLOCKS)
			{
				BlockNumber next = next_planned_block(t, consumer);

				if (next != start + n || next / RELSEG_SIZE != start / RELSEG_SIZE)
					break;
				t->planbuf_pos++;
				n++;
			}
			t->pending_start = start;
			t->pending_nblocks = n;
		}
		start = t->pending_start;
		n = t->pending_nblocks;
		segno = start / RELSEG_SIZE;

		fd = segment_fd(t, segno);
		if (fd < 0)
		{
			if (errno == EMFILE || errno == ENFILE)
				break;			/* out of descriptors for now: retry later */

			/*
			 * The file is gone: at segment 0 the relation was dropped or
			 * rewritten (abandon the target), further on it shrank (stop
			 * reading, keep following the scan).
			 */
			t->files_gone = true;
			t->pending_nblocks = 0;
			if (segno == 0)
			{
				t->counted = false;
				stop_reading(t, "relation files gone");
				end_scan_phase(t, false);
			}
			break;
		}
		slot = (t->ring_head + t->ring_count) % BGWP_RANGE_RING;
		tag = ((uint64) (t - targets) << 32) | (uint64) slot;
		if (!io_engine_submit(engine, fd,
							  (off_t) (start % RELSEG_SIZE) * BLCKSZ,
							  (size_t) n * BLCKSZ, tag))
			break;				/* engine full: the read stays pending */
		t->pending_nblocks = 0;
		t->ranges[slot].start = start;
		t->ranges[slot].nblocks = n;
		t->ranges[slot].completed = false;
		t->ranges[slot].late = false;
		t->ring_count++;
		t->blocks_ahead += n;
		t->prefetch_block = start + n;
		if (t->inflight++ == 0)
			t->inflight_since = GetCurrentTimestamp();
		segment_of(t, segno)->inflight++;
	}
}

/*
 * Account for one finished read.
 */
static void
complete_read(const IoCompletion *c)
{
	PrefetchTarget *t = &targets[c->tag >> 32];
	SubmittedRange *r = &t->ranges[c->tag & 0xFFFFFFFF];
	OpenSegment *seg = segment_of(t, r->start / RELSEG_SIZE);
	int64		consumer = t->last_position;

	r->completed = true;
	if (seg != NULL)
		seg->inflight--;
	if (--t->inflight == 0)
		t->report.prefetch_time_us +=
			GetCurrentTimestamp() - t->inflight_since;
	/* a short read: the relation shrank, read no further than its end */
	if (c->result >= 0 && c->result / BLCKSZ < r->nblocks)
		t->cur_nblocks = Min(t->cur_nblocks, r->start + (BlockNumber) (c->result / BLCKSZ));
	if (c->result > 0)
	{
		int64		blocks = c->result / BLCKSZ;
		int64		late = consumer - (int64) r->start + 1;

		t->report.blocks_prefetched += blocks;
		if (late > 0)
		{
			t->report.blocks_late += Min(late, blocks);
			/* the consumer caught up: look further ahead */
			t->distance = Min(t->distance * 2, (int64) bgwp_max_distance);
			r->late = true;
			widen_io_window(t);
		}
	}
}

static void
reap_completions(void)
{
	IoCompletion done[64];
	int			n;

	if (engine == NULL)
		return;
	while ((n = io_engine_reap(engine, done, lengthof(done))) > 0)
	{
		for (int i = 0; i < n; i++)
			complete_read(&done[i]);
	}
}

/*
 * Forget ranges the consumer has passed.
 */
static void
retire_consumed(PrefetchTarget *t)
{
	while (t->ring_count > 0)
	{
		SubmittedRange *r = &t->ranges[t->ring_head];

		if (!r->completed || ((int64) r->start + r->nblocks) > t->last_position)
			break;
		t->blocks_ahead -= r->nblocks;
		if (!r->late)
			narrow_io_window(t);
		if (t->handed > 0)
			t->handed--;
		if (r->in_buffers)
			t->buffers_ahead -= r->nblocks;
		t->ring_head = (t->ring_head + 1) % BGWP_RANGE_RING;
		t->ring_count--;
	}
}

/*
 * Count a VACUUM's planned blocks with a second planner that runs far ahead
 * of it, at most budget blocks per call: the count must be taken on
 * visibility-map bits the VACUUM has not set yet, whereas the planner that
 * issues reads stays only its distance ahead and may fall behind.  Should
 * the VACUUM overtake the counter too, it is re-joined where the VACUUM is
 * (the blocks read in between cannot be known, and are not counted).
 */
static void
count_planned_blocks(PrefetchTarget *t, BlockNumber consumer, uint32 budget)
{
	uint32		start;
	uint32		scratch[BGWP_PLAN_CHUNK];
	int			n;

	if (t->count_done)
		return;
	if (vacuum_plan_position(&t->count_plan) <= consumer && consumer > 0)
	{
		vacuum_plan_init_at(&t->count_plan, t->nblocks, t->rel.skip_mode,
							consumer + 1);
		t->blocks_planned++;	/* the block it reads now */
	}
	vm_reader_invalidate(&t->count_vm);
	start = vacuum_plan_position(&t->count_plan);
	while (vacuum_plan_position(&t->count_plan) - start < budget)
	{
		n = vacuum_plan_next(&t->count_plan, vm_reader_bits, &t->count_vm,
							 scratch, lengthof(scratch));
		if (n == 0)
		{
			t->count_done = true;
			break;
		}
		t->blocks_planned += n;
	}
}

/* ---------------- loading into shared buffers ---------------- */

/*
 * Blocks the buffer loaders may still be handed, all targets together:
 * bgw_prefetch.shared_buffers_cap of shared_buffers, less the blocks
 * handed that the scans have not passed yet.
 */
static int64
shared_buffers_room(void)
{
	int64		room = (int64) (bgwp_shared_buffers_cap * NBuffers);

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (targets[i].in_use)
			room -= targets[i].buffers_ahead;
	return room;
}

/*
 * read_into = shared_buffers: start the target's loader once, then hand it
 * the target's completed reads in plan order (so it loads the blocks the
 * scan needs first), skipping those the scan has passed, while *room
 * allows.  A read that does not fit waits in the OS cache until the scans
 * free room, or is passed by its scan.  A loader that let go or failed is
 * not replaced: the target goes on reading into the OS cache only.
 */
static void
load_into_buffers(PrefetchTarget *t, int64 *room)
{
	int			slot = t - targets;

	if (bgwp_read_into != PREFETCH_READ_INTO_SHARED_BUFFERS)
	{
		stop_loader(t);			/* switched off at reload */
		return;
	}
	if (!t->loader_tried)
	{
		t->loader_tried = true;
		t->loading = loader_start(slot, &t->obs, &t->relfile);

		/*
		 * Every block read will be loaded: read at full distance from the
		 * start, as an ANALYZE stream does, so that the loader works well
		 * ahead of a scan that finds hits and moves fast.
		 */
		if (t->loading)
		{
			t->distance = bgwp_max_distance;
			t->io_window = t->rel.io_depth;
		}
	}
	if (!t->loading || !loader_accepting(slot))
		return;
	loader_set_consumer(slot, t->last_position);
	while (t->handed < t->ring_count)
	{
		SubmittedRange *r = &t->ranges[(t->ring_head + t->handed) % BGWP_RANGE_RING];

		if (!r->completed)
			break;
		if ((int64) r->start + r->nblocks - 1 > t->last_position)
		{
			if (r->nblocks > *room ||
				!loader_offer(slot, r->start, r->nblocks))
				break;
			r->in_buffers = true;
			t->buffers_ahead += r->nblocks;
			*room -= r->nblocks;
		}
		t->handed++;
	}
}

/*
 * Stop the target's loader, if it has one, and account for what it did.
 */
static void
stop_loader(PrefetchTarget *t)
{
	LoaderOutcome out;

	if (!t->loading)
		return;
	loader_stop(t - targets, &out);
	t->loading = false;
	t->report.blocks_loaded += out.loaded_blocks;
	if (out.aborted)
		t->report.loader_aborts++;
}

/* ---------------- target lifecycle ---------------- */

/*
 * Does the plan over the current visibility map read every block from the
 * join block to last?  A VACUUM only sets bits, so its own decisions for
 * those blocks, taken on the map before, read every one of them too.
 */
static bool
plan_reads_every_block(PrefetchTarget *t, BlockNumber last)
{
	VacuumPlanState plan;
	uint32		planned[BGWP_PLAN_CHUNK];
	BlockNumber expected = (BlockNumber) t->join_block;

	if (t->join_block > 0)
	{
		vacuum_plan_init_at(&plan, t->nblocks, t->rel.skip_mode, expected + 1);
		expected++;				/* the join block itself is read */
	}
	else
		vacuum_plan_init(&plan, t->nblocks, t->rel.skip_mode);
	vm_reader_invalidate(&t->count_vm);
	while (expected <= last)
	{
		int			n = vacuum_plan_next(&plan, vm_reader_bits, &t->count_vm,
										 planned, lengthof(planned));

		if (n == 0)
			return false;
		for (int i = 0; i < n && expected <= last; i++, expected++)
			if (planned[i] != expected)
				return false;
	}
	return true;
}

/*
 * The VACUUM may have moved on while its blocks were being counted (the
 * monitor shares two cores with it, and may be preempted): the count of
 * the blocks it passed may have been taken on visibility-map bits it had
 * set already.  Look again, after the count.  If it is past the block the
 * count started from, the count still holds if the plan reads every block
 * it passed (it set no bit that could make a skippable range); else count
 * again from where it is, and follow it from there (a joined scan) -- a
 * count is exact or says where it starts.
 */
static void
rejoin_if_overtaken(PrefetchTarget *t)
{
	TargetObservation now_obs;

	if (targets_observe(t->obs.slot, t->obs.pid, &now_obs) != OBSERVE_WATCHED ||
		!same_scan(&now_obs, &t->obs) || now_obs.position <= t->join_block ||
		plan_reads_every_block(t, (BlockNumber) now_obs.position))
		return;
	t->obs = now_obs;
	t->last_position = now_obs.position;
	t->join_block = now_obs.position;
	vacuum_plan_init_at(&t->vplan, t->nblocks, t->rel.skip_mode,
						(uint32) t->join_block + 1);
	t->count_plan = t->vplan;
	t->count_done = false;
	t->blocks_planned = 1;		/* the block it reads now */
	count_planned_blocks(t, 0, BGWP_COUNT_BUDGET);
}

/*
 * The relation is known (resolved): set up planning -- a VACUUM's blocks are
 * counted over the visibility map whether or not they are read ahead -- and
 * decide whether to read ahead.
 */
static void
activate_target(PrefetchTarget *t)
{
	BGWP_RELFILE_SET(t->relfile, t->rel.spcnode, t->rel.dbnode,
					 t->rel.relfilenode);

	if (t->rel.skip_reason[0] != '\0')
	{
		/* a temporary table's visibility map is not on disk: no count */
		t->state = TARGET_MEASURING;
		stop_reading(t, t->rel.skip_reason);
		return;
	}
	if (t->obs.command == PREFETCH_CMD_VACUUM)
	{
		/* half the depth at first: a cold scan needs reads at once */
		t->io_window = Max(t->rel.io_depth / 2, 1);
		/* before its scan starts, the VACUUM will see the file's size */
		if (t->awaiting_start)
			t->obs.total = relation_nblocks(t);
		t->nblocks = (BlockNumber) t->obs.total;
		vm_reader_init(&t->vm, t->relfile);
		t->vm_open = true;

		/*
		 * Join the VACUUM where it is: the block it reads now is part of its
		 * plan, and the plan goes on from the next one.
		 */
		t->join_block = t->obs.position;
		if (t->join_block > 0)
		{
			vacuum_plan_init_at(&t->vplan, t->nblocks, t->rel.skip_mode,
								(uint32) t->join_block + 1);
			t->blocks_planned = 1;
		}
		else
			vacuum_plan_init(&t->vplan, t->nblocks, t->rel.skip_mode);
		t->count_plan = t->vplan;
		vm_reader_init(&t->count_vm, t->relfile);
		t->counted = true;

		/*
		 * Count now, before the VACUUM can set visibility-map bits of blocks
		 * it has read: by the monitor's next step a small relation may be
		 * half-scanned already, and the counter, overtaken, would have to
		 * skip what the VACUUM read meanwhile.
		 */
		count_planned_blocks(t, 0, BGWP_COUNT_BUDGET);
		rejoin_if_overtaken(t);
	}
	else
	{
		t->nblocks = t->cur_nblocks = relation_nblocks(t);
		t->join_block = analyze_position_lower_bound(t->obs.position, t->obs.total,
													 t->nblocks);
		if (t->rel.calibrated)
			calibrate_cost_model(tablespace_cost(BGWP_RELFILE_SPC(t->relfile)), &t->rel);
		t->cost = *tablespace_cost(BGWP_RELFILE_SPC(t->relfile));
		if (t->prefetch && !analyze_should_stream(t->obs.total, t->nblocks, &t->cost))
			stop_reading(t, "sample too sparse to stream");

		/*
		 * A stream is decided to pay for every block of its window, and the
		 * consumer's position is only estimated (from below), so growing
		 * the distance on late reads would start far too short: a dense
		 * ANALYZE moves through ~150k blocks/s.  Stream at full distance,
		 * and with enough large reads in flight to go at the disk's
		 * sequential speed.
		 */
		t->distance = bgwp_max_distance;
		if ((t->rel.depth_source == DEPTH_FROM_SERVER_DEFAULT ||
			 t->rel.depth_source == DEPTH_FROM_TABLESPACE_OPTION) &&
			t->rel.io_depth < BGWP_STREAM_MIN_DEPTH)
		{
			t->rel.io_depth = BGWP_STREAM_MIN_DEPTH;
			t->rel.depth_source = DEPTH_FROM_STREAM_MINIMUM;
		}
		t->io_window = t->rel.io_depth;
	}
	if (t->join_block > 0)
		t->report.joined_block = t->join_block;
	if (t->prefetch)
	{
		t->ranges = MemoryContextAllocZero(prefetch_context,
										   sizeof(SubmittedRange) * BGWP_RANGE_RING);
		t->prefetched = true;
	}
	t->state = TARGET_ACTIVE;
}

/*
 * Log a finished scan past bgw_prefetch.log_min_duration, in the words and
 * units of autovacuum's own log line, so that the two can be compared.
 */
static void
log_scan(const PrefetchTarget *t)
{
	const ScanReport *r = &t->report;
	StringInfoData buf;

	if (bgwp_log_min_duration < 0 ||
		r->total_time_us < (int64) bgwp_log_min_duration * 1000)
		return;
	initStringInfo(&buf);
	appendStringInfo(&buf, "bgw_prefetch: %s%s of \"%s\" (database %u, relation %u, pid %d): ",
					 t->autovacuum ? "automatic " : "",
					 prefetch_command_name(r->command),
					 t->rel.relname[0] ? t->rel.relname : "(not resolved)",
					 r->dbid, r->relid, t->obs.pid);
	appendStringInfoString(&buf, t->abandoned ? "did not complete" : "completed");
	if (r->prefetched)
		appendStringInfoString(&buf, ", prefetched");
	else
		appendStringInfo(&buf, ", watched (%s)", r->watched_reason);
	if (r->joined_block >= 0)
		appendStringInfo(&buf, ", followed from block %lld", (long long) r->joined_block);
	if (r->command == PREFETCH_CMD_VACUUM)
		appendStringInfo(&buf, "\nblocks: %lld read, %lld skipped by the visibility map",
						 (long long) r->blocks_read, (long long) r->blocks_skipped);
	else
		appendStringInfo(&buf, "\nblocks: %lld sampled", (long long) r->blocks_read);
	appendStringInfo(&buf, "\navg read rate: %.3f MB/s",
					 r->total_time_us > 0 ? blocks_mb_per_s(r->blocks_read, r->total_time_us) : 0.0);
	appendStringInfo(&buf, "\nI/O timings: read: %.3f ms (sampled)",
					 r->read_time_us / 1000.0);
	if (r->prefetched)
		appendStringInfo(&buf, "\nprefetch: %lld blocks, %lld ready, %lld late, %lld unused",
						 (long long) r->blocks_prefetched,
						 (long long) Max(r->blocks_prefetched - r->blocks_late - r->blocks_unused, 0),
						 (long long) r->blocks_late, (long long) r->blocks_unused);
	appendStringInfo(&buf, "\nelapsed: %.3f s", r->total_time_us / 1000000.0);
	ereport(LOG, (errmsg_internal("%s", buf.data)));
	pfree(buf.data);
}

/*
 * The scan's reading is over -- its scanning phase ended, or its command
 * did: no more reads are issued.  A scan that completed reached every block
 * of its plan; otherwise what was read ahead beyond the last block it
 * reached is unused.  The target follows the command to its end.
 */
static void
end_scan_phase(PrefetchTarget *t, bool completed)
{
	if (t->state == TARGET_FINISHING)
		return;
	if (completed && t->state == TARGET_ACTIVE)
	{
		if (t->obs.command == PREFETCH_CMD_VACUUM && t->counted)
			count_planned_blocks(t, 0, UINT32_MAX);
		t->last_position = t->nblocks;
	}
	else
	{
		for (int i = 0; i < t->ring_count; i++)
		{
			SubmittedRange *r = &t->ranges[(t->ring_head + i) % BGWP_RANGE_RING];
			int64		beyond = ((int64) r->start + r->nblocks) - 1 - t->last_position;

			t->report.blocks_unused += Min(Max(beyond, 0), (int64) r->nblocks);
		}
	}
	t->state = TARGET_FINISHING;
	stop_loader(t);
}

/*
 * The blocks a finished (or cancelled) VACUUM read and skipped, from its
 * count over the visibility map.  The count runs ahead of the VACUUM; a
 * VACUUM that stopped early is credited the counted share of the blocks it
 * passed.  Without a count (the relation was never resolved, or not before
 * the scan was over) nothing is known: the scan is followed "from" its last
 * block.
 */
static void
vacuum_blocks(PrefetchTarget *t)
{
	ScanReport *r = &t->report;
	int64		nblocks = t->nblocks > 0 ? t->nblocks : t->obs.total;
	int64		from = Max(t->join_block, 0);
	int64		to = t->abandoned ? Min(t->last_position + 1, nblocks) : nblocks;
	int64		counted_to = t->count_done ? nblocks :
		(int64) vacuum_plan_position(&t->count_plan);
	int64		read = t->blocks_planned;

	if (!t->counted)
	{
		r->joined_block = to;
		return;
	}
	if (to < counted_to && counted_to > from)
		read = (int64) ((double) read * (to - from) / (counted_to - from) + 0.5);
	r->blocks_read = read;
	r->blocks_skipped = Max(to - from - read, 0);
}

/*
 * The command is over and no read is in flight: add the scan to
 * pg_stat_prefetch (if it happened: a target awaiting a scan that never came
 * is just dropped), log it, and release the target.
 */
static void
finish_target(PrefetchTarget *t, TimestampTz now)
{
	ScanReport *r = &t->report;
	TimestampTz end = t->command_end != 0 ? t->command_end : now;

	if (t->obs.command == PREFETCH_CMD_VACUUM)
		vacuum_blocks(t);
	else
		r->blocks_read = t->abandoned ? t->obs.position : t->obs.total;
	r->prefetched = t->prefetched;
	if (!t->prefetched)
		strlcpy(r->watched_reason, t->why_not, sizeof(r->watched_reason));
	r->read_time_us = t->read_wait_us;
	r->total_time_us = t->command_start != 0 ? Max(end - t->command_start, 0) : 0;
	r->scan_end = end;

	if (!t->forget && (t->command_start != 0 || !t->abandoned))
	{
		/* logged first: once the view shows the scan, its LOG line is out */
		log_scan(t);
		stats_report_scan(r);
	}
	if (t->command_start != 0)
		remember_ended_scan(t, end);
	if (!t->abandoned && t->prefetched && engine != NULL)
		learn_read_cost(t);
	release_target(t);
}

/*
 * Give back everything a target holds.  Its reads must be finished.
 */
static void
release_target(PrefetchTarget *t)
{
	stop_loader(t);
	if (t->resolve_request >= 0)
		resolver_release(t->resolve_request);
	for (int s = 0; s < BGWP_OPEN_SEGMENTS; s++)
		if (t->segments[s].fd >= 0)
			close(t->segments[s].fd);
	if (t->vm_open)
	{
		vm_reader_close(&t->vm);
		vm_reader_close(&t->count_vm);
	}
	if (t->ranges)
		pfree(t->ranges);
	memset(t, 0, sizeof(*t));
	for (int s = 0; s < BGWP_OPEN_SEGMENTS; s++)
		t->segments[s].fd = -1;
}

/*
 * Scans the monitor followed that ended lately, so that a completion in the
 * cumulative statistics is not taken for another backend's: autovacuum
 * workers share a forecast, and the statistics say when a relation was
 * last vacuumed, not by whom.
 */
typedef struct EndedScan
{
	Oid			dbid;
	Oid			relid;
	PrefetchCommand command;
	int			pid;
	TimestampTz ended;
} EndedScan;

#define BGWP_ENDED_SCANS 16
static EndedScan ended_scans[BGWP_ENDED_SCANS];
static int	ended_scans_next = 0;

static void
remember_ended_scan(const PrefetchTarget *t, TimestampTz ended)
{
	EndedScan  *e = &ended_scans[ended_scans_next++ % BGWP_ENDED_SCANS];

	e->dbid = t->obs.dbid;
	e->relid = t->obs.relid;
	e->command = t->obs.command;
	e->pid = t->obs.pid;
	e->ended = ended;
}

/*
 * Did the monitor follow a scan of the relation by a backend other than
 * pid that was still running at since (or still is)?  A completion of the
 * relation after since is then that scan's.
 */
static bool
followed_by_another_since(Oid dbid, Oid relid, PrefetchCommand command,
						  int pid, TimestampTz since)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		const PrefetchTarget *o = &targets[i];

		if (o->in_use && o->obs.dbid == dbid && o->obs.relid == relid &&
			o->obs.command == command && o->obs.pid != pid &&
			o->command_start != 0 &&
			(o->command_end == 0 || o->command_end >= since))
			return true;
	}
	for (int i = 0; i < Min(ended_scans_next, BGWP_ENDED_SCANS); i++)
	{
		const EndedScan *e = &ended_scans[i];

		if (e->dbid == dbid && e->relid == relid && e->command == command &&
			e->pid != pid && e->ended >= since)
			return true;
	}
	return false;
}

/*
 * Did the command of a target that is no longer on its relation complete,
 * or was it cancelled or terminated?  For a target started from a forecast
 * that never saw its scan, a completion that belongs to a scan another
 * worker was followed doing does not count: the forecast was wrong.
 */
static bool
scan_completed(const PrefetchTarget *t)
{
	Oid			dbid = t->state != TARGET_RESOLVING && t->rel.relfilenode != InvalidOid ?
		t->rel.dbnode : t->obs.dbid;

	if (t->forecast && t->command_start == 0 &&
		followed_by_another_since(t->obs.dbid, t->obs.relid, t->obs.command,
								  t->obs.pid, t->since))
		return false;
	return targets_completed_since(dbid, t->obs.relid, t->obs.command, t->since);
}

/*
 * A target started from an announcement has not seen its scan yet: has it
 * started now (then it is adopted and true returned), is it still to come
 * (*waiting), or will it not come (or has it come and gone between two
 * looks: the caller asks the statistics)?
 */
static bool
scan_started(PrefetchTarget *t, ObserveResult result,
			 const TargetObservation *obs, TimestampTz now, bool *waiting)
{
	ResolvedRelation unused;

	*waiting = false;
	if (result == OBSERVE_WATCHED && same_scan(obs, &t->obs))
	{
		t->awaiting_start = false;
		command_seen(t, obs, now);
		start_next_scan(t->obs.pid, t->obs.proc_start, t->obs.dbid, t->obs.relid);
		/* the file grew or shrank in between: the plan is not the scan's */
		if (obs->total != t->obs.total)
		{
			t->counted = false;
			stop_reading(t, "relation size changed before its scan");
			end_scan_phase(t, false);
		}
		return true;
	}
	if (scan_completed(t))
		;						/* over between two looks */
	else if (OidIsValid(t->scanned_after) &&
			 (result == OBSERVE_PHASE_DONE ||
			  (result == OBSERVE_WATCHED && obs->relid == t->scanned_after)))
	{
		/* its VACUUM is still processing the relation before it */
		t->tracked_at = now;
		*waiting = true;
	}
	else if (t->forecast && result == OBSERVE_WATCHED &&
			 obs->dbid == t->obs.dbid &&
			 !forecast_lookup(obs->dbid, obs->relid, obs->command, &unused) &&
			 !TimestampDifferenceExceeds(t->tracked_at, now, BGWP_AWAIT_FORECAST_MS))
		*waiting = true;		/* its worker is on a relation too small to
								 * forecast, or an ANALYZE */
	else if (result == OBSERVE_GONE || result == OBSERVE_WATCHED)
		;						/* gone, or scanning something else */
	else if (!TimestampDifferenceExceeds(t->tracked_at, now, BGWP_AWAIT_START_MS))
		*waiting = true;		/* still starting up */
	return false;				/* else waiting for a lock, or failed */
}

/* Where a followed command is, as far as its target is concerned. */
typedef enum FollowResult
{
	FOLLOW_SCANNING,			/* in (or paused in) its scanning phase */
	FOLLOW_PAST_SCAN,			/* on the relation, past its scanning phase */
	FOLLOW_OVER					/* no longer on the relation */
} FollowResult;

/*
 * Follow the consumer of one target.
 */
static FollowResult
follow_consumer(PrefetchTarget *t, TimestampTz now)
{
	TargetObservation obs;
	ObserveResult result = targets_observe(t->obs.slot, t->obs.pid, &obs);

	if (t->awaiting_start)
	{
		bool		waiting;

		if (!scan_started(t, result, &obs, now, &waiting))
			return waiting ? FOLLOW_SCANNING : FOLLOW_OVER;
	}
	switch (result)
	{
		case OBSERVE_GONE:
		case OBSERVE_ENDED:
			return FOLLOW_OVER;
		case OBSERVE_PHASE_DONE:
			if (obs.relid == t->obs.relid && obs.command == t->obs.command)
				return FOLLOW_PAST_SCAN;
			return FOLLOW_OVER;
		case OBSERVE_WATCHED:
			break;
	}
	if (!same_scan(&obs, &t->obs))
		return FOLLOW_OVER;		/* moved on to its next relation */
	if (obs.position < t->obs.position && obs.command == PREFETCH_CMD_VACUUM)
		return FOLLOW_OVER;		/* a new scan of the same relation */

	command_seen(t, &obs, now);
	t->obs = obs;
	if (t->state == TARGET_FINISHING)
		return FOLLOW_SCANNING; /* its reading is over already */
	if (obs.command == PREFETCH_CMD_VACUUM)
		t->last_position = obs.position;
	else if (t->nblocks > 0)
		t->last_position = analyze_position_lower_bound(obs.position, obs.total, t->nblocks);
	return FOLLOW_SCANNING;
}

/*
 * Sample every followed command: is its backend still on the relation, and
 * is it waiting on a read of a data file?  The monitor calls this every
 * BGWP_SAMPLE_INTERVAL_MS while prefetcher_sampling() says so, and at every
 * step.  The time since the previous sample is counted as read time when
 * the backend waits on a read now: an estimate of what track_io_timing
 * measures in the backend, with an error of the order of the interval
 * times the square root of the number of reads sampled.  The command's
 * start and end are found to within an interval too.
 */
void
prefetcher_sample(TimestampTz now)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		PrefetchTarget *t = &targets[i];
		TargetObservation obs;
		ObserveResult result;
		bool		on_relation;

		if (!t->in_use || t->command_over || t->command_end != 0)
			continue;
		result = targets_observe(t->obs.slot, t->obs.pid, &obs);
		on_relation = (result == OBSERVE_WATCHED || result == OBSERVE_PHASE_DONE) &&
			obs.relid == t->obs.relid && obs.command == t->obs.command;
		if (t->command_start == 0)
		{
			if (on_relation)
				command_seen(t, &obs, now);
			continue;
		}
		if (!on_relation)
		{
			t->command_end = now;
			continue;
		}
		if (t->proc == NULL)
			t->proc = targets_proc_of(t->obs.pid);
		if (targets_waiting_on_read(t->proc, t->obs.pid))
			t->read_wait_us += now - t->last_sample;
		t->last_sample = now;
	}
}

/* Is any command followed, so that the monitor should sample it? */
bool
prefetcher_sampling(void)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (targets[i].in_use && !targets[i].command_over &&
			targets[i].command_end == 0)
			return true;
	return false;
}

/*
 * Follow one target's command: its reading ends with its scanning phase,
 * the target with the command.
 */
static void
step_consumer(PrefetchTarget *t, TimestampTz now)
{
	const char *why = NULL;
	FollowResult result;

	if (!bgwp_enabled)
	{
		/* switched off at reload: forget it, unreported */
		t->forget = true;
		t->abandoned = true;
		end_scan_phase(t, false);
		t->command_over = true;
		return;
	}
	if (t->prefetch && !prefetch_wanted(t->obs.command, t->autovacuum, &why))
		stop_reading(t, why);	/* switched off at reload */
	result = follow_consumer(t, now);
	if (result != FOLLOW_SCANNING && t->state == TARGET_RESOLVING)
		stop_reading(t, "over before its relation was resolved");
	switch (result)
	{
		case FOLLOW_SCANNING:
			break;
		case FOLLOW_PAST_SCAN:
			end_scan_phase(t, true);
			break;
		case FOLLOW_OVER:
			t->abandoned = !scan_completed(t);
			end_scan_phase(t, !t->abandoned);
			if (t->command_end == 0)
				t->command_end = now;
			t->command_over = true;
			break;
	}
}

/*
 * One step for every target.
 */
void
prefetcher_step(void)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		buffers_room;

	prefetcher_sample(now);

	/* where is every consumer now?  End the scans that are over. */
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		PrefetchTarget *t = &targets[i];

		if (!t->in_use)
			continue;
		if (!t->command_over)
			step_consumer(t, now);
		if (t->command_over && t->inflight == 0)
			finish_target(t, now);
	}

	/* account for finished reads against the fresh positions */
	reap_completions();
	buffers_room = shared_buffers_room();

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		PrefetchTarget *t = &targets[i];

		if (!t->in_use)
			continue;
		/* set again by submit_reads() if it is called and stops at depth */
		t->depth_bound = false;
		if (t->state == TARGET_RESOLVING)
		{
			switch (resolver_poll(t->resolve_request, &t->rel))
			{
				case RESOLVE_PENDING:
					break;
				case RESOLVE_DONE:
					elog(DEBUG1, "bgw_prefetch: relation %u resolved in %ld ms, consumer at block %lld",
						 t->obs.relid,
						 (long) ((now - t->tracked_at) / 1000),
						 (long long) t->obs.position);
					activate_target(t);
					break;
				case RESOLVE_FAILED:
					t->state = TARGET_MEASURING;
					stop_reading(t, "relation could not be resolved");
					break;
			}
		}
		if (t->state == TARGET_ACTIVE)
		{
			if (t->obs.command == PREFETCH_CMD_VACUUM && t->counted)
				count_planned_blocks(t, (BlockNumber) t->last_position,
									 BGWP_COUNT_BUDGET);
			if (t->prefetch)
			{
				retire_consumed(t);
				load_into_buffers(t, &buffers_room);
				if (t->obs.phase == SCAN_PHASE_SCANNING)
					submit_reads(t);
			}
		}
	}
	if (engine != NULL)
		io_engine_flush(engine);
	reap_completions();			/* fadvise completes at once */
}

/*
 * Should the monitor step again at once?  Yes when a target stopped
 * issuing at its depth and, by the end of the step, every read has
 * completed already: no completion is left to wake the monitor, and
 * sleeping the poll interval would leave the disk idle for it.  Measured:
 * cold buffered reads of a dense VACUUM plan often completed within
 * io_uring_submit() itself (10 reads of 256 kB in ~1.6 ms), so with a
 * 10 ms poll the prefetch ran at a sixth of the disk's rate
 * (doc/benchmarks.md).
 */
bool
prefetcher_wants_next_step(void)
{
	if (engine == NULL || io_engine_inflight(engine) > 0)
		return false;
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (targets[i].in_use && targets[i].state == TARGET_ACTIVE &&
			targets[i].depth_bound)
			return true;
	return false;
}

/*
 * Describe the targets for pg_stat_prefetch_activity.
 */
int
prefetcher_activity(ActivityRow *rows, int max)
{
	int			n = 0;

	for (int i = 0; i < BGWP_MAX_TARGETS && n < max; i++)
	{
		PrefetchTarget *t = &targets[i];
		ActivityRow *row = &rows[n];

		if (!t->in_use)
			continue;
		memset(row, 0, sizeof(*row));
		row->pid = t->obs.pid;
		row->dbid = t->obs.dbid;
		row->relid = t->obs.relid;
		row->command = t->obs.command;
		if (t->state == TARGET_FINISHING)
			strlcpy(row->state, "finishing", sizeof(row->state));
		else if (!t->prefetch)
			snprintf(row->state, sizeof(row->state), "watching: %s", t->why_not);
		else if (t->state == TARGET_RESOLVING)
			strlcpy(row->state, "resolving", sizeof(row->state));
		else
			strlcpy(row->state, t->obs.phase == SCAN_PHASE_PAUSED ?
					"paused" : "prefetching", sizeof(row->state));
		row->consumer_block = t->last_position;
		row->total_blocks = t->obs.command == PREFETCH_CMD_VACUUM ? t->obs.total : t->nblocks;
		row->prefetch_block = t->prefetch_block;
		row->distance = Max((int64) t->prefetch_block - t->last_position, 0);
		row->reads_in_flight = t->inflight;
		row->io_depth = t->rel.io_depth;
		if (t->state == TARGET_ACTIVE && t->prefetch)
			strlcpy(row->io_depth_source, depth_source_name(t->rel.depth_source),
					sizeof(row->io_depth_source));
		row->planned_blocks = t->obs.command == PREFETCH_CMD_VACUUM ?
			t->blocks_planned : t->obs.total;
		row->prefetched_blocks = t->report.blocks_prefetched;
		n++;
	}
	return n;
}
