//! The *shape* of a simple command: whether it does more than its program and subcommand
//! say. A remembered prefix (`ls`, `find`, `git diff`) covers a later command only when that
//! command is plain, and "always" remembers a command that is not plain only as its exact
//! line, so approving `ls -la` never lets `ls > ~/.bashrc` or `find . -exec sh -c ...`
//! through.
//!
//! A simple command is not plain when it
//! - has a redirection that writes a file: `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, or `>&file`.
//!   Reading a file (`< in.txt`) is harmless: the program could read it by name as well.
//!   Duplicating or closing a descriptor (`2>&1`, `>&-`) touches no file. Writes to
//!   `/dev/null` are discarded output and count as harmless too;
//! - uses one of the options that make its program run other programs or write files, all
//!   listed in `PROGRAMS` below (`find -exec`, `rg --pre`, `git -c`, `sed -i`, sed's `e`
//!   and `w` commands, awk's `system`, `tar --to-command`, `rsync -e`, `curl -o`, ...).
//!
//! Wrappers that run the program given as their arguments (`xargs`, `env`, `sudo`, shells)
//! have no prefix at all (see [`super::command_prefix`]); substitutions make the line opaque
//! (see [`super::command_split`]).
//!
//! The table leans towards asking: an option is matched alone, with its value attached, as
//! `--name=value`, as an abbreviation of its long name (GNU programs accept unambiguous
//! ones) and, for one-letter options, bundled with others (`-ni` is `-n -i`), even where the
//! same letter happens to be harmless. A false match only means asking again.

use super::command_split::{Redirect, RedirectKind, is_assignment};
use super::inline_scripts::{awk_program_is_risky, sed_script_is_risky};

/// Something in a command's arguments that makes it run other programs or write files.
#[derive(Debug, Clone, Copy)]
enum Risk {
    /// `--name`, `--name=value`, or an abbreviation such as `--na`.
    Long(&'static str),
    /// `-x`, `-xVALUE`, or `x` among bundled one-letter options (`-ax`).
    Short(char),
    /// This word exactly (find's `-exec`, `git bisect run`).
    Word(&'static str),
    /// Any word starting with this (`+` for less's start-up commands, `of=` for dd).
    WordStart(&'static str),
    /// A sed script with the `e`, `w` or `W` command or `s` flag (or one not understood).
    SedScript,
    /// An awk program with `system`, `|`, `>`, `@load` or `@include`.
    AwkProgram,
    /// Any use at all (for a subcommand whose every use can set up programs to run).
    Any,
}

/// Where in the arguments a [`Risk`] counts.
#[derive(Debug, Clone, Copy)]
enum Scope {
    /// Every argument after the program.
    Arguments,
    /// The options before the subcommand (git's `-c` is `git switch -c`'s harmless `-c`
    /// after it).
    Global,
    /// The arguments after this subcommand.
    Subcommand(&'static str),
}

/// A program's risky options.
struct Program {
    /// Its names (GNU versions installed with a `g` prefix included).
    names: &'static [&'static str],
    /// Its options before the subcommand that take the next word as their value, to find
    /// the subcommand after them (`git -C dir log`).
    global_values: &'static [&'static str],
    risks: &'static [(Scope, &'static [Risk])],
}

use Risk::{Any, AwkProgram, Long, SedScript, Short, Word, WordStart};
use Scope::{Arguments, Global, Subcommand};

