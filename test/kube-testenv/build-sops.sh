#!/usr/bin/env bash
# Builds sops (the tests encrypt SOPS files with the real tool) and age-keygen from their pinned Go modules in
# sops/, into a cache of its own outside the repository; skips the build when its inputs are
# unchanged. A script and a cache key apart from build.sh's and build-prometheus.sh's: adding or
# upgrading sops rebuilds neither the control plane nor Prometheus, and the other way round.
#
# Output: $JANUS_SOPS_BIN (default ~/.cache/janus/sops/<hash>/bin), printed on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${JANUS_CACHE_DIR:-$HOME/.cache/janus}/sops
name=sops
# shellcheck source=lib.sh
source "$here/lib.sh"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly

module=github.com/getsops/sops/v3
# In a one-line require or a require block.
version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' "$here/sops/go.mod")

# Everything that can change the binary goes into the key.
key=$( { cat "$here/sops/go.mod" "$here/sops/go.sum" "$here/sops/tools.go" \
  "$here/build-sops.sh"; go version; } | sha256sum | cut -c1-16)
out=${JANUS_SOPS_BIN:-$cache_root/$key/bin}

up_to_date() { [[ -x $out/sops && -x $out/age-keygen && -f $out/.complete ]]; }
reuse_or_lock "$cache_root"
echo "sops: building $version into $out (a cold build took 139 s on 2 cores)" >&2
# Only cmd/sops, and age-keygen from the age module sops requires (the documented setup makes
# a key with it). sops has no build tags to leave its cloud KMS clients out; the tests use age
# keys only. `go build` downloads only the modules those packages need.
(cd "$here/sops" && go build -trimpath -buildvcs=false -ldflags "-s -w" \
  -o "$out.partial/" "$module/cmd/sops" filippo.io/age/cmd/age-keygen)
publish "$cache_root" "${JANUS_SOPS_BIN:-}"
