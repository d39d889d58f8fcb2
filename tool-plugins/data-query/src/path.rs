//! The query path: `a.b[0].*["c.d"]`.

use agent_tool_sdk::serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
    Any,
}

pub fn parse(query: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let chars: Vec<char> = query.trim().chars().collect();
    let mut i = 0;
    let bad = |at: usize, why: &str| format!("bad query {query:?} at character {}: {why}", at + 1);
    while i < chars.len() {
        match chars[i] {
            '.' if i == 0 || chars[i - 1] == '.' => return Err(bad(i, "empty key")),
            '.' => i += 1,
            '[' => {
                let close = chars[i..]
                    .iter()
                    .position(|c| *c == ']')
                    .ok_or_else(|| bad(i, "no closing ]"))?;
                let inner: String = chars[i + 1..i + close].iter().collect();
                let inner = inner.trim();
                steps.push(if inner == "*" {
                    Step::Any
                } else if let Some(key) = inner.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
                    Step::Key(key.to_string())
                } else {
                    Step::Index(
                        inner
                            .parse()
                            .map_err(|_| bad(i, "expected a number, * or a \"quoted key\""))?,
                    )
                });
                i += close + 1;
            }
            _ => {
                let end = chars[i..]
                    .iter()
                    .position(|c| *c == '.' || *c == '[')
                    .map_or(chars.len(), |p| i + p);
                let key: String = chars[i..end].iter().collect();
                steps.push(if key == "*" { Step::Any } else { Step::Key(key) });
                i = end;
            }
        }
    }
    if chars.last() == Some(&'.') {
        return Err(bad(chars.len() - 1, "empty key"));
    }
    Ok(steps)
}

pub fn select<'a>(document: &'a Value, steps: &[Step]) -> Vec<&'a Value> {
    let mut current = vec![document];
    for step in steps {
        current = current
            .into_iter()
            .flat_map(|value| -> Vec<&'a Value> {
                match (step, value) {
                    (Step::Key(key), Value::Object(map)) => map.get(key).into_iter().collect(),
                    (Step::Index(index), Value::Array(items)) => items.get(*index).into_iter().collect(),
                    (Step::Any, Value::Object(map)) => map.values().collect(),
                    (Step::Any, Value::Array(items)) => items.iter().collect(),
                    _ => Vec::new(),
                }
            })
            .collect();
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_tool_sdk::serde_json::json;

    #[test]
    fn paths_parse() {
        assert_eq!(
            parse("a.b[2].*[\"c.d\"][*]").unwrap(),
            vec![
                Step::Key("a".into()),
                Step::Key("b".into()),
                Step::Index(2),
                Step::Any,
                Step::Key("c.d".into()),
                Step::Any
            ]
        );
        assert!(parse("").unwrap().is_empty());
        assert!(parse("a..b").unwrap_err().contains("empty key"));
        assert!(parse("a[x]").unwrap_err().contains("number"));
        assert!(parse("a[1").unwrap_err().contains("closing"));
    }

    #[test]
    fn selection_follows_keys_indexes_and_wildcards() {
        let doc = json!({"deps": {"a": {"v": "1"}, "b": {"v": "2"}}, "list": [10, 20]});
        let steps = parse("deps.*.v").unwrap();
        assert_eq!(select(&doc, &steps), vec![&json!("1"), &json!("2")]);
        assert_eq!(select(&doc, &parse("list[1]").unwrap()), vec![&json!(20)]);
        assert!(select(&doc, &parse("list[5]").unwrap()).is_empty());
    }
}
