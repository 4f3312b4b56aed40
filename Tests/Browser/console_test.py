"""The data console (/.console/) in a real browser: headless Chromium driven by selenium through
the system chromedriver, against rtdb-server with the memory backend. Data is seeded and checked
over the REST API with urllib; the page is used as a person would (clicks, typing, Enter).

Usage: RTDB_SERVER=path/to/rtdb-server CHROMIUM=path/to/chromium CHROMEDRIVER=path/to/chromedriver \
       python console_test.py [unittest args]
Set RTDB_CONSOLE_SCREENSHOT=path.png to save a screenshot of the Data tab.
CHROMIUM may be a headless shell or a full browser; chromium.py picks the flags for it.
"""
import json
import os
import secrets
import shutil
import string
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

import chromium
import rtdb_server

# Seconds any one thing may take to show up (or a request to be answered). Generous for a loaded
# machine: a wait only lasts this long when the test is failing anyway.
WAIT = 30
PAGE = 50  # children per page in the console

driver = None
downloads = None


def setUpModule():
    global driver, downloads
    browser = chromium.Chromium(os.environ["CHROMIUM"])
    print(f"    [console] {browser.describe()}", file=sys.stderr)
    if browser.kind != chromium.FULL_BROWSER:
        # Tried with Debian's chromium-headless-shell 156: chromedriver starts it, then fails the
        # session with "unable to discover open pages".
        raise chromium.ChromiumError(f"{browser.path} is a {browser.kind}; chromedriver needs a full "
                                     "browser (Debian's chromium, which Tools/console-test installs)")
    browser.check()
    # The browser's home, profile and downloads are this run's own (chromedriver passes its
    # environment on to the browser).
    browser_home = tempfile.mkdtemp(prefix="rtdb-console-home-")
    # Removed after the tests, or at once if starting the browser below fails.
    unittest.addModuleCleanup(shutil.rmtree, browser_home, ignore_errors=True)
    downloads = os.path.join(browser_home, "downloads")
    os.mkdir(downloads)
    options = webdriver.ChromeOptions()
    options.binary_location = browser.path
    for argument in (*browser.flags(), f"--user-data-dir={os.path.join(browser_home, 'profile')}",
                     "--window-size=1280,860", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {
        "download.default_directory": downloads,
        "download.prompt_for_download": False,
    })
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=os.environ["CHROMEDRIVER"], env=chromium.environment(browser_home))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)


def tearDownModule():
    if driver is not None:
        driver.quit()


class Server:
    """An rtdb-server process on a free port, with REST helpers."""

    def __init__(self, *arguments, credential="owner"):
        self.data = tempfile.mkdtemp(prefix="rtdb-console-")
        self.credential = credential
        # Waits for the ready line at most rtdb_server.READY_TIMEOUT seconds, then fails with the
        # server's output so far.
        try:
            self.process = rtdb_server.ServerProcess(
                ["--port", "0", "--backend", "memory", "--data-dir", self.data, "--log-level", "error",
                 *arguments])
        except BaseException:
            shutil.rmtree(self.data, ignore_errors=True)
            raise
        self.base = f"http://127.0.0.1:{self.process.port}"

    def stop(self):
        self.process.stop()
        shutil.rmtree(self.data, ignore_errors=True)

    def rest(self, method, path, body=None, **params):
        params.setdefault("auth", self.credential)
        query = urllib.parse.urlencode(params)
        location = "/" if path == "/" else urllib.parse.quote(path)
        url = f"{self.base}{location}.json?{query}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: HTTP {error.code} {error.read().decode()}") from None
        return json.loads(text) if text else None

    def wait_for_value(self, path, expected, **params):
        """Polls GET path until it answers `expected`; returns the last answer."""
        deadline = time.monotonic() + WAIT
        value = self.rest("GET", path, **params)
        while value != expected and time.monotonic() < deadline:
            time.sleep(0.1)
            value = self.rest("GET", path, **params)
        return value


