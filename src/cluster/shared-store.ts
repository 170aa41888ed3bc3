// The store several nodes share: PostgreSQL opened as this node (its owner key in the rows it holds),
// with the session event log and this node's LISTEN connection (session-event-feed.ts) on it.

import { nodeOwnership } from '../store/node-ownership.ts';
import type { Ownership } from '../store/ownership.ts';
import { defaultNodeId, PostgresConversationStore } from '../store/postgres-store.ts';
import { SessionEventFeed } from '../store/session-event-feed.ts';
import type { Logger } from '../log/logger.ts';

/** Opens the shared store at `url` as this node; `transcriptChanged` hears of transcripts another node appended to, `taskStatusChanged` of statuses it set. */
export async function openSharedStore(
  url: string,
  options: { readonly nodeId?: string | undefined; readonly taskLeaseMs?: number | undefined; readonly logger: Logger },
  transcriptChanged: (conversation: string) => void,
  taskStatusChanged?: (conversation: string) => void,
  relistened?: () => void,
): Promise<{ readonly store: PostgresConversationStore; readonly ownership: Ownership; readonly feed: SessionEventFeed }> {
  const ownership = nodeOwnership(options.nodeId ?? defaultNodeId());
  const store = await PostgresConversationStore.open(url, {
    ownership,
    ...(options.taskLeaseMs === undefined ? {} : { leaseMs: options.taskLeaseMs }),
  });
  const feed = new SessionEventFeed(store, {
    // Another node appended to a transcript: this node's sessions subscribed to it hear.
    transcriptChanged,
    ...(taskStatusChanged === undefined ? {} : { taskStatusChanged }),
    ...(relistened === undefined ? {} : { relistened }),
    onError: (what, error) => options.logger.log('warning', what, { error: error.message }),
  });
  return { store, ownership, feed };
}
