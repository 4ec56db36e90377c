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

export CGO_ENABLED=0 GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly
export GOMODCACHE=$cache_root/gomod GOCACHE=$cache_root/gobuild

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
if up_to_date; then
  echo "kube-testenv: $k8s_version up to date in $out" >&2
  echo "$out"
  exit 0
fi

# One build at a time per cache: a demo started while the tests build (or two checkouts) would
# otherwise share the .partial folder and remove each other's output. The lock goes with the
# process, however it ends; whoever waited finds the build done.
mkdir -p "$cache_root"
exec 9>"$cache_root/.build.lock"
if ! flock -n 9; then
  echo "kube-testenv: another build of the control plane is running; waiting for it" >&2
  flock 9
fi
if up_to_date; then
  echo "kube-testenv: $k8s_version up to date in $out" >&2
  echo "$out"
  exit 0
fi

echo "kube-testenv: building $k8s_version into $out (a cold build takes about 5-10 minutes on 2 cores)" >&2
rm -rf "$out.partial" && mkdir -p "$out.partial"
start=$SECONDS
(cd "$here" && go mod download && go build -trimpath -buildvcs=false -tags=selinux,notest \
  -ldflags "$ldflags" -o "$out.partial/" ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/etcd ./cmd/kubectl)
# kwok has a module of its own: its k8s.io/* requirements differ from those of k8s.io/kubernetes.
(cd "$here/kwok" && go mod download && go build -trimpath -buildvcs=false -ldflags "-s -w" \
  -o "$out.partial/" sigs.k8s.io/kwok/cmd/kwok)
touch "$out.partial/.complete"
rm -rf "$out" && mv "$out.partial" "$out"
# Keep the two newest builds (another checkout may still be using the previous one); older
# ones are dead weight (about 300 MB each).
if [[ -z ${JANUS_KUBE_BIN:-} ]]; then
  ls -1dt "$cache_root"/*/bin 2>/dev/null | tail -n +3 | xargs -r -n1 dirname | xargs -r rm -rf
fi
echo "kube-testenv: built in $((SECONDS - start))s" >&2
echo "$out"
