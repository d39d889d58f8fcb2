//! Every event kind has fixtures (`fixtures/events/<kind>.json`), and each fixture reads into
//! the typed enum and writes back to exactly the same JSON, both as a stored event and as the
//! WIT's kind plus `data-json`. The browser host type-checks the same files against its
//! TypeScript declarations (`hosts/web/test/types.test.mjs`), so the two cannot drift.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_protocol::{Event, EventData, EventKind};
use serde_json::Value;
use std::path::PathBuf;

fn fixtures(kind: EventKind) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/events")
        .join(format!("{}.json", kind.as_str().to_lowercase()));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let events: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert!(!events.is_empty(), "{} has no events", path.display());
    events
}

#[test]
fn every_fixture_round_trips_through_the_typed_enum() {
    let mut count = 0;
    for kind in EventKind::ALL {
        for fixture in fixtures(kind) {
            let event: Event = serde_json::from_value(fixture.clone())
                .unwrap_or_else(|e| panic!("{} fixture {fixture}: {e}", kind.as_str()));
            assert_eq!(event.kind(), kind);
            assert_eq!(serde_json::to_value(&event).unwrap(), fixture);
            let line = event.to_json();
            assert_eq!(Event::from_json(&line).unwrap(), event);
            // Across the WIT: the kind and the payload's JSON.
            let data_json = event.data.to_data_json();
            assert_eq!(
                serde_json::from_str::<Value>(&data_json).unwrap(),
                fixture["data"]
            );
            assert_eq!(EventData::from_wire(kind, &data_json).unwrap(), event.data);
            count += 1;
        }
    }
    assert!(count >= 40, "only {count} fixtures");
}

#[test]
fn a_payload_that_does_not_fit_its_kind_is_an_error_naming_the_kind() {
    let error = EventData::from_wire(EventKind::ToolCallEnd, r#"{"call_id": "c"}"#).unwrap_err();
    assert!(error.to_string().starts_with("invalid TOOL_CALL_END:"), "{error}");
    let error = EventData::from_wire(EventKind::UserInput, "not json").unwrap_err();
    assert!(error.to_string().starts_with("invalid event data:"), "{error}");
    // A field the contract does not have is not silently kept: it would not survive the round trip.
    let extended = serde_json::json!({"kind": "USER_INPUT", "data": {"content": "x", "extra": 1},
        "session_id": "s", "timestamp_ms": 1});
    let event: Event = serde_json::from_value(extended.clone()).unwrap();
    assert_ne!(serde_json::to_value(&event).unwrap(), extended);
}

#[test]
fn tool_call_end_is_either_output_or_error() {
    let ok = EventData::from_wire(
        EventKind::ToolCallEnd,
        r#"{"call_id":"c","tool_name":"t","output":"x"}"#,
    )
    .unwrap();
    let EventData::ToolCallEnd { outcome, .. } = ok else {
        panic!()
    };
    assert_eq!(outcome.as_result(), Ok("x"));
    let failed = EventData::from_wire(
        EventKind::ToolCallEnd,
        r#"{"call_id":"c","tool_name":"t","error":"no"}"#,
    )
    .unwrap();
    let EventData::ToolCallEnd { outcome, .. } = failed else {
        panic!()
    };
    assert_eq!(outcome.as_result(), Err("no"));
}
