# Sourced by Tools/test: a private, throw-away PostgreSQL cluster for the tests that need one.
# Each run gets its own data directory and loopback port, so tests may write, kill and restart
# the server freely without touching a developer's own PostgreSQL or another run's.
#
# Usage: ensure_postgres_server && start_private_postgres
#        stop_private_postgres   (stops and removes it before the shell exits, e.g. to start afresh)
#
# On success start_private_postgres exports:
#   RTDB_TEST_POSTGRES_URL   postgres://rtdb@127.0.0.1:PORT/postgres (trust auth, no password)
#   RTDB_TEST_POSTGRES_BIN   the PostgreSQL bin directory (initdb, pg_ctl, postgres, psql)
#   RTDB_TEST_POSTGRES_DATA  the cluster's data directory
#   RTDB_TEST_POSTGRES_CTL   a script taking stop|start|restart|status for this cluster, run as
#                            the user that owns it (tests restart PostgreSQL in the middle of writes)
# and stops the server and removes its directory when the shell exits. On failure it prints why
# (with the server log), exports nothing and returns 1; the caller decides whether that is fatal.
#
# The functions check every step themselves instead of relying on set -e: Tools/test calls them
# as an if condition, where bash ignores errexit inside the called functions.

# shellcheck source=Tools/lib/system-packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/system-packages.sh"

# PostgreSQL refuses to run as root (CI runs as root), so there the cluster belongs to this
# unprivileged system user.
RTDB_POSTGRES_USER="rtdb-pg"

# Set by ensure_postgres_server / start_private_postgres; not exported.
RTDB_POSTGRES_BIN_DIR=""
RTDB_POSTGRES_TMP_DIR=""
RTDB_POSTGRES_TRAP_SET=""

