//! Command tools with real processes: load-time checks, argv interpolation proven by a
//! program printing what it received, schema violations, variables, timeouts and exits.

use super::*;
use serde_json::json;
use std::time::Instant;

fn spec(text: &str) -> CommandToolSpec {
    toml::from_str(text).unwrap()
}

fn tool(text: &str, dir: &Path) -> CommandTool {
    let context = CommandToolContext::new(dir, EnvPolicy::InheritAll).unwrap();
    CommandTool::new(spec(text), context).unwrap()
}

fn load_error(text: &str) -> String {
    match toml::from_str::<CommandToolSpec>(text) {
        Err(error) => error.to_string(),
        Ok(spec) => match CommandTool::check(&spec) {
            Err(error) => error.to_string(),
            Ok(()) => panic!("accepted:\n{text}"),
        },
    }
}

/// A script that prints how many arguments it got, then each one in brackets.
fn argv_printer(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("show-argv");
    std::fs::write(
        &path,
        "#!/bin/sh\necho \"argc=$#\"\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const EXAMPLE: &str = r#"
name = "cargo_test"
description = "Run the tests of one package"
category = "read"
cmd = "cargo"
args = ["test", "-p", "{{package}}"]
optional_args = { filter = ["--", "{{filter}}"], quiet = ["-q"] }
env = { RUST_BACKTRACE = "1" }
timeout_ms = 120000
[parameters.package]
type = "string"
description = "Package name"
pattern = "^[a-z0-9_-]+$"
maxLength = 64
[parameters.quiet]
type = "boolean"
optional = true
[parameters.filter]
type = "string"
optional = true
"#;

#[test]
fn the_documented_example_loads_with_a_strict_schema() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(EXAMPLE, dir.path());
    let definition = tool.definition();
    assert_eq!(definition.name, "cargo_test");
    let schema: Value = definition.parameters.clone();
    assert_eq!(schema["required"], json!(["package"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(
        schema["properties"]["package"],
        json!({"type": "string", "description": "Package name", "pattern": "^[a-z0-9_-]+$", "maxLength": 64})
    );
    assert_eq!(tool.category(), ToolCategory::Read);
    // Optional groups follow `args` in the order written, booleans only when true.
    assert_eq!(
        tool.argv(&json!({"package": "core", "filter": "spec_", "quiet": true}))
            .unwrap(),
        ["test", "-p", "core", "--", "spec_", "-q"]
    );
    assert_eq!(
        tool.argv(&json!({"package": "core", "quiet": false})).unwrap(),
        ["test", "-p", "core"]
    );
}

#[test]
fn load_errors_name_the_tool_and_the_field() {
    let base = |extra: &str| {
        format!(
            "name = \"t\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"echo\"\n{extra}\n\
             [parameters.x]\ntype = \"string\"\n[parameters.o]\ntype = \"string\"\noptional = true\n"
        )
    };
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            base("args = [\"{{x}}\", \"{{nope}}\"]\noptional_args = { o = [\"{{o}}\"] }"),
            vec![
                "\"t\"",
                "args[1]",
                "{{nope}}",
                "not a declared parameter",
                "declared: o, x",
            ],
        ),
        (
            base("args = [\"{{x}}\", \"--o={{o}}\"]"),
            vec!["args[1]", "optional parameter {{o}}", "optional_args.o"],
        ),
        (
            base("args = [\"{{x}\"]\noptional_args = { o = [\"{{o}}\"] }"),
            vec!["args[0]", "never closed"],
        ),
        (
            base("args = [\"{{x}}\"]\noptional_args = { x = [\"{{x}}\"], o = [\"{{o}}\"] }"),
            vec!["optional_args.x", "x is required"],
        ),
        (
            base("args = [\"{{x}}\"]\noptional_args = { y = [\"-y\"], o = [\"{{o}}\"] }"),
            vec!["optional_args.y", "not a declared parameter"],
        ),
        (base("args = [\"{{x}}\"]"), vec!["parameters.o", "never used"]),
        (
            base("args = [\"{{x}}\"]\noptional_args = { o = [\"{{o}}\"] }\nenv = { \"BAD-NAME\" = \"1\" }"),
            vec!["env.BAD-NAME", "not a valid variable name"],
        ),
        (
            base("args = [\"{{x}}\"]\noptional_args = { o = [\"{{o}}\"] }\nenv = { T = \"${UNCLOSED\" }"),
            vec!["env.T", "closing"],
        ),
        (
            base("args = [\"{{x}}\"]\noptional_args = { o = [\"{{o}}\"] }\ntimeout_ms = 0"),
            vec!["timeout_ms", "more than 0"],
        ),
        (
            base("args = [\"{{x}}\"]\noptional_args = { o = [\"{{o}}\"] }\nshell = true"),
            vec!["unknown field `shell`"],
        ),
    ];
    for (text, expected) in cases {
        let error = load_error(&text);
        for part in expected {
            assert!(error.contains(part), "{part:?} missing from: {error}\n{text}");
        }
    }
    let simple = |name: &str, cmd: &str, parameter: &str| {
        format!(
            "name = \"{name}\"\ndescription = \"d\"\ncategory = \"write\"\ncmd = \"{cmd}\"\n\
             args = [\"{{{{p}}}}\"]\n[parameters.p]\n{parameter}\n"
        )
    };
    for (text, expected) in [
        (
            simple("t", "echo", "type = \"string\"\npattern = \"^[a-z\""),
            vec!["parameters.p.pattern", "not a valid regular expression"],
        ),
        (
            simple("t", "echo", "type = \"integer\"\npattern = \"^1$\""),
            vec!["parameters.p.pattern", "does not apply to a integer"],
        ),
        (
            simple("t", "echo", "type = \"string\"\nenum = [\"a\", 2]"),
            vec!["parameters.p.enum", "2 is not a string"],
        ),
        (
            simple("t", "echo", "type = \"integer\"\nminimum = 5\nmaximum = 1"),
            vec!["parameters.p.minimum", "more than maximum"],
        ),
        (
            simple("t", "echo", "type = \"string\"\nmaxlength = 3"),
            vec!["unknown field `maxlength`"],
        ),
        (
            simple("t", "", "type = \"string\""),
            vec!["\"t\"", "cmd", "empty"],
        ),
        (
            simple("t", "cargo test", "type = \"string\""),
            vec!["cmd", "one program name"],
        ),
        (
            simple("t", "echo", "type = \"str\""),
            vec!["unknown variant `str`"],
        ),
        (
            simple("bad name!", "echo", "type = \"string\""),
            vec!["\"bad name!\"", "name", "1 to 64"],
        ),
        (
            simple(&"n".repeat(65), "echo", "type = \"string\""),
            vec!["name", "1 to 64"],
        ),
    ] {
        let error = load_error(&text);
        for part in expected {
            assert!(error.contains(part), "{part:?} missing from: {error}\n{text}");
        }
    }
    let root = "name = \"t\"\ndescription = \"d\"\ncategory = \"root\"\ncmd = \"x\"\n";
    assert!(
        load_error(root).contains("unknown variant `root`"),
        "{}",
        load_error(root)
    );
}

#[tokio::test]
async fn values_reach_the_program_as_one_literal_argument_each() {
    let dir = tempfile::tempdir().unwrap();
    let printer = argv_printer(dir.path());
    let tool = tool(
        &format!(
            "name = \"show\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"{}\"\n\
             args = [\"--name={{{{x}}}}\", \"{{{{ x }}}}\", \"fixed\"]\n[parameters.x]\ntype = \"string\"\n",
            printer.display()
        ),
        dir.path(),
    );
    for hostile in [
        "; rm -rf / #",
        "$(id)",
        "`id`",
        "a b\tc\nd",
        "*",
        "'\"quoted\"'",
        "|| touch pwned",
        "",
    ] {
        let output = tool.call(&json!({"x": hostile}).to_string()).await.unwrap().text;
        assert_eq!(
            output,
            format!("argc=3\n[--name={hostile}]\n[{hostile}]\n[fixed]\n"),
            "{hostile:?}"
        );
    }
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn schema_violations_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "name = \"v\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"{}\"\n\
         args = [\"{{{{kind}}}}\", \"{{{{name}}}}\", \"{{{{count}}}}\"]\n\
         [parameters.kind]\ntype = \"string\"\nenum = [\"pods\", \"nodes\"]\n\
         [parameters.name]\ntype = \"string\"\npattern = \"^[a-z]+$\"\nmaxLength = 5\n\
         [parameters.count]\ntype = \"integer\"\nminimum = 1\nmaximum = 10\n",
        argv_printer(dir.path()).display()
    );
    let tool = tool(&text, dir.path());
    let ok = json!({"kind": "pods", "name": "web", "count": 3});
    assert_eq!(
        tool.call(&ok.to_string()).await.unwrap().text,
        "argc=3\n[pods]\n[web]\n[3]\n"
    );
    for (arguments, expected) in [
        (
            json!({"kind": "secrets", "name": "web", "count": 1}),
            vec!["argument `kind`", "pods", "nodes"],
        ),
        (
            json!({"kind": "pods", "name": "Web;", "count": 1}),
            vec!["argument `name`", "^[a-z]+$"],
        ),
        (
            json!({"kind": "pods", "name": "abcdef", "count": 1}),
            vec!["argument `name`", "5"],
        ),
        (
            json!({"kind": "pods", "name": "web", "count": 11}),
            vec!["argument `count`", "10"],
        ),
        (
            json!({"kind": "pods", "name": "web", "count": "1"}),
            vec!["argument `count`", "integer"],
        ),
        (json!({"kind": "pods", "name": "web"}), vec!["arguments", "count"]),
        (
            json!({"kind": "pods", "name": "web", "count": 1, "extra": 1}),
            vec!["extra"],
        ),
    ] {
        let error = tool.call(&arguments.to_string()).await.unwrap_err();
        assert!(error.starts_with("invalid arguments: "), "{error}");
        for part in expected {
            assert!(error.contains(part), "{part:?} missing from: {error}");
        }
    }
    assert!(tool.call("not json").await.unwrap_err().contains("not JSON"));
}

#[tokio::test]
async fn declared_variables_are_passed_and_credentials_are_not() {
    // SAFETY: these names are used by this test only; std serialises its own environment
    // accesses, and nothing in this test binary reads the environment from C code.
    unsafe {
        std::env::set_var("CMDTOOL_TEST_API_KEY", "sekrit-from-host");
        std::env::set_var("CMDTOOL_TEST_PLAIN", "plain-from-host");
    }
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"e\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"env\"\n\
                env = { GREETING = \"hello there\", PASSED_KEY = \"key=${CMDTOOL_TEST_API_KEY}!\" }\n";
    let output = tool(text, dir.path()).call("{}").await.unwrap().text;
    let lines: Vec<&str> = output.lines().collect();
    assert!(lines.contains(&"GREETING=hello there"), "{output}");
    assert!(lines.contains(&"PASSED_KEY=key=sekrit-from-host!"), "{output}");
    assert!(lines.contains(&"CMDTOOL_TEST_PLAIN=plain-from-host"), "{output}");
    assert!(!output.contains("CMDTOOL_TEST_API_KEY"), "{output}");
    // Under the core-only policy the ordinary host variable is gone too.
    let context = CommandToolContext::new(dir.path(), EnvPolicy::CoreOnly).unwrap();
    let core_only = CommandTool::new(spec(text), context).unwrap();
    let output = core_only.call("{}").await.unwrap().text;
    assert!(output.contains("GREETING=hello there") && !output.contains("CMDTOOL_TEST_PLAIN"));
    let missing = "name = \"m\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"env\"\n\
                   env = { TOKEN = \"${CMDTOOL_TEST_NEVER_SET}\" }\n";
    let error = tool(missing, dir.path()).call("{}").await.unwrap_err();
    assert!(
        error.contains("CMDTOOL_TEST_NEVER_SET") && error.contains("TOKEN"),
        "{error}"
    );
}

#[tokio::test]
async fn programs_run_in_the_workspace_without_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let pwd = "name = \"p\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"pwd\"\n";
    assert_eq!(
        tool(pwd, dir.path()).call("{}").await.unwrap().text,
        format!("{}\n", std::fs::canonicalize(dir.path()).unwrap().display())
    );
    // A relative program path is under the workspace.
    argv_printer(dir.path());
    let relative =
        "name = \"r\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"./show-argv\"\nargs = [\"a\"]\n";
    assert_eq!(
        tool(relative, dir.path()).call("{}").await.unwrap().text,
        "argc=1\n[a]\n"
    );
    let silent = "name = \"s\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"true\"\n";
    assert_eq!(
        tool(silent, dir.path()).call("{}").await.unwrap().text,
        "(no output)"
    );
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_with_both_streams() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"f\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"sh\"\n\
                args = [\"-c\", \"echo out; echo err >&2; exit 3\"]\n";
    assert_eq!(
        tool(text, dir.path()).call("{}").await.unwrap_err(),
        "out\nerr\nexit code 3"
    );
}

