/*-------------------------------------------------------------------------
 *
 * prefetch_reads.c
 *	  The prefetcher's reads: relation files, plans, the read queue, read
 *	  costs, and the hand-off to the buffer loader.
 *
 * For each active target: its segment files (opened on demand, counted by
 * fd.c, closed when unlinked), the next blocks of its plan (the VACUUM
 * planner over the current visibility map, or the ANALYZE window), ranges
 * of up to BGWP_MAX_READ_BLOCKS issued to the I/O engine (advised for a
 * VACUUM, read for an ANALYZE stream or the buffer loader) within the
 * target's distance, its I/O window and its tablespace's depth, and their
 * completions accounted (late, ready, unused); with read_into =
 * shared_buffers, the ranges handed to the buffer loader.  The ANALYZE cost
 * model of each tablespace is kept here too: it learns from stream reads.
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

#include "buffer_loader.h"
#include "prefetch_internal.h"
#include "relfile.h"

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

/* How often a target's descriptors are checked for unlinked files, ms */
#define UNLINKED_CHECK_MS 100

static void widen_io_window(PrefetchTarget *t);
static void narrow_io_window(PrefetchTarget *t);

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
	relfile_close(victim->fd);
	victim->fd = relfile_open(t->relfile, MAIN_FORKNUM, segno);

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
 * Close the target's descriptors of files that were unlinked (DROP TABLE,
 * DROP DATABASE, DROP TABLESPACE, or a truncation), which would otherwise
 * keep their disk space until the scan ends; a segment with reads in flight
 * is closed at a later step, once they completed.  The first segment
 * gone means the relation is: the target is abandoned, as when that
 * segment cannot be opened.  The monitor steps at every read completion,
 * so the files are looked at every UNLINKED_CHECK_MS only.
 */
void
close_unlinked_files(PrefetchTarget *t, TimestampTz now)
{
	if (!TimestampDifferenceExceeds(t->files_checked, now, UNLINKED_CHECK_MS))
		return;
	t->files_checked = now;
	for (int s = 0; s < BGWP_OPEN_SEGMENTS; s++)
	{
		OpenSegment *seg = &t->segments[s];

		if (seg->fd < 0 || seg->inflight > 0 || !relfile_unlinked(seg->fd))
			continue;
		relfile_close(seg->fd);
		seg->fd = -1;
		t->files_gone = true;
		if (seg->segno == 0 && t->state != TARGET_FINISHING)
		{
			t->counted = false;
			stop_reading(t, "relation files gone");
			end_scan_phase(t, false);
		}
	}
	if (t->vm_open)
	{
		vm_reader_close_unlinked(&t->vm);
		vm_reader_close_unlinked(&t->count_vm);
	}
}

/*
 * Size of the main fork in blocks, from its segment files.
 */
BlockNumber
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

