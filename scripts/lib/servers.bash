# shellcheck shell=bash
# Starts and stops the real servers wharf's tests use (MinIO, SeaweedFS, fake-gcs-server, Azurite,
# a three-node NATS JetStream cluster, PostgreSQL), each on free loopback
# ports with a fresh data directory under one run directory, and names the tools tests run
# (chromium, promtool, icebird). Sourced by scripts/test.sh and scripts/servers.sh; it
# defines functions only.
#
#   servers_start RUN_DIR   start every server, wait until each is ready, write RUN_DIR/env
#   servers_stop RUN_DIR    stop every server by its recorded PID, then remove RUN_DIR
#
# RUN_DIR/NAME/ holds each server's pid, log and data. Nothing is ever stopped by name.

SERVERS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERVERS_TESTBIN=${WHARF_TESTBIN:-${XDG_CACHE_HOME:-$HOME/.cache}/wharf/testbin}
SERVERS_READY_TIMEOUT=${WHARF_SERVER_READY_TIMEOUT:-60}
# Seconds each server gets to exit after SIGTERM before SIGKILL. SeaweedFS spends ~15 s
# retrying a metadata flush to its own already-stopped volume server; its data is thrown away.
SERVERS_STOP_GRACE_MINIO=20
SERVERS_STOP_GRACE_SEAWEEDFS=3
SERVERS_STOP_GRACE_POSTGRES=15
SERVERS_STOP_GRACE_FAKEGCS=5
SERVERS_STOP_GRACE_AZURITE=5
SERVERS_STOP_GRACE_NATS=5
# The NATS cluster's nodes, each a directory under RUN_DIR/nats/.
NATS_NODES=(n0 n1 n2)

servers_log() { printf 'servers: %s\n' "$*" >&2; }

# pinned NAME: the version scripts/install-servers.sh pins for NAME_VERSION.
pinned() {
  local v
  v=$(sed -n "s/^$1_VERSION=//p" "$SERVERS_ROOT/scripts/install-servers.sh")
  [ -n "$v" ] || { servers_log "no $1_VERSION in scripts/install-servers.sh"; return 1; }
  printf '%s\n' "$v"
}

# tool_path NAME BINARY: the installed binary of NAME at its pinned version.
tool_path() {
  local name=$1 bin=$2 upper
  upper=$(printf '%s' "$name" | tr '[:lower:]-' '[:upper:]_')
  printf '%s/%s-%s/%s\n' "$SERVERS_TESTBIN" "$name" "$(pinned "$upper")" "$bin"
}

# icebird_dir: the folder holding node_modules/icebird at its pinned version (the JavaScript
# Iceberg reader internal/icebird runs with node), or nothing when it or node is missing, so
# that its tests fail under scripts/test.sh.
icebird_dir() {
  local dir
  dir=$(dirname "$(tool_path icebird node_modules)")
  if [ -f "$dir/node_modules/icebird/package.json" ] && command -v node >/dev/null 2>&1; then
    printf '%s\n' "$dir"
  else
    servers_log "icebird is not installed in $dir (or node is missing): scripts/install-servers.sh icebird"
  fi
}

# free_ports N: prints N distinct loopback TCP ports that are free now, one a line.
free_ports() {
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import socket' >/dev/null 2>&1; then
    python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
PY
    return
  fi
  # Fallback: probe random ports with bash's /dev/tcp; a refused connect means free.
  local n=0 p picked=" "
  while [ "$n" -lt "$1" ]; do
    p=$((20000 + RANDOM % 30000))
    case "$picked" in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      picked="$picked$p "; n=$((n + 1)); echo "$p"
    fi
  done
}

random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

# alive PID: the process exists and is not a zombie.
alive() {
  local st
  st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  case "$st" in Z*|"") return 1 ;; esac
}

# launch DIR BINARY ARGS...: starts BINARY in the background in DIR, with the environment
# assignments in LAUNCH_ENV, logging to DIR/log; records its PID in DIR/pid and its binary in
# DIR/bin. The server is a child of the calling shell, so that shell can wait for it.
LAUNCH_ENV=()
launch() {
  local dir=$1 bin=$2; shift 2
  [ -x "$bin" ] || { servers_log "$bin is missing: run scripts/install-servers.sh"; return 1; }
  (cd "$dir" && exec env "${LAUNCH_ENV[@]}" nohup "$bin" "$@" >"$dir/log" 2>&1 </dev/null) &
  echo $! >"$dir/pid"
  printf '%s\n' "$bin" >"$dir/bin"
}

