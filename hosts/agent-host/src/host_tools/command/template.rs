//! The templates of command tools: `{{param}}` placeholders in arguments and `${NAME}`
//! references in variable values, split into literal text and slots once, at load time.

use super::names::{is_parameter_name, is_variable_name};

/// A piece of an argv element or of a variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    Text(String),
    /// `{{name}}` in an argument, `${NAME}` in a variable.
    Slot(String),
}

/// Splits `{{name}}` placeholders out of an argument (spaces inside the braces allowed).
pub(super) fn parse_placeholders(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(format!(
                "{text:?} opens a placeholder with {{{{ that is never closed"
            ));
        };
        let name = after[..end].trim();
        if !is_parameter_name(name) {
            return Err(format!(
                "{text:?} has the placeholder {{{{{name}}}}}, which is not a parameter name"
            ));
        }
        if start > 0 {
            pieces.push(Piece::Text(rest[..start].to_string()));
        }
        pieces.push(Piece::Slot(name.to_string()));
        rest = &after[end + 2..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_string()));
    }
    Ok(pieces)
}

/// Splits `${NAME}` references out of a variable's value.
pub(super) fn parse_references(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("{text:?} opens ${{ without a closing }}"));
        };
        let name = &after[..end];
        if !is_variable_name(name) {
            return Err(format!(
                "{text:?} refers to ${{{name}}}, which is not a variable name"
            ));
        }
        if start > 0 {
            pieces.push(Piece::Text(rest[..start].to_string()));
        }
        pieces.push(Piece::Slot(name.to_string()));
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_string()));
    }
    Ok(pieces)
}

/// The placeholder names among `pieces`.
pub(super) fn slots(pieces: &[Piece]) -> impl Iterator<Item = &str> {
    pieces.iter().filter_map(|piece| match piece {
        Piece::Slot(name) => Some(name.as_str()),
        Piece::Text(_) => None,
    })
}
