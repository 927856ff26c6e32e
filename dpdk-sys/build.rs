//! Finds the system DPDK with pkg-config, generates bindings with bindgen
//! and compiles the C shim. Fails with one line naming the package to
//! install when something is missing.

use std::env;
use std::path::PathBuf;

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    println!("cargo:warning={msg}");
    std::process::exit(1);
}

fn main() {
    println!("cargo:rerun-if-changed=csrc/wrapper.h");
    println!("cargo:rerun-if-changed=csrc/shim.h");
    println!("cargo:rerun-if-changed=csrc/shim.c");

    let lib = match pkg_config::Config::new()
        .atleast_version("22.11")
        .cargo_metadata(true)
        .probe("libdpdk")
    {
        Ok(l) => l,
        Err(_) => fail(
            "DPDK >= 22.11 not found by pkg-config (libdpdk): install it with `apt-get install libdpdk-dev pkg-config`",
        ),
    };

    let mut clang_args: Vec<String> = Vec::new();
    for p in &lib.include_paths {
        clang_args.push(format!("-I{}", p.display()));
    }
    clang_args.push("-Icsrc".into());
    // DPDK's headers want SSE4.2 intrinsics; match the distribution's -march.
    clang_args.push("-march=corei7".into());

    let mut cc = cc::Build::new();
    cc.file("csrc/shim.c")
        .include("csrc")
        .flag("-march=corei7")
        .flag("-include")
        .flag("rte_config.h")
        .opt_level(3)
        .warnings(false);
    for p in &lib.include_paths {
        cc.include(p);
    }
    cc.compile("dirigo_shim");

    let builder = bindgen::Builder::default()
        .header("csrc/wrapper.h")
        .header_contents("dg_version.h", "#include <rte_version.h>\n")
        .clang_args(&clang_args)
        .allowlist_function("rte_eal_.*")
        .allowlist_function("rte_eth_.*")
        .allowlist_function("rte_pktmbuf_pool_create")
        .allowlist_function("rte_mempool_free")
        .allowlist_function("rte_ring_create")
        .allowlist_function("rte_ring_free")
        .allowlist_function("rte_lcore_.*")
        .allowlist_function("rte_get_next_lcore")
        .allowlist_function("rte_get_main_lcore")
        .allowlist_function("rte_socket_id")
        .allowlist_function("rte_strerror")
        .allowlist_function("rte_version")
        .allowlist_function("rte_vdev_.*")
        .allowlist_function("rte_dev_probe")
        .allowlist_function("rte_telemetry_register_cmd")
        .allowlist_function("rte_tel_data_.*")
        .allowlist_function("rte_pdump_init")
        .allowlist_function("rte_pdump_uninit")
        .allowlist_function("dg_.*")
        .allowlist_var("DG_.*")
        .allowlist_var("RTE_MAX_ETHPORTS")
        .allowlist_var("RTE_MAX_LCORE")
        .allowlist_var("RTE_PKTMBUF_HEADROOM")
        .allowlist_var("RTE_MBUF_DEFAULT_BUF_SIZE")
        .allowlist_var("RTE_ETH_LINK_.*")
        .allowlist_var("RING_F_.*")
        .allowlist_var("RTE_TEL_MAX_.*")
        .allowlist_type("rte_mbuf")
        .allowlist_type("rte_eth_.*")
        .allowlist_type("rte_ether_addr")
        .opaque_type("rte_l2tpv2_combined_msg_hdr")
        .opaque_type("rte_arp_hdr")
        .opaque_type("rte_arp_ipv4")
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .prepend_enum_name(false);

    // bindgen panics (rather than erring) when it cannot load libclang.
    let generated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.generate()));
    let bindings = match generated {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => fail(&format!(
            "bindgen could not generate DPDK bindings ({e}): install libclang with `apt-get install clang libclang-dev`"
        )),
        Err(_) => fail(
            "bindgen could not load libclang: install it with `apt-get install clang libclang-dev`",
        ),
    };
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    if let Err(e) = bindings.write_to_file(out.join("bindings.rs")) {
        fail(&format!("cannot write bindings: {e}"));
    }
}
