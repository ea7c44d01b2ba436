#!/usr/bin/env bash
# Benchmarks `wharf backfill` on MinIO over loopback against the pipeline a user scripts today:
# `s5cmd cp` of the prefix, then `zstd -dc … | wc -l` (or gzip). A benchmark, not a test: it
# asserts nothing. See bench/README.md for the latest figures.
#
#   bench/backfill.sh
#
# Environment: LARGE (objects of the large set, default 64), LARGE_MIB (uncompressed MiB per
# large object, default 16), SMALL (objects of the small set, default 10000), RUNS (default
# 1), BENCH_DIR (scratch space, default a fresh temp dir; needs ~2.5 GiB with the defaults),
# WHARF_BIN (a wharf binary to time instead of building ./cmd/wharf), INFLIGHT (wharf's
# --max-in-flight, default 4).
#
# Sets: large = LARGE zstd NDJSON objects of LARGE_MIB MiB each (~1 GiB); small = SMALL gzip
# NDJSON objects of ~8 KiB. For each: s5cmd cp to local disk then decompress | wc -l, against
# `wharf backfill URL --to - --coordinator solo | wc -l`; records/s, MB/s (uncompressed) and
# objects/s; peak RSS of wharf from GNU time -v. Then the decompress-and-frame ceiling: one
# `zstd -dc | wc -l` of the large set's bytes on local disk against wharf backfill of the same
# directory with --max-in-flight 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

LARGE=${LARGE:-64}
LARGE_MIB=${LARGE_MIB:-16}
SMALL=${SMALL:-10000}
RUNS=${RUNS:-1}
INFLIGHT=${INFLIGHT:-4}

install_s5cmd; install_time
command -v zstd >/dev/null || apt-get install -y zstd >/dev/null
bash scripts/install-servers.sh minio

WORK=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wharf-bench.XXXXXX")}
RUN_DIR=$WORK/servers
cleanup() { servers_stop "$RUN_DIR" 2>/dev/null || true; [ -n "${BENCH_DIR:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

build_wharf "$WORK"
start_bench_minio "$RUN_DIR"
S5="$S5CMD --endpoint-url $EP"
BUCKET=s3://bench-backfill

# make_object BYTES SEED: NDJSON of about BYTES bytes on stdout, records of 60 to 400 bytes.
make_object() {
  python3 - "$1" "$2" <<'PY'
import random, sys
n, seed = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
out, size, i = [], 0, 0
while size < n:
    msg = " ".join(r.choice(words) for _ in range(r.randint(5, 60)))
    line = '{"seq":%d,"level":"%s","host":"h%03d","msg":"%s"}' % (i, r.choice(["info", "warn", "error"]), r.randint(0, 999), msg)
    out.append(line)
    size += len(line) + 1
    i += 1
sys.stdout.write("\n".join(out) + "\n")
PY
}

prepare() {
  log "making the large set: $LARGE x $LARGE_MIB MiB zstd NDJSON"
  mkdir -p "$WORK/large" "$WORK/small"
  for i in $(seq 0 3); do make_object $((LARGE_MIB << 20)) "$i" | zstd -q -3 -o "$WORK/seed-$i.zst"; done
  for i in $(seq 1 "$LARGE"); do cp "$WORK/seed-$((i % 4)).zst" "$WORK/large/obj-$(printf %05d "$i").ndjson.zst"; done
  log "making the small set: $SMALL gzip NDJSON objects"
  for i in $(seq 0 15); do make_object 8192 "$i" | gzip -c >"$WORK/seed-$i.gz"; done
  for i in $(seq 1 "$SMALL"); do cp "$WORK/seed-$((i % 16)).gz" "$WORK/small/obj-$(printf %06d "$i").ndjson.gz"; done
  $S5 mb "$BUCKET" >/dev/null
  $S5 cp "$WORK/large/*" "$BUCKET/large/" >/dev/null
  $S5 cp "$WORK/small/*" "$BUCKET/small/" >/dev/null
  UNC_LARGE=$(cat "$WORK"/large/* | zstd -dc | wc -c)
  UNC_SMALL=$(cat "$WORK"/small/* | gzip -dc | wc -c)
}

now() { date +%s.%N; }

# baseline SET DECOMPRESS: s5cmd cp of the prefix to a fresh directory, then decompress | wc -l.
baseline() {
  local set=$1 dec=$2 dir="$WORK/dl-$1" t0 t1 n
  rm -rf "$dir"; mkdir -p "$dir"
  t0=$(now)
  $S5 cp "$BUCKET/$set/*" "$dir/" >/dev/null
  n=$(find "$dir" -type f -print0 | sort -z | xargs -0 cat | $dec | wc -l)
  t1=$(now)
  echo "$n $(echo "$t1 - $t0" | bc)"
}

# wharf_run URL [FLAGS…]: wharf backfill URL --to - | wc -l, with peak RSS.
wharf_run() {
  local url=$1 t0 t1 n rss ep=(); shift
  case "$url" in s3://*) ep=(--endpoint "$EP") ;; esac
  t0=$(now)
  n=$(/usr/bin/time -v -o "$WORK/time.txt" "$WHARF" "${ep[@]}" backfill "$url" --to - --coordinator solo \
    --max-in-flight "$INFLIGHT" --log-level error "$@" | wc -l)
  t1=$(now)
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
  echo "$n $(echo "$t1 - $t0" | bc) $rss"
}

report() { # NAME RECORDS SECONDS UNCOMPRESSED OBJECTS [RSS_KB]
  awk -v name="$1" -v n="$2" -v s="$3" -v b="$4" -v o="$5" -v rss="${6:-}" 'BEGIN {
    printf "%-28s %9d records %7.2f s %10.0f rec/s %8.1f MB/s %8.0f obj/s", name, n, s, n/s, b/s/1e6, o/s
    if (rss != "") printf "  RSS %.0f MiB", rss/1024
    printf "\n" }'
}

prepare
for run in $(seq 1 "$RUNS"); do
  log "run $run"
  read -r n s <<<"$(baseline large "zstd -dc")"; report "large s5cmd+zstd|wc" "$n" "$s" "$UNC_LARGE" "$LARGE"
  read -r n s rss <<<"$(wharf_run "$BUCKET/large/")"; report "large wharf backfill" "$n" "$s" "$UNC_LARGE" "$LARGE" "$rss"
  read -r n s <<<"$(baseline small "gzip -dc")"; report "small s5cmd+gzip|wc" "$n" "$s" "$UNC_SMALL" "$SMALL"
  read -r n s rss <<<"$(wharf_run "$BUCKET/small/")"; report "small wharf backfill" "$n" "$s" "$UNC_SMALL" "$SMALL" "$rss"
  t0=$(now); n=$(cat "$WORK"/large/* | zstd -dc | wc -l); t1=$(now)
  report "local zstd -dc|wc (1 core)" "$n" "$(echo "$t1 - $t0" | bc)" "$UNC_LARGE" "$LARGE"
  read -r n s rss <<<"$(INFLIGHT=1 wharf_run "$WORK/large/" --read-concurrency 1)"
  report "local wharf, 1 split" "$n" "$s" "$UNC_LARGE" "$LARGE" "$rss"
done
log "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
