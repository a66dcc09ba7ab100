/*-------------------------------------------------------------------------
 *
 * resolve_relation.c
 *	  What a resolver looks up in the relation's database: its files, its
 *	  tablespace's prefetch depth, and how the VACUUM will scan it.
 *
 * Whether a VACUUM is aggressive is computed as vacuum_set_xid_limits()
 * (vacuum_get_cutoffs() from PostgreSQL 16, the same rule up to 18) does
 * from relfrozenxid/relminmxid, the freeze table ages (the table's
 * autovacuum reloptions for autovacuum) and, for a manual VACUUM, the FREEZE
 * and DISABLE_PAGE_SKIPPING options and the session's freeze table ages,
 * which the backend's utility hook published (statement_options.c).  An
 * anti-wraparound autovacuum is not aggressive by itself: only its ages
 * decide, as in vacuumlazy.c.
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

/* The name of where a depth came from, for the view and the log */
const char *
depth_source_name(DepthSource source)
{
	switch (source)
	{
		case DEPTH_FROM_GUC_MAP:
			return "bgw_prefetch.tablespace_io_depth";
		case DEPTH_FROM_CALIBRATION:
			return "calibration";
		case DEPTH_FROM_TABLESPACE_OPTION:
			return "tablespace option";
		case DEPTH_FROM_STREAM_MINIMUM:
			return "sequential stream minimum";
		case DEPTH_FROM_SERVER_DEFAULT:
			break;
	}
	return "maintenance_io_concurrency";
}

/*
 * The options of a VACUUM given none: what autovacuum does.
 */
void
vacuum_options_init(VacuumOptions *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->process_toast = true;
	opts->process_main = true;
	opts->freeze_table_age = -1;
	opts->multixact_freeze_table_age = -1;
}

/*
 * The options that matter to us from a VACUUM's option list (DefElems, as
 * the grammar leaves them).
 */
void
vacuum_options_from_list(List *options, VacuumOptions *opts)
{
	ListCell   *lc;

	vacuum_options_init(opts);
	foreach(lc, options)
	{
		DefElem    *opt = lfirst_node(DefElem, lc);

		if (strcmp(opt->defname, "freeze") == 0)
			opts->freeze = defGetBoolean(opt);
		else if (strcmp(opt->defname, "disable_page_skipping") == 0)
			opts->disable_page_skipping = defGetBoolean(opt);
		else if (strcmp(opt->defname, "analyze") == 0)
			opts->analyze = defGetBoolean(opt);
		else if (strcmp(opt->defname, "full") == 0)
			opts->full = defGetBoolean(opt);
		else if (strcmp(opt->defname, "process_toast") == 0)
			opts->process_toast = defGetBoolean(opt);
		else if (strcmp(opt->defname, "process_main") == 0)
			opts->process_main = defGetBoolean(opt);
		else if (strcmp(opt->defname, "skip_locked") == 0)
			opts->skip_locked = defGetBoolean(opt);
		/* the others do not change which blocks are read, or in what order */
	}
}

/*
 * Would vacuum_set_xid_limits() (vacuum_get_cutoffs() from 16) call this
 * VACUUM aggressive?  Mirrors vacuum.c and, for autovacuum,
 * table_recheck_autovac()'s choice of ages; a manual VACUUM's come from its
 * session (opts).
 */
static bool
vacuum_is_aggressive(Form_pg_class classForm, HeapTuple classTup,
					 bool autovacuum, const VacuumOptions *opts)
{
	int			freeze_table_age = opts->freeze_table_age;
	int			multixact_freeze_table_age = opts->multixact_freeze_table_age;
	int			freezetable;
	TransactionId limit;
	MultiXactId mxact_limit;

	if (opts->freeze)
		return true;
	if (autovacuum)
	{
		HeapTuple	dbtup = SearchSysCache1(DATABASEOID,
											ObjectIdGetDatum(MyDatabaseId));
		bool		isnull;
		Datum		reloptions = SysCacheGetAttr(RELOID, classTup,
												 Anum_pg_class_reloptions,
												 &isnull);
		bytea	   *relopts = isnull ? NULL :
			heap_reloptions(classForm->relkind, reloptions, false);

		if (HeapTupleIsValid(dbtup))
		{
			Form_pg_database dbform = (Form_pg_database) GETSTRUCT(dbtup);

			if (dbform->datistemplate || !dbform->datallowconn)
				freeze_table_age = multixact_freeze_table_age = 0;
			ReleaseSysCache(dbtup);
		}
		if (relopts != NULL && freeze_table_age != 0)
		{
			AutoVacOpts *av = &((StdRdOptions *) relopts)->autovacuum;

			freeze_table_age = av->freeze_table_age;
			multixact_freeze_table_age = av->multixact_freeze_table_age;
		}
	}

	freezetable = freeze_table_age >= 0 ? freeze_table_age : vacuum_freeze_table_age;
	freezetable = Min(freezetable, autovacuum_freeze_max_age * 0.95);
	limit = ReadNextTransactionId() - freezetable;
	if (!TransactionIdIsNormal(limit))
		limit = FirstNormalTransactionId;
	if (TransactionIdPrecedesOrEquals(classForm->relfrozenxid, limit))
		return true;

	freezetable = multixact_freeze_table_age >= 0 ?
		multixact_freeze_table_age : vacuum_multixact_freeze_table_age;
	freezetable = Min(freezetable, MultiXactMemberFreezeThreshold() * 0.95);
	mxact_limit = ReadNextMultiXactId() - freezetable;
	if (mxact_limit < FirstMultiXactId)
		mxact_limit = FirstMultiXactId;
	return MultiXactIdPrecedesOrEquals(classForm->relminmxid, mxact_limit);
}

