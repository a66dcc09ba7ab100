/*-------------------------------------------------------------------------
 *
 * test_autovac_rule.c
 *	  Tests of the transcription of relation_needs_vacanalyze().
 *
 * Each case states, from autovacuum.c's rule worked by hand, what
 * autovacuum decides for one table: the thresholds at their edges (the
 * server compares with ">"), each reloption overriding its GUC (and "unset"
 * not doing so), autovacuum_enabled = off, the wraparound limits for xids
 * and multixacts including across the 2^32 wrap, missing statistics,
 * autovacuum off, a never-vacuumed table, pg_statistic, and 18's
 * vacuum_max_threshold and unfrozen-page insert threshold.
 *
 * Prints each failing case and ends with "N passed, N failed"; exits 1 on
 * any failure.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "autovac_rule.h"

static int	passed = 0;
static int	failed = 0;

/* PostgreSQL's defaults */
static AutovacSettings
defaults(void)
{
	AutovacSettings s;

	memset(&s, 0, sizeof(s));
	s.vac_thresh = 50;
	s.vac_scale = 0.2;
	s.vac_ins_thresh = 1000;
	s.vac_ins_scale = 0.2;
	s.vac_max_thresh = -1;
	s.anl_thresh = 50;
	s.anl_scale = 0.1;
	s.freeze_max_age = 200000000;
	s.multixact_freeze_max_age = 400000000;
	s.active = true;
	return s;
}

/* no reloptions */
static AutovacTableOptions
no_options(void)
{
	AutovacTableOptions o;

	memset(&o, 0, sizeof(o));
	return o;
}

/* reloptions present, all unset, autovacuum_enabled on */
static AutovacTableOptions
unset_options(void)
{
	AutovacTableOptions o;

	o.has_options = true;
	o.enabled = true;
	o.vacuum_threshold = -1;
	o.vacuum_scale_factor = -1;
	o.vacuum_ins_threshold = -2;
	o.vacuum_ins_scale_factor = -1;
	o.vacuum_max_threshold = -2;
	o.analyze_threshold = -1;
	o.analyze_scale_factor = -1;
	o.freeze_max_age = -1;
	o.multixact_freeze_max_age = -1;
	return o;
}

/* 1000 live tuples, recently frozen, stats present, nothing changed */
static AutovacTableState
table(void)
{
	AutovacTableState t;

	memset(&t, 0, sizeof(t));
	t.relfrozenxid = 290000000;
	t.relminmxid = 1;
	t.reltuples = 1000;
	t.relpages = 100;
	t.has_stats = true;
	return t;
}

#define NEXT_XID 300000000U
#define NEXT_MULTI 1U

static void
check(const char *name, const AutovacSettings *s, const AutovacTableOptions *o,
	  const AutovacTableState *t, uint32_t next_xid, uint32_t next_multi,
	  bool vac, bool anl, bool wrap)
{
	AutovacDecision d;

	memset(&d, 0x7f, sizeof(d));
	autovac_needs_vacanalyze(s, o, t, next_xid, next_multi, &d);
	if (d.dovacuum == vac && d.doanalyze == anl && d.wraparound == wrap)
		passed++;
	else
	{
		failed++;
		printf("FAIL %s: vacuum %d analyze %d wraparound %d, expected %d %d %d\n",
			   name, d.dovacuum, d.doanalyze, d.wraparound, vac, anl, wrap);
	}
}