AnalyzeCostModel *
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
void
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
void
learn_read_cost(const PrefetchTarget *t)
{
	AnalyzeCostModel defaults;
	double		per_block;

	if (t->obs.command != PREFETCH_CMD_ANALYZE ||
		t->report.blocks_prefetched <= 0 || t->report.prefetch_time_us <= 0 ||
		io_engine_method(prefetch_engine) != IO_METHOD_IO_URING)
		return;					/* nothing streamed, or fadvise: no read timed */
	analyze_cost_model_defaults(&defaults);
	per_block = (double) t->report.prefetch_time_us / t->report.blocks_prefetched;
	if (per_block < BGWP_CACHED_COST_FRACTION * defaults.seq_us_per_block)
		return;
	analyze_cost_model_observe_stream(tablespace_cost(BGWP_RELFILE_SPC(t->relfile)),
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
		if (prefetch_targets[i].in_use && BGWP_RELFILE_SPC(prefetch_targets[i].relfile) == spcnode)
			n += prefetch_targets[i].inflight;
	return n;
}

/*
 * Are the target's ranges advised rather than read?  A VACUUM's plan is
 * advised (POSIX_FADV_WILLNEED, through io_uring): the VACUUM reads its pages
 * through the kernel's own readahead, which a read of ours would race, and
 * a read's copy into user memory costs CPU that, on a small machine, the
 * VACUUM and the foreground need; an advice costs neither, and the blocks
 * are just as cached when the VACUUM gets there.  An ANALYZE stream is
 * read: its pacing and the tablespace's learnt cost need the time each
 * read took.  So is a range for the buffer loader, which must find it in
 * the OS cache when the read completes.
 */
static bool
ranges_advised(const PrefetchTarget *t)
{
	return t->obs.command == PREFETCH_CMD_VACUUM && !t->loading;
}

/* Hand one planned range to the engine, as an advice or a read. */
static bool
submit_range(PrefetchTarget *t, int fd, off_t offset, size_t len, uint64 tag)
{
	if (ranges_advised(t))
		return io_engine_advise(prefetch_engine, fd, offset, len, tag);
	return io_engine_submit(prefetch_engine, fd, offset, len, tag);
}

/*
 * Issue reads for one target while it is within its distance, its I/O
 * window and its tablespace's depth.  A cost-limited scan (its backend
 * sleeps most of its time in its cost-based delay, prefetch_follow.c) is
 * read ahead for as its own reads would go: at most
 * bgw_prefetch.cost_limited_depth reads in flight (0: none), within the
 * initial distance.
 */
void
submit_reads(PrefetchTarget *t)
{
	BlockNumber consumer = (BlockNumber) t->last_position;
	int64		distance = t->distance;
	int			window = (int) t->io_window;

	if (t->cost_limited && bgwp_cost_limited_depth >= 0)
	{
		if (bgwp_cost_limited_depth == 0)
			return;
		window = Min(window, bgwp_cost_limited_depth);
		distance = Min(distance, BGWP_INITIAL_DISTANCE);
	}
	if (t->obs.command == PREFETCH_CMD_VACUUM)
		vm_reader_invalidate(&t->vm);

	while (t->blocks_ahead < distance &&
		   !t->files_gone &&
		   t->ring_count < BGWP_RANGE_RING)
	{
		BlockNumber start;
		uint16		n;
		int			segno;
		int			fd;
		int			slot;
		uint64		tag;

		if (io_engine_inflight(prefetch_engine) >= BGWP_ENGINE_MAX_INFLIGHT ||
			t->inflight >= window ||
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
		/* the disk's other users first: within the paced rate */
		if (!prefetch_pacing_take(n))
			break;				/* the range stays pending */
		slot = (t->ring_head + t->ring_count) % BGWP_RANGE_RING;
		tag = ((uint64) (t - prefetch_targets) << 32) | (uint64) slot;
		if (!submit_range(t, fd, (off_t) (start % RELSEG_SIZE) * BLCKSZ,
						  (size_t) n * BLCKSZ, tag))
			break;				/* prefetch_engine full: the read stays pending */
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
 * The scan reached range r before its blocks were in the page cache: count
 * blocks of it late, and look further ahead.
 */
static void
range_was_late(PrefetchTarget *t, SubmittedRange *r, int64 blocks)
{
	r->late = true;
	t->report.blocks_late += blocks;
	t->distance = Min(t->distance * 2, (int64) bgwp_max_distance);
	widen_io_window(t);
}

/*
 * The scan's backend was seen waiting on a data file read at block
 * position.  An advice completes as soon as the kernel has started its
 * readahead, so its completion cannot tell whether it came in time: this
 * does.  If the block lies in a range advised for the scan, the advice
 * was late: the range is counted late (the blocks up to the one waited
 * on), once, and the target looks further ahead, as a read that completed
 * after the scan reached it does (complete_read()).  A read the
 * scan makes of a block not advised (its visibility map, a block ahead of
 * the reads) changes nothing.
 */
void
note_read_wait(PrefetchTarget *t, int64 position)
{
	if (t->state != TARGET_ACTIVE || !t->prefetch || !ranges_advised(t) ||
		t->ranges == NULL)
		return;
	for (int i = 0; i < t->ring_count; i++)
	{
		SubmittedRange *r = &t->ranges[(t->ring_head + i) % BGWP_RANGE_RING];

		if ((int64) r->start > position)
			break;
		if (position >= (int64) r->start + r->nblocks)
			continue;
		if (r->completed && !r->late)
			range_was_late(t, r, position - r->start + 1);
		break;
	}
}

/*
 * Account for one finished read.
 */
static void
complete_read(const IoCompletion *c)
{
	PrefetchTarget *t = &prefetch_targets[c->tag >> 32];
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
			range_was_late(t, r, Min(late, blocks));
	}
}

void
reap_completions(void)
{
	IoCompletion done[64];
	int			n;

	if (prefetch_engine == NULL)
		return;
	while ((n = io_engine_reap(prefetch_engine, done, lengthof(done))) > 0)
	{
		for (int i = 0; i < n; i++)
			if (!prefetch_pacing_completed(&done[i]))
				complete_read(&done[i]);
	}
}

/*
 * Forget ranges the consumer has passed.
 */
void
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
 * fresh_map: copy the map anew (else the count goes on over the copy the
 * counter holds, which activate_target() took before the scan started).
 */
void
count_planned_blocks(PrefetchTarget *t, BlockNumber consumer, uint32 budget,
					 bool fresh_map)
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
	if (fresh_map)
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
int64
shared_buffers_room(void)
{
	int64		room = (int64) (bgwp_shared_buffers_cap * NBuffers);

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (prefetch_targets[i].in_use)
			room -= prefetch_targets[i].buffers_ahead;
	return room;
}

/*
 * read_into = shared_buffers: start the target's loader once, then hand it
 * the target's completed reads in plan order (so it loads the blocks the
 * scan needs first), leaving out those the scan has passed, while *room
 * allows.  A read that does not fit waits in the OS cache until the scans
 * free room, or is passed by its scan.  A loader that let go or failed is
 * not replaced: the target goes on reading into the OS cache only.
 */
void
load_into_buffers(PrefetchTarget *t, int64 *room)
{
	int			slot = t - prefetch_targets;

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
void
stop_loader(PrefetchTarget *t)
{
	LoaderOutcome out;

	if (!t->loading)
		return;
	loader_stop(t - prefetch_targets, &out);
	t->loading = false;
	t->report.blocks_loaded += out.loaded_blocks;
	if (out.aborted)
		t->report.loader_aborts++;
}
