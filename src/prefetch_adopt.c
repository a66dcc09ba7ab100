/*-------------------------------------------------------------------------
 *
 * prefetch_adopt.c
 *	  Targets for scans that have not shown yet, and whose scan a
 *	  completion is.
 *
 * A manual VACUUM or ANALYZE announces the relations it names before it
 * starts (resolver.c), and forecast.c tells which relation each autovacuum
 * worker is about to vacuum: both become targets before their scan shows
 * in progress reporting, so that the scan is read ahead and counted from
 * its first block.  Such a target may meet a scan that is already over, or
 * a completion in the cumulative statistics that belongs to another
 * backend's scan: the ring of ended scans tells them apart.
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

#include "forecast.h"
#include "prefetch_internal.h"
#include "backends.h"

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
	ScanObservation obs;
	ScanObservation now_obs;
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
		backends_statement_start(obs.slot, obs.pid);
	if (since == 0)
		return false;			/* the backend is gone */
	init_target(t, &obs, since);
	t->awaiting_start = true;
	t->forecast = forecast;
	t->scanned_after = a->scanned_after;
	t->rel = a->rel;

	/*
	 * The monitor may come late: if the VACUUM is on the relation already,
	 * follow it from where it is, as a discovered scan (activate_target());
	 * if it is past it, the scan is over.
	 */
	if (backends_observe(obs.slot, obs.pid, &now_obs) == OBSERVE_RUNNING &&
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
	else if (backends_completed_since(a->dbid, a->relid, PREFETCH_CMD_VACUUM, since))
	{
		/*
		 * Over already: its backend publishes it when its transaction
		 * commits, and prefetch_unseen.c records it from that.
		 */
		release_target(t);
		return false;
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
	prefetch_targets_started++;
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
void
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

/*
 * The last relation each autovacuum worker published it vacuumed
 * (prefetch_unseen.c): a worker may go through several relations between
 * two of the monitor's looks, and its next relation is the one after the
 * last it finished, whether or not the monitor saw it there.
 */
typedef struct WorkerPublished
{
	int			pid;			/* 0: free */
	Oid			relid;
	TimestampTz at;
} WorkerPublished;

static WorkerPublished workers_published[BGWP_MAX_TARGETS];
static int	workers_published_next = 0;

void
note_autovacuum_vacuumed(int pid, Oid relid, TimestampTz at)
{
	WorkerPublished *w = NULL;

	for (int i = 0; i < BGWP_MAX_TARGETS && w == NULL; i++)
		if (workers_published[i].pid == pid)
			w = &workers_published[i];
	if (w == NULL)
		w = &workers_published[workers_published_next++ % BGWP_MAX_TARGETS];
	w->pid = pid;
	w->relid = relid;
	w->at = at;
}

/*
 * A worker published that it finished a relation since it was last seen
 * starting one: its next relation comes after that one.  An expected
 * relation other than the finished one will not come: the worker went past
 * it (another worker was on it, or it no longer needed a VACUUM).
 */
static void
catch_up_with_published(AutovacuumWorkerState *st, int pid,
						PrefetchTarget **expected)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		const WorkerPublished *w = &workers_published[i];

		if (w->pid != pid || w->at <= st->after_start || w->relid == st->after)
			continue;
		if (*expected != NULL && (*expected)->obs.relid != w->relid)
			forget_target(*expected);
		*expected = NULL;
		st->after = w->relid;
		st->after_start = w->at;
		st->started = false;
		return;
	}
}

static AutovacuumWorkerState *
autovacuum_worker_state(const ScanObservation *w)
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

/* Is the backend (pid, proc_start) on the relation of one of its targets? */
static bool
worker_on_relation(int pid, TimestampTz proc_start)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		const PrefetchTarget *t = &prefetch_targets[i];

		if (t->in_use && !t->command_over && t->command_start != 0 &&
			t->obs.pid == pid && t->obs.proc_start == proc_start)
			return true;
	}
	return false;
}

/*
 * Start, for every autovacuum worker (workers[], from
 * backends_autovacuum_workers()), the relation it is expected to vacuum
 * next, from block 0: the forecast's first relation for a worker that has
 * vacuumed none yet, and else the one after the relation it vacuums now.
 * It waits for the worker as a manual VACUUM's next relation does
 * (awaiting_start), so that a fast autovacuum is counted and read ahead
 * from its first block.  One relation ahead of each worker only.  The
 * relations other workers are on, or expected on next while they are on
 * none, are passed by, as autovacuum passes by a relation another worker
 * vacuums.  A worker's next relation is chosen as soon as it is on its
 * relation, often long before it moves on, and another worker may get to
 * it first: then the expectation is forgotten and the forecast asked
 * again.  A forecast that missed otherwise is not tried again.  Returns how
 * many targets it started.
 */
