#!/usr/bin/env bash
# Benchmarks an Iceberg commit on MinIO over loopback (a benchmark, not a test: it asserts
# nothing). See bench/README.md, "iceberg", for the latest figures.
#
#   bench/iceberg.sh
#
# Environment: COMMITS (commits timed per history size, default 20), HISTORY (the table's
# snapshots before the timed commits, comma-separated, default 1,100,1000; each size is built
# first by that many commits, not timed; BYNAME_HISTORY, default 1,10,100, the same for the
# appends by file name, whose cost grows with the history).
#
# It starts its own MinIO on a free loopback port (scripts/lib/servers.bash), stopped by PID on
# exit, and runs two benchmarks of package iceberg, each timed commit being what a new process
# does: BenchmarkExportCommitOnMinIO, what an export's commit adds to its run (a Load of the
# table, then a Commit of the quickstart's 4 parts from the footers the export wrote, as an
# append for a delta run and an overwrite for a full run), and BenchmarkCommitOnMinIO, a Load
# and an Append of one Parquet file by name (its footer read from the store, every manifest
# read to refuse a duplicate). Each reports the medians of ms and of store requests per commit
# at each history size. The load average is printed before and after: the machine is shared.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

COMMITS=${COMMITS:-20}
HISTORY=${HISTORY:-1,100,1000}
BYNAME_HISTORY=${BYNAME_HISTORY:-1,10,100}

bash scripts/install-servers.sh minio >/dev/null
bench_workdir iceberg
start_bench_minio "$RUN_DIR"
export WHARF_TEST_MINIO_ENDPOINT WHARF_TEST_MINIO_ACCESS_KEY WHARF_TEST_MINIO_SECRET_KEY

log "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
log "commits on MinIO: $COMMITS per history size ($HISTORY snapshots)"
WHARF_ICEBERG_BENCH_HISTORY=$HISTORY go test ./iceberg -run '^$' -bench '^BenchmarkExportCommitOnMinIO$' \
  -benchtime "${COMMITS}x" -count 1 -timeout 60m | grep -E '^Benchmark'
log "appends by file name: $COMMITS per history size ($BYNAME_HISTORY snapshots)"
WHARF_ICEBERG_BENCH_HISTORY=$BYNAME_HISTORY go test ./iceberg -run '^$' -bench '^BenchmarkCommitOnMinIO$' \
  -benchtime "${COMMITS}x" -count 1 -timeout 60m | grep -E '^Benchmark'
log "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
