#!/usr/bin/env bash
# The README's main job: start a local cluster (sokovan-manager + one
# sokovan-agent) on the built-in defaults, import a busybox image into the
# agent and run a demo session through the `sokovan` CLI.
#
#   examples/local-cluster.sh [BUILD_DIR]        start (or reuse) and run the demo
#   examples/local-cluster.sh stop [BUILD_DIR]   stop the local cluster
#
# State lives where the daemons keep it by default (/var/lib/sokovan); logs
# and pid files go to /run/sokovan. With SOKOVAN_DEMO_DIR=DIR (an absolute,
# writable directory; created when missing) the whole cluster lives under
# DIR instead: DIR/lib for what /var/lib/sokovan holds, DIR/run for what
# /run/sokovan holds (the manager's socket too), and the manager listens on
# no TCP port, so it never meets a cluster started without DIR. The cluster
# keeps running after the demo so you can try the CLI; `make demo-stop` (with
# the same SOKOVAN_DEMO_DIR) ends its sessions and stops it.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

action=start
if [ "${1:-}" = stop ]; then action=stop; shift; fi
BUILD=${1:-build}

die() { echo "local-cluster: $*" >&2; exit 1; }

[ -x "$BUILD/bin/sokovan-manager" ] || die "no $BUILD/bin/sokovan-manager: build first (make all)"
BIN=$(cd "$BUILD/bin" && pwd)
DIR=${SOKOVAN_DEMO_DIR:-}

# DIR is checked before anything is started or created outside it: an
# absolute path (the daemons resolve none against their working directory)
# that this user can create files in.
check_dir() {
    case $DIR in
        /*) ;;
        *) die "SOKOVAN_DEMO_DIR must be an absolute path, not '$DIR'" ;;
    esac
    case $DIR in
        *[[:space:],=:\;]*) die "SOKOVAN_DEMO_DIR '$DIR' has a space, ',', '=', ':' or ';', which the daemons' list flags would split" ;;
    esac
    # sun_path holds 107 bytes and a NUL
    [ ${#DIR} -le 90 ] || die "SOKOVAN_DEMO_DIR '$DIR' is too long for the manager's Unix socket (at most 90 characters)"
    [ "$action" = stop ] && { [ -d "$DIR" ] || die "SOKOVAN_DEMO_DIR '$DIR' does not exist: no cluster to stop"; return 0; }
    mkdir -p "$DIR" 2>/dev/null || die "cannot create SOKOVAN_DEMO_DIR '$DIR'"
    local probe="$DIR/.local-cluster-probe.$$"
    ( : >"$probe" ) 2>/dev/null || die "SOKOVAN_DEMO_DIR '$DIR' is not writable"
    rm -f "$probe"
}

if [ "$action" = start ] && [ "$(id -u)" != 0 ]; then
    die "the agent runs containers (namespaces, cgroups): run as root"
fi

MGR_ARGS=()
AGENT_ARGS=()
CLI_ARGS=()
if [ -n "$DIR" ]; then
    check_dir
    DIR=$(cd "$DIR" && pwd -P)
    LIB=$DIR/lib
    RUN=$DIR/run
    SOCK=$RUN/manager.sock
    MGR_ARGS=(--data-dir "$LIB/manager" --listen "$SOCK" --tcp none)
    AGENT_ARGS=(--data-dir "$LIB/manager" --manager "unix:$SOCK"
                --state-dir "$LIB/agent-agent1" --run-dir "$RUN/agent-agent1")
    CLI_ARGS=(--endpoint "unix:$SOCK")
else
    LIB=/var/lib/sokovan
    RUN=/run/sokovan
fi
MGR_PID=$RUN/manager.pid
AGENT_PID=$RUN/agent1.pid
KEY=$LIB/manager/admin.key

cli() { "$BIN/sokovan" "${CLI_ARGS[@]}" --key-file "$KEY" "$@"; }

# The daemon removes its pid file as it exits: read it once, quietly. The
# pid counts only while it is a live (not zombie) process started with this
# very pid file, so a stale file whose pid was reused (a reboot, a kill -9)
# never makes stop signal another program or another cluster.
alive() {
    local p
    p=$(cat "$1" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 1
    [ "$(sed 's/.*) //; s/ .*//' "/proc/$p/stat" 2>/dev/null)" != Z ] || return 1
    tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qxF -- "$1"
}

stop_one() {
    local pidfile=$1 name=$2 i
    alive "$pidfile" || return 0
    kill -TERM "$(cat "$pidfile")"
    for i in $(seq 1 100); do alive "$pidfile" || { echo "stopped $name"; return 0; }; sleep 0.1; done
    echo "$name did not stop within 10 s" >&2
    return 1
}

