/*-------------------------------------------------------------------------
 *
 * prefetcher.c
 *	  Serving scans: the targets' lifecycle and the monitor's entry
 *	  points.
 *
 * The monitor hands every VACUUM/ANALYZE it discovers to the prefetcher,
 * which keeps one PrefetchTarget per scan (prefetch_internal.h) and, at
 * every step of the monitor's loop:
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
 * This file keeps the targets' lifecycle and the steps; following each
 * consumer is in prefetch_follow.c, targets for scans that have not shown
 * yet in prefetch_adopt.c, the reads in prefetch_reads.c, the log line and
 * the live view in prefetch_report.c.
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

#include "backend_reads.h"
#include "buffer_loader.h"
#include "forecast.h"
#include "prefetch_internal.h"
#include "relfile.h"
#include "backends.h"

/* The targets, the engine that reads for all of them, and their memory */
PrefetchTarget prefetch_targets[BGWP_MAX_TARGETS];
IoEngine   *prefetch_engine = NULL;
static MemoryContext prefetch_context = NULL;

/* New targets since the last prefetcher_take_started() */
int			prefetch_targets_started = 0;

static const char *fallback_reason = NULL;

static void finish_target(PrefetchTarget *t, TimestampTz now);

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
	prefetch_engine = io_engine_create((IoMethod) bgwp_io_method,
							  BGWP_ENGINE_MAX_INFLIGHT,
							  BGWP_MAX_READ_BLOCKS * BLCKSZ,
							  &fallback_reason);
	if (prefetch_engine == NULL)
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
	prefetch_pacing_stop();
	if (prefetch_engine != NULL)
		io_engine_destroy(prefetch_engine);
	prefetch_engine = NULL;
	fallback_reason = NULL;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		PrefetchTarget *t = &prefetch_targets[i];

		if (!t->in_use)
			continue;
		t->inflight = 0;		/* the prefetch_engine is gone, and its reads */
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
	return prefetch_engine ? io_engine_event_fd(prefetch_engine) : -1;
}

const char *
prefetcher_io_method(void)
{
	return prefetch_engine ? io_method_name(io_engine_method(prefetch_engine)) : "none";
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
		if (prefetch_targets[i].in_use)
			n++;
	return n;
}

bool
same_scan(const ScanObservation *a, const ScanObservation *b)
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
void
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
PrefetchTarget *
free_target_for(const ScanObservation *obs)
{
	PrefetchTarget *t = NULL;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		if (prefetch_targets[i].in_use && !prefetch_targets[i].command_over &&
			same_scan(&prefetch_targets[i].obs, obs))
			return NULL;
		if (!prefetch_targets[i].in_use && t == NULL)
			t = &prefetch_targets[i];
	}
	return t;
}

/*
 * Set up a target for the scan obs.  since is a moment no later than the
 * command's start, for telling a completed command from a cancelled one
 * (backends_completed_since()).
 */
void
init_target(PrefetchTarget *t, const ScanObservation *obs, TimestampTz since)
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
void
command_seen(PrefetchTarget *t, const ScanObservation *obs, TimestampTz now)
{
	if (t->command_start != 0)
		return;
	t->command_start = now;
	if (obs->autovacuum && obs->activity_start >= t->since &&
		obs->activity_start < now)
		t->command_start = obs->activity_start;
	t->last_sample = now;
	/* a moment inside the transaction that processes the relation */
	t->first_seen = GetCurrentTimestamp();
	if (t->proc == NULL)
		t->proc = backends_proc_of(obs->pid);
}

/*
 * Do the scan's figures cover all of it?  A VACUUM followed only from a
 * later block counts its blocks from there; an ANALYZE counts its whole
 * sample.
 */
static bool
whole_scan_counted(const PrefetchTarget *t)
{
	return t->obs.command == PREFETCH_CMD_ANALYZE || t->report.joined_block < 0;
}

