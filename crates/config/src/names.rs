//! The names the configuration gives to kernel objects, checked as the
//! kernel checks them (the daemon's `kernel` module uses the same checks
//! before it creates anything).

/// The longest namespace name (`NAME_MAX`, one path component).
pub const NAME_MAX: usize = 255;

/// `IFNAMSIZ`: an interface name and its NUL byte.
pub const IFNAMSIZ: usize = 16;

/// Whether `name` may name a namespace, as `ip netns` accepts it: not empty,
/// at most [`NAME_MAX`] bytes, not `.` or `..`, no `/` (and no NUL byte,
/// which no path can hold). The error is one sentence.
pub fn valid_netns(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.len() > NAME_MAX {
        return Err(format!(
            "the name is {} bytes long, at most {NAME_MAX} are allowed",
            name.len()
        ));
    }
    if name == "." || name == ".." {
        return Err("'.' and '..' cannot name a namespace".into());
    }
    if name.contains('/') {
        return Err("a namespace name cannot contain '/'".into());
    }
    if name.contains('\0') {
        return Err("a namespace name cannot contain a NUL byte".into());
    }
    Ok(())
}

/// Whether Linux would accept `name` as an interface name (its
/// `dev_valid_name`): not empty, at most 15 bytes (`IFNAMSIZ - 1`), not `.`
/// or `..`, no `/`, `:` or white space (the kernel's `isspace`, which also
/// counts the byte 0xa0, found inside some UTF-8 characters), and no NUL.
/// The error is one sentence.
pub fn valid_ifname(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("an interface name cannot be empty".into());
    }
    if name.len() >= IFNAMSIZ {
        return Err(format!(
            "an interface name has at most {} bytes, this one has {}",
            IFNAMSIZ - 1,
            name.len()
        ));
    }
    if name == "." || name == ".." {
        return Err("'.' and '..' cannot name an interface".into());
    }
    let kernel_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0xa0);
    if let Some(b) = name
        .bytes()
        .find(|&b| b == b'/' || b == b':' || b == 0 || kernel_space(b))
    {
        let what = match b {
            b'/' => "'/'".to_string(),
            b':' => "':'".to_string(),
            0 => "a NUL byte".to_string(),
            0xa0 => "the byte 0xa0 (white space to the kernel)".to_string(),
            _ => "white space".to_string(),
        };
        return Err(format!("an interface name cannot contain {what}"));
    }
    Ok(())
}
