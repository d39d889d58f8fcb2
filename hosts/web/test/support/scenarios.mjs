// Scripted scenarios run in the browser and natively: the task, the workspace it starts from,
// and the model's replies (Anthropic Messages, streamed by the scripted server).

const text = (t) => ({ type: 'text', text: t });
const tool = (id, name, input) => ({ type: 'tool_use', id, name, input });

export const CREATE_A_FILE = {
  name: 'create-a-file',
  task: 'Create notes/todo.md listing two chores.',
  files: { 'README.md': '# Chores\n\nNotes live in notes/.\n' },
  script: {
    anthropic: [
      [text("I'll create the list."), tool('toolu_c1', 'write_file', { file_path: 'notes/todo.md', content: '- water the plants\n- fix the bike\n' })],
      [tool('toolu_c2', 'read_file', { file_path: 'notes/todo.md' })],
      [text('Created notes/todo.md with two chores.')],
    ],
  },
  expectedFiles: {
    'README.md': '# Chores\n\nNotes live in notes/.\n',
    'notes/todo.md': '- water the plants\n- fix the bike\n',
  },
};

export const EDIT_A_FILE = {
  name: 'edit-a-file',
  task: 'Make greet say Hi with a template literal.',
  files: {
    'src/greet.js': "export function greet(name) {\n  return 'Hello, ' + name;\n}\n",
    'src/main.js': "import { greet } from './greet.js';\nconsole.log(greet('web'));\n",
  },
  script: {
    anthropic: [
      [tool('toolu_e1', 'grep', { pattern: 'Hello', path: 'src' })],
      [tool('toolu_e2', 'read_file', { file_path: 'src/greet.js' })],
      [
        text('Switching to a template literal.'),
        tool('toolu_e3', 'edit_file', { file_path: 'src/greet.js', old_string: "return 'Hello, ' + name;", new_string: 'return `Hi, ${name}!`;' }),
      ],
      [tool('toolu_e4', 'glob', { pattern: '**/*.js' })],
      [text('greet now returns `Hi, ${name}!`.')],
    ],
  },
  expectedFiles: {
    'src/greet.js': 'export function greet(name) {\n  return `Hi, ${name}!`;\n}\n',
    'src/main.js': "import { greet } from './greet.js';\nconsole.log(greet('web'));\n",
  },
};

/** A slow first answer with a tool call, so the page can steer while it streams. */
export const STEER = {
  name: 'steer',
  task: 'Summarise the README.',
  files: { 'README.md': '# Project\n\nA tiny project.\n' },
  steering: 'Keep the summary to one line.',
  script: {
    anthropic: [
      { blocks: [text('Let me read it first.'), tool('toolu_s1', 'read_file', { file_path: 'README.md' })], delay_ms: 250 },
      [text('One line: a tiny project.')],
    ],
  },
};

// Four text blocks of three pieces each, 500 ms apart: after the first piece, ten seconds of
// answer are left for the stop to cut.
const SLOW_ANSWER = ['This answer streams', ' very slowly, one piece', ' at a time,', ' for many seconds.'];

/** An answer streamed slowly, to be stopped (`pieces` text deltas in all), then a quick one. */
export const STOP = {
  name: 'stop',
  task: 'Write a long essay.',
  files: {},
  pieces: SLOW_ANSWER.length * 3,
  script: {
    anthropic: [
      { blocks: SLOW_ANSWER.map(text), delay_ms: 500 },
      [text('Still here.')],
    ],
  },
};
