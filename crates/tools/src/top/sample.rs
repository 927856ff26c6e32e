//! Data collection: one [`Sample`] is the daemon's counters at one moment
//! (three requests on the control socket); the [`Poller`] takes samples
//! and reconnects after the daemon went away.

use dirigo_proto::client::{Client, ClientError};
use dirigo_proto::proto::{ListOpts, Request, Response};
use dirigo_proto::view::{DropCount, LcoreInfo, ServiceList};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The daemon's cumulative counters at one moment.
#[derive(Clone, Debug)]
pub struct Sample {
    /// When the services' counters were read (rates divide by the time
    /// between two of these).
    pub at: Instant,
    /// Services and real servers with their counters (`-L --stats`), and
    /// the connection table size per worker.
    pub list: ServiceList,
    /// Per-worker counters.
    pub lcores: Vec<LcoreInfo>,
    /// Drop counters by reason.
    pub drops: Vec<DropCount>,
}

fn unexpected(what: &str, r: &Response) -> ClientError {
    ClientError::Protocol(format!("unexpected answer to {what}: {r:?}"))
}

impl Sample {
    /// Ask the daemon for a sample: `list` (with counters), `lcores` and
    /// `drops`.
    pub fn collect(client: &mut Client) -> Result<Sample, ClientError> {
        let list = match client.call(Request::List(ListOpts {
            service: None,
            stats: true,
            rate: false,
        }))? {
            Response::Services(l) => l,
            r => return Err(unexpected("list", &r)),
        };
        let at = Instant::now();
        let lcores = match client.call(Request::Lcores)? {
            Response::Lcores(l) => l,
            r => return Err(unexpected("lcores", &r)),
        };
        let drops = match client.call(Request::Drops)? {
            Response::Drops(d) => d,
            r => return Err(unexpected("drops", &r)),
        };
        Ok(Sample {
            at,
            list,
            lcores,
            drops,
        })
    }
}

/// Takes samples from the daemon at `path`, connecting on the first poll
/// and again after any failure (the daemon restarted, the socket closed).
pub struct Poller {
    path: PathBuf,
    timeout: Duration,
    client: Option<Client>,
}

impl Poller {
    /// A poller for the socket at `path`; each read and write waits at
    /// most `timeout` (at least 100 ms).
    pub fn new(path: PathBuf, timeout: Duration) -> Poller {
        Poller {
            path,
            timeout: timeout.max(Duration::from_millis(100)),
            client: None,
        }
    }

    /// One sample, or why there is none (the connection is then dropped
    /// and the next poll connects again).
    pub fn poll(&mut self) -> Result<Sample, String> {
        if self.client.is_none() {
            let c = Client::connect_timeout(&self.path, self.timeout)
                .map_err(|e| format!("cannot connect to dirigo: {e}"))?;
            self.client = Some(c);
        }
        let Some(c) = self.client.as_mut() else {
            return Err("not connected".into());
        };
        Sample::collect(c).map_err(|e| {
            self.client = None;
            match e {
                ClientError::Server(e) => e.msg,
                e => e.to_string(),
            }
        })
    }
}
