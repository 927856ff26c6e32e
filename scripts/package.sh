#!/usr/bin/env bash
# Build the Debian package dirigo_<version>_amd64.deb:
#   release binaries -> man pages and completions (examples/dirigo-docs.rs,
#   from the programs' clap definitions) -> cargo deb --no-build (depends
#   from dpkg-shlibdeps, the unit, the conffile, docs and examples).
# Installs what it needs when missing: dpkg-dev (apt-get, as root) and
# cargo-deb (cargo install --locked, into ~/.cargo/bin).
# Usage: scripts/package.sh     The .deb's path is the last line printed.
# CARGO_TARGET_DIR is honoured (a test build's target is reused).
# DIRIGO_PACKAGE_PROFILE=dev packages the debug build instead of release
# (tests/package.rs: it checks the packaging, and the test build has the
# debug binaries already; a release build would add minutes to CI).
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO_DEB_VERSION=3.8.0   # builds with Rust 1.85 (its rust-version)

for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do
    [ -d "$d" ] && case ":$PATH:" in *":$d:"*) ;; *) PATH="$d:$PATH" ;; esac
done
export PATH
command -v cargo >/dev/null || { echo "package.sh: no cargo (install Rust >= 1.85 with rustup)" >&2; exit 1; }

if ! command -v dpkg-shlibdeps >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "package.sh: dpkg-shlibdeps missing: apt-get install dpkg-dev (as root)" >&2
        exit 1
    fi
    echo "package.sh: installing dpkg-dev"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
fi
if [ "$(cargo deb --version 2>/dev/null | awk '{print $NF}')" != "$CARGO_DEB_VERSION" ]; then
    echo "package.sh: installing cargo-deb $CARGO_DEB_VERSION (cargo install, a few minutes)"
    cargo install cargo-deb --locked --version "$CARGO_DEB_VERSION" --quiet
fi

target=$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
profile=${DIRIGO_PACKAGE_PROFILE:-release}
case "$profile" in
    release) dir=release ;;
    dev) dir=debug ;;
    *) echo "package.sh: DIRIGO_PACKAGE_PROFILE must be release or dev, not '$profile'" >&2; exit 2 ;;
esac
dist="$target/$dir/dist"
t0=$(date +%s)
cargo build --profile "$profile" --bins
t1=$(date +%s)
rm -rf "$dist"
cargo run --quiet --profile "$profile" --example dirigo-docs -- "$dist"
gzip -9nf "$dist"/man/*.[0-9]
deb=$(cargo deb --no-build --profile "$profile" --strip --quiet --output "$target/debian/" | tail -1)
t2=$(date +%s)
echo "package.sh: $profile build $((t1 - t0)) s, docs and package $((t2 - t1)) s"
[ -f "$deb" ] || { echo "package.sh: cargo deb did not say where the package is ($deb)" >&2; exit 1; }
echo "$deb"
