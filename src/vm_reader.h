/*-------------------------------------------------------------------------
 *
 * vm_reader.h
 *	  Lock-free reads of a relation's current visibility map.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_VM_READER_H
#define BGWP_VM_READER_H

#include "postgres.h"

#include "compat.h"

typedef struct VmReader
{
	BgwpRelFile relfile;
	int			fd;				/* VM fork file, -1 if not open */
	bool		file_missing;	/* no VM fork yet: every bit reads 0 */
	BlockNumber cached_block;	/* VM block in page[], InvalidBlockNumber if none */
	PGAlignedBlock page;
} VmReader;

extern void vm_reader_init(VmReader *reader, BgwpRelFile relfile);
extern void vm_reader_invalidate(VmReader *reader);
extern uint8_t vm_reader_bits(void *reader, uint32_t heapblk);
extern void vm_reader_close(VmReader *reader);
extern void vm_reader_close_unlinked(VmReader *reader);

#endif							/* BGWP_VM_READER_H */
