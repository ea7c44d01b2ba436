#!/usr/bin/env bash
# Benchmarks `wharf backfill` on MinIO over loopback against the pipeline a user scripts today:
# `s5cmd cp` of the prefix, then `zstd -dc … | wc -l` (or gzip). A benchmark, not a test: it
# asserts nothing. See bench/README.md for the latest figures.
#
#   bench/backfill.sh
#
# Environment: LARGE (objects of the large set, default 64), LARGE_MIB (uncompressed MiB per
# large object, default 16), SMALL (objects of the small set, default 10000), RUNS (default
# 5), CASES (default "large small local"), BENCH_DIR (scratch space, default a fresh temp dir
# removed at the end; a BENCH_DIR that holds the sets of an earlier run with the same sizes is
# reused as it is, needs ~3 GiB with the defaults), WHARF_BIN (a wharf binary to time instead
# of building ./cmd/wharf), INFLIGHT (wharf's --max-in-flight, default 4), WHARF_FLAGS (more
# flags for every wharf run).
#
# Cases, each timed RUNS times, the peer and wharf back to back, in turn first:
#   large: LARGE zstd NDJSON objects of LARGE_MIB MiB each (~1 GiB): `s5cmd cp` to local disk,
#          then `zstd -dc | wc -l`, against `wharf backfill URL --to - --coordinator solo | wc -l`;
#   small: SMALL gzip NDJSON objects of ~8 KiB, the same with gzip;
#   local: the decompress-and-frame ceiling: `cat | zstd -dc | wc -l` of the large set's files
#          on local disk against wharf reading that directory with one split in flight and one
#          ranged read at a time (one object decoded at a time, as zstd does).
# Each run of a pipeline is timed whole by GNU time (wall clock, and the CPU time of all its
# processes); wharf's peak RSS is its own. The report: medians per case, MB/s of records,
# objects/s, records/s, MB of records per CPU-second, the ratios wharf/peer (above 1.0 wharf
# is faster), wharf's peak RSS against its bound (max_in_flight × read_window + 64 MiB), and
# the load average before, during and after.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

LARGE=${LARGE:-64}
LARGE_MIB=${LARGE_MIB:-16}
SMALL=${SMALL:-10000}
RUNS=${RUNS:-5}
CASES=${CASES:-large small local}
INFLIGHT=${INFLIGHT:-4}
read -r -a WFLAGS <<<"${WHARF_FLAGS:-}"

install_s5cmd; install_time
command -v zstd >/dev/null || apt-get install -y zstd >/dev/null
bash scripts/install-servers.sh minio

WORK=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wharf-bench.XXXXXX")}
mkdir -p "$WORK"
RUN_DIR=$WORK/servers
cleanup() {
  servers_stop "$RUN_DIR" 2>/dev/null || true
  rm -rf "$WORK"/dl-* "$WORK/time.txt" "$WORK/rss.txt"
  [ -n "${BENCH_DIR:-}" ] || rm -rf "$WORK"
}
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

# make_sets writes the sets to $WORK (once: a BENCH_DIR of the same sizes is reused).
make_sets() {
  local stamp="$LARGE $LARGE_MIB $SMALL"
  if [ "$(cat "$WORK/sets" 2>/dev/null)" = "$stamp" ]; then
    log "reusing the sets in $WORK"
    return 0
  fi
  rm -rf "$WORK/large" "$WORK/small" "$WORK"/seed-* "$WORK/sets"
  log "making the large set: $LARGE x $LARGE_MIB MiB zstd NDJSON"
  mkdir -p "$WORK/large" "$WORK/small"
  for i in $(seq 0 3); do make_object $((LARGE_MIB << 20)) "$i" | zstd -q -3 -o "$WORK/seed-$i.zst"; done
  for i in $(seq 1 "$LARGE"); do cp "$WORK/seed-$((i % 4)).zst" "$WORK/large/obj-$(printf %05d "$i").ndjson.zst"; done
  log "making the small set: $SMALL gzip NDJSON objects"
  for i in $(seq 0 15); do make_object 8192 "$i" | gzip -c >"$WORK/seed-$i.gz"; done
  for i in $(seq 1 "$SMALL"); do cp "$WORK/seed-$((i % 16)).gz" "$WORK/small/obj-$(printf %06d "$i").ndjson.gz"; done
  echo "$stamp" >"$WORK/sets"
}

upload() {
  log "uploading the sets to MinIO"
  $S5 mb "$BUCKET" >/dev/null
  $S5 cp "$WORK/large/*" "$BUCKET/large/" >/dev/null
  $S5 cp "$WORK/small/*" "$BUCKET/small/" >/dev/null
}

load() { cut -d' ' -f1 /proc/loadavg; }

# timed NAME COMMAND [RSS_FILE]: runs COMMAND (a shell pipeline that prints the record count)
# under GNU time and appends "NAME records wall cpu rss_kib load" to $WORK/results. The RSS is
# the one RSS_FILE holds (written by a GNU time inside the pipeline), else the pipeline's.
timed() {
  local name=$1 n wall user sys rss
  n=$(/usr/bin/time -f '%e %U %S %M' -o "$WORK/time.txt" sh -c "$2")
  read -r wall user sys rss <"$WORK/time.txt"
  [ -z "${3:-}" ] || rss=$(cat "$3")
  echo "$name $n $wall $(echo "$user + $sys" | bc) $rss $(load)" >>"$WORK/results"
  printf 'bench: %-12s %9d records %7.2f s wall %6.2f s cpu\n' "$name" "$n" "$wall" "$(echo "$user + $sys" | bc)" >&2
}

