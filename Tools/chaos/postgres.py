"""A private, throw-away PostgreSQL cluster for Tools/chaos-test, inside a network namespace.

Found as Tools/lib/postgres.sh finds it (RTDB_TEST_POSTGRES_BIN, then PATH, then
/usr/lib/postgresql/*/bin and /usr/pgsql-*/bin, highest version first); run as the unprivileged
user `rtdb-pg` when root (PostgreSQL refuses root; Tools/lib/postgres.sh creates that user), and
started with `ip netns exec NAMESPACE setpriv ... postgres`, listening only on the namespace's veth
address, trusting only the harness's /24. fsync is off: nothing here crashes PostgreSQL, and the
cluster is deleted at the end; every commit is still a real commit before it is acknowledged.
"""

import glob
import os
import pwd
import re
import shutil
import subprocess
import time

from netns import clean_environment, run

USER = "rtdb-pg"


def find_bin_dir():
    candidates = []
    if os.environ.get("RTDB_TEST_POSTGRES_BIN"):
        candidates.append(os.environ["RTDB_TEST_POSTGRES_BIN"])
    for tool in ("pg_ctl", "initdb", "postgres"):
        path = shutil.which(tool)
        if path:
            candidates.append(os.path.dirname(os.path.realpath(path)))

    def version_key(path):
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]

    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin") + glob.glob("/usr/pgsql-*/bin"), key=version_key, reverse=True)
    for directory in candidates:
        if all(os.access(os.path.join(directory, tool), os.X_OK) for tool in ("initdb", "pg_ctl", "postgres")):
            return directory
    raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found; install PostgreSQL "
                       "(Tools/test does: Tools/lib/postgres.sh) or set RTDB_TEST_POSTGRES_BIN")


class Cluster:
    def __init__(self, netns, address, subnet, log):
        self.netns, self.address, self.subnet, self.log = netns, address, subnet, log
        self.bin = find_bin_dir()
        self.process = None
        self.directory = None
        self.port = 5432

    def url(self):
        return "postgres://rtdb@%s:%d/postgres" % (self.address, self.port)

    def _as_owner(self):
        if os.geteuid() != 0:
            return []
        try:
            pwd.getpwnam(USER)
        except KeyError:
            run("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                "--shell", "/usr/sbin/nologin", USER, check=False)
            pwd.getpwnam(USER)
        return ["setpriv", "--reuid=%s" % USER, "--regid=%s" % USER, "--clear-groups", "--"]

    def start(self, timeout=60):
        owner = self._as_owner()
        self.directory = subprocess.check_output(["mktemp", "-d", "/tmp/rtdb-chaos-pg.XXXXXX"], text=True).strip()
        os.mkdir(os.path.join(self.directory, "sock"))
        if owner:
            run("chown", "-R", "%s:" % USER, self.directory)
        data = os.path.join(self.directory, "data")
        result = subprocess.run(owner + [os.path.join(self.bin, "initdb"), "-D", data, "--username=rtdb", "--auth=trust",
                                         "--encoding=UTF8", "--no-locale", "--no-sync"],
                                cwd=self.directory, capture_output=True, text=True, timeout=120, env=clean_environment())
        if result.returncode != 0:
            raise RuntimeError("initdb failed: %s" % result.stderr[-2000:])
        with open(os.path.join(data, "pg_hba.conf"), "a") as handle:
            handle.write("\n# Tools/chaos-test: the harness's private subnet only.\nhost all all %s trust\n" % self.subnet)
        self.log_path = os.path.join(self.directory, "postgres.log")
        log_file = open(self.log_path, "w")
        if owner:
            os.chown(self.log_path, pwd.getpwnam(USER).pw_uid, pwd.getpwnam(USER).pw_gid)
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", self.netns] + owner + [
                os.path.join(self.bin, "postgres"), "-D", data, "-p", str(self.port),
                "-c", "listen_addresses=%s" % self.address, "-c", "unix_socket_directories=%s" % os.path.join(self.directory, "sock"),
                "-c", "max_connections=200", "-c", "fsync=off", "-c", "synchronous_commit=on"],
            cwd=self.directory, stdout=log_file, stderr=subprocess.STDOUT, env=clean_environment())
        log_file.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("PostgreSQL exited: %s" % open(self.log_path).read()[-2000:])
            if "ready to accept connections" in open(self.log_path).read():
                return
            time.sleep(0.1)
        raise RuntimeError("PostgreSQL did not start in %d s: %s" % (timeout, open(self.log_path).read()[-2000:]))

    def stop(self, keep):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.directory and not keep:
            shutil.rmtree(self.directory, ignore_errors=True)
