# Sourced by Tools/test and Tools/flake-hunt: how the Swift test suites are prepared and run, so a
# flake hunt runs them exactly as a test run does.
#
#   prepare_swift_tests    the system packages, then start_test_postgres
#   start_test_postgres    a private PostgreSQL (exports RTDB_TEST_POSTGRES_*) unless the caller
#                          gave RTDB_TEST_POSTGRES_URL; a new one each time it is called
#   SWIFT_TEST_ENGINE      the engine suites                 } a whole run: these three,
#   SWIFT_TEST_NETWORK     the suites that use sockets       } in this order (with
#   SWIFT_TEST_PROCESSES   the import processes              }  PostgreSQL's)
#   SWIFT_TEST_POSTGRES    the PostgreSQL suite on its own   }
#   SWIFT_TEST             `swift test` as both run it; add the caller's arguments for a filtered run
# Each command runs `swift test --skip-build`: build first (swift build --build-tests).

# shellcheck source=Tools/lib/system-packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/system-packages.sh"
# shellcheck source=Tools/lib/postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"

# The socket suites run at most NETWORK_TEST_WIDTH tests at once (Swift Testing's
# SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH). Unbounded, all ~200 started together and every
# real-time wait (a reconnect, a reply, a REST request) ran against the CPU work of all the others:
# with two busy-loop processes beside it (a machine half as fast, as CI's sometimes is) 3 of 5 runs
# had failures, each a wait of 10-20 s running out; with 8 at once, 4 of 4 were clean, in the same
# time (48 s vs 50 s), since the work is CPU-bound either way. (An earlier cap of six was removed
# when the blocked pool threads behind those timeouts were fixed; thread dumps of a slow run found
# one more, fixed too.) The engine suites have no real-time waits and stay unbounded.
NETWORK_TEST_WIDTH=8
#
# The suites run in two groups, one after the other: the engine suites (property tests over
# trees, queries, stores and rules: CPU-bound work on the cooperative pool), then the suites that
# talk over sockets to in-process servers and child processes, whose connect and reply waits are
# real time. Run together, the first kind held both pool threads for half a minute at a time and
# the second timed out behind them (seen on main before this split, 7 to 40 failures a run).
SWIFT_TEST=(swift test --skip-build)
# CI builds from nothing on 2 cores: without debug information the build takes less (the compiler
# emits no DWARF, and every test binary and tool links at a fraction of its size). Local runs keep
# `swift build`'s default, so switching between the two does not rebuild everything; a crash in CI
# still names its functions, without line numbers. (The index store stays: on Linux, test
# discovery reads it; `--disable-index-store` failed the build with "index store path does not exist".)
SWIFT_BUILD_FLAGS=()
if [ "${CI:-}" = true ]; then SWIFT_BUILD_FLAGS=(-debug-info-format none); fi
NETWORK_SUITES="RealtimeServerTests|RealtimeDatabaseTests|SyncClientTests|PresenceTests"
SWIFT_TEST_ENGINE=("${SWIFT_TEST[@]}" --skip "PostgresServerStoreTests|$NETWORK_SUITES")
# The import-process suite (real rtdb-server imports killed with SIGKILL, minutes of CPU in child
# processes), the large REST bodies and the export while writing (megabytes parsed, stored and
# compared in a debug build) run after them on their own, for the same reason.
# So do the 300 event streams closed by FIN or RST (1,000 took a minute of CPU; beside the socket suites
# it starved an onDisconnect wait and a REST request's timeout in CI).
HEAVY_SUITES="ImportProcessTests|LargeBodyTests|ExportEndpointTests|EventStreamLifecycleTests"
SWIFT_TEST_NETWORK=(env SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="$NETWORK_TEST_WIDTH" "${SWIFT_TEST[@]}" --filter "$NETWORK_SUITES" --skip "$HEAVY_SUITES")
SWIFT_TEST_PROCESSES=(env SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="$NETWORK_TEST_WIDTH" "${SWIFT_TEST[@]}" --filter "$HEAVY_SUITES")
# The PostgreSQL suite runs on its own after the rest: it drives several server processes,
# PostgreSQL and 15 clients at once, and on 2 cores that load beside the in-process servers of the
# other suites starved their 10 s reply timeouts.
SWIFT_TEST_POSTGRES=("${SWIFT_TEST[@]}" --filter PostgresServerStoreTests)

# The caller's own PostgreSQL, if it named one; start_test_postgres leaves that one alone.
RTDB_CALLER_POSTGRES_URL="${RTDB_TEST_POSTGRES_URL:-}"

prepare_swift_tests() {
    ensure_system_packages libsqlite3-dev liblmdb-dev libleveldb-dev
    start_test_postgres
    if [ ! -d ../shared/spec ]; then
        echo "note: ../shared/spec is missing; tests that replay the shared spec files will fail." >&2
    fi
}

# The PostgreSQL tests get a private, throw-away cluster (they kill and restart it), stopped and
# removed when the calling script exits (or when this is called again, which starts a fresh one).
# A developer can point them at their own server by setting RTDB_TEST_POSTGRES_URL. Without one
# the PostgreSQL tests fail, saying PostgreSQL is missing; they never skip.
start_test_postgres() {
    [ -z "$RTDB_CALLER_POSTGRES_URL" ] || return 0
    stop_private_postgres
    if ! { ensure_postgres_server && start_private_postgres; }; then
        if [ "${CI:-}" = true ]; then
            echo "error: CI needs PostgreSQL for the tests (see above)." >&2
            exit 1
        fi
        echo "note: no PostgreSQL for the tests that need it (see above)." >&2
    fi
}
