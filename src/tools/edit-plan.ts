// What `edit` decides before it writes: the new file's bytes and the answer, or why it refuses. This
// crosses from a tool-pool thread (which matches a large file) to the calling thread (which writes it).

export interface EditArgs {
  path: string;
  oldText?: string;
  newText?: string;
  edits?: EditReplacement[];
}

export interface EditReplacement {
  oldText: string;
  newText: string;
}

/** The structuredContent of a successful edit (matches editDefinition.outputSchema). */
export interface EditSummary {
  [key: string]: unknown;
  path: string;
  replacements: number;
  firstChangedLine: number;
  linesAdded: number;
  linesRemoved: number;
  diff: string;
}

/** The edit, decided: the whole new content in UTF-8, and the answer once it is written. */
export interface EditPlan {
  readonly kind: 'plan';
  readonly bytes: Uint8Array;
  readonly text: string;
  readonly structured: EditSummary;
}

/** An edit refused before anything was written (no match, two matches, overlap, a limit), with the message the caller reads. */
export interface EditRefused {
  readonly kind: 'refused';
  readonly message: string;
}

/** Decides an edit; the default runs in the calling thread, the tool pool gives one that runs on its threads. */
export type EditPlanner = (args: EditArgs, workspace: string, signal: AbortSignal) => Promise<EditPlan | EditRefused>;
