//! The context engine: what of a conversation the model is shown.
//!
//! Rung 1, every step: stale results of data tools are cleared ([`prune`]).
//! Rung 2, at about half the window: a recall-first summary of the older
//! turns, stored once and reloaded ([`summary`]). There is no rung 3: with
//! this many tools in one domain, sub-agents cost more coordination than
//! they save.

pub mod prune;
pub mod summary;
