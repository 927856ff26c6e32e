"""Parts of the soak driver (tests/support/soak.py): requests on dirigo's
control socket, the counter identities checked at the end, and the
reference echo the control socket's latency is compared with."""

import json
import socket
import threading


def read_line(s):
    """Bytes from socket `s` up to a newline (or its end)."""
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        buf += chunk
    return buf


def round_trip(path, line):
    """Connect to the Unix socket `path`, send `line` + newline, return the
    answer line."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(path)
        s.sendall(line + b"\n")
        buf = read_line(s)
    finally:
        s.close()
    if not buf.endswith(b"\n"):
        raise ConnectionError("the socket closed before the answer")
    return buf


class Ctl:
    """Direct requests on the control socket (timed by the caller)."""

    def __init__(self, path):
        self.path = path
        self.id = 0

    def call(self, op, **kw):
        self.id += 1
        buf = round_trip(self.path, json.dumps({"v": 1, "id": self.id, "req": {"op": op, **kw}}).encode())
        r = json.loads(buf)
        if "err" in r:
            raise RuntimeError(f"{op}: {r['err']}")
        return r["ok"].get("data")


def workers_conns(lcores):
    """The workers' connection gauges summed, from one lcores answer."""
    return sum(w["conns"] for w in lcores if w["role"] == "worker")


def identities(r):
    """[(name, figures, ok)] for the counter identities of a reading `r`
    (soak.Reading): the per-worker ones on its second lcores, each
    worker's census, and the walk against the gauges."""
    out = []
    tot_conns = 0
    lb_dropped = 0
    walk, svcs, drops = r.walk, r.svcs, r.drops
    for c in r.census:
        out.append((
            f"worker {c['lcore']}: census at one moment: entries == walked == gauge == active + inactive,"
            " walked active == active",
            f"{c['entries']} == {c['walked']} == {c['gauge']} == {c['active']} + {c['inactive']},"
            f" {c['walked_active']} == {c['active']}",
            c["consistent"] and c["entries"] == c["walked"] == c["gauge"] == c["active"] + c["inactive"]
            and c["walked_active"] == c["active"],
        ))
    for w in (x for x in r.l2 if x["role"] == "worker"):
        e = {c["name"]: c["value"] for c in w.get("extra", [])}
        g = e.get
        recv = w["rx_packets"] + g("steered_in", 0) + g("from_kernel", 0)
        held = g("held", 0) - g("held_released", 0) - g("held_expired", 0)
        answered = (g("arp_replied", 0) + g("echo_replied", 0) + g("arp_taken", 0)
                    + g("nd_advertised", 0) + g("nd_taken", 0) + g("echo6_replied", 0))
        fwd = g("forwarded", 0)
        done = fwd + w["dropped"] + answered + g("steered_out", 0) + held
        out.append((
            f"worker {w['lcore']}: received == forwarded + dropped + answered (ARP replied + ARP taken + echo replied"
            " + NS answered + NA taken + echo6 replied)"
            " + steered out + held",
            f"{recv} (rx {w['rx_packets']} + steered in {g('steered_in', 0)} + from kernel {g('from_kernel', 0)}) == "
            f"{done} ({fwd} + {w['dropped']} + {answered} ({g('arp_replied', 0)} + {g('arp_taken', 0)} + {g('echo_replied', 0)}"
            f" + {g('nd_advertised', 0)} + {g('nd_taken', 0)} + {g('echo6_replied', 0)})"
            f" + {g('steered_out', 0)} + {held})",
            recv == done,
        ))
        ai = g("conns_active", 0) + g("conns_inactive", 0)
        out.append((
            f"worker {w['lcore']}: connections active + inactive == table entries",
            f"{g('conns_active', 0)} + {g('conns_inactive', 0)} == {w['conns']}",
            ai == w["conns"],
        ))
        tot_conns += w["conns"]
        lb_dropped += g("lb_dropped", 0)
    if r.stable:
        out.append(("all workers: table entries == entries walked (-L -c)", f"{tot_conns} == {len(walk)}",
                    tot_conns == len(walk)))
    else:
        # connections only ended between the two lcores (the traffic had
        # stopped): the walk, taken between them, lies between their counts
        before = workers_conns(r.l1)
        out.append((
            "all workers: entries after <= entries walked (-L -c) <= entries before (expiry went on)",
            f"{tot_conns} <= {len(walk)} <= {before}",
            tot_conns <= len(walk) <= before,
        ))
    lb_reasons = sum(d["count"] for d in drops if d["reason"].startswith("lb_") and d["reason"] != "lb_dropped")
    out.append(("all workers: lb_dropped == sum of the core's reasons (lb_*)", f"{lb_dropped} == {lb_reasons}", lb_dropped == lb_reasons))
    listed = sum(d["active"] + d["inactive"] for s in svcs["services"] for d in s["dests"])
    out.append((
        "listed real servers' active + inactive <= table entries (the rest: removed servers' connections)",
        f"{listed} <= {tot_conns} ({tot_conns - listed} on removed servers)",
        listed <= tot_conns,
    ))
    return out


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def echo(path):
    """A line echo on a Unix socket, a thread per connection."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)

    def serve(c):
        with c:
            c.sendall(read_line(c))

    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
