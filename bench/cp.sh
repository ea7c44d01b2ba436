#!/usr/bin/env bash
# Benchmarks `wharf cp` against s5cmd and rclone on MinIO over loopback (a benchmark, not a
# test: it asserts nothing). See bench/README.md for what it measures and the latest figures.
#
#   bench/cp.sh                 install the peers if needed, then run everything (3 runs each)
#   bench/cp.sh install         only install s5cmd and rclone into the per-user cache
#
# Environment: RUNS (default 3; medians of them), TOOLS (default "wharf wharf-nofsync s5cmd
# s5cmd-sync rclone"; downloads only: wharf-nofsync is wharf cp --no-fsync, as durable as the
# peers, and s5cmd-sync is s5cmd then `sync -f` of its directory, durable on exit as wharf is),
# SETS (default "large small"), DIRS (default "up down"; with "down" alone wharf's upload that
# the downloads read is made once, untimed), BENCH_DIR (scratch space, default a fresh temp dir;
# needs ~1 GiB), WHARF_JOBS (wharf's -j, default its own default), WHARF_BIN (a wharf binary to
# time instead of building ./cmd/wharf), BEFORE_BIN (another wharf binary, an older build, timed
# in the same runs as the tools "before" and, for downloads, "before-nofsync"), UNVERIFIED_BIN
# (a build of the same source with its checksums taken out, timed as "unverified" and
# "unverified-nofsync": the cost of verifying without the other changes between builds;
# bench/README.md says how such a build was made).
#
# Datasets: large = 8 files x 32 MiB, small = 2,000 files x 4 KiB; each upload goes to a fresh
# prefix and each download to a fresh directory. The tools run interleaved: run 1 of every tool,
# then run 2..., each run in another order (rotated), so that a busy spell of the shared machine
# slows every tool alike. Each measurement records the 1-minute load average before it. Peak RSS
# comes from GNU time -v. The end is a table of medians and of the ratios at equal durability:
# uploads wharf/s5cmd; downloads wharf --no-fsync/s5cmd and wharf/s5cmd+sync (above 1.0: wharf
# is faster).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

RCLONE_VERSION=v1.76.0
TESTBIN=$SERVERS_TESTBIN
RCLONE=$TESTBIN/rclone-$RCLONE_VERSION/rclone
RUNS=${RUNS:-3}
TOOLS=${TOOLS:-wharf wharf-nofsync s5cmd s5cmd-sync rclone}
SETS=${SETS:-large small}
DIRS=${DIRS:-up down}
BEFORE=${BEFORE_BIN:-}
[ -n "$BEFORE" ] && TOOLS="$TOOLS before before-nofsync"
UNVERIFIED=${UNVERIFIED_BIN:-}
[ -n "$UNVERIFIED" ] && TOOLS="$TOOLS unverified unverified-nofsync"
LARGE_FILES=8 LARGE_MIB=32 SMALL_FILES=2000 SMALL_KIB=4

install_rclone() {
  [ -x "$RCLONE" ] && return 0
  log "building rclone $RCLONE_VERSION into $(dirname "$RCLONE") (takes minutes)"
  local tmp
  tmp="$(dirname "$RCLONE").tmp"
  rm -rf "$tmp"; mkdir -p "$tmp"
  GOBIN="$tmp" GOFLAGS="" go install "github.com/rclone/rclone@$RCLONE_VERSION"
  rm -rf "$(dirname "$RCLONE")"; mv "$tmp" "$(dirname "$RCLONE")"
}

if [ "${1:-}" = install ]; then
  install_s5cmd; install_rclone; install_time
  exit 0
fi
install_s5cmd; install_time
[[ " $TOOLS " != *" rclone "* ]] || install_rclone
bash scripts/install-servers.sh minio

bench_workdir cp

build_wharf "$WORK"
start_bench_minio "$RUN_DIR"
rclone_env
"$WHARF" --endpoint "$EP" mb s3://bench >/dev/null

make_sets() {
  local f
  mkdir -p "$WORK/data/large" "$WORK/data/small"
  if [ ! -f "$WORK/data/large/f$LARGE_FILES.bin" ]; then
    log "making $LARGE_FILES x $LARGE_MIB MiB"
    for i in $(seq 1 "$LARGE_FILES"); do head -c "${LARGE_MIB}M" /dev/urandom >"$WORK/data/large/f$i.bin"; done
  fi
  if [ ! -f "$WORK/data/small/f$(printf %05d $((SMALL_FILES - 1))).bin" ]; then
    log "making $SMALL_FILES x $SMALL_KIB KiB"
    head -c $((SMALL_FILES * SMALL_KIB * 1024)) /dev/urandom | split -a 5 -d -b $((SMALL_KIB * 1024)) - "$WORK/data/small/f"
    for f in "$WORK/data/small"/f[0-9][0-9][0-9][0-9][0-9]; do mv "$f" "$f.bin"; done
  fi
}
make_sets

