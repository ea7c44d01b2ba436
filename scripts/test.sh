#!/usr/bin/env bash
# The one command that runs wharf's whole test suite (README and .ci/run call exactly this):
#
#   scripts/test.sh                         everything: checks, build, servers, go test ./...
#   scripts/test.sh -run TestX ./store/...  the same, with these arguments passed to go test
#
# Steps: Go version check; scripts/install-servers.sh (pinned MinIO, SeaweedFS, staticcheck,
# built once into a per-user cache); gofmt; go vet; staticcheck; go build; MinIO and SeaweedFS
# started on free loopback ports with fresh data dirs; go test -race with the servers in
# WHARF_TEST_* (see internal/testenv), so a missing server fails the run instead of skipping.
# Every server is stopped by its recorded PID on any exit, Ctrl-C included.
#
# WHARF_SKIP_LINT=1 skips gofmt, vet and staticcheck (for quick local runs; CI never sets it).
# Arguments that name no package (none starts with ./, ../ or the module path) get ./... added.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/servers.bash
source scripts/lib/servers.bash

MIN_GO=1.26
MODULE=github.com/wharfdata/wharf
# The build tag of the test hooks (cmd/wharf/testhooks.go): set for the tests only, never in
# a release build, which a test checks.
TEST_TAGS=wharftest
RUN_DIR=""
STEP="start"
started=$SECONDS

step() { STEP=$1; printf '\n==> %s\n' "$1"; }

finish() {
  local rc=$?
  set +e
  trap - INT TERM
  if [ -n "$RUN_DIR" ]; then
    printf '\n==> stopping servers\n'
    servers_stop "$RUN_DIR"
  fi
  if [ "$rc" -eq 0 ]; then
    printf '\nscripts/test.sh: PASS: every check and test passed (%ss)\n' "$((SECONDS - started))"
  else
    printf '\nscripts/test.sh: FAIL: step "%s" failed with exit code %s (%ss)\n' \
      "$STEP" "$rc" "$((SECONDS - started))"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

check_go() {
  local v major minor want_major want_minor
  v=$(go env GOVERSION) # go1.26.8
  IFS=. read -r major minor _ <<<"${v#go}"
  IFS=. read -r want_major want_minor <<<"$MIN_GO"
  if [ "$major" -lt "$want_major" ] || { [ "$major" -eq "$want_major" ] && [ "${minor%%[!0-9]*}" -lt "$want_minor" ]; }; then
    echo "wharf needs Go $MIN_GO or newer; this is $v" >&2
    return 1
  fi
  echo "$v"
}

lint() {
  local unformatted
  step "gofmt"
  unformatted=$(gofmt -l .)
  if [ -n "$unformatted" ]; then
    printf 'not gofmt-formatted (run gofmt -w):\n%s\n' "$unformatted" >&2
    return 1
  fi
  step "go vet"
  go vet ./...
  go vet -tags "$TEST_TAGS" ./...
  step "staticcheck"
  "$(tool_path staticcheck staticcheck)" ./...
  "$(tool_path staticcheck staticcheck)" -tags "$TEST_TAGS" ./...
}

# test_args ARGS...: go test's arguments: the defaults, then ARGS, then ./... unless ARGS name
# a package.
test_args() {
  local a named=""
  for a in "$@"; do
    case "$a" in ./* | ../* | "$MODULE" | "$MODULE"/*) named=1 ;; esac
  done
  TEST_ARGS=(-race -count=1 -timeout 30m -tags "$TEST_TAGS" "$@")
  [ -n "$named" ] || TEST_ARGS+=(./...)
}

step "go version"
check_go
step "install servers and tools"
bash scripts/install-servers.sh
if [ "${WHARF_SKIP_LINT:-}" = 1 ]; then
  echo "WHARF_SKIP_LINT=1: skipping gofmt, vet and staticcheck"
else
  lint
fi
step "go build"
go build ./...

step "start servers"
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/wharf-test.XXXXXX")
servers_start "$RUN_DIR"
# shellcheck source=/dev/null
source "$RUN_DIR/env"
env | grep '^WHARF_TEST_.*ENDPOINT=' | sort

test_args "$@"
step "go test ${TEST_ARGS[*]}"
go test "${TEST_ARGS[@]}"
