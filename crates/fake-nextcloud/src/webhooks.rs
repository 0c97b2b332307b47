//! webhook_listeners: registrations, the event queue and delivery.

use crate::fixture::Fixture;
use crate::storage::FileEvent;
use serde::Deserialize;

/// When queued events are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    Immediate,
    OnDemand,
}

#[derive(Debug)]
pub struct Webhooks {}

impl Webhooks {
    pub fn from_fixture(fixture: &Fixture, problems: &mut Vec<String>) -> Webhooks {
        let _ = (fixture, problems);
        Webhooks {}
    }

    pub fn enqueue_file_event(&mut self, event: &FileEvent, display_name: &str) {
        let _ = (event, display_name);
    }

    pub fn has_pending(&self) -> bool {
        false
    }
}

pub async fn deliver_forever(shared: crate::AppState, mut stopped: tokio::sync::watch::Receiver<bool>) {
    let _ = shared;
    let _ = stopped.wait_for(|stop| *stop).await;
}
