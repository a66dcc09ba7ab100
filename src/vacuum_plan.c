/*-------------------------------------------------------------------------
 *
 * vacuum_plan.c
 *	  Pure planner of the heap blocks a VACUUM will read.
 *
 * The prefetcher must read ahead exactly the blocks that lazy_scan_heap()
 * (src/backend/access/heap/vacuumlazy.c) will read: prefetching a block the
 * vacuum skips wastes I/O, and missing one leaves the vacuum waiting.  So
 * this file is a transcription of the block-selection part of
 * lazy_scan_heap() and lazy_scan_skip(), not a re-derivation of the rule:
 *
 *	- lazy_scan_skip(next_block) walks the visibility map from next_block
 *	  while blocks are skippable and returns the first unskippable block,
 *	  setting skipping_current_range when the walked range is at least
 *	  SKIP_PAGES_THRESHOLD (32) blocks long.  A block is unskippable when it
 *	  is not all-visible, when it is the last block of the relation, always
 *	  under DISABLE_PAGE_SKIPPING, and, in an aggressive vacuum, when it is
 *	  all-visible but not all-frozen.
 *	- lazy_scan_heap() calls lazy_scan_skip(0) before its loop and
 *	  lazy_scan_skip(blkno + 1) each time it reaches next_unskippable_block;
 *	  any other block is skipped if skipping_current_range, else read.
 *
 * PostgreSQL 16 has the same code.  17 and 18 restructure it as
 * heap_vac_scan_next_block() and find_next_unskippable_block() (18 as a
 * read stream callback) with the same rule: a walked range is skipped when
 * next_unskippable_block - next_block >= SKIP_PAGES_THRESHOLD, the same
 * blocks are unskippable, and the walk starts at the same blocks.
 *
 * PostgreSQL 18 adds eager scanning to normal (non-aggressive) vacuums of
 * tables of at least 2 * 4096 blocks whose relfrozenxid or relminmxid is
 * older than the freeze cutoff: while the current region's budget of
 * freeze failures lasts, an all-visible but not all-frozen block is
 * unskippable too.  Whether a block is eagerly scanned depends on whether
 * the vacuum managed to freeze the blocks it eagerly scanned before, which
 * the visibility map does not tell, so the planner does not mirror it.
 * Eager scanning only makes blocks unskippable, which shortens ranges, so
 * the vacuum then reads a superset of the plan: the plan never names a
 * block the vacuum skips, it only misses the eagerly scanned ones.
 *
 * Because the skip decision for a range is taken once, at the range's start,
 * from the map bits seen then, the planner keeps the same state the loop
 * keeps (next_unskippable, skipping_current_range) and consults the map at
 * the same points, instead of classifying each block on its own.
 *
 * Every map lookup is made at most once per plan: the state is resumable,
 * so emitting a plan in pieces of any size costs O(rel_pages) in total.
 *
 * No server headers: the unit tests build this file stand-alone.
 *
 *-------------------------------------------------------------------------
 */
#include "vacuum_plan.h"

/*
 * Prepare a plan for a vacuum of rel_pages blocks.  The first
 * lazy_scan_skip() call needs the map, so it is made by the first
 * vacuum_plan_next().
 */
void
vacuum_plan_init(VacuumPlanState *state, uint32_t rel_pages,
				 VacuumSkipMode mode)
{
	state->rel_pages = rel_pages;
	state->mode = mode;
	state->next_block = 0;
	state->next_unskippable = 0;
	state->skipping_current_range = false;
	state->started = false;
}

