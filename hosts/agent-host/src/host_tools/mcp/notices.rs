//! A transport that notes a server's `notifications/tools/list_changed` as it is received.
//! rmcp hands notifications to the client's handler in a task of their own, which may run
//! after the messages that followed; noted here, in the order the server sent them, an
//! announcement made during a call is known by the time the call's result is.

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct NotingListChanges<T> {
    inner: T,
    tools_changed: Arc<AtomicBool>,
}

impl<T> NotingListChanges<T> {
    /// `inner`, setting `tools_changed` on each announcement.
    pub fn new(inner: T, tools_changed: Arc<AtomicBool>) -> Self {
        Self { inner, tools_changed }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for NotingListChanges<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let tools_changed = self.tools_changed.clone();
        let next = self.inner.receive();
        async move {
            let message = next.await;
            if let Some(JsonRpcMessage::Notification(notification)) = &message
                && matches!(
                    notification.notification,
                    ServerNotification::ToolListChangedNotification(_)
                )
            {
                tools_changed.store(true, Ordering::SeqCst);
            }
            message
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
