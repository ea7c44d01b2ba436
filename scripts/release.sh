#!/usr/bin/env bash
# Builds the release binary of wharf, the one way it is built (docs/cli.md#building-wharf):
#
#   scripts/release.sh [-o OUT] [VERSION]     OUT defaults to ./wharf; VERSION to git describe
#   scripts/release.sh -d DIR [VERSION]       a release: one binary per platform of PLATFORMS
#                                             (default linux/amd64 linux/arm64 darwin/amd64
#                                             darwin/arm64 windows/amd64), named
#                                             wharf-VERSION-OS-ARCH[.exe], and DIR/SHA256SUMS
#
# CGO_ENABLED=0: a static binary that needs no C library on the host (net and os/user, the only
# packages that would use cgo, fall back to Go: Go's DNS resolver, /etc/passwd). -trimpath keeps
# the builder's paths out; -s -w drops the symbol table and DWARF. GOOS and GOARCH pass through.
# The version, commit and build date (UTC; SOURCE_DATE_EPOCH when set, for a reproducible
# build) are stamped into main.version, main.commit and main.date (wharf version).
#
# Then it checks what it built and fails, naming the check, if the binary was built with cgo
# or is larger than MAX_MIB. cmd/wharf's TestReleaseBuild runs this script and inspects the
# binary too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The most the stripped binary may weigh, in MiB (issue 22's 64, raised to 66 when export began
# committing Iceberg tables: iceberg-go's schema evolution and file replacement took the binary
# to 64.9 MiB; docs/cli.md's table). bench/binsize shows what weighs what.
MAX_MIB=66

# Build tags of dependencies, each dropping code wharf never runs (cmd/wharf's releaseTags must
# match; TestReleaseBuild checks):
#   grpcnotrace        gRPC (linked by the Cloud Storage SDK and arrow's Flight) leaves out
#                      golang.org/x/net/trace, whose init registers /debug/requests pages on
#                      http.DefaultServeMux (wharf serves none) and renders them with
#                      html/template. A reachable template execution makes the linker keep
#                      every exported method of every type (reflect.Value.MethodByName): 15 MiB.
#   disable_grpc_modules
#                      the Cloud Storage SDK's documented opt-out of its gRPC DirectPath
#                      modules (gRPC's xDS and RLS balancers, which register envoy's whole
#                      protobuf API at init): 10 MiB. wharf talks to Cloud Storage over its
#                      JSON API (storage.NewClient), which the tag leaves as it is.
# (arrow_json_stdlib, which had arrow-go use encoding/json rather than goccy/go-json, saved
# 1.3 MiB; it is gone since wharf links iceberg-go, whose geoarrow-go dependency implements
# arrow's builders against goccy/go-json and does not build with it.)
TAGS=grpcnotrace,disable_grpc_modules

out=./wharf
dist=
case "${1:-}" in
-o) out=$2; shift 2 ;;
-d) dist=$2; shift 2 ;;
esac
version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=$(git rev-parse HEAD 2>/dev/null || echo "")
date=$(date -u ${SOURCE_DATE_EPOCH:+-d "@$SOURCE_DATE_EPOCH"} +%Y-%m-%dT%H:%M:%SZ)

# build OUT: one binary for the GOOS and GOARCH of the environment, checked.
build() {
  local out=$1
  CGO_ENABLED=0 go build -trimpath -tags "$TAGS" \
    -ldflags "-s -w -X main.version=$version -X main.commit=$commit -X main.date=$date" \
    -o "$out" ./cmd/wharf
  if ! go version -m "$out" | grep -q $'^\tbuild\tCGO_ENABLED=0$'; then
    echo "scripts/release.sh: $out was not built with CGO_ENABLED=0: it would need the host's C library" >&2
    exit 1
  fi
  local size
  size=$(wc -c <"$out")
  if [ "$size" -gt $((MAX_MIB << 20)) ]; then
    echo "scripts/release.sh: $out is $size bytes, over the $MAX_MIB MiB bound (bench/binsize shows what weighs what;" \
      "a jump of ~15 MiB means something reaches reflect.Value.Method again:" \
      "go build -tags $TAGS -ldflags=-dumpdep -o /dev/null ./cmd/wharf 2>&1 | grep ReflectMethod)" >&2
    exit 1
  fi
  printf '%s: %s bytes (%s MiB), static, version %s\n' "$out" "$size" "$(awk -v s="$size" 'BEGIN{printf "%.1f", s/1048576}')" "$version"
}

if [ -z "$dist" ]; then
  build "$out"
  exit 0
fi
mkdir -p "$dist"
names=()
for p in ${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}; do
  os=${p%/*} arch=${p#*/}
  name=wharf-$version-$os-$arch
  [ "$os" = windows ] && name=$name.exe
  GOOS=$os GOARCH=$arch build "$dist/$name"
  names+=("$name")
done
(cd "$dist" && sha256sum "${names[@]}" >SHA256SUMS)
echo "$dist/SHA256SUMS: ${#names[@]} binaries (verify: cd $dist && sha256sum -c SHA256SUMS)"
