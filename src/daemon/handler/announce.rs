//! `dirigoctl vips` and the control loop's announce step: reconcile the
//! VIP routes with the health state's decision, and withdraw them all at
//! SIGTERM.

use super::ctl::{lock, Ctl};
use crate::clock::now_ns;
use crate::daemon::announce;
use dirigo_proto::proto::Response;

impl Ctl {
    pub(super) fn vips(&self) -> Response {
        let wants = announce::wants(&lock(&self.state));
        let a = lock(&self.announce);
        Response::Vips(announce::report(a.as_ref(), &wants, now_ns()))
    }

    /// The control loop's announce step: reconcile when the snapshot's
    /// epoch changed, a failure's retry is due or the routes are due a
    /// check. The netlink requests run without the state's lock.
    pub fn announce_tick(&self) {
        let mut a = lock(&self.announce);
        let Some(an) = a.as_mut() else {
            return;
        };
        let now = now_ns();
        if an.hold.is_some() {
            let received = self.sync.as_ref().map_or(0, |(_, s)| s.conns_received());
            let installed = self
                .shared
                .workers
                .iter()
                .all(|w| w.sync.as_ref().is_none_or(|q| q.inbound.is_empty()));
            an.hold_tick(received, installed, now);
        }
        let epoch = lock(&self.state).epoch;
        if an.draining || !an.due(epoch, now) {
            return;
        }
        let wants = announce::wants(&lock(&self.state));
        an.reconcile(&wants, epoch, now);
    }

    /// SIGTERM: withdraw every VIP route now; the drain time to wait
    /// (zero without `[announce]`).
    pub fn announce_drain(&self) -> std::time::Duration {
        let mut a = lock(&self.announce);
        let Some(an) = a.as_mut() else {
            return std::time::Duration::ZERO;
        };
        let wants = announce::wants(&lock(&self.state));
        an.drain(&wants, now_ns());
        an.cfg.drain
    }
}