# Prints the bin directory holding initdb, pg_ctl and postgres, or fails. An explicit
# RTDB_TEST_POSTGRES_BIN wins; then PATH (resolving symlinks such as /usr/local/bin/initdb, since
# the three must come from one installation); then Debian's /usr/lib/postgresql/VERSION/bin and
# the PGDG /usr/pgsql-VERSION/bin, highest version first (Debian puts none of them on PATH).
find_postgres_bin_dir() {
    local candidates=()
    if [ -n "${RTDB_TEST_POSTGRES_BIN:-}" ]; then
        candidates+=("$RTDB_TEST_POSTGRES_BIN")
    fi
    local tool path
    for tool in pg_ctl initdb postgres; do
        path="$(command -v "$tool" 2>/dev/null || true)"
        if [ -n "$path" ]; then
            candidates+=("$(dirname "$(readlink -f "$path")")")
        fi
    done
    local versioned
    versioned="$(ls -d /usr/lib/postgresql/*/bin /usr/pgsql-*/bin 2>/dev/null | sort -V -r || true)"
    while IFS= read -r path; do
        [ -n "$path" ] && candidates+=("$path")
    done <<<"$versioned"

    local dir
    for dir in ${candidates[@]+"${candidates[@]}"}; do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

# Makes sure the PostgreSQL server binaries are installed (installing Debian's `postgresql`
# through ensure_system_packages, which runs apt-get update first) and remembers their directory.
ensure_postgres_server() {
    local dir
    if dir="$(find_postgres_bin_dir)"; then
        RTDB_POSTGRES_BIN_DIR="$dir"
        return 0
    fi
    ensure_system_packages postgresql
    if dir="$(find_postgres_bin_dir)"; then
        RTDB_POSTGRES_BIN_DIR="$dir"
        return 0
    fi
    echo "error: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or in" \
        "/usr/lib/postgresql/*/bin; install PostgreSQL or set RTDB_TEST_POSTGRES_BIN." >&2
    return 1
}

# Runs a command as the cluster's owner: the unprivileged user when root, else as is.
# From inside the temporary directory, so the server never depends on the caller's working
# directory being readable by that user.
_rtdb_postgres_run() {
    if [ "$(id -u)" -eq 0 ]; then
        (cd "$RTDB_POSTGRES_TMP_DIR" && runuser -u "$RTDB_POSTGRES_USER" -- "$@")
    else
        (cd "$RTDB_POSTGRES_TMP_DIR" && "$@")
    fi
}

# Creates the unprivileged user when root and it is missing. Another run may create it at the
# same moment, so a failed useradd only counts when the user still does not exist.
_rtdb_postgres_ensure_user() {
    [ "$(id -u)" -eq 0 ] || return 0
    getent passwd "$RTDB_POSTGRES_USER" >/dev/null && return 0
    if ! command -v runuser >/dev/null 2>&1 || ! command -v useradd >/dev/null 2>&1; then
        echo "runuser and useradd are needed to run PostgreSQL as a non-root user" >&2
        return 1
    fi
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin "$RTDB_POSTGRES_USER" 2>/dev/null ||
        getent passwd "$RTDB_POSTGRES_USER" >/dev/null
}

# Prints a loopback TCP port that is free right now. The kernel picks it when python3 is around;
# otherwise a random high port nobody answers on. Either can race with another process, which is
# why start_private_postgres retries with a new port when the server does not come up.
_rtdb_postgres_free_port() {
    if command -v python3 >/dev/null 2>&1 &&
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null; then
        return 0
    fi
    local port attempt
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# Stops the server and removes its directory. Keeps the exit status it was called with, so an
# EXIT trap chained after it still sees the script's status.
_rtdb_postgres_cleanup() {
    local status=$?
    local dir="$RTDB_POSTGRES_TMP_DIR"
    if [ -n "$dir" ] && [ -d "$dir" ]; then
        if [ -f "$dir/data/postmaster.pid" ]; then
            # Fast shutdown, and immediate if that hangs: the data is thrown away anyway.
            "$dir/ctl" stop >/dev/null 2>&1 ||
                _rtdb_postgres_run "$RTDB_POSTGRES_BIN_DIR/pg_ctl" -D "$dir/data" -s -w -t 20 \
                    -m immediate stop >/dev/null 2>&1 || true
        fi
        rm -rf "$dir"
    fi
    RTDB_POSTGRES_TMP_DIR=""
    return $status
}

# Adds _rtdb_postgres_cleanup to the EXIT trap, before whatever was already there, instead of
# replacing it (Tools/test or another library may have set one). The cleanup goes first so a
# failing earlier trap cannot leave the server running. `&& :` keeps a failed exit status from
# ending the trap under set -e (a failure left of && is exempt) while leaving it in $? for the
# command after it.
_rtdb_postgres_chain_exit_trap() {
    [ -z "$RTDB_POSTGRES_TRAP_SET" ] || return 0 # once per shell, however many clusters it starts
    RTDB_POSTGRES_TRAP_SET=1
    local previous
    previous="$(trap -p EXIT)"
    if [ -n "$previous" ]; then
        # `trap -p` prints: trap -- 'COMMAND' EXIT, quoted for reuse; word 3 is COMMAND.
        eval "set -- $previous"
        trap -- "_rtdb_postgres_cleanup && :; $3" EXIT
    else
        trap -- "_rtdb_postgres_cleanup" EXIT
    fi
}

# Prints why the cluster could not be started, with the server log, and removes what was made.
_rtdb_postgres_fail() {
    echo "error: PostgreSQL could not be started for the tests: $1" >&2
    local log
    for log in "$RTDB_POSTGRES_TMP_DIR/setup.log" "$RTDB_POSTGRES_TMP_DIR/postgres.log"; do
        if [ -s "$log" ]; then
            echo "---- $(basename "$log") ----" >&2
            tail -n 40 "$log" >&2
        fi
    done
    _rtdb_postgres_cleanup || true
    return 1
}

# Stops the cluster start_private_postgres started and removes it, and unexports its variables.
stop_private_postgres() {
    _rtdb_postgres_cleanup || true
    unset RTDB_TEST_POSTGRES_URL RTDB_TEST_POSTGRES_BIN RTDB_TEST_POSTGRES_DATA RTDB_TEST_POSTGRES_CTL
}

start_private_postgres() {
    if [ -n "$RTDB_POSTGRES_TMP_DIR" ]; then
        return 0 # already running for this shell
    fi
    if [ -z "$RTDB_POSTGRES_BIN_DIR" ]; then
        RTDB_POSTGRES_BIN_DIR="$(find_postgres_bin_dir)" || {
            echo "error: PostgreSQL could not be started for the tests: no server binaries" \
                "(call ensure_postgres_server first)" >&2
            return 1
        }
    fi
    local bin="$RTDB_POSTGRES_BIN_DIR"

    local owner=""
    if [ "$(id -u)" -eq 0 ]; then
        owner="$RTDB_POSTGRES_USER"
        _rtdb_postgres_ensure_user || {
            echo "error: PostgreSQL could not be started for the tests: it refuses to run as" \
                "root and the user $RTDB_POSTGRES_USER could not be created" >&2
            return 1
        }
    fi

    # Root's TMPDIR may be private to root, so the unprivileged owner gets /tmp. The name stays
    # short: the socket path (DIR/sock/.s.PGSQL.PORT) must fit in 107 bytes.
    local tmp_parent="${TMPDIR:-/tmp}"
    [ -n "$owner" ] && tmp_parent="/tmp"
    local dir
    dir="$(mktemp -d "${tmp_parent%/}/rtdb-pg.XXXXXX")" || {
        echo "error: PostgreSQL could not be started for the tests: mktemp failed in $tmp_parent" >&2
        return 1
    }
    RTDB_POSTGRES_TMP_DIR="$dir"
    _rtdb_postgres_chain_exit_trap
    mkdir "$dir/sock" || { _rtdb_postgres_fail "cannot create $dir/sock"; return 1; }
    if [ -n "$owner" ]; then
        chown -R "$owner:" "$dir" || { _rtdb_postgres_fail "cannot chown $dir to $owner"; return 1; }
    fi

    # Trust authentication on loopback and the socket only; --no-sync only skips initdb's own
    # flush of the fresh cluster (nothing to lose if the machine dies now).
    if ! _rtdb_postgres_run "$bin/initdb" -D "$dir/data" --username=rtdb --auth=trust \
        --encoding=UTF8 --no-locale --no-sync >"$dir/setup.log" 2>&1; then
        _rtdb_postgres_fail "initdb failed"
        return 1
    fi

    # The durability tests kill and restart the server in the middle of writes, so commits must
    # really reach the disk: fsync and synchronous_commit stay on (full_page_writes is on by
    # default). Only 127.0.0.1 is listened on; the socket lives in the private directory.
    local sock_q
    sock_q="${dir//\'/\'\'}/sock"
    if ! cat >>"$dir/data/postgresql.conf" <<EOF

# Added by Tools/lib/postgres.sh for a private test cluster.
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sock_q'
max_connections = 200
fsync = on
synchronous_commit = on
full_page_writes = on
EOF
    then
        _rtdb_postgres_fail "cannot write $dir/data/postgresql.conf"
        return 1
    fi

    # The control script holds everything about this cluster, so a test only needs its path.
    # pg_ctl -l sends the server's output to the log (not to whoever called the script), and
    # restart stops with -m fast: a clean shutdown, the test decides when to crash the server.
    {
        echo '#!/usr/bin/env bash'
        echo '# Generated by Tools/lib/postgres.sh: controls one private PostgreSQL test cluster.'
        echo '# Usage: ctl stop|start|restart|status'
        echo 'set -euo pipefail'
        printf 'bin=%q\n' "$bin"
        printf 'dir=%q\n' "$dir"
        printf 'owner=%q\n' "$owner"
        cat <<'EOF'
run() {
    cd "$dir"
    if [ -n "$owner" ]; then
        runuser -u "$owner" -- "$@"
    else
        "$@"
    fi
}
ctl=("$bin/pg_ctl" -D "$dir/data" -s -w -t 60)
case "${1:-}" in
    start) run "${ctl[@]}" -l "$dir/postgres.log" start ;;
    stop) run "${ctl[@]}" -m fast stop ;;
    restart) run "${ctl[@]}" -l "$dir/postgres.log" -m fast restart ;;
    status) run "${ctl[@]}" status ;;
    *)
        echo "usage: $0 stop|start|restart|status" >&2
        exit 2
        ;;
