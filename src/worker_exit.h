/*-------------------------------------------------------------------------
 *
 * worker_exit.h
 *	  Exit status of the permanent workers: 0 at a server shutdown, 1 when
 *	  somebody else terminates them (restarted).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_WORKER_EXIT_H
#define BGWP_WORKER_EXIT_H

extern void worker_exit_install_sigterm(void);
extern void worker_exit_on_request(void);

#endif							/* BGWP_WORKER_EXIT_H */
