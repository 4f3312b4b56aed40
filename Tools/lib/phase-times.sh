# Sourced by Tools/test: times each phase of a run and prints a table of them when the script
# exits, whether it passed, failed in a phase or was interrupted, so a red run still shows where
# its time went.
#
#   plan_phases NAME...        the phases in order (those never reached are listed as "not run")
#   phase NAME COMMAND...      runs COMMAND in this shell (exports stay) and times it; under set -e
#                              a failure ends the script, and the table marks NAME as failed
#   skip_phase NAME REASON     lists NAME as skipped
#
# The table is printed from the EXIT trap, which is set here (source this before anything chains
# its own cleanup onto the trap, as Tools/lib/postgres.sh does: that cleanup then runs first). INT
# and TERM end the script through it too.

_PHASE_NAMES=()
_PHASE_RESULTS=() # parallel to _PHASE_NAMES: "" until reached, then "ok", "failed ..." or "skipped ..."
_PHASE_MICROS=()
_PHASE_CURRENT=-1
_PHASE_CURRENT_START=0
_PHASE_INDEX=0

# Microseconds since the epoch (bash 5's EPOCHREALTIME, whose decimal point follows the locale).
_phase_now() {
    if [ -n "${EPOCHREALTIME:-}" ]; then
        echo "${EPOCHREALTIME//[!0-9]/}"
    else
        echo "$(($(date +%s) * 1000000))"
    fi
}

_PHASE_RUN_START="$(_phase_now)"

plan_phases() {
    local name
    for name in "$@"; do
        _PHASE_NAMES+=("$name")
        _PHASE_RESULTS+=("")
        _PHASE_MICROS+=(0)
    done
}

# Sets _PHASE_INDEX to NAME's row, adding one for a name not planned.
_phase_index() {
    local i
    for i in "${!_PHASE_NAMES[@]}"; do
        if [ "${_PHASE_NAMES[$i]}" = "$1" ]; then
            _PHASE_INDEX="$i"
            return 0
        fi
    done
    _PHASE_NAMES+=("$1")
    _PHASE_RESULTS+=("")
    _PHASE_MICROS+=(0)
    _PHASE_INDEX=$((${#_PHASE_NAMES[@]} - 1))
}

phase() {
    local name="$1"
    shift
    _phase_index "$name"
    _PHASE_CURRENT="$_PHASE_INDEX"
    _PHASE_CURRENT_START="$(_phase_now)"
    echo "==> $name" >&2
    "$@"
    _PHASE_MICROS[_PHASE_CURRENT]=$(($(_phase_now) - _PHASE_CURRENT_START))
    _PHASE_RESULTS[_PHASE_CURRENT]="ok"
    _PHASE_CURRENT=-1
}

skip_phase() {
    _phase_index "$1"
    _PHASE_RESULTS[_PHASE_INDEX]="skipped ($2)"
}

_phase_seconds() {
    local micros="$1"
    printf '%d.%d s' $((micros / 1000000)) $((micros % 1000000 / 100000))
}

_phase_failure() {
    case "$1" in
        0) echo "ended (the script exited inside it)" ;;
        130) echo "INTERRUPTED (SIGINT)" ;;
        143) echo "TERMINATED (SIGTERM)" ;;
        *) echo "FAILED (exit $1)" ;;
    esac
}

_phase_report() {
    local status=$?
    local now
    now="$(_phase_now)"
    if [ "$_PHASE_CURRENT" -ge 0 ]; then
        _PHASE_MICROS[_PHASE_CURRENT]=$((now - _PHASE_CURRENT_START))
        _PHASE_RESULTS[_PHASE_CURRENT]="$(_phase_failure "$status")"
    fi
    local i width=5 result time
    for i in "${!_PHASE_NAMES[@]}"; do
        [ ${#_PHASE_NAMES[$i]} -gt "$width" ] && width=${#_PHASE_NAMES[$i]}
    done
    {
        echo
        echo "Time per phase:"
        for i in "${!_PHASE_NAMES[@]}"; do
            result="${_PHASE_RESULTS[$i]}"
            case "$result" in
                "") time="-" result="not run" ;;
                skipped*) time="-" ;;
                *) time="$(_phase_seconds "${_PHASE_MICROS[$i]}")" ;;
            esac
            printf '  %-*s  %10s  %s\n' "$width" "${_PHASE_NAMES[$i]}" "$time" "$result"
        done
        result="passed"
        [ "$status" -ne 0 ] && result="$(_phase_failure "$status")"
        printf '  %-*s  %10s  %s\n' "$width" "total" "$(_phase_seconds $((now - _PHASE_RUN_START)))" "$result"
    } >&2
    return "$status"
}

trap _phase_report EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
