/*-------------------------------------------------------------------------
 *
 * autovac_rule.c
 *	  Pure statement of autovacuum's "does this table need work" rule.
 *
 * Line for line relation_needs_vacanalyze() of autovacuum.c, PostgreSQL 15
 * (16 and 17 are the same rule; 18 adds vacuum_max_threshold, which caps
 * the dead-tuple threshold, and scales the insert threshold by the share of
 * pages not all-frozen).  The xid and multixact comparisons are transam.c's
 * and multixact.c's modulo-2^32 ones, restated here so that the file needs
 * no server header.  Keep it in step with the server's function: the
 * forecaster (forecast.c) is only as good as this transcription.
 *
 *-------------------------------------------------------------------------
 */
#include <stddef.h>

#include "autovac_rule.h"

/* transam.h's and multixact.h's constants, unchanged in 15-18 */
#define AR_FIRST_NORMAL_XID		3
#define AR_FIRST_MULTIXACT_ID	1

static bool
xid_is_normal(uint32_t xid)
{
	return xid >= AR_FIRST_NORMAL_XID;
}

/* TransactionIdPrecedes() for a normal id1 (id2 may be anything) */
static bool
xid_precedes(uint32_t id1, uint32_t id2)
{
	if (!xid_is_normal(id1) || !xid_is_normal(id2))
		return id1 < id2;
	return (int32_t) (id1 - id2) < 0;
}

/* MultiXactIdPrecedes() */
static bool
multi_precedes(uint32_t m1, uint32_t m2)
{
	return (int32_t) (m1 - m2) < 0;
}

void
autovac_needs_vacanalyze(const AutovacSettings *s,
						 const AutovacTableOptions *o,
						 const AutovacTableState *t,
						 uint32_t next_xid, uint32_t next_multi,
						 AutovacDecision *d)
{
	const AutovacTableOptions *relopts = o->has_options ? o : NULL;
	double		vac_scale_factor;
	double		vac_ins_scale_factor;
	double		anl_scale_factor;
	int			vac_base_thresh;
	int			vac_ins_base_thresh;
	int			vac_max_thresh;
	int			anl_base_thresh;
	int			freeze_max_age;
	int			multixact_freeze_max_age;
	bool		av_enabled;
	bool		force_vacuum;
	uint32_t	xid_force_limit;
	uint32_t	multi_force_limit;

	/* the server computes in float4: so do we, for the same edge cases */
	vac_scale_factor = (relopts && relopts->vacuum_scale_factor >= 0)
		? relopts->vacuum_scale_factor : s->vac_scale;
	vac_base_thresh = (relopts && relopts->vacuum_threshold >= 0)
		? relopts->vacuum_threshold : s->vac_thresh;
	vac_max_thresh = (relopts && relopts->vacuum_max_threshold >= -1)
		? relopts->vacuum_max_threshold : s->vac_max_thresh;
	vac_ins_scale_factor = (relopts && relopts->vacuum_ins_scale_factor >= 0)
		? relopts->vacuum_ins_scale_factor : s->vac_ins_scale;
	/* -1 disables insert vacuums */
	vac_ins_base_thresh = (relopts && relopts->vacuum_ins_threshold >= -1)
		? relopts->vacuum_ins_threshold : s->vac_ins_thresh;
	anl_scale_factor = (relopts && relopts->analyze_scale_factor >= 0)
		? relopts->analyze_scale_factor : s->anl_scale;
	anl_base_thresh = (relopts && relopts->analyze_threshold >= 0)
		? relopts->analyze_threshold : s->anl_thresh;
	freeze_max_age = (relopts && relopts->freeze_max_age >= 0)
		? (relopts->freeze_max_age < s->freeze_max_age ?
		   relopts->freeze_max_age : s->freeze_max_age)
		: s->freeze_max_age;
	multixact_freeze_max_age = (relopts && relopts->multixact_freeze_max_age >= 0)
		? (relopts->multixact_freeze_max_age < s->multixact_freeze_max_age ?
		   relopts->multixact_freeze_max_age : s->multixact_freeze_max_age)
		: s->multixact_freeze_max_age;
	av_enabled = relopts ? relopts->enabled : true;

	/* forced if at risk of wraparound */
	xid_force_limit = next_xid - (uint32_t) freeze_max_age;
	if (xid_force_limit < AR_FIRST_NORMAL_XID)
		xid_force_limit -= AR_FIRST_NORMAL_XID;
	force_vacuum = xid_is_normal(t->relfrozenxid) &&
		xid_precedes(t->relfrozenxid, xid_force_limit);
	if (!force_vacuum)
	{
		multi_force_limit = next_multi - (uint32_t) multixact_freeze_max_age;
		if (multi_force_limit < AR_FIRST_MULTIXACT_ID)
			multi_force_limit -= AR_FIRST_MULTIXACT_ID;
		force_vacuum = t->relminmxid != 0 &&
			multi_precedes(t->relminmxid, multi_force_limit);
	}
	d->wraparound = force_vacuum;

	if (!av_enabled && !force_vacuum)
	{
		d->dovacuum = false;
		d->doanalyze = false;
		return;
	}

	if (t->has_stats && s->active)
	{
		float		reltuples = t->reltuples;
		float		pcnt_unfrozen = 1;
		float		vacthresh;
		float		vacinsthresh;
		float		anlthresh;

		if (reltuples < 0)
			reltuples = 0;
		/* 18: inserts count against the part of the table not frozen */
		if (t->relpages > 0 && t->relallfrozen > 0)
		{
			int32_t		allfrozen = t->relallfrozen > t->relpages ?
				t->relpages : t->relallfrozen;

			pcnt_unfrozen = 1 - ((float) allfrozen / t->relpages);
		}

		vacthresh = (float) vac_base_thresh + (float) vac_scale_factor * reltuples;
		if (vac_max_thresh >= 0 && vacthresh > (float) vac_max_thresh)
			vacthresh = (float) vac_max_thresh;
		vacinsthresh = (float) vac_ins_base_thresh +
			(float) vac_ins_scale_factor * reltuples * pcnt_unfrozen;
		anlthresh = (float) anl_base_thresh + (float) anl_scale_factor * reltuples;

		d->dovacuum = force_vacuum || ((float) t->dead_tuples > vacthresh) ||
			(vac_ins_base_thresh >= 0 &&
			 (float) t->ins_since_vacuum > vacinsthresh);
		d->doanalyze = ((float) t->mod_since_analyze > anlthresh);
	}
	else
	{
		d->dovacuum = force_vacuum;
		d->doanalyze = false;
	}

	/* ANALYZE refuses to work with pg_statistic */
	if (t->is_pg_statistic)
		d->doanalyze = false;
}
