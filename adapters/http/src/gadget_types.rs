//! `GET /_svc/gadgets.d.ts`: the TypeScript declarations of `@svc/gadgets` (hooks and kit
//! components), the file the mount runtime's exports are checked against
//! (`adapters/mount/gadgets.d.ts`). A generator or a person writing a card types it with this.

use poem::{IntoResponse, Response, handler};

pub const GADGETS_DTS: &str = include_str!("../../mount/gadgets.d.ts");

#[handler]
pub async fn serve() -> Response {
    GADGETS_DTS
        .with_content_type("application/typescript; charset=utf-8")
        .with_header("cache-control", "no-cache")
        .with_header("access-control-allow-origin", "*")
        .into_response()
}
