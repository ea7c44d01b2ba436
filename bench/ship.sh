#!/usr/bin/env bash
# Benchmarks `wharf ship` against `wharf cp -r` and `s5cmd cp` of the same directory, side by
# side in one run, on MinIO over loopback (a benchmark, not a test: it asserts nothing). See
# bench/README.md for the latest figures.
#
#   bench/ship.sh               10,000 files x 64 KiB and 8 files x 256 MiB (needs ~10 GiB of scratch)
#   SCALE=small bench/ship.sh   a quick run: 500 x 64 KiB and 2 x 32 MiB
#
# Environment: SETS (default "small large"), RUNS (default 3; medians are printed),
# CONCURRENCY (wharf ship's --upload-concurrency; a list runs each, default 32),
# SMALL_FILES / SMALL_SIZE (default 10000 / 64K), LARGE_FILES / LARGE_SIZE (default 8 / 256M),
# PART_SIZE (wharf ship's --part-size, default 8MiB), CP_FLAGS (flags of `wharf cp -r`, default
# none: its defaults, -j 32 and 16 MiB parts), S5CMD_FLAGS (flags before s5cmd's cp, e.g.
# "--numworkers 64"; default none), WHARF_BIN (a wharf binary to time instead of building one,
# e.g. an older build to compare), BEFORE_BIN (another wharf binary whose `ship` is timed too,
# interleaved with the others, as "before"), BENCH_DIR (scratch space, default a fresh temp dir).
#
# Each run times, one after the other (interleaved: run 1 of every tool, then run 2...):
#   ship   `wharf ship --drain` of a fresh spool holding the set (spooled untimed: four `wharf
#          spool add` processes move hard links of the files in), from start to exit: the
#          startup probe, every upload (create-if-absent), the check that the bytes sent are the
#          bytes spooled, the fsynced `uploaded` record and delete_after_upload retention;
#   cp     `wharf cp -r` of the set's directory to another prefix;
#   s5cmd  `s5cmd cp` of the same files to a third prefix (its defaults: 256 workers, 5 parts of
#          50 MiB per file).
# The load average is recorded before and after each run. Peak RSS comes from GNU time -v;
# wharf ship's is compared with its documented bound, CONCURRENCY x PART_SIZE + 64 MiB.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

RUNS=${RUNS:-3}
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

bench_workdir ship

build_wharf "$WORK"
start_bench_minio "$RUN_DIR"
"$WHARF" --endpoint "$EP" mb s3://bench >/dev/null

# make_set NAME FILES SIZE: FILES files of SIZE random bytes in $WORK/data/NAME.
make_set() {
  local name=$1 files=$2 size=$3 dir=$WORK/data/$1
  [ -f "$dir.done" ] && return 0
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
  touch "$dir.done"
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

# timed OUT CMD…: runs CMD under GNU time; prints "seconds rss_kib user_s sys_s".
timed() {
  local out=$1 start end
  shift
  sync
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$out" "$@" >/dev/null
  end=$(date +%s.%N)
  printf '%s %s %s %s\n' "$(echo "$end - $start" | bc -l)" \
    "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out")" \
    "$(sed -n 's/.*User time (seconds): //p' "$out")" "$(sed -n 's/.*System time (seconds): //p' "$out")"
}

loadavg() { cut -d' ' -f1 /proc/loadavg; }

# count PREFIX: the objects under s3://bench/PREFIX/.
count() { "$WHARF" --endpoint "$EP" ls -r "s3://bench/$1/" | wc -l; }

