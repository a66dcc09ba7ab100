/*-------------------------------------------------------------------------
 *
 * io_engine.c
 *	  Bounded asynchronous buffered reads into the OS page cache.
 *
 * The prefetcher's only goal is that a later pread() of the same bytes by a
 * VACUUM or ANALYZE backend finds them in the kernel page cache.  A buffered
 * read (not O_DIRECT) puts the file pages in the page cache before copying
 * them to user memory, so the copy itself is useless to us: every read lands
 * in one scratch area shared by all reads in flight, and nobody ever looks at
 * it.
 *
 * A request is either a read or an advice.  A read completes when its data
 * is really in memory, so the caller can measure latency and pace itself,
 * and the kernel cannot silently drop or trim it the way readahead is
 * trimmed under memory pressure; but it costs a copy to user memory, and
 * every read occupies the device until it is done.  An advice
 * (POSIX_FADV_WILLNEED) starts the kernel's readahead of the range and
 * completes once the readahead is under way: no copy, and the kernel
 * queues the reads as its own readahead.  With io_uring both are
 * asynchronous (IORING_OP_READ, IORING_OP_FADVISE), completions signalled
 * on an eventfd so that the server's monitor can sleep on its latch and on
 * the engine at the same time.  When io_uring is unavailable (old kernel,
 * kernel.io_uring_disabled, seccomp profiles of container runtimes that
 * return EPERM or ENOSYS, memlock limits on kernels before 5.12) the engine
 * falls back to posix_fadvise(WILLNEED) for both and says why.
 *
 * Both methods share the bookkeeping: a fixed array of max_inflight slots
 * (tag, submit time, result) with a free list, and a FIFO "done" queue of
 * slots whose read has finished but has not been handed to the caller yet.
 * A slot stays in use from io_engine_submit() until io_engine_reap() returns
 * its completion, so io_engine_inflight() is simply the number of slots in
 * use, and a full slot array is what makes io_engine_submit() refuse.
 *
 * The engine is not thread-safe: one process (the prefetch worker, or the
 * benchmark) owns it.  It never prints, exits or aborts: errors are
 * returned.
 *
 *-------------------------------------------------------------------------
 */
#include "io_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * Limits on the creation parameters.  io_uring rings hold at most 32768
 * entries (IORING_MAX_ENTRIES); a read's byte count must fit the int result
 * of IoCompletion.
 */
#define IO_ENGINE_MAX_INFLIGHT	32768
#define IO_ENGINE_MAX_READ		((size_t) 1 << 30)

/* How long io_engine_destroy() waits for reads still in the kernel. */
#define IO_ENGINE_DESTROY_WAIT_MS	1000

/* How often io_engine_flush() retries when the kernel says EAGAIN/EBUSY. */
#define IO_ENGINE_FLUSH_RETRIES	100

/* Bookkeeping of one read, from io_engine_submit() to io_engine_reap(). */
typedef struct IoSlot
{
	uint64_t	tag;			/* caller's tag */
	uint64_t	submit_ns;		/* CLOCK_MONOTONIC at io_engine_submit() */
	uint64_t	latency_us;		/* valid once the slot is in the done queue */
	int			result;			/* likewise: bytes read or -errno */
	int			advised_len;	/* an advice: bytes advised; a read: -1 */
	int			next_free;		/* free-list link, -1 ends the list */
} IoSlot;

struct IoEngine
{
	IoMethod	method;
	int			max_inflight;
	size_t		max_read_bytes;

	IoSlot	   *slots;			/* max_inflight entries */
	int			free_head;		/* first free slot, or -1 */
	int			nfree;

	int		   *done;			/* ring of max_inflight slot indexes */
	int			done_head;		/* index in done[] of the oldest */
	int			done_count;

	/* io_uring method only */
	struct io_uring ring;
	bool		ring_advises;	/* the kernel has IORING_OP_FADVISE */
	int			event_fd;		/* -1 when not io_uring */
	void	   *scratch;		/* shared destination of every read */
	size_t		scratch_size;

	char		reason[256];	/* why io_uring was not used */
};

/*
 * Current CLOCK_MONOTONIC time in nanoseconds: the clock of every latency
 * the engine measures.
 */
uint64_t
io_engine_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

