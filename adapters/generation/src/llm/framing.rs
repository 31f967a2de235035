//! Bounded, incremental framing of a streamed reply body, shared by the SSE wires (OpenAI,
//! Anthropic, Gemini) and the NDJSON one (Ollama).
//!
//! Every body byte is scanned once: a chunk is appended to a buffer and searched for line ends
//! from where the last search stopped, never from the start. A line or an event longer than
//! [`MAX_FRAME_BYTES`], or a reply longer than [`max_reply_bytes`], ends the stream with a
//! `Malformed` error. The stream hands the thread back to the runtime after [`BYTES_PER_POLL`]
//! body bytes even while more are ready, so the attempt deadline and the idle timeout can fire
//! while a provider floods us (`docs/generation.md`, "Limits of a reply").

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::stream::{BoxStream, Stream, StreamExt};

use super::errors::{ProviderError, ProviderErrorKind};

/// The longest line, SSE event `data` or NDJSON object a provider may send. A delta frame is a
/// few hundred bytes; 1 MiB is far above any legitimate one.
pub const MAX_FRAME_BYTES: usize = 1 << 20;
/// Body bytes allowed per output token of the request: providers send at most one frame per
/// token, and a frame's envelope is a few hundred bytes (Gemini's, the largest, about 400).
pub const REPLY_BYTES_PER_TOKEN: u64 = 1024;
/// The least reply size allowed, whatever the token budget.
pub const MIN_REPLY_BYTES: u64 = 16 << 20;
/// Body bytes decoded in one poll before the stream yields to the runtime.
pub const BYTES_PER_POLL: usize = 256 << 10;

/// The most output tokens asked of a provider (`generation.max_output_tokens` is refused above
/// it at start): above the largest output budget a current model offers (128,000), and it bounds
/// a reply at 128 MiB of body.
pub const MAX_OUTPUT_TOKENS: u32 = 131_072;

/// The body bytes one attempt may read: 1 KiB per output token, at least 16 MiB (the default
/// `max_output_tokens = 8192` allows 16 MiB), at most what [`MAX_OUTPUT_TOKENS`] allows.
pub fn max_reply_bytes(max_output_tokens: u32) -> u64 {
    (u64::from(max_output_tokens.min(MAX_OUTPUT_TOKENS)) * REPLY_BYTES_PER_TOKEN).max(MIN_REPLY_BYTES)
}

/// Why a body could not be framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// A line or an event is longer than the frame bound.
    TooLong,
    /// A line is not UTF-8.
    NotUtf8,
}

impl FrameError {
    fn into_provider_error(self, provider: &str) -> ProviderError {
        let message = match self {
            Self::TooLong => format!("a stream frame is longer than {MAX_FRAME_BYTES} bytes"),
            Self::NotUtf8 => "a stream frame is not UTF-8".to_owned(),
        };
        ProviderError::new(ProviderErrorKind::Malformed, provider, message)
    }
}

/// Lines of a body fed in chunks, without their terminators.
pub struct Lines {
    buffer: Vec<u8>,
    /// Where the next line starts.
    start: usize,
    /// Up to where `buffer` holds no line end.
    scanned: usize,
    /// The last line ended with CR: a LF right after it belongs to it (CRLF split in two chunks).
    after_cr: bool,
    /// SSE ends lines with CR, LF or CRLF; NDJSON with LF only.
    cr_ends_line: bool,
    max_line: usize,
    /// Bytes searched for line ends so far (each body byte once).
    bytes_scanned: u64,
}

