/*-------------------------------------------------------------------------
 *
 * io_engine.h
 *	  Bounded asynchronous buffered reads into the OS page cache.
 *
 * The engine pre-reads byte ranges of files so that a later pread() by
 * another process finds them in the kernel page cache.  The data read is
 * never looked at: every read lands in one small scratch area shared by all
 * reads in flight (the kernel copying into the same user memory from several
 * reads at once is harmless, and it keeps memory use constant whatever the
 * depth).
 *
 * Two kinds of request: a read, which completes when the data is in memory
 * (and costs a copy into the scratch area), and an advice
 * (POSIX_FADV_WILLNEED), which completes once the kernel's readahead of the
 * range is under way (no copy, no measure of the read itself).
 *
 * Two methods:
 *	- io_uring (liburing): reads are IORING_OP_READ of buffered files,
 *	  advices IORING_OP_FADVISE (a synchronous posix_fadvise() on kernels
 *	  without it); completions signalled on an eventfd so that the caller
 *	  can sleep on it together with its latch; latency of each measured.
 *	- fadvise: both kinds are posix_fadvise(POSIX_FADV_WILLNEED), which
 *	  starts kernel readahead and returns; the "completion" is immediate
 *	  and carries the system call's own duration, not the read's.
 *
 * If io_uring cannot be set up (kernel too old, io_uring_disabled sysctl,
 * seccomp returning EPERM/ENOSYS) creation falls back to fadvise and records
 * why.  The engine is plain C with no server headers so that a stand-alone
 * benchmark (bench/engine_rate) can link it; callers in the server log the
 * fallback reason.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_IO_ENGINE_H
#define BGWP_IO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum IoMethod
{
	IO_METHOD_IO_URING,
	IO_METHOD_FADVISE
} IoMethod;

typedef struct IoEngine IoEngine;

/* One finished read, reported by io_engine_reap(). */
typedef struct IoCompletion
{
	uint64_t	tag;			/* caller's tag given to io_engine_submit() */
	int			result;			/* bytes read (>= 0) or -errno */
	uint64_t	latency_us;		/* submit-to-completion time */
} IoCompletion;

/*
 * Create an engine able to keep up to max_inflight reads in flight, each at
 * most max_read_bytes long.  If requested is IO_METHOD_IO_URING and that
 * cannot be set up, falls back to fadvise; *fallback_reason (if not NULL)
 * then points to a static or engine-owned explanation, else is set to NULL.
 * max_inflight is clamped to [1, 32768], max_read_bytes to [1, 1 GiB].
 * Returns NULL only when memory cannot be allocated.
 */
extern IoEngine *io_engine_create(IoMethod requested, int max_inflight,
								  size_t max_read_bytes,
								  const char **fallback_reason);
extern void io_engine_destroy(IoEngine *engine);

extern IoMethod io_engine_method(const IoEngine *engine);
extern const char *io_method_name(IoMethod method);

/*
 * File descriptor that becomes readable when completions are ready, or -1
 * (fadvise: completions are ready as soon as io_engine_submit returns).
 * Reading the eventfd is the engine's job, done inside io_engine_reap().
 */
extern int	io_engine_event_fd(const IoEngine *engine);

/* Reads submitted and not yet reaped. */
extern int	io_engine_inflight(const IoEngine *engine);

/*
 * Queue a read of len bytes at offset of fd (len <= max_read_bytes).
 * Returns false without queueing if the engine is at max_inflight.  Queued
 * reads reach the kernel at the next io_engine_flush().  The caller must
 * keep fd open until the read's completion has been reaped.  A negative
 * offset or len > max_read_bytes is accepted and completes with -EINVAL.
 */
extern bool io_engine_submit(IoEngine *engine, int fd, off_t offset,
							 size_t len, uint64_t tag);

/*
 * Queue an advice for len bytes at offset of fd, as io_engine_submit()
 * queues a read (same limits, same completions).  Its result is the number
 * of bytes advised: len, trimmed at the end of a regular file.
 */
extern bool io_engine_advise(IoEngine *engine, int fd, off_t offset,
							 size_t len, uint64_t tag);

/* Hand every queued read to the kernel; returns 0 or -errno. */
extern int	io_engine_flush(IoEngine *engine);

/*
 * Collect up to max finished reads into out[] without waiting; returns the
 * number collected.
 */
extern int	io_engine_reap(IoEngine *engine, IoCompletion *out, int max);

/*
 * Wait until at least min_complete reads have finished or timeout_ms has
 * passed (used by the calibration and by shutdown, never by the monitor's
 * main loop, which sleeps on its latch and the event fd instead).
 * timeout_ms < 0 waits without limit.  Flushes queued reads first.  Returns
 * the number of completions ready for io_engine_reap() (fewer than
 * min_complete after a timeout), or -errno.
 */
extern int	io_engine_wait(IoEngine *engine, int min_complete, int timeout_ms);

/* CLOCK_MONOTONIC in nanoseconds, the clock of the engine's latencies */
extern uint64_t io_engine_clock_ns(void);

#endif							/* BGWP_IO_ENGINE_H */
