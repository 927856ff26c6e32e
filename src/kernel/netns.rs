//! Named network namespaces, kept where `ip netns` keeps them: a namespace
//! named NAME is a bind mount of a namespace file on `/run/netns/NAME`, so
//! `ip netns exec NAME ...` and `ip -n NAME ...` see what dirigo made, and
//! dirigo sees what they made.
//!
//! Creation follows iproute2's `ip netns add` step by step (see
//! [`Netns::ensure`]); entering a namespace is done on a scoped thread of its
//! own ([`Netns::run`]), because a thread's namespace cannot be given back
//! safely once the caller's code has run in it, and the namespace of a
//! thread is all `setns` changes: the rest of the process stays where it is.

use super::error::{printable, KernelError};
use nix::errno::Errno;
use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sched::{setns, unshare, CloneFlags};
use nix::sys::statfs::{fstatfs, NSFS_MAGIC};
use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where named namespaces are mounted (iproute2's `NETNS_RUN_DIR`).
pub const NETNS_RUN_DIR: &str = "/run/netns";

/// Creations in this process, one at a time: a second `ensure` of the same
/// name waits for the first to finish its mount rather than finding the
/// file half made.
static CREATING: Mutex<()> = Mutex::new(());

/// A named network namespace, held open (the file keeps the namespace
/// reachable as long as this value lives, even if it is deleted meanwhile).
#[derive(Debug)]
pub struct Netns {
    name: String,
    /// `/run/netns/NAME`, opened read-only: a namespace file descriptor.
    file: File,
}

pub use dirigo_config::names::{valid_netns as valid_name, NAME_MAX};

/// `/run/netns/NAME` for a valid name.
fn path_of(name: &str) -> Result<PathBuf, KernelError> {
    valid_name(name).map_err(|why| KernelError::InvalidName {
        kind: "netns",
        name: printable(name),
        why,
    })?;
    Ok(Path::new(NETNS_RUN_DIR).join(name))
}

/// A [`KernelError::Netns`].
fn fail(name: &str, what: impl Into<String>, err: impl Into<io::Error>) -> KernelError {
    KernelError::Netns {
        name: printable(name),
        what: what.into(),
        err: err.into(),
    }
}

/// Whether `file` is a namespace file (on nsfs), i.e. something is mounted
/// on it, rather than the empty placeholder the mount goes onto.
fn is_namespace(file: &File) -> io::Result<bool> {
    Ok(fstatfs(file.as_fd())?.filesystem_type() == NSFS_MAGIC)
}

impl Netns {
    /// Open `/run/netns/NAME`, creating the namespace when it is missing,
    /// exactly as `ip netns add NAME` would:
    ///
    /// 1. `mkdir -p /run/netns` (mode 0755);
    /// 2. make `/run/netns` a shared mount (`MS_SHARED | MS_REC`), so that a
    ///    namespace mounted or unmounted there from one mount namespace is
    ///    seen from the others. The kernel refuses (`EINVAL`) to change the
    ///    propagation of a directory that is not a mount point: then the
    ///    directory is first bind-mounted on itself and the change retried
    ///    once. After that, `/run/netns` stays a mount point (as `ip` leaves
    ///    it);
    /// 3. create the empty file `/run/netns/NAME` (mode 0, exclusively);
    /// 4. on a short-lived thread, `unshare(CLONE_NEWNET)` (only that thread
    ///    moves to the new namespace) and bind-mount
    ///    `/proc/thread-self/ns/net` onto the file. The mount keeps the
    ///    namespace alive after the thread is gone.
    ///
    /// When the file exists but nothing is mounted on it (a creation that
    /// was interrupted), it is reused for the mount. On failure the file
    /// this call created is removed again.
    pub fn ensure(name: &str) -> Result<Netns, KernelError> {
        let path = path_of(name)?;
        let _one_at_a_time = CREATING.lock().unwrap_or_else(|p| p.into_inner());
        let placeholder = match File::open(&path) {
            Ok(file) => {
                let ns = is_namespace(&file)
                    .map_err(|e| fail(name, format!("cannot inspect {}", path.display()), e))?;
                if ns {
                    return Ok(Netns {
                        name: name.to_string(),
                        file,
                    });
                }
                true
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(fail(name, format!("cannot open {}", path.display()), e)),
        };
        shared_run_dir(name)?;
        let created = !placeholder && create_placeholder(name, &path)?;
        if !placeholder && !created {
            // Another process created it meanwhile; use it once mounted.
            if let Ok(ns) = Netns::open(name) {
                return Ok(ns);
            }
        }
        if let Err(e) = mount_new_namespace(name, &path) {
            if created {
                let _ = std::fs::remove_file(&path);
            }
            return Err(e);
        }
        Netns::open(name)
    }

    /// Open the existing namespace `/run/netns/NAME`; an error when it does
    /// not exist or nothing is mounted on the file.
    pub fn open(name: &str) -> Result<Netns, KernelError> {
        let path = path_of(name)?;
        let file = File::open(&path)
            .map_err(|e| fail(name, format!("cannot open {}", path.display()), e))?;
        let ns = is_namespace(&file)
            .map_err(|e| fail(name, format!("cannot inspect {}", path.display()), e))?;
        if !ns {
            return Err(fail(
                name,
                format!("cannot use {}", path.display()),
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "no namespace is mounted on it (a creation that did not finish?)",
                ),
            ));
        }
        Ok(Netns {
            name: name.to_string(),
            file,
        })
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `/run/netns/NAME`.
    pub fn path(&self) -> PathBuf {
        Path::new(NETNS_RUN_DIR).join(&self.name)
    }

    /// The namespace's file descriptor (for `setns`, `IFLA_NET_NS_FD`).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// Run `f` on a scoped thread that has entered this namespace and
    /// return its result; the calling thread stays where it is. Sockets
    /// opened by `f` (a [`super::link::Rtnl`]) stay bound to this namespace
    /// wherever they are used afterwards. A panic in `f` is passed on.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T, KernelError> {
        std::thread::scope(|scope| {
            let thread = std::thread::Builder::new()
                .name("netns".into())
                .spawn_scoped(scope, || {
                    self.enter_current_thread()?;
                    Ok(f())
                })
                .map_err(|e| fail(&self.name, "cannot start a thread to enter it", e))?;
            thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Another handle on the same namespace (the file descriptor
    /// duplicated), e.g. to move into a thread that enters it.
    pub fn try_clone(&self) -> Result<Netns, KernelError> {
        let file = self
            .file
            .try_clone()
            .map_err(|e| fail(&self.name, "cannot duplicate the namespace's descriptor", e))?;
        Ok(Netns {
            name: self.name.clone(),
            file,
        })
    }

    /// Move the calling thread into this namespace for the rest of its
    /// life: every socket it opens and every process it starts from then
    /// on lives there (the rest of the process stays where it is). Only for
    /// a thread made for it and never given back: unlike [`Netns::run`],
    /// nothing returns the thread to where it was.
    pub fn enter_current_thread(&self) -> Result<(), KernelError> {
        setns(self.fd(), CloneFlags::CLONE_NEWNET)
            .map_err(|e| fail(&self.name, "cannot enter the namespace (setns)", e))
    }

    /// Delete the namespace NAME as `ip netns del` does: detach the mount
    /// from `/run/netns/NAME` and remove the file. The namespace itself
    /// goes when nothing uses it any more (open [`Netns`] values, processes
    /// or interfaces in it keep it). An error when the file does not exist.
    pub fn remove(name: &str) -> Result<(), KernelError> {
        let path = path_of(name)?;
        match umount2(&path, MntFlags::MNT_DETACH) {
            // EINVAL: nothing mounted (a placeholder); ENOENT: unlink says it.
            Ok(()) | Err(Errno::EINVAL) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(fail(name, format!("cannot unmount {}", path.display()), e)),
        }
        std::fs::remove_file(&path)
            .map_err(|e| fail(name, format!("cannot remove {}", path.display()), e))
    }
}

/// Steps 1 and 2 of [`Netns::ensure`]: `/run/netns` exists and is a shared
/// mount.
fn shared_run_dir(name: &str) -> Result<(), KernelError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(NETNS_RUN_DIR)
        .map_err(|e| fail(name, format!("cannot create {NETNS_RUN_DIR}"), e))?;
    let mut made_mount_point = false;
    loop {
        let shared = mount(
            Some(""),
            NETNS_RUN_DIR,
            Some("none"),
            MsFlags::MS_SHARED | MsFlags::MS_REC,
            None::<&str>,
        );
        match shared {
            Ok(()) => return Ok(()),
            Err(Errno::EINVAL) if !made_mount_point => {
                mount(
                    Some(NETNS_RUN_DIR),
                    NETNS_RUN_DIR,
                    Some("none"),
                    MsFlags::MS_BIND | MsFlags::MS_REC,
                    None::<&str>,
                )
                .map_err(|e| {
                    fail(
                        name,
                        format!("cannot bind-mount {NETNS_RUN_DIR} on itself"),
                        e,
                    )
                })?;
                made_mount_point = true;
            }
            Err(e) => {
                return Err(fail(
                    name,
                    format!("cannot make {NETNS_RUN_DIR} a shared mount"),
                    e,
                ))
            }
        }
    }
}

/// Step 3: the empty file the namespace is mounted on. `Ok(false)` when
/// another process made it meanwhile.
fn create_placeholder(name: &str, path: &Path) -> Result<bool, KernelError> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o000)
        .open(path)
    {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(fail(name, format!("cannot create {}", path.display()), e)),
    }
}

/// Step 4: a new namespace, made on a thread of its own and mounted on
/// `path`.
fn mount_new_namespace(name: &str, path: &Path) -> Result<(), KernelError> {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("netns-add".into())
            .spawn_scoped(scope, || {
                unshare(CloneFlags::CLONE_NEWNET)
                    .map_err(|e| fail(name, "cannot create a network namespace (unshare)", e))?;
                mount(
                    Some("/proc/thread-self/ns/net"),
                    path,
                    Some("none"),
                    MsFlags::MS_BIND,
                    None::<&str>,
                )
                .map_err(|e| {
                    fail(
                        name,
                        format!("cannot bind-mount the new namespace on {}", path.display()),
                        e,
                    )
                })
            })
            .map_err(|e| fail(name, "cannot start a thread to create it", e))?;
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
