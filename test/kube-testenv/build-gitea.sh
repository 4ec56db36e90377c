#!/usr/bin/env bash
# Builds Gitea (the tests' forge: it serves the watched repository over HTTP, sends its push
# webhooks and takes commit statuses) from its Go module source, pinned in gitea/VERSION, into a
# cache of its own outside the repository; skips the build when its inputs are unchanged. Apart
# from build.sh and build-prometheus.sh like those two are from each other: one key per binary.
#
# Output: $JANUS_GITEA_BIN (default ~/.cache/janus/gitea/<hash>/bin), printed on stdout. It holds
# the gitea binary and, beside it in share/, the templates/ and options/ folders the binary reads
# from disk (no bindata tag: embedding them needs the frontend build, which the API does not).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${JANUS_CACHE_DIR:-$HOME/.cache/janus}/gitea

# cgo: v1.26's only SQLite driver is github.com/mattn/go-sqlite3 (tags sqlite and
# sqlite_unlock_notify, as Gitea's own release builds; it compiles SQLite's C source it carries,
# with gcc, so no system library is needed). -mod=mod: the build happens inside the module's own
# source, whose go.sum is taken as it comes.
name=gitea
# shellcheck source=lib.sh
source "$here/lib.sh"
export CGO_ENABLED=1 GOFLAGS=-mod=mod

version=$(awk '$1 == "version" { print $2 }' "$here/gitea/VERSION")
sum=$(awk '$1 == "sum" { print $2 }' "$here/gitea/VERSION")

# Everything that can change the binary goes into the key.
key=$( { cat "$here/gitea/VERSION" "$here/build-gitea.sh"; go version; } | sha256sum | cut -c1-16)
out=${JANUS_GITEA_BIN:-$cache_root/$key/bin}

up_to_date() { [[ -x $out/gitea && -d $out/share/options && -f $out/.complete ]]; }
reuse_or_lock "$cache_root"
echo "gitea: building $version into $out (a cold build takes about 10 minutes on 2 cores)" >&2
# `go mod download` checks the zip against the checksum database; the pin checks it against ours.
info=$(cd "$cache_root" && go mod download -json "code.gitea.io/gitea@$version")
got=$(echo "$info" | awk -F'"' '$2 == "Sum" { print $4 }')
src=$(echo "$info" | awk -F'"' '$2 == "Dir" { print $4 }')
if [[ $got != "$sum" ]]; then
  echo "gitea: code.gitea.io/gitea@$version has hash $got, gitea/VERSION pins $sum" >&2
  exit 1
fi
# The module cache is read-only and `go build` with -mod=mod may write go.mod/go.sum: a copy.
work=$cache_root/src-$version
rm -rf "$work" && mkdir -p "$out.partial/share"
cp -r "$src" "$work" && chmod -R u+w "$work"
# Only the gitea binary (main package at the module root); `go build` downloads only the
# modules its packages need.
tags="sqlite sqlite_unlock_notify"
(cd "$work" && go build -trimpath -buildvcs=false -tags "$tags" \
  -ldflags "-s -w -X main.Version=${version#v} -X 'main.Tags=$tags'" -o "$out.partial/gitea" .)
cp -r "$work/templates" "$work/options" "$out.partial/share/"
rm -rf "$work"
publish "$cache_root" "${JANUS_GITEA_BIN:-}"
