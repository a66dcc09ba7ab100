/*-------------------------------------------------------------------------
 *
 * buffer_loader.h
 *	  Loading pre-read blocks into shared buffers ahead of a scan.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_BUFFER_LOADER_H
#define BGWP_BUFFER_LOADER_H

#include "bgw_prefetch.h"
#include "compat.h"
#include "backends.h"

/* What a loader did, collected when its target ends. */
typedef struct LoaderOutcome
{
	int64		loaded_blocks;
	bool		aborted;		/* let go for a lock waiter, or refused one */
} LoaderOutcome;

extern Size loader_shmem_size(void);
extern void loader_shmem_startup(void);	/* under AddinShmemInitLock */

/* Monitor side; slot is the target's index, < BGWP_MAX_TARGETS. */
extern bool loader_start(int slot, const ScanObservation *scan,
						 const BgwpRelFile *relfile);
extern bool loader_accepting(int slot);
extern bool loader_offer(int slot, BlockNumber start, uint16 nblocks);
extern void loader_set_consumer(int slot, int64 consumer);
extern void loader_stop(int slot, LoaderOutcome *out);
extern void loader_stop_all(void);

extern PGDLLEXPORT void bgwp_loader_main(Datum main_arg);

#endif							/* BGWP_BUFFER_LOADER_H */
