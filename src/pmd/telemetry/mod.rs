//! DPDK telemetry: dirigo's own commands beside DPDK's (`/ethdev/*`, ...),
//! listed by `/` and answered to `dpdk-telemetry.py` like them.
//!
//! The library calls a command's callback with the command's name, its
//! parameter and the data to fill, but no user pointer. So every command
//! goes to one `extern "C"` trampoline that finds the command's handler by
//! name in a registry set once per process ([`register`]), runs it under
//! `catch_unwind` (a panic never crosses into C; it answers an error) and
//! copies the [`Dict`] it returns into the library's data. Handlers run on
//! the telemetry library's threads — one per connected client, so possibly
//! several at once — never on a worker. DPDK cannot unregister a command:
//! a handler must answer (an error) for as long as the process lives.

mod data;
#[cfg(test)]
mod tests;

pub use data::{
    clean_name, clean_str, output_budget, Dict, Full, Value, MAX_ARRAY_ENTRIES, MAX_CMD_LEN,
    MAX_DICT_ENTRIES, MAX_OUTPUT_LEN, MAX_STRING_LEN,
};

use super::error::{DpdkError, Result};
use data::Inner;
use dpdk_sys::rte_tel_data;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// What a command answers: its dict, or an error message (answered as
/// `{"error": "..."}`).
pub type Answer = std::result::Result<Dict, String>;

/// A command's handler. Its argument is the parameter after the
/// command's comma, trimmed (`/dirigo/services,40` gives `Some("40")`).
pub type Handler = Box<dyn Fn(Option<&str>) -> Answer + Send + Sync>;

/// One telemetry command.
pub struct Command {
    /// `/`, then `[A-Za-z0-9_/]`, at most [`MAX_CMD_LEN`] bytes.
    pub name: &'static str,
    /// The help `/help,<name>` shows (at most [`MAX_STRING_LEN`] bytes).
    pub help: &'static str,
    /// What answers it.
    pub handler: Handler,
}

static REGISTRY: OnceLock<Vec<Command>> = OnceLock::new();

fn error(reason: impl Into<String>) -> DpdkError {
    DpdkError {
        what: "telemetry".into(),
        reason: reason.into(),
    }
}

/// Whether `name` is a command name the library takes.
pub fn valid_command(name: &str) -> bool {
    name.starts_with('/')
        && name.len() <= MAX_CMD_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'/')
}

/// Register `cmds` with the telemetry library. Once per process: the
/// library keeps its callbacks until exit.
pub fn register(cmds: Vec<Command>) -> Result<()> {
    for c in &cmds {
        if !valid_command(c.name) {
            return Err(error(format!(
                "command name {:?}: '/' then at most {MAX_CMD_LEN} bytes of [A-Za-z0-9_/]",
                c.name
            )));
        }
        if c.help.len() > MAX_STRING_LEN || c.help.contains('\0') {
            return Err(error(format!(
                "help of {}: at most {MAX_STRING_LEN} bytes, no NUL",
                c.name
            )));
        }
    }
    REGISTRY
        .set(cmds)
        .map_err(|_| error("commands are registered once per process"))?;
    for c in REGISTRY.get().into_iter().flatten() {
        let (Ok(name), Ok(help)) = (CString::new(c.name), CString::new(c.help)) else {
            continue; // checked above
        };
        // SAFETY: both are valid NUL-terminated strings, which the library
        // copies; the callback is a plain function that lives as long as
        // the process.
        let rc = unsafe {
            dpdk_sys::rte_telemetry_register_cmd(name.as_ptr(), Some(trampoline), help.as_ptr())
        };
        if rc < 0 {
            return Err(DpdkError::from_code(
                format!("telemetry: register {}", c.name),
                rc,
            ));
        }
    }
    Ok(())
}