esac
EOF
    } >"$dir/ctl" && chmod 755 "$dir/ctl" || {
        _rtdb_postgres_fail "cannot write $dir/ctl"
        return 1
    }

    # The port is free when picked but may be taken before the server binds it: try a few.
    local port="" attempt started=""
    for attempt in 1 2 3 4 5; do
        port="$(_rtdb_postgres_free_port)" || break
        printf 'port = %s\n' "$port" >>"$dir/data/postgresql.conf" || break
        if "$dir/ctl" start >>"$dir/setup.log" 2>&1; then
            started=1
            break
        fi
        "$dir/ctl" stop >/dev/null 2>&1 || true
        grep -q "could not bind\|could not create listen socket" "$dir/postgres.log" 2>/dev/null || break
    done
    if [ -z "$started" ]; then
        _rtdb_postgres_fail "the server did not start (port ${port:-none})"
        return 1
    fi

    # pg_ctl -w already waited for the server; this checks the TCP listener the tests use.
    local ready=""
    [ -x "$bin/pg_isready" ] || ready=1
    for attempt in $(seq 1 60); do
        [ -z "$ready" ] || break
        if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U rtdb -d postgres 2>/dev/null; then
            ready=1
            break
        fi
        sleep 0.5
    done
    if [ -z "$ready" ]; then
        _rtdb_postgres_fail "the server does not accept connections on 127.0.0.1:$port"
        return 1
    fi

    export RTDB_TEST_POSTGRES_URL="postgres://rtdb@127.0.0.1:$port/postgres"
    export RTDB_TEST_POSTGRES_BIN="$bin"
    export RTDB_TEST_POSTGRES_DATA="$dir/data"
    export RTDB_TEST_POSTGRES_CTL="$dir/ctl"
    echo "$("$bin/postgres" --version | sed 's/^postgres (PostgreSQL)/PostgreSQL/') for the tests at" \
        "$RTDB_TEST_POSTGRES_URL (data $RTDB_TEST_POSTGRES_DATA, log $dir/postgres.log)" >&2
}
