# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source it
# engine-kit/lib.sh — what up and down share: where the kit keeps its state,
# the safe daemon's flags, and a step logger. Sourced, never run.

KIT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$KIT_DIR/.." && pwd)

# Everything the kit makes lives here: unpacked sources, built binaries, the
# base rootfs, the daemon's pid and log. Removing it forces a cold start.
ENGINE_DIR=${ENGINE_DIR:-/var/cache/segdiff-engine}
RUN_DIR=$ENGINE_DIR/run
BIN_DIR=$ENGINE_DIR/bin
SRC_DIR=$ENGINE_DIR/src
CTX_DIR=$ENGINE_DIR/contexts

KURTOSIS_VERSION=1.20.0
# A closed loopback port: every process that could pull an image gets it as
# its HTTP(S) proxy, so a pull fails at once and locally.
CLOSED_PROXY=http://127.0.0.1:9
# The kit's own Docker socket; DOCKER_HOST points every docker and kurtosis
# call of the kit at it.
DOCKER_SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
export DOCKER_HOST=unix://$DOCKER_SOCK
export DOCKER_BUILDKIT=0

# The daemon never touches the host's firewall or forwarding, publishes on
# loopback only and resolves no outside name.
DOCKERD_FLAGS=(--iptables=false --ip-masq=false --ip-forward=false
  --ip 127.0.0.1 --dns 127.0.0.1
  --host "unix://$DOCKER_SOCK" --pidfile "$RUN_DIR/dockerd.pid")

LABEL_SOURCE=org.segdiff.engine-kit.source-hash
LABEL_REPLACES=org.segdiff.engine-kit.replaces
LABEL_BUILT_FROM=org.segdiff.engine-kit.built-from

step_started=$SECONDS
step() {
  printf 'engine-kit: %s (at %d s)\n' "$*" "$((SECONDS - step_started))" >&2
}
die() {
  printf 'engine-kit: %s\n' "$*" >&2
  exit 1
}

# dockerd_pid prints the pid of the daemon the kit started, if it runs.
dockerd_pid() {
  local pid
  [ -f "$RUN_DIR/dockerd.pid" ] || return 1
  pid=$(cat "$RUN_DIR/dockerd.pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# kurtosis runs the kit's CLI with analytics off and pulls made to fail.
kurtosis() {
  HTTP_PROXY=$CLOSED_PROXY HTTPS_PROXY=$CLOSED_PROXY NO_PROXY=127.0.0.1,localhost \
    "$BIN_DIR/kurtosis" "$@"
}

# bridges lists the host's docker0 and br-* bridges.
bridges() {
  ip -o link show type bridge 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}' |
    grep -E '^(docker0|br-[0-9a-f]+)$' || true
}
