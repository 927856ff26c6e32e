//! The exposition's building blocks: families of constant series of one
//! type ([`Out`] registers them), a histogram from counts already binned,
//! and a series' labels.

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// A series' labels, in order.
pub type Labels = Vec<(&'static str, String)>;

/// A family of constant series of one type, in the order given.
#[derive(Debug)]
pub(super) struct Family<M> {
    pub(super) kind: MetricType,
    pub(super) rows: Vec<(Labels, M)>,
}

impl<M: EncodeMetric> EncodeMetric for Family<M> {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (labels, m) in &self.rows {
            m.encode(encoder.encode_family(labels)?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        self.kind
    }

    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// A histogram from counts already binned: `(upper bound, count)` per
/// bucket (not cumulative; the encoder adds them up and appends +Inf).
#[derive(Debug)]
pub(super) struct ConstHistogram {
    pub(super) sum: f64,
    pub(super) count: u64,
    pub(super) buckets: Vec<(f64, u64)>,
}

impl EncodeMetric for ConstHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_histogram::<NoLabelSet>(self.sum, self.count, &self.buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// Registers families on a registry.
pub(super) struct Out<'a>(pub(super) &'a mut Registry);

impl Out<'_> {
    pub(super) fn counters<N>(&mut self, name: &str, help: &str, rows: Vec<(Labels, N)>)
    where
        ConstCounter<N>: EncodeMetric + std::fmt::Debug + Send + Sync + 'static,
    {
        let rows = rows
            .into_iter()
            .map(|(l, v)| (l, ConstCounter::new(v)))
            .collect();
        self.0.register(
            name,
            help,
            Family {
                kind: MetricType::Counter,
                rows,
            },
        );
    }

    pub(super) fn gauges<N>(&mut self, name: &str, help: &str, rows: Vec<(Labels, N)>)
    where
        ConstGauge<N>: EncodeMetric + std::fmt::Debug + Send + Sync + 'static,
    {
        let rows = rows
            .into_iter()
            .map(|(l, v)| (l, ConstGauge::new(v)))
            .collect();
        self.0.register(
            name,
            help,
            Family {
                kind: MetricType::Gauge,
                rows,
            },
        );
    }

    pub(super) fn counter(&mut self, name: &str, help: &str, v: u64) {
        self.counters(name, help, vec![(Vec::new(), v)]);
    }
}
