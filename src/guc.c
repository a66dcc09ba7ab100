/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  The bgw_prefetch.* configuration parameters.
 *
 * All parameters are reloadable (PGC_SIGHUP) except the one that sizes
 * shared memory.  Values are validated in check hooks, so that a bad value
 * is rejected by ALTER SYSTEM, and a bad value in postgresql.conf at reload
 * leaves the previous value in force (the server logs why), before any
 * worker could see it.
 *
 * bgw_prefetch.tablespace_io_depth is a list "name=depth, ...".  Its syntax
 * and ranges are checked everywhere; whether each tablespace exists can only
 * be checked where the catalogs are readable (inside a transaction, as in
 * ALTER SYSTEM), exactly as core does for default_tablespace.  Names are
 * resolved again when used, so a tablespace dropped later is just ignored.
 *
 * Whether the parameters were defined at all -- the library was preloaded --
 * is the check every SQL function reading shared state makes first
 * (bgwp_require_preload()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/xact.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "bgw_prefetch.h"
#include "compat.h"
#include "io_engine.h"

/* Upper bound of any prefetch depth, as core's MAX_IO_CONCURRENCY. */
#define BGWP_MAX_DEPTH 1000

bool		bgwp_enabled = true;
bool		bgwp_vacuum = true;
bool		bgwp_analyze = true;
bool		bgwp_pacing = true;
int			bgwp_clog_writer = CLOG_WRITER_MODE_AUTO;
int			bgwp_targets = PREFETCH_TARGETS_ALL;
int			bgwp_min_relation_size = 1024;
int			bgwp_naptime = 200;
int			bgwp_max_relations = 1000;
int			bgwp_log_min_duration = 600000;
int			bgwp_io_method = IO_METHOD_IO_URING;
int			bgwp_max_distance = 8192;
char	   *bgwp_tablespace_io_depth = NULL;
int			bgwp_clog_writer_delay = 200;
int			bgwp_clog_writer_max_pages = 16;
int			bgwp_read_into = PREFETCH_READ_INTO_OS_CACHE;
int			bgwp_cost_limited_depth = -1;
double		bgwp_shared_buffers_cap = 0.25;

/*
 * The parameters are defined only when the library is preloaded (from
 * _PG_init in the postmaster; every child inherits the flag), which is what
 * the SQL functions need.
 */
static bool preloaded = false;

static const struct config_enum_entry targets_options[] = {
	{"autovacuum", PREFETCH_TARGETS_AUTOVACUUM, false},
	{"all", PREFETCH_TARGETS_ALL, false},
	{NULL, 0, false}
};

/* booleans too, as the setting was one, hidden like core's */
static const struct config_enum_entry clog_writer_options[] = {
	{"auto", CLOG_WRITER_MODE_AUTO, false},
	{"on", CLOG_WRITER_MODE_ON, false},
	{"off", CLOG_WRITER_MODE_OFF, false},
	{"true", CLOG_WRITER_MODE_ON, true},
	{"false", CLOG_WRITER_MODE_OFF, true},
	{"yes", CLOG_WRITER_MODE_ON, true},
	{"no", CLOG_WRITER_MODE_OFF, true},
	{"1", CLOG_WRITER_MODE_ON, true},
	{"0", CLOG_WRITER_MODE_OFF, true},
	{NULL, 0, false}
};

static const struct config_enum_entry read_into_options[] = {
	{"os_cache", PREFETCH_READ_INTO_OS_CACHE, false},
	{"shared_buffers", PREFETCH_READ_INTO_SHARED_BUFFERS, false},
	{NULL, 0, false}
};

static const struct config_enum_entry bgwp_io_method_options[] = {
	{"io_uring", IO_METHOD_IO_URING, false},
	{"fadvise", IO_METHOD_FADVISE, false},
	{NULL, 0, false}
};

/* Parsed form of bgw_prefetch.tablespace_io_depth (the GUC's "extra"). */
typedef struct TablespaceDepthEntry
{
	char		spcname[NAMEDATALEN];
	int			depth;
} TablespaceDepthEntry;

typedef struct TablespaceDepthMap
{
	int			nentries;
	TablespaceDepthEntry entries[FLEXIBLE_ARRAY_MEMBER];
} TablespaceDepthMap;

static TablespaceDepthMap *tablespace_depth_map = NULL;

static bool check_tablespace_io_depth(char **newval, void **extra,
									  GucSource source);
static void assign_tablespace_io_depth(const char *newval, void *extra);

/*
 * Parse "name=depth, name=depth" into a map allocated as a GUC extra
 * (compat.h).  On a syntax or range error, sets the GUC error detail/hint
 * and returns NULL.
 */
static TablespaceDepthMap *
parse_tablespace_io_depth(const char *value)
{
	TablespaceDepthMap *map;
	const char *p = value;
	int			maxentries = 1;

	for (const char *c = value; *c; c++)
		if (*c == ',')
			maxentries++;

	map = BGWP_GUC_EXTRA_ALLOC(offsetof(TablespaceDepthMap, entries) +
								maxentries * sizeof(TablespaceDepthEntry));
	if (map == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errdetail("out of memory");
		return NULL;
	}
	map->nentries = 0;

	for (;;)
	{
		char		name[NAMEDATALEN];
		int			namelen = 0;
		long		depth;
		char	   *end;

		while (isspace((unsigned char) *p))
			p++;
		if (*p == '\0' && map->nentries == 0)
			break;				/* empty string: no overrides */

		while (*p && *p != '=' && *p != ',' && !isspace((unsigned char) *p))
		{
			if (namelen >= NAMEDATALEN - 1)
			{
				name[namelen] = '\0';
				GUC_check_errdetail("Tablespace name \"%.20s...\" is too long.", name);
				goto fail;
			}
			name[namelen++] = *p++;
		}
		name[namelen] = '\0';
		while (isspace((unsigned char) *p))
			p++;
		if (namelen == 0 || *p != '=')
		{
			GUC_check_errdetail("Expected \"tablespace=depth\" at \"%s\".", p);
			GUC_check_errhint("Write a comma-separated list such as \"pg_default=32, fast_ssd=64\".");
			goto fail;
		}
		p++;
		while (isspace((unsigned char) *p))
			p++;
		errno = 0;
		depth = strtol(p, &end, 10);
		if (end == p || errno != 0)
		{
			GUC_check_errdetail("Depth of tablespace \"%s\" is not an integer.", name);
			GUC_check_errhint("Write a comma-separated list such as \"pg_default=32, fast_ssd=64\".");
			goto fail;
		}
		if (depth < 1 || depth > BGWP_MAX_DEPTH)
		{
			GUC_check_errdetail("Depth %ld of tablespace \"%s\" is out of range.", depth, name);
			GUC_check_errhint("Depths must be between 1 and %d.", BGWP_MAX_DEPTH);
			goto fail;
		}
		for (int i = 0; i < map->nentries; i++)
		{
			if (strcmp(map->entries[i].spcname, name) == 0)
			{
				GUC_check_errdetail("Tablespace \"%s\" is listed more than once.", name);
				goto fail;
			}
		}
		strlcpy(map->entries[map->nentries].spcname, name, NAMEDATALEN);
		map->entries[map->nentries].depth = (int) depth;
		map->nentries++;

		p = end;
		while (isspace((unsigned char) *p))
			p++;
		if (*p == '\0')
			break;
		if (*p != ',')
		{
			GUC_check_errdetail("Unexpected \"%s\" after the depth of tablespace \"%s\".", p, name);
			GUC_check_errhint("Separate entries with commas.");
			goto fail;
		}
		p++;
	}
	return map;

fail:
	BGWP_GUC_EXTRA_FREE(map);
	return NULL;
}

static bool
check_tablespace_io_depth(char **newval, void **extra, GucSource source)
{
	TablespaceDepthMap *map;

	if (*newval == NULL)
		return true;
	map = parse_tablespace_io_depth(*newval);
	if (map == NULL)
		return false;

	/* Names can be checked only where the catalogs can be read. */
	if (IsTransactionState() && MyDatabaseId != InvalidOid)
	{
		for (int i = 0; i < map->nentries; i++)
		{
			if (!OidIsValid(get_tablespace_oid(map->entries[i].spcname, true)))
			{
				GUC_check_errcode(ERRCODE_UNDEFINED_OBJECT);
				GUC_check_errdetail("Tablespace \"%s\" does not exist.",
									map->entries[i].spcname);
				GUC_check_errhint("List existing tablespaces, see pg_tablespace.");
				BGWP_GUC_EXTRA_FREE(map);
				return false;
			}
		}
	}
	*extra = map;
	return true;
}

static void
assign_tablespace_io_depth(const char *newval, void *extra)
{
	tablespace_depth_map = (TablespaceDepthMap *) extra;
}

int
bgwp_tablespace_depth_lookup(const char *spcname)
{
	if (tablespace_depth_map == NULL)
		return -1;
	for (int i = 0; i < tablespace_depth_map->nentries; i++)
		if (strcmp(tablespace_depth_map->entries[i].spcname, spcname) == 0)
			return tablespace_depth_map->entries[i].depth;
	return -1;
}

/*
 * Define every parameter and reserve the prefix.  Called from _PG_init in
 * the postmaster only, when the library is preloaded.
 */
void
bgwp_define_gucs(void)
{
	preloaded = true;
	DefineCustomBoolVariable("bgw_prefetch.enabled",
							 "Master switch of bgw_prefetch's prefetching and CLOG writing.",
							 "When off, the workers stay idle; pg_stat_prefetch keeps its contents.",
							 &bgwp_enabled, true, PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("bgw_prefetch.vacuum",
							 "Prefetch the heap blocks of running VACUUMs.",
							 "When off, VACUUMs are still followed and measured in pg_stat_prefetch.", &bgwp_vacuum, true, PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("bgw_prefetch.pacing",
							 "Pace the prefetch by the latency a small direct read sees on the disk.",
							 "When off, the prefetch is bounded by its depth and distance only.",
							 &bgwp_pacing, true, PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("bgw_prefetch.analyze",
							 "Prefetch the upcoming sample blocks of running ANALYZEs where that pays.",
							 "When off, ANALYZEs are still followed and measured in pg_stat_prefetch.", &bgwp_analyze, true, PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("bgw_prefetch.clog_writer",
							 "Write dirty CLOG pages in the background before backends must evict them.",
							 "auto writes only while other processes are seen evicting dirty CLOG pages.",
							 &bgwp_clog_writer, CLOG_WRITER_MODE_AUTO,
							 clog_writer_options, PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("bgw_prefetch.targets",
							 "Which VACUUM and ANALYZE runs are prefetched for: autovacuum only, or all.",
							 NULL, &bgwp_targets, PREFETCH_TARGETS_ALL,
							 targets_options, PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("bgw_prefetch.min_relation_size",
							"Scans of fewer blocks than this are neither prefetched for nor counted.",
							NULL, &bgwp_min_relation_size, 1024, 0, INT_MAX / 2,
							PGC_SIGHUP, GUC_UNIT_BLOCKS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("bgw_prefetch.naptime",
							"Time the monitor sleeps between looks for VACUUM/ANALYZE while none runs and no autovacuum worker exists.",
							NULL, &bgwp_naptime, 200, 10, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("bgw_prefetch.max_relations",
							"Number of (database, relation, command) entries pg_stat_prefetch keeps.",
							"The least recently updated entry is evicted when full.",
							&bgwp_max_relations, 1000, 100, 1000000,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("bgw_prefetch.log_min_duration",
							"Log every VACUUM or ANALYZE followed that lasted at least this long; -1 disables, 0 logs all.",
							NULL, &bgwp_log_min_duration, 600000, -1, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomEnumVariable("bgw_prefetch.io_method",
							 "How blocks are pre-read: through io_uring, or by synchronous posix_fadvise(WILLNEED).",
							 "With io_uring a VACUUM's planned blocks are advised and an ANALYZE stream is read. If io_uring cannot be set up the engine falls back to fadvise and says why.",
							 &bgwp_io_method, IO_METHOD_IO_URING,
							 bgwp_io_method_options, PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("bgw_prefetch.max_distance",
							"Upper bound of how far ahead of a scan blocks are pre-read.",
							NULL, &bgwp_max_distance, 8192, 16, 1048576,
							PGC_SIGHUP, GUC_UNIT_BLOCKS,
							NULL, NULL, NULL);
	DefineCustomStringVariable("bgw_prefetch.tablespace_io_depth",
							   "Prefetch depth (reads in flight) per tablespace, as \"name=depth, ...\".",
							   "Tablespaces not listed use their recorded calibration, else their maintenance_io_concurrency option, else the server's.",
							   &bgwp_tablespace_io_depth, "", PGC_SIGHUP, 0,
							   check_tablespace_io_depth, assign_tablespace_io_depth,
							   NULL);
	DefineCustomIntVariable("bgw_prefetch.clog_writer_delay",
							"Longest time the CLOG writer sleeps between rounds while transactions are running.",
							"It wakes earlier when the latest CLOG page is about to fill, and sleeps up to 1 s when idle.",
							&bgwp_clog_writer_delay, 200, 10, 10000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("bgw_prefetch.clog_writer_max_pages",
							"Most dirty CLOG pages the CLOG writer writes in one round.",
							NULL, &bgwp_clog_writer_max_pages, 16, 1, 1024,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("bgw_prefetch.cost_limited_depth",
							"Reads in flight at most for a VACUUM or ANALYZE that spends most of its time in its cost-based delay.",
							"-1 (the default) reads ahead of it like any other scan, as far as its pace takes it; 0 reads nothing ahead of it while it is cost-limited; n keeps at most n reads in flight.",
							&bgwp_cost_limited_depth, -1, -1, 1000,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomEnumVariable("bgw_prefetch.read_into",
							 "Where pre-read blocks go: the OS page cache, or shared buffers too.",
							 "shared_buffers makes the scan find buffer hits; see doc/reference.md for its effect on cost-based vacuum delay.",
							 &bgwp_read_into, PREFETCH_READ_INTO_OS_CACHE,
							 read_into_options, PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomRealVariable("bgw_prefetch.shared_buffers_cap",
							 "Fraction of shared_buffers that blocks loaded ahead of all scans may occupy.",
							 "Past it, pre-read blocks stay in the OS page cache until the scans catch up.",
							 &bgwp_shared_buffers_cap, 0.25, 0.0, 0.9,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("bgw_prefetch");
}

/*
 * Error out of a SQL function when the library was not preloaded, in the
 * words pg_stat_statements uses for the same situation.
 */
void
bgwp_require_preload(void)
{
	if (!preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bgw_prefetch must be loaded via shared_preload_libraries"),
				 errhint("Add bgw_prefetch to shared_preload_libraries in postgresql.conf and restart the server.")));
}