/* Take a slot off the free list; the caller checked nfree > 0. */
static int
slot_alloc(IoEngine *engine)
{
	int			idx = engine->free_head;

	engine->free_head = engine->slots[idx].next_free;
	engine->nfree--;
	return idx;
}

/* Put a slot back on the free list. */
static void
slot_release(IoEngine *engine, int idx)
{
	engine->slots[idx].next_free = engine->free_head;
	engine->free_head = idx;
	engine->nfree++;
}

/*
 * Record that the read in slot idx finished and queue it for io_engine_reap().
 * The done queue cannot overflow: it has room for every slot.
 */
static void
complete_slot(IoEngine *engine, int idx, int result, uint64_t latency_us)
{
	int			pos = (engine->done_head + engine->done_count) % engine->max_inflight;

	engine->slots[idx].result = result;
	engine->slots[idx].latency_us = latency_us;
	engine->done[pos] = idx;
	engine->done_count++;
}

/*
 * Reads handed to the kernel and not finished yet (io_uring): slots in use,
 * minus finished ones, minus SQEs still waiting in the submission queue.
 */
static int
kernel_inflight(IoEngine *engine)
{
	return engine->max_inflight - engine->nfree - engine->done_count -
		(int) io_uring_sq_ready(&engine->ring);
}

/*
 * Move every available CQE into the done queue; returns how many.  The
 * latency is measured when the engine sees the completion, which can be
 * later than when it happened if the caller reaps late.  io_uring_peek_cqe()
 * also discards the CQEs of liburing's internal timeouts (kernels without
 * IORING_FEAT_EXT_ARG), so every user_data seen here is a slot index; the
 * bound check only protects memory against a bug.
 */
static int
harvest_cqes(IoEngine *engine)
{
	struct io_uring_cqe *cqe;
	uint64_t	now = 0;
	int			n = 0;

	while (io_uring_peek_cqe(&engine->ring, &cqe) == 0)
	{
		uint64_t	idx = io_uring_cqe_get_data64(cqe);

		if (idx < (uint64_t) engine->max_inflight)
		{
			IoSlot	   *slot = &engine->slots[idx];
			int			result = cqe->res;

			if (n == 0)
				now = io_engine_clock_ns();
			/* an advice's CQE says 0 for success: report the bytes advised */
			if (slot->advised_len >= 0 && result == 0)
				result = slot->advised_len;
			complete_slot(engine, (int) idx, result,
						  (now - slot->submit_ns) / 1000);
			n++;
		}
		io_uring_cq_advance(&engine->ring, 1);
	}
	return n;
}

/*
 * Wait for at least wait_nr CQEs to be available, at most until deadline
 * (CLOCK_MONOTONIC ns; 0 = no limit).  Returns 0, -ETIME on timeout or
 * another -errno.  EINTR is retried: a signal (the server's latch uses them)
 * must not cut a bounded wait short.
 */
static int
wait_cqes_until(IoEngine *engine, unsigned wait_nr, uint64_t deadline)
{
	for (;;)
	{
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts;
		int			rc;

		if (deadline != 0)
		{
			uint64_t	now = io_engine_clock_ns();

			if (now >= deadline)
				return -ETIME;
			ts.tv_sec = (deadline - now) / 1000000000;
			ts.tv_nsec = (deadline - now) % 1000000000;
		}
		rc = io_uring_wait_cqes(&engine->ring, &cqe, wait_nr,
								deadline != 0 ? &ts : NULL, NULL);
		if (rc != -EINTR)
			return rc;
	}
}

/* Deadline timeout_ms from now for wait_cqes_until(); negative = none. */
static uint64_t
deadline_after(int timeout_ms)
{
	if (timeout_ms < 0)
		return 0;
	return io_engine_clock_ns() + (uint64_t) timeout_ms * 1000000 + 1;
}

/*
 * Append " (kernel.io_uring_disabled=N)" to buf if that sysctl exists
 * (Linux 6.6+): it is the usual reason for EPERM from io_uring_setup on
 * hardened hosts, and the log line should say so.
 */
