# Sourced by the build scripts of this folder: what every tool's build shares.
#
# One Go module cache and one build cache for all of them (${JANUS_CACHE_DIR:-~/.cache/janus}/go/):
# the control plane, kwok, helm, kustomize, Prometheus, Alertmanager, sops and Gitea share many
# modules (golang.org/x/*, grpc, protobuf, the Prometheus client, OpenTelemetry), downloaded and
# compiled once instead of once per tool. Go's caches are safe for builds running at once. Each
# tool keeps its own output folder, named by a key of its inputs, and its own lock.
#
# A script sets `name` (for messages), `out` (its output folder) and `up_to_date` (a function),
# then calls `reuse_or_lock`, builds into "$out.partial", and calls `publish`.

go_cache=${JANUS_CACHE_DIR:-$HOME/.cache/janus}/go
export GOWORK=off GOTOOLCHAIN=local GOMODCACHE=$go_cache/mod GOCACHE=$go_cache/build

# Prints "$out" and exits when the build is there; otherwise takes the tool's lock (waiting for a
# build already running, which may leave nothing to do) and returns with "$out.partial" empty.
reuse_or_lock() {
  local lock_dir=$1
  if up_to_date; then
    echo "$name: up to date in $out" >&2
    echo "$out"
    exit 0
  fi
  # One build at a time per tool: a demo started while the tests build (or two checkouts) would
  # otherwise share the .partial folder and remove each other's output. The lock goes with the
  # process, however it ends; whoever waited finds the build done.
  mkdir -p "$lock_dir"
  exec 9>"$lock_dir/.build.lock"
  if ! flock -n 9; then
    echo "$name: another build is running; waiting for it" >&2
    flock 9
  fi
  if up_to_date; then
    echo "$name: up to date in $out" >&2
    echo "$out"
    exit 0
  fi
  rm -rf "$out.partial" && mkdir -p "$out.partial"
  build_started=$SECONDS
}

# Moves "$out.partial" into place, keeps the two newest builds of the tool (another checkout may
# still be using the previous one; older ones are dead weight) unless the caller chose the
# folder ($2: the variable that overrides it, set), and prints "$out".
publish() {
  local lock_dir=$1 override=${2:-}
  touch "$out.partial/.complete"
  rm -rf "$out" && mv "$out.partial" "$out"
  if [[ -z $override ]]; then
    ls -1dt "$lock_dir"/*/bin 2>/dev/null | tail -n +3 | xargs -r -n1 dirname | xargs -r rm -rf
  fi
  echo "$name: built in $((SECONDS - build_started))s" >&2
  echo "$out"
}
