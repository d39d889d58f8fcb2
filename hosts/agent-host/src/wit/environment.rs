//! The `execution-environment` import, for any store whose data can reach an environment:
//! the core's sessions and tool plugins (whose environment is wrapped in their grants).

use super::core::{execution_environment as ee, types};
use crate::approval::ApprovalPolicy;
use crate::environments::environment::Environment;
use crate::environments::process::ProcessHandle;
use crate::session_host::control::SessionControl;
use crate::session_host::sandbox_rerun::{self, CommandCalls};
use std::sync::Arc;
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
}

/// A session's approvals and the calls its processes belong to.
pub struct RerunOffer<'a> {
    pub approvals: &'a Arc<ApprovalPolicy>,
    pub calls: &'a mut CommandCalls,
}

impl EnvView<'_> {
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
        let handle = self.table.get_mut(&process)?;
        // An interruption kills the command; its remaining output still drains.
        tokio::select! {
            chunk = handle.read_output() => if let Some(chunk) = chunk {
                return Ok(Some(chunk.into()));
            },
            _ = interrupted(control) => {
                handle.kill();
                return Ok(handle.read_output().await.map(Into::into));
            }
        }
        // Its output has ended: a command the sandbox refused may run again, whose output
        // follows.
        self.offer_rerun(&process).await
    }

    async fn wait(&mut self, process: Resource<ProcessHandle>) -> Result<ee::ExecResult> {
        self.offer_rerun(&process).await?;
        let control = self.control.clone();
        let process = self.table.get_mut(&process)?;
        tokio::select! {
            result = process.wait() => return Ok(result.into()),
            _ = interrupted(control) => process.kill(),
        }
        Ok(process.wait().await.into())
    }

    async fn kill(&mut self, process: Resource<ProcessHandle>) -> Result<()> {
        self.table.get(&process)?.kill();
        Ok(())
    }

    async fn drop(&mut self, process: Resource<ProcessHandle>) -> Result<()> {
        if let Some(offer) = &mut self.rerun {
            offer.calls.take(process.rep());
        }
        self.table.delete(process)?;
        Ok(())
    }
}