/*
 * Start a plan at block first_block, as if lazy_scan_heap() had just read
 * block first_block - 1 as an unskippable block and called lazy_scan_skip()
 * for the blocks after it.  Joining a running VACUUM at the block it reads
 * now (progress's heap_blks_scanned) this way gives exactly its remaining
 * reads: whether that block was unskippable or inside a short run of
 * all-visible blocks, the blocks after it that the VACUUM reads are the same
 * (a tail of a short run is short too, and ends at the same unskippable
 * block), and they are decided on visibility-map bits the VACUUM has not
 * changed yet (it only changes the bits of blocks it has processed).
 *
 * The block must be one the VACUUM reads: from a block inside a range it
 * skips, the rest of the range may be shorter than SKIP_PAGES_THRESHOLD and
 * would be planned as read.  Progress never reports such a block: in
 * PostgreSQL 15-18 heap_blks_scanned is set after the skip test, only for
 * blocks that are read (and to rel_pages once the scan is over, which plans
 * nothing here).  first_block 0 is the same as vacuum_plan_init().
 */
void
vacuum_plan_init_at(VacuumPlanState *state, uint32_t rel_pages,
					VacuumSkipMode mode, uint32_t first_block)
{
	vacuum_plan_init(state, rel_pages, mode);
	state->next_block = first_block;
}

/*
 * lazy_scan_skip(): set up the range starting at next_block.
 *
 * The server checks the map bits first and then "last block" and
 * DISABLE_PAGE_SKIPPING; all three end the range at the same block and the
 * planner has no use for next_unskippable_allvis, so testing the two
 * map-independent conditions first gives the same result and spares map
 * lookups (none at all under DISABLE_PAGE_SKIPPING).
 */
static void
plan_scan_skip(VacuumPlanState *state, VacuumPlanVmFn vm, void *arg,
			   uint32_t next_block)
{
	uint32_t	next_unskippable = next_block;
	uint32_t	nskippable = 0;

	while (next_unskippable < state->rel_pages)
	{
		uint8_t		mapbits;

		if (next_unskippable == state->rel_pages - 1)
			break;
		if (state->mode == VACUUM_SKIP_DISABLED)
			break;

		mapbits = vm(arg, next_unskippable);
		if ((mapbits & VP_ALL_VISIBLE) == 0)
			break;
		if ((mapbits & VP_ALL_FROZEN) == 0 &&
			state->mode == VACUUM_SKIP_AGGRESSIVE)
			break;

		next_unskippable++;
		nskippable++;
	}

	state->next_unskippable = next_unskippable;
	state->skipping_current_range = (nskippable >= VP_SKIP_PAGES_THRESHOLD);
}

/*
 * The lazy_scan_heap() loop from state->next_block: the blocks the vacuum
 * reads are stored in out[], and the walk stops after max_out (>= 1) of them
 * or at the end of the relation; returns how many were stored.  A skipped
 * range is passed over in one step.
 *
 * lazy_scan_skip() is called exactly where the server calls it, so the
 * state after the walk is the server's state at that block.
 */
static int
plan_walk(VacuumPlanState *state, VacuumPlanVmFn vm, void *arg,
		  uint32_t *out, int max_out)
{
	int			nout = 0;

	if (!state->started)
	{
		plan_scan_skip(state, vm, arg, state->next_block);
		state->started = true;
	}

	while (state->next_block < state->rel_pages)
	{
		uint32_t	blkno = state->next_block;

		if (blkno == state->next_unskippable)
		{
			/* Must scan it; set up the next range first, as the server does */
			plan_scan_skip(state, vm, arg, blkno + 1);
		}
		else if (state->skipping_current_range)
		{
			/*
			 * The rest of the range (which ends before next_unskippable, as
			 * the last block is always unskippable) needs no decision: jump.
			 */
			state->next_block = state->next_unskippable;
			continue;
		}

		/* This block is read by the vacuum */
		state->next_block = blkno + 1;
		out[nout++] = blkno;
		if (nout >= max_out)
			break;
	}

	return nout;
}

/*
 * Emit up to max_out of the next blocks the vacuum reads.  max_out < 1
 * emits nothing.
 */
int
vacuum_plan_next(VacuumPlanState *state, VacuumPlanVmFn vm, void *arg,
				 uint32_t *out, int max_out)
{
	if (max_out < 1)
		return 0;
	return plan_walk(state, vm, arg, out, max_out);
}
