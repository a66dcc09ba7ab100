/*-------------------------------------------------------------------------
 *
 * call_hints.c
 *	  Say which arguments exist when a call of the extension's functions
 *	  matches none of them.
 *
 * A call with a mistyped argument name, or a value of the wrong type
 * (bgw_prefetch_calibrate('pg_default', depth => 64), or max_depth =>
 * 64::bigint), fails in the parser with "function ... does not exist" and
 * the generic hint "No function matches the given name and argument types":
 * the parser cannot list the parameters of a function it did not find.
 * An emit_log_hook, chained to the previous one, replaces that hint, for an
 * ERRCODE_UNDEFINED_FUNCTION error whose message names one of the
 * functions below, with the function's parameters.  It runs for every
 * message sent to the server log, so it only compares an error code and
 * then a prefix of the message, and allocates nothing unless both match;
 * it reads no catalog (the transaction may be aborted).  The parameter
 * lists must follow bgw_prefetch--1.0.sql; the regression test calls each
 * function with a wrong argument name and shows the hint.
 *
 * Limits: elog.c documents only output_to_server as a field an
 * emit_log_hook may change; the hint is read after the hook, by both the
 * server log and the client message (PostgreSQL 15), and the regression
 * test would show a change there.  The hook runs only where the error goes
 * to the server log too (PostgreSQL calls emit_log_hook only then): with
 * log_min_messages above ERROR the client gets the generic hint.  The
 * hook is installed by a library that is loaded, i.e. preloaded (required).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/elog.h"
#include "utils/memutils.h"

#include "call_hints.h"

typedef struct FunctionSignature
{
	const char *name;
	const char *arguments;		/* as in the CREATE FUNCTION, IN only */
} FunctionSignature;

static const FunctionSignature signatures[] = {
	{"bgw_prefetch_calibrate",
	"tablespace name DEFAULT 'pg_default', size_mb integer DEFAULT 1024, max_depth integer DEFAULT 256"},
	{"bgw_prefetch_calibrate_apply",
	"tablespace name DEFAULT 'pg_default', size_mb integer DEFAULT 1024, max_depth integer DEFAULT 256, reuse_last boolean DEFAULT false"},
	{"bgw_prefetch_calibration_forget", "tablespace name DEFAULT NULL"},
	{"bgw_prefetch_calibration_results", NULL},
	{"bgw_prefetch_stats", NULL},
	{"bgw_prefetch_status", NULL},
	{"bgw_prefetch_activity", NULL},
	{"bgw_prefetch_clog_stats", NULL},
	{"pg_stat_prefetch_reset", NULL},
};

static emit_log_hook_type prev_emit_log_hook = NULL;

/*
 * The function an "function NAME(...) does not exist" message names, if it
 * is one of ours (possibly schema-qualified), else NULL.
 */
static const FunctionSignature *
signature_named(const char *message)
{
	const char *name;

	if (strncmp(message, "function ", 9) != 0)
		return NULL;
	name = message + 9;
	/* a qualified name: "function public.bgw_prefetch_calibrate(...)" */
	for (const char *p = name; *p != '\0' && *p != '('; p++)
		if (*p == '.')
			name = p + 1;
	for (int i = 0; i < lengthof(signatures); i++)
	{
		size_t		len = strlen(signatures[i].name);

		if (strncmp(name, signatures[i].name, len) == 0 && name[len] == '(')
			return &signatures[i];
	}
	return NULL;
}

static void
call_hints_emit_log(ErrorData *edata)
{
	const FunctionSignature *sig;

	if (edata->sqlerrcode == ERRCODE_UNDEFINED_FUNCTION &&
		edata->message != NULL &&
		(sig = signature_named(edata->message)) != NULL)
	{
		/* freed with the error data, as the hint it replaces */
		MemoryContext oldcontext = MemoryContextSwitchTo(edata->assoc_context);

		if (sig->arguments != NULL)
			edata->hint = psprintf("%s takes (%s); arguments are given by position or as name => value.",
								   sig->name, sig->arguments);
		else
			edata->hint = psprintf("%s takes no arguments.", sig->name);
		MemoryContextSwitchTo(oldcontext);
	}
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

/*
 * Install the hook (from _PG_init).
 */
void
call_hints_install(void)
{
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = call_hints_emit_log;
}
