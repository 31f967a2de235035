//! `[live] enabled = false`: the live channel's routes (`/ws`, `/_svc/poll/...`) answer 404, as
//! if they were never mounted.

use poem::error::NotFoundError;
use poem::{Endpoint, Middleware, Request, Response};

/// Replaces a route's endpoint with a 404.
pub struct LiveOff;

impl<E: Endpoint> Middleware<E> for LiveOff {
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
