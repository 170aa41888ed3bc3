// The resources super-pi offers, by URI: the workspace context, the tool loadout, and transcripts.

export const WORKSPACE_URI = 'superpi://workspace';
export const LOADOUT_URI = 'superpi://loadout';
export const TRANSCRIPT_TEMPLATE = 'superpi://conversation/{id}/transcript';

const transcriptPattern = /^superpi:\/\/conversation\/([^/]+)\/transcript$/;

export function transcriptUri(id: string): string {
  return `superpi://conversation/${encodeURIComponent(id)}/transcript`;
}

/** The conversation id named by a transcript URI, or null when the URI is not one. */
export function parseTranscriptUri(uri: string): string | null {
  const m = transcriptPattern.exec(uri);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1] as string);
  } catch {
    // A malformed percent-escape names no conversation.
    return null;
  }
}
