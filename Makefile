# pgcolumnar front door. `make run` and `make test` work on a fresh machine: both
# provision what is missing first (see scripts/provision.sh).

PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
PG_BIN    := $(shell $(PG_CONFIG) --bindir 2>/dev/null)
RUN_PORT  ?= 54315
TEST_PORT ?= 54316
CLUSTER   := scripts/cluster.sh
RUN_SOCK   = $(shell $(CLUSTER) dir run)/socket
PSQL_RUN   = $(PG_BIN)/psql -X -h $(RUN_SOCK) -p $(RUN_PORT) -U postgres

export PG_CONFIG

.PHONY: help provision build install run start demo psql stop test unit-test pg-test \
        regress isolation integration-test parity crash-test upgrade-test autovacuum-test memory-test logical-test citus-test fmt lint clean clean-clusters

help:
	@echo "make run      build, install, start the local cluster, run the demo"
	@echo "make test     every test level, on a throwaway cluster"
	@echo "make psql     connect to the local cluster    make stop   stop it"
	@echo "make install  build in release mode and install into $(PG_CONFIG)'s PostgreSQL"
	@echo "make bench    TSBS-style benchmark vs heap and DuckDB (after make run; ROWS=1000000 for a quick one)"
	@echo "make bench-tpch  TPC-H SF1 (SF=…) in heap, columnar and DuckDB, serial and parallel, and the planner choice suite on it (after make run)"
	@echo "make bench-rows  ns per row of a scan returning every row, heap's Seq Scan vs PgColumnarScan (ROWS=5000000)"
	@echo "make bench-citus  the TSBS table distributed over 2 Citus workers vs one node (ROWS=1000000 quick)"
	@echo "make bench-changes  DELETE/UPDATE of 100k rows, point lookups on 10M rows, concurrent transfers, then bench-ingest and bench-logical; heap vs columnar"
	@echo "make bench-ingest   single-row and 100-row INSERT throughput, then 2M single-row inserts and autovacuum's merges"
	@echo "make bench-logical  write overhead of wal_level = logical (INSERT, UPDATE, DELETE, COPY), heap vs columnar; restarts the cluster"
	@echo "make unit-test | pg-test | regress | isolation | integration-test | parity | crash-test | upgrade-test | autovacuum-test | memory-test | logical-test | citus-test"
	@echo "make library-upgrade-test FROM=<commit>  tables written by that commit's library, then this one installed and the extension updated"

provision:
	@scripts/provision.sh

build: provision
	cargo build --release --locked

install: provision
	@scripts/install.sh

# Restarting on every run makes the cluster preload the library just installed.
start:
	@$(CLUSTER) start run $(RUN_PORT) analytics
	@$(PSQL_RUN) -q -d postgres -c "SET client_min_messages = warning" \
		-c "CREATE EXTENSION IF NOT EXISTS pgcolumnar" -c "ALTER EXTENSION pgcolumnar UPDATE"

demo:
	@PG_BIN=$(PG_BIN) RUN_SOCK=$(RUN_SOCK) RUN_PORT=$(RUN_PORT) scripts/demo.sh

# The benchmark (bench/README.md) against the `make run` cluster; `make bench ROWS=1000000`
# for a quick run. bench/ is a directory, hence the explicit .PHONY here.
.PHONY: bench
bench:
	@bench/run.py --rows $(or $(ROWS),10000000) --hosts $(or $(HOSTS),400) --pg-bin $(PG_BIN) \
		--host $(RUN_SOCK) --port $(RUN_PORT)

# TPC-H (bench/tpch.py) in heap, columnar and DuckDB against the `make run` cluster;
# `make bench-tpch SF=10` for another scale factor, RUNS= timed runs per query (default 3).
.PHONY: bench-tpch
bench-tpch:
	@bench/run.py --tpch --sf $(or $(SF),1) --runs $(or $(RUNS),3) --pg-bin $(PG_BIN) --host $(RUN_SOCK) --port $(RUN_PORT)

# Row output: ns per row of a scan that returns every row, heap against columnar, for
# 1, 4 and 16 columns of each type (bench/row_output.py), against the `make run` cluster.
.PHONY: bench-rows
bench-rows:
	@bench/row_output.py --rows $(or $(ROWS),5000000) --host $(RUN_SOCK) --port $(RUN_PORT)

# The TSBS table distributed over two Citus workers on this machine against the same table
# on one node (bench/citus.py): builds Citus first if needed (scripts/citus-build.sh,
# cached), starts its own three servers (ports CITUS_BENCH_PORT = 54330 to +2, destroyed
# at the end) and needs pgcolumnar installed (`make install`). ROWS=1000000 for a quick run;
# SHARDS= the shard counts to compare (default 2,8,32); KEEP=1 leaves the servers running
# (then bench/citus.py --reuse measures again without reloading).
.PHONY: bench-citus
bench-citus:
	@scripts/citus-build.sh
	@bench/citus.py --rows $(or $(ROWS),10000000) --hosts $(or $(HOSTS),400) --runs $(or $(RUNS),5) \
		--port $(or $(CITUS_BENCH_PORT),54330) $(if $(SHARDS),--shard-counts $(SHARDS)) $(if $(KEEP),--keep)

