//! The registry of host tools: each [`HostTool`] by name, checked against clashes, the
//! [`ToolSource`]s whose tools change while sessions run (MCP servers), and what the session
//! host asks of them ([`ToolHost`]).

use crate::approval::ToolCategory;
use crate::session_host::state::{ToolHost, ToolOutput};
use agent_protocol::ToolDefinition;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

/// One tool implemented by the host.
#[async_trait]
pub trait HostTool: Send + Sync {
    /// The definition offered to the model (name, description, JSON-schema parameters).
    fn definition(&self) -> ToolDefinition;

    fn category(&self) -> ToolCategory;

    /// Where the tool comes from, for messages (e.g. `plugin json-query (tools/jq.wasm)`).
    fn origin(&self) -> String;

    /// Runs the tool. `Err` reaches the model as an error tool result it can recover from.
    async fn call(&self, arguments_json: &str) -> Result<ToolOutput, String>;
}

/// Host tools whose list changes while sessions run (an MCP server that announces
/// `tools/list_changed`).
#[async_trait]
pub trait ToolSource: Send + Sync {
    /// Its tools and their generation, a number that grows whenever the list changes, when
    /// that is not `known`; `None` when it is. Reads again a list announced as changed, so
    /// it is asked before each request to a model and must be cheap when nothing changed.
    async fn tools_since(&self, known: u64) -> Option<(u64, Vec<Arc<dyn HostTool>>)>;
}

/// The host tools of a session, by name. Cheap to clone.
#[derive(Clone, Default)]
pub struct HostTools {
    fixed: Arc<BTreeMap<String, Arc<dyn HostTool>>>,
    /// Names no host tool may take (the profile's own).
    reserved: Arc<[String]>,
    changing: Arc<Changing>,
}

/// The sources' part of the tools.
#[derive(Default)]
struct Changing {
    sources: Vec<Arc<dyn ToolSource>>,
    current: Mutex<Current>,
}

#[derive(Default)]
struct Current {
    /// Each source's generation and tools as last read.
    generations: Vec<u64>,
    lists: Vec<Vec<Arc<dyn HostTool>>>,
    /// Their tools by name, those whose name is taken left out.
    tools: BTreeMap<String, Arc<dyn HostTool>>,
    /// Grows whenever `tools` changes; a session knows the version it was offered.
    version: u64,
}

impl HostTools {
    /// Collects `tools`; a name defined twice, or a name the profile already has
    /// (`reserved`), is an error naming both origins, never a silent override.
    pub fn new(tools: Vec<Arc<dyn HostTool>>, reserved: &[String]) -> Result<Self, String> {
        let mut by_name: BTreeMap<String, Arc<dyn HostTool>> = BTreeMap::new();
        for tool in tools {
            let name = tool.definition().name;
            if reserved.contains(&name) {
                return Err(format!(
                    "{} defines the tool {name:?}, which the profile already has; rename it",
                    tool.origin()
                ));
            }
            if let Some(first) = by_name.get(&name) {
                return Err(format!(
                    "two tools are named {name:?}: one from {}, one from {}; rename one",
                    first.origin(),
                    tool.origin()
                ));
            }
            by_name.insert(name, tool);
        }
        Ok(Self {
            fixed: Arc::new(by_name),
            reserved: reserved.into(),
            changing: Arc::default(),
        })
    }

