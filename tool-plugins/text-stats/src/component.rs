//! The exported `stats` interface: WIT types in and out, files through the preopens.

use crate::text;
use bindings::exports::example::text_stats::stats::{
    AnalyzeOptions, CaseMode, Counted, Guest, LineInfo, Report, Source, StatsError, Summary, WordCount,
};
use plain_fs::FsError;

mod bindings {
    wit_bindgen::generate!({ path: "wit/text-stats.wit", world: "text-stats" });
}

#[used]
#[unsafe(link_section = "agent-tool-wit")]
static WIT: [u8; include_bytes!("../wit/text-stats.wit").len()] = *include_bytes!("../wit/text-stats.wit");

/// Larger files are refused rather than read whole into memory.
const MAX_FILE: u64 = 16 << 20;

struct Component;

fn read_text(path: &str) -> Result<String, StatsError> {
    let bytes = plain_fs::read(path, MAX_FILE).map_err(|error| match error {
        FsError::NotFound(_) => StatsError::NotFound(path.to_string()),
        FsError::Failed(message) => StatsError::Unreadable(message),
    })?;
    text::into_text(bytes).map_err(|reason| StatsError::NotText(format!("{path}: {reason}")))
}

impl Guest for Component {
    fn analyze(path: String, options: AnalyzeOptions) -> Result<Report, StatsError> {
        let contents = read_text(&path)?;
        let analysis = text::analyze(
            &contents,
            &text::Options {
                top_words: options.top_words.unwrap_or(0) as usize,
                fold_case: options.case == CaseMode::Insensitive,
                stop_words: options.stop_words,
            },
        );
        let asked = |flag: Counted, value: u64| (options.count & flag == flag).then_some(value);
        Ok(Report {
            lines: asked(Counted::LINES, analysis.lines),
            words: asked(Counted::WORDS, analysis.words),
            chars: asked(Counted::CHARS, analysis.chars),
            bytes: asked(Counted::BYTES, analysis.bytes),
            top: analysis
                .top
                .into_iter()
                .map(|(word, count)| WordCount { word, count })
                .collect(),
            longest_line: analysis
                .longest_line
                .map(|(number, length)| LineInfo { number, length }),
            path,
        })
    }

    fn compare(sources: Vec<Source>) -> Vec<Summary> {
        let loaded: Vec<(String, Result<String, String>)> = sources
            .into_iter()
            .enumerate()
            .map(|(index, source)| match source {
                Source::Inline(text) => (format!("inline {}", index + 1), Ok(text)),
                Source::File(path) => {
                    let text = read_text(&path).map_err(|error| match error {
                        StatsError::NotFound(path) => format!("{path}: no such file"),
                        StatsError::NotText(reason) | StatsError::Unreadable(reason) => reason,
                    });
                    (path, text)
                }
            })
            .collect();
        let texts: Vec<Result<&str, String>> = loaded
            .iter()
            .map(|(_, text)| text.as_deref().map_err(Clone::clone))
            .collect();
        text::compare(&texts)
            .into_iter()
            .zip(loaded)
            .map(|(comparison, (label, _))| Summary {
                label,
                words: comparison.words,
                distinct: comparison.distinct,
                shared: comparison.shared,
                signature: comparison.signature,
            })
            .collect()
    }
}

bindings::export!(Component with_types_in bindings);
