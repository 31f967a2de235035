//! Server-sent events from a streaming response, framed by `eventsource-stream`: each item is
//! one event's `data` (events without data, such as comments, are dropped).

use eventsource_stream::Eventsource;
use futures_util::stream::{BoxStream, StreamExt};

use super::errors::{ProviderError, ProviderErrorKind};

pub fn data_frames(response: reqwest::Response, provider: &str) -> BoxStream<'static, Result<String, ProviderError>> {
    let provider = provider.to_owned();
    response
        .bytes_stream()
        .eventsource()
        .filter_map(move |event| {
            let item = match event {
                Ok(event) if event.data.is_empty() => None,
                Ok(event) => Some(Ok(event.data)),
                Err(eventsource_stream::EventStreamError::Transport(e)) => {
                    Some(Err(ProviderError::from_transport(&provider, &e)))
                }
                Err(e) => Some(Err(ProviderError::new(
                    ProviderErrorKind::Malformed,
                    &provider,
                    format!("not a server-sent event stream: {e}"),
                ))),
            };
            std::future::ready(item)
        })
        .boxed()
}
