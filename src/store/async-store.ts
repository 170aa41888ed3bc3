// The durable store's contract for backends whose driver is asynchronous (PostgreSQL): the methods of
// `ConversationStore` (store.ts) returning promises, with the same semantics, and an adapter that puts
// the synchronous SQLite store behind it so one contract suite runs against both.

import type {
  Conversation,
  ConversationIds,
  ConversationPage,
  ConversationStatus,
  ConversationStore,
  EntriesOptions,
  EntriesPage,
  Entry,
  EntryType,
  ListOptions,
  NewConversation,
  TaskRecord,
  TaskResult,
} from './store.ts';
import type { ClusterNode } from './cluster-nodes.ts';
import type { ExpiredTask, ParkedResume, RunningCancel, SessionCheckpoint, TakeoverScope, TaskLease } from './task-lease.ts';

/**
 * `ConversationStore`, asynchronous. The semantics are the synchronous store's, restated where a promise
 * changes how they read:
 * - a write is committed (durable, visible to every other store on the same database) before its promise
 *   resolves, so a reply that depends on an entry can be sent once `append` resolves;
 * - the reads that take a principal answer another principal's conversation exactly as a missing one;
 * - a conversation's entries are numbered 1, 2, 3… by `seq`, unique per conversation by a constraint of
 *   the database, whatever number of stores (processes, nodes) append to it at once;
 * - failures reject with `StoreError` (errors.ts) carrying the same codes, or, for the engine's own
 *   failures (a lost connection, say), the driver's error.
 * A call made after `close()` began rejects with `closed`.
 */
