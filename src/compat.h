/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every server-version-specific detail bgw_prefetch relies on.
 *
 * bgw_prefetch reads a few server structures that are not a stable API: the
 * backend status array (to follow VACUUM/ANALYZE progress without the
 * snapshot machinery), the buffer mapping table (to read the current
 * visibility map without pinning a relation), the on-disk path of a
 * relation's segments, and the CLOG SLRU.  Everything that depends on the
 * server version is here, so that supporting a newer server means editing
 * this file only.  Only PostgreSQL 15 is built and tested; other versions
 * are refused at compile time rather than guessed at.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_COMPAT_H
#define BGWP_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 160000
#error "bgw_prefetch is written and tested for PostgreSQL 15 only (see compat.h)"
#endif

#include "common/relpath.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/relfilenode.h"

/* ---------- backend status array ---------- */

/*
 * backend_status.c allocates the array with this ShmemInitStruct name and
 * size; attaching by name gives read access to other backends' progress
 * with the changecount protocol, without pgstat_read_current_status()'s
 * per-backend SInvalWriteLock and activity-string copies.
 */
#define BGWP_BACKEND_STATUS_SHMEM_NAME "Backend Status Array"
#define BGWP_NUM_BACKEND_STATUS_SLOTS (MaxBackends + NUM_AUXPROCTYPES)
/* A regular backend's own slot (pgstat_beinit(): MyBackendId - 1) */
#define BGWP_MY_BACKEND_STATUS_SLOT() (MyBackendId - 1)

/* ---------- relation files ---------- */

typedef RelFileNode BgwpRelFile;

#define BGWP_REL_PATH(dbid, spcid, relfilenode, forknum) \
	GetRelationPath((dbid), (spcid), (relfilenode), InvalidBackendId, (forknum))

/* ---------- buffer mapping (visibility map reads) ---------- */

#define BGWP_INIT_BUFFERTAG(tag, relfile, forknum, blkno) \
	INIT_BUFFERTAG((tag), (relfile), (forknum), (blkno))

#define BGWP_READ_RECENT_BUFFER(relfile, forknum, blkno, buffer) \
	ReadRecentBuffer((relfile), (forknum), (blkno), (buffer))

/* ---------- loading blocks into shared buffers (buffer_loader.c) ---------- */

/* Read a block of a relation known by its files only, as recovery does */
#define BGWP_READ_BUFFER_NO_RELCACHE(relfile, forknum, blkno, permanent) \
	ReadBufferWithoutRelcache((relfile), (forknum), (blkno), RBM_NORMAL, NULL, \
							  (permanent))

/* The relation's files as its relcache entry names them */
#define BGWP_RELATION_FILE(rel) ((rel)->rd_node)
#define BGWP_SAME_REL_FILE(a, b) RelFileNodeEquals((a), (b))

/* ---------- visibility map layout (private to visibilitymap.c) ---------- */

#define BGWP_VM_MAPSIZE (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define BGWP_VM_HEAPBLOCKS_PER_BYTE 4	/* 2 bits per heap block */
#define BGWP_VM_HEAPBLOCKS_PER_PAGE (BGWP_VM_MAPSIZE * BGWP_VM_HEAPBLOCKS_PER_BYTE)
#define BGWP_VM_BITS(page, heapblk) \
	((((const uint8 *) PageGetContents(page))[((heapblk) % BGWP_VM_HEAPBLOCKS_PER_PAGE) / BGWP_VM_HEAPBLOCKS_PER_BYTE] \
	  >> (((heapblk) % BGWP_VM_HEAPBLOCKS_PER_BYTE) * 2)) & 0x03)

/* ---------- CLOG writer (clog_writer.c) ---------- */

/*
 * clog.c's CLOGShmemInit() creates the CLOG SLRU with these parameters:
 * ShmemInitStruct name, directory, control lock, CLOGShmemBuffers() slots,
 * and 2 status bits per xid with one LSN group per 32 xids.  The CLOG page
 * layout constants are static in clog.c and copied here.  Expand these
 * macros only where access/clog.h and access/slru.h are included.
 */
#define BGWP_CLOG_SLRU_NAME		"Xact"
#define BGWP_CLOG_DIR			"pg_xact"
#define BGWP_CLOG_CONTROL_LOCK	XactSLRULock
#define BGWP_CLOG_SYNC_HANDLER	SYNC_HANDLER_CLOG
#define BGWP_CLOG_NUM_BUFFERS()	((int) CLOGShmemBuffers())
#define BGWP_CLOG_SHMEM_SIZE()	CLOGShmemSize()
#define BGWP_CLOG_XACTS_PER_PAGE	(BLCKSZ * 4)
#define BGWP_CLOG_LSNS_PER_PAGE	(BGWP_CLOG_XACTS_PER_PAGE / 32)

/* ---------- end of CLOG writer section ---------- */

#endif							/* BGWP_COMPAT_H */
