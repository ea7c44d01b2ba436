#!/usr/bin/env bash
# Benchmarks leases and state: bucket on MinIO over loopback (a benchmark, not a test: it
# asserts nothing). See bench/README.md, "lease", for the latest figures.
#
#   bench/lease.sh          everything: lease operations, export overhead, full-size history
#
# Environment: OPS (lease operations timed, default 200), RUNS (export runs of each kind,
# default 5; 1M rows: RUNS_1M, default 3), HISTORY_ROUNDS (rounds of the history check,
# default 200), PARTS (which parts to run, default "ops export history nats"), BENCH_DIR (scratch
# space, default a fresh temp dir).
#
# It starts its own MinIO (and, for the nats part, a 3-node NATS cluster) on free loopback
# ports (scripts/lib/servers.bash) and stops them by PID on exit. The measurements are Go benchmarks in package lease and export, run against it:
#
#   ops      BenchmarkLeaseOps: requests per operation (mean and most) and p50/p99 latency
#            of acquire, reading the log's head, commit (a 1 KiB entry), renew and release;
#            the probe once, apart
#   export   BenchmarkLeasedExportQuickstart (1,000 rows in 4 parts) and
#            BenchmarkLeasedExport1M (1,000,000 rows in 2 parts): each iteration runs the same
#            export with a local state file, then with state: bucket as a fresh process
#            (probe, lease, log, release), then with state: bucket where an earlier process
#            remembered the store's cas verdict (no probe), side by side; medians and the
#            differences, in ms and store requests (the probe's apart)
#   history  TestHistoryLinearizableOnMinIO at 6 clients x HISTORY_ROUNDS rounds, timed
#   nats     the same engine over NATS JetStream key-value, on a 3-node cluster this script
#            starts on loopback (stopped by PID too): BenchmarkLeaseOpsOnNATS, and
#            TestHistoryLinearizableOnNATS at 6 clients x HISTORY_ROUNDS rounds
#
# The load average is printed before and after: the machine is shared.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

OPS=${OPS:-200}
RUNS=${RUNS:-5}
RUNS_1M=${RUNS_1M:-3}
HISTORY_ROUNDS=${HISTORY_ROUNDS:-200}
PARTS=${PARTS:-ops export history nats}

bash scripts/install-servers.sh minio nats >/dev/null

bench_workdir lease

start_bench_minio "$RUN_DIR"
export WHARF_TEST_MINIO_ENDPOINT WHARF_TEST_MINIO_ACCESS_KEY WHARF_TEST_MINIO_SECRET_KEY

loadavg() { log "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
loadavg
for part in $PARTS; do
  case $part in
  ops)
    log "lease operations on MinIO, $OPS of each"
    go test ./lease -run '^$' -bench '^BenchmarkLeaseOps$' -benchtime "${OPS}x" -count 1 | grep -E '^Benchmark'
    ;;
  export)
    log "export with a local state file vs state: bucket, side by side"
    go test ./export -run '^$' -bench '^BenchmarkLeasedExportQuickstart$' -benchtime "${RUNS}x" -count 1 | grep -E '^Benchmark'
    go test ./export -run '^$' -bench '^BenchmarkLeasedExport1M$' -benchtime "${RUNS_1M}x" -count 1 -timeout 30m | grep -E '^Benchmark'
    ;;
  history)
    log "history check on MinIO, 6 clients x $HISTORY_ROUNDS rounds"
    start=$(date +%s)
    WHARF_LEASE_HISTORY_ROUNDS=$HISTORY_ROUNDS go test ./lease -run '^TestHistoryLinearizableOnMinIO$' -count 1 -v -timeout 30m |
      grep -E 'clients|^(--- |ok|FAIL)'
    log "history check took $(($(date +%s) - start)) s (with the build)"
    ;;
  nats)
    mkdir -p "$RUN_DIR/nats"
    start_nats "$RUN_DIR/nats"
    for node in "${NATS_NODES[@]}"; do wait_ready "$RUN_DIR/nats/$node" "nats $node"; done
    # shellcheck disable=SC1091
    source "$RUN_DIR/nats/env"
    log "lease operations on NATS JetStream key-value (3 nodes), $OPS of each"
    go test ./lease -run '^$' -bench '^BenchmarkLeaseOpsOnNATS$' -benchtime "${OPS}x" -count 1 | grep -E '^Benchmark'
    log "history check on NATS, 6 clients x $HISTORY_ROUNDS rounds"
    start=$(date +%s)
    WHARF_LEASE_HISTORY_ROUNDS=$HISTORY_ROUNDS go test ./lease -run '^TestHistoryLinearizableOnNATS$' -count 1 -v -timeout 30m |
      grep -E 'clients|^(--- |ok|FAIL)'
    log "history check took $(($(date +%s) - start)) s (with the build)"
    ;;
  *) log "unknown part $part (want ops, export, history, nats)"; exit 2 ;;
  esac
  loadavg
done
