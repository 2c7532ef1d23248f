//! The messages between a rank and the store, and how they travel: each a serde message in
//! postcard's binary form after its length as 4 big-endian bytes, over one TCP connection per
//! rank.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

/// The largest message either side accepts: more is not a rank of ours talking (the first
/// bytes of something else on the port, read as a length).
pub(crate) const MAX_MESSAGE: usize = 64 << 20;

/// What a rank asks of the store.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Request {
    /// The first message of a rank: who it is, and the job's size as it sees it.
    Join { rank: usize, world_size: usize },
    /// Stores `value` under `key`, replacing what was there.
    Set { key: String, value: Vec<u8> },
    /// The value of `key`, waiting up to `timeout_ms` for it to be set.
    Get { key: String, timeout_ms: u64 },
    /// Adds `delta` to the counter `key` (0 when new) and returns the sum.
    Add { key: String, delta: i64 },
    /// Arrives at the barrier `name` and waits up to `timeout_ms` for every rank to.
    Barrier {
        name: String,
        rank: usize,
        timeout_ms: u64,
    },
}

/// The store's answer.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Response {
    /// Done.
    Ok,
    /// A value.
    Value(Vec<u8>),
    /// A counter's new value.
    Counter(i64),
    /// The wait passed its timeout; `missing` are the ranks that had not arrived (for a
    /// barrier; empty for a key).
    TimedOut { missing: Vec<usize> },
    /// The rank's size differs from rank 0's.
    WrongWorldSize { store_world_size: usize },
    /// Another connection joined as this rank already.
    RankTaken,
}

/// Writes `message` as one frame.
pub(crate) fn send(stream: &mut impl Write, message: &impl Serialize) -> io::Result<()> {
    let body = postcard::to_allocvec(message).map_err(io::Error::other)?;
    let len = u32::try_from(body.len()).map_err(|_| io::Error::other("message too large"))?;
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&len.to_be_bytes());
    frame.extend_from_slice(&body);
    stream.write_all(&frame)?;
    stream.flush()
}

/// Reads one frame into a `T`. `keep_waiting` is asked whenever the socket's read timeout
/// passes: `false` returns that timeout's error, `true` reads on, keeping what was read.
/// A connection closed before a whole frame is `UnexpectedEof`; a malformed one `InvalidData`.
pub(crate) fn receive<T: for<'de> Deserialize<'de>>(
    stream: &mut impl Read,
    mut keep_waiting: impl FnMut() -> bool,
) -> io::Result<T> {
    let mut len = [0u8; 4];
    read_all(stream, &mut len, &mut keep_waiting)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_MESSAGE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {len} bytes, above the {MAX_MESSAGE} a rendezvous sends"),
        ));
    }
    let mut body = vec![0u8; len];
    read_all(stream, &mut body, &mut keep_waiting)?;
    postcard::from_bytes(&body).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// `read_exact` that survives read timeouts while `keep_waiting()` says so.
fn read_all(
    stream: &mut impl Read,
    mut buf: &mut [u8],
    keep_waiting: &mut impl FnMut() -> bool,
) -> io::Result<()> {
    while !buf.is_empty() {
        match stream.read(buf) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => buf = &mut buf[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) && keep_waiting() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// True for the error of a socket's read timeout (`WouldBlock` on Unix, `TimedOut` elsewhere).
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_reject_garbage() {
        let mut buf = Vec::new();
        send(
            &mut buf,
            &Request::Set {
                key: "k".into(),
                value: vec![1, 2, 255],
            },
        )
        .unwrap();
        match receive::<Request>(&mut buf.as_slice(), || false).unwrap() {
            Request::Set { key, value } => assert_eq!((key.as_str(), value), ("k", vec![1, 2, 255])),
            other => panic!("{other:?}"),
        }
        // Half a frame: the connection closed early.
        let e = receive::<Request>(&mut &buf[..buf.len() - 1], || false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        // An HTTP request on the port: a huge length.
        let e = receive::<Request>(&mut &b"GET / HTTP/1.1\r\n"[..], || false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }
}
