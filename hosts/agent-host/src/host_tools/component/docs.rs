//! The WIT a component was built from, for its doc comments: a built component keeps its
//! types but not their documentation, so the component carries its WIT text in a custom
//! section named `agent-tool-wit` (or a `NAME.wit` file lies beside it). Types are taken
//! from the component itself; the WIT only lends words, matched by structure, so a stale
//! or missing WIT costs descriptions and never correctness.

use std::path::Path;
use wit_parser::{Resolve, Type as WitType, TypeDefKind, WorldItem, WorldKey};

/// The custom section that carries a component's WIT text.
pub const WIT_SECTION: &str = "agent-tool-wit";
/// More WIT text than this is not read.
const MAX_WIT_BYTES: usize = 1 << 20;

/// A component's parsed WIT.
pub struct WitDocs {
    resolve: Resolve,
    /// Where it came from, for `plugin inspect`.
    pub origin: String,
}

impl WitDocs {
    /// The WIT of the component at `path` (`bytes`): its custom section, else the file
    /// beside it. `Err` when one was found but does not parse (a warning, not a failure).
    pub fn find(path: &Path, bytes: &[u8]) -> Result<Option<Self>, String> {
        let (text, origin) = match embedded(bytes) {
            Some(text) => (text, format!("its `{WIT_SECTION}` section")),
            None => {
                let beside = path.with_extension("wit");
                match std::fs::metadata(&beside) {
                    Ok(meta) if meta.is_file() && meta.len() <= MAX_WIT_BYTES as u64 => {
                        let text = std::fs::read_to_string(&beside)
                            .map_err(|e| format!("cannot read {}: {e}", beside.display()))?;
                        (text, beside.display().to_string())
                    }
                    _ => return Ok(None),
                }
            }
        };
        let mut resolve = Resolve::default();
        resolve
            .push_str("component.wit", &text)
            .map_err(|e| format!("the WIT in {origin} does not parse: {e:#}"))?;
        Ok(Some(Self { resolve, origin }))
    }

    /// The function exported as `function` of the instance `interface` (an export name such
    /// as `example:text-stats/stats@0.1.0`, or a plain name), or at the world's top.
    pub fn function(&self, interface: Option<&str>, function: &str) -> Option<FunctionDocs<'_>> {
        let resolve = &self.resolve;
        let found = match interface {
            Some(export) => self.interface(export)?.functions.get(function),
            None => resolve.worlds.iter().find_map(|(_, world)| {
                world.exports.iter().find_map(|(key, item)| match (key, item) {
                    (WorldKey::Name(name), WorldItem::Function(f)) if name == function => Some(f),
                    _ => None,
                })
            }),
        }?;
        Some(FunctionDocs {
            resolve,
            function: found,
        })
    }

    fn interface(&self, export: &str) -> Option<&wit_parser::Interface> {
        let resolve = &self.resolve;
        let id = match export.split_once('/') {
            Some((package, rest)) => {
                let (namespace, name) = package.split_once(':')?;
                let interface = rest.split('@').next()?;
                resolve.packages.iter().find_map(|(_, p)| {
                    (p.name.namespace == namespace && p.name.name == name)
                        .then(|| p.interfaces.get(interface).copied())
                        .flatten()
                })?
            }
            // An interface declared inside the world (`export name: interface { ... }`).
            None => resolve.worlds.iter().find_map(|(_, world)| {
                world.exports.iter().find_map(|(key, item)| match (key, item) {
                    (WorldKey::Name(name), WorldItem::Interface { id, .. }) if name == export => Some(*id),
                    _ => None,
                })
            })?,
        };
        Some(&resolve.interfaces[id])
    }
}

/// One function's WIT.
pub struct FunctionDocs<'a> {
    resolve: &'a Resolve,
    function: &'a wit_parser::Function,
}

impl<'a> FunctionDocs<'a> {
    pub fn description(&self) -> Option<&'a str> {
        docs(&self.function.docs)
    }

    /// The WIT type of the parameter at `index`, if it is named `name` there too.
    pub fn param(&self, index: usize, name: &str) -> Option<DocCursor<'a>> {
        let param = self.function.params.get(index)?;
        (param.name == name).then_some(DocCursor {
            resolve: self.resolve,
            ty: param.ty,
        })
    }

    pub fn result(&self) -> Option<DocCursor<'a>> {
        self.function.result.map(|ty| DocCursor {
            resolve: self.resolve,
            ty,
        })
    }
}

/// A place in a WIT type, walked in step with the component's own type.
#[derive(Clone, Copy)]
pub struct DocCursor<'a> {
    resolve: &'a Resolve,
    ty: WitType,
}

impl<'a> DocCursor<'a> {
    fn at(&self, ty: WitType) -> Self {
        Self {
            resolve: self.resolve,
            ty,
        }
    }

