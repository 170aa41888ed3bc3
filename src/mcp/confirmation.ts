// The person's yes or no before a tool runs under an `ask` rule: one question (an `elicitation/create`
// with a single boolean) and one reading of the answer, for direct tool calls and for calls inside tasks.

/** How a call is described to the person. */
export function describeCall(tool: string, args: Record<string, unknown>): string {
  return tool === 'bash' ? `run the command: ${String(args.command)}` : `use ${tool} with ${JSON.stringify(args).slice(0, 300)}`;
}

/** The `elicitation/create` params that ask whether to allow a call. */
export function confirmationRequest(message: string) {
  return {
    message,
    requestedSchema: {
      type: 'object',
      // Checked by default: a generic host form's Accept button must mean "run it"; a person who does not
      // want the call declines (or unticks the box).
      properties: { allow: { type: 'boolean', title: 'Allow', description: 'Allow this call', default: true } },
    },
  };
}

/**
 * Accept means run: an accepted answer allows the call unless the person unticked the box (`allow: false`);
 * decline, cancel, or anything else refuses it. A host that sends accept with no content (its form had
 * no fields it could show) has still said yes.
 */
export function isAllowed(answer: unknown): boolean {
  const a = answer as { action?: unknown; content?: unknown } | undefined;
  if (a?.action !== 'accept') return false;
  const content = a.content;
  if (content === undefined || content === null) return true;
  if (typeof content !== 'object' || Array.isArray(content)) return false;
  return (content as { allow?: unknown }).allow !== false;
}
