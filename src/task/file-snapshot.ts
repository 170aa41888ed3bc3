// What super-pi-code records of a file it changes, as transcript entries (`file_snapshot`): the
// before-image, written ahead of the change, and the completed snapshot with the content it left.

export interface FileSnapshot {
  readonly path: string;
  /** null: the file did not exist. */
  readonly before: string | null;
  readonly after: string | null;
}

/**
 * The write-ahead half of a snapshot: appended (a `file_snapshot` entry with `stage: 'before'`) and
 * committed before the tool may change the file, so a crash anywhere after it leaves the original
 * content in the store. The completed snapshot (with `after`) is appended once the tool returns.
 */
export interface BeforeImage {
  /** The tool call that changes the file. */
  readonly id: string;
  readonly path: string;
  readonly before: string | null;
  readonly stage: 'before';
}

export function isBeforeImage(payload: unknown): payload is BeforeImage {
  return typeof payload === 'object' && payload !== null && (payload as { stage?: unknown }).stage === 'before';
}
