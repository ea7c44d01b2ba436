#!/usr/bin/env bash
# Installs the real servers and tools that wharf's tests run against, by package name, at pinned
# versions, into a per-user cache outside the checkout. Each install lands in its own folder
# NAME-VERSION and is reused when present, so a fresh clone on the same machine builds nothing.
#
#   scripts/install-servers.sh [minio] [seaweedfs] [fakegcs] [azurite] [nats] [staticcheck] [postgres]
#                              [chromium] [prometheus] [icebird]           (no argument: all)
#
# PostgreSQL comes from Debian's postgresql package (apt-get, as root) rather than the cache, and
# so do the browser of the status page's test (chromium) and promtool (prometheus).
# Azurite comes from npm (the azurite package) into the cache folder, with its node_modules, and so
# does icebird, the JavaScript Iceberg reader internal/icebird's tests run with node.
#
# Prints nothing but progress on stderr; exits non-zero, naming the tool, if an install fails.
set -euo pipefail

TESTBIN=${WHARF_TESTBIN:-${XDG_CACHE_HOME:-$HOME/.cache}/wharf/testbin}
mkdir -p "$TESTBIN"

MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6
STATICCHECK_VERSION=v0.8.2
FAKEGCS_VERSION=v1.56.1
AZURITE_VERSION=3.37.0
ICEBIRD_VERSION=0.3.1
NATS_SERVER_VERSION=v2.15.2

log() { printf 'install-servers: %s\n' "$*" >&2; }

# install NAME VERSION BINARY COMMAND...: runs COMMAND with $dest set when $dest/BINARY is missing.
install() {
  local name=$1 version=$2 bin=$3; shift 3
  dest="$TESTBIN/$name-$version"
  if [ -x "$dest/$bin" ]; then return 0; fi
  log "building $name $version into $dest (first time only; this takes minutes)"
  local tmp="$dest.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  if ! dest="$tmp" "$@"; then
    rm -rf "$tmp"
    log "FAILED to install $name $version"
    return 1
  fi
  rm -rf "$dest"; mv "$tmp" "$dest"
  log "installed $name at $dest/$bin"
}

build_minio() {
  GOBIN="$dest" GOFLAGS= go install "github.com/minio/minio@$MINIO_VERSION"
}

build_seaweedfs() {
  # `go install …/weed@version` is refused: the module's go.mod has a replace directive.
  local mod="github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION" dir
  dir=$(GOFLAGS=-mod=mod go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { log "go mod download $mod gave no directory"; return 1; }
  (cd "$dir" && GOFLAGS=-mod=mod go build -o "$dest/weed" ./weed)
}

build_staticcheck() {
  GOBIN="$dest" GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
}

build_fakegcs() {
  GOBIN="$dest" GOFLAGS= go install "github.com/fsouza/fake-gcs-server@$FAKEGCS_VERSION"
}

build_nats() {
  GOBIN="$dest" GOFLAGS= go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
}

build_azurite() {
  command -v npm >/dev/null || { log "npm is missing: install Debian's npm package"; return 1; }
  (cd "$dest" && npm install --silent --no-audit --no-fund --no-update-notifier \
    "azurite@$AZURITE_VERSION" >/dev/null)
  ln -s node_modules/.bin/azurite-blob "$dest/azurite-blob"
}

# icebird pins its dependencies exactly: hyparquet, and hyparquet-compressors, which brings
# fzstd for the zstd pages wharf's Parquet files have. The install is checked by decoding a
# small zstd frame ("hi") the way hyparquet does.
build_icebird() {
  command -v npm >/dev/null || { log "npm is missing: install Debian's npm package"; return 1; }
  (cd "$dest" && npm install --silent --no-audit --no-fund --no-update-notifier \
    "icebird@$ICEBIRD_VERSION" >/dev/null)
  (cd "$dest" && node --input-type=module --eval "
    await import('icebird')
    const { compressors } = await import('hyparquet-compressors')
    const frame = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x02, 0x11, 0, 0, 0x68, 0x69])
    if (new TextDecoder().decode(compressors.ZSTD(frame, 2)) !== 'hi') throw new Error('zstd decodes wrong')")
}

install_postgres() {
  if ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" != 0 ]; then
    log "PostgreSQL is not installed and this is not root: run apt-get install -y postgresql"
    return 1
  fi
  log "installing Debian's postgresql package"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}

# install_debian PACKAGE BINARY: Debian's PACKAGE unless BINARY is already on the PATH.
install_debian() {
  local pkg=$1 bin=$2
  if command -v "$bin" >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" != 0 ]; then
    log "$bin is not installed and this is not root: run apt-get install -y $pkg"
    return 1
  fi
  log "installing Debian's $pkg package"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
  command -v "$bin" >/dev/null 2>&1 || { log "FAILED to install $pkg: no $bin on the PATH"; return 1; }
}

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(staticcheck minio seaweedfs fakegcs azurite nats postgres chromium prometheus icebird)
for w in "${want[@]}"; do
  case "$w" in
    minio) install minio "$MINIO_VERSION" minio build_minio ;;
    seaweedfs) install seaweedfs "$SEAWEEDFS_VERSION" weed build_seaweedfs ;;
    fakegcs) install fakegcs "$FAKEGCS_VERSION" fake-gcs-server build_fakegcs ;;
    azurite) install azurite "$AZURITE_VERSION" azurite-blob build_azurite ;;
    # A folder, not a binary: install's -x test is true of a searchable directory.
    icebird) install icebird "$ICEBIRD_VERSION" node_modules/icebird build_icebird ;;
    nats) install nats-server "$NATS_SERVER_VERSION" nats-server build_nats ;;
    staticcheck) install staticcheck "$STATICCHECK_VERSION" staticcheck build_staticcheck ;;
    postgres) install_postgres ;;
    chromium) install_debian chromium chromium ;;
    prometheus) install_debian prometheus promtool ;;
    *) log "unknown tool $w"; exit 2 ;;
  esac
done
