//! `dirigoctl mark add/del/list`: the mark rules of fwmark services,
//! changed at runtime through the same commit as the service table (a
//! new snapshot, saved in the state file).

use super::ctl::{lock, Ctl};
use crate::lb::mark::MarkRule;
use dirigo_proto::proto::{CtlError, Response};

impl Ctl {
    /// Add `rule`: refused when it is invalid or overlaps another.
    pub(super) fn mark_add(&self, rule: MarkRule) -> Result<Response, CtlError> {
        let mut st = lock(&self.state);
        let mut marks = st.marks.clone();
        marks.push(rule);
        st.commit_marks(&self.shared, marks)?;
        Ok(Response::Done)
    }

    /// Delete `rule` (as listed).
    pub(super) fn mark_del(&self, rule: MarkRule) -> Result<Response, CtlError> {
        let mut st = lock(&self.state);
        let mut marks = st.marks.clone();
        let Some(i) = marks.iter().position(|r| *r == rule) else {
            return Err(CtlError::invalid(format!(
                "no mark rule {rule} (dirigoctl mark list shows them)"
            )));
        };
        marks.remove(i);
        st.commit_marks(&self.shared, marks)?;
        Ok(Response::Done)
    }
}
