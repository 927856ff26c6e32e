#!/usr/bin/env python3
"""The soak driver behind scripts/soak.sh (run in dirigo's namespace, as root).

  soak.py config A|B                 the daemon configuration's services (TOML)
  soak.py run --seconds S ...        traffic, churn, faults and the checks

`run` starts soak_flows.py in the client namespace (long and short TCP and
UDP flows to DR, TUN and NAT services at once), and for S seconds changes
the configuration at random while it runs: services of the churn set added,
edited and removed, their real servers added, re-weighted, zeroed and back,
removed, real-server processes restarted, the LAN tap taken down and up, and
the configuration file reloaded (alternating between versions A and B). The
protected services (rs1 and rs2 behind one DR, one TUN and one NAT VIP) are
only ever edited (scheduler), never removed or zeroed. Beside it, the
control socket is timed every 200 ms and dirigo's resident memory sampled
every 2 s. At the end it prints the figures and checks the invariants
(docs/OPERATIONS.md, Soak); exit status 1 when one fails.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak_checks import Ctl, echo, identities, pct, round_trip  # noqa: E402

VIP_DR = "10.99.0.100"
VIP_TUN = "10.99.0.101"
VIP_NAT = "10.99.0.102"
VIP_CHURN = "10.99.0.110"
#: VIPs the real servers hold themselves (DR, TUN).
RS_VIPS = [VIP_TUN, VIP_CHURN]
#: Extra client addresses: the worker owning a flow is a hash of the client.
SRCS = ["10.99.0.2", "10.99.0.3", "10.99.0.4", "10.99.0.5"]
PROTECTED = ["rs1", "rs2"]
CHURN_RS = ["rs3", "rs4", "rs5"]
CROWD = 6  # control clients at once (Soak.crowd)
SCHEDS = ["rr", "wrr", "wlc", "lc"]


def rip(name):
    return f"10.98.0.{10 + int(name[2:])}"


# (proto, vip, port): (scheduler, [(server, rs port, method, weight)])
PROTECTED_SVCS = {
    ("tcp", VIP_DR, 80): ("rr", [(n, 80, "dr", 1) for n in PROTECTED]),
    ("udp", VIP_DR, 5353): ("rr", [(n, 5353, "dr", 1) for n in PROTECTED]),
    ("tcp", VIP_TUN, 80): ("rr", [(n, 80, "tun", 1) for n in PROTECTED]),
    ("udp", VIP_TUN, 5353): ("rr", [(n, 5353, "tun", 1) for n in PROTECTED]),
    ("tcp", VIP_NAT, 8080): ("rr", [(n, 80, "nat", 1) for n in PROTECTED]),
    ("udp", VIP_NAT, 5300): ("rr", [(n, 5353, "nat", 1) for n in PROTECTED]),
}
CHURN_KEYS = [("tcp", VIP_CHURN, 80), ("udp", VIP_CHURN, 5353), ("tcp", VIP_CHURN, 8080)]
CHURN_A = {
    ("tcp", VIP_CHURN, 80): ("wlc", [("rs3", 80, "dr", 1), ("rs4", 80, "tun", 1)]),
    ("udp", VIP_CHURN, 5353): ("rr", [("rs3", 5353, "dr", 1), ("rs5", 5353, "tun", 1)]),
    ("tcp", VIP_CHURN, 8080): ("rr", [(n, 80, "nat", 1) for n in CHURN_RS]),
}
CHURN_B = {
    ("tcp", VIP_CHURN, 80): ("rr", [("rs3", 80, "dr", 2), ("rs5", 80, "dr", 1)]),
    ("tcp", VIP_CHURN, 8080): ("wrr", [("rs4", 80, "nat", 1), ("rs5", 80, "nat", 3)]),
}


def services_toml(version):
    out = []
    for (proto, vip, port), (sched, dests) in {**PROTECTED_SVCS, **(CHURN_A if version == "A" else CHURN_B)}.items():
        out.append(f'[[service]]\nprotocol = "{proto}"\naddress = "{vip}:{port}"\nscheduler = "{sched}"\n')
        for name, rport, method, weight in dests:
            out.append(
                f'[[service.real_server]]\naddress = "{rip(name)}:{rport}"\nmethod = "{method}"\nweight = {weight}\n'
            )
    return "".join(out)


def model_of(churn):
    """The churn set as the driver tracks it: key -> {sched, dests: {name: [port, method, weight]}}."""
    return {k: {"sched": s, "dests": {n: [p, m, w] for n, p, m, w in d}} for k, (s, d) in churn.items()}


def plan(prefix_srcs):
    """The flow classes (soak_flows.py's plan)."""
    p = []
    for mode, vip, tport, uport in (("dr", VIP_DR, 80, 5353), ("tun", VIP_TUN, 80, 5353), ("nat", VIP_NAT, 8080, 5300)):
        for kind in ("long_down", "long_up", "short", "udp"):
            port = uport if kind == "udp" else tport
            p.append({"mode": mode, "set": "protected", "kind": kind, "vip": vip, "port": port, "servers": PROTECTED, "src": prefix_srcs})
    for kind, port in (("long_down", 80), ("short", 80), ("short", 8080), ("udp", 5353)):
        p.append({"mode": "mixed", "set": "churn", "kind": kind, "vip": VIP_CHURN, "port": port, "servers": None, "src": prefix_srcs})
    return p


class Soak:
    def __init__(self, a):
        self.a = a
        self.ctl = Ctl(a.socket)
        self.t0 = time.monotonic()
        self.stop = threading.Event()
        self.lat = []  # (t, ms)
        self.lat_err = []
        self.ref = []  # (t, ms) of the reference echo
        self.rss = []  # (t, kB)
        self.base_maps = None  # smaps at the first sample after the baseline
        self.crowd_ok = 0
        self.crowd_err = []
        self.exited_at = None
        self.ops = {}
        self.op_errors = []
        # what happened to the lab's own processes, reported but not a failure
        self.op_notes = []
        self.version = "A"
        self.model = model_of(CHURN_A)
        self.psched = {k: s for k, (s, _) in PROTECTED_SVCS.items()}

    def now(self):
        return time.monotonic() - self.t0

    def log(self, msg):
        print(f"soak[{self.now():6.1f}s] {msg}", flush=True)

    # ------------------------------------------------------------ watchers

    def probe(self):
        """Time one `list` request (what dirigoadm -L -n sends) every 200 ms:
        connect, request, whole answer; not a process start-up."""
        while not self.stop.is_set():
            t = time.monotonic()
            try:
                self.ctl.call("list")
                self.lat.append((self.now(), (time.monotonic() - t) * 1e3))
            except (OSError, RuntimeError, ValueError) as e:
                self.lat_err.append(f"t={self.now():.1f}s {e}")
            self.stop.wait(max(0.0, 0.2 - (time.monotonic() - t)))

    def status(self):
        """dirigo's VmRSS, RssAnon, RssFile, RssShmem (kB) and Threads; None
        when it is gone."""
        want = ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads")
        got = {}
        try:
            with open(f"/proc/{self.a.pid}/status") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k == "State" and v.split()[0] in ("Z", "X"):
                        return None
                    if k in want:
                        got[k] = int(v.split()[0])
        except OSError:
            return None
        return tuple(got.get(k, 0) for k in want) if "VmRSS" in got else None

    def probe_ref(self, path):
        """The same round trip every 200 ms against a trivial line echo in
        another process (thread per connection, as dirigo's server): what
        this machine's scheduling alone costs such a request."""
        while not self.stop.is_set():
            t = time.monotonic()
            try:
                round_trip(path, b'{"op":"list"}')
                self.ref.append((self.now(), (time.monotonic() - t) * 1e3))
            except OSError:
                pass
            self.stop.wait(max(0.0, 0.2 - (time.monotonic() - t)))

    def crowd(self):
        """Several control clients at once, as operators have them (a
        metrics scrape, dirigoadm, a checker): from just after the memory
        baseline, every 10 s, CROWD threads send `list` requests for 1.5 s.
        dirigo answers each client on a thread of its own; its resident
        memory must not step up with the first overlap of that many
        (glibc's per-thread arenas did, by 1-1.5 MB each)."""
        if self.stop.wait(max(0.0, self.a.baseline + 2 - self.now())):
            return
        while not self.stop.is_set():
            until = time.monotonic() + 1.5

            def client():
                while time.monotonic() < until and not self.stop.is_set():
                    try:
                        round_trip(self.a.socket, b'{"op":"list"}')
                        self.crowd_ok += 1
                    except OSError as e:
                        self.crowd_err.append(f"t={self.now():.1f}s {e}")

            ts = [threading.Thread(target=client, daemon=True) for _ in range(CROWD)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.stop.wait(8.5)

    def rss_kb(self):
        st = self.status()
        return st and st[0]

    def mappings(self):
        """dirigo's mappings from /proc/PID/smaps: {(start, name): (Rss kB,
        Anonymous kB)}; {} when it is gone. Diffed between the baseline
        and the end, it says what grew when resident memory did."""
        maps, cur = {}, None
        try:
            with open(f"/proc/{self.a.pid}/smaps") as f:
                for line in f:
                    head, _, rest = line.partition(" ")
                    if "-" in head and not head.endswith(":"):
                        fields = line.split()
                        # keyed by start: [heap] keeps its start as brk moves
                        cur = (fields[0].split("-")[0], fields[5] if len(fields) > 5 else "[anon]")
                        maps[cur] = [0, 0]
                    elif cur and head == "Rss:":
                        maps[cur][0] = int(rest.split()[0])
                    elif cur and head == "Anonymous:":
                        maps[cur][1] = int(rest.split()[0])
        except OSError:
            return {}
        return {k: tuple(v) for k, v in maps.items()}

    def sample(self):
        with open(os.path.join(self.a.work, "rss.csv"), "w") as out:
            out.write("t,vmrss_kb,rss_anon_kb,rss_file_kb,rss_shmem_kb,threads\n")
            while not self.stop.is_set():
                st = self.status()
                if st is None:
                    if self.exited_at is None:
                        self.exited_at = self.now()
                        self.log("dirigo is gone")
                else:
                    if self.base_maps is None and self.now() >= self.a.baseline:
                        self.base_maps = self.mappings()
                    self.rss.append((self.now(), *st))
                    out.write(f"{self.now():.1f},{','.join(map(str, st))}\n")
                    out.flush()
                self.stop.wait(2.0)

    # ------------------------------------------------------------ churn

    def run_cmd(self, kind, argv, ok_codes=(0,)):
        self.ops[kind] = self.ops.get(kind, 0) + 1
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            with open(os.path.join(self.a.work, "ops.log"), "a") as f:
                f.write(f"{self.now():.2f} {kind}: {' '.join(argv[1:])} -> {r.returncode} {r.stderr.strip()}\n")
            if r.returncode not in ok_codes:
                self.op_errors.append(f"t={self.now():.1f}s {kind}: {' '.join(argv[1:])}: {r.stderr.strip() or r.stdout.strip()}")
        except subprocess.TimeoutExpired:
            self.op_errors.append(f"t={self.now():.1f}s {kind}: {' '.join(argv[1:])}: timed out")

    def adm(self, kind, *args):
        self.run_cmd(kind, [self.a.adm, "--socket", self.a.socket, *args])

    @staticmethod
    def svc_args(key):
        proto, vip, port = key
        return ["-t" if proto == "tcp" else "-u", f"{vip}:{port}"]

    def rs_args(self, key, name, d):
        port, method, weight = d
        return [*self.svc_args(key), "-r", f"{rip(name)}:{port}", {"dr": "-g", "tun": "-i", "nat": "-m"}[method], "-w", str(weight)]

    def new_dest(self, key):
        """A real server spec for churn service `key`: NAT for the port-mapped one."""
        if key[2] == 8080:
            return [80, "nat", random.randint(1, 3)]
        return [key[2], random.choice(["dr", "tun", "nat"]), random.randint(1, 3)]

    def op_random(self):
        r = random.random()
        m = self.model
        if r < 0.08:
            absent = [k for k in CHURN_KEYS if k not in m]
            if absent:
                k = random.choice(absent)
                s = random.choice(SCHEDS)
                self.adm("service add", "-A", *self.svc_args(k), "-s", s)
                m[k] = {"sched": s, "dests": {}}
                for n in random.sample(CHURN_RS, random.randint(1, 2)):
                    d = self.new_dest(k)
                    self.adm("server add", "-a", *self.rs_args(k, n, d))
                    m[k]["dests"][n] = d
                return
        if r < 0.14 and m:
            k = random.choice(list(m))
            self.adm("service remove", "-D", *self.svc_args(k))
            del m[k]
            return
        if r < 0.24:
            # edit a service's scheduler: the protected ones too
            if random.random() < 0.5 or not m:
                k = random.choice(list(PROTECTED_SVCS))
                s = random.choice([x for x in SCHEDS if x != self.psched[k]])
                self.psched[k] = s
                self.adm("service edit (protected)", "-E", *self.svc_args(k), "-s", s)
            else:
                k = random.choice(list(m))
                s = random.choice([x for x in SCHEDS if x != m[k]["sched"]])
                m[k]["sched"] = s
                self.adm("service edit", "-E", *self.svc_args(k), "-s", s)
            return
        if not m:
            return
        k = random.choice(list(m))
        dests = m[k]["dests"]
        absent = [n for n in CHURN_RS if n not in dests]
        if r < 0.40 and absent:
            n = random.choice(absent)
            dests[n] = self.new_dest(k)
            self.adm("server add", "-a", *self.rs_args(k, n, dests[n]))
        elif r < 0.52 and dests:
            n = random.choice(list(dests))
            del dests[n]
            self.adm("server remove", "-d", *self.svc_args(k), "-r", f"{rip(n)}:{k[2] if k[2] != 8080 else 80}")
        elif dests:
            n = random.choice(list(dests))
            d = dests[n]
            if d[2] == 0:
                d[2] = random.randint(1, 3)
                kind = "weight back from 0"
            elif r < 0.75:
                d[2] = 0
                kind = "weight to 0"
            else:
                d[2] = random.choice([w for w in (1, 2, 3) if w != d[2]])
                kind = "server edit (weight)"
            self.adm(kind, "-e", *self.rs_args(k, n, d))

    def op_reload(self):
        self.version = "B" if self.version == "A" else "A"
        with open(self.a.config_head) as f:
            text = f.read()
        tmp = self.a.config + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + services_toml(self.version))
        os.replace(tmp, self.a.config)
        self.run_cmd(f"reload (config {self.version})", [self.a.ctl, "--socket", self.a.socket, "reload"])
        self.model = model_of(CHURN_A if self.version == "A" else CHURN_B)
        self.psched = {k: s for k, (s, _) in PROTECTED_SVCS.items()}

    def op_restart(self):
        n = random.choice(CHURN_RS)
        if random.random() < 0.6:
            self.run_cmd(f"restart {n} http", ["sh", "-c", f'"$0" http-stop {n[2:]} && "$0" http-start {n[2:]}', self.a.lab])
        else:
            self.restart_udp(n)

    def restart_udp(self, n):
        """Stop and start real server n's UDP echo (lab.sh has no verb for it)."""
        self.ops[f"restart {n} udp"] = self.ops.get(f"restart {n} udp", 0) + 1
        st = self.a.state
        pidf = f"{st}/{n}-udp.pid"
        try:
            pid = int(open(pidf).read())
            os.kill(pid, 15)
            for _ in range(50):
                if not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z":
                    break
                time.sleep(0.05)
        except ProcessLookupError:
            # the echo server (a real server's application, not dirigo) was
            # already gone: starting it again is what a restart does; the
            # report shows it with the end of the server's log
            try:
                tail = open(f"{st}/{n}-udp.log").read().splitlines()[-2:]
            except OSError:
                tail = []
            self.op_notes.append(f"t={self.now():.1f}s restart {n} udp: its echo server had exited; log ends: {' | '.join(tail)}")
        except (OSError, ValueError) as e:
            self.op_errors.append(f"t={self.now():.1f}s restart {n} udp: stop: {e}")
        for f in ("pid", "ready"):
            try:
                os.unlink(f"{st}/{n}-udp.{f}")
            except FileNotFoundError:
                pass
        log = open(f"{st}/{n}-udp.log", "a")
        p = subprocess.Popen(
            ["ip", "netns", "exec", f"{self.a.prefix}-{n}", "setsid", sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "udp_echo.py"),
             "--name", n, "--port", "5353", "--log", f"{st}/{n}-udp.log", "--pid-file", pidf, "--ready-file", f"{st}/{n}-udp.ready"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        with open(f"{st}/{n}-udp.spawn", "w") as f:
            f.write(f"{p.pid}\n")
        for _ in range(100):
            if os.path.exists(f"{st}/{n}-udp.ready"):
                return
            time.sleep(0.05)
        self.op_errors.append(f"t={self.now():.1f}s restart {n} udp: not ready in 5 s")

    def op_link(self):
        """The LAN tap down for 0.8 s (well inside TCP's retransmission
        tolerance and the UDP clients' retries), then up."""
        ns, dev = f"{self.a.prefix}-srv", f"{self.a.prefix}-lan"
        self.run_cmd("LAN tap down", ["ip", "-n", ns, "link", "set", dev, "down"])
        time.sleep(0.8)
        self.run_cmd("LAN tap up", ["ip", "-n", ns, "link", "set", dev, "up"])

    def churn(self, seconds):
        nxt = {"reload": 7.0, "restart": 4.0, "link": 12.0}
        every = {"reload": 9.0, "restart": 5.0, "link": 15.0}
        fns = {"reload": self.op_reload, "restart": self.op_restart, "link": self.op_link}
        while self.now() < seconds and self.exited_at is None:
            due = [k for k, t in nxt.items() if self.now() >= t]
            for k in due:
                fns[k]()
                nxt[k] = self.now() + every[k]
            if not due:
                self.op_random()
            time.sleep(random.uniform(0.1, 0.4))
        # the last word is the file's: both versions work, A is the start
        if self.version != "A":
            self.op_reload()

    # ------------------------------------------------------------ checks

    def counters(self):
        """The counter identities (traffic stopped): each worker's census,
        which the worker takes at one moment, and a reading of lcores, the
        connection walk and lcores again. Connections go on expiring after
        the traffic stops, so that reading is stable (both lcores equal)
        only when none expired meanwhile: up to 20 tries. Returns the
        reading and whether it was stable."""
        for attempt in range(20):
            l1 = self.ctl.call("lcores")
            walk = self.ctl.call("list_conns")
            svcs = self.ctl.call("list")
            drops = self.ctl.call("drops")
            l2 = self.ctl.call("lcores")
            census = self.ctl.call("census")
            if l1 == l2:
                return Reading(l1, l1, walk, svcs, drops, census, attempt, True)
            time.sleep(0.3)
        return Reading(l1, l2, walk, svcs, drops, census, attempt, False)


class Reading:
    """One reading of the counters: lcores before (`l1`) and after (`l2`)
    the walk and the other requests, each worker's census, and whether
    `l1 == l2`."""

    def __init__(self, l1, l2, walk, svcs, drops, census, tries, stable):
        self.l1, self.l2, self.walk, self.svcs, self.drops = l1, l2, walk, svcs, drops
        self.census, self.tries, self.stable = census, tries, stable


def run(a):
    so = Soak(a)
    here = os.path.dirname(os.path.abspath(__file__))
    work = a.work
    plan_f, stop_f, out_f = (os.path.join(work, n) for n in ("plan.json", "flows.stop", "flows.json"))
    for f in (stop_f, out_f):
        if os.path.exists(f):
            os.unlink(f)
    with open(plan_f, "w") as f:
        json.dump(plan(SRCS), f)
    flows = subprocess.Popen(
        ["ip", "netns", "exec", f"{a.prefix}-client", sys.executable, os.path.join(here, "soak_flows.py"),
         "--plan", plan_f, "--stop-file", stop_f, "--out", out_f],
        stdin=subprocess.DEVNULL)
    ref_path = os.path.join(work, "echo.sock")
    echo = subprocess.Popen([sys.executable, os.path.abspath(__file__), "echo", ref_path], stdin=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(ref_path):
            break
        time.sleep(0.05)
    watchers = [threading.Thread(target=f, daemon=True) for f in (so.probe, so.sample, so.crowd)]
    watchers.append(threading.Thread(target=so.probe_ref, args=(ref_path,), daemon=True))
    for t in watchers:
        t.start()
    so.log(f"traffic and churn for {a.seconds} s (dirigo pid {a.pid})")
    so.churn(a.seconds)
    so.log("churn over; the flows in progress finish")
    open(stop_f, "w").close()
    try:
        flows.wait(timeout=90)
    except subprocess.TimeoutExpired:
        flows.kill()
        flows.wait()
    drained = so.now()
    time.sleep(1.0)  # the last packets through the workers, one more RSS sample
    so.stop.set()
    for t in watchers:
        t.join()
    echo.terminate()
    echo.wait()
    fails = []

    # ---- flows
    print("\n== flows (started / completed / byte-exact / failed; longest flow s)")
    try:
        with open(out_f) as f:
            recs = json.load(f)
    except (OSError, ValueError) as e:
        recs = []
        fails.append(f"no flow results ({e}); soak_flows exit {flows.returncode}")
    for r in recs:
        print(f"  {r['set']:9} {r['mode']:5} {r['kind']:9} {r['started']:5} {r['completed']:5} {r['byte_exact']:5} {r['failed']:5}"
              f"  {r['seconds_max']:5.1f}s  {json.dumps(r['by_server'], sort_keys=True)}")
        for x in r["failures"]:
            print(f"      failure: {x}")
        if r["set"] == "protected":
            if r["failed"] or r["byte_exact"] != r["started"]:
                fails.append(f"protected {r['mode']} {r['kind']}: {r['failed']} of {r['started']} flows failed")
            if r["started"] == 0:
                fails.append(f"protected {r['mode']} {r['kind']}: no flow ran")
        elif r["completed"] != r["byte_exact"]:
            fails.append(f"churn {r['kind']}: a completed flow was not byte-exact")
    prot = [r for r in recs if r["set"] == "protected"]
    print(f"  protected: {sum(r['started'] for r in prot)} flows, {sum(r['byte_exact'] for r in prot)} byte-exact")

    # ---- churn
    print("\n== churn operations")
    for k in sorted(so.ops):
        print(f"  {so.ops[k]:5}  {k}")
    print(f"  {sum(so.ops.values()):5}  in all; {len(so.op_errors)} refused or failed")
    for e in so.op_errors[:10]:
        print(f"      {e}")
    for e in so.op_notes[:10]:
        print(f"      note: {e}")
    if so.op_errors:
        fails.append(f"{len(so.op_errors)} churn operations failed (the driver's model of the table is exact)")

    # ---- control socket
    with open(os.path.join(work, "latency.csv"), "w") as f:
        f.write("t,ms\n" + "".join(f"{t:.2f},{m:.2f}\n" for t, m in so.lat))
    ms = [m for _, m in so.lat]
    print("\n== control socket: `list` request round trip (connect, request, answer), every 200 ms")
    if ms:
        worst = sorted(so.lat, key=lambda x: -x[1])[:3]
        print(f"  {len(ms)} requests: p50 {pct(ms, 0.5):.1f} ms, p99 {pct(ms, 0.99):.1f} ms, max {max(ms):.1f} ms"
              f" (worst at {', '.join(f't={t:.1f}s {m:.1f} ms' for t, m in worst)})")
    else:
        fails.append("control socket: no request answered")
    rms = [m for _, m in so.ref]
    # judged beside the reference: a stall of this 2-core machine delays
    # the echo as much as dirigo (one 290 ms answer beside a 235 ms echo
    # is the machine, not the control socket)
    if ms:
        slow, ref_slow = sum(m >= 100 for m in ms), sum(m >= 100 for m in rms)
        if pct(ms, 0.99) >= 100:
            fails.append(f"control socket: p99 {pct(ms, 0.99):.1f} ms (bound 100 ms)")
        if max(ms) >= 1000:
            fails.append(f"control socket: a request took {max(ms):.1f} ms (bound 1 s)")
        if slow > ref_slow + 2:
            fails.append(f"control socket: {slow} requests took 100 ms or more, "
                         f"the reference echo {ref_slow} (bound: the reference's + 2)")
    if rms:
        print(f"  reference (the same request to a trivial echo process on this machine): {len(rms)} requests: "
              f"p50 {pct(rms, 0.5):.1f} ms, p99 {pct(rms, 0.99):.1f} ms, max {max(rms):.1f} ms; "
              f"over 100 ms: dirigo {sum(m >= 100 for m in ms)}, reference {sum(m >= 100 for m in rms)}")
    for e in so.lat_err[:5]:
        print(f"      error: {e}")
    if so.lat_err:
        fails.append(f"control socket: {len(so.lat_err)} requests failed")
    print(f"  {CROWD} clients at once, 1.5 s every 10 s from t={a.baseline + 2:.0f}s: "
          f"{so.crowd_ok} requests answered, {len(so.crowd_err)} failed")
    for e in so.crowd_err[:5]:
        print(f"      error: {e}")
    if so.crowd_err:
        fails.append(f"control socket: {len(so.crowd_err)} of the concurrent clients' requests failed")
    if so.crowd_ok == 0:
        fails.append("control socket: the concurrent clients were not run")

    # ---- memory
    print(f"\n== resident memory (VmRSS every 2 s), flat after t={a.baseline:.0f} s")
    base = next((x for x in so.rss if x[0] >= a.baseline), None)
    end = so.rss[-1] if so.rss else None
    if base and end and end[0] > base[0]:
        after = [x[1] for x in so.rss if x[0] >= base[0]]
        change = (end[1] - base[1]) * 100.0 / base[1]
        print(f"  first {so.rss[0][1]} kB at t={so.rss[0][0]:.0f}s; {base[1]} kB at t={base[0]:.0f}s; "
              f"{end[1]} kB at t={end[0]:.0f}s (end): {change:+.2f}%; min/max since t={base[0]:.0f}s {min(after)}/{max(after)} kB")
        for i, name in ((2, "anonymous"), (3, "file-backed"), (4, "shared"), (5, "threads")):
            print(f"  {name:11}: {base[i]} at t={base[0]:.0f}s, {end[i]} at the end ({end[i] - base[i]:+d})")
        print(f"  every sample: {os.path.join(a.work, 'rss.csv')}")
        grown, small, small_kb = [], 0, 0
        end_maps = so.mappings()
        for k, (rss, anon) in end_maps.items():
            b_rss, b_anon = (so.base_maps or {}).get(k, (0, 0))
            if rss - b_rss >= 64:
                grown.append(f"{k[0]} {k[1]}: Rss {b_rss} -> {rss} kB, anonymous {b_anon} -> {anon}"
                             f"{'' if k in (so.base_maps or {}) else ' (new)'}")
            elif rss > b_rss:
                small, small_kb = small + 1, small_kb + rss - b_rss
        gone = [k for k in (so.base_maps or {}) if k not in end_maps]
        print(f"  mappings whose Rss grew by 64 kB or more since the baseline: {len(grown)}"
              f"{'' if end_maps else ' (dirigo gone: not read)'}; by less: {small} ({small_kb:+d} kB in all); "
              f"mappings gone since: {len(gone)}")
        for g in grown[:20]:
            print(f"    {g}")
        # growth fails; a fall does not (the kernel taking back clean pages
        # of the binary under memory pressure is not dirigo growing)
        # A run shorter than two minutes has no "after the first minute":
        # it is measured from half-time, where one or two 512 kB steps of
        # a glibc malloc arena (about 0.8% each) still fall; such a run
        # allows those two steps and 64 kB of page-sized growth beside
        # them (a fresh-clone CI run measured +1028 kB: two steps and one
        # 4 kB page, with 0 kB in the same code's next run), the 1%
        # holds from two minutes on.
        slack_kb = 1024 + 64 if a.seconds < 120 else 0
        grew_kb = end[1] - base[1]
        if change > 1.0 and grew_kb > slack_kb:
            bound = "1%" if slack_kb == 0 else f"1% or {slack_kb} kB"
            fails.append(f"resident memory grew {change:+.2f}% ({grew_kb:+d} kB) from t={base[0]:.0f}s to the end (bound {bound})")
    else:
        fails.append("resident memory: not enough samples")

    # ---- dirigo alive, counters
    print("\n== dirigo")
    if so.exited_at is not None or so.rss_kb() is None:
        fails.append(f"dirigo exited (noticed at t={so.exited_at}s)")
        print("  EXITED")
    else:
        print(f"  running after {so.now():.0f} s (traffic drained at t={drained:.0f}s)")
        r = so.counters()
        if r.stable:
            print(f"\n== counters (traffic stopped; a stable reading after {r.tries} retries)")
        else:
            print(f"\n== counters (traffic stopped; no stable reading in {r.tries + 1} tries:"
                  " connections expired during each)")
        for name, figs, ok in identities(r):
            print(f"  {'ok  ' if ok else 'FAIL'} {name}: {figs}")
            if not ok:
                fails.append(f"counters: {name}: {figs}")
        nz = ", ".join(f"{d['reason']} {d['count']}" for d in r.drops if d["count"])
        print(f"  drops: {nz or 'none'}")
    print()
    if fails:
        for f in fails:
            print(f"SOAK FAILED: {f}")
        return 1
    print(f"SOAK PASSED: {a.seconds} s of churn and faults, every invariant held")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("echo")
    e.add_argument("path")
    c = sub.add_parser("config")
    c.add_argument("version", choices=["A", "B"])
    r = sub.add_parser("run")
    r.add_argument("--seconds", type=float, required=True)
    r.add_argument("--baseline", type=float, required=True, help="RSS must stay flat from this many seconds on")
    r.add_argument("--pid", type=int, required=True)
    r.add_argument("--socket", required=True)
    r.add_argument("--config", required=True, help="the daemon's config file (rewritten for reloads)")
    r.add_argument("--config-head", required=True, help="its part before the services")
    r.add_argument("--adm", required=True)
    r.add_argument("--ctl", required=True)
    r.add_argument("--lab", required=True, help="scripts/lab/lab.sh (LAB_* in the environment)")
    r.add_argument("--prefix", required=True)
    r.add_argument("--state", required=True, help="the lab's state directory")
    r.add_argument("--work", required=True, help="scratch directory")
    a = ap.parse_args()
    if a.cmd == "echo":
        return echo(a.path)
    if a.cmd == "config":
        sys.stdout.write(services_toml(a.version))
        return 0
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
