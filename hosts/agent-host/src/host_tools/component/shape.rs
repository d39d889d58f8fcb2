//! What a component exports, as functions a tool can call: those of its exported
//! interfaces and those at its world's top. Functions a tool cannot call (resource
//! methods, async functions, resources, streams or futures in their types) are left out,
//! each with the reason, so `plugin inspect` can say why a function is missing.

use wasmtime::Engine;
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, ComponentExportIndex, Type};

/// The interface a `tool-plugin` component exports (our own world).
pub const TOOL_PLUGIN_INTERFACE: &str = "agent:core/tool";

/// One exported function.
pub struct ExportedFunction {
    /// The export name of its instance (`example:text-stats/stats@0.1.0`), `None` at the top.
    pub interface: Option<String>,
    pub name: String,
    pub params: Vec<(String, Type)>,
    pub result: Option<Type>,
    pub index: ComponentExportIndex,
}

impl ExportedFunction {
    /// `interface.function` as written in WIT, for messages.
    pub fn display(&self) -> String {
        match &self.interface {
            Some(interface) => format!("{interface}#{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// What the component exports: the functions a tool can call and those it cannot, why.
pub struct Exports {
    pub functions: Vec<ExportedFunction>,
    pub left_out: Vec<String>,
}

/// Whether the component is one of our `tool-plugin` world.
pub fn is_tool_plugin(engine: &Engine, component: &Component) -> bool {
    component
        .component_type()
        .exports(engine)
        .any(|(name, _)| name.split('@').next() == Some(TOOL_PLUGIN_INTERFACE))
}

pub fn exports(engine: &Engine, component: &Component) -> Exports {
    let mut found = Exports {
        functions: Vec::new(),
        left_out: Vec::new(),
    };
    for (name, export) in component.component_type().exports(engine) {
        match export.ty {
            ComponentItem::ComponentFunc(func) => {
                if let Some(index) = component.get_export_index(None, name) {
                    found.add(None, name, &func, index);
                }
            }
            ComponentItem::ComponentInstance(instance) => {
                let Some(instance_index) = component.get_export_index(None, name) else {
                    continue;
                };
                for (function, item) in instance.exports(engine) {
                    if let ComponentItem::ComponentFunc(func) = item.ty
                        && let Some(index) = component.get_export_index(Some(&instance_index), function)
                    {
                        found.add(Some(name), function, &func, index);
                    }
                }
            }
            _ => {}
        }
    }
    found
}

impl Exports {
    fn add(
        &mut self,
        interface: Option<&str>,
        name: &str,
        func: &ComponentFunc,
        index: ComponentExportIndex,
    ) {
        let function = ExportedFunction {
            interface: interface.map(str::to_string),
            name: name.to_string(),
            params: func.params().map(|(n, t)| (n.to_string(), t)).collect(),
            result: func.results().next(),
            index,
        };
        match callable(&function, func) {
            Ok(()) => self.functions.push(function),
            Err(why) => self.left_out.push(format!("{}: {why}", function.display())),
        }
    }
}

fn callable(function: &ExportedFunction, func: &ComponentFunc) -> Result<(), String> {
    if function.name.starts_with('[') {
        return Err("a resource's constructor or method: resources cannot be tool arguments".into());
    }
    // componentize-py exports `exports#init` to set up its interpreter; not a tool.
    if function.name.contains('#')
        || (function.interface.as_deref() == Some("exports") && function.name == "init")
    {
        return Err("an internal export of the component's toolchain".into());
    }
    if func.async_() {
        return Err("an async function: agent-host calls only synchronous ones".into());
    }
    if func.results().len() > 1 {
        return Err("more than one result".into());
    }
    for (param, ty) in &function.params {
        unsupported(ty).map_err(|what| format!("its parameter `{param}` {what}"))?;
    }
    if let Some(result) = &function.result {
        unsupported(result).map_err(|what| format!("its result {what}"))?;
    }
    Ok(())
}

/// `Err` naming the part of `ty` no JSON value can stand for.
fn unsupported(ty: &Type) -> Result<(), String> {
    let inside = |ty: &Type, how: &str| unsupported(ty).map_err(|e| format!("{e} ({how})"));
    match ty {
        Type::Own(_) | Type::Borrow(_) => Err("is a resource handle".into()),
        Type::Future(_) => Err("is a future".into()),
        Type::Stream(_) => Err("is a stream".into()),
        Type::ErrorContext => Err("is an error-context".into()),
        Type::List(list) => inside(&list.ty(), "in a list"),
        Type::FixedLengthList(list) => inside(&list.ty(), "in a list"),
        Type::Map(map) => {
            inside(&map.key(), "a map's key").and_then(|()| inside(&map.value(), "a map's value"))
        }
        Type::Option(option) => inside(&option.ty(), "in an option"),
        Type::Result(result) => {
            for ty in [result.ok(), result.err()].into_iter().flatten() {
                inside(&ty, "in a result")?;
            }
            Ok(())
        }
        Type::Record(record) => record
            .fields()
            .try_for_each(|field| inside(&field.ty, &format!("field `{}`", field.name))),
        Type::Tuple(tuple) => tuple.types().try_for_each(|ty| inside(&ty, "in a tuple")),
        Type::Variant(variant) => variant.cases().try_for_each(|case| match &case.ty {
            Some(ty) => inside(ty, &format!("case `{}`", case.name)),
            None => Ok(()),
        }),
        _ => Ok(()),
    }
}

/// Tool names for `functions`: `{interface}_{function}` (`stats_analyze`), the function
/// alone at the world's top, `-` as `_`; when two would clash, the package's name goes in
/// front. Names are cut to 64 characters.
pub fn tool_names(functions: &[ExportedFunction]) -> Vec<String> {
    let short = |f: &ExportedFunction, with_package: bool| {
        let mut parts = Vec::new();
        if let Some(interface) = &f.interface {
            let without_version = interface.split('@').next().unwrap_or(interface);
            let (package, name) = match without_version.split_once('/') {
                Some((package, name)) => (package.split(':').nth(1).unwrap_or(package), name),
                None => ("", without_version),
            };
            if with_package && !package.is_empty() {
                parts.push(package.to_string());
            }
            parts.push(name.to_string());
        }
        parts.push(f.name.clone());
        let joined: String = parts
            .join("_")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        joined.chars().take(64).collect::<String>()
    };
    let plain: Vec<String> = functions.iter().map(|f| short(f, false)).collect();
    functions
        .iter()
        .enumerate()
        .map(|(i, f)| match plain.iter().filter(|n| **n == plain[i]).count() {
            1 => plain[i].clone(),
            _ => short(f, true),
        })
        .collect()
}
