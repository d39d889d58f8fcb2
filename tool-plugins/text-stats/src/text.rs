//! The statistics themselves, on text already read: no WASI here, so they are tested natively.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// The words of `text`: runs of letters and digits, with an apostrophe or hyphen kept when it
/// stands between two of them (`don't`, `well-known`).
pub fn words(text: &str) -> Words<'_> {
    Words { rest: text }
}

pub struct Words<'a> {
    rest: &'a str,
}

fn joins(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '-')
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let start = self.rest.find(char::is_alphanumeric)?;
        let text = &self.rest[start..];
        let mut end = 0;
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if c.is_alphanumeric() {
                end = at + c.len_utf8();
            } else if joins(c) && chars.peek().is_some_and(|&(_, next)| next.is_alphanumeric()) {
                continue;
            } else {
                break;
            }
        }
        self.rest = &text[end..];
        Some(&text[..end])
    }
}

/// `word` as it is counted: lower-cased when case does not matter, borrowed when unchanged.
pub fn fold(word: &str, fold_case: bool) -> Cow<'_, str> {
    if fold_case && word.chars().any(char::is_uppercase) {
        Cow::Owned(word.to_lowercase())
    } else {
        Cow::Borrowed(word)
    }
}

/// How many times each word occurs.
pub fn frequencies(text: &str, fold_case: bool) -> HashMap<String, u32> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for word in words(text) {
        let word = fold(word, fold_case);
        match counts.get_mut(word.as_ref()) {
            Some(count) => *count = count.saturating_add(1),
            None => {
                counts.insert(word.into_owned(), 1);
            }
        }
    }
    counts
}

/// The `limit` most frequent words not in `excluded`, most frequent first, ties in
/// alphabetical order so that the answer does not depend on hashing.
pub fn most_frequent(
    counts: &HashMap<String, u32>,
    excluded: &HashSet<String>,
    limit: usize,
) -> Vec<(String, u32)> {
    let mut ranked: Vec<(&String, u32)> = counts
        .iter()
        .filter(|(word, _)| !excluded.contains(*word))
        .map(|(word, count)| (word, *count))
        .collect();
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    ranked
        .into_iter()
        .take(limit)
        .map(|(word, count)| (word.clone(), count))
        .collect()
}

