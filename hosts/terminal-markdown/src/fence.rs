//! A code fence shown while it streams: each line is highlighted and printed as soon as it
//! is complete, since nothing after it can change how it looks.

use crate::Output;
use crate::code::{CODE_INDENT, Highlighter};
use crate::lines::{Fence, fence_closes, strip_columns};

pub(crate) struct OpenFence {
    fence: Fence,
    /// Source columns of indentation that belong to the fence or its list item, not the code.
    strip: usize,
    /// Output columns left of the code (a list item's text column).
    base: usize,
    highlighter: Highlighter,
    /// Whether a blank line goes before the first line (taken with it).
    gap: bool,
}

impl OpenFence {
    pub fn new(fence: Fence, strip: usize, base: usize, gap: bool, color: bool) -> Self {
        let highlighter = Highlighter::new(&fence.info, color);
        Self {
            fence,
            strip,
            base,
            highlighter,
            gap,
        }
    }

    /// Prints a line of code, or returns true for the closing fence.
    pub fn line(&mut self, line: &str, out: &mut Output) -> bool {
        let line = strip_columns(line, self.strip);
        if fence_closes(&line, &self.fence) {
            return true;
        }
        let painted = self.highlighter.line(&line, &mut out.code_budget);
        let mut text = format!("{}{CODE_INDENT}{painted}", " ".repeat(self.base));
        if painted.is_empty() {
            text.truncate(text.trim_end().len());
        }
        out.block(vec![text], std::mem::take(&mut self.gap));
        false
    }
}