start_minio() {
  local dir=$1 port cport key secret ports
  mkdir -p "$dir/data"
  ports=$(free_ports 2); port=$(sed -n 1p <<<"$ports"); cport=$(sed -n 2p <<<"$ports")
  key="wharf-$(random_hex 6)"; secret=$(random_hex 20)
  LAUNCH_ENV=(MINIO_ROOT_USER="$key" MINIO_ROOT_PASSWORD="$secret" MINIO_UPDATE=off
    MINIO_BROWSER=off MINIO_CALLHOME_ENABLE=off)
  launch "$dir" "$(tool_path minio minio)" server --quiet \
    --address "127.0.0.1:$port" --console-address "127.0.0.1:$cport" "$dir/data"
  cat >"$dir/env" <<EOF
export WHARF_TEST_MINIO_ENDPOINT=http://127.0.0.1:$port
export WHARF_TEST_MINIO_ACCESS_KEY=$key
export WHARF_TEST_MINIO_SECRET_KEY=$secret
EOF
  printf 'curl -fsS -o /dev/null -m 2 http://127.0.0.1:%s/minio/health/ready\n' "$port" >"$dir/ready"
}

start_seaweedfs() {
  local dir=$1 key secret p
  mkdir -p "$dir/data"
  mapfile -t p < <(free_ports 8)
  key="wharf-$(random_hex 6)"; secret=$(random_hex 20)
  cat >"$dir/s3.json" <<EOF
{"identities": [{"name": "wharf-test",
  "credentials": [{"accessKey": "$key", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
  chmod 600 "$dir/s3.json"
  # Every port is explicit (defaults are fixed and clash between runs); Iceberg and Lance
  # endpoints are off, telemetry is off, the local sockets that can be placed live in $dir.
  # Every bucket is a collection with volumes of its own: small volumes and a high count keep
  # the many buckets of a test run from exhausting them ("No writable volumes").
  LAUNCH_ENV=()
  launch "$dir" "$(tool_path seaweedfs weed)" server \
    -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$dir/data" \
    -master.volumeSizeLimitMB=64 -volume.max=1000 -volume.preStopSeconds=0 -master.telemetry=false \
    -master.port="${p[0]}" -master.port.grpc="${p[1]}" \
    -volume.port="${p[2]}" -volume.port.grpc="${p[3]}" \
    -filer.port="${p[4]}" -filer.port.grpc="${p[5]}" -filer.localSocket="$dir/filer.sock" \
    -s3 -s3.port="${p[6]}" -s3.port.grpc="${p[7]}" -s3.localSocket="$dir/s3.sock" \
    -s3.port.iceberg=0 -s3.port.lance=0 -s3.config="$dir/s3.json"
  # weed puts its gRPC sockets in /tmp whatever TMPDIR says; remember them for cleanup.
  printf '/tmp/seaweedfs-%s-grpc-%s.sock\n' master "${p[1]}" volume "${p[3]}" filer "${p[5]}" s3 "${p[7]}" \
    >"$dir/sockets"
  cat >"$dir/env" <<EOF
export WHARF_TEST_SEAWEEDFS_ENDPOINT=http://127.0.0.1:${p[6]}
export WHARF_TEST_SEAWEEDFS_ACCESS_KEY=$key
export WHARF_TEST_SEAWEEDFS_SECRET_KEY=$secret
EOF
  # Ready when a SigV4-signed ListBuckets succeeds.
  printf 'curl -fsS -o /dev/null -m 2 --aws-sigv4 aws:amz:us-east-1:s3 -u %s:%s http://127.0.0.1:%s/\n' \
    "$key" "$secret" "${p[6]}" >"$dir/ready"
}

start_fakegcs() {
  local dir=$1 port
  mkdir -p "$dir/data"
  port=$(free_ports 1)
  LAUNCH_ENV=()
  launch "$dir" "$(tool_path fakegcs fake-gcs-server)" -host 127.0.0.1 -port "$port" -scheme http \
    -backend filesystem -filesystem-root "$dir/data" -public-host "127.0.0.1:$port" \
    -external-url "http://127.0.0.1:$port" -log-level warn
  printf 'export WHARF_TEST_FAKEGCS_ENDPOINT=http://127.0.0.1:%s\n' "$port" >"$dir/env"
  printf 'curl -fsS -o /dev/null -m 2 http://127.0.0.1:%s/storage/v1/b\n' "$port" >"$dir/ready"
}

# The well-known development account every Azure tool knows, plus one with a random key so a
# test can plant a key nobody else has (the secrets scan).
AZURITE_DEV_ACCOUNT=devstoreaccount1
AZURITE_DEV_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

start_azurite() {
  local dir=$1 port account key
  mkdir -p "$dir/data"
  port=$(free_ports 1)
  account="wharf$(random_hex 4)"
  key=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
  LAUNCH_ENV=(AZURITE_ACCOUNTS="$account:$key;$AZURITE_DEV_ACCOUNT:$AZURITE_DEV_KEY")
  launch "$dir" "$(tool_path azurite azurite-blob)" --blobHost 127.0.0.1 --blobPort "$port" \
    --location "$dir/data" --silent --disableTelemetry --skipApiVersionCheck
  {
    printf 'export WHARF_TEST_AZURITE_ENDPOINT=http://127.0.0.1:%s\n' "$port"
    printf 'export WHARF_TEST_AZURITE_ACCOUNT=%s\n' "$account"
    printf 'export WHARF_TEST_AZURITE_KEY=%s\n' "$key"
  } >"$dir/env"
  # Any HTTP answer means it listens (an unsigned request gets an error status).
  printf 'curl -sS -o /dev/null -m 2 http://127.0.0.1:%s/\n' "$port" >"$dir/ready"
}

# start_nats DIR: a three-node JetStream cluster on loopback, one node per DIR/nK with its pid,
# log, data and the arguments it was started with (DIR/nK/args, one a line), so a test can
# SIGKILL a node by its PID and start it again the same way (internal/testenv).
start_nats() {
  local dir=$1 p i d routes urls=() arg
  mapfile -t p < <(free_ports 9) # per node: client, monitoring, cluster
  routes="nats://127.0.0.1:${p[2]},nats://127.0.0.1:${p[5]},nats://127.0.0.1:${p[8]}"
  LAUNCH_ENV=()
  for i in 0 1 2; do
    d="$dir/${NATS_NODES[$i]}"
    mkdir -p "$d/data"
    local args=(-a 127.0.0.1 -p "${p[$((i * 3))]}" -m "${p[$((i * 3 + 1))]}" -js -sd "$d/data"
      -n "wharf-${NATS_NODES[$i]}" --cluster_name wharf-test --cluster "nats://127.0.0.1:${p[$((i * 3 + 2))]}"
      --routes "$routes")
    launch "$d" "$(tool_path nats-server nats-server)" "${args[@]}"
    : >"$d/args"
    for arg in "${args[@]}"; do printf '%s\n' "$arg" >>"$d/args"; done
    printf 'curl -fsS -o /dev/null -m 2 "http://127.0.0.1:%s/healthz?js-enabled-only=true"\n' "${p[$((i * 3 + 1))]}" >"$d/ready"
    urls+=("nats://127.0.0.1:${p[$((i * 3))]}")
  done
  {
    printf 'export WHARF_TEST_NATS_URLS=%s\n' "$(IFS=,; echo "${urls[*]}")"
    printf 'export WHARF_TEST_NATS_DIR=%s\n' "$dir"
  } >"$dir/env"
}

# pg_bin: the newest installed PostgreSQL server's bin directory (Debian's postgresql package).
pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] && [ -x "$d/postgres" ] || { servers_log "PostgreSQL is not installed: scripts/install-servers.sh postgres"; return 1; }
  printf '%s\n' "$d"
}

# start_postgres DIR: initdb + postgres on a free loopback port with password authentication.
# PostgreSQL refuses to run as root, so under root the cluster lives in its own directory
# owned by the postgres user and the server runs as that user (setpriv execs, so the recorded
# PID is the postmaster's own).
start_postgres() {
  local dir=$1 bin port pw data as=()
  bin=$(pg_bin) || return 1
  port=$(free_ports 1)
  pw=$(random_hex 16)
  data=$(mktemp -d "${TMPDIR:-/tmp}/wharf-pg.XXXXXX")
  printf '%s\n' "$data" >"$dir/datadir"
  printf '%s\n' "$pw" >"$data/pwfile"
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres:postgres "$data"
    as=(/usr/bin/setpriv --reuid=postgres --regid=postgres --init-groups --)
  fi
  "${as[@]}" "$bin/initdb" -D "$data/db" -U wharf --auth=scram-sha-256 --pwfile="$data/pwfile" \
    -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { tail -n 20 "$dir/initdb.log" >&2; return 1; }
  rm -f "$data/pwfile"
  LAUNCH_ENV=()
  launch "$dir" "${as[@]}" "$bin/postgres" -D "$data/db" \
    -c listen_addresses=127.0.0.1 -p "$port" -k "$data" -c fsync=off -c full_page_writes=off \
    -c synchronous_commit=off -c max_connections=100
  printf '%s\n' "$bin/postgres" >"$dir/bin"
  cat >"$dir/env" <<ENVEOF
export WHARF_TEST_POSTGRES_URL=postgres://wharf@127.0.0.1:$port/postgres
export WHARF_TEST_POSTGRES_PASSWORD=$pw
ENVEOF
  printf '%s -q -h 127.0.0.1 -p %s -U wharf -d postgres\n' "$bin/pg_isready" "$port" >"$dir/ready"
}

# wait_ready DIR NAME: polls DIR/ready until it succeeds, the server dies, or the timeout.
wait_ready() {
  local dir=$1 name=$2 pid start=$SECONDS
  pid=$(cat "$dir/pid")
  while ! bash "$dir/ready" >/dev/null 2>&1; do
    if ! alive "$pid"; then
      servers_log "$name (pid $pid) exited before it was ready; last lines of $dir/log:"
      tail -n 40 "$dir/log" >&2 || true
      return 1
    fi
    if [ $((SECONDS - start)) -ge "$SERVERS_READY_TIMEOUT" ]; then
      servers_log "$name (pid $pid) not ready after ${SERVERS_READY_TIMEOUT}s; last lines of $dir/log:"
      tail -n 40 "$dir/log" >&2 || true
      return 1
    fi
    sleep 0.2
  done
  servers_log "$name ready after $((SECONDS - start))s (pid $pid)"
}

# retake_port RUN NAME: a single-port server (minio, seaweedfs, fakegcs, azurite) that exited
# because its free port was taken between free_ports and its bind (another process on this
# machine) is started again on a new port, up to 3 times; anything else fails as it was.
retake_port() {
  local run=$1 name=$2 try
  case $name in minio | seaweedfs | fakegcs | azurite) ;; *) return 1 ;; esac
  for try in 1 2 3; do
    grep -qE 'EADDRINUSE|address already in use' "$run/$name/log" 2>/dev/null || return 1
    servers_log "$name: its port was taken before it could bind; starting it again on another (try $try)"
    stop_one "$run/$name" 3
    mv "$run/$name/log" "$run/$name/log.$try"
    "start_$name" "$run/$name"
    wait_ready "$run/$name" "$name" && return 0
  done
  return 1
}

servers_start() {
  local run=$1 name
  mkdir -p "$run/minio" "$run/seaweedfs" "$run/fakegcs" "$run/azurite" "$run/nats" "$run/postgres"
  chmod 700 "$run" # the env, s3.json and ready files hold the run's keys
  start_minio "$run/minio"
  start_seaweedfs "$run/seaweedfs"
  start_fakegcs "$run/fakegcs"
  start_azurite "$run/azurite"
  start_nats "$run/nats"
  start_postgres "$run/postgres" || return 1
  for name in minio seaweedfs fakegcs azurite "${NATS_NODES[@]/#/nats/}" postgres; do
    wait_ready "$run/$name" "$name" && continue
    retake_port "$run" "$name" || return 1
  done
  { echo "export WHARF_TEST_SERVERS=1"; cat "$run/minio/env" "$run/seaweedfs/env" "$run/fakegcs/env" \
    "$run/azurite/env" "$run/nats/env" "$run/postgres/env"
    # The tools a test runs (not servers): the status page's browser, promtool, and icebird.
    printf 'export WHARF_TEST_CHROMIUM=%s\n' "$(command -v chromium || true)"
    printf 'export WHARF_TEST_PROMTOOL=%s\n' "$(command -v promtool || true)"
    printf 'export WHARF_TEST_ICEBIRD=%s\n' "$(icebird_dir)"; } >"$run/env"
  chmod 600 "$run/env"
}

# stop_one DIR GRACE: stops the server whose PID DIR/pid records, if it is still the binary we
# started: SIGTERM, then SIGKILL after GRACE seconds; reaps it when it is our child.
stop_one() {
  local dir=$1 grace=$2 pid bin start=$SECONDS
  [ -f "$dir/pid" ] || return 0
  pid=$(cat "$dir/pid"); bin=$(cat "$dir/bin" 2>/dev/null || true)
  if alive "$pid" && [ -n "$bin" ] && tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF "$bin"; then
    kill -TERM "$pid" 2>/dev/null || true
    while alive "$pid" && [ $((SECONDS - start)) -lt "$grace" ]; do sleep 0.1; done
    if alive "$pid"; then
      servers_log "$(basename "$dir") (pid $pid) still running ${grace}s after SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
  rm -f "$dir/pid"
}

servers_stop() {
  local run=$1 sock node
  [ -d "$run" ] || return 0
  stop_one "$run/minio" "$SERVERS_STOP_GRACE_MINIO"
  stop_one "$run/seaweedfs" "$SERVERS_STOP_GRACE_SEAWEEDFS"
  stop_one "$run/fakegcs" "$SERVERS_STOP_GRACE_FAKEGCS"
  stop_one "$run/azurite" "$SERVERS_STOP_GRACE_AZURITE"
  for node in "${NATS_NODES[@]}"; do stop_one "$run/nats/$node" "$SERVERS_STOP_GRACE_NATS"; done
  stop_one "$run/postgres" "$SERVERS_STOP_GRACE_POSTGRES"
  if [ -f "$run/postgres/datadir" ]; then
    rm -rf "$(cat "$run/postgres/datadir")"
  fi
  if [ -f "$run/seaweedfs/sockets" ]; then
    while read -r sock; do rm -f "$sock"; done <"$run/seaweedfs/sockets"
  fi
  rm -rf "$run"
}
