//! What every benchmark is given: the artefacts under test and where to put scratch files.

use std::path::{Path, PathBuf};

pub struct Context {
    pub component: PathBuf,
    pub agent_host: PathBuf,
    pub probe: PathBuf,
    pub search_tree: PathBuf,
    pub out: PathBuf,
    pub quick: bool,
}

impl Context {
    /// A fresh scratch directory (emptied first). It is under the system's temporary
    /// folder, not under the checkout: a workspace inside a git repository makes every
    /// session start run git, which is not what most figures are about.
    pub fn scratch(&self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = std::env::temp_dir().join("agent-bench").join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        Ok(absolute(&dir))
    }

    /// `full` normally, `quick` under `--quick`.
    pub fn size(&self, full: usize, quick: usize) -> usize {
        if self.quick { quick } else { full }
    }
}

/// The quick sizes over this checkout's artefacts, writing to `out`: for the benchmarks'
/// own tests.
#[cfg(test)]
pub fn quick_for_tests(out: &Path) -> Context {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    Context {
        component: std::env::var_os("AGENT_CORE_COMPONENT")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target/agent-core.wasm")),
        agent_host: root.join("target/debug/agent-host"),
        probe: root.join("target/bench-probe.wasm"),
        search_tree: PathBuf::from("/nonexistent"),
        out: out.to_path_buf(),
        quick: true,
    }
}

/// `agent-host` (the binary under test) with none of this process's provider or agent-host
/// settings, so that only what a benchmark sets applies.
pub fn clean_agent_host(binary: &Path) -> std::process::Command {
    let mut command = std::process::Command::new(absolute(binary));
    for (name, _) in std::env::vars() {
        if ["ANTHROPIC_", "OPENAI_", "GEMINI_", "AGENT_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            command.env_remove(name);
        }
    }
    command
}

pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
