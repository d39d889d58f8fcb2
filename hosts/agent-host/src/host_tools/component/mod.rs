//! Any WebAssembly component with plain exports as tools: each function it exports (in
//! its interfaces or at its world's top) becomes one tool, named after the interface and
//! the function, described from its WIT doc comments, with a JSON Schema derived from its
//! WIT types. A call converts the JSON arguments to component values, runs the function in
//! a fresh instance under the component's policy (deny by default) and turns the result
//! back into JSON; a `result`'s error is the tool's error.

mod convert;
pub mod docs;
pub mod folders;
mod http;
pub mod policy;
mod schema;
pub mod shape;
mod tool;

pub use folders::FolderRules;
pub use policy::{ComponentPolicy, PolicyFile, PolicySource};
pub use tool::{ComponentState, ComponentTool, PlainComponent};

use agent_protocol::ToolDefinition;
use docs::WitDocs;
use std::path::Path;
use tool::FunctionTool;
use wasmtime::Engine;
use wasmtime::component::{Component, Linker, Type};

/// The most tools one component may offer, and the most bytes of their definitions (as for
/// tool-plugins and MCP servers).
const MAX_TOOLS: usize = 64;
const MAX_DEFINITIONS_BYTES: usize = 256 << 10;

/// What [`load`] needs besides the component.
pub struct LoadParts<'a> {
    pub engine: &'a Engine,
    pub linker: &'a Linker<ComponentState>,
    pub name: String,
    pub path: &'a Path,
    pub bytes: &'a [u8],
    pub component: &'a Component,
    pub policy: ComponentPolicy,
    pub folders: FolderRules,
}

/// Derives the tools of a plain-export component and links it (WASI only).
pub fn load(parts: LoadParts<'_>) -> Result<PlainComponent, String> {
    let LoadParts {
        engine,
        linker,
        name,
        path,
        bytes,
        component,
        policy,
        folders,
    } = parts;
    let shown = path.display();
    pinned(&name, path, bytes, &policy, &folders)?;
    let pre = linker.instantiate_pre(component).map_err(|e| {
        format!(
            "component {name} ({shown}) cannot be linked: {e:#} (agent-host gives components WASI 0.2 only)"
        )
    })?;
    let exports = shape::exports(engine, component);
    if exports.functions.is_empty() {
        let why = match exports.left_out.is_empty() {
            true => "it exports no functions".to_string(),
            false => format!(
                "none of its functions can be a tool: {}",
                exports.left_out.join("; ")
            ),
        };
        return Err(format!("component {name} ({shown}) offers no tools: {why}"));
    }
    if exports.functions.len() > MAX_TOOLS {
        return Err(format!(
            "component {name} ({shown}) exports {} functions; at most {MAX_TOOLS} can be tools",
            exports.functions.len()
        ));
    }
    let (wit, docs_origin) = match WitDocs::find(path, bytes) {
        Ok(Some(wit)) => {
            let origin = format!("WIT from {}", wit.origin);
            (Some(wit), origin)
        }
        Ok(None) => (
            None,
            format!(
                "no WIT found (no `{}` section, no .wit file beside it): descriptions are generated",
                docs::WIT_SECTION
            ),
        ),
        Err(problem) => {
            tracing::warn!(component = %name, %problem, "its WIT is not used");
            (None, format!("{problem}: descriptions are generated"))
        }
    };
    let http_allow = egress_proxy::AllowList::parse(&policy.http_allow)
        .map_err(|e| format!("component {name}: its policy's http.allow: {e}"))?;
    let resolver = crate::sandbox::proxy::NameResolution::from_test_variable()?.resolver();
    let names = shape::tool_names(&exports.functions);
    let functions: Vec<FunctionTool> = exports
        .functions
        .into_iter()
        .zip(names)
        .map(|(function, tool_name)| {
            let definition = definition(&function, tool_name, wit.as_ref());
            FunctionTool { definition, function }
        })
        .collect();
    let size: usize = functions
        .iter()
        .map(|f: &FunctionTool| f.definition.description.len() + f.definition.parameters.to_string().len())
        .sum();
    if size > MAX_DEFINITIONS_BYTES {
        return Err(format!(
            "component {name} ({shown})'s tool definitions take {size} bytes; at most {MAX_DEFINITIONS_BYTES} are allowed"
        ));
    }
    Ok(PlainComponent {
        name,
        path: path.to_path_buf(),
        policy,
        functions,
        left_out: exports.left_out,
        docs_origin,
        engine: engine.clone(),
        pre,
        folders,
        http_allow: std::sync::Arc::new(http_allow),
        resolver,
    })
}

