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

export CGO_ENABLED=0 GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly
export GOMODCACHE=$cache_root/gomod GOCACHE=$cache_root/gobuild

module=github.com/getsops/sops/v3
# In a one-line require or a require block.
version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' "$here/sops/go.mod")

# Everything that can change the binary goes into the key.
key=$( { cat "$here/sops/go.mod" "$here/sops/go.sum" "$here/sops/tools.go" \
  "$here/build-sops.sh"; go version; } | sha256sum | cut -c1-16)
out=${JANUS_SOPS_BIN:-$cache_root/$key/bin}

up_to_date() { [[ -x $out/sops && -x $out/age-keygen && -f $out/.complete ]]; }
if up_to_date; then
  echo "sops: $version up to date in $out" >&2
  echo "$out"
  exit 0
fi

# One build at a time per cache (see build.sh).
mkdir -p "$cache_root"
exec 9>"$cache_root/.build.lock"
if ! flock -n 9; then
  echo "sops: another build of sops is running; waiting for it" >&2
  flock 9
fi
if up_to_date; then
  echo "sops: $version up to date in $out" >&2
  echo "$out"
  exit 0
fi

echo "sops: building $version into $out (a cold build took 139 s on 2 cores)" >&2
rm -rf "$out.partial" && mkdir -p "$out.partial"
start=$SECONDS
# Only cmd/sops, and age-keygen from the age module sops requires (the documented setup makes
# a key with it). sops has no build tags to leave its cloud KMS clients out; the tests use age
# keys only. `go build` downloads only the modules those packages need.
(cd "$here/sops" && go build -trimpath -buildvcs=false -ldflags "-s -w" \
  -o "$out.partial/" "$module/cmd/sops" filippo.io/age/cmd/age-keygen)
touch "$out.partial/.complete"
rm -rf "$out" && mv "$out.partial" "$out"
# Keep the two newest builds (another checkout may still be using the previous one).
if [[ -z ${JANUS_SOPS_BIN:-} ]]; then
  ls -1dt "$cache_root"/*/bin 2>/dev/null | tail -n +3 | xargs -r -n1 dirname | xargs -r rm -rf
fi
echo "sops: built in $((SECONDS - start))s" >&2
echo "$out"
