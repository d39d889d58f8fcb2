//! Reading an extension's Markdown file: only a regular file (never through a link a
//! repository could point at a secret), of bounded size, and its front matter (`---`
//! delimited `key: value` lines, the subset of YAML these formats use).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// Larger is not a prompt or a skill but a mistake.
pub const MAX_BYTES: u64 = 256 * 1024;

/// The file's text; a link, a non-file, an oversized or non-UTF-8 file is an error naming it.
pub fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "{} is not a regular file (links are not followed)",
            path.display()
        ));
    }
    let mut file = open_no_follow(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.by_ref()
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "{} is larger than {} KiB",
            path.display(),
            MAX_BYTES / 1024
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))
}

/// `relative` (plain names only) read beneath `root`, every folder on the way a real folder,
/// not a link: a repository cannot route a read out of the extension's folder.
pub fn read_beneath(root: &Path, relative: &Path) -> Result<String, String> {
    use std::path::Component;
    if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(format!("{} is not a path inside the folder", relative.display()));
    }
    let mut at = root.to_path_buf();
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        at.push(component);
        if components.peek().is_some() && !is_real_dir(&at) {
            return Err(format!(
                "{} is not a folder (links are not followed)",
                at.display()
            ));
        }
    }
    read(&at)
}

/// Whether `path` is a folder itself, not a link to one.
pub fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// The front matter's fields and the body after it. Text without front matter is all body.
/// Quotes around a value are removed; keys are lower-case.
pub fn front_matter(text: &str) -> (BTreeMap<String, String>, &str) {
    let mut fields = BTreeMap::new();
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (fields, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let line = line.trim_end();
        if line == "---" {
            return (fields, &rest[offset..]);
        }
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            fields.insert(key.trim().to_ascii_lowercase(), unquoted.to_string());
        }
    }
    // No closing line: not front matter after all.
    (BTreeMap::new(), text)
}

/// An extension's name: letters, digits, `-` and `_`, at most 64.
pub fn is_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn front_matter_is_split_from_the_body() {
        let (fields, body) = front_matter("---\nname: pdf\nDescription: \"Fill PDF forms\"\n---\nUse it.\n");
        assert_eq!(fields["name"], "pdf");
        assert_eq!(fields["description"], "Fill PDF forms");
        assert_eq!(body, "Use it.\n");
        let (fields, body) = front_matter("No front matter.\n");
        assert!(fields.is_empty());
        assert_eq!(body, "No front matter.\n");
        let (fields, body) = front_matter("---\nname: x\nnever closed\n");
        assert!(fields.is_empty() && body.starts_with("---"));
    }

    #[test]
    fn links_and_large_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "private").unwrap();
        let link = dir.path().join("cmd.md");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert!(read(&link).unwrap_err().contains("links are not followed"));
        let large = dir.path().join("large.md");
        std::fs::write(&large, vec![b'a'; MAX_BYTES as usize + 1]).unwrap();
        assert!(read(&large).unwrap_err().contains("larger than"));
        assert_eq!(read(&secret).unwrap(), "private");
    }
}
