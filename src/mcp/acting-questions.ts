// The ids of the server's own requests to a 2025 client that act for a tool call in flight: a confirmation
// (`elicitation/create` under an `ask` rule) and a task's question or model turn. Each id names the tool
// whose call its answer lets go on, so whoever checks an answer's scopes (auth/scopes.ts) learns what
// answering it needs from the answer's id alone, with no table: the core resolves a question only by the
// exact id it sent, so an answer under any other id resolves nothing.

import { isToolName, type ToolName } from '../tools/definition.ts';

/** A confirmation of the call itself (`confirm`), or a question or model turn of a task the call runs (`ask`). */
export type ActingQuestion = 'confirm' | 'ask';

const PREFIXES: readonly string[] = ['superpi-confirm-', 'superpi-ask-'];

/** The id of question number `ticket` acting for a call of `tool`. */
export const actingQuestionId = (kind: ActingQuestion, tool: ToolName, ticket: number): string => `superpi-${kind}-${tool}-${ticket}`;

/**
 * The tool whose call an answer with this id lets go on. `unknown`: an acting question's id that names no
 * tool (one kept in a checkpoint from before ids named their tool), which its checker treats as the most
 * demanding. Undefined: no acting question's id (`roots/list`, a ping, an id of the client's own).
 */
export function toolAnswered(id: unknown): ToolName | 'unknown' | undefined {
  if (typeof id !== 'string') return undefined;
  const prefix = PREFIXES.find((p) => id.startsWith(p));
  if (prefix === undefined) return undefined;
  const rest = id.slice(prefix.length);
  const dash = rest.lastIndexOf('-');
  const tool = dash < 0 ? undefined : rest.slice(0, dash);
  return isToolName(tool) ? tool : 'unknown';
}