export interface AsyncConversationStore {
  /** A new conversation, status `running`, with a fresh random id; this store's owner runs it. */
  createConversation(input: NewConversation): Promise<Conversation>;
  /** The conversation, or null when it does not exist or belongs to another principal. */
  getConversation(id: string, principal: string): Promise<Conversation | null>;
  /** The principal's conversations, most recently updated first; rejects `invalid_cursor` on a forged cursor. */
  listConversations(principal: string, opts?: ListOptions): Promise<ConversationPage>;
  /** The principal's conversation ids that start with `prefix`, newest first, at most `limit` (≤ `MAX_LIST_LIMIT`). */
  recentConversationIds(principal: string, prefix: string, limit: number): Promise<ConversationIds>;
  /** Rejects `not_found` when there is no such conversation. This store's owner becomes its owner. With `epoch`, rejects `fenced` once it is stale; without, bumps it. `result` is kept in the same write. */
  setStatus(id: string, status: ConversationStatus, epoch?: number, result?: TaskResult): Promise<void>;
  /** Appends an entry and bumps the conversation's `updatedAt`; committed before it resolves. Rejects `not_found`; with `epoch`, `fenced` once it is stale. */
  append(conversationId: string, type: EntryType, payload: unknown, epoch?: number): Promise<Entry>;
  /** Entries in seq order, or null when the conversation does not exist or belongs to another principal. */
  entries(conversationId: string, principal: string, opts?: EntriesOptions): Promise<Entry[] | null>;
  /** `ConversationStore.entriesPage`: a page of entries and whether more follow it, in one read. */
  entriesPage(conversationId: string, principal: string, opts?: EntriesOptions): Promise<EntriesPage | null>;
  /** The entry with the largest seq, or null when there is none (or no such conversation). */
  lastEntry(conversationId: string): Promise<Entry | null>;
  /** `ConversationStore.taskRecord`: the conversation, its last seq and its last run's result, in one read. */
  taskRecord(id: string, principal: string): Promise<TaskRecord | null>;
  /** `ConversationStore.claimTask`: running under this store's owner, epoch bumped, a fresh lease. */
  claimTask(id: string, setup: unknown): Promise<TaskLease>;
  /** `ConversationStore.renewLease`: rejects `fenced` once `epoch` is stale. */
  renewLease(id: string, epoch: number): Promise<TaskLease>;
  /** `ConversationStore.expiredTasks`: other owners' running conversations whose lease lapsed. */
  expiredTasks(limit: number, scope?: TakeoverScope): Promise<ExpiredTask[]>;
  /** `ConversationStore.takeOverTask`: the new lease, or null when another claimer won or the epoch moved. */
  takeOverTask(id: string, epoch: number): Promise<TaskLease | null>;
  /** `ConversationStore.cancelRunningTask`: cancelled only while still running, in one write. */
  cancelRunningTask(id: string, principal: string, entry: unknown): Promise<RunningCancel>;
  /** `ConversationStore.resumeParkedTask`: the lease and kept setup, or null (not parked at `seq`, or not the principal's). */
  resumeParkedTask(id: string, principal: string, seq: number): Promise<ParkedResume | null>;
  /** `ConversationStore.recordParkedAnswer`: the `person_answer` entry, or null (not parked at `seq`, or not the principal's). */
  recordParkedAnswer(id: string, principal: string, seq: number, answer: unknown): Promise<Entry | null>;
  /** How many running conversations this store's owner holds (a cheap query: health uses it as a probe). */
  ownedTasks(): Promise<number>;
  /** `ConversationStore.sweepExpiredTasks`: deletes at most `limit` expired tasks; how many. */
  sweepExpiredTasks(limit: number): Promise<number>;
  /** `ConversationStore.consumeRequestState`: true for the confirmation's first use, false once it was used. */
  consumeRequestState(digest: string, expiresAt: number): Promise<boolean>;
  /** `ConversationStore.claimSession`: null when the session is another principal's. */
  claimSession(sessionId: string, principal: string): Promise<{ readonly epoch: number } | null>;
  /** `ConversationStore.saveCheckpoint`: rejects `fenced` once `epoch` is stale. */
  saveCheckpoint(sessionId: string, epoch: number, bytes: Uint8Array): Promise<void>;
  /** `ConversationStore.loadCheckpoint`: null for a missing session and for another principal's. */
  loadCheckpoint(sessionId: string, principal: string): Promise<SessionCheckpoint | null>;
  /** `ConversationStore.takeOverSession`: the next epoch, or null when another node won or the epoch moved. */
  takeOverSession(sessionId: string, principal: string, epoch: number): Promise<{ readonly epoch: number } | null>;
  /** `ConversationStore.forgetSession`. */
  forgetSession(sessionId: string, epoch: number): Promise<void>;
  /** `ConversationStore.renewNode`: on PostgreSQL the lease is on the database's clock. */
  renewNode(advertiseUrl: string): Promise<void>;
  /** `ConversationStore.forgetNode`. */
  forgetNode(): Promise<void>;
  /** `ConversationStore.nodeOf`: whether its lease is current is the database's judgement. */
  nodeOf(owner: string): Promise<ClusterNode | null>;
  /** The registered nodes whose lease is current (the database's judgement), at most `limit`, this store's own among them. */
  liveNodes(limit: number): Promise<readonly ClusterNode[]>;
  /** Releases the database; idempotent. Any other call afterwards rejects with `closed`. */
  close(): Promise<void>;
}

/**
 * A synchronous store behind the asynchronous contract. Each call runs the synchronous one at once (so
 * the write is committed before the promise exists, let alone resolves) and turns a throw into a
 * rejection: a caller never has to handle both.
 */
export class SyncStoreAdapter implements AsyncConversationStore {
  readonly #store: ConversationStore;

  constructor(store: ConversationStore) {
    this.#store = store;
  }

  async createConversation(input: NewConversation): Promise<Conversation> {
    return this.#store.createConversation(input);
  }

  async getConversation(id: string, principal: string): Promise<Conversation | null> {
    return this.#store.getConversation(id, principal);
  }

  async listConversations(principal: string, opts?: ListOptions): Promise<ConversationPage> {
    return this.#store.listConversations(principal, opts);
  }

  async recentConversationIds(principal: string, prefix: string, limit: number): Promise<ConversationIds> {
    return this.#store.recentConversationIds(principal, prefix, limit);
  }

