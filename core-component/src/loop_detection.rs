//! Loop detection (section 2.10 of the spec): the model repeating the same one, two or three
//! tool calls over and over.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// The longest repeating pattern looked for.
const MAX_PATTERN: usize = 3;

/// The signatures of the most recent tool calls.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopDetector {
    recent: VecDeque<u64>,
}

impl LoopDetector {
    /// Records one call. `window` bounds how many signatures are kept.
    pub fn record(&mut self, name: &str, arguments: &Value, window: usize) {
        self.recent.push_back(signature(name, arguments));
        while self.recent.len() > window.max(1) {
            self.recent.pop_front();
        }
    }

    /// The length of the pattern (1, 2 or 3) that the last `window` calls repeat, if any.
    ///
    /// The spec's pseudo-code only tries pattern lengths that divide the window, so with the
    /// default window of 10 a cycle of three calls would never be found. Here the window is
    /// checked for periodicity instead (call `i` equals call `i + p` throughout), which finds
    /// every length and agrees with the spec whenever the length divides the window.
    pub fn detect(&self, window: usize) -> Option<usize> {
        let window = window.max(1);
        if self.recent.len() < window {
            return None;
        }
        let calls: Vec<u64> = self
            .recent
            .iter()
            .skip(self.recent.len() - window)
            .copied()
            .collect();
        // A pattern must repeat at least twice within the window to count.
        (1..=MAX_PATTERN.min(window / 2).max(1)).find(|&p| (p..calls.len()).all(|i| calls[i] == calls[i - p]))
    }

    /// Forgets the calls seen so far: after a warning, only a fresh window of repetition
    /// warns again, so one loop does not produce a warning every round.
    pub fn reset(&mut self) {
        self.recent.clear();
    }
}

/// The signature of a call: its name and arguments, their object keys taken in sorted order
/// so the same arguments in another key order give the same signature (whether or not a
/// build keeps serde_json's maps in insertion order).
fn signature(name: &str, arguments: &Value) -> u64 {
    // FNV-1a: stable across runs and platforms, so snapshots stay comparable.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(name.as_bytes());
    feed(&[0]);
    feed_canonical(arguments, &mut feed);
    hash
}

/// `value` as compact JSON with every object's keys sorted: the text serde_json writes when
/// its maps are sorted.
fn feed_canonical(value: &Value, feed: &mut impl FnMut(&[u8])) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            feed(b"{");
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    feed(b",");
                }
                feed(Value::String(key.clone()).to_string().as_bytes());
                feed(b":");
                feed_canonical(&map[key], feed);
            }
            feed(b"}");
        }
        Value::Array(items) => {
            feed(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    feed(b",");
                }
                feed_canonical(item, feed);
            }
            feed(b"]");
        }
        scalar => feed(scalar.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(calls: &[&str], window: usize) -> Option<usize> {
        let mut detector = LoopDetector::default();
        for call in calls {
            detector.record("read_file", &json!({"file_path": call}), window);
        }
        detector.detect(window)
    }

    #[test]
    fn identical_calls_filling_the_window_are_a_loop_of_one() {
        assert_eq!(run(&["a"; 10], 10), Some(1));
        assert_eq!(run(&["a"; 9], 10), None);
    }

    #[test]
    fn cycles_of_two_and_three_are_found_even_when_they_do_not_divide_the_window() {
        let two: Vec<&str> = ["a", "b"].iter().cycle().take(10).copied().collect();
        assert_eq!(run(&two, 10), Some(2));
        let three: Vec<&str> = ["a", "b", "c"].iter().cycle().take(10).copied().collect();
        assert_eq!(run(&three, 10), Some(3));
    }

    #[test]
    fn varied_calls_are_not_a_loop() {
        let calls = ["a", "b", "c", "d", "a", "b", "c", "d", "a", "b"];
        assert_eq!(run(&calls, 10), None);
        let mut almost = vec!["a"; 10];
        almost[4] = "b";
        assert_eq!(run(&almost, 10), None);
    }

    #[test]
    fn only_the_last_window_counts_and_reset_starts_over() {
        let mut calls = vec!["x", "y", "z"];
        calls.extend(["a"; 10]);
        assert_eq!(run(&calls, 10), Some(1));
        let mut detector = LoopDetector::default();
        for _ in 0..10 {
            detector.record("shell", &json!({"command": "ls"}), 10);
        }
        detector.reset();
        assert_eq!(detector.detect(10), None);
    }

    #[test]
    fn argument_order_does_not_change_the_signature_but_values_do() {
        let a: Value = serde_json::from_str(r#"{"x":1,"y":2}"#).unwrap_or_default();
        let b: Value = serde_json::from_str(r#"{"y":2,"x":1}"#).unwrap_or_default();
        assert_eq!(signature("t", &a), signature("t", &b));
        assert_ne!(signature("t", &a), signature("t", &json!({"x": 1, "y": 3})));
        assert_ne!(signature("t", &a), signature("u", &a));
        let nested: Value =
            serde_json::from_str(r#"{"b":[{"z":1,"a":"q\"x"}],"a":null}"#).unwrap_or_default();
        let mut text = Vec::new();
        feed_canonical(&nested, &mut |bytes: &[u8]| text.extend_from_slice(bytes));
        assert_eq!(
            String::from_utf8(text).unwrap_or_default(),
            r#"{"a":null,"b":[{"a":"q\"x","z":1}]}"#
        );
    }
}
