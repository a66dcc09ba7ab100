/*-------------------------------------------------------------------------
 *
 * announce.c
 *	  Relations resolved by the backend about to scan them.
 *
 * A manual VACUUM or ANALYZE that names its tables needs no worker: the
 * backend running it resolves them itself, from the utility hook, just
 * before the command starts (resolver_announce_statement()), and leaves the
 * answers in shared "announcement" slots that the monitor takes when the
 * scan shows up.  That saves a worker start (tens of milliseconds, a large
 * part of a short VACUUM's prefetch window), and the backend knows what an
 * outside worker can only guess: the statement's options as parsed, and
 * its session's vacuum_freeze_table_age.  Database-wide commands, the
 * partitions and inheritance children a command expands to, and autovacuum
 * go through the workers; for a manual command the backend publishes what
 * they need of the statement (statement_options.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/reloptions.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/namespace.h"
#include "catalog/pg_tablespace.h"
#include "commands/tablespace.h"
#include "commands/vacuum.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "postmaster/bgworker.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relmapper.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bgw_prefetch.h"
#include "calibrate.h"
#include "compat.h"
#include "resolver.h"
#include "resolver_internal.h"
#include "backends.h"
#include "statement_options.h"
/*
 * At most this many relations of one statement are resolved in advance
 * (a relation and its TOAST table count as two): the lookups run in the
 * user's backend, before the command, so they must stay few.
 */
#define MAX_ANNOUNCED_PER_STATEMENT 16

/* ---------------- relations announced by the backend about to scan them ---------------- */

/*
 * Resolve one relation in this backend and leave the answer for the
 * monitor, in a free slot or else in the oldest one.  Relations that will
 * not be prefetched (temporary, not heap, gone) are left to the monitor's
 * usual path: their slots would never be taken.
 */
static void
announce_relation(Oid relid, PrefetchCommand command, const VacuumOptions *opts,
				  bool scanned_first, Oid scanned_after)
{
	ResolveRequest req;
	ResolvedRelation res;
	AnnouncedRelation *slot = NULL;

	memset(&req, 0, sizeof(req));
	req.dbid = MyDatabaseId;
	req.relid = relid;
	req.command = command;
	req.backend_pid = MyProcPid;
	resolve_relation(&req, opts, &res);
	if (res.watched_reason[0] != '\0')
		return;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		AnnouncedRelation *a = &resolver_shared->announced[i];

		if (!a->in_use)
		{
			slot = a;
			break;
		}
		if (slot == NULL || a->announced_at < slot->announced_at)
			slot = a;
	}
	slot->in_use = true;
	slot->scanned_first = scanned_first;
	slot->scanned_after = scanned_after;
	slot->backend_slot = BGWP_MY_BACKEND_STATUS_SLOT();
	slot->backend_pid = MyProcPid;
	slot->backend_start = MyStartTimestamp;
	slot->dbid = MyDatabaseId;
	slot->relid = relid;
	slot->command = command;
	slot->announced_at = GetCurrentTimestamp();
	slot->result = res;
	LWLockRelease(resolver_shared->lock);
}

static Oid
toast_relid_of(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			toastrelid = InvalidOid;

	if (HeapTupleIsValid(tup))
	{
		toastrelid = ((Form_pg_class) GETSTRUCT(tup))->reltoastrelid;
		ReleaseSysCache(tup);
	}
	return toastrelid;
}

/*
 * Resolve and announce the relations a statement names, at most
 * MAX_ANNOUNCED_PER_STATEMENT.  A VACUUM scans them in this order, each
 * relation followed by its TOAST table (vacuum_rel() processes the TOAST
 * table right after its relation): each VACUUM announcement records the
 * relation scanned just before it, so that the monitor can start it, from
 * block 0, while that one is still being processed (a TOAST table that
 * skips most of its blocks is scanned in milliseconds, too fast to be
 * joined at its start once it shows in progress reporting).
 */
static void
announce_statement_relations(const VacuumStmt *stmt, bool do_vacuum,
							 bool do_analyze, const VacuumOptions *opts)
{
	int			announced = 0;
	Oid			previous = InvalidOid;	/* the VACUUM's previous relation */
	ListCell   *lc;

	foreach(lc, stmt->rels)
	{
		VacuumRelation *vrel = lfirst_node(VacuumRelation, lc);
		Oid			relid = vrel->oid;

		if (!OidIsValid(relid) && vrel->relation != NULL)
			relid = RangeVarGetRelidExtended(vrel->relation, NoLock,
											 RVR_MISSING_OK, NULL, NULL);
		if (!OidIsValid(relid))
			continue;			/* the command will say what is wrong */
		if (do_vacuum)
		{
			Oid			toastrelid = toast_relid_of(relid);

			/*
			 * The command scans the relations in this order, the first at
			 * once -- unless SKIP_LOCKED may pass it by: then each is read
			 * only once its scan shows.
			 */
			if (opts->process_main)
			{
				if (announced >= MAX_ANNOUNCED_PER_STATEMENT)
					return;
				announce_relation(relid, PREFETCH_CMD_VACUUM, opts,
								  announced == 0 && !opts->skip_locked, previous);
				announced++;
				previous = relid;
			}
			if (OidIsValid(toastrelid) && opts->process_toast)
			{
				if (announced >= MAX_ANNOUNCED_PER_STATEMENT)
					return;
				announce_relation(toastrelid, PREFETCH_CMD_VACUUM, opts,
								  announced == 0 && !opts->skip_locked,
								  opts->process_main ? relid : previous);
				announced++;
				previous = toastrelid;
			}
		}
		if (do_analyze)
		{
			if (announced++ >= MAX_ANNOUNCED_PER_STATEMENT)
				return;
			announce_relation(relid, PREFETCH_CMD_ANALYZE, opts, false,
							  InvalidOid);
		}
	}
}

