/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  pg_stat_prefetch: per-relation statistics in shared memory.
 *
 * A fixed-size shared hash keyed by (database, relation, command) holds the
 * totals of every VACUUM and ANALYZE of a relation the monitor followed,
 * prefetched for or not: the blocks it read and skipped, the time it
 * spent and how much of it waiting on reads (as track_io_timing counts
 * them), and what the prefetcher did for it.
 * Only the monitor writes, once per finished scan, so contention is nil;
 * the locking still follows pg_stat_statements: exclusive lock to create or
 * evict entries, shared lock plus the entry's spinlock to add to one.
 *
 * When the table is full the least recently updated entry is evicted (a
 * linear scan: it runs at most once per finished scan, and max_relations is
 * bounded) and the eviction is counted in bgw_prefetch_status(), so the
 * DBA sees that max_relations is too small instead of getting an error.
 *
 * The statistics live until pg_stat_prefetch_reset() or a restart; they
 * are not written to disk.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "bgw_prefetch.h"

PG_FUNCTION_INFO_V1(bgw_prefetch_stats);
PG_FUNCTION_INFO_V1(bgw_prefetch_reset);

typedef struct StatsKey
{
	Oid			dbid;
	Oid			relid;
	int32		command;		/* PrefetchCommand */
} StatsKey;

typedef struct StatsCounters
{
	int64		scans;
	int64		prefetched_scans;
	int64		watched_scans;
	int64		joined_scans;
	int64		last_joined_block;	/* -1: none yet */
	char		last_watched_reason[96];	/* empty: none yet */
	int64		blocks_read;
	int64		blocks_skipped;
	int64		read_time_us;
	int64		cost_delay_us;
	int64		cost_limited_us;
	int64		total_time_us;
	int64		blocks_prefetched;
	int64		blocks_late;
	int64		blocks_unused;
	int64		prefetch_time_us;
	int64		blocks_loaded;
	int64		loader_aborts;
	TimestampTz last_scan;
} StatsCounters;

typedef struct StatsEntry
{
	StatsKey	key;			/* hash key, must be first */
	slock_t		mutex;			/* protects counters and last_used */
	uint64		last_used;		/* value of the usage clock at last update */
	StatsCounters counters;
} StatsEntry;

typedef struct StatsShared
{
	LWLock	   *lock;			/* protects the hash table's membership */
	slock_t		mutex;			/* protects the fields below */
	uint64		usage_clock;
	int64		evictions;
	TimestampTz stats_reset;
} StatsShared;

static StatsShared *stats_shared = NULL;
static HTAB *stats_hash = NULL;

Size
stats_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(StatsShared)),
					hash_estimate_size(bgwp_max_relations, sizeof(StatsEntry)));
}

void
stats_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	stats_shared = ShmemInitStruct("bgw_prefetch stats", sizeof(StatsShared),
								   &found);
	if (!found)
	{
		stats_shared->lock = &(GetNamedLWLockTranche(BGWP_LWLOCK_TRANCHE))[BGWP_LWLOCK_STATS].lock;
		SpinLockInit(&stats_shared->mutex);
		stats_shared->usage_clock = 0;
		stats_shared->evictions = 0;
		stats_shared->stats_reset = GetCurrentTimestamp();
	}

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(StatsKey);
	info.entrysize = sizeof(StatsEntry);
	stats_hash = ShmemInitHash("bgw_prefetch stats hash",
							   bgwp_max_relations, bgwp_max_relations,
							   &info, HASH_ELEM | HASH_BLOBS);
}

const char *
prefetch_command_name(PrefetchCommand cmd)
{
	return cmd == PREFETCH_CMD_VACUUM ? "vacuum" : "analyze";
}

static uint64
next_usage_tick(void)
{
	uint64		tick;

	SpinLockAcquire(&stats_shared->mutex);
	tick = ++stats_shared->usage_clock;
	SpinLockRelease(&stats_shared->mutex);
	return tick;
}

/*
 * Remove the least recently updated entry.  Caller holds the lock
 * exclusively.
 */