peer() { # SET DECOMPRESS RUN: s5cmd cp of the prefix to a fresh directory, then decompress | wc -l
  local dir="$WORK/dl-$1-$3" # downloads stay until the end: deleting thousands of files on
  mkdir -p "$dir"            # ext4 makes the next creations scan the freed inodes
  timed "$1/peer" "$S5 cp '$BUCKET/$1/*' '$dir/' >/dev/null && find '$dir' -type f -print0 | sort -z | xargs -0 cat | $2 | wc -l"
}

wharf() { # CASE URL [FLAGS…]: wharf backfill URL --to - | wc -l; the RSS is wharf's own
  local name=$1 url=$2 ep=""
  shift 2
  case "$url" in s3://*) ep="--endpoint $EP" ;; esac
  timed "$name/wharf" "/usr/bin/time -f %M -o '$WORK/rss.txt' '$WHARF' $ep -q backfill '$url' --to - --coordinator solo \
    --log-level error $* ${WFLAGS[*]:-} | wc -l" "$WORK/rss.txt"
}

run_case() { # CASE RUN
  case $1 in
  large) peer large "zstd -dc" "$2" ;;
  small) peer small "gzip -dc" "$2" ;;
  local) timed local/peer "cat '$WORK'/large/* | zstd -dc | wc -l" ;;
  esac
}

run_wharf() { # CASE
  case $1 in
  large) wharf large "$BUCKET/large/" --max-in-flight "$INFLIGHT" ;;
  small) wharf small "$BUCKET/small/" --max-in-flight "$INFLIGHT" ;;
  local) wharf local "$WORK/large/" --max-in-flight 1 --read-concurrency 1 ;;
  esac
}

make_sets
upload
UNC_LARGE=$(cat "$WORK"/large/* | zstd -dc | wc -c)
UNC_SMALL=$(cat "$WORK"/small/* | gzip -dc | wc -c)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$WORK/results"
for run in $(seq 1 "$RUNS"); do
  log "run $run of $RUNS (load average $(load))"
  for c in $CASES; do
    if [ $((run % 2)) -eq 1 ]; then run_case "$c" "$run"; run_wharf "$c"; else run_wharf "$c"; run_case "$c" "$run"; fi
  done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# report: medians of each case and tool, then the ratios.
awk -v unc_large="$UNC_LARGE" -v unc_small="$UNC_SMALL" -v large="$LARGE" -v small="$SMALL" \
  -v inflight="$INFLIGHT" -v window_mib=16 -v runs="$RUNS" \
  -v load_start="$LOAD_START" -v load_end="$LOAD_END" '
function median(key,   n, i, j, t, a) {
  n = split(vals[key], a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(key, v) { vals[key] = vals[key] (vals[key] == "" ? "" : " ") v }
{ split($1, k, "/"); c = k[1]; t = k[2]; cases[c] = 1
  add(c "/" t "/wall", $3); add(c "/" t "/cpu", $4); add("load", $6)
  if (t == "wharf") { add(c "/rss", $5); if ($5 > maxrss[c]) maxrss[c] = $5 }
  recs[c "/" t] = $2 }
END {
  printf "\nmedians of %d runs; load average %s at the start, %s to %s during the runs, %s at the end\n", runs, load_start, min_load(), max_load(), load_end
  printf "| case | peer pipeline | wharf backfill | ratio (wall) | MB per CPU-s, peer / wharf | ratio (CPU) | wharf peak RSS, median / max (bound) |\n|---|---|---|---|---|---|---|\n"
  split("large small local", order, " ")
  for (i = 1; i <= 3; i++) {
    c = order[i]; if (!(c in cases)) continue
    b = (c == "small") ? unc_small : unc_large; o = (c == "small") ? small : large
    pw = median(c "/peer/wall"); ww = median(c "/wharf/wall"); pc = median(c "/peer/cpu"); wc = median(c "/wharf/cpu")
    bound = ((c == "local") ? 1 : inflight) * window_mib + 64
    if (recs[c "/peer"] != recs[c "/wharf"]) printf "WARNING: %s: the peer counted %d records, wharf %d\n", c, recs[c "/peer"], recs[c "/wharf"]
    printf "| %s | %.2f s: %.1f MB/s, %.0f obj/s, %.2f M rec/s | %.2f s: %.1f MB/s, %.0f obj/s, %.2f M rec/s | **%.2f×** | %.0f / %.0f | %.2f× | %.0f / %.0f MiB (%d) |\n", \
      c, pw, b / pw / 1e6, o / pw, recs[c "/peer"] / pw / 1e6, ww, b / ww / 1e6, o / ww, recs[c "/wharf"] / ww / 1e6, pw / ww, \
      b / pc / 1e6, b / wc / 1e6, pc / wc, median(c "/rss") / 1024, maxrss[c] / 1024, bound
  }
}
function min_load(   n, i, a, m) { n = split(vals["load"], a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
function max_load(   n, i, a, m) { n = split(vals["load"], a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
' "$WORK/results"
