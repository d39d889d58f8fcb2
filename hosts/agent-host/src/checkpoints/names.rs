//! How a state names a file: by its workspace-relative path, `/`-separated. A path that is
//! UTF-8 (nearly all) is its own name, as in every state written before; any other (a Latin-1
//! `caf\xe9.txt` from an old archive) is a NUL, which no path holds, then the path's bytes in
//! hexadecimal. So every file is recorded and restored whatever its name, and no name of one
//! kind can be read as the other.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

const BYTES_MARK: char = '\0';

/// The name of the file at `relative` (to the workspace).
pub fn of(relative: &Path) -> String {
    match relative.to_str() {
        Some(text) => text.to_string(),
        None => {
            let bytes = relative.as_os_str().as_bytes();
            let mut name = String::with_capacity(1 + 2 * bytes.len());
            name.push(BYTES_MARK);
            for byte in bytes {
                name.push_str(&format!("{byte:02x}"));
            }
            name
        }
    }
}

/// The workspace-relative path `name` stands for; `None` for a name no state of ours
/// holds (a damaged state).
pub fn path(name: &str) -> Option<Cow<'_, OsStr>> {
    let Some(hex) = name.strip_prefix(BYTES_MARK) else {
        return Some(Cow::Borrowed(OsStr::new(name)));
    };
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|at| {
            hex.get(at..at + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()?;
    Some(Cow::Owned(OsString::from_vec(bytes)))
}

/// `name` for people: the path, with each byte that is not UTF-8 written `\xNN`.
pub fn shown(name: &str) -> String {
    let Some(path) = path(name) else {
        return name.escape_debug().to_string();
    };
    let mut shown = String::new();
    for chunk in path.as_bytes().utf8_chunks() {
        shown.push_str(chunk.valid());
        for byte in chunk.invalid() {
            shown.push_str(&format!("\\x{byte:02x}"));
        }
    }
    shown
}

/// The last part of the path `name` stands for, as bytes.
pub fn file_name(name: &str) -> Vec<u8> {
    let path = path(name).map(|p| p.as_bytes().to_vec()).unwrap_or_default();
    match path.iter().rposition(|&b| b == b'/') {
        Some(slash) => path[slash + 1..].to_vec(),
        None => path,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn utf8_names_are_kept_and_others_go_through_bytes_and_back() {
        assert_eq!(of(Path::new("src/lib.rs")), "src/lib.rs");
        let latin1 = Path::new(OsStr::from_bytes(b"dir\xff/caf\xe9.txt"));
        let name = of(latin1);
        assert!(name.starts_with('\0'), "{name:?}");
        assert_eq!(path(&name).unwrap(), latin1.as_os_str());
        assert_eq!(shown(&name), "dir\\xff/caf\\xe9.txt");
        assert_eq!(file_name(&name), b"caf\xe9.txt");
        assert_eq!(path("src/lib.rs").unwrap(), OsStr::new("src/lib.rs"));
        assert!(path("\u{0}4").is_none() && path("\u{0}zz").is_none(), "damaged");
    }
}
