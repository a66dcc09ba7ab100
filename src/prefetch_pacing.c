/*-------------------------------------------------------------------------
 *
 * prefetch_pacing.c
 *	  The prefetch's rate: probe reads, and the tokens its reads spend.
 *
 * The prefetch is paced only beside the foreground (foreground_signal.c:
 * client statements running in a tenth of the monitor's recent looks at
 * the backends), where there is someone whose reads and commits the
 * prefetch's traffic would delay.  Alone it reads
 * ahead unpaced (state "alone"): the latency it adds to its own scan's
 * disk harms no one, and a scan on an idle server goes at full speed.
 *
 * While paced, the prefetcher sends one small direct
 * read (a probe: 8 kB, O_DIRECT, a random block of the first segment of a
 * relation it reads ahead for) through its I/O engine every
 * PROBE_INTERVAL_MS, one at a time, as long as it issued a read since the
 * last probe, has reads in flight or holds its reads for a drain, whose end
 * the probes measure (a scan that waits for its cost delay with its reads
 * done costs no probe).  A probe waits in the disk's queue as
 * a foreground backend's read would, behind the prefetch's own reads and
 * everyone else's; its latency drives the rate (io_pacing.c), and every
 * block the prefetch issues, read or advised, spends a token of that rate
 * (submit_reads()).  A relation's first segment is rarely written while a
 * VACUUM scans it, so a probe seldom makes the kernel write a dirty page
 * before reading it.
 *
 * Pacing needs io_uring (with posix_fadvise there is no read to time) and a
 * file system that takes O_DIRECT; without either, or with
 * bgw_prefetch.pacing off, the prefetch is bounded by its depth only.  One
 * pacer serves all tablespaces: it probes the disk of the relation it read
 * ahead for first.  After a second with nothing read ahead beside the
 * foreground, pacing starts over with a drain (io_pacing_restart()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/pg_prng.h"
#include "storage/fd.h"
#include "utils/timestamp.h"

#include "foreground_signal.h"
#include "io_engine.h"
#include "io_pacing.h"
#include "prefetch_internal.h"
#include "relfile.h"

/* How often a probe is sent while the prefetch reads ahead, in ms */
#define PROBE_INTERVAL_MS 10
/* Idle this long, the rate starts over, in ms */
#define PACING_RESTART_MS 1000
/*
 * A drain measures the disk without the prefetch: its probes are sent once
 * the scan has caught up with what was read ahead (it then reads for
 * itself, as without the extension), or after this long, in ms
 */
#define DRAIN_CATCH_UP_MS 1000
/* The tag of a probe's completion (no target has this index) */
#define PROBE_TAG UINT64_MAX

static IoPacing pacing;
static bool pacing_initialized = false;
static bool pacing_in_effect = false;	/* tokens are spent this step */
static bool reading_alone = false;	/* reading ahead, unpaced: no foreground */
static int	probe_fd = -1;
static BgwpRelFile probe_relfile;
static bool probe_inflight = false;
static bool issued_since_probe = false;
static TimestampTz last_probe = 0;
static TimestampTz last_reading = 0;
static TimestampTz drain_started = 0;	/* 0: not draining */
static pg_prng_state probe_prng;
static const char *unpaced_reason = NULL;	/* a lasting reason, or NULL */
static ForegroundSignal foreground;

static void
close_probe_file(void)
{
	relfile_close(probe_fd);
	probe_fd = -1;
}

/* The first target that reads ahead now, or NULL */
static PrefetchTarget *
reading_target(void)
{
	for (int i = 0; i < BGWP_MAX_TARGETS; i++)
	{
		PrefetchTarget *t = &prefetch_targets[i];

		if (t->in_use && t->state == TARGET_ACTIVE && t->prefetch &&
			t->obs.phase == SCAN_PHASE_SCANNING && t->nblocks > 0)
			return t;
	}
	return NULL;
}

/* Send a probe to the disk of target t's relation. */
static void
send_probe(PrefetchTarget *t, TimestampTz now)
{
	BlockNumber nblocks = Min(t->nblocks, (BlockNumber) RELSEG_SIZE);
	BlockNumber block;

	if (probe_fd >= 0 && memcmp(&probe_relfile, &t->relfile, sizeof(BgwpRelFile)) != 0)
		close_probe_file();
	if (probe_fd < 0)
	{
		probe_fd = relfile_open_direct(t->relfile, MAIN_FORKNUM, 0);
		if (probe_fd < 0)
		{
			if (errno == EINVAL)
				unpaced_reason = "the file system refuses direct reads";
			return;				/* else gone, or out of descriptors: later */
		}
		probe_relfile = t->relfile;
	}
	block = (BlockNumber) pg_prng_uint64_range(&probe_prng, 0, nblocks - 1);
	if (io_engine_submit(prefetch_engine, probe_fd, (off_t) block * BLCKSZ,
						 BLCKSZ, PROBE_TAG))
	{
		probe_inflight = true;
		issued_since_probe = false;
		last_probe = now;
	}
}

