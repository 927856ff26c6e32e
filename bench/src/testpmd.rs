//! Running dpdk-testpmd on the same virtual devices, for the ceiling.

use std::process::{Command, Stdio};

/// The shell command [`run`] executes (also printed in BENCHMARKS.md).
/// With `--stats-period` testpmd does not read stdin (it prints until a
/// signal), so `timeout -s INT` ends it cleanly.
pub fn command(mode: &str, pcap: &str, seconds: u64, mbufs: u64, prefix: &str) -> String {
    format!(
        "timeout -s INT -k 10 {seconds} dpdk-testpmd -l 0-1 --in-memory --no-pci --no-telemetry --file-prefix {prefix} \
         --vdev=net_pcap0,rx_pcap={pcap},infinite_rx=1 --vdev=net_null0,no-rx=1 -- \
         --forward-mode={mode} --burst=32 --nb-cores=1 --total-num-mbufs={mbufs} --mbuf-size=256 \
         --stats-period 1 --no-lsc-interrupt < /dev/null"
    )
}

/// Run testpmd (`mode` = io | macswap) with one forwarding core: net_pcap
/// replaying `pcap` forever into net_null, for `seconds` in all (pcap
/// preload included). `mbufs` must exceed the pcap's packet count (net_pcap
/// preloads it into the pool); the data room is 256 bytes, as dirigo's.
/// Returns the Mpps it forwarded: the median of the one-second stats
/// periods after the first one with traffic (start-up, preload).
pub fn run(mode: &str, pcap: &str, seconds: u64, mbufs: u64, prefix: &str) -> Result<f64, String> {
    let script = command(mode, pcap, seconds, mbufs, prefix) + " 2>&1";
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run dpdk-testpmd: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rates = parse_tx_pps(&text);
    if rates.is_empty() {
        return Err(format!(
            "testpmd printed no rates (is dpdk-testpmd installed? apt-get install dpdk):\n{}",
            text.lines().rev().take(15).collect::<Vec<_>>().join("\n")
        ));
    }
    // skip the first period with traffic (partial: start-up, preload)
    let skip = usize::from(rates.len() >= 3);
    let mut tail = rates[skip..].to_vec();
    tail.sort_by(f64::total_cmp);
    Ok(tail[tail.len() / 2] / 1e6)
}

/// The non-zero "Tx-pps" values testpmd printed, in order.
pub fn parse_tx_pps(text: &str) -> Vec<f64> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("Tx-pps:")?;
            let v: f64 = rest.split_whitespace().next()?.parse().ok()?;
            (v > 0.0).then_some(v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_testpmd_stats() {
        let t = "  Throughput (since last show)\n  Rx-pps:     14279683          Rx-bps:   6854248008\n  Tx-pps:            0          Tx-bps:            0\n  Tx-pps:     14279663          Tx-bps:            0\n";
        assert_eq!(super::parse_tx_pps(t), vec![14279663.0]);
    }
}
