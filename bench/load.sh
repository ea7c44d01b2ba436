#!/usr/bin/env bash
# Benchmarks `wharf load` into PostgreSQL against the target's own ceiling in the same run:
# `COPY … FROM STDIN (FORMAT binary)` of the same rows from a local file that
# `COPY … TO STDOUT (FORMAT binary)` made (a benchmark, not a test: it asserts nothing). See
# bench/README.md, "load".
#
#   bench/load.sh                  10 million rows, 3 rounds
#   ROWS=1000000 bench/load.sh     a quicker look
#
# Environment: ROWS (default 10000000), ROUNDS (default 3), MODES (default "replace append"),
# POOLS (the --pool figures measured after the rounds, default "1 4 16"; "" for none), POOL_ROWS
# (rows of each of the 16 exports they load, default 200000),
# BENCH_DIR (scratch space, default a fresh temp dir; needs ~3 GiB for 10M rows), WHARF_BIN (a
# wharf binary to use instead of building ./cmd/wharf).
#
# The table is bench/export.sh's (8 columns: bigint, int, double, numeric(12,2), text, bool,
# timestamptz, uuid). It is exported once (untimed) to the file store; then each round times,
# in an order that turns round by round, the ceiling (psql's COPY FROM STDIN of the binary
# file into an empty table) and `wharf load` in each mode into an empty table (each copies
# into the table in one transaction; replace truncates it first). A round's ratio is the ceiling's time over
# the load's; the summary gives the medians, the largest peak RSS (GNU time -v) and the load
# average before each measurement. It starts its own PostgreSQL on a free loopback port and
# stops it by PID on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash
ROWS=${ROWS:-10000000}
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-replace append}
install_time
bench_workdir load
build_wharf "$WORK"
bench_postgres
bench_table "$ROWS"
"${PSQL[@]}" -c "CREATE TABLE ceiling (LIKE t)"
"${PSQL[@]}" -c "COPY t TO STDOUT (FORMAT binary)" >"$WORK/t.bin"

cat >"$WORK/wharf.yaml" <<EOF
state: $WORK/state.db
exports:
  - name: t
    source: $WHARF_TEST_POSTGRES_URL
    password: file://$RUN_DIR/pg-password
    table: t
    chunk_key: id
    destination: $WORK/out/
load:
  t:
    target: $WHARF_TEST_POSTGRES_URL
    password: file://$RUN_DIR/pg-password
    table: loaded
EOF
log "exporting t (untimed)"
"$WHARF" export -c "$WORK/wharf.yaml" --parallel 2 >/dev/null
parquet_mib=$(du -sm "$WORK/out" | cut -f1)

read -ra tools <<<"ceiling $MODES"
printf 'rows %d, binary COPY file %d MiB, Parquet %d MiB; %d round(s); load average %s\n' "$ROWS" \
  "$(($(stat -c %s "$WORK/t.bin") / 1048576))" "$parquet_mib" "$ROUNDS" "$(cut -d' ' -f1-3 /proc/loadavg)"
: >"$WORK/results.txt"
for round in $(seq 1 "$ROUNDS"); do
  n=${#tools[@]}
  for k in $(seq 0 $((n - 1))); do
    tool=${tools[$(((k + round) % n))]}
    # every measurement starts from an empty table, and a checkpoint, outside the time
    "${PSQL[@]}" -c "DROP TABLE IF EXISTS loaded; DROP TABLE IF EXISTS wharf_load_ledger; TRUNCATE ceiling; CHECKPOINT"
    case $tool in
    ceiling) script="${PSQL[*]} -c 'COPY ceiling FROM STDIN (FORMAT binary)' <'$WORK/t.bin'" ;;
    *) script="'$WHARF' load -c '$WORK/wharf.yaml' --mode $tool --format json >'$WORK/run-$tool.json'" ;;
    esac
    read -r secs rss load < <(timed "$WORK/time.txt" "$script")
    if [ "$tool" != ceiling ]; then
      got=$(jq -r .rows "$WORK/run-$tool.json")
      [ "$got" = "$ROWS" ] || log "load --mode $tool: loaded $got rows, want $ROWS"
    fi
    printf 'round %d: %-8s %8.2fs  %10.0f rows/s  peak RSS %7.1f MiB  load %s\n' "$round" "$tool" "$secs" \
      "$(echo "$ROWS / $secs" | bc -l)" "$(echo "$rss / 1024" | bc -l)" "$load"
    printf '%s %s %s %s %s\n' "$round" "$tool" "$secs" "$rss" "$load" >>"$WORK/results.txt"
  done
