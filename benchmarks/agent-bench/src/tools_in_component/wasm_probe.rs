//! The core's tools compiled as a plain wasm module (benchmarks/wasm-probe), run by an engine
//! configured like agent-host's (`Config::new()`, see its runtime.rs). Only numbers cross the
//! boundary; a failure's message is read from the module's memory.

use anyhow::Context as _;
use bench_probe::cases::Case;
use std::path::Path;
use wasmtime::{Config, Engine, Instance, Memory, Module, Store, TypedFunc};

/// What the probe's exports return on failure.
const FAILED: u64 = u64::MAX;

/// The compiled module.
pub struct ProbeModule {
    engine: Engine,
    module: Module,
}

impl ProbeModule {
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let engine = Engine::new(&Config::new())?;
        let bytes = std::fs::read(path).with_context(|| {
            format!(
                "cannot read {}: build it with scripts/build-bench-probe.sh",
                path.display()
            )
        })?;
        let module = Module::new(&engine, &bytes)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{} is not a wasm module", path.display()))?;
        let imports: Vec<String> = module
            .imports()
            .map(|i| format!("{}::{}", i.module(), i.name()))
            .collect();
        // The probe is self-contained: an import would mean host work inside the timings.
        if !imports.is_empty() {
            anyhow::bail!(
                "{} imports {}; the probe must import nothing",
                path.display(),
                imports.join(", ")
            );
        }
        Ok(Self { engine, module })
    }

    /// A fresh instance with `case` prepared (its inputs built inside the guest).
    pub fn prepare(&self, case: Case, quick: bool) -> anyhow::Result<ProbeInstance> {
        let mut store = Store::new(&self.engine, ());
        let instance = Instance::new(&mut store, &self.module, &[])?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .context("the probe exports no memory")?;
        let export = |store: &mut Store<()>, name: &str| {
            instance
                .get_typed_func::<u32, u64>(store, name)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("the probe has no export {name}(u32) -> u64"))
        };
        let mut probe = ProbeInstance {
            reset: export(&mut store, "probe_reset")?,
            run: export(&mut store, "probe_run")?,
            verify: export(&mut store, "probe_verify")?,
            message_ptr: instance.get_typed_func(&mut store, "probe_message_ptr")?,
            message_len: instance.get_typed_func(&mut store, "probe_message_len")?,
            store,
            memory,
            case: case as u32,
        };
        let prepare: TypedFunc<(u32, u32), u64> =
            instance.get_typed_func(&mut probe.store, "probe_prepare")?;
        let prepared = prepare.call(&mut probe.store, (case as u32, u32::from(quick)))?;
        probe.check(prepared, "probe_prepare")?;
        Ok(probe)
    }
}

/// One instance with one prepared case.
pub struct ProbeInstance {
    store: Store<()>,
    memory: Memory,
    case: u32,
    reset: TypedFunc<u32, u64>,
    run: TypedFunc<u32, u64>,
    verify: TypedFunc<u32, u64>,
    message_ptr: TypedFunc<(), u32>,
    message_len: TypedFunc<(), u32>,
}

impl ProbeInstance {
    pub fn reset(&mut self) -> anyhow::Result<()> {
        self.call(self.reset.clone(), "probe_reset").map(drop)
    }

    /// The timed call: returns the output's length.
    pub fn run(&mut self) -> anyhow::Result<u64> {
        self.call(self.run.clone(), "probe_run")
    }

    pub fn verify(&mut self) -> anyhow::Result<()> {
        self.call(self.verify.clone(), "probe_verify").map(drop)
    }

    fn call(&mut self, func: TypedFunc<u32, u64>, name: &str) -> anyhow::Result<u64> {
        let value = func
            .call(&mut self.store, self.case)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{name} trapped"))?;
        self.check(value, name)
    }

    fn check(&mut self, value: u64, name: &str) -> anyhow::Result<u64> {
        if value != FAILED {
            return Ok(value);
        }
        let ptr = self.message_ptr.call(&mut self.store, ())? as usize;
        let len = self.message_len.call(&mut self.store, ())? as usize;
        let message = self
            .memory
            .data(&self.store)
            .get(ptr..ptr + len)
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        anyhow::bail!("{name} failed in wasm: {message}")
    }
}
