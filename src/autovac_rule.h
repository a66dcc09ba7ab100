/*-------------------------------------------------------------------------
 *
 * autovac_rule.h
 *	  Pure statement of autovacuum's "does this table need work" rule.
 *
 * A transcription of relation_needs_vacanalyze() in autovacuum.c
 * (PostgreSQL 15-17; 18's vacuum_max_threshold and unfrozen-page insert
 * threshold are inputs that older servers leave neutral).  The caller
 * (forecast.c) gathers the settings, the table's reloptions, its pg_class
 * row and its cumulative statistics; this file only decides, in plain C
 * without server headers, so that test/unit can check it without a server.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_AUTOVAC_RULE_H
#define BGWP_AUTOVAC_RULE_H

#include <stdbool.h>
#include <stdint.h>

/* The server's autovacuum settings (GUCs), as autovacuum.c reads them */
typedef struct AutovacSettings
{
	int			vac_thresh;		/* autovacuum_vacuum_threshold */
	double		vac_scale;		/* autovacuum_vacuum_scale_factor */
	int			vac_ins_thresh; /* autovacuum_vacuum_insert_threshold, -1 off */
	double		vac_ins_scale;	/* autovacuum_vacuum_insert_scale_factor */
	int			vac_max_thresh; /* 18: autovacuum_vacuum_max_threshold, -1 none */
	int			anl_thresh;		/* autovacuum_analyze_threshold */
	double		anl_scale;		/* autovacuum_analyze_scale_factor */
	int			freeze_max_age; /* autovacuum_freeze_max_age */
	int			multixact_freeze_max_age;	/* MultiXactMemberFreezeThreshold() */
	bool		active;			/* AutoVacuumingActive() */
} AutovacSettings;

/*
 * A table's autovacuum reloptions (AutoVacOpts), "unset" as the server
 * leaves them: -1 for numbers, except vacuum_ins_threshold and
 * vacuum_max_threshold whose unset value is -2 (-1 is a setting: off / no
 * maximum).  has_options false: the table has no reloptions at all.
 */
typedef struct AutovacTableOptions
{
	bool		has_options;
	bool		enabled;
	int			vacuum_threshold;
	double		vacuum_scale_factor;
	int			vacuum_ins_threshold;
	double		vacuum_ins_scale_factor;
	int			vacuum_max_threshold;
	int			analyze_threshold;
	double		analyze_scale_factor;
	int			freeze_max_age;
	int			multixact_freeze_max_age;
} AutovacTableOptions;

/* The table's pg_class row and cumulative statistics */
typedef struct AutovacTableState
{
	uint32_t	relfrozenxid;
	uint32_t	relminmxid;
	float		reltuples;		/* -1: never vacuumed or analyzed */
	int32_t		relpages;
	int32_t		relallfrozen;	/* 18; 0 before */
	bool		has_stats;		/* a cumulative statistics entry exists */
	int64_t		dead_tuples;
	int64_t		ins_since_vacuum;
	int64_t		mod_since_analyze;
	bool		is_pg_statistic;	/* never analyzed by autovacuum */
} AutovacTableState;

typedef struct AutovacDecision
{
	bool		dovacuum;
	bool		doanalyze;
	bool		wraparound;		/* forced: relfrozenxid / relminmxid too old */
} AutovacDecision;

extern void autovac_needs_vacanalyze(const AutovacSettings *settings,
									 const AutovacTableOptions *opts,
									 const AutovacTableState *table,
									 uint32_t next_xid, uint32_t next_multi,
									 AutovacDecision *decision);

#endif							/* BGWP_AUTOVAC_RULE_H */
