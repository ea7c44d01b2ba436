#!/usr/bin/env bash
# Benchmarks `wharf sync` against `s5cmd sync`, `rclone sync` and `aws s3 sync` (Debian's or
# pip's awscli, when installed) on MinIO over loopback (a benchmark, not a test: it asserts
# nothing). See bench/README.md for what it measures and the latest figures.
#
#   bench/sync.sh               install the peers if needed, then run everything (3 runs each)
#
# Environment: RUNS (default 3; medians of them), TOOLS (default "wharf s5cmd rclone aws";
# aws is left out when no `aws` is on PATH), FILES (default 10000) and KIB (default 1: the
# size of each file), CASES (default "first unchanged changed"), BENCH_DIR (scratch space,
# default a fresh temp dir), WHARF_BIN (a wharf binary to time instead of building ./cmd/wharf).
#
# Cases, each a local directory of FILES files synced to a prefix of MinIO:
#   first      a full sync into an empty prefix (a fresh one per run)
#   unchanged  a sync into the tool's own prefix that already holds every file
#   changed    the same after 1 % of the files were rewritten (new bytes, one more byte, a
#              newer modification time): each round rewrites another 1 %, then runs every tool,
#              so each tool's prefix lags the source by exactly those files
# The tools run interleaved: run 1 of every tool, then run 2..., each run in another order
# (rotated), so that a busy spell of the shared machine slows every tool alike. Each
# measurement records the 1-minute load average before it. The end is a table of medians and of
# the ratios (above 1.0: wharf is faster), against each peer and against the fastest peer.
#
# Each tool compares the way its documentation recommends for speed on S3: wharf by its
# defaults (size, then MD5 ETag or modification time from the listings); s5cmd sync by its
# defaults (size and modification time from the listings); rclone with --fast-list --update
# --use-server-modtime (the listing's times, no HEAD per object); aws s3 sync by its defaults.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash
# shellcheck source=bench/lib.bash
source bench/lib.bash

RCLONE_VERSION=v1.76.0
RCLONE=$SERVERS_TESTBIN/rclone-$RCLONE_VERSION/rclone
RUNS=${RUNS:-3}
TOOLS=${TOOLS:-wharf s5cmd rclone aws}
FILES=${FILES:-10000}
KIB=${KIB:-1}
CASES=${CASES:-first unchanged changed}
if [[ " $TOOLS " == *" aws "* ]] && ! command -v aws >/dev/null; then
  log "no aws on PATH: leaving aws s3 sync out"
  TOOLS=${TOOLS//aws/}
fi

install_s5cmd; install_time
if [[ " $TOOLS " == *" rclone "* ]] && [ ! -x "$RCLONE" ]; then
  log "no rclone at $RCLONE: run bench/cp.sh install first (it builds it)"; exit 1
fi
bash scripts/install-servers.sh minio

bench_workdir sync

build_wharf "$WORK"
start_bench_minio "$RUN_DIR"
rclone_env
"$WHARF" --endpoint "$EP" mb s3://bench >/dev/null

SRC=$WORK/src
if [ ! -f "$SRC/d$(( (FILES - 1) / 1000 ))/f$(printf %05d $((FILES - 1)))" ]; then
  log "making $FILES x $KIB KiB in 1,000-file directories"
  rm -rf "$SRC"; mkdir -p "$SRC"
  head -c $((FILES * KIB * 1024)) /dev/urandom | split -a 5 -d -b $((KIB * 1024)) - "$SRC/f"
  for i in $(seq 0 $((FILES - 1))); do
    d=$SRC/d$((i / 1000)); mkdir -p "$d"; mv "$SRC/f$(printf %05d "$i")" "$d/"
  done
fi
# Every file older than any upload: a sync that compares times finds them unchanged.
find "$SRC" -type f -exec touch -d '-1 hour' {} +

RCLONE_FLAGS=(--transfers 32 --checkers 32 --fast-list --update --use-server-modtime -q)

# run_tool TOOL PREFIX: one sync of $SRC to s3://bench/PREFIX/.
run_tool() {
  local tool=$1 dst=s3://bench/$2/
  case "$tool" in
    wharf) "$WHARF" --endpoint "$EP" sync "$SRC" "$dst" ;;
    s5cmd) "$S5CMD" --endpoint-url "$EP" sync "$SRC/" "$dst" ;;
    rclone) "$RCLONE" sync "${RCLONE_FLAGS[@]}" "$SRC" "bench:bench/$2" ;;
    aws) aws --endpoint-url "$EP" s3 sync --only-show-errors "$SRC" "$dst" ;;
  esac >/dev/null
}

