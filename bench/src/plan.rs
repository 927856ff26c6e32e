//! What one invocation runs: sizes, methods and times ([`Plan`]), and
//! which scenarios `--only` selects.

use crate::mname;
use dirigo_core::lb::spec::Method;
use std::time::Duration;

/// Sizes and times of one benchmark invocation.
pub struct Plan {
    /// (label, flows) of the established scenarios.
    pub sizes: Vec<(&'static str, u32)>,
    /// Methods of the established scenarios.
    pub methods: Vec<Method>,
    /// (label, flows) of the IPv6 established scenarios (`DR6 1k`, ...):
    /// the same traffic in IPv6 ([`crate::gen::write_pcap6`]) to an IPv6
    /// service, each compared with testpmd macswap on its own pcap
    /// (labelled [`v6_label`]: 78-byte frames on the wire, not 64).
    pub sizes6: Vec<(&'static str, u32)>,
    /// Methods of the IPv6 scenarios.
    pub methods6: Vec<Method>,
    /// (label, flows) of the exception scenario: DR on the established
    /// pcap of that size with every 10th packet for dirigo's own address,
    /// the wan port's exception path configured.
    pub exception_size: (&'static str, u32),
    /// Distinct SYNs in the new-connection pcap.
    pub newconn_flows: u32,
    /// Table capacity in the new-connection scenario.
    pub newconn_capacity: u32,
    /// Table capacity in the established scenarios.
    pub capacity: u32,
    /// testpmd seconds per run (preload included).
    pub testpmd_s: u64,
    /// Daemon warm-up before the first sample.
    pub warmup: Duration,
    /// Between the two samples.
    pub measure: Duration,
    /// Micro-benchmark time per case.
    pub micro: Duration,
    /// Whether quick.
    pub quick: bool,
    /// Core APIs the micro-benchmark runs (false: per packet, true: burst).
    pub apis: Vec<bool>,
    /// Lower-case scenario names to run (empty: all), from `--only`.
    pub only: Vec<String>,
    /// Real servers of the micro-benchmark's service (`micro --servers`).
    pub micro_servers: u8,
}

impl Plan {
    pub fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                sizes: vec![("1k", 1000)],
                methods: vec![Method::Dr, Method::Nat],
                sizes6: vec![("1k", 1000)],
                methods6: vec![Method::Dr],
                exception_size: ("1k", 1000),
                newconn_flows: 20_000,
                newconn_capacity: 1024,
                capacity: 4096,
                testpmd_s: 5,
                warmup: Duration::from_millis(1000),
                measure: Duration::from_millis(1000),
                micro: Duration::from_millis(100),
                quick,
                apis: vec![false, true],
                only: Vec::new(),
                micro_servers: crate::micro::N_RS,
            }
        } else {
            Plan {
                sizes: vec![("1k", 1000), ("100k", 100_000), ("1M", 1_000_000)],
                methods: vec![Method::Dr, Method::Tun, Method::Nat],
                sizes6: vec![("1k", 1000), ("1M", 1_000_000)],
                methods6: vec![Method::Dr, Method::Tun, Method::Nat],
                exception_size: ("100k", 100_000),
                newconn_flows: 1_000_000,
                newconn_capacity: 65536,
                capacity: 1 << 20,
                testpmd_s: 8,
                warmup: Duration::from_millis(2000),
                measure: Duration::from_millis(3000),
                micro: Duration::from_millis(700),
                quick,
                apis: vec![false, true],
                only: Vec::new(),
                micro_servers: crate::micro::N_RS,
            }
        }
    }
}

impl Plan {
    /// Whether scenario `name` (`DR 1M`, `DR-2w 1k`, `newconn`, ...) runs:
    /// always without `--only`; else when a term names it, or names its
    /// first word (a method alone selects all its sizes).
    pub fn wants(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.only.is_empty()
            || self
                .only
                .iter()
                .any(|t| name == *t || name.split(' ').next() == Some(t.as_str()))
    }

