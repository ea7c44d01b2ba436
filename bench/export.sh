#!/usr/bin/env bash
# Benchmarks `wharf export` from PostgreSQL to Parquet on the file store and on MinIO, against
# the source's own ceiling measured in the same run: `COPY t TO STDOUT (FORMAT binary)` to
# /dev/null (a benchmark, not a test: it asserts nothing). See bench/README.md, "export".
#
#   bench/export.sh                                   10 million rows, --parallel 2, default chunk_rows
#   ROUNDS=3 WHARF_BINS="old=/tmp/wharf-old" bench/export.sh   this build against another, interleaved
#
# Environment: ROWS (default 10000000), PARALLEL (default 2), CHUNK_ROWS (default: wharf's
# default), ROUNDS (default 1), COPY_RUNS (COPYs timed before the rounds; default 3),
# BENCH_DIR (scratch space, default a fresh temp dir; needs ~2 GiB for 10M rows), WHARF_BIN (a
# wharf binary to use instead of building ./cmd/wharf), WHARF_BINS (more binaries to time in the
# same rounds, as NAME=PATH separated by spaces; the build under test is named "this").
#
# On a shared machine one COPY alone moves by half from run to run, so each round times one
# COPY and then each binary's export to each store, the order of the binaries turning round by
# round; a round's ratio is its COPY time over the export's, and the summary gives, per binary
# and store, the median of the rounds' ratios, the median time and the largest peak RSS, and
# the load average before and after.
#
# Then one export per consistency mode (snapshot, chunk) gives the longest transaction it held
# open on the source (pg_stat_activity, sampled every 100 ms).
#
# It starts its own PostgreSQL (Debian's package) and MinIO on free loopback ports under
# BENCH_DIR/servers with scripts/lib/servers.bash, and stops both by PID on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

ROWS=${ROWS:-10000000}
PARALLEL=${PARALLEL:-2}
CHUNK_ROWS=${CHUNK_ROWS:-}
COPY_RUNS=${COPY_RUNS:-3}
ROUNDS=${ROUNDS:-1}
WHARF_BINS=${WHARF_BINS:-}

install_time
bash scripts/install-servers.sh minio >/dev/null

