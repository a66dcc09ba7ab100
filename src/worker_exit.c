/*-------------------------------------------------------------------------
 *
 * worker_exit.c
 *	  How the library's permanent workers (the monitor, the CLOG writer)
 *	  leave when asked to.
 *
 * The postmaster restarts a background worker that exits with status 1
 * after its bgw_restart_time, logging the exit, and forgets one that exits
 * with status 0.  Both answers are right, for different senders of SIGTERM:
 *
 *	- the postmaster, during a server shutdown: status 0, so that a clean
 *	  shutdown logs nothing about our workers (a restart is moot);
 *	- anybody else (pg_terminate_backend(), kill): status 1, so that the
 *	  worker comes back after its restart interval, as after an ERROR.
 *
 * The sender is the signal's si_pid, which pqsignal() does not pass on, so
 * SIGTERM gets a handler of its own, installed with sigaction().  It sets
 * ShutdownRequestPending and the latch, as SignalHandlerForShutdownRequest()
 * does, so the workers' loops are unchanged.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"

#include "worker_exit.h"

static volatile sig_atomic_t shutdown_by_postmaster = false;

static void
handle_sigterm(int signo, siginfo_t *info, void *context)
{
	int			save_errno = errno;

	if (info != NULL && info->si_pid == PostmasterPid)
		shutdown_by_postmaster = true;
	ShutdownRequestPending = true;
	SetLatch(MyLatch);

	errno = save_errno;
}

/*
 * Install the SIGTERM handler; call before BackgroundWorkerUnblockSignals().
 */
void
worker_exit_install_sigterm(void)
{
	struct sigaction act;

	memset(&act, 0, sizeof(act));
	act.sa_sigaction = handle_sigterm;
	sigemptyset(&act.sa_mask);
	act.sa_flags = SA_SIGINFO | SA_RESTART;
	if (sigaction(SIGTERM, &act, NULL) < 0)
		elog(FATAL, "could not set the SIGTERM handler: %m");
}

/*
 * Exit after a shutdown request (ShutdownRequestPending): status 0 when the
 * postmaster asked (a server shutdown), 1 otherwise (restarted).
 */
void
worker_exit_on_request(void)
{
	proc_exit(shutdown_by_postmaster ? 0 : 1);
}
