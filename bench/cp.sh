#!/usr/bin/env bash
# Benchmarks `wharf cp` against s5cmd and rclone on MinIO over loopback (a benchmark, not a
# test: it asserts nothing). See bench/README.md for what it measures and the latest figures.
#
#   bench/cp.sh                 install the peers if needed, then run everything (3 runs each)
#   bench/cp.sh install         only install s5cmd and rclone into the per-user cache
#
# Environment: RUNS (default 3), TOOLS (default "wharf wharf-nofsync s5cmd s5cmd-sync rclone";
# downloads only: wharf-nofsync is wharf cp --no-fsync, as durable as the peers, and s5cmd-sync
# is s5cmd then `sync -f` of its directory, durable on exit as wharf is), SETS (default
# "large small"), DIRS (default "up down"; with "down" alone wharf's upload that the downloads
# read is made once, untimed), BENCH_DIR (scratch space, default a fresh temp dir; needs ~3 GiB),
# WHARF_JOBS (wharf's -j, default its own default), WHARF_BIN (a wharf binary to time instead of
# building ./cmd/wharf).
#
# Datasets: large = 16 files x 64 MiB, small = 5,000 files x 4 KiB; each is uploaded to a
# fresh prefix and downloaded to a fresh directory. Each tool runs with the concurrency flags
# that made it fastest here (see FLAGS below). Peak RSS comes from GNU time -v.
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
install_s5cmd; install_rclone; install_time
bash scripts/install-servers.sh minio

WORK=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wharf-bench.XXXXXX")}
RUN_DIR=$WORK/servers
cleanup() { servers_stop "$RUN_DIR" 2>/dev/null || true; [ -n "${BENCH_DIR:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

build_wharf "$WORK"
start_bench_minio "$RUN_DIR"
export RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=Minio RCLONE_CONFIG_BENCH_ENDPOINT=$EP
export RCLONE_CONFIG_BENCH_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
export RCLONE_CONFIG_BENCH_REGION=us-east-1
"$WHARF" --endpoint "$EP" mb s3://bench >/dev/null

make_sets() {
  mkdir -p "$WORK/data/large" "$WORK/data/small"
  if [ ! -f "$WORK/data/large/f16.bin" ]; then
    log "making 16 x 64 MiB"
    for i in $(seq -w 1 16); do head -c 64M /dev/urandom >"$WORK/data/large/f$i.bin"; done
  fi
  if [ ! -f "$WORK/data/small/f04999.bin" ]; then
    log "making 5,000 x 4 KiB"
    head -c $((5000 * 4096)) /dev/urandom | split -a 5 -d -b 4096 - "$WORK/data/small/f"
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

# cmd_for TOOL DIR(up|down) SET RUN: prints the command line.
run_tool() {
  local tool=$1 dir=$2 set=$3 run=$4
  local local_src=$WORK/data/$set prefix=$tool-$set-$run down=$WORK/down/$tool-$set-$run
  case "$tool-$dir" in
    wharf-up) "$WHARF" --endpoint "$EP" cp -r "${WHARF_FLAGS[@]}" "$local_src" "s3://bench/$prefix/" ;;
    wharf-down) "$WHARF" --endpoint "$EP" cp -r "${WHARF_FLAGS[@]}" "s3://bench/wharf-$set-1/" "$down" ;;
    wharf-nofsync-down) "$WHARF" --endpoint "$EP" cp -r --no-fsync "${WHARF_FLAGS[@]}" "s3://bench/wharf-$set-1/" "$down" ;;
    s5cmd-up) "$S5CMD" --endpoint-url "$EP" cp "$local_src/*" "s3://bench/$prefix/" ;;
    s5cmd-down) "$S5CMD" --endpoint-url "$EP" cp "s3://bench/wharf-$set-1/*" "$down/" ;;
    s5cmd-sync-down) "$S5CMD" --endpoint-url "$EP" cp "s3://bench/wharf-$set-1/*" "$down/" && sync -f "$down" ;;
    rclone-up) "$RCLONE" copy "${RCLONE_FLAGS[@]}" "$local_src" "bench:bench/$prefix" ;;
    rclone-down) "$RCLONE" copy "${RCLONE_FLAGS[@]}" "bench:bench/wharf-$set-1" "$down" ;;
  esac >/dev/null
}

