/*-------------------------------------------------------------------------
 *
 * relfile.h
 *	  Descriptors of relation files held outside smgr (relfile.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_RELFILE_H
#define BGWP_RELFILE_H

#include "common/relpath.h"

#include "compat.h"

extern int	relfile_open(BgwpRelFile relfile, ForkNumber forknum, int segno);
extern int	relfile_open_direct(BgwpRelFile relfile, ForkNumber forknum,
								int segno);
extern void relfile_close(int fd);
extern bool relfile_unlinked(int fd);

#endif							/* BGWP_RELFILE_H */
