#!/usr/bin/env python3
"""Compatibility test: the official Firebase Admin SDK for Python against rtdb-server.

The SDK speaks the REST API and SSE streaming (protocol.md sections 12 and 13). It switches to
emulator mode when FIREBASE_DATABASE_EMULATOR_HOST is set: it then sends `?ns=<namespace>` on
every request and `Authorization: Bearer owner`, and needs no Google credential.

Usage (Tools/compat-test does all of this, including starting the server):

    RTDB_EMULATOR_HOST=127.0.0.1:9000 python Tests/Compat/firebase_admin_compat.py [-v] [-k name]

Each test writes under its own random path, so tests are independent and can be rerun against
the same server. A watchdog ends the process if a single test runs longer than
PER_TEST_TIMEOUT seconds, so a broken server makes the run fail, never hang.
"""

import faulthandler
import json
import os
import queue
import sys
import threading
import time
import unittest
import urllib.request
import uuid

import firebase_admin
from firebase_admin import db
from firebase_admin import exceptions

NAMESPACE = 'compat-test'
DATABASE_URL = f'https://{NAMESPACE}.firebaseio.com'
# Waits are generous for a loaded 2-core machine: they only last this long when a test is failing.
HTTP_TIMEOUT = 30  # seconds per REST request (the SDK retries a timed-out read once)
EVENT_TIMEOUT = 30  # seconds to wait for one listener event
# Seconds, hard limit per test (the watchdog exits the process): a hang guard, well above the
# longest wait a passing test can sit through (a listen() or a read retried after a timeout).
PER_TEST_TIMEOUT = 180
RUN_ROOT = f'compat-{uuid.uuid4().hex[:12]}'

APP = None

# Dinosaur data from the Firebase docs, with the height tie of protocol.md 12.2
# (linhenykus and pterodactyl are both 0.6) and a nested child `ratings/pos`
# (bruhathkayosaurus has none, so it sorts first by that path, as null).
DINOSAURS = {
    'bruhathkayosaurus': {'h': 25, 'len': 44},
    'lambeosaurus': {'h': 2.1, 'len': 12.5, 'ratings': {'pos': 3}},
    'linhenykus': {'h': 0.6, 'len': 1, 'ratings': {'pos': 1}},
    'pterodactyl': {'h': 0.6, 'len': 0.8, 'ratings': {'pos': 5}},
    'stegosaurus': {'h': 4, 'len': 9, 'ratings': {'pos': 2}},
    'triceratops': {'h': 3, 'len': 9, 'ratings': {'pos': 4}},
}
BY_HEIGHT = ['linhenykus', 'pterodactyl', 'lambeosaurus', 'triceratops', 'stegosaurus',
             'bruhathkayosaurus']
SCORES = {
    'bruhathkayosaurus': 55, 'lambeosaurus': 21, 'linhenykus': 80, 'pterodactyl': 93,
    'stegosaurus': 5, 'triceratops': 22, 'velociraptor': 22,
}


def emulator_host():
    host = os.environ.get('RTDB_EMULATOR_HOST', '').strip()
    if not host or '//' in host:
        raise RuntimeError('RTDB_EMULATOR_HOST must be set to host:port of a running rtdb-server '
                           f'(no scheme), got {host!r}')
    return host


def setUpModule():  # pylint: disable=invalid-name
    global APP  # pylint: disable=global-statement
    host = emulator_host()
    os.environ['FIREBASE_DATABASE_EMULATOR_HOST'] = host
    # No credential: in emulator mode the SDK uses its own EmulatorAdminCredentials (token
    # "owner") and never loads the default ApplicationDefault credential (it is lazy).
    APP = firebase_admin.initialize_app(
        options={'databaseURL': DATABASE_URL, 'httpTimeout': HTTP_TIMEOUT}, name='compat')
    # Fail every test at once, with a clear message, when the server is not reachable.
    faulthandler.dump_traceback_later(PER_TEST_TIMEOUT, exit=True)
    try:
        db.reference(RUN_ROOT, app=APP).get()
    except exceptions.FirebaseError as error:
        raise RuntimeError(f'rtdb-server at {host} is not usable: {error}') from error
    finally:
        faulthandler.cancel_dump_traceback_later()


