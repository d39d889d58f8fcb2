// The agent-core component in the browser: open a session over an in-memory workspace,
// submit tasks, stream events, steer and stop. See README.md in this folder.

export { AgentSession, AgentError } from './session.js';
export { MemoryWorkspace, WorkspaceError } from './workspace.js';
export { executionEnvironment } from './environment.js';
export { llmTransport, authHeaders, endpointUrl, PROVIDER_ENDPOINTS } from './transport.js';
export { sessionConfig, DEFAULT_MODELS, DEFAULT_LIMITS } from './config.js';
export { instantiateCore, DEFAULT_CORE_URL } from './component.js';
export { McpServer } from './mcp.js';
