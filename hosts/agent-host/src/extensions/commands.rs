//! Custom commands: `.agent/commands/NAME.md` in the project and `commands/NAME.md` in the
//! user's configuration folder become `/NAME [arguments]` in chat and `agent-host run
//! --command NAME [arguments]`. The file is a prompt (Claude Code's format): optional front
//! matter (`description`, `argument-hint`), then the text, where `$ARGUMENTS` stands for all
//! the arguments and `$1` ... `$9` for each word of them.

use super::Scope;
use super::markdown::{self, Root};
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

/// The most commands read from one folder.
const MAX_COMMANDS: usize = 500;

/// The commands of the user's folder and of the project's, sorted by name. The user's own
/// command keeps its name: a project's of the same name is left out (a repository cannot
/// change what `/deploy` sends). Nothing in a `denied` folder is read. Files that cannot be
/// used are named in the second list (the others still load).
pub fn discover(
    workspace: Option<&Path>,
    user_dir: Option<&Path>,
    denied: &[PathBuf],
) -> (Vec<CustomCommand>, Vec<String>) {
    let mut commands: Vec<CustomCommand> = Vec::new();
    let mut problems = Vec::new();
    let roots = [
        user_dir
            .and_then(|dir| Root::open(&dir.join("commands")))
            .map(|r| (r.denying(denied), PathBuf::new(), Scope::User)),
        workspace
            .and_then(Root::open)
            .map(|r| (r.denying(denied), PathBuf::from(PROJECT_DIR), Scope::Project)),
    ];
    for (root, dir, scope) in roots.into_iter().flatten() {
        for command in read_dir(&root, &dir, scope, &mut problems) {
            if let Some(kept) = commands.iter().find(|c| c.name == command.name) {
                problems.push(format!(
                    "{}: the user's command {} keeps the name /{}",
                    command.path.display(),
                    kept.path.display(),
                    command.name
                ));
                continue;
            }
            commands.push(command);
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    (commands, problems)
}

fn read_dir(root: &Root, dir: &Path, scope: Scope, problems: &mut Vec<String>) -> Vec<CustomCommand> {
    let mut commands = Vec::new();
    let files = root
        .entries(dir)
        .into_iter()
        .filter(|e| !e.is_dir && e.name.ends_with(".md"));
    for entry in files.take(MAX_COMMANDS) {
        let relative = dir.join(&entry.name);
        let path = PathBuf::from(root.display(&relative));
        let name = entry.name.trim_end_matches(".md").to_string();
        if !markdown::is_name(&name) {
            problems.push(format!(
                "{}: a command's file name is its name: letters, digits, '-' and '_'",
                path.display()
            ));
            continue;
        }
        match root.read(&relative) {
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
    fn the_users_command_keeps_its_name_and_mistakes_are_named() {
        let user = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        write(
            &user.path().join("commands"),
            "deploy.md",
            "The user's release checklist.",
        );
        let project = work.path().join(PROJECT_DIR);
        write(
            &project,
            "review.md",
            "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 then $2.\n",
        );
        write(&project, "deploy.md", "The repository's own deploy.");
        write(&project, "bad name.md", "x");
        write(&project, "notes.txt", "not a command");
        let (commands, problems) = discover(Some(work.path()), Some(user.path()), &[]);
        let names: Vec<_> = commands.iter().map(|c| (c.name.as_str(), c.scope)).collect();
        assert_eq!(names, [("deploy", Scope::User), ("review", Scope::Project)]);
        assert_eq!(
            find(&commands, "deploy").unwrap().expand(""),
            "The user's release checklist."
        );
        let review = find(&commands, "review").unwrap();
        assert_eq!(review.usage(), "/review FILE");
        assert_eq!(review.summary(), "Review a file (project)");
        assert_eq!(review.expand("a.rs b.rs"), "Review a.rs then b.rs.");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("bad name.md")), "{problems:?}");
        assert!(
            problems.iter().any(|p| p.contains("keeps the name /deploy")),
            "{problems:?}"
        );
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
