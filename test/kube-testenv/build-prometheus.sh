#!/usr/bin/env bash
# Builds Prometheus (the tests' metric source for metric analysis) from its pinned Go module in
# prometheus/, into a cache of its own outside the repository; skips the build when its inputs
# are unchanged. A script and a cache key apart from build.sh's: adding or upgrading Prometheus
# does not rebuild the control plane, and a control plane upgrade does not rebuild Prometheus.
#
# Output: $JANUS_PROMETHEUS_BIN (default ~/.cache/janus/prometheus/<hash>/bin), printed on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${JANUS_CACHE_DIR:-$HOME/.cache/janus}/prometheus
name=prometheus
# shellcheck source=lib.sh
source "$here/lib.sh"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly

module=github.com/prometheus/prometheus
version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 }' "$here/prometheus/go.mod")

# Everything that can change the binary goes into the key.
key=$( { cat "$here/prometheus/go.mod" "$here/prometheus/go.sum" "$here/prometheus/tools.go" \
  "$here/build-prometheus.sh"; go version; } | sha256sum | cut -c1-16)
out=${JANUS_PROMETHEUS_BIN:-$cache_root/$key/bin}

up_to_date() { [[ -x $out/prometheus && -f $out/.complete ]]; }
reuse_or_lock "$cache_root"
echo "prometheus: building $version into $out (a cold build takes about 5 minutes on 2 cores)" >&2
# Only cmd/prometheus (no promtool). remove_all_sd leaves out every service discovery but the
# static, file and http ones (the tests scrape a static target): the cloud SDKs it drops are
# most of the build. No builtinassets tag: the web UI's assets are not embedded (the API serves).
# `go build` downloads only the modules those packages need (`go mod download` would take all).
(cd "$here/prometheus" && go build -trimpath -buildvcs=false -tags=remove_all_sd \
  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$version -X github.com/prometheus/common/version.Branch=janus-testenv" \
  -o "$out.partial/" "$module/cmd/prometheus")
publish "$cache_root" "${JANUS_PROMETHEUS_BIN:-}"
