# Sourced by Tools/test: times each phase of a run and prints a table of them when the script
# exits, whether it passed, failed in a phase or was interrupted, so a red run still shows where
# its time went.
#
#   plan_phases NAME...        the phases in order (those never reached are listed as "not run")
#   phase NAME COMMAND...      runs COMMAND in this shell (exports stay) and times it; under set -e
#                              a failure ends the script, and the table marks NAME as failed
#   skip_phase NAME REASON     lists NAME as skipped
#   background_phase NAME COMMAND...
#                              starts COMMAND in the background, its output kept in a log, so the
#                              phases after it run while it does (for a phase that mostly waits)
#   wait_phase NAME            waits for it, prints its output and, under set -e, ends the script if
#                              it failed; its time is its own, from its start to its end
#
# Beside each phase's time the table shows how busy the machine's processors were during it (all
# processes, from /proc/stat: the servers and PostgreSQL a phase starts count too), so a phase that
# mostly waits shows as one whose time another phase could use; the last line is the run's work in
# processor-seconds and the shortest time any overlap of the phases could take on these processors.
#
# The table is printed from the EXIT trap, which is set here (source this before anything chains
# its own cleanup onto the trap, as Tools/lib/postgres.sh does: that cleanup then runs first). INT
# and TERM end the script through it too.

_PHASE_NAMES=()
_PHASE_RESULTS=() # parallel to _PHASE_NAMES: "" until reached, then "ok", "failed ..." or "skipped ..."
_PHASE_MICROS=()
_PHASE_BUSY=() # parallel to _PHASE_NAMES: clock ticks the processors were busy during the phase
_PHASE_CURRENT=-1
_PHASE_CURRENT_START=0
_PHASE_CURRENT_BUSY_START=0
_PHASE_INDEX=0

# Microseconds since the epoch (bash 5's EPOCHREALTIME, whose decimal point follows the locale).
_phase_now() {
    if [ -n "${EPOCHREALTIME:-}" ]; then
        echo "${EPOCHREALTIME//[!0-9]/}"
    else
        echo "$(($(date +%s) * 1000000))"
    fi
}

# Clock ticks (USER_HZ) all processors spent busy since boot, or 0 without /proc/stat.
_phase_busy_ticks() {
    local label user nice system idle iowait irq softirq steal rest
    if read -r label user nice system idle iowait irq softirq steal rest </proc/stat 2>/dev/null; then
        echo $((user + nice + system + irq + softirq + steal))
    else
        echo 0
    fi
}
_PHASE_TICKS_PER_SECOND="$(getconf CLK_TCK 2>/dev/null || echo 100)"
_PHASE_PROCESSORS="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)"

_PHASE_RUN_START="$(_phase_now)"
_PHASE_RUN_BUSY_START="$(_phase_busy_ticks)"

