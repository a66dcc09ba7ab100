/*-------------------------------------------------------------------------
 *
 * vacuum_plan.h
 *	  Pure planner of the heap blocks a VACUUM will read.
 *
 * The planner mirrors lazy_scan_skip() in vacuumlazy.c (PostgreSQL 15 and
 * 16; heap_vac_scan_next_block() and find_next_unskippable_block() from 17,
 * the same rule; see vacuum_plan.c for 18's eager scanning): given the
 * visibility-map bits of every heap block it yields, in ascending order,
 * exactly the blocks that lazy_scan_heap() will read.  It is written in
 * plain C (no server headers) so that tests/unit can check it exhaustively
 * against a straightforward reference without a running server.
 *
 * The planner is incremental: it never needs the whole map at once, it asks
 * for one block's bits at a time through a callback, and it can be resumed
 * from where it stopped, so a multi-terabyte relation costs no more memory
 * than a small one.  It can also start in the middle of a running VACUUM
 * (vacuum_plan_init_at()), at the block after one the VACUUM has read.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_VACUUM_PLAN_H
#define BGWP_VACUUM_PLAN_H

#include <stdbool.h>
#include <stdint.h>

/* Visibility-map bits, same values as VISIBILITYMAP_ALL_VISIBLE/FROZEN */
#define VP_ALL_VISIBLE	0x01
#define VP_ALL_FROZEN	0x02

/* vacuumlazy.c's SKIP_PAGES_THRESHOLD (32 in PostgreSQL 15-18) */
#define VP_SKIP_PAGES_THRESHOLD 32

typedef enum VacuumSkipMode
{
	VACUUM_SKIP_NORMAL,			/* skip all-visible ranges >= threshold */
	VACUUM_SKIP_AGGRESSIVE,		/* skip only all-frozen ranges >= threshold */
	VACUUM_SKIP_DISABLED		/* DISABLE_PAGE_SKIPPING: read every block */
} VacuumSkipMode;

/* Returns the visibility-map bits (VP_*) of one heap block. */
typedef uint8_t (*VacuumPlanVmFn) (void *arg, uint32_t blkno);

/*
 * Planner state.  All fields are private to vacuum_plan.c; they are exposed
 * only so that callers can embed the state without allocating.
 */
typedef struct VacuumPlanState
{
	uint32_t	rel_pages;		/* the vacuum's rel_pages */
	VacuumSkipMode mode;
	uint32_t	next_block;		/* next block lazy_scan_heap() considers */
	uint32_t	next_unskippable;	/* as returned by lazy_scan_skip() */
	bool		skipping_current_range;
	bool		started;		/* first lazy_scan_skip() call done? */
} VacuumPlanState;

extern void vacuum_plan_init(VacuumPlanState *state, uint32_t rel_pages,
							 VacuumSkipMode mode);

/*
 * Start the plan at first_block, as a VACUUM that has just read block
 * first_block - 1 sees it (see vacuum_plan.c).
 */
extern void vacuum_plan_init_at(VacuumPlanState *state, uint32_t rel_pages,
								VacuumSkipMode mode, uint32_t first_block);

/* Where the plan is: every block it emits from now on is >= this. */
static inline uint32_t
vacuum_plan_position(const VacuumPlanState *state)
{
	return state->next_block;
}

/*
 * Emit up to max_out blocks, ascending, into out[].  Returns the number
 * emitted; 0 means the plan is exhausted.  Successive calls continue where
 * the previous one stopped.
 */
extern int	vacuum_plan_next(VacuumPlanState *state, VacuumPlanVmFn vm,
							 void *arg, uint32_t *out, int max_out);

#endif							/* BGWP_VACUUM_PLAN_H */
