/*-------------------------------------------------------------------------
 *
 * foreground_signal.h
 *	  Is the prefetch beside the foreground?  The share of the monitor's
 *	  recent looks at the backends that found a client statement running.
 *
 * Server-independent (plain C, times in microseconds), so that the unit
 * tests drive it exhaustively (test/unit/test_foreground_signal.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_FOREGROUND_SIGNAL_H
#define BGWP_FOREGROUND_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>

/* Looks are counted in two windows of this length, in microseconds */
#define FOREGROUND_WINDOW_US 500000
/* Beside the foreground: statements running in this share of looks or more */
#define FOREGROUND_MIN_RUNNING 0.1

typedef struct ForegroundWindow
{
	int64_t		start;			/* us */
	int			looks;
	int			running;		/* statements seen, all looks together */
} ForegroundWindow;

typedef struct ForegroundSignal
{
	ForegroundWindow now;
	ForegroundWindow before;	/* the window just before now's */
} ForegroundSignal;

extern void foreground_note_look(ForegroundSignal *s, int running, int64_t now);
extern bool foreground_present(const ForegroundSignal *s);

#endif							/* BGWP_FOREGROUND_SIGNAL_H */
