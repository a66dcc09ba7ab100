/*-------------------------------------------------------------------------
 *
 * statement_options.c
 *	  The options of each backend's current VACUUM or ANALYZE statement,
 *	  published by the backend's utility hook for the resolver workers.
 *
 * A relation that a manual VACUUM reaches without naming it (a
 * database-wide VACUUM, a partition, an inheritance child) is resolved by
 * a worker, which needs what only the backend knows: the statement's
 * options as parsed (FREEZE, DISABLE_PAGE_SKIPPING, ...) and the session's
 * vacuum_freeze_table_age and vacuum_multixact_freeze_table_age, which
 * decide whether the VACUUM is aggressive.  The backend writes them here,
 * in its backend status slot's entry, from its utility hook before the
 * command runs; a worker reads the entry of the backend it resolves for,
 * checking the pid.  Nobody parses query text.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "bgw_prefetch.h"
#include "compat.h"
#include "statement_options.h"

typedef struct StatementOptionsSlot
{
	slock_t		mutex;
	int			pid;			/* the backend that published; 0: none */
	VacuumOptions opts;
} StatementOptionsSlot;

/* One entry per backend status slot (backends.c's slot numbers). */
static StatementOptionsSlot *statement_options_slots = NULL;

Size
statement_options_shmem_size(void)
{
	return mul_size(BGWP_NUM_BACKEND_STATUS_SLOTS, sizeof(StatementOptionsSlot));
}

/* Called from the shmem_startup_hook with AddinShmemInitLock held. */
void
statement_options_shmem_startup(void)
{
	bool		found;

	statement_options_slots = ShmemInitStruct("bgw_prefetch statement options",
											  statement_options_shmem_size(),
											  &found);
	if (!found)
	{
		memset(statement_options_slots, 0, statement_options_shmem_size());
		for (int i = 0; i < BGWP_NUM_BACKEND_STATUS_SLOTS; i++)
			SpinLockInit(&statement_options_slots[i].mutex);
	}
}

/*
 * In the backend about to run a VACUUM or ANALYZE: publish its options,
 * with the session's freeze table ages.
 */
void
statement_options_publish(const VacuumOptions *opts)
{
	int			slot = BGWP_MY_BACKEND_STATUS_SLOT();
	StatementOptionsSlot *entry;

	if (statement_options_slots == NULL ||
		slot < 0 || slot >= BGWP_NUM_BACKEND_STATUS_SLOTS)
		return;
	entry = &statement_options_slots[slot];
	SpinLockAcquire(&entry->mutex);
	entry->pid = MyProcPid;
	entry->opts = *opts;
	entry->opts.freeze_table_age = vacuum_freeze_table_age;
	entry->opts.multixact_freeze_table_age = vacuum_multixact_freeze_table_age;
	SpinLockRelease(&entry->mutex);
}

/*
 * The options backend pid (in backend status slot slot) published for its
 * current statement; *opts is left as it is if it published none.
 */
void
statement_options_of(int slot, int pid, VacuumOptions *opts)
{
	StatementOptionsSlot *entry;

	if (statement_options_slots == NULL ||
		slot < 0 || slot >= BGWP_NUM_BACKEND_STATUS_SLOTS)
		return;
	entry = &statement_options_slots[slot];
	SpinLockAcquire(&entry->mutex);
	if (entry->pid == pid)
		*opts = entry->opts;
	SpinLockRelease(&entry->mutex);
}
