#!/usr/bin/env bash
# Builds Alertmanager (the receiver of the notification tests' alerts) from its pinned Go module in
# prometheus/, into a cache of its own outside the repository; skips the build when its inputs
# are unchanged. A script and a cache key apart from build.sh's: adding or upgrading Alertmanager
# does not rebuild the control plane, and a control plane upgrade does not rebuild Alertmanager.
#
# Output: $JANUS_ALERTMANAGER_BIN (default ~/.cache/janus/alertmanager/<hash>/bin), printed on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${JANUS_CACHE_DIR:-$HOME/.cache/janus}/alertmanager
name=alertmanager
# shellcheck source=lib.sh
source "$here/lib.sh"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly

module=github.com/prometheus/alertmanager
version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 }' "$here/alertmanager/go.mod")

# Everything that can change the binary goes into the key.
key=$( { cat "$here/alertmanager/go.mod" "$here/alertmanager/go.sum" "$here/alertmanager/tools.go" \
  "$here/build-alertmanager.sh"; go version; } | sha256sum | cut -c1-16)
out=${JANUS_ALERTMANAGER_BIN:-$cache_root/$key/bin}

up_to_date() { [[ -x $out/alertmanager && -f $out/.complete ]]; }
reuse_or_lock "$cache_root"
echo "alertmanager: building $version into $out (cold build time: see docs/operations.md, Notifications)" >&2
# Only cmd/alertmanager (no amtool). Its web UI is embedded from files committed in the module,
# so nothing is generated. `go build` downloads only the modules that package needs.
(cd "$here/alertmanager" && go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$version -X github.com/prometheus/common/version.Branch=janus-testenv" \
  -o "$out.partial/" "$module/cmd/alertmanager")
publish "$cache_root" "${JANUS_ALERTMANAGER_BIN:-}"
