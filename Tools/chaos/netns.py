"""Network namespaces for Tools/chaos-test: a router namespace and member namespaces joined to it
by veth pairs, sockets opened inside a namespace from this process, and faults made with routing
rules in the router.

Layout: one private /24 (the first of SUBNETS that overlaps nothing on the host) cut into /30
links. Member i's link is block 4*i: the router's end has .4i+1, the member's .4i+2. A member has
its link's /30 and one route, the /24 via the router; no default route, nothing outside the /24.
The router forwards only between its links. Faults are policy-routing rules in the router
(`ip rule ... blackhole`): a forwarded packet that matches is dropped without an ICMP answer, so
neither end sees a FIN, an RST or an error; TCP just retransmits into nothing.

Sockets: setns(2) changes the network namespace of the calling thread only, and a socket stays in
the namespace it was created in. `socket_in` creates a socket from a short-lived thread that
entered the namespace first, so every client, REST caller and proxy of the harness runs as a
thread of the harness while its traffic starts and ends in the member's namespace.
"""

import ctypes
import ipaddress
import os
import re
import signal
import socket
import subprocess
import threading

SUBNETS = ["10.235.35.0/24", "10.235.36.0/24", "10.235.37.0/24", "172.31.235.0/24"]
PREFIX = "rtdbchaos-"
CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


def clean_environment():
    """The environment without proxy settings: nothing here may try to reach a proxy."""
    return {key: value for key, value in os.environ.items() if "proxy" not in key.lower()}


def run(*command, check=True, timeout=20):
    """Runs a command (bounded in time); its result, or raises with what it said."""
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=clean_environment())
    if check and result.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(command), result.returncode, (result.stderr or "").strip()))
    return result