tools=(ship cp s5cmd)
[ -z "${BEFORE_BIN:-}" ] || tools=(before ship cp s5cmd)
read -ra s5flags <<<"${S5CMD_FLAGS:-}"
read -ra cpflags <<<"${CP_FLAGS:-}"
part_bytes=$(numfmt --from=iec "$(echo "$PART_SIZE" | sed 's/i\?B$//')")
for set in $SETS; do
  if [ "$set" = small ]; then files=$SMALL_FILES size=$SMALL_SIZE; else files=$LARGE_FILES size=$LARGE_SIZE; fi
  make_set "$set" "$files" "$size"
  bytes=$((files * $(numfmt --from=iec "$size")))
  for conc in $CONCURRENCY; do
    bound_mib=$(((conc * part_bytes >> 20) + 64))
    declare -A secs=() rss=() cpu=()
    loads=()
    for run in $(seq 1 "$RUNS"); do
      for tool in "${tools[@]}"; do
        tag="$set-c$conc-$run-$tool"
        case $tool in
        ship | before)
          bin=$WHARF
          [ "$tool" = ship ] || bin=$BEFORE_BIN
          sp=$(spool_set "$set" "$run")
          cmd=("$bin" --endpoint "$EP" --log-level warn ship --spool "$sp" --to "s3://bench/$tag"
            --pipeline bench --node n1 --drain --listen off --upload-concurrency "$conc" --part-size "$PART_SIZE") ;;
        cp) cmd=("$WHARF" --endpoint "$EP" -q cp -r "${cpflags[@]}" "$WORK/data/$set/" "s3://bench/$tag/") ;;
        s5cmd) cmd=("$S5CMD" --endpoint-url "$EP" "${s5flags[@]}" cp "$WORK/data/$set/*" "s3://bench/$tag/") ;;
        esac
        before=$(loadavg)
        read -r s r u y < <(timed "$WORK/time.txt" "${cmd[@]}")
        after=$(loadavg)
        loads+=("$before" "$after")
        got=$(count "$tag")
        [ "$got" -eq "$files" ] || log "WARNING: $tool shipped $got objects, want $files"
        [ "$tool" != ship ] && [ "$tool" != before ] || rm -rf "$sp"
        if [ "$set" = large ]; then "$WHARF" --endpoint "$EP" -q rm -r "s3://bench/$tag/" >/dev/null; fi
        secs[$tool]+="$s "; rss[$tool]+="$r "; cpu[$tool]+="$(echo "$u + $y" | bc -l) "
        log "$set c=$conc $tool run $run: ${s}s, RSS ${r} KiB, CPU ${u}+${y} s, load $before -> $after"
      done
    done
    for tool in "${tools[@]}"; do
      m=$(printf '%s\n' ${secs[$tool]} | median)
      peak=$(printf '%s\n' ${rss[$tool]} | sort -g | tail -1)
      c=$(printf '%s\n' ${cpu[$tool]} | median)
      printf '%-5s c=%-3s %-6s %6d x %-5s median %8.3fs  %8.1f MiB/s  %8.1f files/s  CPU %6.2fs  peak RSS %7.1f MiB\n' \
        "$set" "$conc" "$tool" "$files" "$size" "$m" "$(echo "$bytes / 1048576 / $m" | bc -l)" \
        "$(echo "$files / $m" | bc -l)" "$c" "$(echo "$peak / 1024" | bc -l)"
      eval "MED_$tool=$m PEAK_$tool=$peak"
    done
    # shellcheck disable=SC2154
    [ -z "${BEFORE_BIN:-}" ] || printf '%-5s c=%-3s ship/before %.2f (throughput ratio)\n' "$set" "$conc" "$(echo "$MED_before / $MED_ship" | bc -l)"
    # shellcheck disable=SC2154
    printf '%-5s c=%-3s ship/s5cmd %.2f, ship/cp %.2f (throughput ratios, medians of %d); ship peak RSS %.1f MiB, bound %d MiB (%d x %s + 64 MiB): %s; load average %s..%s\n' \
      "$set" "$conc" "$(echo "$MED_s5cmd / $MED_ship" | bc -l)" "$(echo "$MED_cp / $MED_ship" | bc -l)" "$RUNS" \
      "$(echo "$PEAK_ship / 1024" | bc -l)" "$bound_mib" "$conc" "$PART_SIZE" \
      "$([ $((PEAK_ship >> 10)) -le "$bound_mib" ] && echo within || echo OVER)" \
      "$(printf '%s\n' "${loads[@]}" | sort -g | head -1)" "$(printf '%s\n' "${loads[@]}" | sort -g | tail -1)"
    unset secs rss cpu
  done
done
