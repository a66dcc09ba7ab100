/*-------------------------------------------------------------------------
 *
 * relfile.c
 *	  Descriptors of relation files held outside smgr, counted by fd.c.
 *
 * The prefetcher reads a relation's segment files with io_uring, and the
 * VM reader its visibility map fork, through plain descriptors: md.c would
 * want an smgr relation in a process bound to no database, and its reads
 * are synchronous.  Such a descriptor is held for a whole scan, so it is
 * counted as fd.c asks of descriptors it does not manage: with
 * AcquireExternalFD() before the open, which refuses once external
 * descriptors would take more than a third of max_safe_fds (the caller
 * then retries later, as when the process is out of descriptors), and
 * ReleaseExternalFD() after the close.
 *
 * A descriptor keeps its file's disk space after the file is unlinked
 * (DROP TABLE, TRUNCATE, DROP DATABASE, DROP TABLESPACE); the smgr release
 * barrier those commands send closes md.c's descriptors, not these.  So
 * the holders ask relfile_unlinked() at every step and close a descriptor
 * whose file is gone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/fd.h"

#include "relfile.h"

/*
 * Open segment segno of a fork of the relation, read-only, with
 * extra_flags (0, or PG_O_DIRECT for a read that must go to the disk).
 * Returns the descriptor, or -1 with errno set: EMFILE when no more
 * descriptors may be held (retry later), ENOENT when the file does not
 * exist, EINVAL when the file system refuses the flags.
 */
static int
open_segment(BgwpRelFile relfile, ForkNumber forknum, int segno,
			 int extra_flags)
{
	char	   *path;
	char	   *segpath;
	int			fd;
	int			save_errno;

	if (!AcquireExternalFD())
	{
		errno = EMFILE;
		return -1;
	}
	path = bgwp_rel_path(relfile, forknum);
	segpath = segno == 0 ? path : psprintf("%s.%d", path, segno);
	fd = BasicOpenFile(segpath, O_RDONLY | PG_BINARY | extra_flags);
	save_errno = errno;
	if (fd < 0)
		ReleaseExternalFD();
	if (segpath != path)
		pfree(segpath);
	pfree(path);
	errno = save_errno;
	return fd;
}

int
relfile_open(BgwpRelFile relfile, ForkNumber forknum, int segno)
{
	return open_segment(relfile, forknum, segno, 0);
}

/* ... for direct reads (O_DIRECT), which bypass the OS cache */
int
relfile_open_direct(BgwpRelFile relfile, ForkNumber forknum, int segno)
{
	return open_segment(relfile, forknum, segno, PG_O_DIRECT);
}

void
relfile_close(int fd)
{
	if (fd < 0)
		return;
	close(fd);
	ReleaseExternalFD();
}

/*
 * Has the file behind fd been unlinked?  (md.c truncates a dropped
 * relation's first segment to nothing and unlinks it at the next
 * checkpoint; the truncation already frees its space.)
 */
bool
relfile_unlinked(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return false;			/* cannot tell: keep it */
	return st.st_nlink == 0;
}