int
main(void)
{
	AutovacSettings s = defaults();
	AutovacTableOptions none = no_options();
	AutovacTableOptions o;
	AutovacTableState t;

	/* nothing to do */
	t = table();
	check("idle table", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);

	/* dead tuples: threshold 50 + 0.2 * 1000 = 250, strictly above */
	t = table();
	t.dead_tuples = 250;
	check("dead at threshold", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t.dead_tuples = 251;
	check("dead above threshold", &s, &none, &t, NEXT_XID, NEXT_MULTI, true, false, false);

	/* inserts: 1000 + 0.2 * 1000 = 1200 */
	t = table();
	t.ins_since_vacuum = 1200;
	check("inserts at threshold", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t.ins_since_vacuum = 1201;
	check("inserts above threshold", &s, &none, &t, NEXT_XID, NEXT_MULTI, true, false, false);
	s.vac_ins_thresh = -1;
	check("insert vacuums off (GUC)", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	s = defaults();
	o = unset_options();
	o.vacuum_ins_threshold = -1;
	check("insert vacuums off (reloption)", &s, &o, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	o = unset_options();
	check("unset reloptions keep the GUCs", &s, &o, &t, NEXT_XID, NEXT_MULTI, true, false, false);

	/* analyze: 50 + 0.1 * 1000 = 150 */
	t = table();
	t.mod_since_analyze = 150;
	check("changes at threshold", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t.mod_since_analyze = 151;
	check("changes above threshold", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, true, false);
	t.is_pg_statistic = true;
	check("pg_statistic is not analyzed", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);

	/* reloptions override */
	t = table();
	t.dead_tuples = 100;
	o = unset_options();
	o.vacuum_scale_factor = 0;
	check("scale factor 0 by reloption", &s, &o, &t, NEXT_XID, NEXT_MULTI, true, false, false);
	o = unset_options();
	o.vacuum_threshold = 100;
	o.vacuum_scale_factor = 0;
	check("threshold 100 by reloption", &s, &o, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t.mod_since_analyze = 20;
	o = unset_options();
	o.analyze_threshold = 10;
	o.analyze_scale_factor = 0.005;
	check("analyze thresholds by reloption", &s, &o, &t, NEXT_XID, NEXT_MULTI, false, true, false);

	/* autovacuum_enabled = off: nothing, unless at risk of wraparound */
	t = table();
	t.dead_tuples = 100000;
	t.mod_since_analyze = 100000;
	o = unset_options();
	o.enabled = false;
	check("autovacuum_enabled off", &s, &o, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t.relfrozenxid = 50000000;	/* limit 300M - 200M = 100M */
	check("autovacuum_enabled off, wraparound", &s, &o, &t, NEXT_XID, NEXT_MULTI, true, true, true);

	/* xid wraparound limit */
	t = table();
	t.relfrozenxid = 99999999;
	check("relfrozenxid before the limit", &s, &none, &t, NEXT_XID, NEXT_MULTI, true, false, true);
	t.relfrozenxid = 100000000;
	check("relfrozenxid at the limit", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	o = unset_options();
	o.freeze_max_age = 150000000;	/* limit 150M */
	t.relfrozenxid = 140000000;
	check("freeze_max_age reloption lowers", &s, &o, &t, NEXT_XID, NEXT_MULTI, true, false, true);
	o.freeze_max_age = 250000000;	/* Min() with the GUC: limit stays 100M */
	check("freeze_max_age reloption cannot raise", &s, &o, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t.relfrozenxid = 2;			/* FrozenTransactionId: never forces */
	check("frozen relfrozenxid", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);

	/* across the wrap: next xid 100, limit 2^32 - 200M + 100 - 3 */
	t = table();
	t.relfrozenxid = 4000000000U;
	check("wraparound across 2^32, old", &s, &none, &t, 100, NEXT_MULTI, true, false, true);
	t.relfrozenxid = 4294000000U;
	check("wraparound across 2^32, recent", &s, &none, &t, 100, NEXT_MULTI, false, false, false);

	/* multixact limit: next 500M, max age 400M: limit 100M */
	t = table();
	t.relminmxid = 99999999;
	check("relminmxid before the limit", &s, &none, &t, NEXT_XID, 500000000U, true, false, true);
	t.relminmxid = 100000000;
	check("relminmxid at the limit", &s, &none, &t, NEXT_XID, 500000000U, false, false, false);
	s.multixact_freeze_max_age = 300000000;	/* member space pressure */
	check("multixact threshold lowered", &s, &none, &t, NEXT_XID, 500000000U, true, false, true);
	s = defaults();
	t.relminmxid = 0;			/* InvalidMultiXactId */
	check("invalid relminmxid", &s, &none, &t, NEXT_XID, 500000000U, false, false, false);

	/* no statistics, autovacuum off: forced vacuums only */
	t = table();
	t.dead_tuples = 100000;
	t.has_stats = false;
	check("no statistics", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t = table();
	t.dead_tuples = 100000;
	s.active = false;
	check("autovacuum not active", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t.relfrozenxid = 3;
	check("autovacuum not active, wraparound", &s, &none, &t, NEXT_XID, NEXT_MULTI, true, false, true);
	s = defaults();

	/* never vacuumed: reltuples -1 counts as 0 */
	t = table();
	t.reltuples = -1;
	t.dead_tuples = 51;
	check("never vacuumed", &s, &none, &t, NEXT_XID, NEXT_MULTI, true, false, false);

	/* 18: vacuum_max_threshold caps the dead-tuple threshold */
	t = table();
	t.reltuples = 1e9f;
	t.dead_tuples = 150000000;	/* threshold 200M + 50 */
	check("no maximum", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	s.vac_max_thresh = 100000000;
	check("maximum by GUC", &s, &none, &t, NEXT_XID, NEXT_MULTI, true, false, false);
	o = unset_options();
	o.vacuum_max_threshold = -1;
	check("maximum off by reloption", &s, &o, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	s = defaults();

	/* 18: the insert threshold scales with the pages not all-frozen */
	t = table();
	t.reltuples = 10000;
	t.relpages = 100;
	t.relallfrozen = 50;		/* 1000 + 0.2 * 10000 * 0.5 = 2000 */
	t.ins_since_vacuum = 2001;
	check("unfrozen share", &s, &none, &t, NEXT_XID, NEXT_MULTI, true, false, false);
	t.ins_since_vacuum = 2000;
	check("unfrozen share, at threshold", &s, &none, &t, NEXT_XID, NEXT_MULTI, false, false, false);
	t.relallfrozen = 200;		/* clamped to relpages: threshold 1000 */
	t.ins_since_vacuum = 1001;
	check("all frozen, clamped", &s, &none, &t, NEXT_XID, NEXT_MULTI, true, false, false);

	printf("%d passed, %d failed\n", passed, failed);
	return failed > 0 ? 1 : 0;
}
