//! A response body written from shared pieces: a `resources/read` answer is a cached template
//! (the card document, the mount runtime: about 100 KB) with a few bytes filled in per request.
//! Handing hyper the long pieces (`Bytes` clones of the cached ones, a reference count each) with
//! their exact length lets it write them with one vectored write and a `Content-Length`, instead
//! of copying the whole answer into one string per request; the short ones are copied together,
//! since each piece costs a frame through every layer of the body (issue 18).

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

/// Pieces shorter than this are copied together with their short neighbours into one: each
/// piece is one frame through every layer of the body and one `iovec` (a gzipped card document
/// is eleven pieces, of which two are longer).
const SHORT_PIECE: usize = 4096;

impl PiecesBody {
    pub fn new(pieces: impl IntoIterator<Item = Bytes>) -> Self {
        let pieces = joined_short_runs(pieces);
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

/// The pieces in order, each run of short ones (and empty ones dropped) copied into one.
fn joined_short_runs(pieces: impl IntoIterator<Item = Bytes>) -> VecDeque<Bytes> {
    let mut joined = VecDeque::new();
    let mut run: Vec<Bytes> = Vec::new();
    for piece in pieces {
        if piece.len() >= SHORT_PIECE {
            join_run(&mut run, &mut joined);
            joined.push_back(piece);
        } else if !piece.is_empty() {
            run.push(piece);
        }
    }
    join_run(&mut run, &mut joined);
    joined
}

/// Appends `run` to `joined` as one piece (a single piece as it is), leaving `run` empty.
fn join_run(run: &mut Vec<Bytes>, joined: &mut VecDeque<Bytes>) {
    if run.len() <= 1 {
        joined.extend(run.pop());
        return;
    }
    let mut all = Vec::with_capacity(run.iter().map(Bytes::len).sum());
    for piece in run.drain(..) {
        all.extend_from_slice(&piece);
    }
    joined.push_back(Bytes::from(all));
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

    #[tokio::test]
    async fn short_pieces_travel_together_and_long_ones_alone() {
        let long = Bytes::from(vec![b'x'; SHORT_PIECE]);
        let pieces = [
            Bytes::from_static(b"a"),
            Bytes::from_static(b"b"),
            long.clone(),
            Bytes::from_static(b"c"),
            Bytes::new(),
            long.clone(),
            long.clone(),
            Bytes::from_static(b"d"),
        ];
        let mut body = PiecesBody::new(pieces.clone());
        assert_eq!(body.size_hint().exact(), Some(4 + 3 * SHORT_PIECE as u64));
        let mut frames = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            frames.push(frame.unwrap().into_data().unwrap());
        }
        let lengths: Vec<usize> = frames.iter().map(Bytes::len).collect();
        assert_eq!(lengths, [2, SHORT_PIECE, 1, SHORT_PIECE, SHORT_PIECE, 1]);
        assert_eq!(frames.concat(), pieces.concat(), "the same bytes in the same order");
        // A long piece is handed on as it is, not copied.
        assert_eq!(frames[1].as_ptr(), long.as_ptr());
    }
}
