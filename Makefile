# bgw_prefetch: PGXS build.  See README.md for the test and demo commands.

MODULE_big = bgw_prefetch
OBJS = \
	src/module.o \
	src/guc.o \
	src/stats.o \
	src/monitor.o \
	src/worker_exit.o \
	src/backends.o \
	src/resolver.o \
	src/resolve_relation.o \
	src/announce.o \
	src/statement_options.o \
	src/autovac_rule.o \
	src/forecast.o \
	src/forecaster.o \
	src/relfile.o \
	src/vm_reader.o \
	src/vacuum_plan.o \
	src/analyze_plan.o \
	src/io_engine.o \
	src/io_pacing.o \
	src/foreground_signal.o \
	src/prefetcher.o \
	src/prefetch_adopt.o \
	src/prefetch_unseen.o \
	src/prefetch_follow.o \
	src/prefetch_reads.o \
	src/prefetch_pacing.o \
	src/prefetch_report.o \
	src/buffer_loader.o \
	src/calibrate.o \
	src/calibrate_measure.o \
	src/calibration_store.o \
	src/dynamic_worker.o \
	src/backend_reads.o \
	src/clog_slru.o \
	src/clog_writer.o

EXTENSION = bgw_prefetch
DATA = bgw_prefetch--1.0.sql
PGFILEDESC = "bgw_prefetch - io_uring prefetch for VACUUM and ANALYZE, CLOG writer"

SHLIB_LINK += -luring -lm
# Export only the entry points the server looks up (exports.txt).
SHLIB_EXPORTS = exports.txt
PG_CPPFLAGS += -I$(srcdir)/src
PG_CFLAGS += -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare

REGRESS = bgw_prefetch guc privileges
REGRESS_OPTS = --temp-instance=./tmp_check_regress --temp-config=$(srcdir)/test/regress.conf
TAP_TESTS = 1

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies: every object is rebuilt when a header
# changes, so that no object keeps an old struct layout.
$(OBJS): $(wildcard $(srcdir)/src/*.h)

check-unit:
	$(MAKE) -C test/unit check

.PHONY: check-unit
