//! What one plugin may consume, and the store-side bookkeeping that enforces it.

use std::time::Duration;

/// Per-plugin limits. A call that hits one fails with an error naming it, and the plugin is
/// instantiated afresh for its next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginLimits {
    /// Linear memory of all the plugin's memories together.
    pub memory_bytes: usize,
    /// Elements of all the plugin's tables together.
    pub table_elements: usize,
    /// Time the plugin's own code may run per call (measured in epoch ticks, so time spent
    /// waiting on the host, e.g. for a command, does not count).
    pub cpu: Duration,
    /// Wall-clock time per call, host calls included.
    pub wall: Duration,
    /// The most text a call may return; longer results are cut with a notice.
    pub output_bytes: usize,
}

impl Default for PluginLimits {
    fn default() -> Self {
        Self {
            // Language runtimes (CPython, StarlingMonkey) start at tens of MiB.
            memory_bytes: 256 << 20,
            table_elements: 100_000,
            cpu: Duration::from_secs(5),
            wall: Duration::from_secs(30),
            output_bytes: 1 << 20,
        }
    }
}

/// How often the epoch advances: the granularity of the CPU limit.
pub const TICK: Duration = Duration::from_millis(10);

/// Tracks one store's use against its limits; the first limit hit is remembered so a trap
/// can be explained.
#[derive(Debug)]
pub struct Usage {
    limits: PluginLimits,
    memory: usize,
    tables: usize,
    ticks: u64,
    pub hit: Option<String>,
}

impl Usage {
    pub fn new(limits: PluginLimits) -> Self {
        Self {
            limits,
            memory: 0,
            tables: 0,
            ticks: 0,
            hit: None,
        }
    }

    pub fn start_call(&mut self) {
        self.ticks = 0;
    }

    /// One more tick of the plugin's own code; an error once over the CPU limit.
    pub fn tick(&mut self) -> Result<(), String> {
        self.ticks += 1;
        if TICK.saturating_mul(self.ticks.min(u64::from(u32::MAX)) as u32) > self.limits.cpu {
            return Err(self.record(format!(
                "it ran for more than its CPU limit of {} ms",
                self.limits.cpu.as_millis()
            )));
        }
        Ok(())
    }

    fn record(&mut self, what: String) -> String {
        self.hit.get_or_insert(what).clone()
    }
}

/// Instances, memories and tables one store may make: language runtimes link a few dozen
/// core instances over one or two memories; each memory reserves gigabytes of address space.
const MAX_INSTANCES: usize = 256;
const MAX_MEMORIES: usize = 16;
const MAX_TABLES: usize = 64;

impl wasmtime::ResourceLimiter for Usage {
    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.memory - current.min(self.memory) + desired;
        if total > self.limits.memory_bytes {
            // A trap rather than a failed grow: a guest allocator would turn that into an
            // abort whose message hides the cause.
            let message = self.record(format!(
                "it reached its memory limit of {} MiB",
                self.limits.memory_bytes >> 20
            ));
            return Err(wasmtime::Error::msg(message));
        }
        self.memory = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.tables - current.min(self.tables) + desired;
        if total > self.limits.table_elements {
            let message = self.record(format!(
                "it reached its table limit of {} elements",
                self.limits.table_elements
            ));
            return Err(wasmtime::Error::msg(message));
        }
        self.tables = total;
        Ok(true)
    }
}

/// Why a call trapped, in words: the limit it hit (`hit`), else the trap, plus the end of
/// what the component wrote to stderr (a Python traceback, a JavaScript exception, a panic).
pub fn explain_failure(trap: &wasmtime::Error, hit: Option<&str>, stderr: &[u8]) -> String {
    let mut why = match hit {
        Some(hit) => hit.to_string(),
        None => match trap.downcast_ref::<wasmtime::Trap>() {
            Some(wasmtime::Trap::UnreachableCodeReached) => {
                "it crashed (wasm `unreachable`: a panic or abort in the plugin)".to_string()
            }
            Some(code) => format!("it crashed ({code})"),
            None => format!("it failed: {}", trap.root_cause()),
        },
    };
    let stderr = String::from_utf8_lossy(stderr);
    let trimmed = stderr.trim_end();
    let start = trimmed.len().saturating_sub(2000);
    let start = (start..trimmed.len())
        .find(|i| trimmed.is_char_boundary(*i))
        .unwrap_or(0);
    let tail = &trimmed[start..];
    if !tail.is_empty() {
        why.push_str("; its stderr ends with:\n");
        why.push_str(tail);
    }
    why
}

/// Puts `store` under the limits its `usage` tracks: memory and tables through the limiter,
/// and every tick of the guest's own code against its CPU limit; yielding each tick also
/// lets the wall-clock timeout and other tasks run.
pub fn limit_store<T: 'static>(store: &mut wasmtime::Store<T>, usage: fn(&mut T) -> &mut Usage) {
    store.limiter(move |state| usage(state));
    store.epoch_deadline_callback(move |mut context| {
        usage(context.data_mut())
            .tick()
            .map(|()| wasmtime::UpdateDeadline::Yield(1))
            .map_err(wasmtime::Error::msg)
    });
    store.set_epoch_deadline(1);
}

/// Cuts `text` to `limit` bytes on a character boundary, saying how much was left out.
pub fn cap_output(text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[plugin output cut: {} of {} bytes shown]",
        &text[..end],
        end,
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::ResourceLimiter;

    #[test]
    fn memory_and_tables_are_counted_across_growths() {
        let mut usage = Usage::new(PluginLimits {
            memory_bytes: 100,
            table_elements: 10,
            ..PluginLimits::default()
        });
        assert!(usage.memory_growing(0, 60, None).unwrap());
        assert!(usage.memory_growing(60, 100, None).unwrap());
        let error = usage.memory_growing(100, 101, None).unwrap_err().to_string();
        assert!(error.contains("memory limit"), "{error}");
        assert!(usage.table_growing(0, 10, None).unwrap());
        assert!(usage.table_growing(10, 11, None).is_err());
        assert_eq!(usage.hit.as_deref(), Some("it reached its memory limit of 0 MiB"));
    }

    #[test]
    fn cpu_ticks_reset_per_call() {
        let mut usage = Usage::new(PluginLimits {
            cpu: Duration::from_millis(30),
            ..PluginLimits::default()
        });
        for _ in 0..3 {
            usage.tick().unwrap();
        }
        assert!(usage.tick().unwrap_err().contains("30 ms"));
        usage.start_call();
        usage.tick().unwrap();
    }

    #[test]
    fn output_is_cut_on_a_character_boundary() {
        assert_eq!(cap_output("short".into(), 10), "short");
        let cut = cap_output("ééééé".into(), 5);
        assert!(
            cut.starts_with("éé\n[plugin output cut: 4 of 10 bytes shown]"),
            "{cut}"
        );
    }
}