# Trickle ingest (bench/ingest.py): single-row and 100-row INSERT throughput, heap against
# columnar, then TRICKLE_ROWS (default 2M) single-row transactions and whether autovacuum
# merges their row groups; writes bench/results/<date>-ingest.json and BENCHMARKS.md.
.PHONY: bench-ingest
bench-ingest:
	@bench/run.py --ingest-only --host $(RUN_SOCK) --port $(RUN_PORT) --pg-bin $(PG_BIN) \
		$(if $(TRICKLE_ROWS),--trickle-rows $(TRICKLE_ROWS)) $(if $(SECONDS),--ingest-seconds $(SECONDS))

# Row changes and point lookups, heap against columnar, on a 10M-row table (bench/changes.sql),
# then the trickle-ingest benchmark (bench-ingest).
.PHONY: bench-changes
bench-changes:
	@$(PSQL_RUN) -d postgres -c "DROP DATABASE IF EXISTS pgcolumnar_changes" -c "CREATE DATABASE pgcolumnar_changes"
	@$(PSQL_RUN) -d pgcolumnar_changes -c "CREATE EXTENSION pgcolumnar" -f bench/changes.sql
	@for t in chg_heap chg_col; do echo "point lookups by primary key on $$t:"; \
		$(PG_BIN)/pgbench -h $(RUN_SOCK) -p $(RUN_PORT) -U postgres -n -f bench/lookup.sql \
		-D table=$$t -T 10 pgcolumnar_changes | grep -E 'latency average|tps'; done
	@for f in transfer transfer_upsert transfer_delete; do \
		$(PSQL_RUN) -q -d pgcolumnar_changes -f bench/transfer_setup.sql; \
		for t in heap col; do echo "$$f, 8 clients, $(or $(TRANSFER_SECONDS),60) s, on $$t (deadlocks fail a transaction, as 40P01):"; \
		$(PG_BIN)/pgbench -h $(RUN_SOCK) -p $(RUN_PORT) -U postgres -n -c 8 -j 2 -T $(or $(TRANSFER_SECONDS),60) \
		-f bench/$$f.sql -D tbl=$$t pgcolumnar_changes 2>&1 | grep -E 'tps|failed|processed|ERROR'; \
		$(PSQL_RUN) -d pgcolumnar_changes -Atc "SELECT 'total: ' || (SELECT sum(balance) FROM acct_$$t) + \
			(SELECT coalesce(sum(amount), 0) FROM pending_$$t) || ', accounts: ' || (SELECT count(*) FROM acct_$$t)"; done; done
	@$(MAKE) --no-print-directory bench-ingest
	@$(MAKE) --no-print-directory bench-logical

# The write overhead of wal_level = logical, heap against columnar (bench/logical_overhead.py):
# restarts the local cluster at logical and back; writes bench/results/<date>-logical.json.
.PHONY: bench-logical
bench-logical:
	@bench/run.py --logical-only --host $(RUN_SOCK) --port $(RUN_PORT) --pg-bin $(PG_BIN) \
		$(if $(SECONDS),--logical-seconds $(SECONDS))

run: install start demo
	@echo
	@echo "The cluster is running (port $(RUN_PORT), socket $(RUN_SOCK))."
	@echo "  connect: make psql    (or: $(PSQL_RUN) -d postgres)"
	@echo "  stop:    make stop"

psql:
	@$(PSQL_RUN) -d postgres

stop:
	@$(CLUSTER) stop run

test: provision
	@scripts/test.sh all

# Tables written by an earlier release's library, read after installing this one
# (tests/library_upgrade.sh; not in `make test`): make library-upgrade-test FROM=da535f4
.PHONY: library-upgrade-test
library-upgrade-test: provision
	@bash tests/library_upgrade.sh $(or $(FROM),da535f4)

unit-test pg-test regress isolation integration-test parity crash-test upgrade-test autovacuum-test memory-test: provision
	@scripts/test.sh $@

# The logical level alone (logical decoding and subscriptions, two clusters of its own).
logical-test: provision
	@scripts/test.sh logical

# The citus level alone (test.sh's level is named `citus`): builds Citus once (cached).
citus-test: provision
	@scripts/test.sh citus

fmt:
	cargo fmt

lint:
	cargo fmt --check
	python3 scripts/check_layers.py
	cargo clippy --all-targets --features pg_test -- -D warnings

clean-clusters:
	@$(CLUSTER) destroy run
	@$(CLUSTER) destroy test
	@for n in citus-coord citus-w1 citus-w2 bench-citus-coord bench-citus-w1 bench-citus-w2; do $(CLUSTER) destroy $$n; done

clean: clean-clusters
	cargo clean
