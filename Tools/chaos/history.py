"""Operation histories and their checks, as Jepsen records and checks them.

Every operation is recorded twice: when it is invoked (`invoke`) and when its outcome is known:
`ok` (acknowledged: it happened), `fail` (definitely did not happen: the server refused it before
applying, e.g. 412 for a compare-and-set whose ETag no longer matched) or `info` (unknown: the
connection died or timed out before the answer, or the server answered with an error that does
not rule out a commit, such as a 500 from a node whose commit reply was lost; it may or may not
have happened). The checks then hold the final state against the history:

- counter (compare-and-set increments): every ok CAS moved the counter from `v` to `v+1`; no two ok
  CASes started from the same `v` (both winning one compare-and-set), and the final value lies in
  [ok, ok + info] (each unknown increment may or may not have applied; a fail never did);
- appends (POST of unique values): every ok append is present under the key the server returned;
  no value appears twice; nothing appears that was never invoked; a fail is absent.
"""

import collections
import json
import threading
import time


class History:
    def __init__(self):
        self.lock = threading.Lock()
        self.ops = []
        self.started = time.monotonic()

    def record(self, process, kind, f, value):
        with self.lock:
            self.ops.append({"time": round(time.monotonic() - self.started, 4), "process": process,
                             "type": kind, "f": f, "value": value})

    def invoke(self, process, f, value):
        self.record(process, "invoke", f, value)

    def complete(self, process, kind, f, value):
        assert kind in ("ok", "fail", "info")
        self.record(process, kind, f, value)

    def completions(self, f):
        with self.lock:
            return [op for op in self.ops if op["f"] == f and op["type"] != "invoke"]

    def summary(self, f):
        counts = collections.Counter(op["type"] for op in self.completions(f))
        return {kind: counts.get(kind, 0) for kind in ("ok", "fail", "info")}

    def dump(self, path):
        with self.lock, open(path, "w") as handle:
            for op in self.ops:
                handle.write(json.dumps(op) + "\n")


def check_counter(history, final, initial=0):
    """Problems (empty when the counter's history holds) for CAS increments (`f` "cas", value
    [from, to]) ending at `final`."""
    problems = []
    ops = history.completions("cas")
    ok = [op for op in ops if op["type"] == "ok"]
    info = [op for op in ops if op["type"] == "info"]
    winners = collections.Counter(op["value"][0] for op in ok)
    doubled = sorted(value for value, count in winners.items() if count > 1)
    if doubled:
        problems.append("two compare-and-sets both won from the same value: %s" % doubled[:10])
    for op in ok:
        if op["value"][1] != op["value"][0] + 1:
            problems.append("an ok CAS that was not an increment: %s" % op)
    low, high = initial + len(ok), initial + len(ok) + len(info)
    if not isinstance(final, int) or not low <= final <= high:
        problems.append("the counter is %r, outside [ok, ok + unknown] = [%d, %d]" % (final, low, high))
    return problems, (low, high)


def check_appends(history, final):
    """Problems for appends (`f` "append", value on ok: [unique value, key]) against `final`, the
    object of key -> value read afterwards."""
    problems = []
    final = final or {}
    ops = history.completions("append")
    with history.lock:
        invoked = {op["value"] for op in history.ops if op["f"] == "append" and op["type"] == "invoke"}
    counts = collections.Counter(final.values())
    twice = sorted(value for value, count in counts.items() if count > 1)
    if twice:
        problems.append("appends applied twice: %s" % twice[:10])
    phantom = sorted(set(final.values()) - invoked)
    if phantom:
        problems.append("values nobody appended: %s" % phantom[:10])
    for op in ops:
        if op["type"] == "ok":
            value, key = op["value"]
            if final.get(key) != value:
                problems.append("acknowledged append %s (key %s) is missing (found %r)" % (value, key, final.get(key)))
        elif op["type"] == "fail" and op["value"] in counts:
            problems.append("failed append %s was applied" % op["value"])
    return problems
