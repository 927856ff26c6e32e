//! The dirigo daemon.

use dirigo::cli::daemon::Args;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() {
    let args: Args = dirigo::cli::parse();
    let cfg = match dirigo::ctl::config::Config::load(&args.config) {
        Ok(c) => c,
        Err(e) if args.check => {
            // like `nginx -t`: every problem as FILE:LINE: message
            let lines = e.lines();
            for l in &lines {
                eprintln!("{l}");
            }
            eprintln!(
                "dirigo: {}: {} problem{}; the configuration is not valid",
                args.config,
                lines.len(),
                if lines.len() == 1 { "" } else { "s" }
            );
            std::process::exit(2);
        }
        Err(e) => {
            for l in e.to_string().lines() {
                eprintln!("dirigo: {l}");
            }
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
