/*-------------------------------------------------------------------------
 *
 * statement_options.h
 *	  The options of each backend's current VACUUM or ANALYZE statement, as
 *	  its utility hook saw them (statement_options.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_STATEMENT_OPTIONS_H
#define BGWP_STATEMENT_OPTIONS_H

#include "resolver_internal.h"

extern Size statement_options_shmem_size(void);
extern void statement_options_shmem_startup(void);
extern void statement_options_publish(const VacuumOptions *opts);
extern void statement_options_of(int slot, int pid, VacuumOptions *opts);

#endif							/* BGWP_STATEMENT_OPTIONS_H */