static void
evict_least_recently_used(void)
{
	HASH_SEQ_STATUS seq;
	StatsEntry *entry;
	StatsEntry *victim = NULL;

	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		if (victim == NULL || entry->last_used < victim->last_used)
			victim = entry;
	}
	if (victim == NULL)
		return;
	hash_search(stats_hash, &victim->key, HASH_REMOVE, NULL);
	SpinLockAcquire(&stats_shared->mutex);
	stats_shared->evictions++;
	SpinLockRelease(&stats_shared->mutex);
}

/*
 * Find the entry for key, creating it (and evicting if full) when absent.
 * Returns with the lock held in shared mode.
 */
static StatsEntry *
stats_entry_for(const StatsKey *key)
{
	StatsEntry *entry;
	bool		found;

	LWLockAcquire(stats_shared->lock, LW_SHARED);
	entry = hash_search(stats_hash, key, HASH_FIND, NULL);
	if (entry != NULL)
		return entry;
	LWLockRelease(stats_shared->lock);

	LWLockAcquire(stats_shared->lock, LW_EXCLUSIVE);
	/* someone may have created it meanwhile: HASH_ENTER accepts that */
	entry = hash_search(stats_hash, key, HASH_FIND, NULL);
	if (entry == NULL)
	{
		if (hash_get_num_entries(stats_hash) >= bgwp_max_relations)
			evict_least_recently_used();
		entry = hash_search(stats_hash, key, HASH_ENTER, &found);
		if (!found)
		{
			SpinLockInit(&entry->mutex);
			memset(&entry->counters, 0, sizeof(entry->counters));
			entry->counters.last_joined_block = -1;
			entry->last_used = 0;
		}
	}
	LWLockRelease(stats_shared->lock);

	/*
	 * Re-take in shared mode.  The entry cannot vanish in between except by
	 * a reset or an eviction, which is harmless here: look it up again.
	 */
	LWLockAcquire(stats_shared->lock, LW_SHARED);
	return hash_search(stats_hash, key, HASH_FIND, NULL);
}

/*
 * Add one finished scan to its relation's totals.
 */
void
stats_report_scan(const ScanReport *report)
{
	StatsKey	key;
	StatsEntry *entry;
	uint64		tick;

	if (stats_shared == NULL)
		return;

	memset(&key, 0, sizeof(key));
	key.dbid = report->dbid;
	key.relid = report->relid;
	key.command = (int32) report->command;

	tick = next_usage_tick();
	entry = stats_entry_for(&key);
	if (entry != NULL)
	{
		StatsCounters *c = &entry->counters;

		SpinLockAcquire(&entry->mutex);
		c->scans++;
		if (report->prefetched)
			c->prefetched_scans++;
		else
		{
			c->watched_scans++;
			strlcpy(c->last_watched_reason, report->watched_reason,
					sizeof(c->last_watched_reason));
		}
		if (report->joined_block >= 0)
		{
			c->joined_scans++;
			c->last_joined_block = report->joined_block;
		}
		c->blocks_read += report->blocks_read;
		c->blocks_skipped += report->blocks_skipped;
		c->read_time_us += report->read_time_us;
		c->cost_delay_us += report->cost_delay_us;
		c->cost_limited_us += report->cost_limited_us;
		c->total_time_us += report->total_time_us;
		c->blocks_prefetched += report->blocks_prefetched;
		c->blocks_late += report->blocks_late;
		c->blocks_unused += report->blocks_unused;
		c->prefetch_time_us += report->prefetch_time_us;
		c->blocks_loaded += report->blocks_loaded;
		c->loader_aborts += report->loader_aborts;
		c->last_scan = report->scan_end;
		entry->last_used = tick;
		SpinLockRelease(&entry->mutex);
	}
	LWLockRelease(stats_shared->lock);
}

