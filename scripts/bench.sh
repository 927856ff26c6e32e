#!/usr/bin/env bash
# Full benchmark (issue 9): release build, 3 runs of testpmd + dirigo
# (DR/TUN/NAT x 1k/100k/1M flows, new connections) + the sans-IO
# micro-benchmark; rewrites BENCHMARKS.md and docs/bench.png, appends a
# perf profile of the micro-benchmark. Run as root from the repo root:
#   scripts/bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
# the 1M-flow pcap (2M packets) is preloaded into the mbuf pool: ~1 GB
scripts/setup-hugepages.sh 1536
cargo build --release --bin dirigo --bin dirigo-bench
bin="$CARGO_TARGET_DIR/release"
data=$(mktemp -d /tmp/dirigo-bench-out.XXXX)
# keep the hand-written analysis (between the notes markers) across runs
if [ -f BENCHMARKS.md ]; then
    sed -n '/^<!-- notes:begin -->$/,/^<!-- notes:end -->$/p' BENCHMARKS.md > "$data/notes.md"
fi
"$bin/dirigo-bench" --runs "$runs" --dirigo "$bin/dirigo" \
    --markdown BENCHMARKS.md --csv docs/bench.csv | tee "$data/summary.txt"
# the chart needs matplotlib: Debian's package, installed here if missing
if ! python3 -c 'import matplotlib' 2>/dev/null && ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null \
    && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-matplotlib >/dev/null || true
fi
if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 scripts/bench-plot.py docs/bench.csv docs/bench.png
elif /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    /usr/bin/python3 scripts/bench-plot.py docs/bench.csv docs/bench.png
else
    echo "bench.sh: no matplotlib (apt-get install python3-matplotlib): chart not drawn" >&2
fi
# where the core's time goes: perf on the sans-IO micro-benchmark
# Append a profile to BENCHMARKS.md: its title, the perf data file, and the
# command that recorded it (shown when given); the 12 symbols with the most
# self time.
append_profile() { # title, perf.data, command
    {
        echo
        echo "## Profile: $1"
        echo
        echo '```'
        if [ -n "${3:-}" ]; then echo "$3"; fi
        perf report -i "$2" --stdio --no-children --sort symbol 2>/dev/null \
            | grep -E '^ +[0-9]+\.[0-9]+%' | sed -n '1,12p' | sed 's/ *- *- *$//'
        echo '```'
    } >> BENCHMARKS.md
}
profile() { # title, micro arguments...
    local title=$1; shift
    perf record -q -g -o "$data/perf.data" -- "$bin/dirigo-bench" micro "$@" >/dev/null 2>&1 || return 0
    append_profile "sans-IO core, $title (perf, self time, top 12)" "$data/perf.data" \
        "perf record -g -- dirigo-bench micro $*"
}
if command -v perf >/dev/null; then
    profile "DR 1k flows" --method dr --flows 1000 --seconds 2
    profile "DR 1M flows" --method dr --flows 1000000 --seconds 2
    profile "NAT 1M flows" --method nat --flows 1000000 --seconds 2
    profile "new connections" --newconn --seconds 2
fi
# and on the running daemon (the configs dirigo-bench left in its workdir)
profile_daemon() { # scenario tag, e.g. DR-1k
    local cfg=/tmp/dirigo-bench/r1-$1.toml log="$data/dirigo-$1.log" pid i
    [ -f "$cfg" ] || return 0
    "$bin/dirigo" --config "$cfg" > "$log" 2>&1 &
    pid=$!
    for i in $(seq 1 120); do grep -q 'running (SIG' "$log" && break; sleep 0.5; done
    sleep 2
    perf record -q -g -o "$data/perf-dg.data" -p "$pid" -- sleep 3 >/dev/null 2>&1 || true
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
    append_profile "the dirigo daemon, $1 (perf record -p, self time, top 12)" "$data/perf-dg.data"
}
if command -v perf >/dev/null; then
    profile_daemon DR-1k
    profile_daemon DR-1M
fi
if [ -s "$data/notes.md" ]; then
    { echo; cat "$data/notes.md"; } >> BENCHMARKS.md
fi
echo "bench.sh: BENCHMARKS.md and docs/bench.png rewritten (raw output in $data)"