/// `bytes` as text, or why they are not: NUL bytes mark binary files even when they are
/// valid UTF-8.
pub fn into_text(bytes: Vec<u8>) -> Result<String, String> {
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(format!("a NUL byte at offset {at}: a binary file"));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8: invalid byte sequence at offset {}",
            e.utf8_error().valid_up_to()
        )
    })
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// What `analyze` needs, free of the WIT types.
pub struct Options {
    pub top_words: usize,
    pub fold_case: bool,
    pub stop_words: Vec<String>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Analysis {
    pub lines: u64,
    pub words: u64,
    pub chars: u64,
    pub bytes: u64,
    pub top: Vec<(String, u32)>,
    /// Line number (from 1) and length in characters of the first longest line.
    pub longest_line: Option<(u32, u32)>,
}

pub fn analyze(text: &str, options: &Options) -> Analysis {
    let mut lines = 0u64;
    let mut longest_line: Option<(u32, u32)> = None;
    for (index, line) in text.lines().enumerate() {
        lines += 1;
        let length = saturate(line.chars().count());
        if longest_line.is_none_or(|(_, longest)| length > longest) {
            longest_line = Some((saturate(index + 1), length));
        }
    }
    let top = if options.top_words == 0 {
        Vec::new()
    } else {
        let excluded: HashSet<String> = options
            .stop_words
            .iter()
            .map(|word| fold(word.trim(), options.fold_case).into_owned())
            .collect();
        most_frequent(
            &frequencies(text, options.fold_case),
            &excluded,
            options.top_words,
        )
    };
    Analysis {
        lines,
        words: words(text).count() as u64,
        chars: text.chars().count() as u64,
        bytes: text.len() as u64,
        top,
        longest_line,
    }
}

/// One text's place in a comparison.
#[derive(Debug, PartialEq, Eq)]
pub struct Comparison {
    pub words: u64,
    pub distinct: u32,
    pub shared: u32,
    pub signature: Result<(String, u32), String>,
}

/// Compares texts by vocabulary, case folded. A text given as `Err` (it could not be read)
/// keeps its error and does not count as a source for the others.
pub fn compare(texts: &[Result<&str, String>]) -> Vec<Comparison> {
    let counts: Vec<Result<HashMap<String, u32>, &String>> = texts
        .iter()
        .map(|text| text.as_ref().map(|text| frequencies(text, true)))
        .collect();
    let mut sources_using: HashMap<&str, u32> = HashMap::new();
    for words in counts.iter().flatten() {
        for word in words.keys() {
            *sources_using.entry(word.as_str()).or_default() += 1;
        }
    }
    let only_here = |word: &String| sources_using.get(word.as_str()).copied() == Some(1);
    counts
        .iter()
        .map(|words| match words {
            Ok(words) => {
                let shared = words.keys().filter(|word| !only_here(word)).count();
                let own: HashMap<String, u32> = words
                    .iter()
                    .filter(|(word, _)| only_here(word))
                    .map(|(word, count)| (word.clone(), *count))
                    .collect();
                let signature = match most_frequent(&own, &HashSet::new(), 1).pop() {
                    Some(best) => Ok(best),
                    None if words.is_empty() => Err("it has no words".to_string()),
                    None => Err("every word of it occurs in another source too".to_string()),
                };
                Comparison {
                    words: words.values().map(|&count| u64::from(count)).sum(),
                    distinct: saturate(words.len()),
                    shared: saturate(shared),
                    signature,
                }
            }
            Err(error) => Comparison {
                words: 0,
                distinct: 0,
                shared: 0,
                signature: Err((*error).clone()),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<&str> {
        words(text).collect()
    }

    fn options(top_words: usize, fold_case: bool, stop_words: &[&str]) -> Options {
        Options {
            top_words,
            fold_case,
            stop_words: stop_words.iter().map(|w| w.to_string()).collect(),
        }
    }

    #[test]
    fn words_keep_inner_apostrophes_and_hyphens_only() {
        assert_eq!(
            all("Don't stop -- a well-known 'quote', x86-64 rock'n'roll!"),
            [
                "Don't",
                "stop",
                "a",
                "well-known",
                "quote",
                "x86-64",
                "rock'n'roll"
            ]
        );
        assert_eq!(all("end- -start it’s"), ["end", "start", "it’s"]);
        assert_eq!(all("héllo wörld 日本 42"), ["héllo", "wörld", "日本", "42"]);
        assert!(all("  ... -- ''  ").is_empty());
        assert!(all("").is_empty());
    }

    #[test]
    fn lines_count_a_last_line_without_a_break() {
        let plain = options(0, false, &[]);
        assert_eq!(analyze("", &plain).lines, 0);
        assert_eq!(analyze("one", &plain).lines, 1);
        assert_eq!(analyze("one\n", &plain).lines, 1);
        assert_eq!(analyze("one\r\ntwo\n\n", &plain).lines, 3);
    }

    #[test]
    fn counts_of_a_small_text() {
        let text = "Zürich is big.\nbig BIG big\n\nthe end\n";
        let analysis = analyze(text, &options(2, true, &[]));
        assert_eq!(analysis.lines, 4);
        assert_eq!(analysis.words, 8);
        assert_eq!(analysis.chars, 36);
        assert_eq!(analysis.bytes, 37);
        assert_eq!(analysis.top, [("big".to_string(), 4), ("end".to_string(), 1)]);
        assert_eq!(analysis.longest_line, Some((1, 14)));
        assert_eq!(analyze("", &options(3, true, &[])).longest_line, None);
    }

    #[test]
    fn the_first_of_equally_long_lines_is_the_longest() {
        let analysis = analyze("ab\nabc\nxyz\n", &options(0, false, &[]));
        assert_eq!(analysis.longest_line, Some((2, 3)));
    }

    #[test]
    fn case_mode_and_stop_words() {
        let text = "The cat and the dog. The end.";
        let sensitive = analyze(text, &options(3, false, &["the"]));
        assert_eq!(
            sensitive.top,
            [
                ("The".to_string(), 2),
                ("and".to_string(), 1),
                ("cat".to_string(), 1)
            ]
        );
        let insensitive = analyze(text, &options(2, true, &["THE", " and "]));
        assert_eq!(insensitive.top, [("cat".to_string(), 1), ("dog".to_string(), 1)]);
        // Stop words leave the total alone.
        assert_eq!(insensitive.words, 7);
        assert!(analyze(text, &options(0, true, &[])).top.is_empty());
    }

    #[test]
    fn text_check_names_the_offset() {
        assert_eq!(into_text(b"ok\n".to_vec()), Ok("ok\n".to_string()));
        assert!(into_text(b"ab\0cd".to_vec()).unwrap_err().contains("offset 2"));
        assert!(into_text(b"abc\xff".to_vec()).unwrap_err().contains("offset 3"));
    }

    #[test]
    fn compare_finds_each_sources_own_most_frequent_word() {
        let results = compare(&[
            Ok("apple apple banana cherry Cherry"),
            Err("missing.txt: no such file".to_string()),
            Ok("banana date date Date"),
            Ok("apple banana"),
            Ok("... --"),
        ]);
        assert_eq!(
            results[0],
            Comparison {
                words: 5,
                distinct: 3,
                shared: 2,
                signature: Ok(("cherry".to_string(), 2))
            }
        );
        assert_eq!(results[1].words, 0);
        assert_eq!(results[1].signature, Err("missing.txt: no such file".to_string()));
        assert_eq!(
            results[2],
            Comparison {
                words: 4,
                distinct: 2,
                shared: 1,
                signature: Ok(("date".to_string(), 3))
            }
        );
        assert_eq!(results[3].shared, 2);
        assert!(
            results[3]
                .signature
                .as_ref()
                .unwrap_err()
                .contains("another source")
        );
        assert_eq!(results[4].signature, Err("it has no words".to_string()));
    }

    #[test]
    fn a_single_source_is_its_own_vocabulary() {
        let results = compare(&[Ok("b a b")]);
        assert_eq!(results[0].signature, Ok(("b".to_string(), 2)));
        assert_eq!(results[0].shared, 0);
        assert!(compare(&[]).is_empty());
    }
}