/* What the scan's backend published for the transaction it was seen in. */
static BackendReadsResult
published_reads(const PrefetchTarget *t, int64 *reads, int64 *read_time_us)
{
	return backend_reads_of(t->obs.slot, t->obs.pid, t->first_seen,
							reads, read_time_us);
}

/*
 * The scan's read time.  The figure its backend published for the
 * transaction that processed the relation (backend_reads.c): exactly what
 * track_io_timing counted, as "I/O timings: read" reports it.  The sampled
 * estimate when there is none (the command ended in an error, or ran
 * inside a transaction block), when it has reads but no time
 * (track_io_timing is off in that backend), and for a VACUUM followed
 * only from a later block, whose other figures start there too.
 */
static int64
scan_read_time(const PrefetchTarget *t, bool *sampled)
{
	int64		reads;
	int64		read_time_us;

	*sampled = false;
	if (whole_scan_counted(t) &&
		published_reads(t, &reads, &read_time_us) == BACKEND_READS_FOUND &&
		reads > 0 && read_time_us > 0)
		return read_time_us;
	*sampled = true;
	return t->read_wait_us;
}

/*
 * May the scan be reported now?  Its backend publishes its reads when the
 * transaction that processed the relation commits, just after the command
 * leaves the relation (or aborts); the scan waits for that, while the
 * backend lives and for at most BGWP_READS_WAIT_MS.
 */
static bool
scan_reads_settled(const PrefetchTarget *t, TimestampTz now)
{
	int64		reads;
	int64		read_time_us;

	if (t->command_start == 0 || t->abandoned || !whole_scan_counted(t))
		return true;
	if (published_reads(t, &reads, &read_time_us) != BACKEND_READS_PENDING)
		return true;
	if (t->proc == NULL || t->proc->pid != t->obs.pid)
		return true;
	return TimestampDifferenceExceeds(t->command_end != 0 ? t->command_end : now,
									  now, BGWP_READS_WAIT_MS);
}

/*
 * Start following a scan the monitor discovered, unless it is followed
 * already.
 */
void
prefetcher_track(const ScanObservation *obs)
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
	prefetch_targets_started++;
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
 * How many targets were started since the last call (for the monitor's
 * targets_served).
 */
int
prefetcher_take_started(void)
{
	int			n = prefetch_targets_started;

	prefetch_targets_started = 0;
	return n;
}

/* ---------------- target lifecycle ---------------- */

/*
 * Does the plan over the current visibility map read every block from
 * block from to last?  A VACUUM only sets bits, and more bits only make
 * more skippable ranges, so its own decisions for those blocks, taken on
 * the map before, read every one of them too.
 */