    /// Adds tools whose list changes (read now, and again when they change). Their tools
    /// may not take a name of the profile's or of the other tools: such a tool is left out
    /// with a warning, as a list can change at any time.
    pub async fn with_sources(self, sources: Vec<Arc<dyn ToolSource>>) -> Self {
        let generations = vec![0; sources.len()];
        let lists = vec![Vec::new(); sources.len()];
        let tools = Self {
            fixed: self.fixed,
            reserved: self.reserved,
            changing: Arc::new(Changing {
                sources,
                current: Mutex::new(Current {
                    generations,
                    lists,
                    ..Current::default()
                }),
            }),
        };
        tools.refresh().await;
        tools
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Current> {
        self.changing
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The tools' definitions and the version of the sources' part they show.
    pub fn definitions_with_version(&self) -> (Vec<ToolDefinition>, u64) {
        let current = self.current();
        let definitions = self
            .fixed
            .values()
            .chain(current.tools.values())
            .map(|t| t.definition())
            .collect();
        (definitions, current.version)
    }

    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.definitions_with_version().0
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn HostTool>> {
        match self.fixed.get(name) {
            Some(tool) => Some(tool.clone()),
            None => self.current().tools.get(name).cloned(),
        }
    }

    pub async fn call(&self, name: &str, arguments_json: &str) -> Result<ToolOutput, String> {
        match self.get(name) {
            Some(tool) => tool.call(arguments_json).await,
            None => Err(format!("no host tool named {name:?} is configured in this host")),
        }
    }

    /// Reads the sources that changed; the version of the tools after it.
    pub async fn refresh(&self) -> u64 {
        let known = self.current().generations.clone();
        let mut changed = Vec::new();
        for (index, source) in self.changing.sources.iter().enumerate() {
            if let Some(update) = source.tools_since(known[index]).await {
                changed.push((index, update));
            }
        }
        let mut current = self.current();
        let mut applied = false;
        for (index, (generation, tools)) in changed {
            // Sessions sharing these tools (a parent and its subagents) may refresh at once:
            // a list read earlier never replaces a newer one.
            if generation > current.generations[index] {
                current.generations[index] = generation;
                current.lists[index] = tools;
                applied = true;
            }
        }
        if !applied {
            return current.version;
        }
        let mut tools = BTreeMap::new();
        for tool in current.lists.iter().flatten() {
            let name = tool.definition().name;
            if self.reserved.contains(&name) || self.fixed.contains_key(&name) || tools.contains_key(&name) {
                tracing::warn!(
                    "{}'s tool {name:?} is left out: another tool has that name",
                    tool.origin()
                );
                continue;
            }
            tools.insert(name, tool.clone());
        }
        current.tools = tools;
        current.version += 1;
        current.version
    }
}

#[async_trait]
impl ToolHost for HostTools {
    fn category(&self, name: &str) -> Option<ToolCategory> {
        self.get(name).map(|tool| tool.category())
    }

    async fn call(&self, name: &str, arguments_json: &str) -> Result<ToolOutput, String> {
        HostTools::call(self, name, arguments_json).await
    }

    async fn changes(&self, seen: u64) -> Option<(u64, Vec<ToolDefinition>)> {
        if self.changing.sources.is_empty() {
            return None;
        }
        self.refresh().await;
        let (definitions, version) = self.definitions_with_version();
        (version != seen).then_some((version, definitions))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    struct Named(&'static str, &'static str);

    #[async_trait]
    impl HostTool for Named {
        fn definition(&self) -> ToolDefinition {
            ToolDefinition {
                name: self.0.to_string(),
                description: self.1.to_string(),
                parameters: serde_json::json!({"type": "object"}),
            }
        }
        fn category(&self) -> ToolCategory {
            ToolCategory::Read
        }
        fn origin(&self) -> String {
            format!("source {}", self.1)
        }
        async fn call(&self, _: &str) -> Result<ToolOutput, String> {
            Ok(self.1.to_string().into())
        }
    }

    /// A source whose generation and tools the test sets.
    #[derive(Default)]
    struct Scripted(Mutex<(u64, Vec<Arc<dyn HostTool>>)>);

    impl Scripted {
        fn set(&self, generation: u64, tools: Vec<Named>) {
            *self.0.lock().unwrap() = (
                generation,
                tools
                    .into_iter()
                    .map(|t| Arc::new(t) as Arc<dyn HostTool>)
                    .collect(),
            );
        }
    }

    #[async_trait]
    impl ToolSource for Scripted {
        async fn tools_since(&self, known: u64) -> Option<(u64, Vec<Arc<dyn HostTool>>)> {
            let (generation, tools) = self.0.lock().unwrap().clone();
            (generation != known).then_some((generation, tools))
        }
    }

    fn names(tools: &HostTools) -> Vec<String> {
        tools.definitions().into_iter().map(|d| d.name).collect()
    }

    #[tokio::test]
    async fn a_changed_list_cannot_take_a_taken_name_nor_go_back_to_an_older_one() {
        let source = Arc::new(Scripted::default());
        source.set(1, vec![Named("srv__a", "first")]);
        let tools = HostTools::new(vec![Arc::new(Named("fixed", "app"))], &["shell".to_string()])
            .unwrap()
            .with_sources(vec![source.clone()])
            .await;
        assert_eq!(names(&tools), ["fixed", "srv__a"]);
        let (_, offered) = tools.definitions_with_version();

        // The profile's name, a fixed tool's name and a name twice: each left out.
        source.set(
            2,
            vec![
                Named("shell", "evil"),
                Named("fixed", "evil"),
                Named("srv__b", "second"),
                Named("srv__b", "evil"),
            ],
        );
        let (version, changed) = ToolHost::changes(&tools, offered).await.unwrap();
        let changed: Vec<_> = changed
            .iter()
            .map(|d| (d.name.as_str(), d.description.as_str()))
            .collect();
        assert_eq!(changed, [("fixed", "app"), ("srv__b", "second")]);
        assert_eq!(tools.call("fixed", "{}").await.unwrap().text, "app");

        // A list read before the one applied (a parent and its subagent refreshing at once)
        // does not replace it.
        source.set(1, vec![Named("srv__a", "first")]);
        assert_eq!(ToolHost::changes(&tools, version).await, None);
        assert_eq!(names(&tools), ["fixed", "srv__b"]);
    }
}
