// Compiled (not run) by `npm test`: a web app using the package as documented must type-check
// against src/index.d.ts and the types jco generated.

import {
  AgentError, AgentSession, McpServer, MemoryWorkspace, sessionConfig, type AgentEvent, type SubmitOutcome, type ToolSource,
} from '../../src/index.js';

export async function run(baseUrl: string, apiKey: string): Promise<SubmitOutcome> {
  const workspace = new MemoryWorkspace({ 'README.md': '# Hello\n', 'src/': null });
  const docs = await McpServer.connect({ name: 'docs', url: new URL('https://mcp.example/mcp'), headers: { authorization: `Bearer ${apiKey}` }, timeoutMs: 30_000 });
  const sources: ToolSource[] = [docs];
  console.log(docs.name, docs.url, docs.generation(), docs.tools().map((tool) => tool.name));
  workspace.onChange((change) => console.log(change.kind, change.path, change.to ?? ''));
  const session = await AgentSession.open({
    workspace,
    endpoints: { anthropic: { baseUrl, apiKey } },
    config: {
      provider: 'anthropic',
      limits: { maxToolRoundsPerInput: 20 },
      tools: [{ name: 'now', description: 'The time.', call: () => new Date().toISOString() }],
      toolSources: sources,
    },
    approve: ({ toolName }) => (toolName === 'write_file' ? true : `${toolName} needs a click`),
  });
  const off = session.on((event: AgentEvent) => {
    if (event.kind === 'ASSISTANT_TEXT_DELTA') console.log(event.data.delta as string);
    if (event.kind === 'TOOL_CALL_END') console.log(event.data.tool_name, event.data.output ?? event.data.error);
  });
  try {
    const outcome = await session.submit('Add a LICENSE file.');
    session.steer('Use the MIT licence.');
    session.followUp('Then list the files.');
    const firstInput: number | undefined = session.checkpoints()[0]?.input;
    const undone: string[] = session.undo().removed;
    console.log(firstInput, undone, session.restore(1).restored.length);
    return outcome;
  } catch (e) {
    if (e instanceof AgentError && e.kind === 'llm') console.error(e.detail);
    throw e;
  } finally {
    off();
    const zip: Uint8Array = workspace.toZip();
    console.log(zip.length, sessionConfig({ provider: 'gemini' }).protocol, session.state);
    session.close();
    await docs.close();
  }
}

for await (const event of (await AgentSession.open({ workspace: new MemoryWorkspace() })).events()) {
  console.log(event.kind, event.agentId ?? '');
}