def row(path):
    return f'.row[data-path="{path}"]'


def node(path):
    """The list item (row, children, pager) of `path`."""
    return f'li.node:has(> {row(path)})'


class ConsolePage:
    """Helpers for the page shared by the test cases."""

    def open_console(self, base):
        driver.get(f"{base}/.console/")
        self.wait_for(row("/"))

    def wait_for(self, selector, timeout=WAIT):
        return WebDriverWait(driver, timeout).until(
            lambda d: d.find_element(By.CSS_SELECTOR, selector),
            f"nothing matched {selector}")

    def wait_until(self, condition, message, timeout=WAIT):
        def check(_):
            try:
                return condition()
            except (StaleElementReferenceException, WebDriverException):
                return False
        return WebDriverWait(driver, timeout).until(check, message)

    def gone(self, selector):
        self.wait_until(lambda: not driver.find_elements(By.CSS_SELECTOR, selector), f"{selector} is still shown")

    def text(self, selector):
        return driver.find_element(By.CSS_SELECTOR, selector).text

    def value_text(self, path):
        return self.text(f"{row(path)} .value")

    def wait_for_value_text(self, path, expected):
        self.wait_until(lambda: self.value_text(path) == expected,
                        f"{path} did not show {expected!r}")

    def click(self, selector):
        element = self.wait_for(selector)
        ActionChains(driver).move_to_element(element).perform()
        element.click()
        return element

    def row_action(self, path, action):
        """Hovers the row of `path` (its buttons show on hover) and clicks its `action` button."""
        element = self.wait_for(row(path))
        ActionChains(driver).move_to_element(element).perform()
        element.find_element(By.CSS_SELECTOR, f".{action}").click()

    def expand(self, path):
        self.click(f"{row(path)} .toggle")
        self.wait_for(f'{row(path)} .toggle[aria-expanded="true"]')

    def child_paths(self, path):
        prefix = "/" if path == "/" else f"{path}/"
        return [element.get_attribute("data-path")
                for element in driver.find_elements(By.CSS_SELECTOR, f'.row[data-path^="{prefix}"]')
                if "/" not in element.get_attribute("data-path")[len(prefix):]]

    def tab(self, name):
        self.click(f"#tab-{name}")
        self.wait_until(lambda: driver.find_element(By.ID, f"view-{name}").is_displayed(), f"{name} tab not shown")

    def type_into(self, selector, text):
        element = self.wait_for(selector)
        element.send_keys(Keys.CONTROL, "a")  # replaces what is there (clear() would blur it)
        element.send_keys(text)
        return element

    def script_errors(self):
        return [entry["message"] for entry in driver.get_log("browser")
                if entry["level"] == "SEVERE" and "Failed to load resource" not in entry["message"]]