# FLAGS: the concurrency flags each tool runs with. s5cmd's defaults (256 workers, 5 parts of
# 50 MiB) were its fastest here; rclone is given many transfers and checkers, 16 MiB chunks,
# 4 parts per file, no MD5 of whole files and no destination check (an empty prefix).
WHARF_FLAGS=()
[ -n "${WHARF_JOBS:-}" ] && WHARF_FLAGS=(-j "$WHARF_JOBS")
RCLONE_FLAGS=(--transfers 32 --checkers 32 --s3-chunk-size 16M --s3-upload-concurrency 4
  --s3-disable-checksum --no-check-dest --no-traverse -q)

# run_tool TOOL DIR(up|down) SET RUN: runs one copy.
run_tool() {
  local tool=$1 dir=$2 set=$3 run=$4
  local local_src=$WORK/data/$set prefix=$tool-$set-$run down=$WORK/down/$tool-$set-$run
  case "$tool-$dir" in
    wharf-up) "$WHARF" --endpoint "$EP" cp -r "${WHARF_FLAGS[@]}" "$local_src" "s3://bench/$prefix/" ;;
    wharf-down) "$WHARF" --endpoint "$EP" cp -r "${WHARF_FLAGS[@]}" "s3://bench/wharf-$set-1/" "$down" ;;
    wharf-nofsync-down) "$WHARF" --endpoint "$EP" cp -r --no-fsync "${WHARF_FLAGS[@]}" "s3://bench/wharf-$set-1/" "$down" ;;
    before-up) "$BEFORE" --endpoint "$EP" cp -r "${WHARF_FLAGS[@]}" "$local_src" "s3://bench/$prefix/" ;;
    before-down) "$BEFORE" --endpoint "$EP" cp -r "${WHARF_FLAGS[@]}" "s3://bench/wharf-$set-1/" "$down" ;;
    before-nofsync-down) "$BEFORE" --endpoint "$EP" cp -r --no-fsync "${WHARF_FLAGS[@]}" "s3://bench/wharf-$set-1/" "$down" ;;
    unverified-up) "$UNVERIFIED" --endpoint "$EP" cp -r "${WHARF_FLAGS[@]}" "$local_src" "s3://bench/$prefix/" ;;
    unverified-down) "$UNVERIFIED" --endpoint "$EP" cp -r "${WHARF_FLAGS[@]}" "s3://bench/wharf-$set-1/" "$down" ;;
    unverified-nofsync-down) "$UNVERIFIED" --endpoint "$EP" cp -r --no-fsync "${WHARF_FLAGS[@]}" "s3://bench/wharf-$set-1/" "$down" ;;
    s5cmd-up) "$S5CMD" --endpoint-url "$EP" cp "$local_src/*" "s3://bench/$prefix/" ;;
    s5cmd-down) "$S5CMD" --endpoint-url "$EP" cp "s3://bench/wharf-$set-1/*" "$down/" ;;
    s5cmd-sync-down) "$S5CMD" --endpoint-url "$EP" cp "s3://bench/wharf-$set-1/*" "$down/" && sync -f "$down" ;;
    rclone-up) "$RCLONE" copy "${RCLONE_FLAGS[@]}" "$local_src" "bench:bench/$prefix" ;;
    rclone-down) "$RCLONE" copy "${RCLONE_FLAGS[@]}" "bench:bench/wharf-$set-1" "$down" ;;
  esac >/dev/null
}

# measure TOOL DIR SET RUN: prints "seconds rss_kib load".
# A large download is removed before the next run; the small ones stay until their set is
# done: on an ext4 without a journal (this VM's root), creating files within a minute of
# deleting thousands scans the freed inodes on every create (perf: recently_deleted), which
# would time the previous run's cleanup, not the copy. Every run starts after a sync, so that
# no tool pays for the write-back of the one before.
measure() {
  [ "$3" = small ] || rm -rf "$WORK/down"
  mkdir -p "$WORK/down"
  timed "$WORK/time.txt" "$(declare -f run_tool); $(declare -p WORK WHARF BEFORE UNVERIFIED EP S5CMD RCLONE WHARF_FLAGS RCLONE_FLAGS); run_tool $*"
}


# tools_for DIR: the tools that run in that direction.
tools_for() {
  local tool
  for tool in $TOOLS; do
    case "$tool-$1" in wharf-nofsync-up | s5cmd-sync-up | before-nofsync-up | unverified-nofsync-up) continue ;; esac
    printf '%s\n' "$tool"
  done
}

