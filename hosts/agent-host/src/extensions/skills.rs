//! Skills (the open skills format Claude Code and codex read): a folder with a `SKILL.md`
//! whose front matter gives its `name` and `description`, under `.agent/skills/` in the
//! project and `skills/` in the user's configuration folder. The system prompt lists each
//! skill's name and description; the model loads a skill's instructions, and any file of its
//! folder, on demand with the `load_skill` tool (progressive disclosure: a skill costs its
//! description until it is used).

use super::{Scope, markdown};
use crate::approval::ToolCategory;
use crate::host_tools::HostTool;
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub scope: Scope,
    /// The skill's folder.
    pub dir: PathBuf,
}

/// The skills of the user's folder and of the project's, sorted by name; a project's skill
/// replaces the user's of the same name. Folders that cannot be used are named in the second
/// list.
pub fn discover(workspace: Option<&Path>, user_dir: Option<&Path>) -> (Vec<Skill>, Vec<String>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut problems = Vec::new();
    let dirs = [
        user_dir.map(|dir| (dir.join("skills"), Scope::User)),
        workspace.map(|dir| (dir.join(PROJECT_DIR), Scope::Project)),
    ];
    for (dir, scope) in dirs.into_iter().flatten() {
        // A project's folder must be a folder, not a link out of the repository.
        if scope == Scope::Project && !markdown::is_real_dir(&dir) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        folders.sort();
        for folder in folders {
            match read_skill(&folder, scope) {
                Ok(skill) => {
                    skills.retain(|s| s.name != skill.name);
                    skills.push(skill);
                }
                Err(problem) => problems.push(problem),
            }
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    (skills, problems)
}

fn read_skill(folder: &Path, scope: Scope) -> Result<Skill, String> {
    let file = folder.join("SKILL.md");
    let text = markdown::read(&file)?;
    let (fields, _) = markdown::front_matter(&text);
    let folder_name = folder.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let name = fields.get("name").map_or(folder_name, String::as_str).to_string();
    if !markdown::is_name(&name) {
        return Err(format!(
            "{}: the skill's name {name:?} takes letters, digits, '-' and '_' (at most 64)",
            file.display()
        ));
    }
    let description = fields
        .get("description")
        .map(|d| d.trim())
        .filter(|d| !d.is_empty())
        .ok_or_else(|| format!("{}: the front matter has no description", file.display()))?;
    Ok(Skill {
        name,
        description: description.chars().take(MAX_DESCRIPTION).collect(),
        scope,
        dir: folder.to_path_buf(),
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
    for skill in skills {
        text.push_str(&format!("- {}: {}\n", skill.name, one_line(&skill.description)));
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
                let text = markdown::read(&skill.dir.join("SKILL.md"))?;
                let (_, body) = markdown::front_matter(&text);
                let others = files_of(&skill.dir);
                let mut out = body.trim().to_string();
                if !others.is_empty() {
                    out.push_str(&format!(
                        "\n\n[Files of this skill, loaded with {TOOL_NAME} and file: {}]",
                        others.join(", ")
                    ));
                }
                Ok(out)
            }
            // Only a file inside the skill's folder, named without `..` or a root, reached
            // without links.
            Some(file) => markdown::read_beneath(&skill.dir, Path::new(file))
                .map_err(|e| format!("{file:?} cannot be loaded from the skill {name:?}: {e}")),
        }
    }
}

/// The regular files of a skill's folder and its subfolders, relative, but SKILL.md.
fn files_of(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&relative)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = relative.join(entry.file_name());
            match entry.file_type() {
                Ok(t) if t.is_dir() && files.len() < 200 => pending.push(path),
                Ok(t) if t.is_file() && path != Path::new("SKILL.md") => {
                    files.push(path.display().to_string());
                }
                _ => {}
            }
        }
    }
    files.sort();
    files.truncate(200);
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

    async fn call(&self, arguments_json: &str) -> Result<String, String> {
        let arguments: serde_json::Value =
            serde_json::from_str(arguments_json).map_err(|e| format!("the arguments are not JSON: {e}"))?;
        let name = arguments["name"].as_str().ok_or("name (a string) is required")?;
        self.load(name, arguments["file"].as_str())
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
            "pdf",
            "---\nname: pdf\ndescription: User's PDF skill\n---\nOld.",
        );
        skill(
            &project,
            "pdf",
            "---\nname: pdf\ndescription: Fill PDF forms.\n  Use for .pdf files\n---\n# PDF\nRun scripts/fill.py.\n",
        );
        std::fs::create_dir_all(project.join("pdf/scripts")).unwrap();
        std::fs::write(project.join("pdf/scripts/fill.py"), "print('fill')\n").unwrap();
        skill(&project, "broken", "no front matter");
        let (skills, problems) = discover(Some(work.path()), Some(user.path()));
        assert_eq!(skills.len(), 1);
        assert_eq!(skills[0].scope, Scope::Project);
        assert!(
            problems[0].contains("broken/SKILL.md: the front matter has no description"),
            "{problems:?}"
        );
        let section = prompt_section(&skills).unwrap();
        assert!(section.contains("- pdf: Fill PDF forms."), "{section}");

        let tool = LoadSkill::new(skills);
        let body = tool.call(r#"{"name":"pdf"}"#).await.unwrap();
        assert_eq!(
            body,
            "# PDF\nRun scripts/fill.py.\n\n[Files of this skill, loaded with load_skill and file: scripts/fill.py]"
        );
        assert_eq!(
            tool.call(r#"{"name":"pdf","file":"scripts/fill.py"}"#)
                .await
                .unwrap(),
            "print('fill')\n"
        );
        let escape = tool
            .call(r#"{"name":"pdf","file":"../../../etc/passwd"}"#)
            .await
            .unwrap_err();
        assert!(escape.contains("is not a path inside the folder"), "{escape}");
        // A folder of the skill that is a link (to the user's keys, say) is not followed.
        let secrets = tempfile::tempdir().unwrap();
        std::fs::write(secrets.path().join("id_key"), "private key").unwrap();
        std::os::unix::fs::symlink(secrets.path(), project.join("pdf/keys")).unwrap();
        let linked = tool
            .call(r#"{"name":"pdf","file":"keys/id_key"}"#)
            .await
            .unwrap_err();
        assert!(linked.contains("links are not followed"), "{linked}");
        let absolute = tool
            .call(r#"{"name":"pdf","file":"/etc/passwd"}"#)
            .await
            .unwrap_err();
        assert!(absolute.contains("not a path inside"), "{absolute}");
        let unknown = tool.call(r#"{"name":"docx"}"#).await.unwrap_err();
        assert_eq!(unknown, "there is no skill \"docx\"; the skills are: pdf");
    }
}