impl Lines {
    pub fn new(cr_ends_line: bool, max_line: usize) -> Self {
        Self {
            buffer: Vec::new(),
            start: 0,
            scanned: 0,
            after_cr: false,
            cr_ends_line,
            max_line,
            bytes_scanned: 0,
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        // Drop the consumed prefix once it is at least as long as what is left: each byte is
        // moved a bounded number of times.
        if self.start > 0 && self.start >= self.buffer.len() - self.start {
            self.buffer.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        self.buffer.extend_from_slice(chunk);
    }

    /// The next complete line; `Ok(None)` until more bytes come.
    pub fn next_line(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        if self.after_cr && self.start < self.buffer.len() {
            self.after_cr = false;
            if self.buffer[self.start] == b'\n' {
                self.start += 1;
                self.scanned = self.scanned.max(self.start);
            }
        }
        let rest = &self.buffer[self.scanned..];
        let found = if self.cr_ends_line {
            memchr::memchr2(b'\n', b'\r', rest)
        } else {
            memchr::memchr(b'\n', rest)
        };
        match found {
            Some(offset) => {
                self.bytes_scanned += offset as u64 + 1;
                let end = self.scanned + offset;
                if end - self.start > self.max_line {
                    return Err(FrameError::TooLong);
                }
                let line = self.buffer[self.start..end].to_vec();
                self.after_cr = self.buffer[end] == b'\r';
                self.start = end + 1;
                self.scanned = self.start;
                Ok(Some(line))
            }
            None => {
                self.bytes_scanned += rest.len() as u64;
                self.scanned = self.buffer.len();
                if self.scanned - self.start > self.max_line {
                    return Err(FrameError::TooLong);
                }
                Ok(None)
            }
        }
    }

    /// The unterminated last line, once the body ended.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        let rest = self.buffer.split_off(self.start);
        self.buffer.clear();
        self.start = 0;
        self.scanned = 0;
        (!rest.is_empty()).then_some(rest)
    }

    #[cfg(test)]
    pub fn bytes_scanned(&self) -> u64 {
        self.bytes_scanned
    }
}

/// Turns body chunks into frames.
pub trait Decoder: Send + Unpin + 'static {
    fn feed(&mut self, chunk: &[u8]);
    /// The next complete frame; `Ok(None)` until more bytes come.
    fn next_frame(&mut self) -> Result<Option<String>, FrameError>;
    /// What the end of the body completes.
    fn finish(&mut self) -> Result<Option<String>, FrameError>;
}

/// Server-sent events (the WHATWG `text/event-stream` line rules): each frame is one event's
/// `data`, its `data:` lines joined with LF. Comments, `event`, `id` and `retry` fields and events
/// whose data is empty are skipped (the standard dispatches an event of one empty `data:` line;
/// no provider sends one, and an empty text is no JSON); an event the body ends before its blank
/// line is dropped, as the standard says.
pub struct SseEvents {
    lines: Lines,
    data: String,
    first_line: bool,
}

impl SseEvents {
    pub fn new(max_frame: usize) -> Self {
        Self {
            lines: Lines::new(true, max_frame),
            data: String::new(),
            first_line: true,
        }
    }
}

impl Decoder for SseEvents {
    fn feed(&mut self, chunk: &[u8]) {
        self.lines.feed(chunk);
    }

