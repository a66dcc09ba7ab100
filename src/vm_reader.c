/*-------------------------------------------------------------------------
 *
 * vm_reader.c
 *	  Lock-free reads of a relation's current visibility map.
 *
 * The VACUUM planner needs the visibility map (VM) of a relation that is
 * being vacuumed, without taking any heavyweight lock on it (that would
 * block DDL and DROP) and without a database connection.  A VM page is
 * current either in shared buffers (if it is there, possibly dirty) or on
 * disk (if it is not, because a page is written out before its buffer is
 * reused).  So each VM page is looked up in the buffer mapping table; when
 * present it is pinned with ReadRecentBuffer() -- which re-checks the tag
 * under the buffer header lock, so a buffer recycled meanwhile is simply
 * not used -- and copied under a share content lock; when absent the page is
 * read from the VM fork file with pread().
 *
 * The reader never loads a page into shared buffers.  That matters: a read
 * into shared buffers racing with DROP TABLE could leave a buffer behind
 * for a relfilenode that is being unlinked; reading the file directly
 * cannot.  A VM page changing right after it was copied only costs
 * prefetch accuracy, never correctness: VACUUM reads the VM itself.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "storage/bufmgr.h"
#include "storage/buf_internals.h"
#include "storage/bufpage.h"
#include "storage/fd.h"

#include "compat.h"
#include "relfile.h"
#include "vm_reader.h"

void
vm_reader_init(VmReader *reader, BgwpRelFile relfile)
{
	memset(reader, 0, sizeof(*reader));
	reader->relfile = relfile;
	reader->fd = -1;
	reader->cached_block = InvalidBlockNumber;
}

/* Forget the cached page, so that the next lookup sees current bits. */
void
vm_reader_invalidate(VmReader *reader)
{
	reader->cached_block = InvalidBlockNumber;
}

/*
 * Copy VM block mapblock from shared buffers if it is there.
 */
static bool
copy_from_shared_buffers(VmReader *reader, BlockNumber mapblock)
{
	BufferTag	tag;
	uint32		hash;
	LWLock	   *partition;
	int			buf_id;
	Buffer		buffer;

	BGWP_INIT_BUFFERTAG(tag, reader->relfile, VISIBILITYMAP_FORKNUM, mapblock);
	hash = BufTableHashCode(&tag);
	partition = BufMappingPartitionLock(hash);
	LWLockAcquire(partition, LW_SHARED);
	buf_id = BufTableLookup(&tag, hash);
	LWLockRelease(partition);
	if (buf_id < 0)
		return false;

	buffer = buf_id + 1;
	if (!ReadRecentBuffer(reader->relfile, VISIBILITYMAP_FORKNUM,
						  mapblock, buffer))
		return false;
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	memcpy(reader->page.data, BufferGetPage(buffer), BLCKSZ);
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	ReleaseBuffer(buffer);
	return true;
}

/*
 * Read VM block mapblock from the fork file.  A missing file or a block past
 * its end reads as zeroes, as visibilitymap_get_status() treats them.
 */
static void
copy_from_file(VmReader *reader, BlockNumber mapblock)
{
	ssize_t		nread = 0;

	if (reader->fd < 0 && !reader->file_missing)
	{
		reader->fd = relfile_open(reader->relfile, VISIBILITYMAP_FORKNUM, 0);
		/* out of descriptors (EMFILE): zeroes now, another open next time */
		if (reader->fd < 0 && errno != EMFILE && errno != ENFILE)
		{
			if (errno != ENOENT)
				ereport(DEBUG1,
						(errcode_for_file_access(),
						 errmsg("could not open the visibility map of relation %u: %m",
								BGWP_RELFILE_NUMBER(reader->relfile))));
			reader->file_missing = true;
		}
	}
	if (reader->fd >= 0)
		nread = pg_pread(reader->fd, reader->page.data, BLCKSZ,
						 (off_t) mapblock * BLCKSZ);
	if (nread != BLCKSZ)
		memset(reader->page.data, 0, BLCKSZ);
}

/*
 * VacuumPlanVmFn: the two VM bits of heap block heapblk.
 */
uint8_t
vm_reader_bits(void *arg, uint32_t heapblk)
{
	VmReader   *reader = (VmReader *) arg;
	BlockNumber mapblock = heapblk / BGWP_VM_HEAPBLOCKS_PER_PAGE;

	if (reader->cached_block != mapblock)
	{
		if (!copy_from_shared_buffers(reader, mapblock))
			copy_from_file(reader, mapblock);
		reader->cached_block = mapblock;
	}
	return BGWP_VM_BITS(reader->page.data, heapblk);
}

void
vm_reader_close(VmReader *reader)
{
	relfile_close(reader->fd);
	reader->fd = -1;
	reader->cached_block = InvalidBlockNumber;
}

/*
 * Close the VM fork's descriptor if its file was unlinked (the relation
 * was dropped or rewritten): every bit then reads 0, as for a missing fork.
 */
void
vm_reader_close_unlinked(VmReader *reader)
{
	if (reader->fd >= 0 && relfile_unlinked(reader->fd))
	{
		vm_reader_close(reader);
		reader->file_missing = true;
	}
}
