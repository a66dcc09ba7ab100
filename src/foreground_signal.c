/*-------------------------------------------------------------------------
 *
 * foreground_signal.c
 *	  Is the prefetch beside the foreground?
 *
 * The prefetch is paced only while others use the server (prefetch_pacing.c):
 * alone, the latency its reads add harms no one.  At each look at the
 * backends the monitor counts the client backends running a statement
 * other than VACUUM or ANALYZE, on CPU or waiting on anything but a
 * timeout or their client (backends.c: a monitoring loop asleep in
 * pg_sleep() is no foreground); the prefetch is beside the foreground when
 * a tenth of the looks of the last one or two windows found one or more.
 * A monitoring query now and then is not a foreground (every psql \watch
 * would hold the prefetch to the strict rate); OLTP traffic is.
 *
 * Only recent looks count: while it waits for a scan the monitor looks
 * rarely, and its last look before a scan starts may be minutes old.  A
 * window that ended more than one window length ago is forgotten.  The
 * first look of a scan that finds a statement running is enough to pace
 * it: in doubt the foreground comes first, and a wrong guess costs the
 * scan one drain (prefetch_pacing.c), about 30 ms without reads ahead.
 *
 *-------------------------------------------------------------------------
 */
#include "foreground_signal.h"

#include <string.h>

/* Count one look at the backends, at time now, that found running statements */
void
foreground_note_look(ForegroundSignal *s, int running, int64_t now)
{
	if (now - s->now.start >= FOREGROUND_WINDOW_US)
	{
		/* the window just ended is the one before; an older one is gone */
		if (now - s->now.start < 2 * (int64_t) FOREGROUND_WINDOW_US)
			s->before = s->now;
		else
			memset(&s->before, 0, sizeof(s->before));
		memset(&s->now, 0, sizeof(s->now));
		s->now.start = now;
	}
	s->now.looks++;
	s->now.running += running;
}

/* Have client statements been running in a tenth of the recent looks or more? */
bool
foreground_present(const ForegroundSignal *s)
{
	int			looks = s->now.looks + s->before.looks;
	int			running = s->now.running + s->before.running;

	return looks > 0 && running >= FOREGROUND_MIN_RUNNING * looks;
}
