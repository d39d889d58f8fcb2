//! A real MCP server over streamable HTTP for the tests: the npm reference server
//! `server-everything` in its `streamableHttp` mode, bound to 127.0.0.1 on a free port that
//! it reports (`tests/mcp-servers/listen-on-loopback.mjs`), killed when dropped.

use crate::paths::mcp_server;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct EverythingOverHttp {
    child: Child,
    pub port: u16,
}

impl EverythingOverHttp {
    /// Starts it and waits until it listens.
    pub fn start() -> Self {
        let mut child = Command::new("node")
            .arg("--import")
            .arg(mcp_server("listen-on-loopback.mjs"))
            .arg(mcp_server("server-everything"))
            .arg("streamableHttp")
            .env("PORT", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start node: {e}"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr pipe"));
        let mut lines = BufReader::new(stderr).lines();
        let port = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(port) = line.strip_prefix("LISTENING-ON-PORT ") {
                        break port.parse().unwrap_or_else(|e| panic!("{line:?}: {e}"));
                    }
                }
                other => panic!("server-everything ended before it listened: {other:?}"),
            }
        };
        // Its later messages are read, so that a full pipe never stalls it.
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, port }
    }

    /// Its MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for EverythingOverHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
