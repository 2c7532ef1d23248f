//! [`Rendezvous`]: the ranks of a job meet over TCP at rank 0, which serves a small key-value
//! store there, and rank 0 hands every rank the NCCL unique id through it.
//!
//! The store needs no GPU and no NCCL: values are bytes, and only
//! [`Rendezvous::unique_id`] calls NCCL (on rank 0, to make the id). Every wait is bounded by
//! the rendezvous's timeout, and every failure is a [`RendezvousError`] naming the address,
//! the rank and the world size.

pub(crate) mod error;
mod server;
mod wire;

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::sync::{LockRank, Mutex};

pub use error::RendezvousError;

use crate::nccl::error::{NcclError, Result};
use crate::nccl::id::{UniqueId, UNIQUE_ID_BYTES};
use server::Server;
use wire::{Request, Response};

/// The key under which rank 0 publishes the NCCL unique id.
const UNIQUE_ID_KEY: &str = "nccl/unique_id";

/// Slack on top of a wait's timeout before a rank stops waiting for the store's answer: the
/// store answers a timed-out wait itself, and this covers the trip.
const ANSWER_SLACK: Duration = Duration::from_secs(5);

/// One rank's membership of a job's rendezvous: rank 0 serves the store (until this is
/// dropped) and every rank, rank 0 included, talks to it.
///
/// [`Rendezvous::connect`] returns once all `world_size` ranks have joined. Then
/// [`unique_id`](Rendezvous::unique_id) gives every rank rank 0's NCCL id, and
/// [`set`](Rendezvous::set) / [`get`](Rendezvous::get) / [`add`](Rendezvous::add) /
/// [`barrier`](Rendezvous::barrier) exchange whatever else the ranks need.
/// [`Comm::from_env`](crate::nccl::Comm::from_env) does all of it from the launcher's
/// variables.
///
/// ```no_run
/// use std::time::Duration;
/// use gpu_runtime::nccl::{Comm, Rendezvous};
/// use gpu_runtime::{Context, Device};
/// # fn main() -> gpu_runtime::nccl::Result<()> {
/// # let (rank, world_size) = (0, 2);
/// let rdzv = Rendezvous::connect("node01:29500", rank, world_size, Duration::from_secs(60))?;
/// let id = rdzv.unique_id()?;
/// let comm = Comm::init_rank(&Context::new(Device::new(0)?)?, &id, world_size, rank)?;
/// rdzv.barrier()?; // rank 0 keeps serving until everyone is past this
/// # Ok(()) }
/// ```
///
/// Keep rank 0's `Rendezvous` while other ranks may still use the store: dropping it closes
/// the store, and their calls then fail with [`RendezvousError::StoreClosed`].
pub struct Rendezvous {
    address: String,
    rank: usize,
    world_size: usize,
    timeout: Duration,
    connection: Mutex<TcpStream>,
    barriers: AtomicU64,
    // Last: the connection above closes before the server stops.
    _server: Option<Server>,
}

impl std::fmt::Debug for Rendezvous {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rendezvous")
            .field("address", &self.address)
            .field("rank", &self.rank)
            .field("world_size", &self.world_size)
            .field("serves", &self._server.is_some())
            .finish()
    }
}