/// The one callback of every command.
extern "C" fn trampoline(cmd: *const c_char, params: *const c_char, d: *mut rte_tel_data) -> c_int {
    let run = || {
        if cmd.is_null() || d.is_null() {
            return -1;
        }
        // SAFETY: the library passes the command as a NUL-terminated
        // string that lives for the call.
        let cmd = unsafe { CStr::from_ptr(cmd) }.to_string_lossy();
        let params = (!params.is_null()).then(|| {
            // SAFETY: as above, for the parameter when there is one.
            unsafe { CStr::from_ptr(params) }.to_string_lossy()
        });
        let reg = REGISTRY.get().map_or(&[][..], Vec::as_slice);
        fill_dict(d, &answer(reg, &cmd, params.as_deref()));
        0
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or(-1)
}

/// A one-entry dict `{"error": msg}`.
pub fn error_dict(msg: &str) -> Dict {
    let mut d = Dict::new();
    let _ = d.insert("error", msg);
    d
}

/// What `cmd` answers: its handler's dict, or `{"error": ...}` for an
/// unknown command, the handler's error or its panic.
fn answer(reg: &[Command], cmd: &str, params: Option<&str>) -> Dict {
    let Some(c) = reg.iter().find(|c| c.name == cmd) else {
        return error_dict(&format!("unknown command {cmd}"));
    };
    let params = params.map(str::trim).filter(|p| !p.is_empty());
    match catch_unwind(AssertUnwindSafe(|| (c.handler)(params))) {
        Ok(Ok(d)) => d,
        Ok(Err(msg)) => error_dict(&msg),
        Err(_) => error_dict("internal error: the command's handler failed"),
    }
}

/// Copy `dict` into the library's data `d` (the callback's, or a
/// container from `rte_tel_data_alloc`). Returns how many entries and
/// array items the library refused (none: [`Dict`] keeps its limits).
fn fill_dict(d: *mut rte_tel_data, dict: &Dict) -> usize {
    let mut refused = 0;
    // SAFETY: d is the callback's data or a container allocated below,
    // valid for writing.
    unsafe { dpdk_sys::rte_tel_data_start_dict(d) };
    for (k, v) in dict.entries() {
        // names and strings are clean (no NUL) by construction
        let Ok(key) = CString::new(k) else {
            refused += 1;
            continue;
        };
        let rc = match &v.0 {
            Inner::Str(s) => match CString::new(s.as_str()) {
                // SAFETY: d was started as a dict; key and s are valid C
                // strings the library copies.
                Ok(s) => unsafe {
                    dpdk_sys::rte_tel_data_add_dict_string(d, key.as_ptr(), s.as_ptr())
                },
                Err(_) => -1,
            },
            // SAFETY: d was started as a dict; key is a valid C string.
            Inner::U64(n) => unsafe { dpdk_sys::rte_tel_data_add_dict_u64(d, key.as_ptr(), *n) },
            // SAFETY: as above.
            Inner::Int(n) => unsafe { dpdk_sys::rte_tel_data_add_dict_int(d, key.as_ptr(), *n) },
            Inner::Strs(_) | Inner::U64s(_) | Inner::Dict(_) => {
                // SAFETY: allocates a container (malloc); null on failure.
                let c = unsafe { dpdk_sys::rte_tel_data_alloc() };
                if c.is_null() {
                    refused += 1;
                    continue;
                }
                refused += fill_container(c, v);
                // SAFETY: d is a dict, c a filled container; keep = 0 hands
                // c to the library, which frees it after writing the answer.
                let rc =
                    unsafe { dpdk_sys::rte_tel_data_add_dict_container(d, key.as_ptr(), c, 0) };
                if rc < 0 {
                    // SAFETY: refused, so still ours; allocated above.
                    unsafe { dpdk_sys::rte_tel_data_free(c) };
                }
                rc
            }
        };
        refused += usize::from(rc < 0);
    }
    refused
}

/// Fill a freshly allocated container with an array or a dict; how many
/// items the library refused.
fn fill_container(c: *mut rte_tel_data, v: &Value) -> usize {
    let mut refused = 0;
    match &v.0 {
        Inner::Dict(d) => refused += fill_dict(c, d),
        Inner::Strs(items) => {
            // SAFETY: c is a container allocated by rte_tel_data_alloc.
            unsafe { dpdk_sys::rte_tel_data_start_array(c, dpdk_sys::RTE_TEL_STRING_VAL) };
            for s in items {
                let rc = match CString::new(s.as_str()) {
                    // SAFETY: c is a string array; s a valid C string (copied).
                    Ok(s) => unsafe { dpdk_sys::rte_tel_data_add_array_string(c, s.as_ptr()) },
                    Err(_) => -1,
                };
                refused += usize::from(rc < 0);
            }
        }
        Inner::U64s(items) => {
            // SAFETY: c is a container allocated by rte_tel_data_alloc.
            unsafe { dpdk_sys::rte_tel_data_start_array(c, dpdk_sys::RTE_TEL_U64_VAL) };
            for n in items {
                // SAFETY: c is a u64 array.
                let rc = unsafe { dpdk_sys::rte_tel_data_add_array_u64(c, *n) };
                refused += usize::from(rc < 0);
            }
        }
        // scalars are never containers (fill_dict adds them directly)
        Inner::Str(_) | Inner::U64(_) | Inner::Int(_) => {
            // SAFETY: c is a container allocated by rte_tel_data_alloc.
            unsafe { dpdk_sys::rte_tel_data_start_dict(c) };
        }
    }
    refused
}
