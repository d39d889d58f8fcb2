//! The inline programs of sed and awk, read just far enough to tell whether they run other
//! programs or write files. Both lean towards "risky": what is not understood counts as
//! risky, so the command is asked about again rather than covered by a remembered prefix.

/// Whether sed's arguments give it a script that runs commands or writes files: the `e`
/// command or `s///e`, the `w`/`W` commands or `s///w`, or a script not understood. The
/// scripts are the values of `-e`/`--expression`, else the first operand. (`-i` and `-f`
/// are risky options of their own, in the table of `command_shape`.)
pub fn sed_script_is_risky(args: &[String]) -> bool {
    let mut scripts: Vec<&str> = Vec::new();
    let mut expressions = false;
    let mut first_operand = None;
    let mut options_ended = false;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        if options_ended || !word.starts_with('-') || word == "-" {
            first_operand = first_operand.or(Some(word.as_str()));
            continue;
        }
        if word == "--" {
            options_ended = true;
            continue;
        }
        // What the option takes, and the value attached to it (`--expression=1p`, `-e1p`).
        let (takes, attached) = match word.strip_prefix("--") {
            Some(long) => {
                let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
                // GNU sed accepts unambiguous abbreviations: `--expr`.
                let takes = if "expression".starts_with(name) {
                    SedTakes::Script
                } else if ["file", "line-length"].iter().any(|full| full.starts_with(name)) {
                    SedTakes::Value
                } else {
                    SedTakes::Nothing
                };
                (takes, value)
            }
            None => {
                // Bundled letters up to the first that takes a value; the rest of the word
                // is that value (`-ne 1p` is `-n -e 1p`, `-i.bak` an in-place suffix).
                let letters = &word[1..];
                let valued = letters.char_indices().find_map(|(at, letter)| {
                    let takes = match letter {
                        'e' => SedTakes::Script,
                        'f' | 'l' => SedTakes::Value,
                        'i' => SedTakes::Nothing,
                        _ => return None,
                    };
                    let rest = &letters[at + 1..];
                    Some((takes, (!rest.is_empty()).then_some(rest)))
                });
                valued.unwrap_or((SedTakes::Nothing, None))
            }
        };
        let value = match (&takes, attached) {
            (SedTakes::Nothing, _) => None,
            (_, Some(value)) => Some(value),
            (_, None) => {
                i += 1;
                args.get(i - 1).map(String::as_str)
            }
        };
        if takes == SedTakes::Script {
            expressions = true;
            match value {
                Some(script) => scripts.push(script),
                None => return true,
            }
        }
    }
    if !expressions {
        scripts.extend(first_operand);
    }
    scripts
        .into_iter()
        .any(|script| SedReader::new(script).risky().unwrap_or(true))
}

/// What one of sed's options takes as its value.
#[derive(PartialEq)]
enum SedTakes {
    /// No value (`-n`), or one that can only be attached (`-i`'s suffix).
    Nothing,
    /// A script (`-e`, `--expression`).
    Script,
    /// Something else (`-f`'s file, `-l`'s length).
    Value,
}

/// A sed script read command by command (GNU syntax, which includes POSIX's).
struct SedReader {
    chars: Vec<char>,
    at: usize,
}

impl SedReader {
    fn new(script: &str) -> Self {
        Self {
            chars: script.chars().collect(),
            at: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn skip_while(&mut self, keep: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&keep) {
            self.at += 1;
        }
    }

    fn skip_blanks(&mut self) {
        self.skip_while(|c| c == ' ' || c == '\t');
    }

    /// `Some(true)` when a command runs programs or writes files, `Some(false)` when none
    /// does, `None` when the script is not understood.
    fn risky(&mut self) -> Option<bool> {
        loop {
            self.skip_while(|c| matches!(c, ' ' | '\t' | '\n' | ';'));
            if self.peek().is_none() {
                return Some(false);
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.at += 1;
                self.skip_blanks();
                self.address()?;
                self.skip_blanks();
            }
            self.skip_while(|c| c == '!' || c == ' ' || c == '\t');
            match self.next()? {
                'e' | 'w' | 'W' => return Some(true),
                // A block's first command follows without a separator.
                '{' => continue,
                '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
                'l' | 'L' | 'q' | 'Q' => {
                    self.skip_blanks();
                    self.skip_while(|c| c.is_ascii_digit());
                }
                // Labels end at the first separator here; sed may read a longer one, so
                // what follows is looked at as commands, never skipped unseen.
                ':' | 'b' | 't' | 'T' | 'v' => {
                    self.skip_blanks();
                    self.skip_while(|c| !matches!(c, ';' | '\n' | ' ' | '\t' | '}'));
                }
                // Text, a file to read or a comment: the rest of the line.
                'a' | 'i' | 'c' | 'r' | 'R' | '#' => self.skip_line(),
                's' => {
                    let delimiter = self.delimiter()?;
                    self.delimited(delimiter)?;
                    self.delimited(delimiter)?;
                    loop {
                        match self.peek() {
                            Some('e' | 'w') => return Some(true),
                            Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.at += 1,
                            Some(c) if c.is_ascii_digit() => self.at += 1,
                            _ => break,
                        }
                    }
                }
                'y' => {
                    let delimiter = self.delimiter()?;
                    self.delimited(delimiter)?;
                    self.delimited(delimiter)?;
                }
                _ => return None,
            }
            self.skip_blanks();
            if !matches!(self.peek(), None | Some(';' | '\n' | '}' | '#')) {
                return None;
            }
        }
    }

    /// An optional address: a line number, `first~step`, `$`, `+N`, `~N`, or a regex
    /// (`/re/` or `\cREc`) with its `I` and `M` flags.
    fn address(&mut self) -> Option<()> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() || c == '+' || c == '~' => {
                self.at += 1;
                self.skip_while(|c| c.is_ascii_digit() || c == '~');
            }
            Some('$') => self.at += 1,
            Some('/') => {
                self.at += 1;
                self.delimited('/')?;
                self.skip_while(|c| c == 'I' || c == 'M');
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self.next()?;
                self.delimited(delimiter)?;
                self.skip_while(|c| c == 'I' || c == 'M');
            }
            _ => {}
        }
        Some(())
    }

    fn delimiter(&mut self) -> Option<char> {
        self.next().filter(|c| !matches!(c, '\n' | '\\'))
    }

    /// Up to and past the next `delimiter` not escaped by a backslash.
    fn delimited(&mut self, delimiter: char) -> Option<()> {
        loop {
            match self.next()? {
                '\\' => {
                    self.next()?;
                }
                c if c == delimiter => return Some(()),
                _ => {}
            }
        }
    }

    /// To the end of the line; a backslash continues the line (a, i and c's text).
    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            match c {
                '\\' => self.at += 1,
                '\n' => return,
                _ => {}
            }
        }
    }
}