  async setStatus(id: string, status: ConversationStatus, epoch?: number, result?: TaskResult): Promise<void> {
    this.#store.setStatus(id, status, epoch, result);
  }

  async taskRecord(id: string, principal: string): Promise<TaskRecord | null> {
    return this.#store.taskRecord(id, principal);
  }

  async append(conversationId: string, type: EntryType, payload: unknown, epoch?: number): Promise<Entry> {
    return this.#store.append(conversationId, type, payload, epoch);
  }

  async claimTask(id: string, setup: unknown): Promise<TaskLease> {
    return this.#store.claimTask(id, setup);
  }

  async renewLease(id: string, epoch: number): Promise<TaskLease> {
    return this.#store.renewLease(id, epoch);
  }

  async expiredTasks(limit: number, scope?: TakeoverScope): Promise<ExpiredTask[]> {
    return this.#store.expiredTasks(limit, scope);
  }

  async takeOverTask(id: string, epoch: number): Promise<TaskLease | null> {
    return this.#store.takeOverTask(id, epoch);
  }

  async cancelRunningTask(id: string, principal: string, entry: unknown): Promise<RunningCancel> {
    return this.#store.cancelRunningTask(id, principal, entry);
  }

  async resumeParkedTask(id: string, principal: string, seq: number): Promise<ParkedResume | null> {
    return this.#store.resumeParkedTask(id, principal, seq);
  }

  async recordParkedAnswer(id: string, principal: string, seq: number, answer: unknown): Promise<Entry | null> {
    return this.#store.recordParkedAnswer(id, principal, seq, answer);
  }

  async ownedTasks(): Promise<number> {
    return this.#store.ownedTasks();
  }

  async sweepExpiredTasks(limit: number): Promise<number> {
    return this.#store.sweepExpiredTasks(limit);
  }

  async consumeRequestState(digest: string, expiresAt: number): Promise<boolean> {
    return this.#store.consumeRequestState(digest, expiresAt);
  }

  async claimSession(sessionId: string, principal: string): Promise<{ readonly epoch: number } | null> {
    return this.#store.claimSession(sessionId, principal);
  }

  async saveCheckpoint(sessionId: string, epoch: number, bytes: Uint8Array): Promise<void> {
    this.#store.saveCheckpoint(sessionId, epoch, bytes);
  }

  async loadCheckpoint(sessionId: string, principal: string): Promise<SessionCheckpoint | null> {
    return this.#store.loadCheckpoint(sessionId, principal);
  }

  async takeOverSession(sessionId: string, principal: string, epoch: number): Promise<{ readonly epoch: number } | null> {
    return this.#store.takeOverSession(sessionId, principal, epoch);
  }

  async forgetSession(sessionId: string, epoch: number): Promise<void> {
    this.#store.forgetSession(sessionId, epoch);
  }

  async renewNode(advertiseUrl: string): Promise<void> {
    this.#store.renewNode(advertiseUrl);
  }

  async forgetNode(): Promise<void> {
    this.#store.forgetNode();
  }

  async nodeOf(owner: string): Promise<ClusterNode | null> {
    return this.#store.nodeOf(owner);
  }

  /** None: the embedded store is one node's (a cluster is PostgreSQL's), so it has no peers to know. */
  async liveNodes(_limit: number): Promise<readonly ClusterNode[]> {
    return [];
  }

  async entries(conversationId: string, principal: string, opts?: EntriesOptions): Promise<Entry[] | null> {
    return this.#store.entries(conversationId, principal, opts);
  }

  async entriesPage(conversationId: string, principal: string, opts?: EntriesOptions): Promise<EntriesPage | null> {
    return this.#store.entriesPage(conversationId, principal, opts);
  }

  async lastEntry(conversationId: string): Promise<Entry | null> {
    return this.#store.lastEntry(conversationId);
  }

  async close(): Promise<void> {
    this.#store.close();
  }
}
