// Building the scripted model's Anthropic replies, and reading what the agent sent back.

export const text = (t) => ({ type: 'text', text: t });
export const tool = (id, name, input) => ({ type: 'tool_use', id, name, input });

/** The tool_result blocks of a recorded Anthropic request. */
export function toolResults(request) {
  return JSON.parse(request.body)
    .messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b) => b.type === 'tool_result');
}
