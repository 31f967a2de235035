//! Routes switched off by configuration answer 404 for every method, as if never mounted: the
//! live channel's (`[live] enabled = false`), the playground's, and OAuth's (`[oauth] enabled =
//! false`, where Document 2 has every `/oauth/*` and well-known path answer 404; a method the
//! router has no operation for would otherwise answer 405).

use poem::error::NotFoundError;
use poem::{Endpoint, Middleware, Request, Response};

/// Replaces a route's endpoint with a 404.
pub struct Unmounted;

impl<E: Endpoint> Middleware<E> for Unmounted {
    type Output = NotMounted;

    fn transform(&self, _endpoint: E) -> Self::Output {
        NotMounted
    }
}

pub struct NotMounted;

impl Endpoint for NotMounted {
    type Output = Response;

    async fn call(&self, _req: Request) -> poem::Result<Response> {
        Err(NotFoundError.into())
    }
}