static void
require_stats(void)
{
	bgwp_require_preload();
	if (stats_shared == NULL || stats_hash == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bgw_prefetch shared memory is not initialized")));
}

#define STATS_COLS 27

/*
 * SRF behind the pg_stat_prefetch view.
 */
Datum
bgw_prefetch_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	StatsEntry *entry;
	TimestampTz stats_reset;

	require_stats();
	InitMaterializedSRF(fcinfo, 0);

	SpinLockAcquire(&stats_shared->mutex);
	stats_reset = stats_shared->stats_reset;
	SpinLockRelease(&stats_shared->mutex);

	LWLockAcquire(stats_shared->lock, LW_SHARED);
	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[STATS_COLS];
		bool		nulls[STATS_COLS];
		StatsCounters c;
		int			i = 0;

		SpinLockAcquire(&entry->mutex);
		c = entry->counters;
		SpinLockRelease(&entry->mutex);

		memset(nulls, 0, sizeof(nulls));
		values[i++] = ObjectIdGetDatum(entry->key.dbid);
		values[i++] = ObjectIdGetDatum(entry->key.relid);
		values[i++] = CStringGetTextDatum(prefetch_command_name(entry->key.command));
		values[i++] = Int64GetDatum(c.scans);
		values[i++] = Int64GetDatum(c.prefetched_scans);
		values[i++] = Int64GetDatum(c.watched_scans);
		if (c.last_watched_reason[0] != '\0')
			values[i++] = CStringGetTextDatum(c.last_watched_reason);
		else
			nulls[i++] = true;
		values[i++] = Int64GetDatum(c.joined_scans);
		if (c.last_joined_block >= 0)
			values[i++] = Int64GetDatum(c.last_joined_block);
		else
			nulls[i++] = true;
		values[i++] = Int64GetDatum(c.blocks_read);
		if (entry->key.command == PREFETCH_CMD_VACUUM)
			values[i++] = Int64GetDatum(c.blocks_skipped);
		else
			nulls[i++] = true;
		values[i++] = Float8GetDatum(c.read_time_us / 1000.0);
		values[i++] = Float8GetDatum(c.cost_delay_us / 1000.0);
		values[i++] = Float8GetDatum(c.cost_limited_us / 1000.0);
		values[i++] = Float8GetDatum(c.total_time_us / 1000.0);
		if (c.total_time_us > 0)
			values[i++] = Float8GetDatum(blocks_mb_per_s(c.blocks_read, c.total_time_us));
		else
			nulls[i++] = true;
		values[i++] = Int64GetDatum(c.blocks_prefetched);
		values[i++] = Int64GetDatum(Max(c.blocks_prefetched - c.blocks_late - c.blocks_unused, 0));
		values[i++] = Int64GetDatum(c.blocks_late);
		values[i++] = Int64GetDatum(c.blocks_unused);
		values[i++] = Float8GetDatum(c.prefetch_time_us / 1000.0);
		values[i++] = Int64GetDatum(c.blocks_loaded);
		values[i++] = Int64GetDatum(c.loader_aborts);
		if (c.last_scan != 0)
			values[i++] = TimestampTzGetDatum(c.last_scan);
		else
			nulls[i++] = true;
		values[i++] = TimestampTzGetDatum(stats_reset);
		Assert(i == STATS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(stats_shared->lock);

	return (Datum) 0;
}

/*
 * pg_stat_prefetch_reset(): forget every entry, and the CLOG writer's counts.
 */
Datum
bgw_prefetch_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	StatsEntry *entry;
	TimestampTz now = GetCurrentTimestamp();

	require_stats();

	LWLockAcquire(stats_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
		hash_search(stats_hash, &entry->key, HASH_REMOVE, NULL);
	SpinLockAcquire(&stats_shared->mutex);
	stats_shared->evictions = 0;
	stats_shared->stats_reset = now;
	SpinLockRelease(&stats_shared->mutex);
	LWLockRelease(stats_shared->lock);

	clog_writer_reset_stats(now);

	PG_RETURN_VOID();
}

/*
 * The shared hash's use and last reset, for bgw_prefetch_status().
 */
void
stats_get_status(StatsStatus *status)
{
	require_stats();
	LWLockAcquire(stats_shared->lock, LW_SHARED);
	status->entries = hash_get_num_entries(stats_hash);
	LWLockRelease(stats_shared->lock);
	SpinLockAcquire(&stats_shared->mutex);
	status->evictions = stats_shared->evictions;
	status->stats_reset = stats_shared->stats_reset;
	SpinLockRelease(&stats_shared->mutex);
}
