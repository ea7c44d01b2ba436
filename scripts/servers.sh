#!/usr/bin/env bash
# Starts the real test servers once, for quick `go test` runs while developing:
#
#   scripts/servers.sh start         install if needed, start every test server, wait until ready
#   eval "$(scripts/servers.sh env)" put WHARF_TEST_* in this shell; then go test ./store/s3/...
#   scripts/servers.sh status        say whether they run, and where
#   scripts/servers.sh stop          stop them by their recorded PIDs and remove their data
#
# They live in $WHARF_SERVERS_DIR (default /tmp/wharf-servers-$UID). scripts/test.sh never uses
# them: it starts its own on other ports.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash

DIR=${WHARF_SERVERS_DIR:-${TMPDIR:-/tmp}/wharf-servers-$(id -u)}

running() {
  local name pid
  [ -f "$DIR/env" ] || return 1
  for name in minio seaweedfs fakegcs azurite nats/n0 nats/n1 nats/n2 postgres; do
    pid=$(cat "$DIR/$name/pid" 2>/dev/null) || return 1
    alive "$pid" || return 1
  done
}

case "${1:-}" in
start)
  if running; then
    servers_log "already running in $DIR"
    exit 0
  fi
  servers_stop "$DIR" # leftovers of a run that died
  bash scripts/install-servers.sh minio seaweedfs fakegcs azurite nats postgres
  if ! servers_start "$DIR"; then
    servers_stop "$DIR"
    exit 1
  fi
  servers_log "running in $DIR; now: eval \"\$(scripts/servers.sh env)\""
  ;;
env)
  running || { servers_log "not running: scripts/servers.sh start"; exit 1; }
  cat "$DIR/env"
  ;;
status)
  if running; then
    printf 'running in %s (pids:' "$DIR"
    for name in minio seaweedfs fakegcs azurite nats/n0 nats/n1 nats/n2 postgres; do printf ' %s %s' "$name" "$(cat "$DIR/$name/pid")"; done
    printf ')\n'
    grep ENDPOINT "$DIR/env"
  else
    echo "not running"
    exit 1
  fi
  ;;
stop)
  servers_stop "$DIR"
  servers_log "stopped"
  ;;
*)
  echo "usage: scripts/servers.sh start|env|status|stop" >&2
  exit 2
  ;;
esac
