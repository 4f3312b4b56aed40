"""REST calls for Tools/chaos-test from inside a network namespace (http.client over a socket the
harness opened in that namespace). One connection per call, bounded by a timeout."""

import http.client
import json

from netns import connect_in


class Outcome:
    """What a call came to: `status` (None when no answer came), the parsed body, the headers, and
    `error` (why no answer came: the write may or may not have been applied)."""

    def __init__(self, status=None, body=None, headers=None, error=None):
        self.status, self.body, self.headers, self.error = status, body, headers or {}, error

    def __repr__(self):
        return "Outcome(%r, %r, error=%r)" % (self.status, self.body, self.error)


class _Connection(http.client.HTTPConnection):
    def __init__(self, netns, host, port, timeout):
        super().__init__(host, port, timeout=timeout)
        self.netns = netns

    def connect(self):
        self.sock = connect_in(self.netns, (self.host, self.port), self.timeout)


def call(netns, host, port, method, path, db_namespace, body=None, headers=None, timeout=5.0, query=""):
    """`method` on `path`.json; an Outcome (never raises for network trouble)."""
    connection = _Connection(netns, host, port, timeout)
    url = "%s.json?ns=%s%s" % (path, db_namespace, query)
    data = None if body is None else json.dumps(body).encode()
    sent_headers = {"Connection": "close"}
    sent_headers.update(headers or {})
    try:
        connection.request(method, url, body=data, headers=sent_headers)
        response = connection.getresponse()
        raw = response.read().decode()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw
        return Outcome(response.status, parsed, {key.lower(): value for key, value in response.getheaders()})
    except (OSError, http.client.HTTPException) as error:
        return Outcome(error="%s: %s" % (type(error).__name__, error))
    finally:
        connection.close()


def get(netns, host, port, path, db_namespace, timeout=5.0):
    """The value at `path`; raises RuntimeError unless the answer is 200."""
    outcome = call(netns, host, port, "GET", path, db_namespace, timeout=timeout)
    if outcome.status != 200:
        raise RuntimeError("GET %s from %s:%d: %s" % (path, host, port, outcome.error or "%s %s" % (outcome.status, outcome.body)))
    return outcome.body
