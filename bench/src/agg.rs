//! Collecting one value per run under a key, then median and spread.

use std::collections::BTreeMap;

/// Values per key, one per run.
#[derive(Default, Debug)]
pub struct Agg {
    m: BTreeMap<String, Vec<f64>>,
}

impl Agg {
    /// Record `v` under `key`.
    pub fn push(&mut self, key: &str, v: f64) {
        self.m.entry(key.to_string()).or_default().push(v);
    }

    /// The values of `key` (empty when never recorded).
    pub fn values(&self, key: &str) -> &[f64] {
        self.m.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Median of `key`, NaN when absent.
    pub fn med(&self, key: &str) -> f64 {
        let mut v = self.values(key).to_vec();
        if v.is_empty() {
            return f64::NAN;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }

    /// Spread of `key`: (max - min) / median, in percent (0 for one run).
    pub fn spread_pct(&self, key: &str) -> f64 {
        let v = self.values(key);
        let med = self.med(key);
        if v.len() < 2 || med == 0.0 || med.is_nan() {
            return 0.0;
        }
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (hi - lo) / med * 100.0
    }

    /// Min and max of `key`.
    pub fn range(&self, key: &str) -> (f64, f64) {
        let v = self.values(key);
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        let mut a = Agg::default();
        for v in [3.0, 1.0, 2.0] {
            a.push("k", v);
        }
        assert_eq!(a.med("k"), 2.0);
        assert_eq!(a.spread_pct("k"), 100.0);
        assert_eq!(a.range("k"), (1.0, 3.0));
        a.push("k", 4.0);
        assert_eq!(a.med("k"), 2.5);
        assert!(a.med("none").is_nan());
    }
}