done
printf 'median over %d round(s); load average %s\n' "$ROUNDS" "$(cut -d' ' -f1-3 /proc/loadavg)"
sel() { awk -v t="$1" -v c="$2" '$2 == t {print $c}' "$WORK/results.txt"; }
for tool in "${tools[@]}"; do
  ratios=$(for round in $(seq 1 "$ROUNDS"); do
    c=$(awk -v r="$round" '$1 == r && $2 == "ceiling" {print $3}' "$WORK/results.txt")
    s=$(awk -v r="$round" -v t="$tool" '$1 == r && $2 == t {print $3}' "$WORK/results.txt")
    ratio "$c" "$s"
    echo
  done)
  printf '%-8s %8.2fs  ratio to the ceiling %s (rounds: %s)  peak RSS %6.1f MiB (largest)\n' "$tool" "$(sel "$tool" 3 | median)" \
    "$(echo "$ratios" | median | xargs printf '%.2f')" "$(echo "$ratios" | xargs)" "$(echo "$(sel "$tool" 4 | sort -g | tail -n 1) / 1024" | bc -l)"
done

# --pool: 16 exports of a smaller table, each loaded into its own table, at --pool 1, 4 and 16:
# the wharf process's open files (/proc/PID/fd) and its connections to the target
# (pg_stat_activity), sampled every 50 ms, at their largest, and its peak RSS.
POOLS=${POOLS-1 4 16}
POOL_ROWS=${POOL_ROWS:-200000}
[ -n "$POOLS" ] || exit 0
log "creating p with $POOL_ROWS rows and 16 exports of it"
"${PSQL[@]}" -c "CREATE TABLE p AS SELECT * FROM t WHERE id <= $POOL_ROWS"
{
  printf 'state: %s/pool-state.db\nexports:\n' "$WORK"
  for i in $(seq 0 15); do
    printf '  - name: p%d\n    source: %s\n    password: file://%s/pg-password\n    table: p\n    chunk_key: id\n    chunk_rows: 50000\n    destination: %s/out-pool/{export}/\n' \
      "$i" "$WHARF_TEST_POSTGRES_URL" "$RUN_DIR" "$WORK"
  done
  printf 'load:\n'
  for i in $(seq 0 15); do
    printf '  p%d:\n    target: %s\n    password: file://%s/pg-password\n    table: pool_%d\n' "$i" "$WHARF_TEST_POSTGRES_URL" "$RUN_DIR" "$i"
  done
} >"$WORK/pool.yaml"
"$WHARF" export -c "$WORK/pool.yaml" >/dev/null
printf '16 exports of %d rows (%d parts each); largest seen while loading, sampled every 50 ms:\n' "$POOL_ROWS" $(((POOL_ROWS + 49999) / 50000))
for n in $POOLS; do
  drops=$(for i in $(seq 0 15); do printf 'DROP TABLE IF EXISTS pool_%d; ' "$i"; done)
  "${PSQL[@]}" -c "$drops DROP TABLE IF EXISTS wharf_load_ledger; CHECKPOINT"
  read -r load _ </proc/loadavg
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$WORK/time-pool.txt" "$WHARF" load -c "$WORK/pool.yaml" --pool "$n" --format json >"$WORK/run-pool.json" &
  tpid=$!
  fds=0 conns=0 wpid=""
  while kill -0 "$tpid" 2>/dev/null; do
    [ -n "$wpid" ] || wpid=$(pgrep -P "$tpid" || true)
    if [ -n "$wpid" ] && [ -d "/proc/$wpid/fd" ]; then
      f=$(find "/proc/$wpid/fd" -mindepth 1 2>/dev/null | wc -l)
      [ "$f" -gt "$fds" ] && fds=$f
      c=$("${PSQL[@]}" -At -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wharf load'" 2>/dev/null || echo 0)
      [ "$c" -gt "$conns" ] && conns=$c
    fi
    sleep 0.05
  done
  wait "$tpid" || log "load --pool $n failed"
  end=$(date +%s.%N)
  loaded=$(grep -c '"loaded":true' "$WORK/run-pool.json" || true)
  printf '  --pool %-2s %6.2fs  open files %3d  connections %2d  peak RSS %6.1f MiB  loaded %d of 16  load %s\n' "$n" \
    "$(echo "$end - $start" | bc -l)" "$fds" "$conns" "$(echo "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time-pool.txt") / 1024" | bc -l)" \
    "$loaded" "$load"
done