log "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A SECS RSS LOADS
for set in $SETS; do
  if [ "$set" = large ]; then bytes=$((LARGE_FILES * LARGE_MIB << 20)); files=$LARGE_FILES; else bytes=$((SMALL_FILES * SMALL_KIB * 1024)); files=$SMALL_FILES; fi
  # wharf's first upload is also the source of every download.
  if [[ " $DIRS " != *" up "* ]]; then
    log "$set: seeding s3://bench/wharf-$set-1/ (untimed)"
    "$WHARF" --endpoint "$EP" cp -r "$WORK/data/$set" "s3://bench/wharf-$set-1/" >/dev/null
  fi
  for dir in $DIRS; do
    mapfile -t tools < <(tools_for "$dir")
    declare -A TIMES=() RSSS=()
    loads=""
    for run in $(seq 1 "$RUNS"); do
      n=${#tools[@]}
      for i in $(seq 0 $((n - 1))); do
        tool=${tools[$(((i + run - 1) % n))]}
        read -r s r l < <(measure "$tool" "$dir" "$set" "$run")
        TIMES[$tool]+="$s "; RSSS[$tool]+="$r "; loads+="$l "
        log "$set $dir run $run $tool: ${s}s, RSS ${r} KiB, load $l"
      done
    done
    # shellcheck disable=SC2086 # the lists split on spaces
    LOADS[$set,$dir]=$(printf '%s\n' $loads | minmax)
    for tool in "${!TIMES[@]}"; do
      # shellcheck disable=SC2086
      SECS[$set,$dir,$tool]=$(printf '%s\n' ${TIMES[$tool]} | median)
      # shellcheck disable=SC2086
      RSS[$set,$dir,$tool]=$(printf '%s\n' ${RSSS[$tool]} | sort -g | tail -1)
    done
    for tool in "${tools[@]}"; do
      s=${SECS[$set,$dir,$tool]}
      printf '%-5s %-4s %-14s median %7.3fs  %8.1f MiB/s  %8.1f files/s  peak RSS %6.1f MiB\n' \
        "$set" "$dir" "$tool" "$s" "$(echo "$bytes / 1048576 / $s" | bc -l)" "$(echo "$files / $s" | bc -l)" \
        "$(echo "${RSS[$set,$dir,$tool]} / 1024" | bc -l)"
    done
  done
  rm -rf "$WORK/down"
done
log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# The ratios at equal durability (above 1.0: wharf is faster): uploads against s5cmd (a store
# makes its own writes durable); downloads --no-fsync against s5cmd (neither syncs) and the
# default against s5cmd followed by sync (both durable on exit). With BEFORE_BIN, wharf / before
# is the cost of what changed between the builds (a build before verified transfers: verified
# against unverified, and everything else that changed since); with UNVERIFIED_BIN, wharf /
# unverified is the cost of the checksums alone.
have() { [ -n "${SECS[$1]:-}" ]; }
printf '\n| case | load avg (1 min) | tool | median s | ratio at equal durability |\n|---|---|---|---|---|\n'
for set in $SETS; do
  for dir in $DIRS; do
    case=$set-$dir
    pairs=("wharf s5cmd" "wharf rclone" "before s5cmd" "wharf before" "wharf unverified")
    [ "$dir" = up ] || pairs=("wharf-nofsync s5cmd" "wharf s5cmd-sync" "wharf-nofsync rclone" "before-nofsync s5cmd" "before s5cmd-sync"
      "wharf before" "wharf-nofsync before-nofsync" "wharf unverified" "wharf-nofsync unverified-nofsync")
    for pair in "${pairs[@]}"; do
      read -r ours peer <<<"$pair"
      have "$set,$dir,$ours" && have "$set,$dir,$peer" || continue
      printf '| %s | %s | %s / %s | %s / %s | **%s** |\n' "$case" "${LOADS[$set,$dir]}" "$ours" "$peer" \
        "$(printf %.3f "${SECS[$set,$dir,$ours]}")" "$(printf %.3f "${SECS[$set,$dir,$peer]}")" \
        "$(ratio "${SECS[$set,$dir,$peer]}" "${SECS[$set,$dir,$ours]}")"
    done
  done
done

# Peak RSS of one 1 GiB upload, against its bound: parts in flight x part size + 64 MiB.
[[ " $DIRS " == *" up "* ]] || exit 0
head -c 1G /dev/urandom >"$WORK/one-gib.bin"
/usr/bin/time -v -o "$WORK/time.txt" "$WHARF" --endpoint "$EP" cp "$WORK/one-gib.bin" s3://bench/one-gib.bin >/dev/null
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
printf 'one 1 GiB upload: peak RSS %.1f MiB (bound: 4 parts x 16 MiB + 64 MiB = 128 MiB)\n' "$(echo "$rss / 1024" | bc -l)"
