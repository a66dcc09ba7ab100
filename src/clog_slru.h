/*-------------------------------------------------------------------------
 *
 * clog_slru.h
 *	  The CLOG writer's hands on the CLOG SLRU (clog_slru.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BGWP_CLOG_SLRU_H
#define BGWP_CLOG_SLRU_H

extern const char *clog_slru_attach(void);
extern int	clog_slru_write_round(int max_pages, double *write_ms);
extern int	clog_slru_evictions(void);

#endif							/* BGWP_CLOG_SLRU_H */
