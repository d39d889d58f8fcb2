//! Ports that do as little as possible, for benchmarks (natively and in wasm): no LLM, no
//! host tools, and a host that allows everything and only counts events (files: the fakes'
//! in-memory environment).

use agent_core::events::Event;
use agent_core::ports::{
    Approval, ApprovalRequest, Environment, HostToolOutput, HostTools, HttpRequest, HttpResponse,
    Interruption, LogLevel, Ports, SessionHost, SubagentRequest, SubagentResult, Transport, TransportError,
};
use std::cell::Cell;
use std::rc::Rc;

/// No LLM endpoint: a request fails at once.
pub struct NoLlm;

impl Transport for NoLlm {
    fn send(&self, request: &mut HttpRequest) -> Result<Box<dyn HttpResponse>, TransportError> {
        Err(TransportError::NotConfigured(request.endpoint.clone()))
    }
}

/// No host tools.
pub struct NoHostTools;

impl HostTools for NoHostTools {
    fn call(&self, _: &str, name: &str, _: &str) -> Result<HostToolOutput, String> {
        Err(format!("no host tool {name} here"))
    }
}

/// A host that allows every call, starts no subagent and counts the events it is given.
/// Its clock reads 0 and its sleeps return at once, unless it keeps wall time (a loop
/// benchmark compares against the component, whose host does).
#[derive(Default)]
pub struct QuietHost {
    pub events: Cell<usize>,
    wall_time: bool,
    random: Cell<u64>,
    spending: Cell<agent_core::protocol::Spending>,
}

impl QuietHost {
    /// A host on the real clock, whose sleeps really wait.
    pub fn with_wall_time() -> Self {
        Self {
            wall_time: true,
            ..Self::default()
        }
    }
}

const NO_SUBAGENTS: &str = "no subagents here";

impl SessionHost for QuietHost {
    fn emit(&self, event: Event) {
        std::hint::black_box(&event);
        self.events.set(self.events.get() + 1);
    }
    fn take_steering(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
    fn take_follow_ups(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
    fn abort_requested(&self, _: &str) -> Option<Interruption> {
        None
    }
    fn sleep(&self, _: &str, ms: u64) -> bool {
        if self.wall_time {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        false
    }
    fn log(&self, _: LogLevel, _: &str) {}
    fn approve(&self, _: &ApprovalRequest) -> Approval {
        Approval::Allow
    }
    fn now_ms(&self) -> u64 {
        if !self.wall_time {
            return 0;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
    fn random_bytes(&self, len: usize) -> Vec<u8> {
        // Ids only need to differ; a counter through splitmix64 is enough.
        (0..len)
            .map(|_| {
                let mut z = self.random.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
                self.random.set(z);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) as u8
            })
            .collect()
    }
    fn spawn_subagent(&self, _: &SubagentRequest) -> Result<String, String> {
        Err(NO_SUBAGENTS.to_string())
    }
    fn subagent_send(&self, _: &str, _: &str) -> Result<(), String> {
        Err(NO_SUBAGENTS.to_string())
    }
    fn subagent_wait(&self, _: &str) -> Result<SubagentResult, String> {
        Err(NO_SUBAGENTS.to_string())
    }
    fn subagent_close(&self, _: &str) -> Result<(), String> {
        Err(NO_SUBAGENTS.to_string())
    }
    fn spend(
        &self,
        _: &str,
        amount: agent_core::protocol::Spending,
        released: agent_core::protocol::Spending,
    ) -> agent_core::protocol::Spending {
        let mut total = self.spending.get();
        self.spending.set(total.spend(amount, released));
        total
    }
}

/// Ports over `env` (the core's fake files, see [`crate::fakes::FakeEnv`]) and nothing else.
pub fn ports(env: Rc<dyn Environment>) -> Ports {
    Ports {
        env,
        transport: Rc::new(NoLlm),
        host: Rc::new(QuietHost::default()),
        host_tools: Rc::new(NoHostTools),
    }
}
