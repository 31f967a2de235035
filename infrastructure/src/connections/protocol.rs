//! Which HTTP a connection speaks, told from its first bytes (in place of hyper-util's automatic
//! builder): an HTTP/2 client opens with the preface of RFC 9113 §3.4, anything else is HTTP/1.
//!
//! The bytes read to tell are handed back ahead of the rest *in the same read*, so hyper's first
//! HTTP/1 read holds the whole request head when it has arrived (a head sent in one piece, as
//! clients do). hyper-util hands them back alone; hyper then finds the head incomplete, and its
//! next read grows its 8 KiB read buffer to 16 KiB (copying the first 8 KiB) for every connection:
//! with the boxed service future (`connection.rs`), a held HTTP/1.1 long-poll went from 25.4 KiB to 15.2 KiB (issue 18).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// What an HTTP/2 connection without TLS opens with.
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Http1,
    Http2,
}

/// Reads until the first bytes either depart from the HTTP/2 preface or complete it (reads of at
/// most 24 bytes in all), and hands the connection back with those bytes still to be read.
pub async fn sniff<Io: AsyncRead + Unpin>(mut io: Io) -> io::Result<(Protocol, Prefixed<Io>)> {
    let mut prefix = [0u8; H2_PREFACE.len()];
    let mut filled = 0;
    while filled < H2_PREFACE.len() {
        let read = io.read(&mut prefix[filled..]).await?;
        let departs = read == 0 || prefix[filled..filled + read] != H2_PREFACE[filled..filled + read];
        filled += read;
        if departs {
            return Ok((Protocol::Http1, Prefixed::new(io, prefix, filled)));
        }
    }
    Ok((Protocol::Http2, Prefixed::new(io, prefix, filled)))
}

/// A connection with the bytes [`sniff`] read put back in front.
pub struct Prefixed<Io> {
    inner: Io,
    prefix: [u8; H2_PREFACE.len()],
    start: usize,
    end: usize,
}

impl<Io> Prefixed<Io> {
    fn new(inner: Io, prefix: [u8; H2_PREFACE.len()], end: usize) -> Self {
        Self {
            inner,
            prefix,
            start: 0,
            end,
        }
    }
}

impl<Io: AsyncRead + Unpin> AsyncRead for Prefixed<Io> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.start == this.end {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        let take = (this.end - this.start).min(buf.remaining());
        buf.put_slice(&this.prefix[this.start..this.start + take]);
        this.start += take;
        if this.start == this.end && buf.remaining() > 0 {
            // Whatever else has arrived joins them. Pending leaves a wake-up registered, which
            // is harmless; an error (a reset) is met again by the next read, as its end of file.
            let _ = Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        Poll::Ready(Ok(()))
    }
}

impl<Io: AsyncWrite + Unpin> AsyncWrite for Prefixed<Io> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    const REQUEST: &[u8] = b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}";

    /// The client's end and the server's, with `sent` already written by the client.
    async fn connection(sent: &[u8]) -> (tokio::io::DuplexStream, tokio::io::DuplexStream) {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        client.write_all(sent).await.unwrap();
        (client, server)
    }

    #[tokio::test]
    async fn an_http1_request_is_read_whole_in_the_first_read_after_sniffing() {
        let (_client, server) = connection(REQUEST).await;
        let (protocol, mut io) = sniff(server).await.unwrap();
        assert_eq!(protocol, Protocol::Http1);
        let mut buf = vec![0u8; 8192];
        let read = io.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..read], REQUEST, "the sniffed bytes and the rest, in one read");
    }

    #[tokio::test]
    async fn the_http2_preface_is_recognised_and_handed_back() {
        let mut sent = H2_PREFACE.to_vec();
        sent.extend_from_slice(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00");
        let (_client, server) = connection(&sent).await;
        let (protocol, mut io) = sniff(server).await.unwrap();
        assert_eq!(protocol, Protocol::Http2);
        let mut got = vec![0u8; sent.len()];
        io.read_exact(&mut got).await.unwrap();
        assert_eq!(got, sent);
    }

    #[tokio::test]
    async fn a_preface_that_departs_on_a_later_read_is_http1_with_every_byte_kept() {
        let (mut client, server) = tokio::io::duplex(1024);
        client.write_all(b"PRI * ").await.unwrap();
        let sniffing = tokio::spawn(sniff(server));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!sniffing.is_finished(), "six bytes of the preface cannot tell");
        client.write_all(b"HTTP/1.1\r\nhost: x\r\n\r\n").await.unwrap();
        let (protocol, mut io) = sniffing.await.unwrap().unwrap();
        assert_eq!(protocol, Protocol::Http1);
        let mut got = vec![0u8; 27];
        io.read_exact(&mut got).await.unwrap();
        assert_eq!(got, b"PRI * HTTP/1.1\r\nhost: x\r\n\r\n");
    }

    #[tokio::test]
    async fn a_read_smaller_than_the_sniffed_bytes_takes_them_in_turn() {
        let (_client, server) = connection(REQUEST).await;
        let (_, mut io) = sniff(server).await.unwrap();
        let mut small = [0u8; 10];
        let read = io.read(&mut small).await.unwrap();
        assert_eq!(&small[..read], &REQUEST[..10]);
        let mut rest = vec![0u8; REQUEST.len() - 10];
        io.read_exact(&mut rest).await.unwrap();
        assert_eq!(rest, &REQUEST[10..]);
    }

    #[tokio::test]
    async fn a_preface_that_departs_late_is_http1_with_every_byte_kept() {
        // The first 11 bytes are the preface's, then it is an HTTP/1 request line.
        let sent = b"PRI * HTTP/1.1\r\nhost: x\r\n\r\n";
        let (_client, server) = connection(sent).await;
        let (protocol, mut io) = sniff(server).await.unwrap();
        assert_eq!(protocol, Protocol::Http1);
        let mut got = vec![0u8; sent.len()];
        io.read_exact(&mut got).await.unwrap();
        assert_eq!(got, sent);
    }

    #[tokio::test]
    async fn a_connection_closed_early_is_http1_with_what_it_sent() {
        let (client, server) = connection(b"PR").await;
        drop(client);
        let (protocol, mut io) = sniff(server).await.unwrap();
        assert_eq!(protocol, Protocol::Http1);
        let mut got = vec![];
        io.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"PR");
    }

    #[tokio::test]
    async fn writes_pass_through() {
        let (mut client, server) = connection(b"GET / HTTP/1.1\r\n\r\n").await;
        let (_, mut io) = sniff(server).await.unwrap();
        io.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await.unwrap();
        let mut got = [0u8; 19];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"HTTP/1.1 200 OK\r\n\r\n");
    }
}
