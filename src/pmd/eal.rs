//! EAL initialisation. DPDK allows one initialisation per process, and none
//! after cleanup: [`Eal::init`] enforces that.

use super::error::{DpdkError, Result};
use std::ffi::CString;
use std::os::raw::c_char;
use std::sync::atomic::{AtomicU8, Ordering};

const UNINIT: u8 = 0;
const LIVE: u8 = 1;
const DONE: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(UNINIT);

/// A live EAL. Dropping it calls `rte_eal_cleanup`.
#[derive(Debug)]
pub struct Eal {
    _private: (),
}

impl Eal {
    /// Initialise EAL with `args` (the program name is prepended).
    pub fn init<S: AsRef<str>>(args: &[S]) -> Result<Eal> {
        if STATE
            .compare_exchange(UNINIT, LIVE, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(DpdkError {
                what: "EAL init".into(),
                reason: "EAL can be initialised only once per process".into(),
            });
        }
        let mut owned: Vec<CString> = Vec::with_capacity(args.len() + 1);
        owned.push(CString::new("dirigo").expect("static"));
        for a in args {
            match CString::new(a.as_ref()) {
                Ok(c) => owned.push(c),
                Err(_) => {
                    STATE.store(UNINIT, Ordering::Release);
                    return Err(DpdkError {
                        what: "EAL init".into(),
                        reason: format!("argument contains a NUL byte: {:?}", a.as_ref()),
                    });
                }
            }
        }
        // EAL may permute argv; it keeps pointers into it for the life of
        // the process, so the strings are leaked on purpose (a few bytes, once).
        let mut argv: Vec<*mut c_char> = owned.into_iter().map(CString::into_raw).collect();
        let argc = argv.len() as i32;
        let argv_ptr = argv.as_mut_ptr();
        std::mem::forget(argv);
        // SAFETY: argv holds argc valid NUL-terminated strings that live for
        // the rest of the process; EAL is not yet initialised (checked above).
        let rc = unsafe { dpdk_sys::rte_eal_init(argc, argv_ptr) };
        if rc < 0 {
            STATE.store(DONE, Ordering::Release);
            return Err(DpdkError::from_errno("EAL init"));
        }
        Ok(Eal { _private: () })
    }

    /// Whether EAL is initialised and not cleaned up.
    pub fn is_live() -> bool {
        STATE.load(Ordering::Acquire) == LIVE
    }

    /// EAL's runtime directory (`/var/run/dpdk/<file-prefix>` for root):
    /// where the telemetry socket and the multi-process files are.
    pub fn runtime_dir(&self) -> std::path::PathBuf {
        // SAFETY: EAL is live (self exists); the function returns a
        // pointer to a static NUL-terminated buffer.
        let p = unsafe { std::ffi::CStr::from_ptr(dpdk_sys::rte_eal_get_runtime_dir()) };
        std::path::PathBuf::from(p.to_string_lossy().into_owned())
    }
}

impl Drop for Eal {
    fn drop(&mut self) {
        STATE.store(DONE, Ordering::Release);
        // SAFETY: EAL was initialised by this handle and every worker has
        // been joined by the owner before dropping it.
        unsafe {
            dpdk_sys::rte_eal_cleanup();
        }
    }
}

/// The version of the DPDK library linked at run time (`rte_version()`
/// without its "DPDK " prefix: "22.11.11"). Needs no EAL.
pub fn dpdk_version() -> String {
    // SAFETY: rte_version takes no argument, needs no EAL and returns a
    // pointer to a static NUL-terminated string.
    let v = unsafe { std::ffi::CStr::from_ptr(dpdk_sys::rte_version()) };
    let v = v.to_string_lossy();
    v.strip_prefix("DPDK ").unwrap_or(&v).trim().to_string()
}