static bool
plan_reads_every_block(PrefetchTarget *t, int64 from, BlockNumber last)
{
	VacuumPlanState plan;
	uint32		planned[BGWP_PLAN_CHUNK];
	BlockNumber expected = (BlockNumber) from;

	if (from > 0)
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
 * Is the VACUUM on the target's relation now?
 */
static bool
scan_under_way(const PrefetchTarget *t, ScanObservation *now_obs)
{
	return backends_observe(t->obs.slot, t->obs.pid, now_obs) == OBSERVE_RUNNING &&
		same_scan(now_obs, &t->obs);
}

/*
 * Copy the first page of the visibility map for the count, before a VACUUM
 * that has not started on the relation yet: returns true if it still had
 * not once the copy was taken, so that the copy holds no bit it set (it
 * sets a block's bit only once on the relation, after reading the block).
 */
static bool
copy_map_before_scan(PrefetchTarget *t)
{
	ScanObservation now_obs;

	if (t->join_block > 0)
		return false;
	(void) vm_reader_bits(&t->count_vm, 0);
	return !scan_under_way(t, &now_obs);
}

/*
 * The VACUUM may have moved on while its blocks were being counted (the
 * monitor shares two cores with it, and may be preempted): the count of
 * the blocks it passed may have been taken on visibility-map bits it had
 * set already.  Look again, after the count.  If it is past the block the
 * count started from, the count still holds if every map page it used was
 * copied before the VACUUM could set a bit on it: the first page before
 * the VACUUM started (map_before_scan, copy_map_before_scan()), and the
 * later ones, copied before this look, while the VACUUM was at most where
 * it is now -- short of them.  Or if the plan reads every block the VACUUM
 * passed (it set no bit that could make a skippable range).  Else count
 * again from where it is, and follow it from there (a joined scan) -- a
 * count is exact or says where it starts.
 */
static void
rejoin_if_overtaken(PrefetchTarget *t, bool map_before_scan)
{
	ScanObservation now_obs;

	if (!scan_under_way(t, &now_obs) || now_obs.position <= t->join_block ||
		(map_before_scan && now_obs.position < BGWP_VM_HEAPBLOCKS_PER_PAGE) ||
		plan_reads_every_block(t, t->join_block, (BlockNumber) now_obs.position))
		return;
	t->obs = now_obs;
	t->last_position = now_obs.position;
	t->join_block = now_obs.position;
	vacuum_plan_init_at(&t->vplan, t->nblocks, t->rel.skip_mode,
						(uint32) t->join_block + 1);
	t->count_plan = t->vplan;
	t->count_done = false;
	t->blocks_planned = 1;		/* the block it reads now */
	count_planned_blocks(t, 0, BGWP_COUNT_BUDGET, true);
}

/*
 * The relation is known (resolved): set up planning -- a VACUUM's blocks are
 * counted over the visibility map whether or not they are read ahead -- and
 * decide whether to read ahead.
 */
void
activate_target(PrefetchTarget *t)
{
	bool		map_before_scan;

	BGWP_RELFILE_SET(t->relfile, t->rel.spcnode, t->rel.dbnode,
					 t->rel.relfilenode);

	if (t->rel.watched_reason[0] != '\0')
	{
		/* a temporary table's visibility map is not on disk: no count */
		t->state = TARGET_MEASURING;
		stop_reading(t, t->rel.watched_reason);
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
		vm_reader_init(&t->count_vm, t->relfile);
		t->counted = true;
		t->join_block = t->obs.position;
		if (t->join_block > 0)
			vacuum_plan_init_at(&t->vplan, t->nblocks, t->rel.skip_mode,
								(uint32) t->join_block + 1);
		else
			vacuum_plan_init(&t->vplan, t->nblocks, t->rel.skip_mode);

		/*
		 * A VACUUM the monitor came to only after its first blocks (a busy
		 * machine can delay the monitor's wakeup by milliseconds) has read
		 * every one of them if the plan over the map as it is now does:
		 * then it is still counted from block 0, its blocks so far read
		 * but not read ahead.
		 */
		if (t->join_block > 0 &&
			plan_reads_every_block(t, 0, (BlockNumber) t->join_block))
			t->join_block = 0;
		if (t->join_block > 0)
		{
			t->count_plan = t->vplan;
			t->blocks_planned = 1;
		}
		else
			vacuum_plan_init(&t->count_plan, t->nblocks, t->rel.skip_mode);

		/*
		 * Count now, before the VACUUM can set visibility-map bits of blocks
		 * it has read: by the monitor's next step a small relation may be
		 * half-scanned already, and the counter, overtaken, would have to
		 * pass over what the VACUUM read meanwhile.  A VACUUM that starts
		 * on the relation meanwhile (an autovacuum worker often does, a few
		 * milliseconds after the monitor has seen it arrive) leaves the
		 * count exact if the map was copied before.
		 */
		map_before_scan = copy_map_before_scan(t);
		count_planned_blocks(t, 0, BGWP_COUNT_BUDGET, false);
		rejoin_if_overtaken(t, map_before_scan);
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
 * The scan's reading is over -- its scanning phase ended, or its command
 * did: no more reads are issued.  A scan that completed reached every block
 * of its plan; otherwise what was read ahead beyond the last block it
 * reached is unused.  The target follows the command to its end.
 */
void
end_scan_phase(PrefetchTarget *t, bool completed)
{
	if (t->state == TARGET_FINISHING)
		return;
	if (completed && t->state == TARGET_ACTIVE)
	{
		if (t->obs.command == PREFETCH_CMD_VACUUM && t->counted)
			count_planned_blocks(t, 0, UINT32_MAX, true);
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
 * The command is over and no read is in flight: add the scan to
 * pg_stat_prefetch (if it happened: a target awaiting a scan that never came
 * is just dropped), log it, and release the target.
 */
static void
finish_target(PrefetchTarget *t, TimestampTz now)
{
	ScanReport *r = &t->report;
	TimestampTz end = t->command_end != 0 ? t->command_end : now;
	bool		reported;

	if (t->obs.command == PREFETCH_CMD_VACUUM)
		vacuum_blocks(t);
	else
		r->blocks_read = t->abandoned ? t->obs.position : t->obs.total;
	r->prefetched = t->prefetched;
	if (!t->prefetched)
		strlcpy(r->watched_reason, t->why_not, sizeof(r->watched_reason));
	r->read_time_us = scan_read_time(t, &r->read_time_sampled);
	r->cost_delay_us = t->cost_delay_wait_us;
	set_cost_limited(t, false, end);	/* adds the time until the end */
	r->total_time_us = t->command_start != 0 ? Max(end - t->command_start, 0) : 0;
	r->scan_end = end;

	reported = !t->forget && (t->command_start != 0 || !t->abandoned);
	if (reported)
	{
		/* logged first: once the view shows the scan, its LOG line is out */
		log_scan(t);
		stats_report_scan(r);
	}
	if (reported || t->command_start != 0)
		remember_ended_scan(t->obs.dbid, t->obs.relid, t->obs.command,
							t->obs.pid, end);
	if (!t->abandoned && t->prefetched && prefetch_engine != NULL)
		learn_read_cost(t);
	release_target(t);
}

/*
 * Give back everything a target holds.  Its reads must be finished.
 */
void
release_target(PrefetchTarget *t)
{
	stop_loader(t);
	if (t->resolve_request >= 0)
		resolver_release(t->resolve_request);
	for (int s = 0; s < BGWP_OPEN_SEGMENTS; s++)
		relfile_close(t->segments[s].fd);
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
 * Give a target up unreported: the extension was switched off at reload,
 * or it was a forecast that another worker's scan proved wrong.  Its reads
 * in flight complete before its slot is freed (prefetcher_step()).
 */
void
forget_target(PrefetchTarget *t)
{
	t->forget = true;
	t->abandoned = true;
	end_scan_phase(t, false);
	t->command_over = true;
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
		forget_target(t);		/* switched off at reload */
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
		PrefetchTarget *t = &prefetch_targets[i];

		if (!t->in_use)
			continue;
		if (!t->command_over)
			step_consumer(t, now);
		if (t->command_over && t->inflight == 0 && scan_reads_settled(t, now))
			finish_target(t, now);
	}

	/* account for finished reads against the fresh positions */
	reap_completions();
	buffers_room = shared_buffers_room();
	prefetch_pacing_step(now);

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		PrefetchTarget *t = &prefetch_targets[i];

		if (!t->in_use)
			continue;
		close_unlinked_files(t, now);
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
									 BGWP_COUNT_BUDGET, true);
			if (t->prefetch)
			{
				retire_consumed(t);
				load_into_buffers(t, &buffers_room);
				update_cost_limited(t, now);
				if (t->obs.phase == SCAN_PHASE_SCANNING)
					submit_reads(t);
			}
		}
	}
	if (prefetch_engine != NULL)
		io_engine_flush(prefetch_engine);
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
	if (prefetch_engine == NULL || io_engine_inflight(prefetch_engine) > 0)
		return false;
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (prefetch_targets[i].in_use && prefetch_targets[i].state == TARGET_ACTIVE &&
			prefetch_targets[i].depth_bound)
			return true;
	return false;
}
