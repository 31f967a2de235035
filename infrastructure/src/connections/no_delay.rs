//! Accepted connections send each write at once (`TCP_NODELAY`).
//!
//! With Nagle's algorithm on, a small write waits while an earlier one is unacknowledged, and
//! clients delay their acknowledgements (40 ms on Linux). Answers written in pieces met that
//! wait: a render streamed with progress (`text/event-stream`) sent its first event, then held the
//! rest for the client's delayed ACK, 40 ms where the render took 6 (issue 18, session 32); a long
//! WebSocket message goes out as fragments the same way. poem's `TcpAcceptor` leaves the option
//! off.

use std::io;

use poem::http::uri::Scheme;
use poem::listener::Acceptor;
use poem::web::{LocalAddr, RemoteAddr};
use tokio::net::TcpStream;

pub struct NoDelay<A> {
    inner: A,
}

impl<A> NoDelay<A> {
    pub fn new(inner: A) -> Self {
        Self { inner }
    }
}

impl<A: Acceptor<Io = TcpStream>> Acceptor for NoDelay<A> {
    type Io = TcpStream;

    fn local_addr(&self) -> Vec<LocalAddr> {
        self.inner.local_addr()
    }

    async fn accept(&mut self) -> io::Result<(TcpStream, LocalAddr, RemoteAddr, Scheme)> {
        let accepted = self.inner.accept().await?;
        if let Err(error) = accepted.0.set_nodelay(true) {
            // The connection still works, only its pieces may wait: not worth refusing it.
            tracing::debug!(%error, "could not set TCP_NODELAY on an accepted connection");
        }
        Ok(accepted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use poem::listener::{Listener, TcpListener};

    #[tokio::test]
    async fn accepted_connections_send_each_write_at_once() {
        let mut acceptor = NoDelay::new(TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap());
        let address = acceptor.local_addr()[0].as_socket_addr().copied().unwrap();
        let client = TcpStream::connect(address).await.unwrap();
        let (accepted, ..) = acceptor.accept().await.unwrap();
        assert!(accepted.nodelay().unwrap(), "TCP_NODELAY on the server's end");
        drop(client);
    }
}
