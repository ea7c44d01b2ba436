# shellcheck shell=bash
# What the benchmarks share: logging, GNU time, and the pinned s5cmd build. Source it after
# scripts/lib/servers.bash (for SERVERS_TESTBIN).

S5CMD_VERSION=v2.3.0
S5CMD=$SERVERS_TESTBIN/s5cmd-$S5CMD_VERSION/s5cmd

log() { printf 'bench: %s\n' "$*" >&2; }

# install_s5cmd builds s5cmd into the per-user cache once. The module proxy refuses
# `go install` for it (its module carries a vendor folder), so: download the module, drop
# vendor/, and build with -mod=mod.
install_s5cmd() {
  [ -x "$S5CMD" ] && return 0
  log "building s5cmd $S5CMD_VERSION into $(dirname "$S5CMD")"
  local mod="github.com/peak/s5cmd/v2@$S5CMD_VERSION" dir tmp
  dir=$(GOFLAGS=-mod=mod go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { log "go mod download $mod gave no directory"; return 1; }
  tmp=$(mktemp -d)
  cp -r "$dir/." "$tmp/src"
  chmod -R u+w "$tmp/src"
  rm -rf "$tmp/src/vendor"
  mkdir -p "$(dirname "$S5CMD").tmp"
  (cd "$tmp/src" && GOFLAGS=-mod=mod go build -o "$(dirname "$S5CMD").tmp/s5cmd" .)
  rm -rf "$tmp" "$(dirname "$S5CMD")"
  mv "$(dirname "$S5CMD").tmp" "$(dirname "$S5CMD")"
}

# install_time installs GNU time (peak RSS comes from its -v report).
install_time() {
  [ -x /usr/bin/time ] && return 0
  log "installing GNU time"
  apt-get install -y time >/dev/null
}

# build_wharf sets WHARF: $WHARF_BIN when given (time another build, e.g. an older one), else
# a fresh build of ./cmd/wharf in the directory $1.
build_wharf() {
  if [ -n "${WHARF_BIN:-}" ]; then
    # shellcheck disable=SC2034 # for the scripts that source this file
    WHARF=$WHARF_BIN
    return 0
  fi
  log "building wharf (scripts/release.sh: the binary users get)"
  bash scripts/release.sh -o "$1/wharf" bench >&2
  # shellcheck disable=SC2034 # for the scripts that source this file
  WHARF=$1/wharf
}

# start_bench_minio starts MinIO on loopback under the directory $1 (scripts/lib/servers.bash;
# the caller stops it) and points EP and the AWS environment at it.
start_bench_minio() {
  mkdir -p "$1/minio"
  start_minio "$1/minio"
  wait_ready "$1/minio" minio
  # shellcheck disable=SC1091
  source "$1/minio/env"
  # shellcheck disable=SC2034 # for the scripts that source this file
  EP=$WHARF_TEST_MINIO_ENDPOINT
  export AWS_ACCESS_KEY_ID=$WHARF_TEST_MINIO_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$WHARF_TEST_MINIO_SECRET_KEY
  export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
}

# median, minmax and ratio summarise a run's figures: the median of the numbers on standard
# input, their range as LO-HI, and $1 / $2 to two decimals.
# timed OUT SCRIPT: runs SCRIPT (a bash script, given whole) under GNU time -v, its report in
# OUT, after a sync so that it pays for no earlier write-back; prints "seconds rss_kib load",
# load being the 1-minute load average just before it.
timed() {
  local out=$1 script=$2 start end load
  sync
  read -r load _ </proc/loadavg
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$out" bash -c "$script"
  end=$(date +%s.%N)
  printf '%s %s %s\n' "$(echo "$end - $start" | bc -l)" "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out")" "$load"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
minmax() { sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }
ratio() { echo "$1 / $2" | bc -l | xargs printf '%.2f'; }

# rclone_env points rclone's remote "bench" at the MinIO of start_bench_minio.
rclone_env() {
  export RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=Minio RCLONE_CONFIG_BENCH_ENDPOINT=$EP
  export RCLONE_CONFIG_BENCH_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
  export RCLONE_CONFIG_BENCH_REGION=us-east-1
}

# bench_workdir NAME sets WORK (BENCH_DIR, else a fresh temp directory wharf-bench-NAME.*) and
# RUN_DIR (its servers/), and on exit stops the servers started there and removes a temp WORK.
bench_workdir() {
  WORK=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wharf-bench-$1.XXXXXX")}
  RUN_DIR=$WORK/servers
  trap 'servers_stop "$RUN_DIR" 2>/dev/null || true; [ -n "${BENCH_DIR:-}" ] || rm -rf "$WORK"' EXIT
  trap 'exit 130' INT TERM
}

# bench_postgres starts a PostgreSQL of its own under RUN_DIR/postgres (bench_workdir's trap
# stops it), writes its password to RUN_DIR/pg-password (for wharf's password: file://…) and
# sets PSQL, the psql command line that reaches it.
bench_postgres() {
  mkdir -p "$RUN_DIR/postgres"
  chmod 700 "$RUN_DIR"
  start_postgres "$RUN_DIR/postgres"
  wait_ready "$RUN_DIR/postgres" postgres
  # shellcheck disable=SC1091
  source "$RUN_DIR/postgres/env"
  printf '%s\n' "$WHARF_TEST_POSTGRES_PASSWORD" >"$RUN_DIR/pg-password"
  chmod 600 "$RUN_DIR/pg-password"
  PSQL=(env PGPASSWORD="$WHARF_TEST_POSTGRES_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 "$WHARF_TEST_POSTGRES_URL")
}

# bench_table ROWS creates the benchmarks' table t of ROWS rows (8 columns: bigint key, int,
# double, numeric(12,2), text, bool, timestamptz, uuid), analysed.
bench_table() {
  log "creating t with $1 rows (8 columns)"
  "${PSQL[@]}" <<SQL
CREATE TABLE t (id bigint PRIMARY KEY, qty int, price double precision, amount numeric(12,2),
  name text, ok boolean, at timestamptz, u uuid);
INSERT INTO t SELECT g, (g % 1000)::int, g / 7.0, (g % 100000) / 100.0, 'item ' || g, g % 3 = 0,
  timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second',
  md5(g::text)::uuid
FROM generate_series(1, $1) g;
VACUUM ANALYZE t;
SQL
}