/// Whether awk's arguments give it a program that runs commands or writes files: `system`,
/// a pipe (`print | "cmd"`, `"cmd" | getline`), an output redirection (`print > "f"`) or
/// gawk's `@load` and `@include`. Every argument but the field separator and variable
/// values is looked at (the program, `-e` sources, operands), so `>` as a comparison or a
/// file name with `|` counts too.
pub fn awk_program_is_risky(args: &[String]) -> bool {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let word = word.as_str();
        if matches!(word, "-F" | "-v" | "--field-separator" | "--assign") {
            i += 1;
            continue;
        }
        let data = ["-F", "-v", "--field-separator=", "--assign="];
        if data.iter().any(|option| word.starts_with(option)) {
            continue;
        }
        if awk_text_is_risky(word) {
            return true;
        }
    }
    false
}

fn awk_text_is_risky(text: &str) -> bool {
    let identifier = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let system = text.match_indices("system").any(|(at, found)| {
        let before = text[..at].chars().next_back();
        let after = text[at + found.len()..].chars().next();
        !before.is_some_and(identifier) && !after.is_some_and(identifier)
    });
    system || text.contains(['|', '>']) || text.contains("@load") || text.contains("@include")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn sed_scripts_that_only_edit_the_stream_are_not_risky() {
        for script in [
            "1,5p",
            "s/a/b/g",
            "s|a/b|c|2",
            "/^#/d;/^$/d",
            ":a;N;$!ba;s/\\n/ /g",
            "/x/{n;d}",
            "$!N; s/\\(a\\)\\n/\\1/I",
            "0~4 y/abc/xyz/",
            "/start/,+3 p",
            "1i\\header; w /not/a/command",
            "\\,x, =",
            "10q",
        ] {
            assert_eq!(SedReader::new(script).risky(), Some(false), "{script}");
        }
        assert!(!sed_script_is_risky(&args("-n -e 1p -e $p file")));
        assert!(!sed_script_is_risky(&args("-nE s/x/y/ file")));
    }

    #[test]
    fn sed_scripts_that_run_or_write_or_puzzle_are_risky() {
        for line in [
            "-n 1e\tid f",
            "s/x/y/e f",
            "s/x/y/w\t/tmp/out f",
            "-n w\t/tmp/out f",
            "/x/W\t/tmp/out f",
            "-e 1p -e $e f",
            "-ne 1e f",
            "--expr=1e f",
            "-n $!{e f",
            "1!e f",
            "s/x/y f",
            "1k f",
            "-e",
        ] {
            let words: Vec<String> = line.split(' ').map(|w| w.replace('\t', " ")).collect();
            assert!(sed_script_is_risky(&words), "{line}");
        }
    }

    #[test]
    fn awk_programs_are_risky_with_system_pipes_or_redirections() {
        assert!(!awk_program_is_risky(&args("-F| {print $2} f")));
        assert!(!awk_program_is_risky(&args("-v x=a|b {n++}END{print n} f")));
        assert!(!awk_program_is_risky(&args("{print mysystem_x}")));
        for program in [
            "BEGIN{system(\"id\")}",
            "BEGIN{system (\"id\")}",
            "{print | \"sh\"}",
            "{\"id\" | getline x}",
            "{print > \"/tmp/x\"}",
            "@load \"x\"",
        ] {
            assert!(awk_program_is_risky(&[program.to_string()]), "{program}");
        }
    }
}
