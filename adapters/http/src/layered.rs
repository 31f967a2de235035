//! A middleware's call as a plain function: it decides from the request's head, then either
//! answers at once or hands back the inner endpoint's future as it is.
//!
//! Written as `async fn call`, a layer keeps its `Request` argument (472 bytes) in its future
//! for as long as the inner future runs, even after moving it on: the chain in front of every
//! route held six of them, each boxing of the chain copied them, and a burst of held long-polls
//! left the allocator that much larger per request in flight (issue 18, BENCHMARKS.md).

use std::future::Future;

use futures_util::TryFutureExt;
use futures_util::future::{Either, Ready, ready};
use poem::{Endpoint, IntoResponse, Request, Response};

/// What a layer's `call` returns: its own answer now, or `F`, the inner endpoint's future.
pub type Layered<F> = Either<Ready<poem::Result<Response>>, F>;

/// The layer's own answer.
pub fn answer_now<F>(response: Response) -> Layered<F> {
    Either::Left(ready(Ok(response)))
}

/// `inner`'s answer to `req`, the request moved into its future and held nowhere else.
pub fn pass_on<E: Endpoint>(
    inner: &E,
    req: Request,
) -> Layered<impl Future<Output = poem::Result<Response>> + Send + '_> {
    Either::Right(answer_of(inner, req))
}

/// [`pass_on`]'s future alone, for a layer whose own answers are not ready at once.
pub fn answer_of<E: Endpoint>(inner: &E, req: Request) -> impl Future<Output = poem::Result<Response>> + Send + '_ {
    inner.call(req).map_ok(IntoResponse::into_response)
}

/// poem's `.data(value)` as a layer that holds no request: `value` is put in the request's
/// extensions, for `Data<&T>` to read, and the request moved on.
pub struct Provide<T>(pub T);

impl<E: Endpoint, T: Clone + Send + Sync + 'static> poem::Middleware<E> for Provide<T> {
    type Output = Provided<E, T>;

    fn transform(&self, inner: E) -> Self::Output {
        Provided {
            inner,
            value: self.0.clone(),
        }
    }
}

pub struct Provided<E, T> {
    inner: E,
    value: T,
}

impl<E: Endpoint, T: Clone + Send + Sync + 'static> Endpoint for Provided<E, T> {
    type Output = E::Output;

    fn call(&self, mut req: Request) -> impl Future<Output = poem::Result<E::Output>> + Send {
        req.extensions_mut().insert(self.value.clone());
        self.inner.call(req)
    }
}
