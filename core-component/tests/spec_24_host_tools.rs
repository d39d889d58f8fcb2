//! Host tools beyond text: the images a host tool returns reach a model that
//! reads images, checked first; and the host's tools can change mid-session (an MCP server's
//! `tools/list_changed`), the next request offering the new list and accepting calls to it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::llm::ToolDefinition;
use agent_core::ports::HostImage;
use agent_core::{Session, SessionConfig};
use agent_test_support::fakes::{EchoHostTools, FakeEnv, RecordingHost, ScriptedTransport, ports_with_tools};
use common::{Harness, text_reply, tool_reply};
use serde_json::{Value, json};
use std::rc::Rc;

/// A 1 x 1 PNG written by Pillow.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4IScHAAK2AQU0pnWqAAAAAElFTkSuQmCC";

fn png() -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(PNG_BASE64)
        .unwrap()
}

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_string(),
        description: format!("The tool {name}."),
        parameters: json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}),
    }
}

/// A harness whose host tools are `tools`, the host's starting tools `offered`.
fn harness(
    tools: Rc<EchoHostTools>,
    offered: &[&str],
    image_input: Option<bool>,
    replies: Vec<agent_test_support::fakes::ScriptedResponse>,
) -> Harness {
    let mut config = SessionConfig::new("anthropic", "claude-test");
    config.host_tools = offered.iter().map(|name| tool(name)).collect();
    config.image_input = image_input;
    let env = Rc::new(FakeEnv::default());
    let transport = Rc::new(ScriptedTransport::new(replies));
    let host = Rc::new(RecordingHost::default());
    let session = Session::new(
        config,
        ports_with_tools(env.clone(), transport.clone(), host.clone(), tools),
    );
    Harness {
        env,
        transport,
        host,
        session,
    }
}

fn offered_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .filter(|name| name.starts_with("srv__"))
        .collect()
}

#[test]
fn a_host_tools_image_reaches_a_model_that_reads_images() {
    let tools = Rc::new(EchoHostTools::default());
    *tools.images.borrow_mut() = vec![
        HostImage {
            media_type: "image/png".to_string(),
            data: png(),
        },
        HostImage {
            media_type: "image/png".to_string(),
            data: b"<svg/>".to_vec(),
        },
    ];
    let mut h = harness(
        tools,
        &["srv__shot"],
        Some(true),
        vec![
            tool_reply(&[("s1", "srv__shot", json!({"x": 1}))]),
            text_reply("A PNG."),
        ],
    );
    h.session.submit("take a screenshot").unwrap();
    let result = &h.tool_results(1)[0];
    let blocks = result["content"].as_array().expect("text and image blocks");
    assert_eq!(
        blocks[0]["text"],
        "srv__shot called with {\"x\":1}\n[image 2 (image/png, 6 bytes) not shown: it is not a PNG, JPEG, GIF or WebP image]"
    );
    assert_eq!(blocks[1]["type"], "image");
    assert_eq!(blocks[1]["source"]["media_type"], "image/png");
    assert_eq!(blocks[1]["source"]["data"], PNG_BASE64);
    assert_eq!(blocks.len(), 2);
}

#[test]
fn a_model_without_images_is_told_what_it_was_not_shown() {
    let tools = Rc::new(EchoHostTools::default());
    *tools.images.borrow_mut() = vec![HostImage {
        media_type: "image/png".to_string(),
        data: png(),
    }];
    let mut h = harness(
        tools,
        &["srv__shot"],
        Some(false),
        vec![
            tool_reply(&[("s1", "srv__shot", json!({"x": 1}))]),
            text_reply("ok"),
        ],
    );
    h.session.submit("take a screenshot").unwrap();
    assert_eq!(
        h.tool_results(1)[0]["content"],
        "srv__shot called with {\"x\":1}\n[image 1 (image/png, 69 bytes) not shown: this model does not accept images]"
    );
}

#[test]
fn tools_the_host_adds_and_removes_mid_session_are_offered_from_the_next_request() {
    let tools = Rc::new(EchoHostTools::default());
    // Calling srv__a makes the host offer srv__b as well; calling srv__b then takes srv__a away.
    tools
        .lists_after_calls
        .borrow_mut()
        .extend([vec![tool("srv__a"), tool("srv__b")], vec![tool("srv__b")]]);
    let mut h = harness(
        tools.clone(),
        &["srv__a"],
        None,
        vec![
            tool_reply(&[("c1", "srv__a", json!({"x": 1}))]),
            tool_reply(&[("c2", "srv__b", json!({"x": 2}))]),
            tool_reply(&[
                ("c3", "srv__a", json!({"x": 3})),
                ("c4", "srv__b", json!({"x": "four"})),
            ]),
            text_reply("done"),
        ],
    );
    h.session.submit("go").unwrap();
    let bodies = h.transport.request_bodies();
    assert_eq!(offered_names(&bodies[0]), ["srv__a"]);
    assert_eq!(offered_names(&bodies[1]), ["srv__a", "srv__b"]);
    assert_eq!(offered_names(&bodies[2]), ["srv__b"]);
    assert_eq!(offered_names(&bodies[3]), ["srv__b"]);
    let results = h.tool_results(3);
    assert_eq!(
        results[1]["content"], "srv__b called with {\"x\":2}",
        "the added tool ran"
    );
    assert_eq!(results[2]["is_error"], true, "the removed tool is unknown now");
    assert!(
        results[2]["content"].as_str().unwrap().contains("srv__a"),
        "{}",
        results[2]
    );
    // The new tool's schema is checked like the others'.
    assert_eq!(results[3]["is_error"], true);
    assert!(
        results[3]["content"].as_str().unwrap().contains("x"),
        "{}",
        results[3]
    );
    let id = h.session.id().to_string();
    assert_eq!(*tools.asked.borrow(), vec![id; 4], "asked before each request");
}