static void
append_sysctl_note(char *buf, size_t size)
{
	char		val[16];
	ssize_t		n;
	int			fd;
	size_t		len;

	fd = open("/proc/sys/kernel/io_uring_disabled", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, val, sizeof(val) - 1);
	close(fd);
	if (n <= 0)
		return;
	val[n] = '\0';
	val[strcspn(val, "\n")] = '\0';
	if (strcmp(val, "0") == 0)
		return;					/* the sysctl allows io_uring: not the cause */
	len = strlen(buf);
	snprintf(buf + len, size - len, " (kernel.io_uring_disabled=%s)", val);
}

/*
 * Set up the io_uring method: ring, probe for IORING_OP_READ (required) and
 * IORING_OP_FADVISE (advices are made synchronously without it), eventfd,
 * scratch buffer.  On failure everything is undone, engine->reason says why
 * and false is returned.
 */
static bool
uring_start(IoEngine *engine)
{
	struct io_uring_probe *probe;
	unsigned	entries = 1;
	bool		can_read;
	int			rc;

	/* Ring sized to the depth: the SQ can hold every read we allow. */
	while (entries < (unsigned) engine->max_inflight)
		entries <<= 1;
	rc = io_uring_queue_init(entries, &engine->ring, 0);
	if (rc < 0)
	{
		snprintf(engine->reason, sizeof(engine->reason),
				 "io_uring_queue_init failed: %s", strerror(-rc));
		append_sysctl_note(engine->reason, sizeof(engine->reason));
		return false;
	}

	probe = io_uring_get_probe_ring(&engine->ring);
	if (probe == NULL)
	{
		snprintf(engine->reason, sizeof(engine->reason),
				 "io_uring_get_probe_ring failed (kernel older than 5.6?)");
		goto fail_ring;
	}
	can_read = io_uring_opcode_supported(probe, IORING_OP_READ);
	engine->ring_advises = io_uring_opcode_supported(probe, IORING_OP_FADVISE);
	io_uring_free_probe(probe);
	if (!can_read)
	{
		snprintf(engine->reason, sizeof(engine->reason),
				 "io_uring does not support IORING_OP_READ (kernel older than 5.6?)");
		goto fail_ring;
	}

	engine->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (engine->event_fd < 0)
	{
		snprintf(engine->reason, sizeof(engine->reason),
				 "eventfd failed: %s", strerror(errno));
		goto fail_ring;
	}
	rc = io_uring_register_eventfd(&engine->ring, engine->event_fd);
	if (rc < 0)
	{
		snprintf(engine->reason, sizeof(engine->reason),
				 "io_uring_register_eventfd failed: %s", strerror(-rc));
		goto fail_eventfd;
	}

	/*
	 * The scratch buffer: page aligned, and pre-faulted (MAP_POPULATE) so
	 * that the kernel's copy never takes a page fault on it.  It is shared
	 * by all reads in flight: with buffered I/O the kernel first brings the
	 * pages into the page cache and then copies them out, so concurrent
	 * reads only race to overwrite bytes nobody reads; the page cache, which
	 * is the point, is filled either way.  Memory stays at max_read_bytes
	 * whatever the depth.  mmap rather than malloc so that destroy can
	 * retire it safely (see io_engine_destroy).
	 */
	engine->scratch_size = engine->max_read_bytes;
	engine->scratch = mmap(NULL, engine->scratch_size, PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (engine->scratch == MAP_FAILED)
	{
		snprintf(engine->reason, sizeof(engine->reason),
				 "cannot map a %zu-byte scratch buffer: %s",
				 engine->scratch_size, strerror(errno));
		engine->scratch = NULL;
		goto fail_eventfd;
	}
	return true;

fail_eventfd:
	close(engine->event_fd);
	engine->event_fd = -1;
fail_ring:
	io_uring_queue_exit(&engine->ring);
	return false;
}

/*
 * Create an engine; see io_engine.h.  max_inflight is clamped to
 * [1, 32768] and max_read_bytes to [1, 1 GiB].
 */
IoEngine *
io_engine_create(IoMethod requested, int max_inflight, size_t max_read_bytes,
				 const char **fallback_reason)
{
	IoEngine   *engine;

	if (fallback_reason != NULL)
		*fallback_reason = NULL;

	if (max_inflight < 1)
		max_inflight = 1;
	if (max_inflight > IO_ENGINE_MAX_INFLIGHT)
		max_inflight = IO_ENGINE_MAX_INFLIGHT;
	if (max_read_bytes < 1)
		max_read_bytes = 1;
	if (max_read_bytes > IO_ENGINE_MAX_READ)
		max_read_bytes = IO_ENGINE_MAX_READ;

	engine = calloc(1, sizeof(IoEngine));
	if (engine == NULL)
		return NULL;
	engine->slots = calloc(max_inflight, sizeof(IoSlot));
	engine->done = calloc(max_inflight, sizeof(int));
	if (engine->slots == NULL || engine->done == NULL)
	{
		free(engine->slots);
		free(engine->done);
		free(engine);
		return NULL;
	}
	engine->max_inflight = max_inflight;
	engine->max_read_bytes = max_read_bytes;
	for (int i = 0; i < max_inflight; i++)
		engine->slots[i].next_free = (i + 1 < max_inflight) ? i + 1 : -1;
	engine->free_head = 0;
	engine->nfree = max_inflight;
	engine->event_fd = -1;

	engine->method = IO_METHOD_FADVISE;
	if (requested == IO_METHOD_IO_URING)
	{
		if (uring_start(engine))
			engine->method = IO_METHOD_IO_URING;
		else if (fallback_reason != NULL)
			*fallback_reason = engine->reason;
	}
	return engine;
}

/*
 * Free the engine.  Reads still in the kernel are waited for (at most
 * IO_ENGINE_DESTROY_WAIT_MS) before the scratch buffer goes away, because
 * until its CQE is posted a read may still copy into it: freeing it earlier
 * would let the kernel scribble over whatever malloc or mmap puts there
 * next.  Closing the ring does cancel what can be cancelled, but
 * asynchronously (the kernel's ring exit work runs after close() returns)
 * and a buffered read already waiting for the disk is not cancellable.  So
 * if reads are still out after the wait (a hung device), the buffer is not
 * unmapped but replaced in place by an inaccessible mapping: its memory is
 * freed, its address range stays reserved, and a late copy fails with
 * EFAULT inside the kernel instead of corrupting anything.  SQEs queued but
 * never flushed are simply dropped with the ring.
 */
void
io_engine_destroy(IoEngine *engine)
{
	if (engine == NULL)
		return;

	if (engine->method == IO_METHOD_IO_URING)
	{
		uint64_t	deadline = deadline_after(IO_ENGINE_DESTROY_WAIT_MS);
		int			still_in_kernel;

		/* harvest_cqes() frees CQ space; the done queue has room for all */
		harvest_cqes(engine);
		while (kernel_inflight(engine) > 0)
		{
			int			rc = wait_cqes_until(engine, 1, deadline);

			harvest_cqes(engine);
			if (rc < 0)
				break;
		}
		still_in_kernel = kernel_inflight(engine);

		io_uring_queue_exit(&engine->ring);
		if (still_in_kernel == 0)
			munmap(engine->scratch, engine->scratch_size);
		else
		{
			/* if this fails the buffer simply stays mapped (leaked) */
			(void) mmap(engine->scratch, engine->scratch_size, PROT_NONE,
						MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
						-1, 0);
		}
		close(engine->event_fd);
	}

	free(engine->slots);
	free(engine->done);
	free(engine);
}

/* The method in use (after any fallback). */
IoMethod
io_engine_method(const IoEngine *engine)
{
	return engine->method;
}

/* Name of a method, as used in the GUC and in log messages. */
const char *
io_method_name(IoMethod method)
{
	switch (method)
	{
		case IO_METHOD_IO_URING:
			return "io_uring";
		case IO_METHOD_FADVISE:
			return "fadvise";
	}
	return "unknown";
}

/* The eventfd signalled on completions, or -1 for fadvise. */
int
io_engine_event_fd(const IoEngine *engine)
{
	return engine->event_fd;
}

/* Reads submitted and not yet reaped. */
int
io_engine_inflight(const IoEngine *engine)
{
	return engine->max_inflight - engine->nfree;
}

/*
 * Make the eventfd readable, for completions the kernel did not signal
 * (requests refused at submission) or that io_engine_reap() drained the
 * eventfd for but could not return.  Cannot fail: the counter is far from
 * overflowing.
 */
static void
signal_event_fd(IoEngine *engine)
{
	(void) eventfd_write(engine->event_fd, 1);
}

/*
 * The length of an advice of len bytes at offset, trimmed at end of file (a
 * regular file's size is known) so that byte counts mean the same as a
 * read's: 0 beyond the end.  Returns -errno if fstat() fails.
 */
static int64_t
advice_length(int fd, off_t offset, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (S_ISREG(st.st_mode))
	{
		if (offset >= st.st_size)
			return 0;
		if ((off_t) len > st.st_size - offset)
			return st.st_size - offset;
	}
	return (int64_t) len;
}

/*
 * Synchronous advice (the fadvise method, or io_uring without
 * IORING_OP_FADVISE) of advised bytes, advice_length()'s answer: start
 * readahead now and complete the slot at once; the latency is the system
 * call's.  Nothing to advise (a zero length, or beyond the end of the file)
 * or an fstat() error completes without a system call: to posix_fadvise()
 * a zero length means "up to end of file".
 */
static void
fadvise_now(IoEngine *engine, int idx, int fd, off_t offset, int64_t advised)
{
	uint64_t	start;
	int			rc;

	if (advised <= 0)
	{
		complete_slot(engine, idx, (int) advised, 0);
		return;
	}
	start = io_engine_clock_ns();
	rc = posix_fadvise(fd, offset, (off_t) advised, POSIX_FADV_WILLNEED);
	complete_slot(engine, idx, rc == 0 ? (int) advised : -rc,
				  (io_engine_clock_ns() - start) / 1000);
}

/*
 * Take a slot for a request, or refuse (false) when all are in use.  A
 * negative offset or a length above max_read_bytes (which would overrun the
 * scratch buffer) is not sent to the kernel: it completes at once with
 * -EINVAL, so the caller sees the error where it sees every other result,
 * and *idx is set to -1.
 */
static bool
start_request(IoEngine *engine, off_t offset, size_t len, uint64_t tag,
			  int *idx)
{
	if (engine->nfree == 0)
		return false;

	*idx = slot_alloc(engine);
	engine->slots[*idx].tag = tag;
	engine->slots[*idx].submit_ns = io_engine_clock_ns();
	engine->slots[*idx].advised_len = -1;

	if (offset < 0 || len > engine->max_read_bytes)
	{
		complete_slot(engine, *idx, -EINVAL, 0);
		if (engine->method == IO_METHOD_IO_URING)
			signal_event_fd(engine);
		*idx = -1;
	}
	return true;
}

/*
 * Queue a read or an advice of len bytes at offset of fd.  Without io_uring,
 * or for an advice the kernel's ring cannot make, the request is an advice
 * made at once.  An advice's length is trimmed at end of file before it
 * goes to the kernel, so that its completion's byte count, like a short
 * read's, tells the caller where the file ends.  The SQ ring has at least
 * max_inflight entries and each one queued holds a slot, so there is always
 * a free SQE; stay safe anyway.
 */
static bool
queue_request(IoEngine *engine, int fd, off_t offset, size_t len,
			  uint64_t tag, bool advice)
{
	struct io_uring_sqe *sqe;
	int64_t		advised = 0;
	int			idx;

	if (!start_request(engine, offset, len, tag, &idx))
		return false;
	if (idx < 0)
		return true;			/* completed with -EINVAL */

	if (advice || engine->method == IO_METHOD_FADVISE)
	{
		advised = advice_length(fd, offset, len);
		if (advised <= 0 || engine->method == IO_METHOD_FADVISE ||
			!engine->ring_advises)
		{
			fadvise_now(engine, idx, fd, offset, advised);
			if (engine->method == IO_METHOD_IO_URING)
				signal_event_fd(engine);
			return true;
		}
	}

	sqe = io_uring_get_sqe(&engine->ring);
	if (sqe == NULL)
	{
		slot_release(engine, idx);
		return false;
	}
	io_uring_sqe_set_data64(sqe, (uint64_t) idx);
	if (advice)
	{
		engine->slots[idx].advised_len = (int) advised;
		io_uring_prep_fadvise(sqe, fd, (uint64_t) offset, (off_t) advised,
							  POSIX_FADV_WILLNEED);
	}
	else
		io_uring_prep_read(sqe, fd, engine->scratch, (unsigned) len,
						   (uint64_t) offset);
	return true;
}

/* Queue a read; see io_engine.h. */
bool
io_engine_submit(IoEngine *engine, int fd, off_t offset, size_t len,
				 uint64_t tag)
{
	return queue_request(engine, fd, offset, len, tag, false);
}

/* Queue an advice; see io_engine.h. */
bool
io_engine_advise(IoEngine *engine, int fd, off_t offset, size_t len,
				 uint64_t tag)
{
	return queue_request(engine, fd, offset, len, tag, true);
}

/*
 * Hand the queued SQEs to the kernel; see io_engine.h.  The kernel may take
 * only part of them (then we loop), fail with EINTR (retried) or with
 * EAGAIN/EBUSY when it is short of request memory or has CQEs in overflow:
 * then reaping CQEs into the done queue (or waiting a little for one) gives
 * it room, and we retry a bounded number of times.  SQEs not taken stay
 * queued for the next flush.
 */
int
io_engine_flush(IoEngine *engine)
{
	int			retries = 0;

	if (engine->method != IO_METHOD_IO_URING)
		return 0;

	while (io_uring_sq_ready(&engine->ring) > 0)
	{
		int			rc = io_uring_submit(&engine->ring);

		if (rc > 0)
			continue;
		if (rc == -EINTR)
			continue;
		if (rc != 0 && rc != -EAGAIN && rc != -EBUSY)
			return rc;
		if (++retries > IO_ENGINE_FLUSH_RETRIES)
			return rc != 0 ? rc : -EAGAIN;
		if (harvest_cqes(engine) == 0 && kernel_inflight(engine) > 0)
		{
			(void) wait_cqes_until(engine, 1, deadline_after(1));
			harvest_cqes(engine);
		}
	}
	return 0;
}

/*
 * Collect finished reads without waiting; see io_engine.h.  The eventfd is
 * drained before the CQ ring is read, so a completion arriving after that
 * read signals it again and a caller sleeping on it cannot miss it.  If
 * more completions are ready than out[] can take, the eventfd is signalled
 * again for the rest.
 */
int
io_engine_reap(IoEngine *engine, IoCompletion *out, int max)
{
	int			n = 0;

	if (engine->method == IO_METHOD_IO_URING)
	{
		eventfd_t	count;

		(void) eventfd_read(engine->event_fd, &count);	/* EAGAIN if zero */
		harvest_cqes(engine);
	}

	while (n < max && engine->done_count > 0)
	{
		int			idx = engine->done[engine->done_head];
		IoSlot	   *slot = &engine->slots[idx];

		out[n].tag = slot->tag;
		out[n].result = slot->result;
		out[n].latency_us = slot->latency_us;
		n++;
		engine->done_head = (engine->done_head + 1) % engine->max_inflight;
		engine->done_count--;
		slot_release(engine, idx);
	}

	if (engine->method == IO_METHOD_IO_URING && engine->done_count > 0)
		signal_event_fd(engine);
	return n;
}

/*
 * Wait until at least min_complete reads are ready to reap or timeout_ms
 * (negative: no limit) has passed; see io_engine.h.  Queued SQEs are
 * flushed first, else we could wait for reads the kernel never got.
 * min_complete is capped at what can still finish.  Returns the number of
 * completions ready for io_engine_reap() (fewer than min_complete after a
 * timeout), or -errno if flushing or waiting failed.
 */
int
io_engine_wait(IoEngine *engine, int min_complete, int timeout_ms)
{
	uint64_t	deadline;
	int			rc;

	if (engine->method != IO_METHOD_IO_URING)
		return engine->done_count;		/* fadvise completes at submit */

	rc = io_engine_flush(engine);
	if (rc < 0)
		return rc;
	harvest_cqes(engine);
	if (min_complete > engine->done_count + kernel_inflight(engine))
		min_complete = engine->done_count + kernel_inflight(engine);

	deadline = deadline_after(timeout_ms);
	while (engine->done_count < min_complete)
	{
		rc = wait_cqes_until(engine, min_complete - engine->done_count,
							 deadline);
		harvest_cqes(engine);
		if (rc == -ETIME)
			break;
		if (rc < 0)
			return rc;
	}
	return engine->done_count;
}