class LoopbackConsoleTest(ConsolePage, unittest.TestCase):
    """A server bound to loopback only: the console opens without a login."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--host", "127.0.0.1")
        cls.server.rest("PUT", "/", {
            "greeting": "hello",
            "counter": 1,
            "trash": "x",
            "users": {"ada": {"age": 36}},
            "people": {"ada": {"age": 36}, "bob": {"age": 20}, "cy": {"age": 50}, "dee": {"age": 41}},
            "many": {f"k{index:03d}": index for index in range(120)},
        })

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def setUp(self):
        driver.get_log("browser")  # drop what earlier tests logged

    def tearDown(self):
        errors = self.script_errors()
        self.assertEqual(errors, [], "the page logged script errors")

    def test_1_opens_on_the_first_level_and_follows_changes(self):
        self.open_console(self.server.base)
        self.wait_for(row("/greeting"))
        self.wait_for(row("/users"))
        self.assertEqual(self.value_text("/greeting"), '"hello"')
        self.assertEqual(self.value_text("/users"), "1 child")
        self.wait_until(lambda: self.text("#live-state") == "live", "the stream is not live")

        self.server.rest("PUT", "/live", "on")
        self.wait_for_value_text("/live", '"on"')
        # Only the first level is shown. Checked after /live shows, not when the first rows do: the
        # tree gets its data from one event stream, in order, and draws all it holds in one pass,
        # so once this later event is drawn, every earlier one (the first put, with /users/ada in
        # it) has been drawn too. A deeper level shown at any point up to here would be seen.
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, row("/users/ada")), [], "only the first level is shown")
        self.server.rest("PUT", "/counter", 2)
        self.wait_for_value_text("/counter", "2")
        self.server.rest("DELETE", "/live")
        self.gone(row("/live"))

        self.expand("/users")
        self.wait_for(row("/users/ada"))
        self.server.rest("PATCH", "/users", {"bob": {"age": 20}})
        self.wait_for_value_text("/users/bob", "1 child")
        self.wait_for_value_text("/users", "2 children")

    def test_2_edits_adds_and_deletes(self):
        self.open_console(self.server.base)
        self.click(f"{row('/greeting')} .value")
        self.type_into(f"{row('/greeting')} .edit", "world").send_keys(Keys.ENTER)
        self.assertEqual(self.server.wait_for_value("/greeting", "world"), "world")
        self.wait_for_value_text("/greeting", '"world"')

        self.expand("/users")
        self.expand("/users/ada")
        self.click(f"{row('/users/ada/age')} .value")
        self.type_into(f"{row('/users/ada/age')} .edit", "37").send_keys(Keys.ENTER)
        self.assertEqual(self.server.wait_for_value("/users/ada/age", 37), 37)

        self.row_action("/", "add")
        self.type_into(f"{node('/')} > .add-form .add-key", "added")
        self.type_into(f"{node('/')} > .add-form .add-value", '{"n": 1, "tag": "new"}').send_keys(Keys.ENTER)
        self.assertEqual(self.server.wait_for_value("/added", {"n": 1, "tag": "new"}), {"n": 1, "tag": "new"})
        self.wait_for(row("/added"))

        self.row_action("/trash", "delete")
        self.click(f"{row('/trash')} .confirm-delete")
        self.assertIsNone(self.server.wait_for_value("/trash", None))
        self.gone(row("/trash"))

    def test_3_pages_large_child_lists(self):
        self.open_console(self.server.base)
        keys = [f"/many/k{index:03d}" for index in range(120)]
        # Expanded in the tree: paged in the page.
        self.expand("/many")
        self.wait_until(lambda: len(self.child_paths("/many")) == PAGE, "the first page is not 50 children")
        self.assertEqual(self.child_paths("/many"), keys[:PAGE])
        self.click(f"{node('/many')} > .pager .more")
        self.wait_until(lambda: len(self.child_paths("/many")) == 2 * PAGE, "the second page did not load")
        self.click(f"{node('/many')} > .pager .more")
        self.wait_until(lambda: len(self.child_paths("/many")) == 120, "the last page did not load")
        self.assertEqual(self.child_paths("/many"), keys)
        self.assertFalse(driver.find_element(By.CSS_SELECTOR, f"{node('/many')} > .pager").is_displayed())

        # Opened as the view's path: paged by the server (a wider query on the stream).
        self.type_into("#path-input", "/many").send_keys(Keys.ENTER)
        self.wait_for(f'.root > {row("/many")}')
        self.wait_until(lambda: len(self.child_paths("/many")) == PAGE, "the first server page is not 50 children")
        self.assertEqual(self.child_paths("/many"), keys[:PAGE])
        self.click(f"{node('/many')} > .pager .more")
        self.wait_until(lambda: len(self.child_paths("/many")) == 2 * PAGE, "the second server page did not load")
        self.click(f"{node('/many')} > .pager .more")
        self.wait_until(lambda: len(self.child_paths("/many")) == 120, "the last server page did not load")
        self.assertEqual(self.child_paths("/many"), keys)
        self.server.rest("PUT", "/many/k000", "changed")
        self.wait_for_value_text("/many/k000", '"changed"')

    def test_4_runs_queries_in_order(self):
        self.open_console(self.server.base)
        self.tab("query")
        self.type_into("#query-path", "/people")
        Select(driver.find_element(By.ID, "query-order")).select_by_value("child")
        self.type_into("#query-child", "age")
        Select(driver.find_element(By.ID, "query-limit-kind")).select_by_value("limitToLast")
        self.type_into("#query-limit", "2")
        self.click("#query-run")
        self.wait_until(lambda: len(driver.find_elements(By.CSS_SELECTOR, ".result-row")) == 2, "no results")
        keys = [element.get_attribute("data-key") for element in driver.find_elements(By.CSS_SELECTOR, ".result-row")]
        self.assertEqual(keys, ["dee", "cy"])

        Select(driver.find_element(By.ID, "query-limit-kind")).select_by_value("")
        self.type_into("#query-start", "30")
        self.type_into("#query-end", "45")
        self.click("#query-run")
        self.wait_until(lambda: [e.get_attribute("data-key") for e in driver.find_elements(By.CSS_SELECTOR, ".result-row")]
                        == ["ada", "dee"], "the range query did not list ada, dee")

    def test_5_lists_connections(self):
        self.open_console(self.server.base)
        self.wait_until(lambda: self.text("#live-state") == "live", "the stream is not live")
        self.tab("connections")
        self.wait_for('.connection-row[data-transport="eventStream"]')
        rows = driver.find_elements(By.CSS_SELECTOR, ".connection-row")
        print(f"\n    [console] connections: {self.text('#connections-summary')}", end=" ")
        self.assertGreaterEqual(len(rows), 1)

    def test_6_edits_rules(self):
        self.open_console(self.server.base)
        self.tab("rules")
        self.wait_until(lambda: '".read"' in driver.find_element(By.ID, "rules-text").get_attribute("value"),
                        "the rules are not shown")
        self.type_into("#rules-text", '{"rules": {".read": "no such thing", ".write": true}}')
        self.click("#rules-save")
        self.wait_for("#rules-message.error")
        message = self.text("#rules-message")
        print(f"\n    [console] rules error: {message}", end=" ")
        self.assertTrue(message)
        self.assertEqual(self.server.rest("GET", "/.settings/rules"), {"rules": {".read": True, ".write": True}})

        good = '{\n  "rules": {\n    ".read": true,\n    ".write": "auth != null"\n  }\n}'
        self.type_into("#rules-text", good)
        self.click("#rules-save")
        self.wait_for("#rules-message.success")
        self.assertEqual(self.server.rest("GET", "/.settings/rules"),
                         {"rules": {".read": True, ".write": "auth != null"}})
        self.type_into("#rules-text", '{"rules": {".read": true, ".write": true}}')
        self.click("#rules-save")
        self.wait_for("#rules-message.success")

    def test_7_imports_and_exports(self):
        self.open_console(self.server.base)
        self.type_into("#path-input", "/imported").send_keys(Keys.ENTER)
        self.wait_for(f'.root > {row("/imported")}')
        self.click("#import-toggle")
        document = {"a": {".value": 1, ".priority": 2}, "b": "two"}
        self.type_into("#import-text", json.dumps(document))
        self.click("#import-run")
        self.assertEqual(self.server.wait_for_value("/imported", {"a": 1, "b": "two"}), {"a": 1, "b": "two"})
        self.wait_for(row("/imported/b"))

        for name in os.listdir(downloads):
            os.remove(os.path.join(downloads, name))
        self.click("#export-button")
        self.wait_until(lambda: [n for n in os.listdir(downloads) if n.endswith(".json")], "no export was downloaded")
        exported = [n for n in os.listdir(downloads) if n.endswith(".json")][0]
        with open(os.path.join(downloads, exported)) as file:
            self.assertEqual(json.load(file), document)

    def test_8_screenshot(self):
        path = os.environ.get("RTDB_CONSOLE_SCREENSHOT")
        if not path:
            self.skipTest("RTDB_CONSOLE_SCREENSHOT is not set")
        self.server.rest("PUT", "/", {
            "rooms": {
                "general": {"title": "General", "members": 12, "createdAt": 1764000000000},
                "random": {"title": "Random", "members": 5, "createdAt": 1764003600000},
            },
            "users": {
                "ada": {"name": "Ada Lovelace", "age": 36, "online": True, "lastSeen": 1764007200000},
                "alan": {"name": "Alan Turing", "age": 41, "online": False, "lastSeen": 1763990000000},
                "grace": {"name": "Grace Hopper", "age": 85, "online": True, "lastSeen": 1764007100000},
            },
            "messages": {"general": {f"-Nm{index}": {"from": "ada", "text": f"message {index}"} for index in range(8)}},
            "settings": {"maintenance": False, "motd": "Welcome back!", "version": 3},
        }, ns="demo")
        self.open_console(self.server.base)
        self.type_into("#namespace", "demo").send_keys(Keys.ENTER)
        self.wait_for(row("/users"))
        self.expand("/users")
        self.expand("/users/ada")
        self.expand("/settings")
        self.wait_for(row("/users/ada/name"))
        self.server.rest("PUT", "/users/ada/lastSeen", 1764007260000, ns="demo")
        self.wait_for_value_text("/users/ada/lastSeen", "1764007260000")
        driver.execute_script("document.activeElement.blur()")
        ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, row("/users/grace"))).perform()
        driver.save_screenshot(path)
        print(f"\n    [console] screenshot: {path}", end=" ")


class SecretConsoleTest(ConsolePage, unittest.TestCase):
    """A server reachable beyond loopback: the console asks for the admin secret."""

    def setUp(self):
        self.files = tempfile.mkdtemp(prefix="rtdb-console-auth-")
        self.secret = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
        rules = os.path.join(self.files, "rules.json")
        with open(rules, "w") as file:
            json.dump({"rules": {".read": False, ".write": False}}, file)
        secret_file = os.path.join(self.files, "secret")
        with open(secret_file, "w") as file:
            file.write(self.secret)
        self.server = Server("--host", "0.0.0.0", "--rules", rules, "--auth-secret-file", secret_file,
                             credential=self.secret)
        self.server.rest("PUT", "/greeting", "hello")

    def tearDown(self):
        self.server.stop()
        shutil.rmtree(self.files, ignore_errors=True)

    def test_asks_for_the_admin_secret(self):
        driver.get(f"{self.server.base}/.console/")
        self.wait_until(lambda: driver.find_element(By.ID, "login").is_displayed(), "no login form")
        self.assertFalse(driver.find_element(By.ID, "app").is_displayed())
        self.type_into("#secret", "not-the-secret").send_keys(Keys.ENTER)
        self.wait_until(lambda: driver.find_element(By.ID, "login-error").is_displayed(), "no error for a wrong secret")
        # The page shows the error instead of starting the app, in the same step: the app is still
        # hidden once the error shows (and the data could only come from the server, which
        # refuses the wrong secret).
        self.assertFalse(driver.find_element(By.ID, "app").is_displayed())
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, row("/greeting")), [])
        self.type_into("#secret", self.secret).send_keys(Keys.ENTER)
        self.wait_for(row("/greeting"))
        self.assertFalse(driver.find_element(By.ID, "login").is_displayed())
        self.assertEqual(self.value_text("/greeting"), '"hello"')
        self.server.rest("PUT", "/greeting", "again")
        self.wait_for_value_text("/greeting", '"again"')

        # The secret is kept for the tab, and asked for again once it no longer works.
        driver.refresh()
        self.wait_for(row("/greeting"))
        self.assertFalse(driver.find_element(By.ID, "login").is_displayed())
        driver.execute_script("sessionStorage.setItem('rtdb-console.secret', 'stale')")
        driver.refresh()
        self.wait_until(lambda: driver.find_element(By.ID, "login").is_displayed(), "no login for a stale secret")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)