# An agent keeps its kernels running across its own restart, so stopping
# the daemons alone would leave the sessions' processes, cgroups and mounts
# behind: end every active session first and wait until the agent has
# destroyed their containers.
end_sessions() {
    local ids i
    alive "$MGR_PID" && alive "$AGENT_PID" && [ -f "$KEY" ] || return 0
    ids=$(cli ps | awk 'NR > 1 { print $1 }') || {
        echo "local-cluster: cannot list the sessions; their containers may stay under $RUN/agent-agent1" >&2
        return 1
    }
    for i in $ids; do cli terminate "$i" --force >/dev/null || true; done
    for i in $(seq 1 300); do
        ids=$(cli ps | awk 'NR > 1 { print $1 }') || return 1
        [ -z "$ids" ] && return 0
        sleep 0.1
    done
    echo "local-cluster: sessions still active after 30 s:" >&2
    cli ps >&2
    return 1
}

if [ "$action" = stop ]; then
    if alive "$AGENT_PID" && ! alive "$MGR_PID"; then
        echo "local-cluster: the manager is down, so the agent's sessions cannot be ended; their containers stay under $RUN/agent-agent1" >&2
    fi
    rc=0
    end_sessions || rc=1
    stop_one "$AGENT_PID" sokovan-agent || rc=1
    stop_one "$MGR_PID" sokovan-manager || rc=1
    exit $rc
fi

mkdir -p "$RUN"

# A busybox image: the static busybox from Debian plus its applet links,
# packed like `docker export` output.
make_busybox_tar() {
    local out=$1 root
    root=$(mktemp -d "$RUN/busybox-rootfs.XXXXXX")
    mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/root" "$root/proc" \
        "$root/sys" "$root/dev"
    chmod 1777 "$root/tmp"
    cp /bin/busybox "$root/bin/busybox"
    for a in $(/bin/busybox --list); do
        [ "$a" = busybox ] || ln -sf busybox "$root/bin/$a"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nwork:x:1000:1000:work:/tmp:/bin/sh\n' > "$root/etc/passwd"
    printf 'root:x:0:\nwork:x:1000:\n' > "$root/etc/group"
    tar -C "$root" -cf "$out" .
    rm -rf "$root"
}

if ! alive "$MGR_PID"; then
    echo "== starting sokovan-manager (state in $LIB/manager, log $RUN/manager.log)"
    "$BIN/sokovan-manager" "${MGR_ARGS[@]}" --bootstrap-agents agent1 \
        --pidfile "$MGR_PID" >"$RUN/manager.log" 2>&1 &
fi
if ! alive "$AGENT_PID"; then
    tar_path="$RUN/busybox.tar"
    make_busybox_tar "$tar_path"
    echo "== starting sokovan-agent agent1 (log $RUN/agent1.log); mock GPUs stand in for CUDA"
    "$BIN/sokovan-agent" "${AGENT_ARGS[@]}" --agent-id agent1 --pidfile "$AGENT_PID" \
        --plugins "cpu;mem;mock:count=2,prefix=cuda" \
        --import-image "busybox=$tar_path" >"$RUN/agent1.log" 2>&1 &
fi

# Wait until the agent has registered (the manager writes the admin key on
# its first start; the agent registers once its key file exists). A
# restarted manager lists agent1 from its database before the agent is
# back, so the check is for the image the agent reports when it registers.
for i in $(seq 1 300); do
    if [ -f "$KEY" ] && cli images 2>/dev/null | grep -q '^busybox '; then
        break
    fi
    if [ "$i" = 300 ]; then
        echo "local-cluster: the agent did not register within 30 s; see $RUN/*.log" >&2
        tail -n 20 "$RUN/manager.log" "$RUN/agent1.log" >&2 || true
        exit 1
    fi
    sleep 0.1
done

echo "== sokovan agents"
cli agents
echo "== sokovan images"
cli images
# A whole (mock) GPU: a fraction (--gpu 0.5) is refused on an agent that
# cannot enforce shares (mock GPUs, or CUDA without an MPS control daemon)
# unless the group allows it (--allow-unenforced-fractions on).
echo "== sokovan run --wait: a demo session on 1 CPU, 256 MiB and one (mock) GPU"
cli run --cpu 1 --mem 256m --gpus 1 --wait busybox -- \
    sh -c 'echo "hello from $(hostname) in session $SOKOVAN_SESSION_ID";
           echo "cluster: $SOKOVAN_CLUSTER_HOSTS, role $SOKOVAN_CLUSTER_ROLE";
           echo "pid inside: $$"; echo "cpus allowed: $(grep Cpus_allowed_list /proc/self/status | cut -f2)"'
echo "== sokovan ps --all"
cli ps --all
echo
if [ -n "$DIR" ]; then
    echo "The local cluster keeps running. Try: $BIN/sokovan --endpoint unix:$SOCK --key-file $KEY ps"
    echo "Stop it with: make demo-stop SOKOVAN_DEMO_DIR=$DIR"
else
    echo "The local cluster keeps running. Try: $BIN/sokovan --key-file $KEY ps"
    echo "Stop it with: make demo-stop"
fi
