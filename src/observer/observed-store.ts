// The conversation store with the observer listening: every append is timed (the store-append
// histogram) and, with every status change, reported to the task directory. Everything else passes through.

import type { AsyncConversationStore } from '../store/async-store.ts';
import type { ClusterNode } from '../store/cluster-nodes.ts';
import type { ExpiredTask, ParkedResume, RunningCancel, SessionCheckpoint, TakeoverScope, TaskLease } from '../store/task-lease.ts';
import type { TaskRecord, TaskResult } from '../store/store.ts';
import type { Conversation, ConversationIds, ConversationPage, ConversationStatus, EntriesOptions, EntriesPage, Entry, EntryType, ListOptions, NewConversation } from '../store/store.ts';

export interface StoreListener {
  appended(conversationId: string, type: EntryType, seconds: number): void;
  statusSet(conversationId: string, status: ConversationStatus): void;
}

export class ObservedStore implements AsyncConversationStore {
  readonly #inner: AsyncConversationStore;
  readonly #listener: StoreListener;

  constructor(inner: AsyncConversationStore, listener: StoreListener) {
    this.#inner = inner;
    this.#listener = listener;
  }

  async append(conversationId: string, type: EntryType, payload: unknown, epoch?: number): Promise<Entry> {
    const started = performance.now();
    const entry = await this.#inner.append(conversationId, type, payload, epoch);
    this.#listener.appended(conversationId, type, (performance.now() - started) / 1000);
    return entry;
  }

  async setStatus(id: string, status: ConversationStatus, epoch?: number, result?: TaskResult): Promise<void> {
    await this.#inner.setStatus(id, status, epoch, result);
    this.#listener.statusSet(id, status);
  }

  createConversation(input: NewConversation): Promise<Conversation> {
    return this.#inner.createConversation(input);
  }

  getConversation(id: string, principal: string): Promise<Conversation | null> {
    return this.#inner.getConversation(id, principal);
  }

  listConversations(principal: string, opts?: ListOptions): Promise<ConversationPage> {
    return this.#inner.listConversations(principal, opts);
  }

  recentConversationIds(principal: string, prefix: string, limit: number): Promise<ConversationIds> {
    return this.#inner.recentConversationIds(principal, prefix, limit);
  }

  entries(conversationId: string, principal: string, opts?: EntriesOptions): Promise<Entry[] | null> {
    return this.#inner.entries(conversationId, principal, opts);
  }

  entriesPage(conversationId: string, principal: string, opts?: EntriesOptions): Promise<EntriesPage | null> {
    return this.#inner.entriesPage(conversationId, principal, opts);
  }

  lastEntry(conversationId: string): Promise<Entry | null> {
    return this.#inner.lastEntry(conversationId);
  }

  taskRecord(id: string, principal: string): Promise<TaskRecord | null> {
    return this.#inner.taskRecord(id, principal);
  }

  claimTask(id: string, setup: unknown): Promise<TaskLease> {
    return this.#inner.claimTask(id, setup);
  }

  renewLease(id: string, epoch: number): Promise<TaskLease> {
    return this.#inner.renewLease(id, epoch);
  }

  expiredTasks(limit: number, scope?: TakeoverScope): Promise<ExpiredTask[]> {
    return this.#inner.expiredTasks(limit, scope);
  }

  takeOverTask(id: string, epoch: number): Promise<TaskLease | null> {
    return this.#inner.takeOverTask(id, epoch);
  }

  async cancelRunningTask(id: string, principal: string, entry: unknown): Promise<RunningCancel> {
    const started = performance.now();
    const outcome = await this.#inner.cancelRunningTask(id, principal, entry);
    if (outcome === 'cancelled') {
      this.#listener.appended(id, 'error', (performance.now() - started) / 1000);
      this.#listener.statusSet(id, 'cancelled');
    }
    return outcome;
  }

  async resumeParkedTask(id: string, principal: string, seq: number): Promise<ParkedResume | null> {
    const resumed = await this.#inner.resumeParkedTask(id, principal, seq);
    if (resumed !== null) this.#listener.statusSet(id, 'running');
    return resumed;
  }

  async recordParkedAnswer(id: string, principal: string, seq: number, answer: unknown): Promise<Entry | null> {
    const started = performance.now();
    const entry = await this.#inner.recordParkedAnswer(id, principal, seq, answer);
    if (entry !== null) this.#listener.appended(id, 'person_answer', (performance.now() - started) / 1000);
    return entry;
  }

  ownedTasks(): Promise<number> {
    return this.#inner.ownedTasks();
  }

  sweepExpiredTasks(limit: number): Promise<number> {
    return this.#inner.sweepExpiredTasks(limit);
  }

  consumeRequestState(digest: string, expiresAt: number): Promise<boolean> {
    return this.#inner.consumeRequestState(digest, expiresAt);
  }

  claimSession(sessionId: string, principal: string): Promise<{ readonly epoch: number } | null> {
    return this.#inner.claimSession(sessionId, principal);
  }

  saveCheckpoint(sessionId: string, epoch: number, bytes: Uint8Array): Promise<void> {
    return this.#inner.saveCheckpoint(sessionId, epoch, bytes);
  }

  loadCheckpoint(sessionId: string, principal: string): Promise<SessionCheckpoint | null> {
    return this.#inner.loadCheckpoint(sessionId, principal);
  }

  takeOverSession(sessionId: string, principal: string, epoch: number): Promise<{ readonly epoch: number } | null> {
    return this.#inner.takeOverSession(sessionId, principal, epoch);
  }

  forgetSession(sessionId: string, epoch: number): Promise<void> {
    return this.#inner.forgetSession(sessionId, epoch);
  }

  renewNode(advertiseUrl: string): Promise<void> {
    return this.#inner.renewNode(advertiseUrl);
  }

  forgetNode(): Promise<void> {
    return this.#inner.forgetNode();
  }

  nodeOf(owner: string): Promise<ClusterNode | null> {
    return this.#inner.nodeOf(owner);
  }

  liveNodes(limit: number): Promise<readonly ClusterNode[]> {
    return this.#inner.liveNodes(limit);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
