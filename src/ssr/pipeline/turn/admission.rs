//! Admission: an answer waits for its turn under the server's limits, fair between
//! owners, and the status line shows its place while it waits.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::Turn;
use crate::model::{Mode, Status};
use crate::ssr::llm::reply::Halted;

impl Turn {
    /// Waits for the answer's turn under the server's limits (`CITED_MAX_RESEARCH` for
    /// Research, then `CITED_MAX_ANSWERS`), telling the status line its place while it
    /// waits. The slots are held until they are dropped.
    pub async fn admit(&self) -> Result<Vec<crate::ssr::limits::Slot>, Halted> {
        let limits = Arc::clone(&self.state.limits);
        let mut gates = Vec::new();
        if self.input.mode == Mode::Research {
            gates.push(Arc::clone(&limits.research));
        }
        gates.push(Arc::clone(&limits.answers));
        let mut slots = Vec::new();
        let mut queued = false;
        // Fair between owners: a user's many sessions and API clients count as one.
        let owner = self.session.owner();
        for gate in gates {
            if let Some(slot) = gate.try_enter(&owner) {
                slots.push(slot);
                continue;
            }
            queued = true;
            let (places, mut heard) = mpsc::unbounded_channel();
            let enter = gate.enter(&owner, move |place| {
                let _ = places.send(place);
            });
            tokio::pin!(enter);
            loop {
                tokio::select! {
                    biased;
                    () = self.halted() => return Err(Halted),
                    slot = &mut enter => {
                        slots.push(slot);
                        break;
                    }
                    Some(place) = heard.recv() => {
                        let position = u32::try_from(place).unwrap_or(u32::MAX);
                        self.status(Some(Status::Queued { position })).await?;
                    }
                }
            }
        }
        if queued {
            self.status(None).await?;
        }
        Ok(slots)
    }
}
