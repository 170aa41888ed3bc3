// A session's stored checkpoint made ready for this node: the connection actor's own checkpoint bytes
// (connection/connection-actor.ts), with this node's configuration in place of the home's (its workspace
// path, server version and settings are this node's to decide; the principal is the same, as the store
// only gives a checkpoint to its principal) and without harness-task tickets: those tasks are the home's
// (or, once its lease lapses, a takeover's), and their answers reach the client by the session events
// log, not by this node's core.

import { decodeCheckpoint, encodeCheckpoint } from '../actors/codec.ts';
import type { Checkpoint } from '../connection/connection-actor.ts';
import { rootAllowed } from '../mcp/roots.ts';
import type { ConnectionConfig } from '../mcp/state.ts';
import type { ProtocolVersion } from '../mcp/version.ts';

export interface Rehydrated {
  /** What the connection actor starts from. */
  readonly checkpoint: ArrayBuffer;
  /** The version the session negotiated (null: it was never initialized). */
  readonly version: ProtocolVersion | null;
  /** Resource URIs the session subscribed to: this node must watch them for it. */
  readonly subscriptions: readonly string[];
}

export function rehydrate(bytes: Uint8Array, config: ConnectionConfig): Rehydrated {
  const stored = decodeCheckpoint<Checkpoint>(bytes);
  // The root the home chose is kept only where this node's configuration would accept it (a node with
  // --workspace, or another workspace, must not inherit a root its own policy refuses).
  const root = typeof stored.root === 'string' && rootAllowed(config, stored.root) ? stored.root : null;
  const checkpoint: Checkpoint = { ...stored, config, root, tasks: [] };
  return { checkpoint: encodeCheckpoint(checkpoint), version: stored.protocolVersion, subscriptions: stored.subscriptions };
}

/** The negotiated version in stored checkpoint bytes (the HTTP side needs it before the session opens). */
export function storedVersion(bytes: Uint8Array): ProtocolVersion | null {
  return decodeCheckpoint<Checkpoint>(bytes).protocolVersion;
}
