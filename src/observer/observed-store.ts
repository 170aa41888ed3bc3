// The conversation store with the observer listening: every append is timed (the store-append
// histogram) and, with every status change, reported to the task directory. Everything else passes through.

import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Conversation, ConversationIds, ConversationPage, ConversationStatus, EntriesOptions, Entry, EntryType, ListOptions, NewConversation } from '../store/store.ts';

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

  async append(conversationId: string, type: EntryType, payload: unknown): Promise<Entry> {
    const started = performance.now();
    const entry = await this.#inner.append(conversationId, type, payload);
    this.#listener.appended(conversationId, type, (performance.now() - started) / 1000);
    return entry;
  }

  async setStatus(id: string, status: ConversationStatus): Promise<void> {
    await this.#inner.setStatus(id, status);
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

  lastEntry(conversationId: string): Promise<Entry | null> {
    return this.#inner.lastEntry(conversationId);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
