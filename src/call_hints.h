/*-------------------------------------------------------------------------
 *
 * call_hints.h
 *	  Hints listing the arguments of the extension's functions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_CALL_HINTS_H
#define BGWP_CALL_HINTS_H

extern void call_hints_install(void);

#endif							/* BGWP_CALL_HINTS_H */
