#!/usr/bin/env bash
# Build the fuzz targets (fuzz/, libFuzzer on nightly Rust) and run each for
# SECONDS (default 300) from its seed corpus, fuzz/corpus/<target>/.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   scripts/fuzz.sh --build [TARGET...]     (build only)
#
# Targets: classify pipeline ctl_proto config adm_args keepalived ipvs_sync ipv6_wire (all by
# default). Prints executions and crashes per target in a table; exits 1
# when a target crashed (the input is in fuzz/artifacts/<target>/), 77 when
# no nightly toolchain is installed, 2 on a usage error.
#
# What the runs find goes to fuzz/work/<target>/ (the growing corpus, kept
# between runs, not checked in); the seeds are never written. Environment:
# FUZZ_WORK=DIR puts that corpus in DIR/<target> instead (the CI smoke test
# starts from the seeds alone), FUZZ_JOBS=N runs each target in N processes
# (libFuzzer -fork; default 1), FUZZ_ARGS adds libFuzzer options,
# FUZZ_PROFILE=smoke builds with fuzz/Cargo.toml's `smoke` profile (less
# optimisation, a much shorter cold build: what the test suite's short
# smoke runs use; long runs keep the default, release).
set -euo pipefail
cd "$(dirname "$0")/.."
for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do
    case ":$PATH:" in *":$d:"*) ;; *) [ -d "$d" ] && PATH="$d:$PATH" ;; esac
done
export PATH

ALL=(classify pipeline ctl_proto config adm_args keepalived ipvs_sync ipv6_wire)
secs=300
build_only=0
if [ "${1:-}" = --build ]; then
    build_only=1
    shift
fi
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    secs=$1
    shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL[@]}")
for t in "${targets[@]}"; do
    [ -f "fuzz/fuzz_targets/$t.rs" ] || { echo "fuzz.sh: no target '$t' (have: ${ALL[*]})" >&2; exit 2; }
done

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: no nightly Rust toolchain (libFuzzer's coverage instrumentation needs it): rustup toolchain install nightly" >&2
    exit 77
fi

# The instrumentation cargo-fuzz uses (sancov, 8-bit counters, comparison
# tracing), with debug assertions and overflow checks on. --target keeps it
# away from build scripts and proc macros; the target dir is the fuzz
# crate's own, so the main build is never rebuilt with these flags.
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
export CARGO_TARGET_DIR="$PWD/fuzz/target"
profile=${FUZZ_PROFILE:-release}
case $profile in
    release | smoke) ;;
    *) echo "fuzz.sh: FUZZ_PROFILE is release or smoke, not '$profile'" >&2; exit 2 ;;
esac
bins=()
for t in "${targets[@]}"; do bins+=(--bin "$t"); done
echo "== fuzz: building ${targets[*]} (nightly, $triple, profile $profile)"
start=$(date +%s)
# in a clean environment: what a caller's environment holds (cargo test's
# variables, a CC) would otherwise mark crates dirty and rebuild them
# whenever the caller changes
keep=(PATH="$PATH" HOME="$HOME" RUSTFLAGS="$RUSTFLAGS" CARGO_TARGET_DIR="$CARGO_TARGET_DIR")
for v in CARGO_HOME RUSTUP_HOME TMPDIR; do
    [ -n "${!v:-}" ] && keep+=("$v=${!v}")
done
(cd fuzz && env -i "${keep[@]}" cargo +nightly build -q --profile "$profile" --locked --target "$triple" "${bins[@]}")
echo "== fuzz: built in $(( $(date +%s) - start )) s"
[ "$build_only" = 1 ] && exit 0

max_len() {
    case $1 in
        classify) echo 1600 ;;
        pipeline) echo 8192 ;;
        *) echo 4096 ;;
    esac
}

rows=()
crashed=0
for t in "${targets[@]}"; do
    work="${FUZZ_WORK:-fuzz/work}/$t"
    arts="fuzz/artifacts/$t"
    mkdir -p "$work" "$arts"
    log="$work.log"
    before=$(find "$arts" -type f | wc -l)
    fork=()
    [ "${FUZZ_JOBS:-1}" -gt 1 ] && fork=(-fork="$FUZZ_JOBS" -ignore_crashes=1)
    echo "== fuzz: $t for ${secs} s"
    status=0
    # shellcheck disable=SC2086
    "fuzz/target/$triple/$profile/$t" "$work" "fuzz/corpus/$t" \
        -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$arts/" -print_final_stats=1 "${fork[@]}" ${FUZZ_ARGS:-} \
        >"$log" 2>&1 || status=$?
    execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | awk '{s+=$2} END {print s+0}')
    if [ "$execs" = 0 ]; then
        # fork mode: the last status line's count
        execs=$(grep -Eo '#[0-9]+' "$log" | tail -1 | tr -d '#')
        execs=${execs:-0}
    fi
    rate=$(( execs / (secs > 0 ? secs : 1) ))
    corpus=$(find "$work" -type f | wc -l)
    crashes=$(( $(find "$arts" -type f | wc -l) - before ))
    if [ "$status" != 0 ] && [ "$crashes" = 0 ]; then
        crashes=1 # died without an artifact (e.g. the binary did not start)
    fi
    if [ "$crashes" -gt 0 ]; then
        crashed=1
        echo "fuzz: $t crashed (exit $status); the end of $log:" >&2
        tail -n 40 "$log" >&2
    fi
    rows+=("$(printf '%-12s %6s %12s %9s %8s %8s' "$t" "$secs" "$execs" "$rate" "$corpus" "$crashes")")
done

printf '%-12s %6s %12s %9s %8s %8s\n' target seconds executions exec/s corpus crashes
printf '%s\n' "${rows[@]}"
exit "$crashed"
