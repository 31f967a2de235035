//! The polling GET's answer as a body that holds the GET's place in flight until the connection
//! has taken the answer's bytes, not merely been handed them.
//!
//! hyper's HTTP/2 server pulls a body's next chunk only once the stream's window has taken the
//! chunk before it (`PipeToSendStream` waits for send capacity while a chunk is buffered), and
//! its HTTP/1.1 server only while its write buffer has room. Given in [`CHUNK_BYTES`] chunks, an
//! answer is pulled no faster than the client takes it: a client that grants its window a byte at
//! a time keeps its place for as long as it trickles, and the server holds its answer's bytes
//! only while the place is held, and at most its last two chunks once it is freed (the last,
//! pulled as the one before went to the send buffer). Given whole, the answer would be handed to
//! the connection at the first byte of window and its place freed while up to 1 MiB still waited
//! in the send buffer.
//!
//! Each chunk is a copy of its own: a slice of the answer would keep the whole answer's
//! allocation alive in the send buffer after the place is freed. The exact length goes with the
//! body, so hyper sends `Content-Length` rather than chunking over HTTP/1.1.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use super::polling_gates::PollInFlight;

/// Bytes the connection is given at a time: one HTTP/2 DATA frame of the default size.
pub const CHUNK_BYTES: usize = 16 * 1024;

/// An answer's bytes not yet given to the connection, and the place of the GET they answer.
pub struct PollBody {
    answer: Vec<u8>,
    given: usize,
    /// Dropped with the answer's last chunk, or with the body (the stream was reset, the
    /// connection closed).
    in_flight: Option<PollInFlight>,
}

impl PollBody {
    pub fn new(answer: Vec<u8>, in_flight: PollInFlight) -> Self {
        Self {
            answer,
            given: 0,
            in_flight: Some(in_flight),
        }
    }

    /// As poem's body type.
    pub fn into_poem(self) -> poem::Body {
        let boxed = http_body_util::BodyExt::boxed(http_body_util::BodyExt::map_err(
            self,
            |never: Infallible| -> std::io::Error { match never {} },
        ));
        poem::Body::from(boxed)
    }

    fn remaining(&self) -> usize {
        self.answer.len() - self.given
    }
}

impl Body for PollBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if this.remaining() == 0 {
            return Poll::Ready(None);
        }
        let end = (this.given + CHUNK_BYTES).min(this.answer.len());
        let chunk = Bytes::copy_from_slice(&this.answer[this.given..end]);
        this.given = end;
        if this.remaining() == 0 {
            // Taken whole: nothing of it stays past its place.
            (this.answer, this.given) = (Vec::new(), 0);
            this.in_flight = None;
        }
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining() == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::polling_gates::{POLLS_IN_FLIGHT_PER_SESSION, PollRefused, PollingGates};

    /// Takes `gates`' places of `s` until one is refused: how many were free.
    fn free_places(gates: &PollingGates) -> usize {
        let held: Vec<_> = std::iter::from_fn(|| gates.admit_poll("s").ok()).collect();
        assert_eq!(gates.admit_poll("s").err(), Some(PollRefused::TooMany));
        held.len()
    }

    async fn next_chunk(body: &mut PollBody) -> Option<Bytes> {
        let frame = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await;
        frame.map(|frame| frame.unwrap().into_data().unwrap())
    }

    #[tokio::test]
    async fn the_answer_goes_in_chunks_and_its_place_is_held_until_the_last_is_taken() {
        let gates = PollingGates::default();
        let answer: Vec<u8> = (0..2 * CHUNK_BYTES + 5).map(|i| (i % 251) as u8).collect();
        let mut body = PollBody::new(answer.clone(), gates.admit_poll("s").unwrap());
        assert_eq!(body.size_hint().exact(), Some(answer.len() as u64));

        let mut taken = vec![];
        for _ in 0..2 {
            taken.extend_from_slice(&next_chunk(&mut body).await.unwrap());
            assert!(!body.is_end_stream());
            assert_eq!(
                free_places(&gates),
                POLLS_IN_FLIGHT_PER_SESSION - 1,
                "the place is held"
            );
        }
        let last = next_chunk(&mut body).await.unwrap();
        assert_eq!(last.len(), 5);
        taken.extend_from_slice(&last);
        assert!(body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(0));
        assert_eq!(
            free_places(&gates),
            POLLS_IN_FLIGHT_PER_SESSION,
            "the last chunk frees it"
        );
        assert_eq!(next_chunk(&mut body).await, None);
        assert_eq!(taken, answer, "the same bytes in the same order");
    }

    #[tokio::test]
    async fn a_body_dropped_before_its_end_frees_its_place() {
        let gates = PollingGates::default();
        let mut body = PollBody::new(vec![b' '; 3 * CHUNK_BYTES], gates.admit_poll("s").unwrap());
        next_chunk(&mut body).await.unwrap();
        drop(body);
        assert_eq!(free_places(&gates), POLLS_IN_FLIGHT_PER_SESSION);
    }
}
