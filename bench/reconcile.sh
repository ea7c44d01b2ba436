#!/usr/bin/env bash
# Measures `wharf reconcile` of a PostgreSQL export against the export's own time, in one run
# (a benchmark, not a test: it asserts nothing). See bench/README.md, "reconcile".
#
#   bench/reconcile.sh                 10 million rows, 3 rounds
#   ROWS=1000000 bench/reconcile.sh    a quicker look
#
# Environment: ROWS (default 10000000), ROUNDS (default 3), PARALLEL (the export's --parallel,
# default 2), BENCH_DIR (scratch space, default a fresh temp dir; ~1 GiB for 10M rows),
# WHARF_BIN (a wharf binary to use instead of building ./cmd/wharf), COMPARE_BIN (another wharf
# binary, e.g. an older build: each round also times its reconcile of the same run, right
# after the first, so that two builds are compared within one run).
#
# The table is bench/export.sh's (8 columns). Each round exports it to the file store (timed)
# and reconciles that run (timed); a round's ratio is the reconcile's time over the export's
# (the goal: at most 0.3, since a reconcile reads footers, not data). The source queries a
# reconcile made are counted from pg_stat_database (transactions committed in the database
# during it: each query of a reconcile is one) against the run's chunks. It starts its own
# PostgreSQL on a free loopback port and stops it by PID on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash
ROWS=${ROWS:-10000000}
ROUNDS=${ROUNDS:-3}
PARALLEL=${PARALLEL:-2}
install_time
bench_workdir reconcile
build_wharf "$WORK"
bench_postgres
bench_table "$ROWS"
cat >"$WORK/wharf.yaml" <<EOF
state: $WORK/state.db
exports:
  - name: t
    source: $WHARF_TEST_POSTGRES_URL
    password: file://$RUN_DIR/pg-password
    table: t
    chunk_key: id
    destination: $WORK/out/{run_id}/
EOF
commits() { "${PSQL[@]}" -At -c "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }

printf 'rows %d, --parallel %s, %d round(s); load average %s\n' "$ROWS" "$PARALLEL" "$ROUNDS" "$(cut -d' ' -f1-3 /proc/loadavg)"
: >"$WORK/results.txt"
: >"$WORK/compare.txt"
for round in $(seq 1 "$ROUNDS"); do
  read -r esecs erss eload < <(timed "$WORK/time.txt" "'$WHARF' export -c '$WORK/wharf.yaml' --parallel $PARALLEL --format json >'$WORK/export.json'")
  run=$(jq -r .run_id "$WORK/export.json")
  chunks=$(jq -r '.parts | length' "$WORK/export.json")
  sleep 1 # pg_stat_database is updated by the backends at most every 500 ms
  before=$(commits)
  read -r rsecs rrss rload < <(timed "$WORK/time.txt" "'$WHARF' reconcile -c '$WORK/wharf.yaml' --run-id $run --format json >'$WORK/reconcile.json'")
  sleep 1
  queries=$(($(commits) - before - 1)) # the second count's own query
  matched=$(jq -r .matched "$WORK/reconcile.json")
  printf 'round %d: export %7.2fs (load %s, RSS %.0f MiB)  reconcile %6.2fs (load %s, RSS %.0f MiB)  ratio %.3f  %d chunks, %d match, %d source transactions\n' \
    "$round" "$esecs" "$eload" "$(echo "$erss / 1024" | bc -l)" "$rsecs" "$rload" "$(echo "$rrss / 1024" | bc -l)" \
    "$(echo "$rsecs / $esecs" | bc -l)" "$chunks" "$matched" "$queries"
  printf '%s %s %s\n' "$esecs" "$rsecs" "$(echo "$rsecs / $esecs" | bc -l)" >>"$WORK/results.txt"
  if [ -n "${COMPARE_BIN:-}" ]; then
    read -r csecs crss cload < <(timed "$WORK/time.txt" "'$COMPARE_BIN' reconcile -c '$WORK/wharf.yaml' --run-id $run --format json >'$WORK/compare.json'")
    printf '         COMPARE_BIN reconcile %6.2fs (load %s, RSS %.0f MiB)  ratio %.3f  %d match\n' \
      "$csecs" "$cload" "$(echo "$crss / 1024" | bc -l)" "$(echo "$csecs / $esecs" | bc -l)" "$(jq -r .matched "$WORK/compare.json")"
    printf '%s %s\n' "$csecs" "$(echo "$csecs / $esecs" | bc -l)" >>"$WORK/compare.txt"
  fi
  rm -rf "$WORK/out/$run"
done
printf 'median over %d round(s): export %.2fs, reconcile %.2fs, ratio %.3f; load average %s\n' "$ROUNDS" \
  "$(awk '{print $1}' "$WORK/results.txt" | median)" "$(awk '{print $2}' "$WORK/results.txt" | median)" \
  "$(awk '{print $3}' "$WORK/results.txt" | median)" "$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${COMPARE_BIN:-}" ]; then
  printf 'COMPARE_BIN: reconcile %.2fs, ratio %.3f (medians)\n' \
    "$(awk '{print $1}' "$WORK/compare.txt" | median)" "$(awk '{print $2}' "$WORK/compare.txt" | median)"
fi
