/*-------------------------------------------------------------------------
 *
 * prefetch_follow.c
 *	  Following each target's consumer: where its scan is, whether it is
 *	  over, what it waits on, and whether it is cost-limited.
 *
 * The consumer is the backend running the VACUUM or ANALYZE.  Its progress
 * comes from the backend status array (backends.c); between the monitor's
 * steps its wait event is sampled every millisecond, which gives the read
 * time and the time in the cost-based delay without any code in the
 * backend, and tells whether the scan is cost-limited
 * (bgw_prefetch.cost_limited_depth).
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
 * A scan whose backend slept in its cost-based delay for more than
 * COST_LIMITED_ENTER of a window of COST_LIMITED_WINDOW_US is cost-limited
 * until a window with less than COST_LIMITED_LEAVE.  The delay comes a few
 * milliseconds at a time and is sampled every millisecond: a window holds
 * about a hundred samples.
 */
#define COST_LIMITED_ENTER 0.5
#define COST_LIMITED_LEAVE 0.25
#define COST_LIMITED_WINDOW_US 100000

/*
 * Did the command of a target that is no longer on its relation complete,
 * or was it cancelled or terminated?  For a target started from a forecast
 * that never saw its scan, a completion that belongs to a scan another
 * worker was followed doing does not count: the forecast was wrong.
 */
bool
scan_completed(const PrefetchTarget *t)
{
	Oid			dbid = t->state != TARGET_RESOLVING && t->rel.relfilenode != InvalidOid ?
		t->rel.dbnode : t->obs.dbid;

	if (t->forecast && t->command_start == 0 &&
		followed_by_another_since(t->obs.dbid, t->obs.relid, t->obs.command,
								  t->obs.pid, t->since))
		return false;
	return backends_completed_since(dbid, t->obs.relid, t->obs.command, t->since);
}

/* Is the target's backend waiting for a heavyweight lock? */
static bool
waiting_for_lock(PrefetchTarget *t)
{
	if (t->proc == NULL)
		t->proc = backends_proc_of(t->obs.pid);
	return backends_wait(t->proc, t->obs.pid) == BACKEND_WAIT_LOCK;
}

/*
 * A target started from an announcement has not seen its scan yet: has it
 * started now (then it is adopted and true returned), is it still to come
 * (*waiting), or will it not come (or has it come and gone between two
 * looks: the caller asks the statistics)?
 */
static bool
scan_started(PrefetchTarget *t, ObserveResult result,
			 const ScanObservation *obs, TimestampTz now, bool *waiting)
{
	ResolvedRelation unused;

	*waiting = false;
	if (result == OBSERVE_RUNNING && same_scan(obs, &t->obs))
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
			  (result == OBSERVE_RUNNING && obs->relid == t->scanned_after)))
	{
		/* its VACUUM is still processing the relation before it */
		t->tracked_at = now;
		*waiting = true;
	}
	else if (t->forecast && result == OBSERVE_RUNNING &&
			 obs->dbid == t->obs.dbid &&
			 !forecast_lookup(obs->dbid, obs->relid, obs->command, &unused) &&
			 !TimestampDifferenceExceeds(t->tracked_at, now, BGWP_AWAIT_FORECAST_MS))
		*waiting = true;		/* its worker is on a relation too small to
								 * forecast, or an ANALYZE */
	else if (result == OBSERVE_GONE || result == OBSERVE_RUNNING)
		;						/* gone, or scanning something else */
	else if (waiting_for_lock(t))
	{
		/* its VACUUM waits for the relation's lock, however long */
		t->tracked_at = now;
		*waiting = true;
	}
	else if (!TimestampDifferenceExceeds(t->tracked_at, now, BGWP_AWAIT_START_MS))
		*waiting = true;		/* still starting up */
	return false;				/* else waiting for a lock, or failed */
}

/*
 * Follow the consumer of one target.
 */
FollowResult
follow_consumer(PrefetchTarget *t, TimestampTz now)
{
	ScanObservation obs;
	ObserveResult result = backends_observe(t->obs.slot, t->obs.pid, &obs);

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
		case OBSERVE_RUNNING:
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
 * millisecond (its SAMPLE_INTERVAL_MS) while prefetcher_sampling() says so, and at every
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
		PrefetchTarget *t = &prefetch_targets[i];
		ScanObservation obs;
		ObserveResult result;
		bool		on_relation;

		if (!t->in_use || t->command_over || t->command_end != 0)
			continue;
		result = backends_observe(t->obs.slot, t->obs.pid, &obs);
		on_relation = (result == OBSERVE_RUNNING || result == OBSERVE_PHASE_DONE) &&
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
		switch (backends_wait(t->proc, t->obs.pid))
		{
			case BACKEND_WAIT_DATA_READ:
				t->read_wait_us += now - t->last_sample;
				note_read_wait(t, obs.position);
				break;
			case BACKEND_WAIT_COST_DELAY:
				t->cost_delay_wait_us += now - t->last_sample;
				break;
			case BACKEND_WAIT_LOCK:
			case BACKEND_WAIT_IDLE:
			case BACKEND_WAIT_OTHER:
				break;
		}
		t->last_sample = now;
	}
}

/* Is any command followed, so that the monitor should sample it? */
bool
prefetcher_sampling(void)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
		if (prefetch_targets[i].in_use && !prefetch_targets[i].command_over &&
			prefetch_targets[i].command_end == 0)
			return true;
	return false;
}

/*
 * Is the scan cost-limited?  A VACUUM or ANALYZE that sleeps most of its
 * time in vacuum_cost_delay runs at the pace its cost settings allow,
 * whatever its reads cost: reads ahead of it at depth save it little (its
 * reads are a small part of its time) and take the device from the
 * foreground.  Such a scan is read ahead for within
 * bgw_prefetch.cost_limited_depth reads in flight (by default no limit: it
 * is not even tracked) and a short distance (prefetch_reads.c).
 * Decided from the sampled share of wall time the backend spent in the
 * delay, with hysteresis; reads already in flight complete.
 */
void
update_cost_limited(PrefetchTarget *t, TimestampTz now)
{
	int64		window_us;
	double		share;

	if (t->command_start == 0)
		return;
	if (bgwp_cost_limited_depth < 0)
	{
		set_cost_limited(t, false, now);
		return;
	}
	if (t->hold_window_start == 0)
	{
		t->hold_window_start = Max(t->command_start, t->tracked_at);
		t->hold_window_delay_us = 0;
	}
	window_us = now - t->hold_window_start;
	if (window_us < COST_LIMITED_WINDOW_US)
		return;
	share = (double) (t->cost_delay_wait_us - t->hold_window_delay_us) / window_us;
	if (share > COST_LIMITED_ENTER)
		set_cost_limited(t, true, now);
	else if (share < COST_LIMITED_LEAVE)
		set_cost_limited(t, false, now);
	t->hold_window_start = now;
	t->hold_window_delay_us = t->cost_delay_wait_us;
}

/* Enter or leave the cost-limited state, accounting the time in it. */
void
set_cost_limited(PrefetchTarget *t, bool limited, TimestampTz now)
{
	if (limited == t->cost_limited)
		return;
	if (limited)
		t->cost_limited_since = now;
	else
		t->report.cost_limited_us += now - t->cost_limited_since;
	t->cost_limited = limited;
}