#[tokio::test]
async fn a_timeout_stops_the_program_and_keeps_partial_output() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"slow\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"sh\"\n\
                args = [\"-c\", \"echo started; sleep 30\"]\ntimeout_ms = 300\n";
    let started = Instant::now();
    let error = tool(text, dir.path()).call("{}").await.unwrap_err();
    // Guards against a hang only: over 30x the 300 ms timeout; what ended the call is below.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(error.starts_with("started\n"), "{error}");
    assert!(error.contains("timed out after 300 ms"), "{error}");
}

#[tokio::test]
async fn a_missing_program_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let bare = "name = \"x\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"no-such-program-4711\"\n";
    let error = tool(bare, dir.path()).call("{}").await.unwrap_err();
    assert!(
        error.contains("\"no-such-program-4711\"") && error.contains("not found on PATH"),
        "{error}"
    );
    let path = "name = \"y\"\ndescription = \"d\"\ncategory = \"read\"\ncmd = \"bin/missing\"\n";
    let error = tool(path, dir.path()).call("{}").await.unwrap_err();
    assert!(
        error.contains("\"bin/missing\"") && error.contains("does not exist"),
        "{error}"
    );
}

#[test]
fn command_tools_refuse_a_remote_environment() {
    let options = EnvOptions {
        env: Some("ssh://me@example.com/work".to_string()),
        ..EnvOptions::default()
    };
    let error = CommandToolContext::from_options(&options).unwrap_err();
    assert!(
        error.contains("this machine only") && error.contains("ssh://me@example.com/work"),
        "{error}"
    );
}
