//! Skills (the open skills format Claude Code and codex read): a folder with a `SKILL.md`
//! whose front matter gives its `name` and `description`, under `.agent/skills/` in the
//! project and `skills/` in the user's configuration folder. The system prompt lists each
//! skill's name and description; the model loads a skill's instructions, and any file of its
//! folder, on demand with the `load_skill` tool (progressive disclosure: a skill costs its
//! description until it is used).

use super::Scope;
use super::markdown::{self, Root};
use crate::approval::ToolCategory;
use crate::host_tools::{HostTool, ToolOutput};
use agent_protocol::ToolDefinition;
use async_trait::async_trait;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Where a project keeps its skills.
pub const PROJECT_DIR: &str = ".agent/skills";
/// The tool that loads them.
pub const TOOL_NAME: &str = "load_skill";
/// Descriptions longer than this are cut in the prompt (the format allows 1024).
const MAX_DESCRIPTION: usize = 1024;

/// The skills section's budget in the system prompt (the project docs' is 32 KiB): past
/// it, skills are named without their descriptions, and past twice it, counted.
const SECTION_BUDGET: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub scope: Scope,
    /// What the skill's folder is read beneath, and the folder, relative to it.
    root: Root,
    dir: PathBuf,
}

impl Skill {
    /// Where its SKILL.md is, for messages.
    pub fn file(&self) -> String {
        self.root.display(&self.dir.join("SKILL.md"))
    }
}

