//! The `agent-core` world's imports for a session's store: each generated trait converts
//! its arguments once and delegates to [`HostState`], which speaks the host's own types.

use super::core::{host_tools, llm_transport as lt, session_host as sh, types};
use super::environment::{EnvView, EnvironmentHost, RerunOffer};
use crate::session_host::state::HostState;
use crate::transport::response::ResponseHandle;
use wasmtime::Result;
use wasmtime::component::Resource;

impl EnvironmentHost for HostState {
    fn env_view(&mut self) -> EnvView<'_> {
        EnvView {
            env: &self.env,
            table: &mut self.table,
            control: Some(self.control.clone()),
            rerun: Some(RerunOffer {
                approvals: &self.approvals,
                calls: &mut self.command_calls,
            }),
            events: Some(&self.events),
        }
    }
}

impl lt::Host for HostState {
    async fn send(
        &mut self,
        request: lt::HttpRequest,
    ) -> Result<Result<Resource<ResponseHandle>, lt::TransportError>> {
        match HostState::send(self, request.into()).await {
            Ok(response) => Ok(Ok(self.table.push(response)?)),
            Err(error) => Ok(Err(error.into())),
        }
    }
}

impl lt::HostHttpResponse for HostState {
    async fn status(&mut self, response: Resource<ResponseHandle>) -> Result<u16> {
        Ok(self.table.get(&response)?.status)
    }

    async fn headers(&mut self, response: Resource<ResponseHandle>) -> Result<Vec<(String, String)>> {
        Ok(self.table.get(&response)?.headers.clone())
    }

    async fn next_chunk(
        &mut self,
        response: Resource<ResponseHandle>,
    ) -> Result<Result<Option<Vec<u8>>, lt::TransportError>> {
        let control = self.control.clone();
        let response = self.table.get_mut(&response)?;
        Ok(HostState::next_chunk(control, response).await.map_err(Into::into))
    }

    async fn drop(&mut self, response: Resource<ResponseHandle>) -> Result<()> {
        self.table.delete(response)?;
        Ok(())
    }
}

impl sh::Host for HostState {
    async fn emit(&mut self, event: sh::Event) -> Result<()> {
        let hooked = HostState::emit(
            self,
            event.kind.into(),
            event.session_id.clone(),
            event.timestamp_ms,
            &event.data_json,
        );
        if let (Some(data), Some((hooks, cwd))) = (hooked, self.hooks()) {
            // An interruption stops waiting for the hooks (a cancel, Ctrl-C).
            let control = self.control.clone();
            tokio::select! {
                () = hooks.on_event(&event.session_id, &data, &cwd) => {}
                () = control.interrupted() => {}
            }
        }
        Ok(())
    }

    async fn record_history(&mut self, _session_id: String, entry_json: String) -> Result<()> {
        HostState::record_history(self, &entry_json);
        Ok(())
    }

    async fn take_steering(&mut self, _session_id: String) -> Result<Vec<String>> {
        Ok(self.control.take_steering())
    }

    async fn take_follow_ups(&mut self, _session_id: String) -> Result<Vec<String>> {
        Ok(self.control.take_follow_ups())
    }

    async fn abort_requested(&mut self, _session_id: String) -> Result<Option<sh::Interruption>> {
        Ok(self.control.interruption().map(Into::into))
    }

    async fn sleep(&mut self, _session_id: String, ms: u64) -> Result<bool> {
        Ok(HostState::sleep(self, ms).await)
    }

    async fn log(&mut self, level: types::LogLevel, message: String) -> Result<()> {
        HostState::log(level.into(), &message);
        Ok(())
    }

    async fn approve(&mut self, request: sh::ApprovalRequest) -> Result<sh::Approval> {
        Ok(HostState::approve(self, request.into()).await.into())
    }

    async fn spawn_subagent(&mut self, request: sh::SubagentRequest) -> Result<Result<String, String>> {
        Ok(HostState::spawn_subagent(self, request.into()).await)
    }

    async fn subagent_send(&mut self, agent_id: String, message: String) -> Result<Result<(), String>> {
        Ok(HostState::subagent_send(self, &agent_id, message))
    }

    async fn subagent_wait(&mut self, agent_id: String) -> Result<Result<sh::SubagentResult, String>> {
        Ok(HostState::subagent_wait(self, &agent_id).await.map(Into::into))
    }

    async fn subagent_close(&mut self, agent_id: String) -> Result<Result<(), String>> {
        Ok(HostState::subagent_close(self, &agent_id).await)
    }

    async fn spend(
        &mut self,
        _session_id: String,
        amount: sh::Spending,
        released: sh::Spending,
    ) -> Result<sh::Spending> {
        let ours = |s: sh::Spending| agent_protocol::Spending {
            tokens: s.tokens,
            cost_usd: s.cost_usd,
        };
        let total = self.spending.spend(ours(amount), ours(released));
        Ok(sh::Spending {
            tokens: total.tokens,
            cost_usd: total.cost_usd,
        })
    }
}

impl host_tools::Host for HostState {
    async fn call(
        &mut self,
        _session_id: String,
        name: String,
        arguments_json: String,
    ) -> Result<Result<host_tools::ToolOutput, String>> {
        Ok(HostState::call_tool(self, &name, &arguments_json)
            .await
            .map(|output| host_tools::ToolOutput {
                text: output.text,
                images: output
                    .images
                    .into_iter()
                    .map(|image| host_tools::ToolImage {
                        media_type: image.media_type,
                        data: image.data,
                    })
                    .collect(),
            }))
    }

    async fn changes(&mut self, _session_id: String) -> Result<Option<Vec<types::ToolDefinition>>> {
        Ok(HostState::tool_changes(self)
            .await
            .map(|definitions| definitions.iter().map(Into::into).collect()))
    }
}
