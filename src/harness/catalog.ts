// The four Super-Pi harnesses as data. Each one's policy covers every tool, so nothing is allowed by omission.

import type { ToolName } from '../tools/definition.ts';
import type { Harness, ToolRule } from './harness.ts';
import { type HarnessId, harnessIds } from './ids.ts';

const readOnly = (why: string): Pick<Record<ToolName, ToolRule>, 'read' | 'grep' | 'find' | 'ls'> => ({
  read: { verdict: 'allow', why },
  grep: { verdict: 'allow', why },
  find: { verdict: 'allow', why },
  ls: { verdict: 'allow', why },
});

const code: Harness = {
  id: 'super-pi-code',
  title: 'Super-Pi Code',
  description: 'Changes a repository: reads, edits and writes files and runs commands in the workspace, and can undo its changes.',
  systemPrompt: [
    'You are Super-Pi Code, a coding agent working inside one repository (the workspace).',
    'Read before you change: use read, grep, find and ls to understand the code, then make small, exact edits with edit (or write for new files).',
    'Run the project\'s own commands with bash to build and test your change; report what you ran and what it printed.',
    'Stay inside the workspace. Never touch .git by hand. When you finish, summarise what changed and why, file by file.',
  ].join('\n'),
  policy: {
    ...readOnly('reading the workspace is always allowed'),
    write: { verdict: 'allow', why: 'the code harness changes the repository', paths: [
      { under: '.git', anyDepth: true, verdict: 'deny', why: 'a repository (the workspace or one nested in it) is changed through git commands, not by writing files in its .git, whose hooks and config git runs' },
    ] },
    edit: { verdict: 'allow', why: 'the code harness changes the repository', paths: [
      { under: '.git', anyDepth: true, verdict: 'deny', why: 'a repository (the workspace or one nested in it) is changed through git commands, not by editing files in its .git, whose hooks and config git runs' },
    ] },
    bash: { verdict: 'ask', why: 'a shell command can do anything the user can; the person confirms it' },
    harness_task: { verdict: 'allow', why: 'the code harness may hand work to another harness' },
  },
  prompt: {
    description: 'Start a coding task in the repository with the Super-Pi Code harness.',
    subject: 'task',
    arguments: [
      { name: 'task', description: 'What to build, fix or change.', required: true },
      { name: 'path', description: 'A file or directory to focus on (workspace-relative).', required: false, completes: 'path' },
    ],
  },
};

const assistant: Harness = {
  id: 'super-pi-assistant',
  title: 'Super-Pi Assistant',
  description: 'Works with a person in conversation: explains, drafts and answers. It has no filesystem access.',
  systemPrompt: [
    'You are Super-Pi Assistant. You work with a person who is present, in conversation.',
    'You have no access to files or commands. Ask when something is unclear; say plainly what you do not know.',
    'When work needs the repository, propose a task for the Super-Pi Code harness instead of guessing at files.',
  ].join('\n'),
  policy: {
    read: { verdict: 'deny', why: 'the assistant has no filesystem' },
    grep: { verdict: 'deny', why: 'the assistant has no filesystem' },
    find: { verdict: 'deny', why: 'the assistant has no filesystem' },
    ls: { verdict: 'deny', why: 'the assistant has no filesystem' },
    write: { verdict: 'deny', why: 'the assistant has no filesystem' },
    edit: { verdict: 'deny', why: 'the assistant has no filesystem' },
    bash: { verdict: 'deny', why: 'the assistant has no filesystem and runs no commands' },
    harness_task: { verdict: 'ask', why: 'starting work in another harness happens only when the person agrees' },
  },
  prompt: {
    description: 'Talk a request through with the Super-Pi Assistant (no filesystem).',
    subject: 'request',
    arguments: [{ name: 'request', description: 'What you want help with.', required: true }],
  },
};

const librarian: Harness = {
  id: 'super-pi-librarian',
  title: 'Super-Pi Librarian',
  description: 'Works alone with no person present: reads the workspace, answers questions and keeps notes that persist across sessions under .superpi/library.',
  systemPrompt: [
    'You are Super-Pi Librarian. No person is present to answer questions or confirm actions, so never wait for one.',
    'You read the workspace to answer questions about it, with file and line references.',
    'You remember across sessions by keeping notes as files under .superpi/library/; read them first, update them last.',
    'You may not run commands, and you may write only under .superpi/library/.',
  ].join('\n'),
  policy: {
    ...readOnly('the librarian reads the workspace to answer questions'),
    write: { verdict: 'allow', why: 'the librarian keeps its notes', paths: [
      { under: '.superpi/library', verdict: 'allow', why: 'the librarian keeps its notes under .superpi/library' },
      { under: '.', verdict: 'deny', why: 'the librarian writes only its notes, under .superpi/library' },
    ] },
    edit: { verdict: 'allow', why: 'the librarian keeps its notes', paths: [
      { under: '.superpi/library', verdict: 'allow', why: 'the librarian keeps its notes under .superpi/library' },
      { under: '.', verdict: 'deny', why: 'the librarian edits only its notes, under .superpi/library' },
    ] },
    bash: { verdict: 'deny', why: 'no person is present to confirm commands, so the librarian runs none' },
    harness_task: { verdict: 'deny', why: 'the librarian works alone and starts no other tasks' },
  },
  prompt: {
    description: 'Ask the Super-Pi Librarian a question about the workspace; it answers from the code and its notes.',
    subject: 'question',
    arguments: [
      { name: 'question', description: 'What you want to know.', required: true },
      { name: 'path', description: 'Where to look first (workspace-relative).', required: false, completes: 'path' },
    ],
  },
};

const planner: Harness = {
  id: 'super-pi-planner',
  title: 'Super-Pi Planner',
  description: 'Reads the workspace and writes a plan; it cannot write files or run commands.',
  systemPrompt: [
    'You are Super-Pi Planner. You read the workspace and produce a plan; you cannot change files or run commands.',
    'A plan names the files to change, the order of the steps, the risks, and how each step is checked.',
    'Prefer small steps that each leave the project working. Say what you could not determine from the code.',
  ].join('\n'),
  policy: {
    ...readOnly('the planner reads the workspace to plan'),
    write: { verdict: 'deny', why: 'the planner cannot write' },
    edit: { verdict: 'deny', why: 'the planner cannot write' },
    bash: { verdict: 'deny', why: 'the planner cannot run commands' },
    harness_task: { verdict: 'deny', why: 'the planner hands its plan over; it does not start tasks' },
  },
  prompt: {
    description: 'Plan a change with the Super-Pi Planner: files, steps, risks and checks, without changing anything.',
    subject: 'goal',
    arguments: [
      { name: 'goal', description: 'What the plan should achieve.', required: true },
      { name: 'path', description: 'The part of the workspace the plan concerns (workspace-relative).', required: false, completes: 'path' },
      { name: 'executor', description: 'The harness that will carry out the plan (a harness id).', required: false, completes: 'harness' },
    ],
  },
};

// A Map: harness ids arrive from callers (initialize `_meta`, `harness_task` arguments); even after
// `isHarnessId`, a lookup must not be able to reach Object.prototype.
const harnesses: ReadonlyMap<HarnessId, Harness> = new Map([code, assistant, librarian, planner].map((h) => [h.id, h]));

export function harnessById(id: HarnessId): Harness {
  const harness = harnesses.get(id);
  if (!harness) throw new Error(`no harness ${id} in the catalogue`);
  return harness;
}

export const allHarnesses: readonly Harness[] = harnessIds.map(harnessById);
