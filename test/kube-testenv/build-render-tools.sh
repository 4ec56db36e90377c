#!/usr/bin/env bash
# Builds the render tools of sources (docs/sources.md, "The sandbox"): helm from its pinned module
# in helm/ and kustomize (the CLI module) from its own in kustomize/, with CGO_ENABLED=0 and
# -trimpath, stamped with their versions the way upstream's release builds are (`helm version`
# says v4.3.1, `kustomize version` v5.8.2, not a development build). One way, two callers:
#
#   build-render-tools.sh              the tests: into a cache of its own outside the repository,
#                                      skipped when its inputs are unchanged; prints the folder
#   build-render-tools.sh --into DIR   the Dockerfile's render-tools stage: into DIR, no cache
#
# A script and a cache key apart from build.sh's: the local tier needs these two tools and not the
# control plane, and upgrading one rebuilds neither.
#
# Output: $JANUS_RENDER_TOOLS_BIN (default ~/.cache/janus/render-tools/<hash>/bin), printed on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name="render tools"
# shellcheck source=lib.sh
source "$here/lib.sh"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly

# The version module $2 is required at in $1/go.mod (a one-line require or a require block).
required() { awk -v m="$2" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' "$here/$1/go.mod"; }
helm_version=$(required helm helm.sh/helm/v4)
kustomize_version=$(required kustomize sigs.k8s.io/kustomize/kustomize/v5)

build_into() {
  (cd "$here/helm" && go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
    -o "$1/" helm.sh/helm/v4/cmd/helm)
  (cd "$here/kustomize" && go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=kustomize/$kustomize_version" \
    -o "$1/" sigs.k8s.io/kustomize/kustomize/v5)
}

if [[ ${1:-} == --into ]]; then
  build_into "${2:?usage: build-render-tools.sh [--into <folder>]}"
  exit 0
fi

cache_root=${JANUS_CACHE_DIR:-$HOME/.cache/janus}/render-tools

# Everything that can change the binaries goes into the key.
key=$( { cat "$here/helm/go.mod" "$here/helm/go.sum" "$here/helm/tools.go" \
  "$here/kustomize/go.mod" "$here/kustomize/go.sum" "$here/kustomize/tools.go" \
  "$here/build-render-tools.sh"; go version; } | sha256sum | cut -c1-16)
out=${JANUS_RENDER_TOOLS_BIN:-$cache_root/$key/bin}

up_to_date() { [[ -x $out/helm && -x $out/kustomize && -f $out/.complete ]]; }
reuse_or_lock "$cache_root"
echo "render tools: building helm $helm_version and kustomize $kustomize_version into $out (a cold build takes about 5 minutes of CPU on 2 cores)" >&2
build_into "$out.partial"
publish "$cache_root" "${JANUS_RENDER_TOOLS_BIN:-}"
