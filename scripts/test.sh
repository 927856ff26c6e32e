#!/usr/bin/env bash
# The whole test suite, on a fresh Debian 12 machine, as root:
# installs what is needed, reserves hugepages, checks formatting and lints,
# then runs every test (unit, property, EAL/virtual-device, netns lab).
set -euo pipefail
cd "$(dirname "$0")/.."
for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do
    case ":$PATH:" in *":$d:"*) ;; *) [ -d "$d" ] && PATH="$d:$PATH" ;; esac
done
export PATH
scripts/install-deps.sh
scripts/setup-hugepages.sh 1024
echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy"
cargo clippy --all-targets -q -- -D warnings
echo "== cargo test"
cargo test --all-targets 2>&1 | tee target/test.log | grep -Ev '^(EAL|TELEMETRY|tap_|eth_dev_tap)'
# cargo's exit status is what counts; tee hides it
status=${PIPESTATUS[0]}
passed=$(grep -Eo 'test result: ok\. [0-9]+ passed' target/test.log | awk '{s+=$4} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed' target/test.log | awk '{s+=$1} END {print s+0}')
echo "dirigo: ${passed} passed, ${failed} failed"
exit "$status"