impl Rendezvous {
    /// Joins the job's rendezvous at `address` (`host:port`, e.g. `MASTER_ADDR:MASTER_PORT`)
    /// as `rank` of `world_size`, and waits until every rank has joined, each step at most
    /// `timeout`.
    ///
    /// Rank 0 serves the store on the port of `address`, on every interface of its host; the
    /// others connect to `address`, retrying until it answers (the ranks start in any order).
    /// Fails with [`RendezvousError::PortInUse`] (rank 0), [`RendezvousError::Unreachable`],
    /// [`RendezvousError::WorldSizeMismatch`], [`RendezvousError::RankTaken`], or
    /// [`RendezvousError::Timeout`] naming the ranks that never joined.
    pub fn connect(address: &str, rank: usize, world_size: usize, timeout: Duration) -> Result<Rendezvous> {
        let fail = Failure {
            address,
            rank,
            world_size,
        };
        if rank >= world_size {
            return Err(RendezvousError::BadRank {
                address: address.to_owned(),
                rank,
                world_size,
            }
            .into());
        }
        let (server, target) = if rank == 0 {
            let port = port_of(address).map_err(|e| fail.io("reading the port of the address", e))?;
            let listener = TcpListener::bind((std::net::Ipv4Addr::UNSPECIFIED, port)).map_err(|e| {
                if e.kind() == io::ErrorKind::AddrInUse {
                    fail.port_in_use()
                } else {
                    fail.io("serving the store", e)
                }
            })?;
            let server = Server::start(listener, world_size).map_err(|e| fail.io("serving the store", e))?;
            // Rank 0 talks to its own store like the others, through the loopback.
            (Some(server), format!("127.0.0.1:{port}"))
        } else {
            (None, address.to_owned())
        };
        let stream =
            connect_with_retries(&target, timeout).map_err(|source| RendezvousError::Unreachable {
                address: address.to_owned(),
                rank,
                world_size,
                timeout,
                source,
            })?;
        let rdzv = Rendezvous {
            address: address.to_owned(),
            rank,
            world_size,
            timeout,
            connection: Mutex::new(LockRank::NcclConnection, stream),
            barriers: AtomicU64::new(0),
            _server: server,
        };
        match rdzv.ask(&Request::Join { rank, world_size }, timeout, || {
            "joining".to_owned()
        })? {
            Response::Ok => {}
            Response::WrongWorldSize { store_world_size } => {
                return Err(RendezvousError::WorldSizeMismatch {
                    address: address.to_owned(),
                    rank,
                    world_size,
                    store_world_size,
                }
                .into())
            }
            Response::RankTaken => return Err(fail.rank_taken()),
            other => return Err(rdzv.unexpected("joining", &other)),
        }
        rdzv.barrier_named("rendezvous/joined", timeout)?;
        Ok(rdzv)
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// The store's address, as given.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The longest any wait lasts.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Stores `value` under `key` for every rank to [`get`](Rendezvous::get).
    pub fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        let request = Request::Set {
            key: key.to_owned(),
            value: value.to_vec(),
        };
        match self.ask(&request, self.timeout, || format!("setting {key:?}"))? {
            Response::Ok => Ok(()),
            other => Err(self.unexpected("set", &other)),
        }
    }

    /// The value of `key`, waiting for a rank to set it, at most the timeout.
    pub fn get(&self, key: &str) -> Result<Vec<u8>> {
        self.get_with_timeout(key, self.timeout)
    }

    /// [`get`](Rendezvous::get) with its own timeout.
    pub fn get_with_timeout(&self, key: &str, timeout: Duration) -> Result<Vec<u8>> {
        let request = Request::Get {
            key: key.to_owned(),
            timeout_ms: millis(timeout),
        };
        let operation = || format!("waiting for the key {key:?}");
        match self.ask(&request, timeout, operation)? {
            Response::Value(v) => Ok(v),
            Response::TimedOut { missing } => Err(self.timed_out(operation(), timeout, missing)),
            other => Err(self.unexpected("get", &other)),
        }
    }

    /// Adds `delta` to the counter `key` (0 until first added to) and returns its new value:
    /// to number things across ranks, or count arrivals.
    pub fn add(&self, key: &str, delta: i64) -> Result<i64> {
        let request = Request::Add {
            key: key.to_owned(),
            delta,
        };
        match self.ask(&request, self.timeout, || format!("adding to {key:?}"))? {
            Response::Counter(c) => Ok(c),
            other => Err(self.unexpected("add", &other)),
        }
    }

    /// Waits until every rank has called `barrier` as many times as this one, at most the
    /// timeout; [`RendezvousError::Timeout`] names the ranks that did not come.
    pub fn barrier(&self) -> Result<()> {
        let n = self.barriers.fetch_add(1, Ordering::Relaxed);
        self.barrier_named(&format!("barrier/{n}"), self.timeout)
    }

    /// Rank 0 makes a value with `make` and publishes it under `key`; every rank returns it.
    /// (`make` runs on rank 0 only.)
    pub fn share(&self, key: &str, make: impl FnOnce() -> Result<Vec<u8>>) -> Result<Vec<u8>> {
        if self.rank == 0 {
            let value = make()?;
            self.set(key, &value)?;
            Ok(value)
        } else {
            self.get(key)
        }
    }