    /// The type definition behind aliases, and the first doc comment met on the way.
    fn definition(&self) -> Option<(&'a TypeDefKind, Option<&'a str>)> {
        let mut ty = self.ty;
        let mut found_docs = None;
        for _ in 0..32 {
            let WitType::Id(id) = ty else { return None };
            let def = &self.resolve.types[id];
            found_docs = found_docs.or(docs(&def.docs));
            match &def.kind {
                TypeDefKind::Type(inner) => ty = *inner,
                kind => return Some((kind, found_docs)),
            }
        }
        None
    }

    /// The type's own doc comment.
    pub fn description(&self) -> Option<&'a str> {
        self.definition().and_then(|(_, d)| d)
    }

    /// A record's field at `index` (if named `name`), with its doc comment.
    pub fn field(&self, index: usize, name: &str) -> Option<(DocCursor<'a>, Option<&'a str>)> {
        match self.definition()?.0 {
            TypeDefKind::Record(record) => {
                let field = record.fields.get(index).filter(|f| f.name == name)?;
                Some((self.at(field.ty), docs(&field.docs)))
            }
            _ => None,
        }
    }

    /// A variant's case at `index`: its payload's type and doc comment.
    pub fn case(&self, index: usize, name: &str) -> Option<(Option<DocCursor<'a>>, Option<&'a str>)> {
        match self.definition()?.0 {
            TypeDefKind::Variant(variant) => {
                let case = variant.cases.get(index).filter(|c| c.name == name)?;
                Some((case.ty.map(|t| self.at(t)), docs(&case.docs)))
            }
            _ => None,
        }
    }

    /// An enum's or flags' named member's doc comment.
    pub fn member(&self, index: usize, name: &str) -> Option<&'a str> {
        match self.definition()?.0 {
            TypeDefKind::Enum(e) => e
                .cases
                .get(index)
                .filter(|c| c.name == name)
                .and_then(|c| docs(&c.docs)),
            TypeDefKind::Flags(f) => f
                .flags
                .get(index)
                .filter(|c| c.name == name)
                .and_then(|c| docs(&c.docs)),
            _ => None,
        }
    }

    /// The element type of a list, an option's inner type, a tuple's member.
    pub fn inner(&self, index: usize) -> Option<DocCursor<'a>> {
        match self.definition()?.0 {
            TypeDefKind::List(t) | TypeDefKind::Option(t) | TypeDefKind::FixedLengthList(t, _)
                if index == 0 =>
            {
                Some(self.at(*t))
            }
            TypeDefKind::Tuple(tuple) => tuple.types.get(index).map(|t| self.at(*t)),
            TypeDefKind::Map(_, v) if index == 1 => Some(self.at(*v)),
            _ => None,
        }
    }

    /// A result's ok (`true`) or error type.
    pub fn result_case(&self, ok: bool) -> Option<DocCursor<'a>> {
        match self.definition()?.0 {
            TypeDefKind::Result(r) => if ok { r.ok } else { r.err }.map(|t| self.at(t)),
            _ => None,
        }
    }
}

fn docs(docs: &wit_parser::Docs) -> Option<&str> {
    docs.contents.as_deref().map(str::trim).filter(|d| !d.is_empty())
}

/// The text of the first `agent-tool-wit` custom section, in the component or any module
/// or component nested in it.
fn embedded(bytes: &[u8]) -> Option<String> {
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        if let Ok(wasmparser::Payload::CustomSection(section)) = payload
            && section.name() == WIT_SECTION
            && section.data().len() <= MAX_WIT_BYTES
        {
            return String::from_utf8(section.data().to_vec()).ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIT: &str = r#"
package example:demo@0.1.0;

interface tools {
    /// How loud.
    enum level { /// Quietly.
        low, high }
    /// What to do.
    record job {
        /// The file to read.
        path: string,
        level: option<level>,
    }
    /// Runs a job.
    run: func(job: job, names: list<string>) -> result<u32, string>;
}

world demo {
    export tools;
    /// At the top.
    export ping: func() -> string;
}
"#;

    fn parsed() -> WitDocs {
        let mut resolve = Resolve::default();
        resolve.push_str("demo.wit", WIT).unwrap();
        WitDocs {
            resolve,
            origin: "test".into(),
        }
    }

    #[test]
    fn docs_are_found_by_export_name_and_walked_by_structure() {
        let wit = parsed();
        let run = wit.function(Some("example:demo/tools@0.1.0"), "run").unwrap();
        assert_eq!(run.description(), Some("Runs a job."));
        let job = run.param(0, "job").unwrap();
        assert_eq!(job.description(), Some("What to do."));
        let (path, path_docs) = job.field(0, "path").unwrap();
        assert_eq!(path_docs, Some("The file to read."));
        assert!(path.description().is_none());
        let (level, _) = job.field(1, "level").unwrap();
        let level = level.inner(0).unwrap();
        assert_eq!(level.description(), Some("How loud."));
        assert_eq!(level.member(0, "low"), Some("Quietly."));
        assert!(
            run.param(0, "other").is_none(),
            "a renamed parameter lends no words"
        );
        assert!(job.field(1, "path").is_none());
        assert_eq!(
            wit.function(None, "ping").unwrap().description(),
            Some("At the top.")
        );
        assert!(wit.function(Some("example:other/tools"), "run").is_none());
    }
}
