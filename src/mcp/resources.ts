// The resources super-pi offers, by URI: the workspace context, the tool loadout, and transcripts.
// A transcript URI names its conversation by its percent-encoded id, and a page of it past the first
// by `?after=<seq>`. Two spellings of one URI (`%2D` or `-`, `%c3%a9` or `%C3%A9`) name the same
// transcript: every comparison goes by the decoded conversation id, never by the text.

export const WORKSPACE_URI = 'superpi://workspace';
export const LOADOUT_URI = 'superpi://loadout';
export const TRANSCRIPT_TEMPLATE = 'superpi://conversation/{id}/transcript';
/** On a transcript page's content, when more entries follow it: the URI of the next page. */
export const META_NEXT_URI = 'superpi/nextUri';

// The id segment holds no `/`, `?` or `#` (encodeURIComponent escapes them); the query is what follows `?`.
const transcriptPattern = /^superpi:\/\/conversation\/([^/?#]+)\/transcript(?:\?([^#]*))?$/;
/** The one query a transcript URI takes: `after`, a seq in decimal digits (no sign, no escapes). */
const afterQuery = /^after=(\d{1,16})$/;

/** What a transcript URI names: its conversation and, for a page past the first, the seq the page starts after. */
export interface TranscriptRef {
  readonly conversationId: string;
  /** Null: the bare transcript URI (read from its first entry). */
  readonly afterSeq: number | null;
}

/** A URI that is a transcript's but whose query is malformed: what to tell the caller (-32602). */
export interface TranscriptUriProblem {
  readonly problem: string;
}

export function transcriptUri(id: string): string {
  return `superpi://conversation/${encodeURIComponent(id)}/transcript`;
}

/** The URI of the transcript's page that starts after `afterSeq` (what a read's `superpi/nextUri` names). */
export function transcriptPageUri(id: string, afterSeq: number): string {
  return `${transcriptUri(id)}?after=${afterSeq}`;
}

/**
 * A transcript URI read: its conversation (decoded, so any percent-encoding spelling of the id names the same
 * one) and page; a problem when its query is malformed; null when the URI is not a transcript's at all (or
 * its id is not valid percent-encoding, which names no conversation).
 */
export function parseTranscriptUri(uri: string): TranscriptRef | TranscriptUriProblem | null {
  const m = transcriptPattern.exec(uri);
  if (!m) return null;
  const conversationId = decodedId(m[1] as string);
  if (conversationId === null) return null;
  const query = m[2];
  if (query === undefined) return { conversationId, afterSeq: null };
  const after = afterQuery.exec(query);
  const afterSeq = after ? Number(after[1]) : Number.NaN;
  if (!Number.isSafeInteger(afterSeq)) {
    return { problem: `Invalid params: a transcript URI takes one query, after=<seq> (a whole number of at most ${Number.MAX_SAFE_INTEGER}, in digits), not ${JSON.stringify(`?${query}`.slice(0, 80))}` };
  }
  return { conversationId, afterSeq };
}

/**
 * The conversation a transcript URI names when it names the whole transcript (no query), else null: what
 * subscriptions and listen streams key by, so that every spelling of one transcript's URI is one key.
 */
export function transcriptConversation(uri: string): string | null {
  const ref = parseTranscriptUri(uri);
  return ref !== null && 'conversationId' in ref && ref.afterSeq === null ? ref.conversationId : null;
}

function decodedId(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    // A malformed percent-escape names no conversation.
    return null;
  }
}