# measure TOOL PREFIX: prints "seconds rss_kib load".
measure() {
  timed "$WORK/time.txt" "$(declare -f run_tool); $(declare -p WORK WHARF EP S5CMD RCLONE RCLONE_FLAGS SRC); run_tool $*"
}


# rewrite ROUND: gives 1 % of the files new bytes, one byte more, and the time now.
rewrite() {
  local n=$((FILES / 100)) i f
  for i in $(seq 0 $((n - 1))); do
    f=$(( (i * 100 + $1) % FILES ))
    head -c $((KIB * 1024 + 1)) /dev/urandom >"$SRC/d$((f / 1000))/f$(printf %05d "$f")"
  done
}

read -r -a tools <<<"$TOOLS"
for tool in "${tools[@]}"; do
  if [[ " $CASES " == *" unchanged "* || " $CASES " == *" changed "* ]]; then
    log "seeding s3://bench/$tool-main/ with $tool's own sync (untimed)"
    run_tool "$tool" "$tool-main" >/dev/null
  fi
done

log "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A SECS RSS LOADS
for case in $CASES; do
  declare -A TIMES=() RSSS=()
  loads=""
  for run in $(seq 1 "$RUNS"); do
    [ "$case" = changed ] && rewrite "$run"
    n=${#tools[@]}
    for i in $(seq 0 $((n - 1))); do
      tool=${tools[$(((i + run - 1) % n))]}
      prefix=$tool-main
      [ "$case" = first ] && prefix=$tool-first-$run
      read -r s r l < <(measure "$tool" "$prefix")
      TIMES[$tool]+="$s "; RSSS[$tool]+="$r "; loads+="$l "
      log "$case run $run $tool: ${s}s, RSS ${r} KiB, load $l"
    done
  done
  # shellcheck disable=SC2086 # the lists split on spaces
  LOADS[$case]=$(printf '%s\n' $loads | minmax)
  for tool in "${tools[@]}"; do
    # shellcheck disable=SC2086
    SECS[$case,$tool]=$(printf '%s\n' ${TIMES[$tool]} | median)
    # shellcheck disable=SC2086
    RSS[$case,$tool]=$(printf '%s\n' ${RSSS[$tool]} | sort -g | tail -1)
    printf '%-9s %-6s median %7.3fs  %8.0f files/s  peak RSS %6.1f MiB\n' "$case" "$tool" "${SECS[$case,$tool]}" \
      "$(echo "$FILES / ${SECS[$case,$tool]}" | bc -l)" "$(echo "${RSS[$case,$tool]} / 1024" | bc -l)"
  done
done
log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

printf '\n%d files x %d KiB, %d runs each, medians. Ratios: peer seconds / wharf seconds (above 1.0: wharf is faster).\n' "$FILES" "$KIB" "$RUNS"
printf '\n| case | load avg (1 min) | wharf s | peer | peer s | ratio |\n|---|---|---|---|---|---|\n'
for case in $CASES; do
  fastest="" best=""
  for tool in "${tools[@]}"; do
    [ "$tool" = wharf ] && continue
    s=${SECS[$case,$tool]}
    printf '| %s | %s | %.3f | %s | %.3f | **%s** |\n' "$case" "${LOADS[$case]}" "${SECS[$case,wharf]}" "$tool" "$s" "$(ratio "$s" "${SECS[$case,wharf]}")"
    if [ -z "$best" ] || (($(echo "$s < $best" | bc -l))); then best=$s fastest=$tool; fi
  done
  [ -n "$fastest" ] && printf '| %s | %s | %.3f | fastest peer (%s) | %.3f | **%s** |\n' "$case" "${LOADS[$case]}" \
    "${SECS[$case,wharf]}" "$fastest" "$best" "$(ratio "$best" "${SECS[$case,wharf]}")"
done
