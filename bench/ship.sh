#!/usr/bin/env bash
# Benchmarks `wharf ship` against `s5cmd cp` of the same directory, on MinIO over loopback (a
# benchmark, not a test: it asserts nothing). See bench/README.md for the latest figures.
#
#   bench/ship.sh               10,000 files x 64 KiB and 8 files x 256 MiB (needs ~5 GiB of scratch)
#   SCALE=small bench/ship.sh   a quick run: 500 x 64 KiB and 2 x 32 MiB
#
# Environment: SETS (default "small large"), RUNS (default 1; the median is printed),
# SMALL_FILES / SMALL_SIZE (default 10000 / 64K), LARGE_FILES / LARGE_SIZE (default 8 / 256M),
# CONCURRENCY (wharf's --upload-concurrency, default 32: its fastest here, see bench/README.md),
# PART_SIZE (default 8MiB), S5CMD_FLAGS (flags before s5cmd's cp, e.g. "--numworkers 64";
# default none), WHARF_BIN (a wharf binary to time instead of building one, e.g. an older build
# to compare), BENCH_DIR (scratch space, default a fresh temp dir).
#
# Each run spools the set afresh (untimed: four `wharf spool add` processes at once move hard
# links of the files in), then times `wharf ship --drain` from start to exit: the startup
# probe, every upload, its catalog record and local retention (delete_after_upload), all
# fsynced. s5cmd (its defaults: 256 workers, 5 parts of 50 MiB per file) copies the same
# directory to another prefix. Peak RSS comes from GNU time -v; wharf's is compared with its
# bound, CONCURRENCY x PART_SIZE + 64 MiB.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

RUNS=${RUNS:-1}
SETS=${SETS:-small large}
CONCURRENCY=${CONCURRENCY:-32}
PART_SIZE=${PART_SIZE:-8MiB}
if [ "${SCALE:-full}" = small ]; then
  SMALL_FILES=${SMALL_FILES:-500} LARGE_FILES=${LARGE_FILES:-2} LARGE_SIZE=${LARGE_SIZE:-32M}
fi
SMALL_FILES=${SMALL_FILES:-10000} SMALL_SIZE=${SMALL_SIZE:-64K}
LARGE_FILES=${LARGE_FILES:-8} LARGE_SIZE=${LARGE_SIZE:-256M}

install_s5cmd; install_time
bash scripts/install-servers.sh minio

WORK=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wharf-bench-ship.XXXXXX")}
RUN_DIR=$WORK/servers
cleanup() { servers_stop "$RUN_DIR" 2>/dev/null || true; [ -n "${BENCH_DIR:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

build_wharf "$WORK"
start_bench_minio "$RUN_DIR"
"$WHARF" --endpoint "$EP" mb s3://bench >/dev/null

# make_set NAME FILES SIZE: FILES files of SIZE random bytes in $WORK/data/NAME.
make_set() {
  local name=$1 files=$2 size=$3 dir=$WORK/data/$1
  [ -f "$dir/.done" ] && return 0
  log "making $name: $files x $size"
  rm -rf "$dir"; mkdir -p "$dir"
  if [ "$files" -ge 100 ]; then
    local bytes
    bytes=$(numfmt --from=iec "$size")
    head -c $((files * bytes)) /dev/urandom | split -a 6 -d -b "$bytes" - "$dir/f"
  else
    for i in $(seq -w 1 "$files"); do head -c "$size" /dev/urandom >"$dir/f$i"; done
  fi
  for f in "$dir"/f*; do mv "$f" "$f.ndjson"; done
  touch "$dir/.done"
}

# spool_set NAME RUN: a fresh spool holding the set (hard links moved in), untimed.
spool_set() {
  local name=$1 run=$2 sp=$WORK/spool-$1-$2 links=$WORK/links-$1-$2
  rm -rf "$sp" "$links"
  "$WHARF" spool init "$sp" >/dev/null
  mkdir -p "$links"
  ln "$WORK/data/$name"/*.ndjson "$links/"
  find "$links" -name '*.ndjson' -print0 | sort -z |
    xargs -0 -n 500 -P 4 "$WHARF" -q spool add --spool "$sp" --dataset "$name" --time 2026-11-29T12:00:00Z
  rmdir "$links"
  echo "$sp"
}

# timed OUT CMD…: runs CMD under GNU time; prints "seconds rss_kib".
timed() {
  local out=$1 start end
  shift
  sync
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$out" "$@" >/dev/null
  end=$(date +%s.%N)
  printf '%s %s\n' "$(echo "$end - $start" | bc -l)" "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out")"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

read -ra s5flags <<<"${S5CMD_FLAGS:-}"
part_bytes=$(numfmt --from=iec "$(echo "$PART_SIZE" | sed 's/i\?B$//')")
bound_mib=$(((CONCURRENCY * part_bytes >> 20) + 64))
for set in $SETS; do
  if [ "$set" = small ]; then files=$SMALL_FILES size=$SMALL_SIZE; else files=$LARGE_FILES size=$LARGE_SIZE; fi
  make_set "$set" "$files" "$size"
  bytes=$((files * $(numfmt --from=iec "$size")))
  wt=(); wr=(); st=(); sr=()
  for run in $(seq 1 "$RUNS"); do
    sp=$(spool_set "$set" "$run")
    read -r s r < <(timed "$WORK/time.txt" "$WHARF" --endpoint "$EP" --log-level warn ship --spool "$sp" \
      --to "s3://bench/wharf-$set-$run" --pipeline bench --node n1 --drain --listen off \
      --upload-concurrency "$CONCURRENCY" --part-size "$PART_SIZE")
    got=$("$WHARF" --endpoint "$EP" ls -r "s3://bench/wharf-$set-$run/" | wc -l)
    [ "$got" -eq "$files" ] || log "WARNING: wharf shipped $got objects, want $files"
    wt+=("$s"); wr+=("$r")
    log "$set wharf run $run: ${s}s, RSS ${r} KiB"
    read -r s r < <(timed "$WORK/time.txt" "$S5CMD" --endpoint-url "$EP" "${s5flags[@]}" cp "$WORK/data/$set/*" "s3://bench/s5cmd-$set-$run/")
    st+=("$s"); sr+=("$r")
    log "$set s5cmd run $run: ${s}s, RSS ${r} KiB"
    rm -rf "$sp"
  done
  for tool in wharf s5cmd; do
    if [ $tool = wharf ]; then secs=$(printf '%s\n' "${wt[@]}" | median) rss=$(printf '%s\n' "${wr[@]}" | sort -g | tail -1)
    else secs=$(printf '%s\n' "${st[@]}" | median) rss=$(printf '%s\n' "${sr[@]}" | sort -g | tail -1); fi
    printf '%-5s %-6s %6d x %-5s median %8.3fs  %8.1f MiB/s  %8.1f files/s  peak RSS %7.1f MiB\n' \
      "$set" "$tool" "$files" "$size" "$secs" "$(echo "$bytes / 1048576 / $secs" | bc -l)" \
      "$(echo "$files / $secs" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
    eval "SECS_$tool=$secs RSS_$tool=$rss"
  done
  # shellcheck disable=SC2154
  printf '%-5s wharf/s5cmd throughput ratio %.2f (goal >= 0.8); wharf peak RSS %.1f MiB, bound %d MiB (%d x %s + 64 MiB)\n' \
    "$set" "$(echo "$SECS_s5cmd / $SECS_wharf" | bc -l)" "$(echo "$RSS_wharf / 1024" | bc -l)" "$bound_mib" "$CONCURRENCY" "$PART_SIZE"
done
