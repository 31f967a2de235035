//! Newline-delimited JSON from a streaming response (Ollama's native API): each item is one
//! non-blank line, however the body was split into chunks.

use futures_util::stream::{BoxStream, StreamExt};

use super::errors::{ProviderError, ProviderErrorKind};

pub fn lines(response: reqwest::Response, provider: &str) -> BoxStream<'static, Result<String, ProviderError>> {
    struct State {
        bytes: BoxStream<'static, reqwest::Result<Vec<u8>>>,
        buffer: Vec<u8>,
        provider: String,
        eof: bool,
    }
    let state = State {
        bytes: response.bytes_stream().map(|chunk| chunk.map(|b| b.to_vec())).boxed(),
        buffer: Vec::new(),
        provider: provider.to_owned(),
        eof: false,
    };
    futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(newline) = st.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = st.buffer.drain(..=newline).collect();
                match decode_line(&line, &st.provider) {
                    Some(item) => return Some((item, st)),
                    None => continue,
                }
            }
            if st.eof {
                let rest = std::mem::take(&mut st.buffer);
                return decode_line(&rest, &st.provider).map(|item| (item, st));
            }
            match st.bytes.next().await {
                Some(Ok(chunk)) => st.buffer.extend_from_slice(&chunk),
                Some(Err(e)) => {
                    st.eof = true;
                    st.buffer.clear();
                    return Some((Err(ProviderError::from_transport(&st.provider, &e)), st));
                }
                None => st.eof = true,
            }
        }
    })
    .boxed()
}

fn decode_line(line: &[u8], provider: &str) -> Option<Result<String, ProviderError>> {
    let text = match std::str::from_utf8(line) {
        Ok(text) => text.trim(),
        Err(_) => {
            return Some(Err(ProviderError::new(
                ProviderErrorKind::Malformed,
                provider,
                "a stream line is not UTF-8",
            )));
        }
    };
    (!text.is_empty()).then(|| Ok(text.to_owned()))
}
