//! dirigoadm: ipvsadm-compatible administration of a running dirigo.

use std::io::{stdin, stdout};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match dirigo_proto::adm::run::run(&args, &mut stdin().lock(), &mut stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.msg);
            ExitCode::from(e.exit.clamp(1, 255) as u8)
        }
    }
}
