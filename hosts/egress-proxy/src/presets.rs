//! Named groups of hosts for common package managers, so that `@python` is enough to let
//! `pip install` work. Entries carry no port: HTTPS and HTTP (80/443) only.

/// Named presets: (name, description, entries).
pub const PRESETS: &[(&str, &str, &[&str])] = &[
    (
        "python",
        "PyPI for pip, uv and poetry: the index and the file host",
        &["pypi.org", "files.pythonhosted.org"],
    ),
    (
        "npm",
        "the npm and Yarn registries",
        &["registry.npmjs.org", "registry.yarnpkg.com"],
    ),
    (
        "rust",
        "crates.io for cargo (sparse index, downloads) and rustup's toolchains",
        &[
            "crates.io",
            "index.crates.io",
            "static.crates.io",
            "static.rust-lang.org",
        ],
    ),
    (
        "go",
        "the Go module proxy and checksum database; the proxy redirects some downloads to Google Cloud Storage",
        &["proxy.golang.org", "sum.golang.org", "storage.googleapis.com"],
    ),
    (
        "debian",
        "Debian's apt mirrors and security updates",
        &["deb.debian.org", "security.debian.org", "ftp.debian.org"],
    ),
    (
        "github",
        "GitHub for git over HTTPS, its API, archives, raw files and release downloads",
        &[
            "github.com",
            "api.github.com",
            "codeload.github.com",
            "objects.githubusercontent.com",
            "raw.githubusercontent.com",
            "*.githubusercontent.com",
        ],
    ),
];

pub(crate) fn preset(name: &str) -> Option<&'static [&'static str]> {
    PRESETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, entries)| *entries)
}

pub(crate) fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|(name, _, _)| format!("@{name}"))
        .collect::<Vec<_>>()
        .join(", ")
}
