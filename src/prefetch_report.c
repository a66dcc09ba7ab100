/*-------------------------------------------------------------------------
 *
 * prefetch_report.c
 *	  What a target tells: its log line when it ends, and its row of
 *	  pg_stat_prefetch_activity while it runs.
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

#include "lib/stringinfo.h"
#include "prefetch_internal.h"

/*
 * Log a finished scan past bgw_prefetch.log_min_duration, in the words and
 * units of autovacuum's own log line, so that the two can be compared.
 */
void
log_scan(const PrefetchTarget *t)
{
	log_scan_report(&t->report, t->autovacuum, t->rel.relname, t->obs.pid,
					t->abandoned);
}

/* ... the same line for a scan's report, followed or not */
void
log_scan_report(const ScanReport *r, bool autovacuum, const char *relname,
				int pid, bool abandoned)
{
	StringInfoData buf;

	if (bgwp_log_min_duration < 0 ||
		r->total_time_us < (int64) bgwp_log_min_duration * 1000)
		return;
	initStringInfo(&buf);
	appendStringInfo(&buf, "bgw_prefetch: %s%s of \"%s\" (database %u, relation %u, pid %d): ",
					 autovacuum ? "automatic " : "",
					 prefetch_command_name(r->command),
					 relname[0] ? relname : "(not resolved)",
					 r->dbid, r->relid, pid);
	appendStringInfoString(&buf, abandoned ? "did not complete" : "completed");
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
	appendStringInfo(&buf, "\nI/O timings: read: %.3f ms%s",
					 r->read_time_us / 1000.0,
					 r->read_time_sampled ? " (sampled)" : "");
	if (r->cost_delay_us > 0)
		appendStringInfo(&buf, "\ncost delay: %.3f s (sampled), cost-limited for %.3f s",
						 r->cost_delay_us / 1000000.0,
						 r->cost_limited_us / 1000000.0);
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
 * The blocks a finished (or cancelled) VACUUM read and skipped, from its
 * count over the visibility map.  The count runs ahead of the VACUUM; a
 * VACUUM that stopped early is credited the counted share of the blocks it
 * passed.  Without a count (the relation was never resolved, or not before
 * the scan was over) nothing is known: the scan is followed "from" its last
 * block.
 */
void
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
 * Describe the targets for pg_stat_prefetch_activity.
 */
int
prefetcher_activity(ActivityRow *rows, int max)
{
	int			n = 0;

	for (int i = 0; i < BGWP_MAX_TARGETS && n < max; i++)
	{
		PrefetchTarget *t = &prefetch_targets[i];
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
		else if (t->obs.phase == SCAN_PHASE_PAUSED)
			strlcpy(row->state, "paused", sizeof(row->state));
		else
			strlcpy(row->state, t->cost_limited ? "cost-limited" : "prefetching",
					sizeof(row->state));
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
