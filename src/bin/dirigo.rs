//! The dirigo daemon.

use clap::Parser;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// dirigo: an LVS-style Layer-4 director on DPDK.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// The TOML configuration file (see docs/CONFIG.md).
    #[arg(short, long, default_value = "/etc/dirigo/dirigo.toml")]
    config: String,
    /// Validate the configuration and exit.
    #[arg(long)]
    check: bool,
}

fn main() {
    let args = Args::parse();
    let cfg = match dirigo::ctl::config::Config::load(&args.config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("dirigo: {e}");
            std::process::exit(2);
        }
    };
    if args.check {
        println!("dirigo: config {} is valid", args.config);
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(sig, Arc::clone(&stop)) {
            eprintln!("dirigo: cannot install signal handler: {e}");
            std::process::exit(1);
        }
    }
    if let Err(e) = dirigo::daemon::run(cfg, stop) {
        eprintln!("dirigo: {e}");
        std::process::exit(1);
    }
}
