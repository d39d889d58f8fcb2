//! The `execution-environment` import, for any store whose data can reach an environment:
//! the core's sessions and tool plugins (whose environment is wrapped in their grants).

use super::core::{execution_environment as ee, types};
use crate::approval::ApprovalPolicy;
use crate::environments::environment::Environment;
use crate::environments::process::{OutputOrConnection, ProcessHandle};
use crate::session_host::control::AgentEvent;
use crate::session_host::control::SessionControl;
use crate::session_host::network_events;
use crate::session_host::sandbox_rerun::{self, CommandCalls};
use std::sync::Arc;
use tokio::sync::mpsc;
use wasmtime::Result;
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};

/// What `execution-environment` calls reach in a store's data.
pub struct EnvView<'a> {
    pub env: &'a Arc<dyn Environment>,
    pub table: &'a mut ResourceTable,
    /// The session's interruptions, which kill a running command; `None` for stores that
    /// are not interrupted that way (plugins are stopped by their own limits).
    pub control: Option<Arc<SessionControl>>,
    /// Where a command the sandbox refused may be offered to run again without it: a
    /// session's store; `None` for plugins, whose commands are not the user's to approve.
    pub rerun: Option<RerunOffer<'a>>,
    /// Where a session's commands' network connections are reported (see
    /// [`crate::sandbox::proxy`]); `None` for plugins, whose commands' are only logged.
    pub events: Option<&'a mpsc::UnboundedSender<AgentEvent>>,
}

/// A session's approvals and the calls its processes belong to.
pub struct RerunOffer<'a> {
    pub approvals: &'a Arc<ApprovalPolicy>,
    pub calls: &'a mut CommandCalls,
}

impl EnvView<'_> {
    /// Reports `records` of `process` as the session's NETWORK_CONNECTION events.
    fn report_connections(&self, process: u32, records: Vec<egress_proxy::ConnectionRecord>) {
        let Some(events) = self.events else { return };
        let (session, call) = match &self.rerun {
            Some(offer) => offer.calls.call_of(process),
            None => (None, None),
        };
        for record in records {
            let data = network_events::event_data(record, call);
            let _ = events.send(crate::persist::host_event(session.unwrap_or_default(), data));
        }
    }

    /// Every connection `process` reported so far, reported.
    fn drain_connections(&mut self, process: &Resource<ProcessHandle>) -> Result<()> {
        let records = self.table.get_mut(process)?.connections_so_far();
        self.report_connections(process.rep(), records);
        Ok(())
    }

    /// Once `process` has ended, offers to run it again without the sandbox if the sandbox
    /// refused it (see [`sandbox_rerun`]); the marker chunk when it runs again.
    async fn offer_rerun(&mut self, process: &Resource<ProcessHandle>) -> Result<Option<ee::OutputChunk>> {
        let Some(offer) = &mut self.rerun else {
            return Ok(None);
        };
        let Some(call) = offer.calls.take(process.rep()) else {
            return Ok(None);
        };
        let approvals = offer.approvals.clone();
        let handle = self.table.get_mut(process)?;
        let marker = sandbox_rerun::offer(&approvals, self.control.as_ref(), &call, handle).await;
        Ok(marker.map(Into::into))
    }
}

/// Store data that backs `execution-environment`.
pub trait EnvironmentHost: Send + 'static {
    fn env_view(&mut self) -> EnvView<'_>;
}

struct EnvData;

impl HasData for EnvData {
    type Data<'a> = EnvView<'a>;
}

/// Links `execution-environment` (and the `types` it uses) for a store of `T`.
pub fn add_to_linker<T: EnvironmentHost>(linker: &mut Linker<T>) -> Result<()> {
    types::add_to_linker::<T, EnvData>(linker, |s| s.env_view())?;
    ee::add_to_linker::<T, EnvData>(linker, |s| s.env_view())
}

impl types::Host for EnvView<'_> {}

/// Resolves when the session is interrupted; never without a session.
async fn interrupted(control: Option<Arc<SessionControl>>) {
    match control {
        Some(control) => control.interrupted().await,
        None => std::future::pending().await,
    }
}