    /// The IPv6 scenarios that run: (scenario name, size label, flows).
    pub fn v6_scenarios(&self) -> Vec<(String, &'static str, u32, Method)> {
        let mut v = Vec::new();
        for &m in &self.methods6 {
            for &(l, flows) in &self.sizes6 {
                let name = v6_scenario(m, l);
                if self.wants(&name) {
                    v.push((name, l, flows, m));
                }
            }
        }
        v
    }

    /// The table-in-cache pcap, when the plan has two sizes or more (not
    /// `--quick`): the smallest size's flows on a pcap as large as the
    /// largest size's ([`crate::gen::write_pcap_spread`]). Returns (its
    /// label, e.g. `1k@1M`, flows, packets).
    pub fn spread(&self) -> Option<(String, u32, u64)> {
        let (first, last) = (self.sizes.first()?, self.sizes.last()?);
        if self.quick || first.1 >= last.1 {
            return None;
        }
        Some((
            format!("{}@{}", first.0, last.0),
            first.1,
            2 * last.1 as u64,
        ))
    }

    /// The table-in-cache scenarios that run, one per method on the
    /// [`Self::spread`] pcap: (scenario name, e.g. `DR 1k@1M`, method).
    pub fn spread_scenarios(&self) -> Vec<(String, Method)> {
        let Some((label, _, _)) = self.spread() else {
            return Vec::new();
        };
        self.methods
            .iter()
            .map(|&m| (format!("{} {label}", mname(m)), m))
            .filter(|(name, _)| self.wants(name))
            .collect()
    }

    /// The FullNAT scenarios' sizes (`FNAT 1k`, `FNAT 1M`: the smallest
    /// and the largest of a full plan; none in a quick one) that run.
    pub fn fnat_sizes(&self) -> Vec<&'static str> {
        if self.quick {
            return Vec::new();
        }
        let mut v: Vec<&'static str> = self.sizes.first().map(|s| s.0).into_iter().collect();
        v.extend(self.sizes.last().map(|s| s.0));
        v.dedup();
        v.retain(|l| self.wants(&format!("{} {l}", mname(Method::FullNat))));
        v
    }

    /// [`Self::spread`] when one of its scenarios runs.
    pub fn spread_wanted(&self) -> Option<(String, u32, u64)> {
        self.spread()
            .filter(|_| !self.spread_scenarios().is_empty())
    }

    /// Whether testpmd macswap runs on the pcap `label`: some scenario
    /// that runs compares with it.
    pub fn macswap_on(&self, label: &str) -> bool {
        if let Some(size) = label.strip_prefix(V6_PREFIX) {
            return self.v6_scenarios().iter().any(|s| s.1 == size);
        }
        if label.contains('@') {
            return self.spread_wanted().is_some_and(|s| s.0 == label);
        }
        let nc = if self.quick {
            self.sizes[0].0
        } else {
            "newconn"
        };
        let sized = self.sizes.iter().any(|s| s.0 == label);
        let of_size = sized
            && self.methods.iter().any(|&m| {
                self.wants(&format!("{} {label}", mname(m)))
                    || self.wants(&format!("DR-2w {label}"))
            })
            || (label == self.sizes[0].0
                && !self.only.is_empty()
                && (self.wants(&format!("DR-marks {label}"))
                    || self.wants(&format!("DR-fwm {label}"))));
        of_size
            || self.fnat_sizes().contains(&label)
            || (label == self.exception_size.0 && self.wants("exception"))
            || (Some(label) == self.sizes.last().map(|s| s.0)
                && (self.wants("metrics") || self.wants("checkpoint") || self.wants("handoff")))
            || (label == nc
                && (self.wants("newconn")
                    || self.wants("synproxy")
                    || (!self.only.is_empty()
                        && (self.wants("newconn-fwm") || self.wants("newconn-marks")))))
    }
}

/// The prefix of the IPv6 pcaps' labels.
const V6_PREFIX: &str = "v6-";

