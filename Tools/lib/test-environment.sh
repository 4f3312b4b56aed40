# Sourced by Tools/test and the suites it runs (compat-test, hostile-test, browser-test,
# console-test): keeps what the caller's shell happens to export out of the run.
#
# Usage: isolate_test_environment
#
# - rtdb-server reads every option from an RTDB_<OPTION> variable and a config file from RTDB_CONFIG
#   (the command line wins only for the options it names), so a developer's RTDB_MAX_CONNECTIONS,
#   RTDB_RULES or RTDB_CONFIG would change every server the tests start, the Swift tests' server
#   processes included. Every RTDB_* variable is unset (with a note) except the harness's own:
#   RTDB_TEST_* (the PostgreSQL for the tests) and RTDB_CONSOLE_SCREENSHOT.
# - Requests to the servers on 127.0.0.1 never go through a proxy the machine has configured
#   (http_proxy and friends, read by curl, urllib, requests and selenium): no_proxy and NO_PROXY
#   gain 127.0.0.1 and localhost.
# - Python writes no __pycache__ directories into the source tree.

isolate_test_environment() {
    local name
    for name in $(compgen -e); do
        case "$name" in
            RTDB_TEST_* | RTDB_CONSOLE_SCREENSHOT) ;;
            RTDB_*)
                echo "note: ignoring $name from the environment (rtdb-server would read it as an option)" >&2
                unset "$name"
                ;;
        esac
    done
    case ",${no_proxy:-}," in
        *,127.0.0.1,*) ;;
        *) export no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}" ;;
    esac
    case ",${NO_PROXY:-}," in
        *,127.0.0.1,*) ;;
        *) export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" ;;
    esac
    export PYTHONDONTWRITEBYTECODE=1
}