/*
 * The monitor's look at the backends: how many client statements (other
 * than VACUUM or ANALYZE) were running?
 */
void
prefetch_pacing_note_foreground(int running, TimestampTz now)
{
	foreground_note_look(&foreground, running, (int64) now);
}

/*
 * Once a step, before reads are issued: refill the tokens, send a probe if
 * one is due.
 */
void
prefetch_pacing_step(TimestampTz now)
{
	PrefetchTarget *t;

	pacing_in_effect = false;
	if (!bgwp_pacing || unpaced_reason != NULL || prefetch_engine == NULL ||
		io_engine_method(prefetch_engine) != IO_METHOD_IO_URING)
		return;
	if (!pacing_initialized)
	{
		io_pacing_init(&pacing, now);
		pg_prng_seed(&probe_prng, (uint64) now);
		pacing_initialized = true;
	}
	t = reading_target();
	reading_alone = false;
	if (t == NULL)
	{
		close_probe_file();
		return;
	}
	if (!foreground_present(&foreground))
	{
		/* nobody to yield to: unpaced, and paced afresh when someone comes */
		reading_alone = true;
		last_reading = 0;
		return;
	}
	if (TimestampDifferenceExceeds(last_reading, now, PACING_RESTART_MS))
		io_pacing_restart(&pacing, now);
	last_reading = now;
	io_pacing_refill(&pacing, now);
	pacing_in_effect = true;
	if (!io_pacing_draining(&pacing))
		drain_started = 0;
	else
	{
		if (drain_started == 0)
			drain_started = now;
		if (t->blocks_ahead > 0 &&
			!TimestampDifferenceExceeds(drain_started, now, DRAIN_CATCH_UP_MS))
			return;				/* the scan still reads what was read ahead */
	}
	if (!probe_inflight &&
		(issued_since_probe || io_engine_inflight(prefetch_engine) > 0 ||
		 io_pacing_draining(&pacing)) &&
		TimestampDifferenceExceeds(last_probe, now, PROBE_INTERVAL_MS))
		send_probe(t, now);
}

/* May the prefetch issue blocks more now?  They are spent if so. */
bool
prefetch_pacing_take(int blocks)
{
	if (!pacing_in_effect)
		return true;
	if (!io_pacing_take(&pacing, blocks))
		return false;
	issued_since_probe = true;
	return true;
}

/*
 * A completion: if it is a probe's, feed its latency to the controller and
 * return true.  A probe that failed (EINVAL: no direct reads through the
 * ring here) turns pacing off for good.
 */
bool
prefetch_pacing_completed(const IoCompletion *c)
{
	if (c->tag != PROBE_TAG)
		return false;
	probe_inflight = false;
	if (c->result == -EINVAL)
		unpaced_reason = "the file system refuses direct reads";
	else if (c->result > 0)
		io_pacing_probe(&pacing, (double) c->latency_us,
						(int64) GetCurrentTimestamp());
	return true;
}

/* The engine is going away: no probe is in flight any more. */
void
prefetch_pacing_stop(void)
{
	close_probe_file();
	probe_inflight = false;
	pacing_in_effect = false;
}

/* For bgw_prefetch_status(): the pacer's state */
void
prefetch_pacing_state(PacingState *s)
{
	memset(s, 0, sizeof(*s));
	s->paced = pacing_in_effect;
	s->alone = reading_alone;
	s->unpaced_reason = unpaced_reason;
	if (prefetch_engine != NULL &&
		io_engine_method(prefetch_engine) != IO_METHOD_IO_URING)
		s->unpaced_reason = "no io_uring: nothing to time";
	if (!pacing_initialized)
	{
		s->rate_mb_s = -1;
		s->base_us = -1;
		s->latency_us = -1;
		return;
	}
	s->rate_mb_s = pacing.rate * BLCKSZ / 1e6;
	s->base_us = pacing.base_us;
	s->latency_us = pacing.last_us;
}
