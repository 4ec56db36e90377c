#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from the pinned
# Go modules in this folder and kwok (the SIG pod/node simulator) from its own pinned module in
# kwok/, into a cache outside the repository; skips the build when its inputs are unchanged. helm
# and kustomize are build-render-tools.sh's.
#
# Output: $JANUS_KUBE_BIN (default ~/.cache/janus/kube-testenv/<hash>/bin), printed on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${JANUS_CACHE_DIR:-$HOME/.cache/janus}/kube-testenv
name=kube-testenv
# shellcheck source=lib.sh
source "$here/lib.sh"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly

k8s_version=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$here/go.mod" | head -n 1)
minor=$(echo "$k8s_version" | cut -d. -f2)
ldflags="-s -w \
 -X k8s.io/component-base/version.gitVersion=$k8s_version \
 -X k8s.io/component-base/version.gitMajor=1 \
 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 \
 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

# Everything that can change the binaries goes into the key.
key=$( { cat "$here/go.mod" "$here/go.sum" "$here/build.sh" "$here/kwok/go.mod" "$here/kwok/go.sum" "$here/kwok/tools.go"; find "$here/cmd" -type f -name '*.go' -print0 | sort -z | xargs -0 cat; go version; } | sha256sum | cut -c1-16)
out=${JANUS_KUBE_BIN:-$cache_root/$key/bin}

up_to_date() {
  [[ -x $out/kube-apiserver && -x $out/kube-controller-manager && -x $out/kube-scheduler && -x $out/etcd && -x $out/kubectl && -x $out/kwok && -f $out/.complete ]]
}
reuse_or_lock "$cache_root"
echo "kube-testenv: building $k8s_version into $out (a cold build takes about 5-10 minutes on 2 cores)" >&2
(cd "$here" && go build -trimpath -buildvcs=false -tags=selinux,notest \
  -ldflags "$ldflags" -o "$out.partial/" ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/etcd ./cmd/kubectl)
# kwok has a module of its own: its k8s.io/* requirements differ from those of k8s.io/kubernetes.
(cd "$here/kwok" && go build -trimpath -buildvcs=false -ldflags "-s -w" \
  -o "$out.partial/" sigs.k8s.io/kwok/cmd/kwok)
publish "$cache_root" "${JANUS_KUBE_BIN:-}"
