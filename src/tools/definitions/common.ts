// Schema pieces and hints several tool definitions share, so that the same argument is described the
// same way to the model in every tool. Pure data, like the definitions themselves.

/** A non-empty path argument; the tool body resolves it inside the workspace. */
export function pathProperty(description: string) {
  return { type: 'string', minLength: 1, description } as const;
}

/** A count or position that starts at 1: `limit`, `offset`. */
export function positiveIntegerProperty(description: string) {
  return { type: 'integer', minimum: 1, description } as const;
}

/** The hints of a tool that only looks at the workspace: no change, same answer twice, nothing outside. */
export const readOnlyLocal = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const);

/**
 * The notices a tool's text ends with (truncation, limits, skipped files), each as the text words it
 * without its brackets: a client that hands the model only structuredContent still learns how to get more.
 */
export const noticesProperty = {
  type: 'array',
  items: { type: 'string' },
  description: 'The notices the text output ends with (limits reached and how to continue, files skipped), in the same words, and any about this structured result itself; empty when there are none.',
} as const;