WORK=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wharf-bench-export.XXXXXX")}
RUN_DIR=$WORK/servers
cleanup() {
  stop_one "$RUN_DIR/minio" "$SERVERS_STOP_GRACE_MINIO" 2>/dev/null || true
  stop_one "$RUN_DIR/postgres" "$SERVERS_STOP_GRACE_POSTGRES" 2>/dev/null || true
  if [ -f "$RUN_DIR/postgres/datadir" ]; then rm -rf "$(cat "$RUN_DIR/postgres/datadir")"; fi
  [ -n "${BENCH_DIR:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

build_wharf "$WORK"

mkdir -p "$RUN_DIR/minio" "$RUN_DIR/postgres"
chmod 700 "$RUN_DIR"
start_minio "$RUN_DIR/minio"
start_postgres "$RUN_DIR/postgres"
wait_ready "$RUN_DIR/minio" minio
wait_ready "$RUN_DIR/postgres" postgres
# shellcheck disable=SC1091
source "$RUN_DIR/minio/env"
# shellcheck disable=SC1091
source "$RUN_DIR/postgres/env"
# The password and keys go to wharf by reference (files only this user reads).
printf '%s\n' "$WHARF_TEST_POSTGRES_PASSWORD" >"$RUN_DIR/pg-password"
printf '%s\n' "$WHARF_TEST_MINIO_ACCESS_KEY" >"$RUN_DIR/minio-key"
printf '%s\n' "$WHARF_TEST_MINIO_SECRET_KEY" >"$RUN_DIR/minio-secret"
chmod 600 "$RUN_DIR/pg-password" "$RUN_DIR/minio-key" "$RUN_DIR/minio-secret"
PSQL=(env PGPASSWORD="$WHARF_TEST_POSTGRES_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 "$WHARF_TEST_POSTGRES_URL")

bench_table "$ROWS"
table_mb=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('t') / 1048576.0")

AWS_ACCESS_KEY_ID=$WHARF_TEST_MINIO_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$WHARF_TEST_MINIO_SECRET_KEY \
  AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true "$WHARF" --endpoint "$WHARF_TEST_MINIO_ENDPOINT" mb s3://bench >/dev/null

# timed REPORT STDOUT CMD...: runs CMD under GNU time -v (its report in REPORT, its output in
# STDOUT); prints the wall seconds.
timed() {
  local out=$1 stdout=$2 start end; shift 2
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$out" "$@" >"$stdout"
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
rss_mib() { echo "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$1") / 1024" | bc -l; }

# The ceiling: the source's own binary COPY, read to /dev/null (a warm-up first), timed
# COPY_RUNS times: the median is the ceiling (on a shared machine one COPY alone moves by
# half from run to run).
"${PSQL[@]}" -c "COPY t TO STDOUT (FORMAT binary)" >/dev/null
copies=()
for _ in $(seq 1 "$COPY_RUNS"); do
  copies+=("$(timed "$WORK/time-copy.txt" /dev/null "${PSQL[@]}" -c "COPY t TO STDOUT (FORMAT binary)")")
done
copy_s=$(printf '%s\n' "${copies[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')

chunk_line=""
[ -n "$CHUNK_ROWS" ] && chunk_line="    chunk_rows: $CHUNK_ROWS"
write_config() { # write_config NAME DESTINATION [STORE-LINES]
  cat >"$WORK/$1.yaml" <<EOF
state: $WORK/state.db
exports:
  - name: $1
    source: $WHARF_TEST_POSTGRES_URL
    password: file://$RUN_DIR/pg-password
    table: t
    chunk_key: id
$chunk_line
    destination: $2
${3:-}
EOF
}
write_config file "$WORK/out/{export}/{run_id}/"
write_config minio "s3://bench/{export}/{run_id}/" "    store:
      endpoint: $WHARF_TEST_MINIO_ENDPOINT
      region: us-east-1
      access_key_id: file://$RUN_DIR/minio-key
      secret_access_key: file://$RUN_DIR/minio-secret"

names=(this)
bins=("$WHARF")
for nb in $WHARF_BINS; do
  names+=("${nb%%=*}")
  bins+=("${nb#*=}")
done

printf 'rows %d, table %.0f MiB in PostgreSQL, --parallel %s, chunk_rows %s, %s round(s); load average %s\n' "$ROWS" "$table_mb" \
  "$PARALLEL" "${CHUNK_ROWS:-default}" "$ROUNDS" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %8.2fs  %10.0f rows/s  peak RSS %6.1f MiB (psql)  median of %s: %s\n' "COPY binary > /dev/null" \
  "$copy_s" "$(echo "$ROWS / $copy_s" | bc -l)" "$(rss_mib "$WORK/time-copy.txt")" "$COPY_RUNS" "$(printf '%.2fs ' "${copies[@]}")"
: >"$WORK/results.txt"
for round in $(seq 1 "$ROUNDS"); do
  round_copy=$(timed "$WORK/time-copy.txt" /dev/null "${PSQL[@]}" -c "COPY t TO STDOUT (FORMAT binary)")
  printf 'round %d: %-19s %8.2fs  load average %s\n' "$round" "COPY" "$round_copy" "$(cut -d' ' -f1-3 /proc/loadavg)"
  order=("${!bins[@]}")
  [ $((round % 2)) -eq 0 ] && mapfile -t order < <(printf '%s\n' "${!bins[@]}" | sort -rn)
  for dest in file minio; do
    for i in "${order[@]}"; do
      sync
      out="$WORK/run-${names[$i]}-$dest.json"
      secs=$(timed "$WORK/time-$dest.txt" "$out" "${bins[$i]}" export -c "$WORK/$dest.yaml" \
        --parallel "$PARALLEL" --format json)
      rows=$(jq -r .rows "$out")
      bytes=$(jq -r '[.parts[].size] | add' "$out")
      parts=$(jq -r '.parts | length' "$out")
      [ "$rows" = "$ROWS" ] || log "${names[$i]} -> $dest: exported $rows rows, want $ROWS"
      "$WHARF" validate -c "$WORK/$dest.yaml" >/dev/null || log "${names[$i]} -> $dest: the dataset is not certified"
      rss=$(rss_mib "$WORK/time-$dest.txt")
      ratio=$(echo "$round_copy / $secs" | bc -l)
      printf 'round %d: %-19s %8.2fs  %10.0f rows/s  %7.1f MB/s Parquet (%d parts, %.1f MiB)  peak RSS %6.1f MiB  ratio to COPY %.2f\n' \
        "$round" "${names[$i]} -> $dest" "$secs" "$(echo "$rows / $secs" | bc -l)" "$(echo "$bytes / 1000000 / $secs" | bc -l)" \
        "$parts" "$(echo "$bytes / 1048576" | bc -l)" "$rss" "$ratio"
      printf '%s %s %s %s %s\n' "${names[$i]}" "$dest" "$secs" "$rss" "$ratio" >>"$WORK/results.txt"
      if [ "$dest" = file ]; then # room for the next round: the dataset is validated
        rm -rf "$WORK/out/$dest/$(jq -r .run_id "$out")"
      fi
    done
  done
done
printf 'median over %d round(s); load average %s\n' "$ROUNDS" "$(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!bins[@]}"; do
  for dest in file minio; do
    sel() { awk -v n="${names[$i]}" -v d="$dest" -v c="$1" '$1 == n && $2 == d {print $c}' "$WORK/results.txt"; }
    printf '%-28s %8.2fs  ratio to COPY %.2f (rounds: %s)  peak RSS %6.1f MiB (largest)\n' "${names[$i]} -> $dest" \
      "$(sel 3 | median)" "$(sel 5 | median)" "$(sel 5 | xargs printf '%.2f ' | sed 's/ $//')" "$(sel 4 | sort -g | tail -n 1)"
  done
done

# The longest transaction the export holds open on the source, per consistency mode: one
# export to the file store each, while pg_stat_activity is sampled every 100 ms for the oldest
# open transaction of any other session (the export's). snapshot holds one for the whole run;
# chunk, one per chunk.
printf 'longest open source transaction, sampled every 100 ms (load average %s):\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
for mode in snapshot chunk; do
  write_config "tx-$mode" "$WORK/out/tx-$mode/{run_id}/" "    consistency: $mode"
  "$WHARF" export -c "$WORK/tx-$mode.yaml" --parallel "$PARALLEL" --format json >"$WORK/tx-$mode.json" &
  epid=$!
  start=$(date +%s.%N)
  longest=0
  while kill -0 "$epid" 2>/dev/null; do
    age=$("${PSQL[@]}" -At -c "SELECT coalesce(max(extract(epoch FROM now() - xact_start)), 0) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL" 2>/dev/null || echo 0)
    longest=$(echo "if ($age > $longest) $age else $longest" | bc -l)
    sleep 0.1
  done
  wait "$epid" || log "export with consistency $mode failed"
  end=$(date +%s.%N)
  printf '  %-9s export %7.2fs  longest open transaction %7.2fs\n' "$mode" "$(echo "$end - $start" | bc -l)" "$longest"
  rm -rf "$WORK/out/tx-$mode"
done