# measure TOOL DIR SET RUN: prints "seconds rss_kib".
# A large download is removed before the next run; the small ones stay until their set is
# done: on an ext4 without a journal (this VM's root), creating files within a minute of
# deleting thousands scans the freed inodes on every create (perf: recently_deleted), which
# would time the previous run's cleanup, not the copy.
measure() {
  local out start end
  out=$WORK/time.txt
  [ "$3" = small ] || rm -rf "$WORK/down"
  mkdir -p "$WORK/down"
  sync
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$out" bash -c "$(declare -f run_tool); $(declare -p WORK WHARF EP S5CMD RCLONE WHARF_FLAGS RCLONE_FLAGS); run_tool $*"
  end=$(date +%s.%N)
  printf '%s %s\n' "$(echo "$end - $start" | bc -l)" "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out")"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

declare -A SECS RSS
for set in $SETS; do
  if [ "$set" = large ]; then bytes=$((16 * 64 << 20)); files=16; else bytes=$((5000 * 4096)); files=5000; fi
  # wharf's first upload is also the source of every download.
  if [[ " $DIRS " != *" up "* ]]; then
    log "$set: seeding s3://bench/wharf-$set-1/ (untimed)"
    "$WHARF" --endpoint "$EP" cp -r "$WORK/data/$set" "s3://bench/wharf-$set-1/" >/dev/null
  fi
  # Runs are interleaved (run 1 of every tool, then run 2...), so that a busy spell on the
  # shared machine slows every tool alike instead of one tool's runs.
  for dir in $DIRS; do
    declare -A TIMES=() RSSS=()
    for run in $(seq 1 "$RUNS"); do
      for tool in $TOOLS; do
        case "$tool-$dir" in wharf-nofsync-up | s5cmd-sync-up) continue ;; esac # downloads only
        read -r s r < <(measure "$tool" "$dir" "$set" "$run")
        TIMES[$tool]+="$s "; RSSS[$tool]+="$r "
        log "$set $dir $tool run $run: ${s}s, RSS ${r} KiB"
      done
    done
    for tool in "${!TIMES[@]}"; do
      # shellcheck disable=SC2086 # the lists split on spaces
      SECS[$set,$dir,$tool]=$(printf '%s\n' ${TIMES[$tool]} | median)
      # shellcheck disable=SC2086
      RSS[$set,$dir,$tool]=$(printf '%s\n' ${RSSS[$tool]} | sort -g | tail -1)
    done
  done
  for dir in $DIRS; do
    for tool in $TOOLS; do
      s=${SECS[$set,$dir,$tool]:-}
      [ -n "$s" ] || continue
      printf '%-5s %-4s %-13s median %7.3fs  %8.1f MiB/s  %8.1f files/s  peak RSS %6.1f MiB\n' \
        "$set" "$dir" "$tool" "$s" "$(echo "$bytes / 1048576 / $s" | bc -l)" "$(echo "$files / $s" | bc -l)" \
        "$(echo "${RSS[$set,$dir,$tool]} / 1024" | bc -l)"
    done
    for ours in wharf wharf-nofsync; do
      [ -n "${SECS[$set,$dir,$ours]:-}" ] || continue
      for peer in $TOOLS; do
        [[ "$peer" == wharf* || -z "${SECS[$set,$dir,$peer]:-}" ]] && continue
        printf '%-5s %-4s %s/%-6s throughput ratio %.2f\n' "$set" "$dir" "$ours" "$peer" \
          "$(echo "${SECS[$set,$dir,$peer]} / ${SECS[$set,$dir,$ours]}" | bc -l)"
      done
    done
  done
  rm -rf "$WORK/down"
done

# Peak RSS of one 1 GiB upload, against its bound: parts in flight x part size + 64 MiB.
[[ " $DIRS " == *" up "* ]] || exit 0
head -c 1G /dev/urandom >"$WORK/one-gib.bin"
/usr/bin/time -v -o "$WORK/time.txt" "$WHARF" --endpoint "$EP" cp "$WORK/one-gib.bin" s3://bench/one-gib.bin >/dev/null
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
printf 'one 1 GiB upload: peak RSS %.1f MiB (bound: 4 parts x 16 MiB + 64 MiB = 128 MiB)\n' "$(echo "$rss / 1024" | bc -l)"
