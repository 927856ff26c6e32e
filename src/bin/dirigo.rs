//! The dirigo daemon.

use dirigo::cli::daemon::Args;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() {
    let args: Args = dirigo::cli::parse();
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