/// The label of the IPv6 pcap of size `size` (`v6-1k`).
pub fn v6_label(size: &str) -> String {
    format!("{V6_PREFIX}{size}")
}

/// The name of the IPv6 scenario of method `m` at size `size` (`DR6 1k`).
pub fn v6_scenario(m: Method, size: &str) -> String {
    format!("{}6 {size}", mname(m))
}

#[cfg(test)]
mod tests {
    use super::Plan;
    use dirigo_core::lb::spec::Method;

    #[test]
    fn only_selects_scenarios_and_the_pcaps_they_compare_with() {
        let mut p = Plan::new(false);
        assert!(p.wants("DR 1M") && p.wants("newconn") && p.wants("micro"));
        assert!(["1k", "100k", "1M", "newconn"]
            .iter()
            .all(|l| p.macswap_on(l)));
        p.only = vec!["dr 1m".into(), "nat".into()];
        assert!(p.wants("DR 1M") && p.wants("NAT 1k") && p.wants("NAT 1M"));
        assert!(!p.wants("DR 1k") && !p.wants("TUN 1M") && !p.wants("DR-2w 1k"));
        assert!(!p.wants("newconn") && !p.wants("micro") && !p.wants("exception"));
        assert!(p.macswap_on("1k") && p.macswap_on("1M") && !p.macswap_on("newconn"));
        p.only = vec!["synproxy".into()];
        assert!(p.macswap_on("newconn") && !p.macswap_on("1k"));
        p.only = vec!["exception".into()];
        assert!(p.macswap_on("100k") && !p.macswap_on("1M"));
        p.only = vec!["dr-2w 1k".into()];
        assert!(p.wants("DR-2w 1k") && !p.wants("DR 1k") && p.macswap_on("1k"));
        assert!(!p.macswap_on("v6-1k"));
        // IPv6: a method's "6" selects its sizes, and the IPv6 pcaps only
        p.only = vec!["nat6".into()];
        assert!(p.wants("NAT6 1k") && p.wants("NAT6 1M") && !p.wants("NAT 1k"));
        assert!(p.macswap_on("v6-1k") && p.macswap_on("v6-1M") && !p.macswap_on("1k"));
        assert_eq!(p.v6_scenarios().len(), 2);
        p.only = vec!["dr6 1m".into()];
        assert!(!p.macswap_on("v6-1k") && p.macswap_on("v6-1M"));
        p.only.clear();
        assert_eq!(p.v6_scenarios().len(), 6);
        assert!(p.macswap_on("v6-1k") && p.macswap_on("v6-1M"));
    }

    #[test]
    fn the_table_in_cache_scenario_has_the_largest_pcap_and_the_fewest_flows() {
        let mut p = Plan::new(false);
        assert_eq!(p.spread(), Some(("1k@1M".to_string(), 1000, 2_000_000)));
        let names: Vec<String> = p.spread_scenarios().into_iter().map(|s| s.0).collect();
        assert_eq!(names, ["DR 1k@1M", "TUN 1k@1M", "NAT 1k@1M"]);
        assert!(p.macswap_on("1k@1M"));
        // selected by its name or by its method, not by the plain sizes' names
        p.only = vec!["nat 1k@1m".into()];
        assert_eq!(
            p.spread_scenarios(),
            [("NAT 1k@1M".to_string(), Method::Nat)]
        );
        assert!(p.spread_wanted().is_some() && p.macswap_on("1k@1M"));
        assert!(!p.macswap_on("1k") && !p.macswap_on("1M"));
        p.only = vec!["dr".into()];
        assert_eq!(p.spread_scenarios().len(), 1);
        p.only = vec!["dr 1k".into(), "dr 1m".into()];
        assert!(p.spread_wanted().is_none() && !p.macswap_on("1k@1M"));
        // none in the quick plan (one size)
        assert_eq!(Plan::new(true).spread(), None);
    }
}