/// The skills of the user's folder and of the project's, sorted by name. The user's own
/// skill keeps its name: a project's of the same name is left out. Nothing in a `denied`
/// folder is read, when found or when loaded. Folders that cannot be used are named in the
/// second list.
pub fn discover(
    workspace: Option<&Path>,
    user_dir: Option<&Path>,
    denied: &[PathBuf],
) -> (Vec<Skill>, Vec<String>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut problems = Vec::new();
    let roots = [
        user_dir
            .and_then(|dir| Root::open(&dir.join("skills")))
            .map(|r| (r.denying(denied), PathBuf::new(), Scope::User)),
        workspace
            .and_then(Root::open)
            .map(|r| (r.denying(denied), PathBuf::from(PROJECT_DIR), Scope::Project)),
    ];
    for (root, dir, scope) in roots.into_iter().flatten() {
        for entry in root
            .entries(&dir)
            .into_iter()
            .filter(|e| e.is_dir)
            .take(MAX_SKILLS)
        {
            match read_skill(&root, &dir.join(&entry.name), &entry.name, scope) {
                Ok(skill) => match skills.iter().find(|s| s.name == skill.name) {
                    Some(kept) => problems.push(format!(
                        "{}: the skill {} ({}) keeps its name",
                        skill.file(),
                        kept.name,
                        kept.file()
                    )),
                    None => skills.push(skill),
                },
                Err(problem) => problems.push(problem),
            }
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    (skills, problems)
}

/// The most skill folders read from one place.
const MAX_SKILLS: usize = 500;

fn read_skill(root: &Root, dir: &Path, folder_name: &str, scope: Scope) -> Result<Skill, String> {
    let relative = dir.join("SKILL.md");
    let shown = root.display(&relative);
    let text = root.read(&relative)?;
    let (fields, _) = markdown::front_matter(&text);
    let name = fields.get("name").map_or(folder_name, String::as_str).to_string();
    if !markdown::is_name(&name) {
        return Err(format!(
            "{shown}: the skill's name {name:?} takes letters, digits, '-' and '_' (at most 64)"
        ));
    }
    let description = fields
        .get("description")
        .map(|d| d.trim())
        .filter(|d| !d.is_empty())
        .ok_or_else(|| format!("{shown}: the front matter has no description"))?;
    Ok(Skill {
        name,
        description: description.chars().take(MAX_DESCRIPTION).collect(),
        scope,
        root: root.clone(),
        dir: dir.to_path_buf(),
    })
}

/// The system prompt's section that lists the skills; `None` without skills.
pub fn prompt_section(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut text = format!(
        "<skills>\nSkills are instructions for particular tasks. When a task matches a skill's \
         description, call {TOOL_NAME} with its name before you start, and follow what it says.\n"
    );
    let mut unlisted = 0;
    for skill in skills {
        let line = format!("- {}: {}\n", skill.name, one_line(&skill.description));
        if text.len() + line.len() <= SECTION_BUDGET {
            text.push_str(&line);
        } else if text.len() + skill.name.len() + 3 <= 2 * SECTION_BUDGET {
            text.push_str(&format!("- {}\n", skill.name));
        } else {
            unlisted += 1;
        }
    }
    if unlisted > 0 {
        text.push_str(&format!("({unlisted} more skills are not listed.)\n"));
    }
    text.push_str("</skills>");
    Some(text)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `load_skill`: a skill's instructions (its SKILL.md without the front matter) and the
/// names of the other files in its folder, or one of those files.
pub struct LoadSkill {
    skills: Vec<Skill>,
}

impl LoadSkill {
    pub fn new(skills: Vec<Skill>) -> Self {
        Self { skills }
    }

    fn load(&self, name: &str, file: Option<&str>) -> Result<String, String> {
        let skill = self.skills.iter().find(|s| s.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            format!("there is no skill {name:?}; the skills are: {}", names.join(", "))
        })?;
        match file {
            None => {
                let text = skill.root.read(&skill.dir.join("SKILL.md"))?;
                let (_, body) = markdown::front_matter(&text);
                let others = files_of(&skill.root, &skill.dir);
                let mut out = body.trim().to_string();
                if !others.is_empty() {
                    out.push_str(&format!(
                        "\n\n[Files of this skill, loaded with {TOOL_NAME} and file: {}]",
                        others.join(", ")
                    ));
                }
                Ok(out)
            }
            // Only a file inside the skill's folder, named without `..` or a root, and read
            // beneath the root it was found in.
            Some(file) => {
                let relative = Path::new(file);
                if !relative
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
                {
                    return Err(format!("{file:?} is not a path inside the skill's folder"));
                }
                skill
                    .root
                    .read(&skill.dir.join(relative))
                    .map_err(|e| format!("{file:?} cannot be loaded from the skill {name:?}: {e}"))
            }
        }
    }
}

/// The regular files of a skill's folder and its subfolders (not through links), relative,
/// but SKILL.md; at most 200.
fn files_of(root: &Root, dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in root.entries(&dir.join(&relative)) {
            let path = relative.join(&entry.name);
            if entry.is_dir {
                if pending.len() < 200 {
                    pending.push(path);
                }
            } else if path != Path::new("SKILL.md") && files.len() < 200 {
                files.push(path.display().to_string());
            }
        }
    }
    files.sort();
    files
}

#[async_trait]
impl HostTool for LoadSkill {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: TOOL_NAME.to_string(),
            description: "Loads a skill listed in the system prompt: its instructions, with the names of \
                          its other files; with `file`, one of those files."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The skill's name, as listed."},
                    "file": {"type": "string", "description": "A file of the skill's folder (relative), instead of its instructions."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        }
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Read
    }

    fn origin(&self) -> String {
        "the skills (.agent/skills, the user's skills folder)".to_string()
    }

    async fn call(&self, arguments_json: &str) -> Result<ToolOutput, String> {
        let arguments: serde_json::Value =
            serde_json::from_str(arguments_json).map_err(|e| format!("the arguments are not JSON: {e}"))?;
        let name = arguments["name"].as_str().ok_or("name (a string) is required")?;
        self.load(name, arguments["file"].as_str()).map(ToolOutput::from)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn skill(root: &Path, folder: &str, text: &str) {
        std::fs::create_dir_all(root.join(folder)).unwrap();
        std::fs::write(root.join(folder).join("SKILL.md"), text).unwrap();
    }

    #[tokio::test]
    async fn skills_are_listed_by_description_and_loaded_on_demand() {
        let user = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let project = work.path().join(PROJECT_DIR);
        skill(
            &user.path().join("skills"),
            "commits",
            "---\nname: commits\ndescription: The user's commit style.\n---\nImperative mood.",
        );
        skill(
            &project,
            "commits",
            "---\nname: commits\ndescription: The repository's.\n---\nSomething else.",
        );
        skill(
            &project,
            "pdf",
            "---\nname: pdf\ndescription: Fill PDF forms.\n  Use for .pdf files\n---\n# PDF\nRun scripts/fill.py.\n",
        );
        std::fs::create_dir_all(project.join("pdf/scripts")).unwrap();
        std::fs::write(project.join("pdf/scripts/fill.py"), "print('fill')\n").unwrap();
        skill(&project, "broken", "no front matter");
        let (skills, problems) = discover(Some(work.path()), Some(user.path()), &[]);
        let names: Vec<_> = skills.iter().map(|s| (s.name.as_str(), s.scope)).collect();
        assert_eq!(names, [("commits", Scope::User), ("pdf", Scope::Project)]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("broken/SKILL.md: the front matter has no description"))
        );
        assert!(
            problems.iter().any(|p| p.contains("keeps its name")),
            "{problems:?}"
        );
        let section = prompt_section(&skills).unwrap();
        assert!(section.contains("- pdf: Fill PDF forms."), "{section}");
        assert!(
            section.contains("- commits: The user's commit style."),
            "{section}"
        );

        let tool = LoadSkill::new(skills);
        let body = tool.call(r#"{"name":"pdf"}"#).await.unwrap().text;
        assert_eq!(
            body,
            "# PDF\nRun scripts/fill.py.\n\n[Files of this skill, loaded with load_skill and file: scripts/fill.py]"
        );
        let script = tool
            .call(r#"{"name":"pdf","file":"scripts/fill.py"}"#)
            .await
            .unwrap()
            .text;
        assert_eq!(script, "print('fill')\n");
        for file in ["../../../etc/passwd", "/etc/passwd"] {
            let call = format!(r#"{{"name":"pdf","file":"{file}"}}"#);
            let refused = tool.call(&call).await.unwrap_err();
            assert!(
                refused.contains("is not a path inside the skill's folder"),
                "{refused}"
            );
        }
        // A folder of the skill that is a link out (to the user's keys, say) leads nowhere,
        // and neither does `.agent` swapped for a link after the skills were found.
        let secrets = tempfile::tempdir().unwrap();
        std::fs::write(secrets.path().join("id_key"), "private key").unwrap();
        std::fs::create_dir_all(secrets.path().join("skills/pdf")).unwrap();
        std::fs::write(secrets.path().join("skills/pdf/SKILL.md"), "private key").unwrap();
        std::os::unix::fs::symlink(secrets.path(), project.join("pdf/keys")).unwrap();
        let linked = tool
            .call(r#"{"name":"pdf","file":"keys/id_key"}"#)
            .await
            .unwrap_err();
        assert!(linked.contains("cannot be loaded"), "{linked}");
        std::fs::rename(work.path().join(".agent"), work.path().join("was-agent")).unwrap();
        std::os::unix::fs::symlink(secrets.path(), work.path().join(".agent")).unwrap();
        let swapped = tool.call(r#"{"name":"pdf"}"#).await.unwrap_err();
        assert!(!swapped.contains("private key"), "{swapped}");
        let unknown = tool.call(r#"{"name":"docx"}"#).await.unwrap_err();
        assert_eq!(
            unknown,
            "there is no skill \"docx\"; the skills are: commits, pdf"
        );
    }
}
