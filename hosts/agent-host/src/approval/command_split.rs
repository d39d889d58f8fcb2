//! Splitting a shell command line into simple commands, for the approval rules: each simple
//! command's words (quotes and escapes removed) and its redirections.
//!
//! Lines are split at `;`, `&&`, `||`, `|`, `&` and newlines. Anything this splitter does not
//! analyse makes the whole line opaque (`None`): any expansion outside single quotes
//! (`$VAR`, `${...}`, `$'...'`, `$(...)`, backticks, `<(...)`, `>(...)`), brace expansion and
//! unquoted glob characters (a file named `-exec` is an option once a glob expands),
//! subshells and groups, here-documents and here-strings, shell keywords (`if`, `for`, ...),
//! unterminated quotes and redirections without a target.
//! Callers treat an opaque line as something only its exact text can stand for.

/// What a redirection does with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`: reads the file.
    Read,
    /// `>`, `>>`, `>|`, `&>`, `&>>` and `<>`: opens the file for writing, creating it.
    Write,
    /// `>&` and `<&`: duplicates or closes a descriptor (`2>&1`, `>&-`) when the target is
    /// a number or `-`; bash reads `>&file` as `&>file`, so other targets are written.
    Duplicate,
}

/// One redirection of a simple command (the descriptor number before it is dropped: what
/// matters for approvals is which file is touched and how).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub target: String,
}

/// One simple command: its words (leading `VAR=value` assignments included) and its
/// redirections. A command of redirections only (`> file`, which truncates the file) has
/// no words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<String>,
    pub redirects: Vec<Redirect>,
}

/// Shell keywords: a command using them is more than simple commands.
pub const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "select",
    "function", "[[", "]]", "!", "coproc",
];

/// Whether `word` is a `NAME=value` assignment (which, before a program, sets its
/// environment).
pub fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The simple commands of `command` with their redirections, or `None` when it uses shell
/// features this splitter does not analyse (see the module documentation).
pub fn parse(command: &str) -> Option<Vec<SimpleCommand>> {
    Splitter::default().split(command)
}

/// The words of `command`'s simple commands (redirections set aside), or `None` as for
/// [`parse`].
pub fn simple_commands(command: &str) -> Option<Vec<Vec<String>>> {
    parse(command).map(|commands| commands.into_iter().map(|c| c.words).collect())
}

#[derive(Default)]
struct Splitter {
    segments: Vec<SimpleCommand>,
    current: SimpleCommand,
    word: String,
    in_word: bool,
    /// The next word is the target of a redirection of this kind, not an argument.
    redirect: Option<RedirectKind>,
}

impl Splitter {
    fn end_word(&mut self) {
        if self.in_word {
            let word = std::mem::take(&mut self.word);
            match self.redirect.take() {
                Some(kind) => self.current.redirects.push(Redirect { kind, target: word }),
                None => self.current.words.push(word),
            }
            self.in_word = false;
        }
    }

    /// Ends a simple command; `None` when a redirection lacks its target.
    fn end_segment(&mut self) -> Option<()> {
        self.end_word();
        if self.redirect.is_some() {
            return None;
        }
        let command = std::mem::take(&mut self.current);
        let first = command.words.iter().find(|w| !is_assignment(w));
        if first.is_some_and(|w| KEYWORDS.contains(&w.as_str())) {
            return None;
        }
        // A command of redirections only is kept: `> file` truncates the file.
        if !command.words.is_empty() || !command.redirects.is_empty() {
            self.segments.push(command);
        }
        Some(())
    }

    /// Starts a redirection whose target is the next word; `None` after another one that
    /// still lacks its target (`> > x`).
    fn start_redirect(&mut self, kind: RedirectKind) -> Option<()> {
        if self.redirect.is_some() {
            return None;
        }
        self.redirect = Some(kind);
        Some(())
    }

    fn push(&mut self, c: char) {
        self.word.push(c);
        self.in_word = true;
    }

    fn split(mut self, command: &str) -> Option<Vec<SimpleCommand>> {
        let chars: Vec<char> = command.chars().collect();
        let at = |i: usize| chars.get(i).copied();
        let mut i = 0;
        while let Some(c) = at(i) {
            match c {
                ' ' | '\t' => self.end_word(),
                // bash keeps a carriage return (or any other control character) inside a
                // word: `ls\r/x` runs the file `ls\r/x`, which no rule may stand for.
                c if c.is_control() && c != '\n' => return None,
                '\n' | ';' => self.end_segment()?,
                '&' if at(i + 1) == Some('>') => {
                    self.end_word();
                    i += if at(i + 2) == Some('>') { 2 } else { 1 };
                    self.start_redirect(RedirectKind::Write)?;
                }
                '&' | '|' => {
                    if matches!(at(i + 1), Some('&' | '|')) {
                        i += 1;
                    }
                    self.end_segment()?;
                }
                '<' | '>' => {
                    // `<(`/`>(` are process substitutions, `<<` and `<<<` here-documents
                    // and here-strings: none is analysed.
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
                    // The operator's second character, if any, is consumed with it.
                    let (kind, second) = match (c, at(i + 1)) {
                        (_, Some('&')) => (RedirectKind::Duplicate, true),
                        ('<', Some('>')) | ('>', Some('>' | '|')) => (RedirectKind::Write, true),
                        ('<', _) => (RedirectKind::Read, false),
                        _ => (RedirectKind::Write, false),
                    };
                    i += usize::from(second);
                    self.start_redirect(kind)?;
                }
                '(' | ')' | '`' => return None,
                '#' if !self.in_word => {
                    while at(i + 1).is_some_and(|n| n != '\n') {
                        i += 1;
                    }
                }
                // Any expansion: `$VAR`, `${V:--exec}`, `$'-exec'`, `$"..."` all become words
                // the splitter cannot see, and brace expansion (`x{-exec,sh}`) and globs (a
                // file named `-exec`) can turn into options.
                '$' | '{' | '}' | '*' | '?' | '[' => return None,
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
                            '`' | '$' => return None,
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
