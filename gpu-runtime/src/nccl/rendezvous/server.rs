//! The store rank 0 serves: a thread accepting connections and one thread per rank answering
//! its requests from a shared map, until the [`Server`] is dropped.
//!
//! Waits (a key not set yet, a barrier not full) wait on a condition variable in slices, so
//! that each ends at its own timeout or when the server stops, whichever comes first; a server
//! that stops closes every connection, which the ranks see at once as the store going away.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::nccl::rendezvous::wire::{self, Request, Response};
use crate::sync::{Condvar, LockRank, Mutex, MutexGuard};

/// How often blocked threads look at the stop flag: the longest a stopped server takes to
/// close its connections.
const SLICE: Duration = Duration::from_millis(20);

/// The longest an answer may take to write: answers are small, so only a rank that stopped
/// reading takes longer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// The store's contents.
#[derive(Default)]
struct State {
    values: HashMap<String, Vec<u8>>,
    counters: HashMap<String, i64>,
    barriers: HashMap<String, BTreeSet<usize>>,
    joined: BTreeSet<usize>,
}

/// What the threads share.
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
    world_size: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A handler that panicked left a consistent map (every update is one insert).
        self.state.lock()
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Waits until `ready` gives a value, the timeout passes, or the server stops. A value
    /// ready when the server stops is still given: the last barrier before rank 0 exits must
    /// reach every rank.
    fn wait_for<T>(&self, timeout: Duration, mut ready: impl FnMut(&mut State) -> Option<T>) -> Waited<T> {
        // None: a timeout too long to add to the clock, which never passes.
        let deadline = Instant::now().checked_add(timeout);
        let mut state = self.lock();
        loop {
            if let Some(v) = ready(&mut state) {
                return Waited::Ready(v);
            }
            if self.stopped() {
                return Waited::Stopped;
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Waited::TimedOut;
            }
            let slice = deadline.map_or(SLICE, |d| SLICE.min(d - now));
            state = self.changed.wait_timeout(state, slice);
        }
    }
}

/// How a wait of the store ended.
enum Waited<T> {
    Ready(T),
    TimedOut,
    /// The server stopped first: the connection closes without an answer.
    Stopped,
}

/// Rank 0's store, serving until dropped.
pub(crate) struct Server {
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves a store for `world_size` ranks on `listener`.
    pub(crate) fn start(listener: TcpListener, world_size: usize) -> io::Result<Server> {
        // Polled, so that the thread sees the stop flag without a connection to wake it.
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(LockRank::NcclStore, State::default()),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
            world_size,
        });
        let for_thread = Arc::clone(&shared);
        let acceptor = std::thread::Builder::new()
            .name("nccl-rendezvous".to_owned())
            .spawn(move || accept(&listener, &for_thread))?;
        Ok(Server {
            shared,
            acceptor: Some(acceptor),
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.changed.notify_all();
        if let Some(t) = self.acceptor.take() {
            // A panic of the thread ends here; dropping its payload must not unwind out of
            // this drop (an abort, were the server dropped during an unwind).
            if let Err(payload) = t.join() {
                crate::error::panic::drop_payload(payload);
            }
        }
    }
}

/// Accepts ranks until the server stops; each gets a thread. The handlers are joined before
/// returning, so that a dropped server has closed every connection.
fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut handlers = Vec::new();
    while !shared.stopped() {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = Arc::clone(shared);
                let spawned = std::thread::Builder::new()
                    .name("nccl-rendezvous-rank".to_owned())
                    .spawn(move || {
                        let _ = serve(stream, &shared);
                    });
                // A thread that cannot start drops the connection: that rank sees the store
                // go away and says so.
                if let Ok(h) = spawned {
                    handlers.push(h);
                }
            }
            Err(e) if wire::is_timeout(&e) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => std::thread::sleep(SLICE),
        }
    }
    for h in handlers {
        if let Err(payload) = h.join() {
            crate::error::panic::drop_payload(payload);
        }
    }
}

/// Answers one rank's requests until it hangs up, sends garbage, or the server stops.
fn serve(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(SLICE))?;
    // A rank that stops reading cannot hold the server (and rank 0's drop, which joins it).
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    stream.set_nodelay(true)?;
    loop {
        let request: Request = wire::receive(&mut stream, || !shared.stopped())?;
        // None: a wait cut short by the stop, which is no timeout: close without answering.
        let Some(response) = answer(request, shared) else {
            return Ok(());
        };
        wire::send(&mut stream, &response)?;
    }
}

/// The answer to `request`; `None` when the server stopped during a wait.
fn answer(request: Request, shared: &Shared) -> Option<Response> {
    let response = match request {
        Request::Join { rank, world_size } => {
            if world_size != shared.world_size {
                return Some(Response::WrongWorldSize {
                    store_world_size: shared.world_size,
                });
            }
            if shared.lock().joined.insert(rank) {
                shared.changed.notify_all();
                Response::Ok
            } else {
                Response::RankTaken
            }
        }
        Request::Set { key, value } => {
            shared.lock().values.insert(key, value);
            shared.changed.notify_all();
            Response::Ok
        }
        Request::Get { key, timeout_ms } => {
            match shared.wait_for(Duration::from_millis(timeout_ms), |s| s.values.get(&key).cloned()) {
                Waited::Ready(v) => Response::Value(v),
                Waited::TimedOut => Response::TimedOut { missing: Vec::new() },
                Waited::Stopped => return None,
            }
        }
        Request::Add { key, delta } => {
            let sum = {
                let mut state = shared.lock();
                let c = state.counters.entry(key).or_insert(0);
                *c = c.saturating_add(delta);
                *c
            };
            shared.changed.notify_all();
            Response::Counter(sum)
        }
        Request::Barrier {
            name,
            rank,
            timeout_ms,
        } => {
            shared
                .lock()
                .barriers
                .entry(name.clone())
                .or_default()
                .insert(rank);
            shared.changed.notify_all();
            let n = shared.world_size;
            let full = |s: &mut State| s.barriers.get(&name).filter(|b| b.len() >= n).map(|_| ());
            match shared.wait_for(Duration::from_millis(timeout_ms), full) {
                Waited::Ready(()) => Response::Ok,
                Waited::Stopped => return None,
                Waited::TimedOut => {
                    let state = shared.lock();
                    let arrived = state.barriers.get(&name);
                    let missing = (0..n)
                        .filter(|r| arrived.is_none_or(|a| !a.contains(r)))
                        .collect();
                    Response::TimedOut { missing }
                }
            }
        }
    };
    Some(response)
}
