//! The dirigo daemon.

use dirigo::cli::daemon::Args;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() {
    // before any thread (EAL's, the control plane's) allocates: resident
    // memory that does not step up with concurrent control clients
    dirigo::pmd::mem::one_malloc_arena();
    // large control-plane allocations in mappings of their own, not
    // stepping the heap up for good
    dirigo::pmd::mem::fixed_mmap_threshold();
    let args: Args = dirigo::cli::parse_with(dirigo::version::long());
    let cfg = match dirigo_config::Config::load(&args.config) {
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
        check_state_file(&cfg);
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

/// `--check` of `[control] state_file`: the saved rules as the daemon
/// would load them at start (a problem as FILE:LINE: message, exit 2).
fn check_state_file(cfg: &dirigo_config::Config) {
    let Some(path) = &cfg.control.state_file else {
        return;
    };
    match dirigo::daemon::control::state_file::load(path, cfg.timeouts) {
        Ok(Some(s)) => println!(
            "dirigo: state file {path}: {} service(s), loaded at start in place of the config's {}",
            s.services.len(),
            cfg.services.len()
        ),
        Ok(None) => println!(
            "dirigo: state file {path} does not exist yet: the config's services are used at start"
        ),
        Err(e) => {
            eprintln!("{e}");
            eprintln!("dirigo: {path}: 1 problem; the state file is not valid");
            std::process::exit(2);
        }
    }
}