plan_phases() {
    local name
    for name in "$@"; do
        _PHASE_NAMES+=("$name")
        _PHASE_RESULTS+=("")
        _PHASE_MICROS+=(0)
        _PHASE_BUSY+=(0)
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
    _PHASE_BUSY+=(0)
    _PHASE_INDEX=$((${#_PHASE_NAMES[@]} - 1))
}

phase() {
    local name="$1"
    shift
    _phase_index "$name"
    _PHASE_CURRENT="$_PHASE_INDEX"
    _PHASE_CURRENT_START="$(_phase_now)"
    _PHASE_CURRENT_BUSY_START="$(_phase_busy_ticks)"
    echo "==> $name" >&2
    "$@"
    _PHASE_MICROS[_PHASE_CURRENT]=$(($(_phase_now) - _PHASE_CURRENT_START))
    _PHASE_BUSY[_PHASE_CURRENT]=$(($(_phase_busy_ticks) - _PHASE_CURRENT_BUSY_START))
    _PHASE_RESULTS[_PHASE_CURRENT]="ok"
    _PHASE_CURRENT=-1
}

# Background phases: their pid, log and the file their wrapper writes "END-MICROS END-TICKS STATUS"
# to when the command ends, by phase index.
_PHASE_BACKGROUND_PIDS=()
_PHASE_BACKGROUND_STARTS=()
_PHASE_BACKGROUND_BUSY_STARTS=()
_PHASE_BACKGROUND_DIR=""

background_phase() {
    local name="$1"
    shift
    _phase_index "$name"
    local index="$_PHASE_INDEX"
    if [ -z "$_PHASE_BACKGROUND_DIR" ]; then _PHASE_BACKGROUND_DIR="$(mktemp -d)"; fi
    _PHASE_BACKGROUND_STARTS[index]="$(_phase_now)"
    _PHASE_BACKGROUND_BUSY_STARTS[index]="$(_phase_busy_ticks)"
    _PHASE_RESULTS[index]="running"
    echo "==> $name (in the background; its output follows when it ends)" >&2
    (
        # The command runs as a child of this wrapper, which hands it a TERM (the run ending early)
        # and waits for its cleanup.
        "$@" &
        child=$!
        trap 'kill -TERM "$child" 2>/dev/null || true' TERM
        status=0
        wait "$child" || status=$?
        while kill -0 "$child" 2>/dev/null; do wait "$child" || status=$?; done
        echo "$(_phase_now) $(_phase_busy_ticks) $status" >"$_PHASE_BACKGROUND_DIR/$index.end"
        exit "$status"
    ) >"$_PHASE_BACKGROUND_DIR/$index.log" 2>&1 &
    _PHASE_BACKGROUND_PIDS[index]=$!
}

wait_phase() {
    _phase_index "$1"
    local index="$_PHASE_INDEX" end_micros end_ticks status=0
    wait "${_PHASE_BACKGROUND_PIDS[index]}" || status=$?
    unset "_PHASE_BACKGROUND_PIDS[index]"
    echo "==> $1 (ran in the background):" >&2
    cat "$_PHASE_BACKGROUND_DIR/$index.log" >&2
    if read -r end_micros end_ticks _ <"$_PHASE_BACKGROUND_DIR/$index.end" 2>/dev/null; then
        _PHASE_MICROS[index]=$((end_micros - _PHASE_BACKGROUND_STARTS[index]))
        _PHASE_BUSY[index]=$((end_ticks - _PHASE_BACKGROUND_BUSY_STARTS[index]))
    fi
    if [ "$status" -ne 0 ]; then
        _PHASE_RESULTS[index]="$(_phase_failure "$status")"
        return "$status"
    fi
    _PHASE_RESULTS[index]="ok"
}

# A background phase still running when the script ends is stopped (TERM: its own cleanup runs)
# and waited for, and its output shown.
_phase_stop_background() {
    local index
    for index in "${!_PHASE_BACKGROUND_PIDS[@]}"; do
        kill -TERM "${_PHASE_BACKGROUND_PIDS[index]}" 2>/dev/null || true
        wait "${_PHASE_BACKGROUND_PIDS[index]}" 2>/dev/null || true
        _PHASE_MICROS[index]=$(($(_phase_now) - _PHASE_BACKGROUND_STARTS[index]))
        _PHASE_BUSY[index]=$(($(_phase_busy_ticks) - _PHASE_BACKGROUND_BUSY_STARTS[index]))
        _PHASE_RESULTS[index]="STOPPED (the run ended first)"
        echo "==> ${_PHASE_NAMES[index]} (stopped; its output so far):" >&2
        cat "$_PHASE_BACKGROUND_DIR/$index.log" >&2 || true
    done
    [ -z "$_PHASE_BACKGROUND_DIR" ] || rm -rf "$_PHASE_BACKGROUND_DIR"
}

skip_phase() {
    _phase_index "$1"
    _PHASE_RESULTS[_PHASE_INDEX]="skipped ($2)"
}

_phase_seconds() {
    local micros="$1"
    printf '%d.%d s' $((micros / 1000000)) $((micros % 1000000 / 100000))
}

# How busy the processors were: busy ticks over the ticks all of them had in that many microseconds.
_phase_load() {
    local ticks="$1" micros="$2"
    local available=$((micros * _PHASE_TICKS_PER_SECOND * _PHASE_PROCESSORS / 1000000))
    if [ "$micros" -lt 1000000 ] || [ "$available" -le 0 ]; then
        echo "-"
    else
        echo "$((ticks * 100 / available))% busy"
    fi
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
        _PHASE_BUSY[_PHASE_CURRENT]=$(($(_phase_busy_ticks) - _PHASE_CURRENT_BUSY_START))
        _PHASE_RESULTS[_PHASE_CURRENT]="$(_phase_failure "$status")"
    fi
    _phase_stop_background
    local i width=5 result time load total_ticks work
    for i in "${!_PHASE_NAMES[@]}"; do
        [ ${#_PHASE_NAMES[$i]} -gt "$width" ] && width=${#_PHASE_NAMES[$i]}
    done
    {
        echo
        echo "Time per phase ($_PHASE_PROCESSORS processors; how busy they were, all processes counted):"
        for i in "${!_PHASE_NAMES[@]}"; do
            result="${_PHASE_RESULTS[$i]}"
            case "$result" in
                "") time="-" load="" result="not run" ;;
                skipped*) time="-" load="" ;;
                *)
                    time="$(_phase_seconds "${_PHASE_MICROS[$i]}")"
                    load="$(_phase_load "${_PHASE_BUSY[$i]}" "${_PHASE_MICROS[$i]}")"
                    ;;
            esac
            printf '  %-*s  %10s  %9s  %s\n' "$width" "${_PHASE_NAMES[$i]}" "$time" "$load" "$result"
        done
        result="passed"
        [ "$status" -ne 0 ] && result="$(_phase_failure "$status")"
        total_ticks=$(($(_phase_busy_ticks) - _PHASE_RUN_BUSY_START))
        printf '  %-*s  %10s  %9s  %s\n' "$width" "total" "$(_phase_seconds $((now - _PHASE_RUN_START)))" \
            "$(_phase_load "$total_ticks" $((now - _PHASE_RUN_START)))" "$result"
        # The run's work in processor-seconds bounds what scheduling can win: however the phases
        # were overlapped, the processors cannot do it in less than work / processors.
        if [ "$total_ticks" -gt 0 ]; then
            work=$((total_ticks * 1000000 / _PHASE_TICKS_PER_SECOND))
            echo "  work: $(_phase_seconds "$work") of processor time; on $_PHASE_PROCESSORS processors no overlap of the phases takes less than $(_phase_seconds $((work / _PHASE_PROCESSORS)))"
        fi
    } >&2
    return "$status"
}

trap _phase_report EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