impl ee::Host for EnvView<'_> {
    async fn read_file(
        &mut self,
        path: String,
        range: Option<types::ByteRange>,
    ) -> Result<Result<Vec<u8>, types::FsError>> {
        Ok(self
            .env
            .read_file(&path, range.map(|r| (r.offset, r.length)))
            .await
            .map_err(Into::into))
    }

    async fn write_file(&mut self, path: String, contents: Vec<u8>) -> Result<Result<(), types::FsError>> {
        Ok(self.env.write_file(&path, &contents).await.map_err(Into::into))
    }

    async fn delete_file(&mut self, path: String) -> Result<Result<(), types::FsError>> {
        Ok(self.env.delete_file(&path).await.map_err(Into::into))
    }

    async fn rename_file(
        &mut self,
        source: String,
        destination: String,
    ) -> Result<Result<(), types::FsError>> {
        Ok(self
            .env
            .rename_file(&source, &destination)
            .await
            .map_err(Into::into))
    }

    async fn create_directory(&mut self, path: String) -> Result<Result<(), types::FsError>> {
        Ok(self.env.create_directory(&path).await.map_err(Into::into))
    }

    async fn file_exists(&mut self, path: String) -> Result<bool> {
        Ok(self.env.file_exists(&path).await)
    }

    async fn stat(&mut self, path: String) -> Result<Result<types::FileStat, types::FsError>> {
        Ok(self.env.stat(&path).await.map(Into::into).map_err(Into::into))
    }

    async fn list_directory(
        &mut self,
        path: String,
        depth: u32,
    ) -> Result<Result<Vec<types::DirEntry>, types::FsError>> {
        Ok(self
            .env
            .list_directory(&path, depth)
            .await
            .map(|entries| entries.into_iter().map(Into::into).collect())
            .map_err(Into::into))
    }

    async fn grep(
        &mut self,
        options: types::GrepOptions,
    ) -> Result<Result<Vec<types::GrepMatch>, types::FsError>> {
        Ok(self
            .env
            .grep(&options.into())
            .await
            .map(|matches| matches.into_iter().map(Into::into).collect())
            .map_err(Into::into))
    }

    async fn glob(
        &mut self,
        pattern: String,
        path: Option<String>,
    ) -> Result<Result<Vec<String>, types::FsError>> {
        Ok(self.env.glob(&pattern, path.as_deref()).await.map_err(Into::into))
    }

    async fn working_directory(&mut self) -> Result<String> {
        Ok(self.env.working_directory())
    }

    async fn platform(&mut self) -> Result<String> {
        Ok(self.env.platform())
    }

    async fn os_version(&mut self) -> Result<String> {
        Ok(self.env.os_version())
    }

    async fn scratch_directory(&mut self) -> Result<Option<String>> {
        Ok(self.env.scratch_directory())
    }

    async fn spawn(
        &mut self,
        request: ee::SpawnRequest,
    ) -> Result<Result<Resource<ProcessHandle>, ee::SpawnError>> {
        let command = request.command.clone();
        let started = match self.env.spawn(request.into()).await {
            Ok(process) => Ok(self.table.push(process)?),
            Err(error) => Err(error.into()),
        };
        // A process that did not start uses its call's approval up too.
        if let Some(offer) = &mut self.rerun {
            offer
                .calls
                .started(started.as_ref().ok().map(Resource::rep), &command);
        }
        Ok(started)
    }
}

impl ee::HostProcess for EnvView<'_> {
    async fn id(&mut self, process: Resource<ProcessHandle>) -> Result<u32> {
        Ok(self.table.get(&process)?.pid())
    }

    async fn read_output(&mut self, process: Resource<ProcessHandle>) -> Result<Option<ee::OutputChunk>> {
        let control = self.control.clone();
        loop {
            let handle = self.table.get_mut(&process)?;
            // An interruption kills the command; its remaining output still drains. A
            // connection that ends meanwhile is reported at once.
            tokio::select! {
                next = handle.next_output_or_connection() => match next {
                    OutputOrConnection::Output(Some(chunk)) => return Ok(Some(chunk.into())),
                    OutputOrConnection::Output(None) => break,
                    OutputOrConnection::Connection(record) => {
                        self.report_connections(process.rep(), vec![record]);
                    }
                },
                _ = interrupted(control.clone()) => {
                    handle.kill();
                    return Ok(handle.read_output().await.map(Into::into));
                }
            }
        }
        // Its output has ended: a command the sandbox refused may run again, whose output
        // follows.
        self.offer_rerun(&process).await
    }

    async fn wait(&mut self, process: Resource<ProcessHandle>) -> Result<ee::ExecResult> {
        self.offer_rerun(&process).await?;
        let control = self.control.clone();
        let handle = self.table.get_mut(&process)?;
        let result = tokio::select! {
            result = handle.wait() => result,
            _ = interrupted(control) => {
                handle.kill();
                handle.wait().await
            }
        };
        // Every connection is in before the result.
        self.drain_connections(&process)?;
        Ok(result.into())
    }

    async fn kill(&mut self, process: Resource<ProcessHandle>) -> Result<()> {
        self.table.get(&process)?.kill();
        Ok(())
    }

    async fn drop(&mut self, process: Resource<ProcessHandle>) -> Result<()> {
        self.drain_connections(&process)?;
        if let Some(offer) = &mut self.rerun {
            offer.calls.dropped(process.rep());
        }
        self.table.delete(process)?;
        Ok(())
    }
}
