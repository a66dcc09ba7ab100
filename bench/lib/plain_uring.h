/*-------------------------------------------------------------------------
 *
 * plain_uring.h
 *	  The smallest liburing loop that keeps a given number of buffered reads
 *	  in flight: one private buffer per read, one io_uring_submit_and_wait()
 *	  per round, nothing else.
 *
 * It is the reference bench/engine_rate.c measures the extension's I/O
 * engine against, and the reader of bench/lib/read_plan.c (the VACUUM
 * benchmark's oracle).  Header-only, static functions: each benchmark
 * program is one translation unit built by its script.  Failures to set up
 * end the program (a benchmark has nothing to fall back on); failed or
 * short reads are counted and returned.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PLAIN_URING_H
#define PLAIN_URING_H

#include <errno.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* One read: length bytes at offset of fd. */
typedef struct PlainRead
{
	int			fd;
	off_t		offset;
	size_t		length;
} PlainRead;

typedef struct PlainRing
{
	struct io_uring ring;
	int			depth;			/* reads in flight at most */
	size_t		slot_size;		/* buffer bytes per read in flight */
	char	   *bufs;			/* depth buffers of slot_size */
	int		   *free_slots;
	int			nfree;
} PlainRing;

static void
plain_ring_init(PlainRing *pr, int depth, size_t slot_size)
{
	int			rc;

	pr->depth = depth;
	pr->slot_size = slot_size;
	pr->free_slots = malloc(depth * sizeof(int));
	if (pr->free_slots == NULL ||
		posix_memalign((void **) &pr->bufs, 4096, (size_t) depth * slot_size) != 0)
	{
		fprintf(stderr, "plain_uring: out of memory\n");
		exit(1);
	}
	memset(pr->bufs, 0, (size_t) depth * slot_size);
	for (int i = 0; i < depth; i++)
		pr->free_slots[i] = i;
	pr->nfree = depth;
	rc = io_uring_queue_init(depth, &pr->ring, 0);
	if (rc < 0)
	{
		fprintf(stderr, "plain_uring: io_uring_queue_init: %s\n", strerror(-rc));
		exit(1);
	}
}

/*
 * Read reads[0 .. n) in order, depth at a time; returns how many failed or
 * came back short.  Each read's length must fit a slot.
 */
static long
plain_ring_read_all(PlainRing *pr, const PlainRead *reads, long n)
{
	long		next = 0;
	long		done = 0;
	long		errors = 0;

	while (done < n)
	{
		struct io_uring_cqe *cqe;
		unsigned	head;
		unsigned	seen = 0;
		int			rc;

		while (pr->nfree > 0 && next < n)
		{
			struct io_uring_sqe *sqe = io_uring_get_sqe(&pr->ring);
			int			slot = pr->free_slots[--pr->nfree];

			io_uring_prep_read(sqe, reads[next].fd,
							   pr->bufs + (size_t) slot * pr->slot_size,
							   reads[next].length, reads[next].offset);
			/* the read in the high 32 bits, its slot in the low ones */
			io_uring_sqe_set_data64(sqe, ((uint64_t) next << 32) | (uint32_t) slot);
			next++;
		}
		rc = io_uring_submit_and_wait(&pr->ring, 1);
		if (rc < 0 && rc != -EINTR)
		{
			fprintf(stderr, "plain_uring: io_uring_submit_and_wait: %s\n", strerror(-rc));
			exit(1);
		}
		io_uring_for_each_cqe(&pr->ring, head, cqe)
		{
			long		i = (long) (cqe->user_data >> 32);

			if (cqe->res < 0 || (size_t) cqe->res != reads[i].length)
				errors++;
			pr->free_slots[pr->nfree++] = (int) (cqe->user_data & 0xffffffff);
			seen++;
		}
		io_uring_cq_advance(&pr->ring, seen);
		done += seen;
	}
	return errors;
}

static void
plain_ring_destroy(PlainRing *pr)
{
	io_uring_queue_exit(&pr->ring);
	free(pr->bufs);
	free(pr->free_slots);
}

#endif							/* PLAIN_URING_H */