/*
 * Called from the utility hook of the backend about to run a VACUUM or
 * ANALYZE (toplevel: not from a function): resolve the relations it names
 * (and, for VACUUM, their TOAST tables), so that the monitor can start
 * prefetching without a resolver worker.
 *
 * Nothing here may make the command fail or wait where it would not have.
 * The lookups run in a subtransaction: an error there only means "not
 * announced", except a query cancel (or statement or lock timeout), which
 * is re-thrown, as the command would have raised it a moment later.  The
 * only catalog the command itself does not read, pg_tablespace, is locked
 * conditionally; the others (pg_class, pg_namespace) it waits for anyway,
 * and such a wait here can be cancelled.  No lock is taken on the relations:
 * they are looked up by name as they are now, as the command is about to.
 * Statements that are bound to fail (VACUUM in a transaction block or a
 * function, either command during recovery or in parallel mode) are not
 * looked at.
 */
void
resolver_announce_statement(const VacuumStmt *stmt, bool toplevel)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	VacuumOptions opts;
	bool		runnable;
	bool		do_vacuum;
	bool		do_analyze;

	if (resolver_shared == NULL)
		return;

	/* what this backend announced before is no longer wanted */
	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (resolver_shared->announced[i].backend_pid == MyProcPid)
			resolver_shared->announced[i].in_use = false;
	LWLockRelease(resolver_shared->lock);

	/*
	 * Announced whether or not it is to be prefetched for: a scan that is
	 * only watched is still measured from its first block.
	 */
	if (!bgwp_enabled || !IsTransactionState() ||
		IsInParallelMode() || RecoveryInProgress())
		return;

	/*
	 * VACUUM runs only at top level, outside a transaction block.  Asked
	 * before the subtransaction begins: inside it, every statement is in a
	 * transaction block.
	 */
	runnable = !stmt->is_vacuumcmd || (toplevel && !IsTransactionBlock());
	if (!runnable)
		return;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);
	PG_TRY();
	{
		vacuum_options_from_list(stmt->options, &opts);
		/* for the workers that resolve what the statement does not name */
		statement_options_publish(&opts);
		do_vacuum = stmt->is_vacuumcmd && !opts.full;
		do_analyze = !stmt->is_vacuumcmd || opts.analyze;

		if (stmt->rels != NIL && (do_vacuum || do_analyze) &&
			ConditionalLockRelationOid(TableSpaceRelationId, AccessShareLock))
		{
			announce_statement_relations(stmt, do_vacuum, do_analyze, &opts);
			UnlockRelationOid(TableSpaceRelationId, AccessShareLock);
		}
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(edata);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcontext);
	CurrentResourceOwner = oldowner;
}

/*
 * The monitor found a scan: did its backend resolve the relation already?
 * If so the answer is handed over (and its slot freed).
 */
bool
resolver_take_announced(Oid dbid, Oid relid, PrefetchCommand command,
						int backend_pid, TimestampTz backend_start,
						ResolvedRelation *out)
{
	bool		found = false;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		AnnouncedRelation *a = &resolver_shared->announced[i];

		if (a->in_use && a->backend_pid == backend_pid &&
			a->backend_start == backend_start && a->dbid == dbid &&
			a->relid == relid && a->command == command)
		{
			*out = a->result;
			a->in_use = false;
			found = true;
			break;
		}
	}
	LWLockRelease(resolver_shared->lock);
	return found;
}

/* Hand over one announcement; the caller holds the lock exclusively. */
static void
hand_over(AnnouncedRelation *a, AnnouncedScan *out)
{
	out->backend_slot = a->backend_slot;
	out->backend_pid = a->backend_pid;
	out->backend_start = a->backend_start;
	out->dbid = a->dbid;
	out->relid = a->relid;
	out->scanned_after = a->scanned_after;
	out->rel = a->result;
	a->in_use = false;
}

/*
 * Hand over (and free) the announcements of relations a VACUUM is about to
 * scan first, so that the monitor can start prefetching them before the
 * scan shows up in progress reporting: a VACUUM that skips most of its
 * table runs through it at thousands of blocks per millisecond, and the few
 * milliseconds until the monitor would see it are a large part of its
 * reads.  (An ANALYZE is not started so: measured, a whole-relation sample
 * started at block 0 was no faster, see doc/benchmarks.md.)  Returns how
 * many were written to out (at most max).
 */
int
resolver_take_first_scans(AnnouncedScan *out, int max)
{
	int			n = 0;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS && n < max; i++)
	{
		AnnouncedRelation *a = &resolver_shared->announced[i];

		if (a->in_use && a->scanned_first)
			hand_over(a, &out[n++]);
	}
	LWLockRelease(resolver_shared->lock);
	return n;
}

/*
 * Hand over (and free) the announcement of the relation the VACUUM of
 * backend (pid, start) scans right after relid, if there is one: the
 * monitor starts it as soon as relid is served, so that it is planned from
 * block 0 before the VACUUM reaches it (see announce_statement_relations()).
 */
bool
resolver_take_next_scan(int backend_pid, TimestampTz backend_start, Oid dbid,
						Oid relid, AnnouncedScan *out)
{
	bool		found = false;

	LWLockAcquire(resolver_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BGWP_MAX_TARGETS && !found; i++)
	{
		AnnouncedRelation *a = &resolver_shared->announced[i];

		if (a->in_use && a->command == PREFETCH_CMD_VACUUM &&
			a->backend_pid == backend_pid && a->backend_start == backend_start &&
			a->dbid == dbid && a->scanned_after == relid)
		{
			hand_over(a, out);
			found = true;
		}
	}
	LWLockRelease(resolver_shared->lock);
	return found;
}

