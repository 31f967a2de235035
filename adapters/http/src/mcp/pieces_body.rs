//! A response body written from shared pieces: a `resources/read` answer is a cached template
//! (the card document, the mount runtime: about 300 KB) with a few bytes filled in per request.
//! Handing hyper the pieces (`Bytes` clones of the cached ones, a reference count each) with
//! their exact length lets it write them with one vectored write and a `Content-Length`, instead
//! of copying the whole answer into one string per request (issue 18).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

pub struct PiecesBody {
    pieces: VecDeque<Bytes>,
    remaining: u64,
}

impl PiecesBody {
    pub fn new(pieces: impl IntoIterator<Item = Bytes>) -> Self {
        let pieces: VecDeque<Bytes> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        let remaining = pieces.iter().map(|p| p.len() as u64).sum();
        Self { pieces, remaining }
    }

    /// As poem's body type.
    pub fn into_poem(self) -> poem::Body {
        let boxed = http_body_util::BodyExt::boxed(http_body_util::BodyExt::map_err(
            self,
            |never: Infallible| -> std::io::Error { match never {} },
        ));
        poem::Body::from(boxed)
    }
}

impl Body for PiecesBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self.pieces.pop_front();
        if let Some(piece) = &next {
            self.remaining -= piece.len() as u64;
        }
        Poll::Ready(next.map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_pieces_are_the_body_in_order_with_their_length() {
        let body = PiecesBody::new([Bytes::from_static(b"{\"a\":"), Bytes::new(), Bytes::from("1}")]);
        assert_eq!(body.size_hint().exact(), Some(7));
        let bytes = body.into_poem().into_bytes().await.unwrap();
        assert_eq!(&bytes[..], b"{\"a\":1}");
    }
}
