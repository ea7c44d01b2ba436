#!/usr/bin/env bash
# Benchmarks `wharf export` from PostgreSQL to Parquet on the file store and on MinIO, against
# the source's own ceiling measured in the same run: `COPY t TO STDOUT (FORMAT binary)` to
# /dev/null (a benchmark, not a test: it asserts nothing). See bench/README.md, "export".
#
#   bench/export.sh             10 million rows, --parallel 2, default chunk_rows
#
# Environment: ROWS (default 10000000), PARALLEL (default 2), CHUNK_ROWS (default: wharf's
# default), COPY_RUNS (COPYs timed; the median is the ceiling; default 3), BENCH_DIR (scratch
# space, default a fresh temp dir; needs ~2 GiB for 10M rows), WHARF_BIN (a wharf binary to
# use instead of building ./cmd/wharf).
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

log "creating t with $ROWS rows (8 columns)"
"${PSQL[@]}" <<SQL
CREATE TABLE t (id bigint PRIMARY KEY, qty int, price double precision, amount numeric(12,2),
  name text, ok boolean, at timestamptz, u uuid);
INSERT INTO t SELECT g, (g % 1000)::int, g / 7.0, (g % 100000) / 100.0, 'item ' || g, g % 3 = 0,
  timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second',
  md5(g::text)::uuid
FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE t;
SQL
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

printf 'rows %d, table %.0f MiB in PostgreSQL, --parallel %s, chunk_rows %s\n' "$ROWS" "$table_mb" \
  "$PARALLEL" "${CHUNK_ROWS:-default}"
printf '%-22s %8.2fs  %10.0f rows/s  peak RSS %6.1f MiB (psql)  median of %s: %s\n' "COPY binary > /dev/null" \
  "$copy_s" "$(echo "$ROWS / $copy_s" | bc -l)" "$(rss_mib "$WORK/time-copy.txt")" "$COPY_RUNS" "$(printf '%.2fs ' "${copies[@]}")"
for dest in file minio; do
  sync
  secs=$(timed "$WORK/time-$dest.txt" "$WORK/run-$dest.json" "$WHARF" export -c "$WORK/$dest.yaml" \
    --parallel "$PARALLEL" --format json)
  rows=$(jq -r .rows "$WORK/run-$dest.json")
  bytes=$(jq -r '[.parts[].size] | add' "$WORK/run-$dest.json")
  parts=$(jq -r '.parts | length' "$WORK/run-$dest.json")
  [ "$rows" = "$ROWS" ] || log "$dest: exported $rows rows, want $ROWS"
  "$WHARF" validate -c "$WORK/$dest.yaml" >/dev/null || log "$dest: the dataset is not certified"
  printf '%-22s %8.2fs  %10.0f rows/s  %7.1f MB/s Parquet (%d parts, %.1f MiB)  peak RSS %6.1f MiB  ratio to COPY %.2f\n' \
    "wharf export -> $dest" "$secs" "$(echo "$rows / $secs" | bc -l)" "$(echo "$bytes / 1000000 / $secs" | bc -l)" \
    "$parts" "$(echo "$bytes / 1048576" | bc -l)" "$(rss_mib "$WORK/time-$dest.txt")" "$(echo "$copy_s / $secs" | bc -l)"
done
