//! Progress of a long transfer (a publish upload, a bundle download): a bar on a terminal, nothing
//! when stderr is piped (indicatif draws only to a terminal).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use reqwest::Url;

/// An upload bar for a body of `length` bytes sent to `url`.
pub fn upload(length: u64, url: &Url) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("sending to {}", url.path()));
    bar
}

/// A download bar for `url`, sized when the length is known.
pub fn download(length: Option<u64>, url: &Url) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(length, ProgressDrawTarget::stderr());
    let template = if length.is_some() {
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}"
    } else {
        "{msg} {spinner} {bytes} {bytes_per_sec}"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    let name = url.path_segments().and_then(|mut s| s.next_back()).unwrap_or("bundle");
    let short: String = name.chars().take(16).collect();
    bar.set_message(format!("fetching {short}"));
    bar
}
