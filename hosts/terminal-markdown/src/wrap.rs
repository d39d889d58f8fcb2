//! Greedy word wrap of styled pieces. Widths are display columns of the plain text, so a
//! line fits the same with colour on or off; a word wider than the line is cut by character.

use crate::inline::{Look, Piece, Runs};
use unicode_width::UnicodeWidthChar;

/// A word: runs of text with no whitespace between them (`**bold**,` is one word).
#[derive(Default)]
struct Word {
    runs: Runs,
    width: usize,
}

impl Word {
    fn push(&mut self, c: char, look: Look) {
        self.width += c.width().unwrap_or(0);
        match self.runs.last_mut() {
            Some((text, l)) if *l == look => text.push(c),
            _ => self.runs.push((c.to_string(), look)),
        }
    }
}

enum Token {
    Word(Word),
    /// Whitespace between words, in the look it appeared in (an underlined link's spaces
    /// stay underlined).
    Space(Look),
    Break,
}

fn tokens(pieces: &[Piece]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word = Word::default();
    for piece in pieces {
        match piece {
            Piece::Break => {
                if !word.runs.is_empty() {
                    out.push(Token::Word(std::mem::take(&mut word)));
                }
                out.push(Token::Break);
            }
            Piece::Text(text, look) => {
                for c in text.chars() {
                    if c.is_whitespace() {
                        if !word.runs.is_empty() {
                            out.push(Token::Word(std::mem::take(&mut word)));
                        }
                        if !matches!(out.last(), Some(Token::Space(_)) | None) {
                            out.push(Token::Space(*look));
                        }
                    } else {
                        word.push(c, *look);
                    }
                }
            }
        }
    }
    if !word.runs.is_empty() {
        out.push(Token::Word(word));
    }
    out
}

/// The pieces as lines of at most `max` columns (at least one line, maybe empty).
pub(crate) fn wrap(pieces: &[Piece], max: usize) -> Vec<Runs> {
    let max = max.max(1);
    let mut lines: Vec<Runs> = Vec::new();
    let mut line: Runs = Vec::new();
    let mut used = 0;
    let mut space: Option<Look> = None;
    for token in tokens(pieces) {
        match token {
            Token::Break => {
                lines.push(std::mem::take(&mut line));
                used = 0;
                space = None;
            }
            Token::Space(look) => {
                if used > 0 {
                    space = Some(look);
                }
            }
            Token::Word(word) => {
                let gap = usize::from(space.is_some() && used > 0);
                if used > 0 && used + gap + word.width > max {
                    lines.push(std::mem::take(&mut line));
                    used = 0;
                } else if let (Some(look), 1) = (space, gap) {
                    line.push((" ".to_string(), look));
                    used += 1;
                }
                space = None;
                if word.width <= max - used {
                    used += word.width;
                    line.extend(word.runs);
                } else {
                    cut_word(word, max, &mut lines, &mut line, &mut used);
                }
            }
        }
    }
    lines.push(line);
    lines
}

/// Places a word too wide for any line, character by character, filling each line.
fn cut_word(word: Word, max: usize, lines: &mut Vec<Runs>, line: &mut Runs, used: &mut usize) {
    for (text, look) in word.runs {
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            if *used + w > max && *used > 0 {
                lines.push(std::mem::take(line));
                *used = 0;
            }
            *used += w;
            match line.last_mut() {
                Some((t, l)) if *l == look => t.push(c),
                _ => line.push((c.to_string(), look)),
            }
        }
    }
}

/// The plain text of pieces, for comparing a link's text with its address.
pub(crate) fn plain(pieces: &[Piece]) -> String {
    let mut out = String::new();
    for piece in pieces {
        if let Piece::Text(text, _) = piece {
            out.push_str(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Runs]) -> Vec<String> {
        lines
            .iter()
            .map(|runs| runs.iter().map(|(t, _)| t.as_str()).collect())
            .collect()
    }

    fn piece(s: &str) -> Piece {
        Piece::Text(s.to_string(), Look::default())
    }

    #[test]
    fn wraps_at_spaces_within_the_width() {
        let lines = wrap(&[piece("aaa bbb ccc dddd")], 7);
        assert_eq!(text(&lines), ["aaa bbb", "ccc", "dddd"]);
    }

    #[test]
    fn wide_characters_count_twice_and_long_words_are_cut() {
        assert_eq!(text(&wrap(&[piece("日本語 x")], 6)), ["日本語", "x"]);
        assert_eq!(text(&wrap(&[piece("abcdefgh")], 3)), ["abc", "def", "gh"]);
    }

    #[test]
    fn a_styled_word_stays_whole() {
        let bold = Look {
            bold: true,
            ..Look::default()
        };
        let pieces = [piece("see "), Piece::Text("bold".into(), bold), piece(", ok")];
        assert_eq!(text(&wrap(&pieces, 9)), ["see bold,", "ok"]);
    }
}
