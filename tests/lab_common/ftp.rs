//! The FTP helper through a NAT service (issue 52): Debian's vsftpd on
//! rs1..rs3 (a configuration of its own, anonymous, uploads allowed, a
//! passive port range, connecting from port 20 in active mode), curl as
//! the client, a service on VIP:21 (rr). Passive mode with `PASV` (the
//! `227` reply rewritten: the servers' addresses are one digit shorter
//! than the VIP) and with `EPSV`, active mode with `PORT` and `EPRT`; in
//! each, a download and an upload, byte-exact. Each server serves a file
//! of its own (`who.txt` names it, `big.bin` differs), fetched on one
//! control connection, so the data connections reached the control
//! connection's server; an upload lands on exactly one server.

use super::{rip, Lab, VIP};
use std::path::{Path, PathBuf};

/// The curl options of each mode.
const MODES: [(&str, &[&str]); 4] = [
    ("pasv", &["--ftp-pasv", "--disable-epsv"]),
    ("epsv", &["--ftp-pasv"]),
    ("port", &["-P", "-", "--disable-eprt"]),
    ("eprt", &["-P", "-"]),
];

/// Bytes of each server's `big.bin` and of each upload.
const SIZE: usize = 512 << 10;

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn sh(lab: &Lab, who: &str, cmd: &str) -> bool {
    lab.exec(who, &["sh", "-c", cmd]).status.success()
}

/// Write rsN's vsftpd tree and configuration under `dir`.
fn server_tree(dir: &Path, n: usize) -> PathBuf {
    let root = dir.join(format!("rs{n}"));
    let up = root.join("up");
    let empty = dir.join("empty");
    for d in [&root, &up, &empty] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(root.join("who.txt"), format!("rs{n}\n")).unwrap();
    std::fs::write(root.join("big.bin"), bytes(n as u64, SIZE)).unwrap();
    let conf = dir.join(format!("vsftpd-rs{n}.conf"));
    let log = dir.join(format!("vsftpd-rs{n}.log"));
    std::fs::write(
        &conf,
        format!(
            "listen=YES\nlisten_ipv6=NO\nbackground=NO\nlisten_address={}\n\
             anonymous_enable=YES\nno_anon_password=YES\nlocal_enable=NO\n\
             anon_root={}\nwrite_enable=YES\nanon_upload_enable=YES\n\
             anon_umask=022\npasv_enable=YES\npasv_min_port=50000\n\
             pasv_max_port=50999\nport_enable=YES\nconnect_from_port_20=YES\n\
             seccomp_sandbox=NO\nisolate=NO\nisolate_network=NO\n\
             secure_chroot_dir={}\nxferlog_enable=YES\nvsftpd_log_file={}\n\
             dual_log_enable=YES\nlog_ftp_protocol=YES\n",
            rip(n),
            root.display(),
            empty.display(),
            log.display()
        ),
    )
    .unwrap();
    conf
}

/// The checks (see the module docs); `dir`: a scratch directory.
pub fn ftp(lab: &Lab, dir: &Path) {
    let t0 = std::time::Instant::now();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    // the trees readable by vsftpd's unprivileged users, the upload
    // directories writable by its anonymous user only
    let mut servers = Vec::new();
    for n in 1..=3 {
        let conf = server_tree(dir, n);
        let up = dir.join(format!("rs{n}/up"));
        assert!(
            sh(
                lab,
                "client",
                &format!(
                    "chmod -R a+rX {0} && chown ftp {1}",
                    dir.display(),
                    up.display()
                )
            ),
            "permissions of {}",
            dir.display()
        );
        servers.push(lab.spawn(
            &format!("rs{n}"),
            &["/usr/sbin/vsftpd", &conf.to_string_lossy()],
        ));
    }
    for n in 1..=3 {
        let rs = format!("rs{n}");
        lab.wait_for(&format!("vsftpd on {rs}"), 10, || {
            sh(lab, &rs, "ss -ltn | grep -q ':21 '")
        });
    }
    let svc = format!("{VIP}:21");
    lab.adm(&["-A", "-t", &svc, "-s", "rr"]);
    for n in 1..=3 {
        lab.adm(&["-a", "-t", &svc, "-r", &format!("{}:21", rip(n)), "-m"]);
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, (mode, opts)) in MODES.iter().enumerate() {
        // download: who.txt and big.bin on one control connection
        let (who, big) = (
            dir.join(format!("{mode}.who")),
            dir.join(format!("{mode}.big")),
        );
        let mut a = vec!["curl", "-sS", "-m", "20"];
        a.extend_from_slice(opts);
        let (u1, u2) = (
            format!("ftp://{VIP}/who.txt"),
            format!("ftp://{VIP}/big.bin"),
        );
        let (o1, o2) = (who.to_string_lossy(), big.to_string_lossy());
        a.extend_from_slice(&[&u1, "-o", &o1, &u2, "-o", &o2]);
        lab.client(&a);
        let name = std::fs::read_to_string(&who).unwrap();
        let n = super::rs_index(name.trim());
        assert!(
            std::fs::read(&big).unwrap() == bytes(n as u64, SIZE),
            "{mode}: big.bin is not rs{n}'s, byte for byte"
        );
        seen.insert(n);
        // upload: lands on one server, byte-exact
        let src = dir.join(format!("{mode}.up"));
        let data = bytes(100 + i as u64, SIZE);
        std::fs::write(&src, &data).unwrap();
        let mut a = vec!["curl", "-sS", "-m", "20"];
        a.extend_from_slice(opts);
        let (s, u) = (src.to_string_lossy(), format!("ftp://{VIP}/up/{mode}.bin"));
        a.extend_from_slice(&["-T", &s, &u]);
        lab.client(&a);
        let got: Vec<usize> = (1..=3)
            .filter(|k| dir.join(format!("rs{k}/up/{mode}.bin")).exists())
            .collect();
        assert_eq!(got.len(), 1, "{mode}: the upload is on {got:?}");
        let on = dir.join(format!("rs{}/up/{mode}.bin", got[0]));
        assert!(
            std::fs::read(&on).unwrap() == data,
            "{mode}: upload differs"
        );
        eprintln!(
            "ftp {mode}: down from rs{n}, up to rs{}: byte-exact",
            got[0]
        );
    }
    assert!(
        seen.len() >= 2,
        "rr spread the control connections: {seen:?}"
    );
    let rewritten = lab.counter("ftp_rewritten");
    let opened = lab.counter("ftp_data_opened");
    assert!(rewritten >= 1, "no 227 rewritten");
    assert!(opened >= 8, "data connections opened: {opened}");
    eprintln!(
        "ftp: {rewritten} 227 rewritten, {opened} data connections, in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    for mut s in servers {
        let _ = s.kill();
        let _ = s.wait();
    }
    lab.adm(&["-D", "-t", &svc]);
}
