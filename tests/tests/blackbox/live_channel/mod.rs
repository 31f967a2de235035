//! The live channel `/ws` over a real WebSocket: auth, every frame type, dedup, replay, wake-ups.

mod actions;
mod frames;
mod large_events;
mod parsed_budget;
mod poll_bounds;
mod polling;
mod replay;
mod subscribe;
mod support;
mod updates;
