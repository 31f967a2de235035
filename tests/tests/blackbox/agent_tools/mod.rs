//! Every agent tool and its error paths, over real HTTP, on every backend.

mod catalogs;
mod consume;
mod handshake;
mod output_schemas;
mod render;
mod sessions;
mod support;
mod updates;
