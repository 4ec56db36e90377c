#!/usr/bin/env bash
# Builds the render tools of sources (docs/sources.md, "The sandbox"): helm from its pinned module
# in helm/ and kustomize (the CLI module) from its own in kustomize/, into the folder $1, with
# CGO_ENABLED=0 and -trimpath, stamped with their versions the way upstream's release builds are
# (`helm version` says v4.3.1, `kustomize version` v5.8.2, not a development build). Two callers,
# one way: build.sh for the tests (with its caches), and the Dockerfile's render-tools stage for
# the image, which copies this script and the two modules' go.mod, go.sum and tools.go.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: build-render-tools.sh <output folder>}
export CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=readonly

# The version `module` is required at in <folder>/go.mod (a one-line require or a require block).
required() { awk -v m="$2" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' "$here/$1/go.mod"; }

helm_version=$(required helm helm.sh/helm/v4)
(cd "$here/helm" && go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
  -o "$out/" helm.sh/helm/v4/cmd/helm)

kustomize_version=$(required kustomize sigs.k8s.io/kustomize/kustomize/v5)
(cd "$here/kustomize" && go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=kustomize/$kustomize_version" \
  -o "$out/" sigs.k8s.io/kustomize/kustomize/v5)