def tearDownModule():  # pylint: disable=invalid-name
    faulthandler.dump_traceback_later(PER_TEST_TIMEOUT, exit=True)
    try:
        if APP is not None:
            try:
                db.reference(RUN_ROOT, app=APP).delete()
            except exceptions.FirebaseError:
                pass
            firebase_admin.delete_app(APP)
    finally:
        faulthandler.cancel_dump_traceback_later()


def call_with_timeout(function, timeout, what):
    """Runs function() on a daemon thread; fails the test if it takes longer than timeout.

    Used for listen(), which opens its stream without any timeout.
    """
    box = {}

    def target():
        try:
            box['value'] = function()
        except BaseException as error:  # pylint: disable=broad-except
            box['error'] = error

    thread = threading.Thread(target=target, name=what, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError(f'{what} did not finish within {timeout} s')
    if 'error' in box:
        raise box['error']
    return box.get('value')


class CompatTestCase(unittest.TestCase):
    """Gives each test a fresh random location `self.ref` and a watchdog."""

    def setUp(self):
        faulthandler.dump_traceback_later(PER_TEST_TIMEOUT, exit=True)
        # Registered first, so it runs last: the watchdog also covers the other cleanups.
        self.addCleanup(faulthandler.cancel_dump_traceback_later)
        self.ref = db.reference(f'{RUN_ROOT}/{self._testMethodName}-{uuid.uuid4().hex[:8]}',
                                app=APP)

    def assert_query(self, query, expected_keys, source):
        """Runs a query and checks the exact keys (in order) and their values."""
        result = query.get()
        self.assertEqual(list(result.keys()), expected_keys)
        for key in expected_keys:
            self.assertEqual(result[key], source[key], key)
        return result


class ReadWriteTest(CompatTestCase):

    def test_set_get_scalars(self):
        for index, value in enumerate(['hello', '', 'héllo ✓ 日本', 42, -7, 0, 3.5, -0.25,
                                       True, False]):
            child = self.ref.child(f's{index}')
            child.set(value)
            got = child.get()
            self.assertEqual(got, value)
            self.assertIs(type(got), type(value), f'{value!r} came back as {got!r}')
        # Replacing a scalar with another type.
        scalar = self.ref.child('s0')
        scalar.set(17)
        self.assertEqual(scalar.get(), 17)

    def test_set_get_nested_object(self):
        value = {
            'name': 'Mary Anning',
            'since': 1799,
            'flags': {'active': True, 'deleted': False},
            'deep': {'a': {'b': {'c': {'d': 'bottom'}}}},
            'ratio': 0.5,
        }
        self.ref.set(value)
        self.assertEqual(self.ref.get(), value)
        self.assertEqual(self.ref.child('deep/a/b').get(), {'c': {'d': 'bottom'}})
        self.assertEqual(self.ref.child('deep').child('a/b/c/d').get(), 'bottom')
        self.assertEqual(self.ref.child('flags/deleted').get(), False)
        # A set replaces the whole subtree (no merge).
        self.ref.set({'name': 'other'})
        self.assertEqual(self.ref.get(), {'name': 'other'})

    def test_nulls_and_empty_objects_are_not_stored(self):
        self.ref.set({'a': 1, 'gone': None, 'empty': {}, 'nested': {'x': None}})
        self.assertEqual(self.ref.get(), {'a': 1})
        self.assertIsNone(self.ref.child('empty').get())

    def test_array_like_objects(self):
        self.ref.child('list').set(['a', 'b', 'c'])
        self.assertEqual(self.ref.child('list').get(), ['a', 'b', 'c'])
        self.assertEqual(self.ref.child('list/1').get(), 'b')
        # An object whose keys are 0..n-1 reads back as an array.
        self.ref.child('dict').set({'0': 'x', '1': {'y': 1}, '2': 3})
        self.assertEqual(self.ref.child('dict').get(), ['x', {'y': 1}, 3])
        # Sparse, but the largest key is below twice the count: an array with holes.
        self.ref.child('sparse').set({'0': 'a', '2': 'c'})
        self.assertEqual(self.ref.child('sparse').get(), ['a', None, 'c'])
        # Too sparse: stays an object.
        self.ref.child('object').set({'0': 'a', '5': 'f'})
        self.assertEqual(self.ref.child('object').get(), {'0': 'a', '5': 'f'})
        # Setting an element of an array.
        self.ref.child('list/1').set('B')
        self.assertEqual(self.ref.child('list').get(), ['a', 'B', 'c'])

    def test_get_missing_path_returns_none(self):
        self.assertIsNone(self.ref.get())
        self.assertIsNone(self.ref.child('no/such/child').get())
        self.ref.set('leaf')
        self.assertIsNone(self.ref.child('below/a/leaf').get())

    def test_update_multi_path(self):
        self.ref.set({'a': {'b': 1, 'c': 2}, 'x': 1, 'y': 2})
        self.ref.update({'a/b': 10, 'a/d': {'e': 3}, 'y': None, 'z': 'new'})
        self.assertEqual(self.ref.get(),
                         {'a': {'b': 10, 'c': 2, 'd': {'e': 3}}, 'x': 1, 'z': 'new'})
        # None deletes a child; other children stay.
        self.ref.child('a').update({'c': None})
        self.assertEqual(self.ref.child('a').get(), {'b': 10, 'd': {'e': 3}})
        # Deleting the last child removes the parent too.
        self.ref.update({'a/d/e': None})
        self.assertEqual(self.ref.child('a').get(), {'b': 10})
        # update() on a missing location creates it.
        missing = self.ref.child('fresh')
        missing.update({'p/q': 1, 'r': 'two'})
        self.assertEqual(missing.get(), {'p': {'q': 1}, 'r': 'two'})

    def test_update_replaces_children_shallowly(self):
        self.ref.set({'child': {'old': 'gone', 'k': 1}, 'other': 1})
        # A top-level key in update() replaces that child entirely (not a deep merge).
        self.ref.update({'child': {'k': 2}})
        self.assertEqual(self.ref.get(), {'child': {'k': 2}, 'other': 1})

    def test_push(self):
        keys = []
        for index in range(6):
            child = self.ref.push({'i': index})
            self.assertIsInstance(child.key, str)
            self.assertEqual(len(child.key), 20, child.key)
            self.assertEqual(child.path, f'{self.ref.path}/{child.key}')
            keys.append(child.key)
        self.assertEqual(len(set(keys)), len(keys), 'push keys must be unique')
        self.assertEqual(sorted(keys), keys, 'push keys must sort in creation order')
        value = self.ref.get()
        self.assertEqual(set(value.keys()), set(keys))
        for index, key in enumerate(keys):
            self.assertEqual(value[key], {'i': index})
        ordered = self.ref.order_by_key().get()
        self.assertEqual(list(ordered.keys()), keys)
        # The server applies the limit in key order: the first two pushed.
        self.assertEqual(list(self.ref.order_by_key().limit_to_first(2).get().keys()), keys[:2])
        # push() without a value stores the empty string.
        empty = self.ref.push()
        self.assertEqual(empty.get(), '')
        self.assertGreater(empty.key, keys[-1])

    def test_delete(self):
        self.ref.set({'a': 1, 'b': {'c': 2}, 'd': 'x'})
        self.ref.child('b/c').delete()
        self.assertEqual(self.ref.get(), {'a': 1, 'd': 'x'})
        self.ref.child('a').delete()
        self.assertEqual(self.ref.get(), {'d': 'x'})
        self.ref.delete()
        self.assertIsNone(self.ref.get())
        # Deleting a missing location is fine.
        self.ref.child('missing').delete()
        self.assertIsNone(self.ref.get())

    def test_invalid_key_is_rejected(self):
        with self.assertRaises(exceptions.InvalidArgumentError):
            self.ref.set({'bad.key': 1})
        self.assertIsNone(self.ref.get())


class ServerValueTest(CompatTestCase):

    def assert_now(self, value, before, after):
        self.assertIsInstance(value, int)
        self.assertNotIsInstance(value, bool)
        self.assertGreaterEqual(value, before - 5000)
        self.assertLessEqual(value, after + 5000)

    def test_timestamp(self):
        before = int(time.time() * 1000)
        self.ref.set({'.sv': 'timestamp'})
        self.ref.parent.child(self.ref.key + '-obj').set(
            {'created': {'.sv': 'timestamp'}, 'name': 'x'})
        after = int(time.time() * 1000)
        self.assert_now(self.ref.get(), before, after)
        obj = self.ref.parent.child(self.ref.key + '-obj').get()
        self.assertEqual(obj['name'], 'x')
        self.assert_now(obj['created'], before, after)
        # In update() and push() bodies too.
        holder = self.ref.parent.child(self.ref.key + '-upd')
        before = int(time.time() * 1000)
        holder.update({'u': {'.sv': 'timestamp'}})
        pushed = holder.push({'p': {'.sv': 'timestamp'}})
        after = int(time.time() * 1000)
        self.assert_now(holder.child('u').get(), before, after)
        self.assert_now(pushed.child('p').get(), before, after)

    def test_increment(self):
        self.ref.set({'.sv': {'increment': 5}})
        self.assertEqual(self.ref.get(), 5)
        self.ref.set({'.sv': {'increment': 2}})
        self.assertEqual(self.ref.get(), 7)
        self.ref.update({'n': {'.sv': {'increment': 1}}})
        self.assertEqual(self.ref.get(), {'n': 1})
        self.ref.child('s').set('text')
        self.ref.child('s').set({'.sv': {'increment': 3}})
        self.assertEqual(self.ref.child('s').get(), 3)


class ETagTest(CompatTestCase):

    def test_etag_conditional_requests(self):
        self.ref.set({'v': 1})
        value, etag = self.ref.get(etag=True)
        self.assertEqual(value, {'v': 1})
        self.assertIsInstance(etag, str)
        self.assertTrue(etag)
        # The ETag is stable while the value is unchanged.
        self.assertEqual(self.ref.get(etag=True), ({'v': 1}, etag))

        # get_if_changed: 304 when the ETag matches, the value when it does not.
        self.assertEqual(self.ref.get_if_changed(etag), (False, None, None))
        self.assertEqual(self.ref.get_if_changed('wrong-etag'), (True, {'v': 1}, etag))

        # Wrong ETag: 412 with the current value and the current ETag, no write.
        self.assertEqual(self.ref.set_if_unchanged('wrong-etag', {'v': 3}),
                         (False, {'v': 1}, etag))
        self.assertEqual(self.ref.get(), {'v': 1})

        # Right ETag: written, and the response carries the new ETag.
        success, data, new_etag = self.ref.set_if_unchanged(etag, {'v': 2})
        self.assertTrue(success)
        self.assertEqual(data, {'v': 2})
        self.assertIsInstance(new_etag, str)
        self.assertNotEqual(new_etag, etag)
        self.assertEqual(self.ref.get(etag=True), ({'v': 2}, new_etag))

        # The old ETag is now stale.
        self.assertEqual(self.ref.get_if_changed(etag), (True, {'v': 2}, new_etag))
        self.assertEqual(self.ref.set_if_unchanged(etag, {'v': 4}), (False, {'v': 2}, new_etag))
        self.assertEqual(self.ref.get(), {'v': 2})

    def test_etag_changes_with_descendants(self):
        self.ref.set({'a': {'b': 1}})
        _, etag = self.ref.get(etag=True)
        self.ref.child('a/b').set(2)
        value, new_etag = self.ref.get(etag=True)
        self.assertEqual(value, {'a': {'b': 2}})
        self.assertNotEqual(new_etag, etag)

    def test_etag_of_missing_node(self):
        value, etag = self.ref.get(etag=True)
        self.assertIsNone(value)
        self.assertEqual(etag, 'null_etag')
        # Create only if absent.
        success, data, new_etag = self.ref.set_if_unchanged('null_etag', 'created')
        self.assertEqual((success, data), (True, 'created'))
        self.assertNotEqual(new_etag, 'null_etag')
        success, data, current = self.ref.set_if_unchanged('null_etag', 'again')
        self.assertEqual((success, data, current), (False, 'created', new_etag))
        self.assertEqual(self.ref.get(), 'created')


class TransactionTest(CompatTestCase):

    def test_concurrent_increments(self):
        # The SDK retries a transaction at most 25 times. Each failed try means another
        # transaction committed in between, and there are only 24 others, so with a correct
        # server (412 carrying the current value and ETag) none can abort.
        threads_count, increments = 5, 5
        barrier = threading.Barrier(threads_count)
        errors = []

        def worker():
            try:
                barrier.wait(timeout=30)  # the other threads starting, on a loaded machine
                for _ in range(increments):
                    self.ref.transaction(lambda current: (current or 0) + 1)
            except BaseException as error:  # pylint: disable=broad-except
                errors.append(error)

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(threads_count)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + PER_TEST_TIMEOUT - 5
        for thread in threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        self.assertFalse(any(thread.is_alive() for thread in threads),
                         'transactions did not finish in time')
        self.assertEqual(errors, [])
        self.assertEqual(self.ref.get(), threads_count * increments)

    def test_transaction_on_missing_node(self):
        seen = []

        def create(current):
            seen.append(current)
            if current is None:
                return {'created': True, 'count': 1}
            current['count'] += 1
            return current

        self.assertEqual(self.ref.transaction(create), {'created': True, 'count': 1})
        self.assertEqual(seen, [None])
        self.assertEqual(self.ref.get(), {'created': True, 'count': 1})
        self.assertEqual(self.ref.transaction(create), {'created': True, 'count': 2})
        self.assertEqual(self.ref.get(), {'created': True, 'count': 2})

    def test_transaction_aborted_by_exception_writes_nothing(self):
        self.ref.set(41)

        def refuse(current):
            raise ValueError(f'no thanks: {current}')

        with self.assertRaisesRegex(ValueError, 'no thanks: 41'):
            self.ref.transaction(refuse)
        self.assertEqual(self.ref.get(), 41)
        self.assertEqual(self.ref.transaction(lambda current: current + 1), 42)
        self.assertEqual(self.ref.get(), 42)


class ShallowTest(CompatTestCase):

    def test_shallow_get(self):
        self.ref.set({
            'dinosaurs': {'a': {'h': 1}, 'b': {'h': 2}},
            'scores': {'a': 1, 'b': 2},
        })
        self.assertEqual(self.ref.get(shallow=True), {'dinosaurs': True, 'scores': True})
        self.assertEqual(self.ref.child('dinosaurs').get(shallow=True), {'a': True, 'b': True})
        # A primitive is returned as is; a missing location as null.
        self.assertEqual(self.ref.child('scores/a').get(shallow=True), 1)
        self.assertIsNone(self.ref.child('missing').get(shallow=True))
        with self.assertRaises(ValueError):  # enforced by the SDK, no request sent
            self.ref.get(etag=True, shallow=True)


class QueryTest(CompatTestCase):
    """Queries without rules or .indexOn: the server serves unindexed queries.

    The SDK re-sorts results on the client, so the server's part is checked through limits and
    ranges (which only the server applies) and the exact set of keys returned.
    """

    def setUp(self):
        super().setUp()
        self.ref.set({'dinosaurs': DINOSAURS, 'scores': SCORES})
        self.dinos = self.ref.child('dinosaurs')
        self.scores = self.ref.child('scores')

    def test_order_by_child_limit_with_tie(self):
        # protocol.md 12.2: heights 0.6, 0.6, 2.1, 3, 4, 25 -> exactly linhenykus, pterodactyl.
        self.assert_query(self.dinos.order_by_child('h').limit_to_first(2),
                          ['linhenykus', 'pterodactyl'], DINOSAURS)
        # The tie breaks by key.
        self.assert_query(self.dinos.order_by_child('h').limit_to_first(1),
                          ['linhenykus'], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('h').limit_to_last(2),
                          ['stegosaurus', 'bruhathkayosaurus'], DINOSAURS)

    def test_order_by_child_ranges(self):
        self.assert_query(self.dinos.order_by_child('h'), BY_HEIGHT, DINOSAURS)
        self.assert_query(self.dinos.order_by_child('h').limit_to_first(10), BY_HEIGHT,
                          DINOSAURS)
        self.assert_query(self.dinos.order_by_child('h').start_at(3.5), BY_HEIGHT[-2:],
                          DINOSAURS)
        self.assert_query(self.dinos.order_by_child('h').end_at(3.5), BY_HEIGHT[:4], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('h').start_at(2.5).end_at(5),
                          ['triceratops', 'stegosaurus'], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('h').start_at(1).limit_to_first(2),
                          ['lambeosaurus', 'triceratops'], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('h').equal_to(0.6),
                          ['linhenykus', 'pterodactyl'], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('h').equal_to(3), ['triceratops'],
                          DINOSAURS)
        # No match: the REST API answers with an empty result (`{}` or `null`).
        self.assertIn(self.dinos.order_by_child('h').equal_to(99).get(), ({}, None))

    def test_order_by_nested_child(self):
        # bruhathkayosaurus has no ratings/pos, so it sorts first (null) and is excluded by
        # any numeric start.
        self.assert_query(self.dinos.order_by_child('ratings/pos').limit_to_first(2),
                          ['bruhathkayosaurus', 'linhenykus'], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('ratings/pos').start_at(2).end_at(4),
                          ['stegosaurus', 'lambeosaurus', 'triceratops'], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('ratings/pos').start_at(4),
                          ['triceratops', 'pterodactyl'], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('ratings/pos').limit_to_last(1),
                          ['pterodactyl'], DINOSAURS)
        self.assert_query(self.dinos.order_by_child('ratings/pos').equal_to(2),
                          ['stegosaurus'], DINOSAURS)

    def test_order_by_key(self):
        self.assert_query(self.dinos.order_by_key(), sorted(DINOSAURS), DINOSAURS)
        self.assert_query(self.dinos.order_by_key().start_at('l').end_at('s'),
                          ['lambeosaurus', 'linhenykus', 'pterodactyl'], DINOSAURS)
        self.assert_query(self.dinos.order_by_key().start_at('m'),
                          ['pterodactyl', 'stegosaurus', 'triceratops'], DINOSAURS)
        self.assert_query(self.dinos.order_by_key().end_at('linhenykus'),
                          ['bruhathkayosaurus', 'lambeosaurus', 'linhenykus'], DINOSAURS)
        self.assert_query(self.dinos.order_by_key().limit_to_first(2),
                          ['bruhathkayosaurus', 'lambeosaurus'], DINOSAURS)
        self.assert_query(self.dinos.order_by_key().limit_to_last(2),
                          ['stegosaurus', 'triceratops'], DINOSAURS)
        self.assert_query(self.dinos.order_by_key().equal_to('stegosaurus'), ['stegosaurus'],
                          DINOSAURS)

    def test_range_and_limit_combinations_match_a_model(self):
        """Every combination of start_at, end_at, equal_to and limit_to_first/last on value and
        child order, against a model of Firebase's ordering (value, then key)."""
        cases = [(self.scores.order_by_value, SCORES, lambda v: v),
                 (lambda: self.dinos.order_by_child('h'), DINOSAURS, lambda v: v['h'])]
        starts, ends, equals = [None, 5, 21, 22, 23, 80], [None, 21, 22, 55, 100], [22, 93, 0.6, 4]
        limits = [None, ('first', 1), ('first', 3), ('last', 1), ('last', 3)]
        checked = 0
        for make, source, value_of in cases:
            ordered = sorted(source, key=lambda key: (value_of(source[key]), key))
            bounds = [(start, end, None) for start in starts for end in ends]
            bounds += [(None, None, equal) for equal in equals]
            for start, end, equal in bounds:
                for limit in limits:
                    query, keys = make(), list(ordered)
                    if start is not None:
                        query = query.start_at(start)
                        keys = [k for k in keys if value_of(source[k]) >= start]
                    if end is not None:
                        query = query.end_at(end)
                        keys = [k for k in keys if value_of(source[k]) <= end]
                    if equal is not None:
                        query = query.equal_to(equal)
                        keys = [k for k in keys if value_of(source[k]) == equal]
                    if limit is not None:
                        kind, count = limit
                        query = query.limit_to_first(count) if kind == 'first' else query.limit_to_last(count)
                        keys = keys[:count] if kind == 'first' else keys[-count:]
                    result = query.get() or {}
                    self.assertEqual(list(result.keys()), keys,
                                     f'start {start} end {end} equal {equal} limit {limit}')
                    checked += 1
        self.assertEqual(checked, 2 * (6 * 5 + 4) * 5)

    def test_order_by_key_integer_keys_first(self):
        data = {'10': 'ten', '9': 'nine', 'a': 'letter', '100': 'hundred', 'b': 'b'}
        holder = self.ref.child('keys')
        holder.set(data)
        # Keys that are 32-bit integers sort first, numerically, then strings. The SDK re-sorts
        # keys as plain strings on the client, so only the selected set is compared here.
        self.assertEqual(dict(holder.order_by_key().limit_to_first(2).get()),
                         {'9': 'nine', '10': 'ten'})
        self.assertEqual(dict(holder.order_by_key().limit_to_last(3).get()),
                         {'100': 'hundred', 'a': 'letter', 'b': 'b'})
        self.assertEqual(dict(holder.order_by_key().start_at('a').get()),
                         {'a': 'letter', 'b': 'b'})

    def test_order_by_value(self):
        by_value = ['stegosaurus', 'lambeosaurus', 'triceratops', 'velociraptor',
                    'bruhathkayosaurus', 'linhenykus', 'pterodactyl']
        self.assert_query(self.scores.order_by_value(), by_value, SCORES)
        self.assert_query(self.scores.order_by_value().limit_to_last(3),
                          ['bruhathkayosaurus', 'linhenykus', 'pterodactyl'], SCORES)
        self.assert_query(self.scores.order_by_value().limit_to_first(2),
                          ['stegosaurus', 'lambeosaurus'], SCORES)
        # Tie at 22 breaks by key.
        self.assert_query(self.scores.order_by_value().start_at(22).limit_to_first(1),
                          ['triceratops'], SCORES)
        self.assert_query(self.scores.order_by_value().equal_to(22),
                          ['triceratops', 'velociraptor'], SCORES)
        self.assert_query(self.scores.order_by_value().start_at(50).end_at(90),
                          ['bruhathkayosaurus', 'linhenykus'], SCORES)

    def test_order_by_value_mixed_types(self):
        data = {'o': {'x': 1}, 's': 'text', 'n': 7, 't': True, 'f': False, 'm': -1}
        holder = self.ref.child('mixed')
        holder.set(data)
        # false < true < numbers < strings < objects.
        self.assert_query(holder.order_by_value().limit_to_first(2), ['f', 't'], data)
        self.assert_query(holder.order_by_value().limit_to_first(4), ['f', 't', 'm', 'n'], data)
        self.assert_query(holder.order_by_value().limit_to_last(2), ['s', 'o'], data)
        self.assert_query(holder.order_by_value().equal_to('text'), ['s'], data)


class ListenTest(CompatTestCase):

    def start_listener(self, ref):
        events = queue.Queue()
        registration = call_with_timeout(lambda: ref.listen(events.put), EVENT_TIMEOUT + 5,
                                         'listen()')
        self.addCleanup(self.close_listener, ref, registration)
        return events

    def close_listener(self, ref, registration):
        """Closes a listener without waiting for the server's next keep-alive.

        ListenerRegistration.close() closes the response and joins the reader thread, but that
        thread stays blocked in a socket read until the server sends another byte (a known
        limitation of the SDK's SSE client). So while close() runs, write under the listened
        location now and then: the resulting event wakes the reader, which then sees the closed
        stream and ends.
        """
        closer = threading.Thread(target=registration.close, name='close()', daemon=True)
        closer.start()
        deadline = time.monotonic() + EVENT_TIMEOUT + 5
        poke = 0
        while closer.is_alive() and time.monotonic() < deadline:
            closer.join(0.2)
            if closer.is_alive():
                poke += 1
                ref.child('close-poke').set(poke)
        self.assertFalse(closer.is_alive(), 'ListenerRegistration.close() did not finish')

    def next_event(self, events, what):
        try:
            return events.get(timeout=EVENT_TIMEOUT)
        except queue.Empty:
            self.fail(f'no event within {EVENT_TIMEOUT} s while waiting for {what}')

    def assert_event(self, events, event_type, path, data):
        what = f'{event_type} at {path} with {data!r}'
        event = self.next_event(events, what)
        self.assertEqual((event.event_type, event.path, event.data), (event_type, path, data),
                         f'expected {what}')

    def test_listen_put_and_patch(self):
        initial = {'a': 1, 'b': {'c': 'x'}}
        self.ref.set(initial)
        events = self.start_listener(self.ref)
        self.assert_event(events, 'put', '/', initial)

        self.ref.child('child').set({'k': 'v'})
        self.assert_event(events, 'put', '/child', {'k': 'v'})

        self.ref.update({'a': 2, 'd': 3})
        self.assert_event(events, 'patch', '/', {'a': 2, 'd': 3})

        self.ref.child('b').update({'e': 5})
        self.assert_event(events, 'patch', '/b', {'e': 5})

        # A push with the default value under the listened location (protocol.md 12.4).
        pushed = self.ref.child('users').push()
        self.assert_event(events, 'put', f'/users/{pushed.key}', '')

        self.ref.child('child').delete()
        self.assert_event(events, 'put', '/child', None)

        # Writes elsewhere produce nothing here.
        self.ref.parent.child(self.ref.key + '-sibling').set('elsewhere')
        self.ref.set('done')
        self.assert_event(events, 'put', '/', 'done')

    def test_listen_on_missing_node(self):
        events = self.start_listener(self.ref)
        self.assert_event(events, 'put', '/', None)
        self.ref.set({'now': 'here'})
        self.assert_event(events, 'put', '/', {'now': 'here'})


class AuthVariableOverrideTest(unittest.TestCase):
    """`databaseAuthVariableOverride` (REST `auth_variable_override`): an admin app acting as a
    user, or as nobody, is judged by the namespace's security rules."""

    NAMESPACE = f'compat-rules-{uuid.uuid4().hex[:8]}'
    RULES = {'rules': {'users': {'$uid': {'.read': 'auth != null && auth.uid === $uid',
                                          '.write': 'auth != null && auth.uid === $uid'}}}}

    def setUp(self):
        faulthandler.dump_traceback_later(PER_TEST_TIMEOUT, exit=True)
        self.addCleanup(faulthandler.cancel_dump_traceback_later)
        request = urllib.request.Request(
            f'http://{emulator_host()}/.settings/rules.json?ns={self.NAMESPACE}', method='PUT',
            data=json.dumps(self.RULES).encode(), headers={'Authorization': 'Bearer owner'})
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            self.assertEqual(response.status, 200)
        url = f'https://{self.NAMESPACE}.firebaseio.com'
        self.alice = firebase_admin.initialize_app(
            options={'databaseURL': url, 'httpTimeout': HTTP_TIMEOUT,
                     'databaseAuthVariableOverride': {'uid': 'alice'}},
            name=f'alice-{uuid.uuid4().hex[:8]}')
        self.nobody = firebase_admin.initialize_app(
            options={'databaseURL': url, 'httpTimeout': HTTP_TIMEOUT,
                     'databaseAuthVariableOverride': None},
            name=f'nobody-{uuid.uuid4().hex[:8]}')
        self.admin = firebase_admin.initialize_app(
            options={'databaseURL': url, 'httpTimeout': HTTP_TIMEOUT}, name=f'admin-{uuid.uuid4().hex[:8]}')
        for app in (self.alice, self.nobody, self.admin):
            self.addCleanup(firebase_admin.delete_app, app)

    def test_the_override_is_the_auth_the_rules_see(self):
        db.reference('users/alice', app=self.alice).set({'name': 'Alice'})
        self.assertEqual(db.reference('users/alice', app=self.alice).get(), {'name': 'Alice'})
        with self.assertRaises(exceptions.FirebaseError):
            db.reference('users/bob', app=self.alice).set({'name': 'Mallory'})
        with self.assertRaises(exceptions.FirebaseError):
            db.reference('users/alice', app=self.nobody).get()
        with self.assertRaises(exceptions.FirebaseError):
            db.reference('users/alice/name', app=self.nobody).set('Eve')
        # The administrator is not bound by the rules, and nothing denied was written.
        self.assertIsNone(db.reference('users/bob', app=self.admin).get())
        self.assertEqual(db.reference('users/alice', app=self.admin).get(), {'name': 'Alice'})


def main():
    try:
        emulator_host()
    except RuntimeError as error:
        print(f'error: {error}', file=sys.stderr)
        sys.exit(2)
    program = unittest.main(exit=False)
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: the SDK's listener threads are not daemons; never let one keep a failed run alive.
    os._exit(0 if program.result.wasSuccessful() else 1)  # pylint: disable=protected-access


if __name__ == '__main__':
    main()