    /// The job's NCCL unique id: made by rank 0 ([`UniqueId::new`], which needs NCCL but no
    /// GPU) and fetched from the store by the others.
    pub fn unique_id(&self) -> Result<UniqueId> {
        let bytes = self.share(UNIQUE_ID_KEY, || Ok(UniqueId::new()?.as_bytes().to_vec()))?;
        let bytes: [u8; UNIQUE_ID_BYTES] = bytes.try_into().map_err(|b: Vec<u8>| {
            self.io(
                "reading the unique id",
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} bytes under {UNIQUE_ID_KEY:?}, not {UNIQUE_ID_BYTES}", b.len()),
                ),
            )
        })?;
        Ok(UniqueId::from_bytes(bytes))
    }

    fn barrier_named(&self, name: &str, timeout: Duration) -> Result<()> {
        let request = Request::Barrier {
            name: name.to_owned(),
            rank: self.rank,
            timeout_ms: millis(timeout),
        };
        let operation = || format!("the barrier {name:?}");
        match self.ask(&request, timeout, operation)? {
            Response::Ok => Ok(()),
            Response::TimedOut { missing } => Err(self.timed_out(operation(), timeout, missing)),
            other => Err(self.unexpected("barrier", &other)),
        }
    }

    /// Sends `request` and reads the answer, waiting at most `wait` plus the slack for it.
    fn ask(&self, request: &Request, wait: Duration, operation: impl Fn() -> String) -> Result<Response> {
        let mut stream = self.connection.lock();
        let patience = wait.saturating_add(ANSWER_SLACK);
        // None: a wait too long to add to the clock, which never ends.
        let deadline = Instant::now().checked_add(patience);
        let sent = stream
            .set_write_timeout(Some(patience))
            .and_then(|()| wire::send(&mut *stream, request));
        let answer = sent.and_then(|()| {
            stream.set_read_timeout(Some(Duration::from_millis(50)))?;
            wire::receive::<Response>(&mut *stream, || deadline.is_none_or(|d| Instant::now() < d))
        });
        if answer.is_err() {
            // Half a message may be left in either direction: later calls must not read it as
            // their answer, so the connection ends here and they fail too.
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        answer.map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
            | io::ErrorKind::BrokenPipe => RendezvousError::StoreClosed {
                address: self.address.clone(),
                rank: self.rank,
                world_size: self.world_size,
                operation: operation(),
            }
            .into(),
            _ if wire::is_timeout(&e) => self.timed_out(operation(), patience, Vec::new()),
            _ => self.io(&operation(), e),
        })
    }

    fn timed_out(&self, operation: String, timeout: Duration, missing: Vec<usize>) -> NcclError {
        RendezvousError::Timeout {
            address: self.address.clone(),
            rank: self.rank,
            world_size: self.world_size,
            operation,
            timeout,
            missing,
        }
        .into()
    }

    fn io(&self, operation: &str, source: io::Error) -> NcclError {
        RendezvousError::Io {
            address: self.address.clone(),
            rank: self.rank,
            world_size: self.world_size,
            operation: operation.to_owned(),
            source,
        }
        .into()
    }

    fn unexpected(&self, operation: &str, answer: &Response) -> NcclError {
        self.io(
            operation,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the store answered {answer:?}"),
            ),
        )
    }
}

/// The address, rank and world size of a rendezvous being set up, for its errors.
struct Failure<'a> {
    address: &'a str,
    rank: usize,
    world_size: usize,
}

impl Failure<'_> {
    fn io(&self, operation: &str, source: io::Error) -> RendezvousError {
        RendezvousError::Io {
            address: self.address.to_owned(),
            rank: self.rank,
            world_size: self.world_size,
            operation: operation.to_owned(),
            source,
        }
    }

    fn port_in_use(&self) -> RendezvousError {
        RendezvousError::PortInUse {
            address: self.address.to_owned(),
            rank: self.rank,
            world_size: self.world_size,
        }
    }

    fn rank_taken(&self) -> NcclError {
        RendezvousError::RankTaken {
            address: self.address.to_owned(),
            rank: self.rank,
            world_size: self.world_size,
        }
        .into()
    }
}

/// The port of `host:port` (`[v6]:port` included).
fn port_of(address: &str) -> io::Result<u16> {
    address
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{address:?} is not host:port"),
            )
        })
}

/// A connection to `address`, retried (name resolution included) until `timeout` passes; the
/// error is the last attempt's.
fn connect_with_retries(address: &str, timeout: Duration) -> io::Result<TcpStream> {
    // None: a timeout too long to add to the clock, which never passes.
    let deadline = Instant::now().checked_add(timeout);
    let left = || deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(Instant::now()));
    let mut pause = Duration::from_millis(5);
    loop {
        let left_now = left();
        let error = match address.to_socket_addrs() {
            Ok(addrs) => {
                let addrs: Vec<SocketAddr> = addrs.collect();
                let mut last =
                    io::Error::new(io::ErrorKind::NotFound, "the host name resolves to no address");
                let mut connected = None;
                for a in addrs {
                    // Each attempt is bounded too: a host that drops packets never refuses.
                    match TcpStream::connect_timeout(
                        &a,
                        left_now.clamp(Duration::from_millis(10), Duration::from_secs(2)),
                    ) {
                        Ok(s) => {
                            connected = Some(s);
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                match connected {
                    Some(s) => {
                        s.set_nodelay(true)?;
                        return Ok(s);
                    }
                    None => last,
                }
            }
            Err(e) => e,
        };
        let left_now = left();
        if left_now.is_zero() {
            return Err(error);
        }
        std::thread::sleep(pause.min(left_now));
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

/// A timeout in whole milliseconds, for the wire.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
