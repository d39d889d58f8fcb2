//! Output offloading: what truncation cuts from a tool's output is not lost to the model.
//! The full text is saved in the environment's scratch folder and the marker names the
//! file, which read_file pages through with offset and limit.

use super::Session;
use crate::llm::ToolCall;
use crate::ports::LogLevel;
use crate::truncation::{self, FullOutput, OutputLimits};

impl Session {
    /// The output as the model sees it: whole, or cut with a marker that names where the
    /// full text was saved (when the environment has a scratch folder).
    pub(super) fn shown_to_model(&self, call: &ToolCall, output: &str, limits: &OutputLimits) -> String {
        if !truncation::would_truncate(output, limits) {
            return output.to_string();
        }
        // read_file's output is a file the model can already page through: no copy.
        let saved = match call.name.as_str() {
            "read_file" => None,
            _ => self.save_full_output(call, output),
        };
        match &saved {
            Some(path) => truncation::truncate_tool_output_saved(output, limits, FullOutput::SavedAt(path)),
            None => truncation::truncate_tool_output(output, limits),
        }
    }

    /// Saves `output` as `SCRATCH/SESSION/TOOL-CALL.txt`; the path, or `None` when there is
    /// no scratch folder or the write failed (logged: the marker then says the output is
    /// only in the event stream).
    fn save_full_output(&self, call: &ToolCall, output: &str) -> Option<String> {
        let dir = self.ports.env.scratch_directory()?;
        let path = format!(
            "{}/{}/{}-{}.txt",
            dir.trim_end_matches('/'),
            file_name_part(&self.id),
            file_name_part(&call.name),
            file_name_part(&call.id)
        );
        match self.ports.env.write_file(&path, output.as_bytes()) {
            Ok(()) => Some(path),
            Err(error) => {
                self.ports.host.log(
                    LogLevel::Warn,
                    &format!("could not save the full output of {} to {path}: {error}", call.id),
                );
                None
            }
        }
    }
}

/// `text` as a safe file-name part: ids come from the model or the provider.
fn file_name_part(text: &str) -> String {
    let safe: String = text
        .chars()
        .take(80)
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
            _ => '_',
        })
        .collect();
    if safe.is_empty() { "_".to_string() } else { safe }
}

#[cfg(test)]
mod tests {
    use super::file_name_part;

    #[test]
    fn ids_cannot_climb_out_of_the_scratch_folder() {
        assert_eq!(file_name_part("../../etc/passwd"), "______etc_passwd");
        assert_eq!(file_name_part(""), "_");
        assert_eq!(file_name_part("toolu_01A-b"), "toolu_01A-b");
    }
}
