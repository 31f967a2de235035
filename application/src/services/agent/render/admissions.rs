//! The windows a render was counted in before it ran: the app's per-minute rate (hosted) and
//! the public demo's generations per address. A render turned away after that, before any work
//! (a later refusal, a full queue, its handshake taken by another render), is given back to
//! each, so only renders that happened count.

use super::super::app_render_limit::{AppAdmission, AppRenderLimit};
use super::super::generation_limit::{Admission, GenerationLimit};

#[derive(Default)]
pub(super) struct Admissions<'a> {
    pub(super) app: Option<(&'a AppRenderLimit, AppAdmission)>,
    pub(super) demo: Option<(&'a GenerationLimit, Admission)>,
}

impl Admissions<'_> {
    /// The render did not happen: uncounted everywhere it was counted.
    pub(super) async fn give_back(&self) {
        if let Some((limit, admission)) = &self.demo {
            limit.give_back(admission);
        }
        if let Some((limit, admission)) = &self.app {
            limit.give_back(admission).await;
        }
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests;