/// The one list of options that make a program run other programs or write files, after
/// codex's "known safe command" checks and the programs agents run most.
const PROGRAMS: &[Program] = &[
    Program {
        names: &["find", "gfind"],
        global_values: &[],
        risks: &[(
            Arguments,
            &[
                Word("-exec"),
                Word("-execdir"),
                Word("-ok"),
                Word("-okdir"),
                Word("-delete"),
                Word("-fls"),
                Word("-fprint"),
                Word("-fprint0"),
                Word("-fprintf"),
            ],
        )],
    },
    Program {
        names: &["fd", "fdfind"],
        global_values: &[],
        risks: &[(
            Arguments,
            &[Short('x'), Long("exec"), Short('X'), Long("exec-batch")],
        )],
    },
    Program {
        names: &["rg"],
        global_values: &[],
        // `--pre` runs a program on every file; `-z` runs decompressors.
        risks: &[(
            Arguments,
            &[Long("pre"), Long("hostname-bin"), Short('z'), Long("search-zip")],
        )],
    },
    Program {
        names: &["sed", "gsed"],
        global_values: &[],
        // `-f` reads a script this check cannot see.
        risks: &[(
            Arguments,
            &[Short('i'), Long("in-place"), Short('f'), Long("file"), SedScript],
        )],
    },
    Program {
        names: &["awk", "gawk", "mawk", "nawk"],
        global_values: &[],
        // `-f`, `-i` and `-E` read programs this check cannot see; `-l` loads a library.
        risks: &[(
            Arguments,
            &[
                Short('f'),
                Long("file"),
                Short('E'),
                Long("exec"),
                Short('i'),
                Long("include"),
                Short('l'),
                Long("load"),
                AwkProgram,
            ],
        )],
    },
    Program {
        names: &["git"],
        global_values: &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--config-env",
            "--super-prefix",
        ],
        risks: &[
            // Configuration can name programs to run (core.pager, core.fsmonitor, aliases).
            (
                Global,
                &[
                    Short('c'),
                    Long("config-env"),
                    Long("exec-path"),
                    Short('p'),
                    Long("paginate"),
                ],
            ),
            (
                Arguments,
                &[
                    Long("output"),
                    Long("ext-diff"),
                    Long("textconv"),
                    Long("upload-pack"),
                    Long("receive-pack"),
                    Long("exec"),
                ],
            ),
            (Subcommand("rebase"), &[Short('x')]),
            // A template directory brings hooks; `-c` sets configuration in the clone.
            (
                Subcommand("clone"),
                &[Short('u'), Short('c'), Long("config"), Long("template")],
            ),
            (Subcommand("init"), &[Long("template")]),
            (Subcommand("archive"), &[Short('o')]),
            (Subcommand("ls-remote"), &[Short('u')]),
            (Subcommand("grep"), &[Short('O'), Long("open-files-in-pager")]),
            (Subcommand("difftool"), &[Short('x'), Long("extcmd")]),
            (Subcommand("bisect"), &[Word("run")]),
            (Subcommand("submodule"), &[Word("foreach")]),
            (Subcommand("filter-branch"), &[Any]),
            (Subcommand("config"), &[Any]),
            (
                Subcommand("send-email"),
                &[
                    Long("sendmail-cmd"),
                    Long("smtp-server"),
                    Long("to-cmd"),
                    Long("cc-cmd"),
                    Long("header-cmd"),
                ],
            ),
        ],
    },
    Program {
        names: &["tar", "gtar", "bsdtar"],
        global_values: &[],
        // Programs it runs, then the modes that write (listing with `-t` is what a
        // remembered `tar` should stand for; old-style `tar xf` keeps its mode in the prefix).
        risks: &[(
            Arguments,
            &[
                Long("to-command"),
                Long("checkpoint-action"),
                Long("use-compress-program"),
                Short('I'),
                Long("info-script"),
                Long("new-volume-script"),
                Short('F'),
                Long("rsh-command"),
                Long("rmt-command"),
                Short('x'),
                Long("extract"),
                Long("get"),
                Short('c'),
                Long("create"),
                Short('r'),
                Long("append"),
                Short('u'),
                Long("update"),
                Short('A'),
                Long("catenate"),
                Long("concatenate"),
                Long("delete"),
            ],
        )],
    },
    Program {
        names: &["rsync"],
        global_values: &[],
        risks: &[(Arguments, &[Short('e'), Long("rsh"), Long("rsync-path")])],
    },
    Program {
        names: &["scp"],
        global_values: &[],
        // `-o` passes ssh options such as ProxyCommand.
        risks: &[(Arguments, &[Short('S'), Short('o'), Short('F')])],
    },
    Program {
        names: &["less"],
        global_values: &[],
        // `+cmd` runs less commands (`!` runs a shell); a lesskey file can set LESSOPEN.
        risks: &[(
            Arguments,
            &[
                WordStart("+"),
                Short('k'),
                Long("lesskey-file"),
                Long("lesskey-src"),
                Long("lesskey-content"),
            ],
        )],
    },
    Program {
        names: &["man"],
        global_values: &[],
        risks: &[(
            Arguments,
            &[
                Short('P'),
                Long("pager"),
                Short('H'),
                Long("html"),
                Short('C'),
                Long("config-file"),
            ],
        )],
    },
    Program {
        names: &["sort"],
        global_values: &[],
        risks: &[(Arguments, &[Short('o'), Long("output"), Long("compress-program")])],
    },
    Program {
        names: &["base64"],
        global_values: &[],
        risks: &[(Arguments, &[Short('o'), Long("output")])],
    },
    Program {
        names: &["dd"],
        global_values: &[],
        risks: &[(Arguments, &[WordStart("of=")])],
    },
    Program {
        names: &["zip"],
        global_values: &[],
        risks: &[(Arguments, &[WordStart("-TT"), Long("unzip-command")])],
    },
    Program {
        names: &["curl"],
        global_values: &[],
        risks: &[(
            Arguments,
            &[
                Short('o'),
                Long("output"),
                Long("output-dir"),
                Short('O'),
                Long("remote-name"),
                Long("remote-name-all"),
                Short('D'),
                Long("dump-header"),
                Short('c'),
                Long("cookie-jar"),
                Long("trace"),
                Long("trace-ascii"),
                Long("libcurl"),
                Long("stderr"),
                Long("etag-save"),
                Long("hsts"),
                Long("alt-svc"),
                // A config file can hold any of the above.
                Short('K'),
                Long("config"),
            ],
        )],
    },
    Program {
        names: &["wget"],
        global_values: &[],
        risks: &[(
            Arguments,
            &[
                Short('O'),
                Long("output-document"),
                Short('o'),
                Long("output-file"),
                Short('a'),
                Long("append-output"),
                Short('P'),
                Long("directory-prefix"),
                // wgetrc commands, and a program it runs for passwords.
                Short('e'),
                Long("execute"),
                Long("use-askpass"),
            ],
        )],
    },
    Program {
        names: &["cargo"],
        global_values: &[],
        // `--config` can set a runner or a rustc wrapper: any program.
        risks: &[(Arguments, &[Long("config")])],
    },
    Program {
        names: &["npm", "pnpm", "yarn", "npx"],
        global_values: &[],
        risks: &[(Arguments, &[Long("script-shell"), Long("node-options")])],
    },
];