def socket_in(namespace, family=socket.AF_INET, kind=socket.SOCK_STREAM):
    """A new socket inside network namespace `namespace` (a name under /run/netns)."""
    box = {}

    def enter():
        try:
            fd = os.open("/run/netns/%s" % namespace, os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns into %s failed" % namespace)
            finally:
                os.close(fd)
            box["socket"] = socket.socket(family, kind)
        except BaseException as error:  # handed to the caller's thread
            box["error"] = error

    thread = threading.Thread(target=enter, name="setns-%s" % namespace)
    thread.start()
    thread.join(10)
    if "error" in box:
        raise box["error"]
    if "socket" not in box:
        raise RuntimeError("could not open a socket in %s" % namespace)
    return box["socket"]


def connect_in(namespace, address, timeout):
    """A TCP connection from inside `namespace` to `address`, with `timeout` set on it."""
    sock = socket_in(namespace)
    sock.settimeout(timeout)
    try:
        sock.connect(address)
    except BaseException:
        sock.close()
        raise
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class Topology:
    """A router namespace and member namespaces, each joined to the router by a veth pair."""

    def __init__(self, tag, members):
        self.tag = tag
        self.router = PREFIX + tag + "-r"
        self.members = list(members)
        self.namespace = {name: PREFIX + "%s-%s" % (tag, name) for name in self.members}
        self.address = {}
        self.router_address = {}
        self.links = {}
        self.created = []
        self.subnet = None
        self.rules = {}  # fault name -> the router rules it added
        self.next_pref = 100

    def all_namespaces(self):
        return [self.router] + [self.namespace[name] for name in self.members]

    def create(self):
        self.subnet = self.free_subnet()
        if 4 * (len(self.members) + 1) > self.subnet.num_addresses:
            raise RuntimeError("too many members for one /24")
        for name in self.all_namespaces():
            run("ip", "netns", "add", name)
            self.created.append(name)
        self.configure(self.router)
        # Forwarding between the router's links, and nothing else: it has no other link.
        run("ip", "netns", "exec", self.router, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward")
        base = int(self.subnet.network_address)
        for index, name in enumerate(self.members, start=1):
            namespace = self.namespace[name]
            self.configure(namespace)
            router_end, member_end = "rc%sr%d" % (self.tag, index), "rc%sm%d" % (self.tag, index)
            self.links[name] = (router_end, member_end)
            router_address = str(ipaddress.ip_address(base + 4 * index + 1))
            member_address = str(ipaddress.ip_address(base + 4 * index + 2))
            self.router_address[name], self.address[name] = router_address, member_address
            run("ip", "link", "add", router_end, "netns", self.router, "type", "veth",
                "peer", "name", member_end, "netns", namespace)
            run("ip", "-n", self.router, "addr", "add", router_address + "/30", "dev", router_end)
            run("ip", "-n", namespace, "addr", "add", member_address + "/30", "dev", member_end)
            run("ip", "-n", self.router, "link", "set", router_end, "up")
            run("ip", "-n", namespace, "link", "set", member_end, "up")
            run("ip", "-n", namespace, "route", "add", str(self.subnet), "via", router_address)
        self.check_isolated()

    def configure(self, namespace):
        # No IPv6 at all: not even link-local addresses.
        run("ip", "netns", "exec", namespace, "sh", "-c",
            "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6")
        run("ip", "-n", namespace, "link", "set", "lo", "up")

    @staticmethod
    def host_networks():
        """The host's IPv4 addresses (as interfaces) and routed networks, loopback aside."""
        addresses = []
        for line in run("ip", "-4", "-o", "addr", "show").stdout.splitlines():
            match = re.search(r"inet (\S+)", line)
            if match:
                interface = ipaddress.ip_interface(match.group(1))
                if not interface.ip.is_loopback:
                    addresses.append(interface)
        routes = []
        for line in run("ip", "-4", "route", "show", "table", "all").stdout.splitlines():
            destination = line.split()[0]
            if destination in ("default", "broadcast", "local", "unreachable", "blackhole", "prohibit", "throw"):
                destination = line.split()[1] if destination != "default" else "0.0.0.0/0"
            try:
                network = ipaddress.ip_network(destination, strict=False)
            except ValueError:
                continue
            if not network.is_loopback and network.prefixlen > 0:
                routes.append(network)
        return addresses, routes

    def free_subnet(self):
        addresses, routes = self.host_networks()
        for candidate in map(ipaddress.ip_network, SUBNETS):
            if any(candidate.overlaps(a.network) for a in addresses) or any(candidate.overlaps(r) for r in routes):
                continue
            return candidate
        raise RuntimeError("every candidate subnet (%s) overlaps a network of this host" % ", ".join(SUBNETS))

    def check_isolated(self):
        """No namespace has a default route, a route outside the subnet, or a way to the host;
        no veth end is in the host's namespace. Raises otherwise."""
        addresses, _ = self.host_networks()
        kinds = ("unicast", "local", "broadcast", "multicast", "anycast", "unreachable", "blackhole", "prohibit", "throw", "nat")
        for name in self.all_namespaces():
            for family in ("-4", "-6"):
                for line in run("ip", "-n", name, family, "route", "show", "table", "all").stdout.splitlines():
                    fields = line.split()
                    destination = fields[1] if fields[0] in kinds else fields[0]
                    if destination == "default":
                        raise RuntimeError("namespace %s has a default route: %s" % (name, line))
                    try:
                        network = ipaddress.ip_network(destination, strict=False)
                    except ValueError:
                        raise RuntimeError("namespace %s has a route this script cannot read: %s" % (name, line))
                    if network.is_loopback or (network.version == 4 and network.subnet_of(self.subnet)):
                        continue
                    if network.is_multicast or network.is_link_local:
                        continue
                    raise RuntimeError("namespace %s has a route outside %s: %s" % (name, self.subnet, line))
            for interface in addresses:
                result = run("ip", "-n", name, "route", "get", str(interface.ip), check=False)
                if result.returncode == 0:
                    raise RuntimeError("namespace %s can reach the host's %s: %s" % (name, interface.ip, result.stdout.strip()))
        links = run("ip", "-o", "link", "show").stdout
        for pair in self.links.values():
            for link in pair:
                if re.search(r"\b%s\b" % re.escape(link), links):
                    raise RuntimeError("the veth end %s is in the host's namespace" % link)

    # Faults: rules in the router, dropping forwarded packets silently.

    def _add_rules(self, fault, selectors):
        if fault in self.rules:
            raise RuntimeError("fault %s is already in place" % fault)
        added = []
        self.rules[fault] = added
        for selector in selectors:
            pref = str(self.next_pref)
            self.next_pref += 1
            run("ip", "-n", self.router, "rule", "add", "pref", pref, *selector, "blackhole")
            added.append(pref)

    def cut(self, fault, a, b):
        """Drops every packet between members `a` and `b`, both ways; others are untouched."""
        self._add_rules(fault, [("from", self.address[a] + "/32", "to", self.address[b] + "/32"),
                                ("from", self.address[b] + "/32", "to", self.address[a] + "/32")])

    def isolate(self, fault, a):
        """Drops every packet to and from member `a`."""
        self._add_rules(fault, [("from", self.address[a] + "/32"), ("to", self.address[a] + "/32")])

    def heal(self, fault):
        for pref in self.rules.pop(fault, []):
            run("ip", "-n", self.router, "rule", "del", "pref", pref)

    def delete(self, log):
        for name in list(self.created):
            # Processes still inside (ours: the servers, PostgreSQL) end first.
            for pid in run("ip", "netns", "pids", name, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            result = run("ip", "netns", "del", name, check=False)
            if result.returncode == 0:
                self.created.remove(name)
            else:
                log("could not delete namespace %s: %s" % (name, result.stderr.strip()))
        left = [name for name in run("ip", "netns", "list", check=False).stdout.split() if name.startswith(PREFIX)]
        if left:
            log("namespaces left over from this or an earlier run: %s" % " ".join(left))
