/*-------------------------------------------------------------------------
 *
 * prefetch_unseen.c
 *	  Scans the monitor did not see: recorded from what their backends
 *	  published when each relation's transaction committed.
 *
 * The monitor follows a scan it sees in progress reporting, or one it
 * started before it shows (announced, forecast).  A short scan on a busy
 * machine can start and end between two of its looks: the monitor is a
 * process like any other and may not be scheduled for milliseconds, or be
 * stopped.  Recording every scan must not depend on that.  So every VACUUM
 * or ANALYZE backend publishes, when a relation's transaction commits,
 * which relation it scanned, its size and its reads (backend_reads.c), and
 * here each such record that no target followed is added to
 * pg_stat_prefetch: watched ("over before the monitor saw it"), with the
 * read time track_io_timing counted, an ANALYZE's sampled blocks, and, for
 * a VACUUM, no block count (nothing counted it over the visibility map
 * before it ran: it is "followed from" its last block).  A scan is recorded
 * once: the targets that followed it, or that will report it, and the ones
 * recorded here are remembered with their backend (prefetch_adopt.c).
 *
 * Every record of an autovacuum worker also says that autovacuum works in
 * the worker's database, for the forecast (forecast.c), whether or not the
 * monitor saw the worker; and a relation it vacuumed tells which relation
 * it goes to next (prefetcher_forecast()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "backend_reads.h"
#include "forecast.h"
#include "prefetch_internal.h"

/* Records taken from the backends' rings at a time */
#define PUBLISHED_BATCH 64

/* Add a published scan no target followed to the statistics, and log it. */
static void
record_unseen_scan(const PublishedXactOf *p)
{
	const PublishedXact *x = &p->xact;
	ScanReport	r;
	ResolvedRelation rel;

	memset(&r, 0, sizeof(r));
	r.dbid = p->dbid;
	r.relid = x->relid;
	r.command = x->command;
	r.prefetched = false;
	strlcpy(r.watched_reason, "over before the monitor saw it",
			sizeof(r.watched_reason));
	if (x->command == PREFETCH_CMD_VACUUM)
		r.joined_block = x->blocks_total;
	else
	{
		r.joined_block = -1;
		r.blocks_read = x->blocks_done;
	}
	r.read_time_us = x->read_time_us;
	r.read_time_sampled = false;
	r.total_time_us = Max(x->end - x->begin, 0);
	r.scan_end = x->end;

	memset(&rel, 0, sizeof(rel));
	if (p->autovacuum)
		(void) forecast_lookup(p->dbid, x->relid, x->command, &rel);
	log_scan_report(&r, p->autovacuum, rel.relname, p->pid, false);
	stats_report_scan(&r);
	remember_ended_scan(p->dbid, x->relid, x->command, p->pid, x->end);
}

/*
 * Read what the backends published since the last call: tell the forecast
 * where autovacuum works, and record the scans of at least
 * bgw_prefetch.min_relation_size that no target followed.
 */
void
prefetcher_record_published(void)
{
	PublishedXactOf batch[PUBLISHED_BATCH];
	int			n;

	do
	{
		n = backend_reads_take_new(batch, PUBLISHED_BATCH);
		for (int i = 0; i < n; i++)
		{
			const PublishedXactOf *p = &batch[i];
			const PublishedXact *x = &p->xact;

			if (!bgwp_enabled)
				continue;		/* read, so that nothing waits for it */
			if (p->autovacuum && OidIsValid(p->dbid))
				forecast_autovacuum_seen(p->dbid, p->pid);
			if (p->autovacuum && x->committed && OidIsValid(x->relid) &&
				x->command == PREFETCH_CMD_VACUUM)
				note_autovacuum_vacuumed(p->pid, x->relid, x->end);
			if (!x->committed || !OidIsValid(x->relid) ||
				x->blocks_total < (int64) bgwp_min_relation_size ||
				scan_recorded_or_followed(x->relid, x->command, p->pid, x->begin))
				continue;
			record_unseen_scan(p);
		}
	} while (n == PUBLISHED_BATCH);
}