/// Whether a redirection writes a file (`/dev/null` excepted, see the module documentation).
pub fn writes_a_file(redirect: &Redirect) -> bool {
    let target = redirect.target.as_str();
    let duplicate = !target.is_empty() && target.trim_end_matches('-').chars().all(|c| c.is_ascii_digit());
    match redirect.kind {
        RedirectKind::Read => false,
        RedirectKind::Duplicate if duplicate => false,
        RedirectKind::Duplicate | RedirectKind::Write => target != "/dev/null",
    }
}

/// Whether `words` (a program and its arguments) use an option listed in `PROGRAMS`.
pub fn has_risky_option(words: &[String]) -> bool {
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    let Some(entry) = program_entry(program) else {
        return false;
    };
    let subcommand = subcommand_index(entry, args);
    entry.risks.iter().any(|(scope, risks)| {
        let scoped = match (scope, subcommand) {
            (Arguments, _) => args,
            (Global, Some(at)) => &args[..at],
            (Global, None) => args,
            (Subcommand(name), Some(at)) if args[at] == *name => &args[at + 1..],
            (Subcommand(_), _) => return false,
        };
        risks.iter().any(|risk| found(*risk, scoped))
    })
}

/// What a remembered prefix does not cover, for showing it: `-exec, -delete, ...`; `None`
/// when its program has no risky options.
pub fn exclusions(prefix: &[String]) -> Option<String> {
    let assignments = prefix.iter().take_while(|w| is_assignment(w)).count();
    let (program, rest) = prefix[assignments..].split_first()?;
    let entry = program_entry(program)?;
    let subcommand = rest.first().map(String::as_str);
    let mut shown: Vec<String> = Vec::new();
    for (scope, risks) in entry.risks {
        // A prefix without a subcommand covers them all, so each is named with its own.
        let under = match scope {
            Subcommand(name) if subcommand.is_none() => Some(*name),
            Subcommand(name) if subcommand != Some(*name) => continue,
            _ => None,
        };
        for risk in *risks {
            let label = match risk {
                Long(name) => format!("--{name}"),
                Short(letter) => format!("-{letter}"),
                Word(word) => (*word).to_string(),
                WordStart(start) => format!("{start}..."),
                SedScript => "the e, w or W commands".to_string(),
                AwkProgram => "system, | or > in the program".to_string(),
                Any => String::new(),
            };
            let label = match under {
                Some(sub) => format!("{sub} {label}").trim_end().to_string(),
                None => label,
            };
            if !label.is_empty() && !shown.contains(&label) {
                shown.push(label);
            }
        }
    }
    (!shown.is_empty()).then(|| shown.join(", "))
}

fn program_entry(program: &str) -> Option<&'static Program> {
    let name = program.rsplit('/').next().unwrap_or(program);
    PROGRAMS.iter().find(|p| p.names.contains(&name))
}

/// Where the subcommand is in `args`: the first word that is neither an option nor the
/// value of one of the program's global options.
fn subcommand_index(entry: &Program, args: &[String]) -> Option<usize> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        if !word.starts_with('-') {
            return Some(i);
        }
        i += if entry.global_values.contains(&word.as_str()) {
            2
        } else {
            1
        };
    }
    None
}

/// Whether `risk` is in `args`.
fn found(risk: Risk, args: &[String]) -> bool {
    match risk {
        Long(name) => args.iter().any(|word| {
            word.strip_prefix("--").is_some_and(|long| {
                let given = long.split_once('=').map_or(long, |(given, _)| given);
                !given.is_empty() && name.starts_with(given)
            })
        }),
        Short(letter) => args.iter().any(|word| {
            word.strip_prefix('-')
                .is_some_and(|letters| !letters.starts_with('-') && letters.contains(letter))
        }),
        Word(risky) => args.iter().any(|word| word == risky),
        WordStart(start) => args.iter().any(|word| word.starts_with(start)),
        SedScript => sed_script_is_risky(args),
        AwkProgram => awk_program_is_risky(args),
        Any => true,
    }
}
