//! Custom commands: `.agent/commands/NAME.md` in the project and `commands/NAME.md` in the
//! user's configuration folder become `/NAME [arguments]` in chat and `agent-host run
//! --command NAME [arguments]`. The file is a prompt (Claude Code's format): optional front
//! matter (`description`, `argument-hint`), then the text, where `$ARGUMENTS` stands for all
//! the arguments and `$1` ... `$9` for each word of them.

use super::{Scope, markdown};
use std::path::{Path, PathBuf};

/// Where a project keeps its commands.
pub const PROJECT_DIR: &str = ".agent/commands";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    pub name: String,
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    pub scope: Scope,
    pub path: PathBuf,
    body: String,
}

/// The commands of the user's folder and of the project's, sorted by name; a project's
/// command replaces the user's of the same name. Files that cannot be used are named in the
/// second list (the others still load).
pub fn discover(workspace: Option<&Path>, user_dir: Option<&Path>) -> (Vec<CustomCommand>, Vec<String>) {
    let mut commands: Vec<CustomCommand> = Vec::new();
    let mut problems = Vec::new();
    let dirs = [
        user_dir.map(|dir| (dir.join("commands"), Scope::User)),
        workspace.map(|dir| (dir.join(PROJECT_DIR), Scope::Project)),
    ];
    for (dir, scope) in dirs.into_iter().flatten() {
        // A project's folder must be a folder, not a link out of the repository.
        if scope == Scope::Project && !markdown::is_real_dir(&dir) {
            continue;
        }
        for command in read_dir(&dir, scope, &mut problems) {
            commands.retain(|c| c.name != command.name);
            commands.push(command);
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    (commands, problems)
}

fn read_dir(dir: &Path, scope: Scope, problems: &mut Vec<String>) -> Vec<CustomCommand> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    paths.sort();
    let mut commands = Vec::new();
    for path in paths {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if !markdown::is_name(&name) {
            problems.push(format!(
                "{}: a command's file name is its name: letters, digits, '-' and '_'",
                path.display()
            ));
            continue;
        }
        match markdown::read(&path) {
            Ok(text) => {
                let (fields, body) = markdown::front_matter(&text);
                commands.push(CustomCommand {
                    description: fields.get("description").cloned(),
                    argument_hint: fields.get("argument-hint").cloned(),
                    body: body.trim().to_string(),
                    name,
                    scope,
                    path,
                });
            }
            Err(problem) => problems.push(problem),
        }
    }
    commands
}

impl CustomCommand {
    /// The prompt it sends with `arguments`. A prompt that uses none of the placeholders
    /// gets the arguments after it.
    pub fn expand(&self, arguments: &str) -> String {
        let arguments = arguments.trim();
        let words: Vec<&str> = arguments.split_whitespace().collect();
        let mut out = String::with_capacity(self.body.len() + arguments.len());
        let mut used = false;
        let mut rest = self.body.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix("ARGUMENTS") {
                out.push_str(arguments);
                used = true;
                rest = tail;
            } else if let Some(digit) = after
                .chars()
                .next()
                .and_then(|c| c.to_digit(10))
                .filter(|d| *d >= 1)
            {
                out.push_str(words.get(digit as usize - 1).copied().unwrap_or_default());
                used = true;
                rest = &after[1..];
            } else {
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        if !used && !arguments.is_empty() {
            out.push_str("\n\nArguments: ");
            out.push_str(arguments);
        }
        out
    }

    /// `/name [hint]`, for lists.
    pub fn usage(&self) -> String {
        match &self.argument_hint {
            Some(hint) => format!("/{} {hint}", self.name),
            None => format!("/{}", self.name),
        }
    }

    /// What it does and whose it is, for lists.
    pub fn summary(&self) -> String {
        let description = self.description.as_deref().unwrap_or("(no description)");
        format!("{description} ({})", self.scope.as_str())
    }
}

/// The command named `name` (without its slash).
pub fn find<'a>(commands: &'a [CustomCommand], name: &str) -> Option<&'a CustomCommand> {
    commands.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn the_projects_command_replaces_the_users_and_mistakes_are_named() {
        let user = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        write(
            &user.path().join("commands"),
            "review.md",
            "User review of $ARGUMENTS",
        );
        write(&user.path().join("commands"), "mine.md", "Only mine.");
        let project = work.path().join(PROJECT_DIR);
        write(
            &project,
            "review.md",
            "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 then $2.\n",
        );
        write(&project, "bad name.md", "x");
        write(&project, "notes.txt", "not a command");
        let (commands, problems) = discover(Some(work.path()), Some(user.path()));
        let names: Vec<_> = commands.iter().map(|c| (c.name.as_str(), c.scope)).collect();
        assert_eq!(names, [("mine", Scope::User), ("review", Scope::Project)]);
        let review = find(&commands, "review").unwrap();
        assert_eq!(review.usage(), "/review FILE");
        assert_eq!(review.summary(), "Review a file (project)");
        assert_eq!(review.expand("a.rs b.rs"), "Review a.rs then b.rs.");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("bad name.md"), "{problems:?}");
    }

    #[test]
    fn arguments_fill_the_placeholders_or_follow_the_prompt() {
        let command = |body: &str| CustomCommand {
            name: "c".into(),
            description: None,
            argument_hint: None,
            scope: Scope::User,
            path: PathBuf::new(),
            body: body.into(),
        };
        assert_eq!(
            command("Fix $ARGUMENTS now").expand(" issue 12 "),
            "Fix issue 12 now"
        );
        assert_eq!(command("Costs $5 and $0; $9").expand("a"), "Costs  and $0; ");
        assert_eq!(
            command("Explain.").expand("main.rs"),
            "Explain.\n\nArguments: main.rs"
        );
        assert_eq!(command("Explain.").expand(""), "Explain.");
        assert_eq!(command("Ends with $").expand(""), "Ends with $");
    }
}