int
prefetcher_forecast(const ScanObservation *workers, int nworkers)
{
	int			started = 0;

	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		autovacuum_workers[i].seen = false;
	for (int w = 0; w < nworkers && bgwp_enabled; w++)
	{
		AutovacuumWorkerState *st = autovacuum_worker_state(&workers[w]);
		Oid			busy[BGWP_MAX_TARGETS];
		bool		busy_seen[BGWP_MAX_TARGETS];
		int			nbusy = 0;
		PrefetchTarget *expected = NULL;
		AnnouncedScan next;

		if (st == NULL)
			continue;
		st->seen = true;
		for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		{
			PrefetchTarget *t = &prefetch_targets[i];

			if (!t->in_use || t->command_over || !t->autovacuum ||
				t->obs.command != PREFETCH_CMD_VACUUM)
				continue;
			if (t->obs.pid != workers[w].pid ||
				t->obs.proc_start != workers[w].proc_start)
			{
				/*
				 * Another worker's, or expected to be: not a relation
				 * expected after the one another worker is on, which it may
				 * not reach for long (autovacuum passes by only a relation
				 * another worker is on).
				 */
				if (t->obs.dbid == workers[w].dbid &&
					(t->command_start != 0 ||
					 !worker_on_relation(t->obs.pid, t->obs.proc_start)))
				{
					busy_seen[nbusy] = t->command_start != 0;
					busy[nbusy++] = t->obs.relid;
				}
			}
			else if (t->awaiting_start && t->command_start == 0)
				expected = t;
			else if (t->obs.relid != st->after)
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
		catch_up_with_published(st, workers[w].pid, &expected);
		for (int i = 0; expected != NULL && i < nbusy; i++)
		{
			if (busy_seen[i] && busy[i] == expected->obs.relid)
			{
				forget_target(expected);
				expected = NULL;
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
 * Scans the monitor followed or recorded that ended lately, so that a
 * completion in the cumulative statistics is not taken for another
 * backend's (autovacuum workers share a forecast, and the statistics say
 * when a relation was last vacuumed, not by whom), and a scan is recorded
 * once.
 */
typedef struct EndedScan
{
	Oid			dbid;
	Oid			relid;
	PrefetchCommand command;
	int			pid;
	TimestampTz ended;
} EndedScan;

#define BGWP_ENDED_SCANS 64
static EndedScan ended_scans[BGWP_ENDED_SCANS];
static int	ended_scans_next = 0;

void
remember_ended_scan(Oid dbid, Oid relid, PrefetchCommand command, int pid,
					TimestampTz ended)
{
	EndedScan  *e = &ended_scans[ended_scans_next++ % BGWP_ENDED_SCANS];

	e->dbid = dbid;
	e->relid = relid;
	e->command = command;
	e->pid = pid;
	e->ended = ended;
}

/*
 * Is the scan of relid by pid that was running at since recorded, or being
 * followed?  A scan its backend published (prefetch_unseen.c) is recorded
 * only if neither.
 */
bool
scan_recorded_or_followed(Oid relid, PrefetchCommand command, int pid,
						  TimestampTz since)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		const PrefetchTarget *o = &prefetch_targets[i];

		if (o->in_use && !o->forget && o->obs.relid == relid &&
			o->obs.command == command && o->obs.pid == pid)
			return true;
	}
	for (int i = 0; i < Min(ended_scans_next, BGWP_ENDED_SCANS); i++)
	{
		const EndedScan *e = &ended_scans[i];

		if (e->relid == relid && e->command == command && e->pid == pid &&
			e->ended >= since)
			return true;
	}
	return false;
}

/*
 * Did the monitor follow a scan of the relation by a backend other than
 * pid that was still running at since (or still is)?  A completion of the
 * relation after since is then that scan's.
 */
bool
followed_by_another_since(Oid dbid, Oid relid, PrefetchCommand command,
						  int pid, TimestampTz since)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		const PrefetchTarget *o = &prefetch_targets[i];

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
