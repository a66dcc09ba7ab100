/*-------------------------------------------------------------------------
 *
 * test_foreground_signal.c
 *	  Tests of the foreground signal (foreground_signal.c).
 *
 * The monitor's looks are replayed as it makes them: one every few
 * milliseconds while it follows a scan, one now and then while it waits.
 * OLTP traffic (a statement in a third of the looks) is a foreground from
 * the first look that sees one; a monitoring query now and then (one look
 * in fifty) is not; no looks tell nothing; a statement seen by the last
 * look before a wait longer than a window is forgotten once the monitor
 * looks again; a foreground that stops is gone within two windows, and a
 * short pause does not end it.
 *
 * Prints each failing case and ends with "N passed, N failed"; exits 1 on
 * any failure.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "foreground_signal.h"

static int	passed = 0;
static int	failed = 0;

#define MS 1000

static void
check(int ok, const char *what)
{
	if (ok)
		passed++;
	else
	{
		failed++;
		printf("FAILED: %s\n", what);
	}
}

/*
 * n looks one millisecond apart from *now on, a statement running in one
 * look of every `every` (none if every is 0); *now moves past them.
 */
static void
looks(ForegroundSignal *s, int64_t *now, int n, int every)
{
	for (int i = 0; i < n; i++)
	{
		foreground_note_look(s, (every > 0 && i % every == 0) ? 1 : 0, *now);
		*now += MS;
	}
}

int
main(void)
{
	ForegroundSignal s;
	int64_t		now = 800000000000LL;	/* any time: the windows start at the first look */

	/* no look yet */
	memset(&s, 0, sizeof(s));
	check(!foreground_present(&s), "no looks: no foreground");

	/* OLTP: a statement in a third of the looks, from the first look on */
	memset(&s, 0, sizeof(s));
	looks(&s, &now, 1, 3);
	check(foreground_present(&s), "OLTP: a foreground from the first look");
	looks(&s, &now, 3000, 3);
	check(foreground_present(&s), "OLTP: a foreground for as long as it runs");

	/* a monitoring query in one look of fifty is not a foreground */
	memset(&s, 0, sizeof(s));
	looks(&s, &now, 3000, 50);
	check(!foreground_present(&s), "an occasional query is not a foreground");

	/* a statement in exactly a tenth of the looks is one */
	memset(&s, 0, sizeof(s));
	looks(&s, &now, 3000, 10);
	check(foreground_present(&s), "a tenth of the looks is a foreground");

	/*
	 * The monitor waits for a scan: a few sparse looks, all of which saw a
	 * query running, then a long wait, then the scan starts and the
	 * monitor follows it with nobody else there.
	 */
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 5; i++)
	{
		foreground_note_look(&s, 1, now);
		now += 200 * MS;
	}
	check(foreground_present(&s), "queries seen while waiting are a foreground");
	now += 5000 * MS;
	looks(&s, &now, 1, 0);
	check(!foreground_present(&s), "queries seen before a long wait are forgotten");
	check(s.before.looks == 0, "a window that ended a window length ago is dropped");

	/* a wait of just over a window: the window before is kept */
	memset(&s, 0, sizeof(s));
	looks(&s, &now, 10, 1);
	now += FOREGROUND_WINDOW_US + 100 * MS;
	looks(&s, &now, 1, 0);
	check(foreground_present(&s), "a wait shorter than two windows keeps the last one");

	/* a foreground that stops is gone within two windows */
	memset(&s, 0, sizeof(s));
	looks(&s, &now, 2000, 2);
	check(foreground_present(&s), "a busy second is a foreground");
	looks(&s, &now, 2 * FOREGROUND_WINDOW_US / MS, 0);
	check(!foreground_present(&s), "two quiet windows later, no foreground");

	/* the window just ended still counts: a pause of half a window is not the end */
	memset(&s, 0, sizeof(s));
	looks(&s, &now, FOREGROUND_WINDOW_US / MS, 2);
	looks(&s, &now, 100, 0);
	check(foreground_present(&s), "a short pause keeps the foreground");

	printf("%d passed, %d failed\n", passed, failed);
	return failed > 0 ? 1 : 0;
}