/// Replaces WASI's `symlink-at` and `link-at` with refusals: a link a component leaves in a writable
/// folder (`out/notes -> ../../.ssh/id_ed25519`, relative, which WASI allows) would lead
/// the next reader (an editor, git, the MCP client reading the component's output) out of
/// the folder it was granted.
pub fn refuse_links(linker: &mut Linker<ComponentState>) -> wasmtime::Result<()> {
    use wasmtime::component::Resource;
    use wasmtime_wasi::p2::bindings::filesystem::types::{Descriptor, ErrorCode, PathFlags};
    linker.allow_shadowing(true);
    let mut types = linker.instance("wasi:filesystem/types@0.2.12")?;
    types.func_wrap(
        "[method]descriptor.symlink-at",
        |_, (_, _, _): (Resource<Descriptor>, String, String)| {
            Ok((Err::<(), ErrorCode>(ErrorCode::NotPermitted),))
        },
    )?;
    // A hard link to an existing symbolic link is a new symbolic link elsewhere.
    types.func_wrap(
        "[method]descriptor.link-at",
        |_,
         (_, _, _, _, _): (
            Resource<Descriptor>,
            PathFlags,
            String,
            Resource<Descriptor>,
            String,
        )| { Ok((Err::<(), ErrorCode>(ErrorCode::NotPermitted),)) },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// A component the model's tools could have rewritten keeps a policy that grants anything
/// only while it is the file the policy pins: otherwise the model's code would run with the
/// user's grants from the next session on.
fn pinned(
    name: &str,
    path: &Path,
    bytes: &[u8],
    policy: &ComponentPolicy,
    folders: &FolderRules,
) -> Result<(), String> {
    if !policy.grants_anything() || !folders.model_could_write(path) {
        return Ok(());
    }
    let digest = sha256_hex(bytes);
    let shown = path.display();
    match &policy.sha256 {
        Some(pinned) if *pinned == digest => Ok(()),
        Some(pinned) => Err(format!(
            "component {name} ({shown}) is not the file its policy pins: its SHA-256 is {digest}, the policy's \
             {pinned}. It lies where the model's tools can write, so it may have been replaced: check it, then \
             pin the new one in [plugins.policy.{name}]"
        )),
        None => Err(format!(
            "component {name} ({shown}) lies where the model's tools can write (the workspace or an --allow-dir \
             folder), so its policy holds only for the file you pin: add sha256 = \"{digest}\" to \
             [plugins.policy.{name}] once you have checked it"
        )),
    }
}

/// A component file's SHA-256, as a policy pins it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn definition(function: &shape::ExportedFunction, name: String, wit: Option<&WitDocs>) -> ToolDefinition {
    let docs = wit.and_then(|w| w.function(function.interface.as_deref(), &function.name));
    let param_docs: Vec<_> = function
        .params
        .iter()
        .enumerate()
        .map(|(i, (param, _))| docs.as_ref().and_then(|d| d.param(i, param)))
        .collect();
    let parameters = schema::parameters(&function.params, &param_docs);
    let mut description = docs
        .as_ref()
        .and_then(|d| d.description())
        .map(str::to_string)
        .unwrap_or_else(|| format!("Calls {} of a WebAssembly component.", function.display()));
    let result_docs = docs.as_ref().and_then(|d| d.result());
    match &function.result {
        None | Some(Type::String) => {}
        // A top-level result is unwrapped: its ok value is the answer, its error the tool's error.
        Some(Type::Result(result)) => {
            if let Some(ok) = result.ok().filter(|t| !matches!(t, Type::String)) {
                let shape = schema::schema(&ok, result_docs.and_then(|d| d.result_case(true)));
                description.push_str(&format!("\n\nReturns JSON of this schema: {shape}"));
            }
            if let Some(err) = result.err().filter(|t| !matches!(t, Type::String)) {
                let shape = schema::schema(&err, result_docs.and_then(|d| d.result_case(false)));
                description.push_str(&format!("\n\nFails with an error of this schema: {shape}"));
            }
        }
        Some(other) => {
            let shape = schema::schema(other, result_docs);
            description.push_str(&format!("\n\nReturns JSON of this schema: {shape}"));
        }
    }
    ToolDefinition {
        name,
        description,
        parameters,
    }
}