/*
 * The depth for a tablespace and where it comes from: the GUC map, then a
 * recorded calibration, then the tablespace's maintenance_io_concurrency
 * option, then the server's.  A calibration's read costs are passed on for
 * the ANALYZE cost model whatever decides the depth.
 */
static void
resolve_depth(Oid spcid, ResolvedRelation *res)
{
	char	   *spcname = get_tablespace_name(spcid);
	int			depth = spcname ? bgwp_tablespace_depth_lookup(spcname) : -1;
	int			calibrated_depth;
	HeapTuple	spctup;

	res->calibrated = calibration_lookup(spcid, &calibrated_depth,
										 &res->seq_us_per_block,
										 &res->random_us_per_block);
	if (depth > 0)
	{
		res->io_depth = depth;
		res->depth_source = DEPTH_FROM_GUC_MAP;
		return;
	}
	if (res->calibrated)
	{
		res->io_depth = calibrated_depth;
		res->depth_source = DEPTH_FROM_CALIBRATION;
		return;
	}
	res->io_depth = maintenance_io_concurrency;
	res->depth_source = DEPTH_FROM_SERVER_DEFAULT;

	spctup = SearchSysCache1(TABLESPACEOID, ObjectIdGetDatum(spcid));
	if (HeapTupleIsValid(spctup))
	{
		bool		isnull;
		Datum		options = SysCacheGetAttr(TABLESPACEOID, spctup,
											  Anum_pg_tablespace_spcoptions,
											  &isnull);

		if (!isnull)
		{
			TableSpaceOpts *opts = (TableSpaceOpts *) tablespace_reloptions(options, false);

			if (opts->maintenance_io_concurrency >= 0)
			{
				res->io_depth = opts->maintenance_io_concurrency;
				res->depth_source = DEPTH_FROM_TABLESPACE_OPTION;
			}
		}
		ReleaseSysCache(spctup);
	}
	/* a depth of 0 disables core prefetching; we still need one read */
	res->io_depth = Max(res->io_depth, 1);
}

/*
 * Fill res for req; sets watched_reason for relations we deliberately leave
 * alone.
 */
void
resolve_relation(const ResolveRequest *req, const VacuumOptions *opts,
				 ResolvedRelation *res)
{
	HeapTuple	tup;
	Form_pg_class classForm;
	char	   *nspname;

	memset(res, 0, sizeof(*res));
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(req->relid));
	if (!HeapTupleIsValid(tup))
	{
		strlcpy(res->watched_reason, "relation no longer exists", sizeof(res->watched_reason));
		return;
	}
	classForm = (Form_pg_class) GETSTRUCT(tup);
	nspname = get_namespace_name(classForm->relnamespace);
	snprintf(res->relname, sizeof(res->relname), "%s.%s",
			 nspname ? nspname : "?", NameStr(classForm->relname));

	if (classForm->relpersistence == RELPERSISTENCE_TEMP)
		strlcpy(res->watched_reason, "temporary table", sizeof(res->watched_reason));
	else if ((classForm->relkind != RELKIND_RELATION &&
			  classForm->relkind != RELKIND_MATVIEW &&
			  classForm->relkind != RELKIND_TOASTVALUE) ||
			 classForm->relam != HEAP_TABLE_AM_OID)
		strlcpy(res->watched_reason, "not a heap table", sizeof(res->watched_reason));
	else
	{
		res->relfilenode = OidIsValid(classForm->relfilenode) ?
			classForm->relfilenode :
			BGWP_RELATION_MAP_OID_TO_FILE(req->relid, classForm->relisshared);
		res->spcnode = classForm->relisshared ? GLOBALTABLESPACE_OID :
			OidIsValid(classForm->reltablespace) ? classForm->reltablespace :
			MyDatabaseTableSpace;
		res->dbnode = classForm->relisshared ? InvalidOid : MyDatabaseId;
		resolve_depth(res->spcnode, res);

		if (req->command == PREFETCH_CMD_VACUUM)
		{
			if (opts->disable_page_skipping)
				res->skip_mode = VACUUM_SKIP_DISABLED;
			else if (vacuum_is_aggressive(classForm, tup, req->autovacuum, opts))
				res->skip_mode = VACUUM_SKIP_AGGRESSIVE;
			else
				res->skip_mode = VACUUM_SKIP_NORMAL;
		}
	}
	ReleaseSysCache(tup);
}

