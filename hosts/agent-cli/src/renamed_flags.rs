//! Flags that were renamed so that no two names collide (`--env` is where tools run, so the
//! variables' policy is `--vars`; every LLM API means output tokens by "max tokens", so the
//! session's budget is `--max-session-tokens`). An old name stays as a hidden alias of the
//! new one, declared with the flag itself; using it prints a warning.

use std::ffi::OsString;

/// (old name, new name) of every hidden alias in `command` and its subcommands.
fn renamed(command: &clap::Command) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = command
        .get_arguments()
        .filter_map(|arg| Some((arg, arg.get_long()?)))
        .flat_map(|(arg, long)| {
            let visible = arg.get_visible_aliases().unwrap_or_default();
            arg.get_all_aliases()
                .unwrap_or_default()
                .into_iter()
                .filter(move |alias| !visible.contains(alias))
                .map(move |alias| (format!("--{alias}"), format!("--{long}")))
        })
        .collect();
    for sub in command.get_subcommands() {
        pairs.extend(renamed(sub));
    }
    pairs
}

/// A warning for each old name among the flags (what follows `--` is not a flag).
pub fn warnings(command: &clap::Command, args: impl IntoIterator<Item = OsString>) -> Vec<String> {
    let renamed = renamed(command);
    let mut seen = Vec::new();
    for arg in args.into_iter().take_while(|arg| arg != "--") {
        let Some(arg) = arg.to_str() else { continue };
        let name = arg.split('=').next().unwrap_or(arg);
        if let Some((old, new)) = renamed.iter().find(|(old, _)| old == name) {
            let warning = format!("{old} is now {new} (the old name still works, for now)");
            if !seen.contains(&warning) {
                seen.push(warning);
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        #[arg(long = "vars", alias = "env-policy")]
        vars: Option<String>,
        #[arg(long = "cd", visible_alias = "cwd")]
        cd: Option<String>,
    }

    #[test]
    fn hidden_aliases_are_old_names_and_values_after_dashdash_are_not_flags() {
        let command = <Cli as clap::CommandFactory>::command();
        let args = [
            "agent-host",
            "--env-policy=core",
            "--cwd",
            "x",
            "--",
            "--env-policy",
        ];
        let found = warnings(&command, args.iter().map(OsString::from));
        assert_eq!(
            found,
            ["--env-policy is now --vars (the old name still works, for now)"]
        );
    }
}
