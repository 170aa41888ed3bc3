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
      properties: { allow: { type: 'boolean', title: 'Allow', description: 'Allow this call', default: false } },
      required: ['allow'],
    },
  };
}

/** Only an accepted answer with allow=true allows the call. */
export function isAllowed(answer: unknown): boolean {
  const a = answer as { action?: unknown; content?: { allow?: unknown } } | undefined;
  return a?.action === 'accept' && a.content?.allow === true;
}