    fn next_frame(&mut self) -> Result<Option<String>, FrameError> {
        while let Some(line) = self.lines.next_line()? {
            let owned = String::from_utf8(line).map_err(|_| FrameError::NotUtf8)?;
            let line = if std::mem::take(&mut self.first_line) {
                owned.strip_prefix('\u{feff}').unwrap_or(&owned)
            } else {
                &owned
            };
            if line.is_empty() {
                let mut data = std::mem::take(&mut self.data);
                data.pop();
                if !data.is_empty() {
                    return Ok(Some(data));
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            if field == "data" {
                if self.data.len() + value.len() + 1 > self.lines.max_line {
                    return Err(FrameError::TooLong);
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
        }
        Ok(None)
    }

    fn finish(&mut self) -> Result<Option<String>, FrameError> {
        Ok(None)
    }
}

/// Newline-delimited JSON: each frame is one non-blank line, trimmed.
pub struct JsonLines {
    lines: Lines,
}

impl JsonLines {
    pub fn new(max_frame: usize) -> Self {
        Self {
            lines: Lines::new(false, max_frame),
        }
    }

    fn decode(line: Vec<u8>) -> Result<Option<String>, FrameError> {
        let text = std::str::from_utf8(&line).map_err(|_| FrameError::NotUtf8)?.trim();
        Ok((!text.is_empty()).then(|| text.to_owned()))
    }
}

impl Decoder for JsonLines {
    fn feed(&mut self, chunk: &[u8]) {
        self.lines.feed(chunk);
    }

    fn next_frame(&mut self) -> Result<Option<String>, FrameError> {
        while let Some(line) = self.lines.next_line()? {
            if let Some(frame) = Self::decode(line)? {
                return Ok(Some(frame));
            }
        }
        Ok(None)
    }

    fn finish(&mut self) -> Result<Option<String>, FrameError> {
        match self.lines.finish() {
            Some(line) => Self::decode(line),
            None => Ok(None),
        }
    }
}

/// The frames of `response`'s body, at most `max_reply` body bytes of it.
pub fn frames<D: Decoder>(
    response: reqwest::Response,
    provider: &str,
    max_reply: u64,
    decoder: D,
) -> BoxStream<'static, Result<String, ProviderError>> {
    let name = provider.to_owned();
    let body = response
        .bytes_stream()
        .map(move |chunk| chunk.map_err(|e| ProviderError::from_transport(&name, &e)))
        .boxed();
    Framed::new(body, provider, max_reply, decoder).boxed()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Reading,
    /// The body ended; what the decoder holds is still given out.
    Ended,
    Done,
}

/// A body stream decoded into frames, bounded in size and in work per poll.
pub struct Framed<B, D> {
    body: B,
    decoder: D,
    provider: String,
    max_reply: u64,
    received: u64,
    /// Body bytes decoded since the stream last returned `Pending`.
    since_yield: usize,
    phase: Phase,
}

impl<B, D> Framed<B, D> {
    pub fn new(body: B, provider: &str, max_reply: u64, decoder: D) -> Self {
        Self {
            body,
            decoder,
            provider: provider.to_owned(),
            max_reply,
            received: 0,
            since_yield: 0,
            phase: Phase::Reading,
        }
    }

    fn fail(&mut self, error: ProviderError) -> Poll<Option<Result<String, ProviderError>>> {
        self.phase = Phase::Done;
        Poll::Ready(Some(Err(error)))
    }
}

impl<B, C, D> Stream for Framed<B, D>
where
    B: Stream<Item = Result<C, ProviderError>> + Unpin,
    C: AsRef<[u8]>,
    D: Decoder,
{
    type Item = Result<String, ProviderError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.phase == Phase::Done {
                return Poll::Ready(None);
            }
            match this.decoder.next_frame() {
                Ok(Some(frame)) => return Poll::Ready(Some(Ok(frame))),
                Ok(None) => {}
                Err(e) => return this.fail(e.into_provider_error(&this.provider)),
            }
            if this.phase == Phase::Ended {
                this.phase = Phase::Done;
                return match this.decoder.finish() {
                    Ok(frame) => Poll::Ready(frame.map(Ok)),
                    Err(e) => Poll::Ready(Some(Err(e.into_provider_error(&this.provider)))),
                };
            }
            if this.since_yield >= BYTES_PER_POLL {
                // More bytes may be ready, but the deadlines around this stream only fire
                // between polls: give the thread back and ask to be polled again.
                this.since_yield = 0;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            match this.body.poll_next_unpin(cx) {
                Poll::Pending => {
                    this.since_yield = 0;
                    return Poll::Pending;
                }
                Poll::Ready(Some(Ok(chunk))) => {
                    let chunk = chunk.as_ref();
                    this.received += chunk.len() as u64;
                    if this.received > this.max_reply {
                        let message = format!("the reply is larger than {} bytes", this.max_reply);
                        let error = ProviderError::new(ProviderErrorKind::Malformed, &this.provider, message);
                        return this.fail(error);
                    }
                    this.since_yield += chunk.len();
                    this.decoder.feed(chunk);
                }
                Poll::Ready(Some(Err(e))) => return this.fail(e),
                Poll::Ready(None) => this.phase = Phase::Ended,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Waker;

    use futures_util::stream;

    use super::*;

    fn sse_frames(chunks: &[&str]) -> Result<Vec<String>, FrameError> {
        let mut sse = SseEvents::new(MAX_FRAME_BYTES);
        let mut out = Vec::new();
        for chunk in chunks {
            sse.feed(chunk.as_bytes());
            while let Some(frame) = sse.next_frame()? {
                out.push(frame);
            }
        }
        out.extend(sse.finish()?);
        Ok(out)
    }

    /// Every way of cutting `body` in two gives the same frames as the whole.
    fn same_when_cut_anywhere(body: &str, expected: &[&str]) {
        assert_eq!(sse_frames(&[body]).unwrap(), expected, "whole");
        for cut in 1..body.len() {
            let (a, b) = body.split_at(cut);
            assert_eq!(sse_frames(&[a, b]).unwrap(), expected, "cut at {cut}");
        }
    }

    #[test]
    fn sse_events_join_data_lines_and_skip_comments_and_other_fields() {
        same_when_cut_anywhere(
            ": keep-alive\n\nevent: message_start\nid: 7\nretry: 10\ndata: {\"a\":1}\n\n\
             data: first\ndata:second\ndata\n\ndata: [DONE]\n\n",
            &["{\"a\":1}", "first\nsecond\n", "[DONE]"],
        );
    }

    #[test]
    fn sse_line_ends_may_be_crlf_cr_or_lf_and_split_across_chunks() {
        same_when_cut_anywhere(
            "data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n",
            &["a", "b", "c", "d"],
        );
    }

    #[test]
    fn a_leading_bom_is_skipped_and_an_unfinished_event_dropped() {
        assert_eq!(sse_frames(&["\u{feff}data: x\n\ndata: cut"]).unwrap(), ["x"]);
        assert_eq!(sse_frames(&["data: x\n\ndata: cut\n"]).unwrap(), ["x"]);
    }

    #[test]
    fn events_without_data_are_not_frames() {
        assert_eq!(
            sse_frames(&["event: ping\n\ndata:\n\n: c\n\n"]).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn ndjson_lines_are_trimmed_blank_ones_skipped_and_the_last_may_be_unterminated() {
        let mut lines = JsonLines::new(MAX_FRAME_BYTES);
        let mut out = Vec::new();
        for chunk in ["{\"a\"", ":1}\r\n\n  \n{\"b\":2}\n{\"c\"", ":3}"] {
            lines.feed(chunk.as_bytes());
            while let Some(frame) = lines.next_frame().unwrap() {
                out.push(frame);
            }
        }
        out.extend(lines.finish().unwrap());
        assert_eq!(out, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[test]
    fn an_over_long_line_is_refused_whether_or_not_it_ended() {
        let mut lines = Lines::new(true, 8);
        lines.feed(b"12345678\n123456789\n");
        assert_eq!(lines.next_line(), Ok(Some(b"12345678".to_vec())));
        assert_eq!(lines.next_line(), Err(FrameError::TooLong));

        let mut lines = Lines::new(true, 8);
        lines.feed(b"12345");
        assert_eq!(lines.next_line(), Ok(None));
        lines.feed(b"6789");
        assert_eq!(lines.next_line(), Err(FrameError::TooLong));

        // Short lines, but one event of more data than the bound.
        let mut sse = SseEvents::new(8);
        sse.feed(b"data: 1234\ndata: 5678\n");
        assert_eq!(sse.next_frame(), Err(FrameError::TooLong));

        let mut lines = JsonLines::new(4);
        lines.feed(b"{\"a\":1}");
        assert_eq!(lines.next_frame(), Err(FrameError::TooLong));
    }

    #[test]
    fn a_line_fed_in_many_chunks_is_scanned_once() {
        let mut lines = Lines::new(true, 64 << 20);
        let chunk = [b'a'; 1024];
        let mut fed = 0u64;
        for _ in 0..16 * 1024 {
            lines.feed(&chunk);
            fed += chunk.len() as u64;
            assert_eq!(lines.next_line(), Ok(None));
        }
        lines.feed(b"\n");
        fed += 1;
        assert_eq!(lines.next_line().unwrap().map(|l| l.len()), Some(16 << 20));
        assert_eq!(lines.bytes_scanned(), fed);
    }

    /// An always-ready body of `chunks` copies of `chunk`, counting the bytes taken from it.
    fn counted_body(
        chunk: &'static [u8],
        chunks: usize,
    ) -> (
        BoxStream<'static, Result<&'static [u8], ProviderError>>,
        Arc<AtomicUsize>,
    ) {
        let taken = Arc::new(AtomicUsize::new(0));
        let counter = taken.clone();
        let body = stream::iter(std::iter::repeat_n(chunk, chunks))
            .map(move |chunk| {
                counter.fetch_add(chunk.len(), Ordering::SeqCst);
                Ok(chunk)
            })
            .boxed();
        (body, taken)
    }

    fn poll(
        stream: &mut (impl Stream<Item = Result<String, ProviderError>> + Unpin),
    ) -> Poll<Option<Result<String, ProviderError>>> {
        stream.poll_next_unpin(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_64_mib_stream_without_a_newline_is_refused_at_the_frame_bound() {
        static CHUNK: [u8; 64 << 10] = [b'a'; 64 << 10];
        let (body, taken) = counted_body(&CHUNK, 1024);
        let mut framed = Framed::new(body, "p", u64::MAX, SseEvents::new(MAX_FRAME_BYTES));
        let error = loop {
            match poll(&mut framed) {
                Poll::Pending => continue,
                Poll::Ready(Some(Err(e))) => break e,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(error.kind, ProviderErrorKind::Malformed);
        assert_eq!(
            error.message,
            format!("a stream frame is longer than {MAX_FRAME_BYTES} bytes")
        );
        assert_eq!(taken.load(Ordering::SeqCst), MAX_FRAME_BYTES + CHUNK.len());
        assert!(matches!(poll(&mut framed), Poll::Ready(None)));
    }

    #[test]
    fn a_reply_is_refused_past_its_byte_bound() {
        let (body, taken) = counted_body(b": keep-alive\n\n", 1000);
        let mut framed = Framed::new(body, "p", 140, SseEvents::new(MAX_FRAME_BYTES));
        let error = loop {
            if let Poll::Ready(Some(Err(e))) = poll(&mut framed) {
                break e;
            }
        };
        assert_eq!(error.message, "the reply is larger than 140 bytes");
        assert_eq!(taken.load(Ordering::SeqCst), 154);
    }

    #[test]
    fn a_body_always_ready_still_yields_after_a_bounded_amount_of_work() {
        // 8 MiB of comments: no frame ever, and the body never says Pending.
        static CHUNK: [u8; 16 << 10] = {
            let mut chunk = [b' '; 16 << 10];
            chunk[0] = b':';
            chunk[(16 << 10) - 1] = b'\n';
            chunk
        };
        let (body, taken) = counted_body(&CHUNK, 512);
        let mut framed = Framed::new(body, "p", u64::MAX, SseEvents::new(MAX_FRAME_BYTES));
        let mut polls = 0;
        let mut before = 0;
        loop {
            let outcome = poll(&mut framed);
            let now = taken.load(Ordering::SeqCst);
            assert!(
                now - before <= BYTES_PER_POLL + CHUNK.len(),
                "{} bytes in one poll",
                now - before
            );
            before = now;
            polls += 1;
            match outcome {
                Poll::Pending => {}
                Poll::Ready(None) => break,
                Poll::Ready(Some(other)) => panic!("{other:?}"),
            }
        }
        assert_eq!(before, 512 * CHUNK.len());
        assert!(polls > (8 << 20) / (BYTES_PER_POLL + CHUNK.len()), "{polls} polls");
    }
}
