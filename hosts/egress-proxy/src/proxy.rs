//! The accept loop, the connection limit, and stopping everything when the handle goes.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinHandle;

use crate::allow_list::AllowList;
use crate::connection::handle;
use crate::progress::Progress;
use crate::record::ConnectionRecord;
use crate::resolve::Resolve;

/// Connections beyond the limit are still answered (503), up to this many at a time; past
/// that they are closed unanswered so a flood cannot exhaust the host's file descriptors.
const OVERFLOW_SLOTS: usize = 16;

/// Connections open at once through every proxy of this process (each holds two
/// descriptors and two relay buffers): the commands of a session, however many, cannot
/// take all of agent-host's descriptors between them (the usual soft limit is 1024, which
/// agent-host keeps, since programs it starts inherit it and `select` breaks past it).
const OPEN_IN_PROCESS: usize = 192;

fn open_in_process() -> Arc<Semaphore> {
    static OPEN: std::sync::OnceLock<Arc<Semaphore>> = std::sync::OnceLock::new();
    OPEN.get_or_init(|| Arc::new(Semaphore::new(OPEN_IN_PROCESS)))
        .clone()
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub head_timeout: Duration,
    pub resolve_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            head_timeout: Duration::from_secs(30),
            resolve_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_connections: 64,
        }
    }
}

pub(crate) struct Shared {
    pub allow: Arc<AllowList>,
    pub resolver: Arc<dyn Resolve>,
    pub limits: Limits,
}

type Report = Arc<dyn Fn(ConnectionRecord) + Send + Sync>;

/// The egress proxy for one allow-list; `serve` it on the listener the sandbox can reach.
pub struct Proxy {
    allow: Arc<AllowList>,
    resolver: Arc<dyn Resolve>,
    limits: Limits,
}

impl Proxy {
    pub fn new(allow: Arc<AllowList>, resolver: Arc<dyn Resolve>) -> Self {
        Self {
            allow,
            resolver,
            limits: Limits::default(),
        }
    }

    /// For tests: how long a client may take to send its request head (default 30 s).
    #[doc(hidden)]
    pub fn with_head_timeout(mut self, timeout: Duration) -> Self {
        self.limits.head_timeout = timeout;
        self
    }

    /// For tests: how many connections may be open at once (default 64).
    #[doc(hidden)]
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.limits.max_connections = max;
        self
    }

    /// Serves `listener` until the returned handle is dropped; each connection's record is
    /// passed to `report` once when it ends. Must be called inside a tokio runtime.
    pub fn serve(
        &self,
        listener: std::net::TcpListener,
        report: impl Fn(ConnectionRecord) + Send + Sync + 'static,
    ) -> io::Result<ServeHandle> {
        let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
        let local_addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(listener)?
        };
        let shared = Arc::new(Shared {
            allow: self.allow.clone(),
            resolver: self.resolver.clone(),
            limits: self.limits,
        });
        let (stop, stopped) = watch::channel(());
        let (alive, ended) = mpsc::channel(1);
        let accept = runtime.spawn(accept_loop(listener, shared, Arc::new(report), stopped, alive));
        Ok(ServeHandle {
            local_addr,
            accept,
            stop: Some(stop),
            ended,
        })
    }
}

/// Dropping it stops the accept loop and every open connection; each of those is still
/// reported, with the bytes that crossed before it was cut.
pub struct ServeHandle {
    local_addr: SocketAddr,
    accept: JoinHandle<()>,
    /// Every task holds a receiver; dropping the sender wakes them all to stop.
    stop: Option<watch::Sender<()>>,
    /// Closed once the accept loop and every connection task have ended (each holds a
    /// sender it never uses), so every record has been reported.
    ended: mpsc::Receiver<()>,
}

impl ServeHandle {
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, lets the open connections end by themselves for up to `grace`,
    /// then cuts the rest; returns once every connection has been reported.
    pub async fn finish(mut self, grace: Duration) {
        self.accept.abort();
        if tokio::time::timeout(grace, self.ended.recv()).await.is_err() {
            self.stop = None;
            let _ = self.ended.recv().await;
        }
    }
}

impl Drop for ServeHandle {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// What an accepted connection holds while it runs: a place of its proxy's and of the
/// process's, or one of the few kept for answering "too many" (503).
enum Slot {
    Open {
        _own: OwnedSemaphorePermit,
        _process: OwnedSemaphorePermit,
    },
    Overflow {
        _permit: OwnedSemaphorePermit,
    },
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    report: Report,
    mut stopped: watch::Receiver<()>,
    alive: mpsc::Sender<()>,
) {
    let slots = Arc::new(Semaphore::new(shared.limits.max_connections));
    let overflow_slots = Arc::new(Semaphore::new(OVERFLOW_SLOTS));
    loop {
        let accepted = tokio::select! {
            _ = stopped.changed() => return,
            accepted = listener.accept() => accepted,
        };
        let (client, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Typically out of file descriptors: wait instead of spinning.
                tracing::debug!(%error, "egress proxy: accept failed");
                tokio::select! {
                    _ = stopped.changed() => return,
                    () = tokio::time::sleep(Duration::from_millis(50)) => continue,
                }
            }
        };
        let accepted_at = Instant::now();
        let own_and_process = slots
            .clone()
            .try_acquire_owned()
            .and_then(|own| Ok((own, open_in_process().try_acquire_owned()?)));
        let (permit, overflow) = match own_and_process {
            Ok((own, process)) => (
                Slot::Open {
                    _own: own,
                    _process: process,
                },
                false,
            ),
            Err(_) => match overflow_slots.clone().try_acquire_owned() {
                Ok(permit) => (Slot::Overflow { _permit: permit }, true),
                Err(_) => {
                    tracing::debug!(%peer, "egress proxy: full, closing a connection unanswered");
                    continue;
                }
            },
        };
        let (shared, report, mut stopped) = (shared.clone(), report.clone(), stopped.clone());
        let alive = alive.clone();
        tokio::spawn(async move {
            let _alive = alive;
            let progress = Progress::new(accepted_at);
            tokio::select! {
                biased;
                _ = stopped.changed() => tracing::debug!(%peer, "egress proxy: stopped with a connection open"),
                () = handle(&shared, client, &progress, overflow) => {}
            }
            drop(permit);
            if let Some(record) = progress.into_record() {
                tracing::debug!(?record, "egress proxy: connection ended");
                report(record);
            }
        });
    }
}
