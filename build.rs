//! The fuzz build's `--cfg fuzzing` (fuzz/, scripts/fuzz.sh) is a known
//! cfg. (The git commit for `--version` is recorded by dirigo-proto's
//! build script.)

fn main() {
    println!("cargo:rustc-check-cfg=cfg(fuzzing)");
    println!("cargo:rerun-if-changed=build.rs");
}
