// The conversation store with the observer listening: every append is timed (the store-append
// histogram) and, with every status change, reported to the task directory. Everything else passes through.

import { performance } from 'node:perf_hooks';
import type { Conversation, ConversationIds, ConversationPage, ConversationStatus, ConversationStore, EntriesOptions, Entry, EntryType, ListOptions, NewConversation } from '../store/store.ts';

export interface StoreListener {
  appended(conversationId: string, type: EntryType, seconds: number): void;
  statusSet(conversationId: string, status: ConversationStatus): void;
}

export class ObservedStore implements ConversationStore {
  readonly #inner: ConversationStore;
  readonly #listener: StoreListener;

  constructor(inner: ConversationStore, listener: StoreListener) {
    this.#inner = inner;
    this.#listener = listener;
  }

  append(conversationId: string, type: EntryType, payload: unknown): Entry {
    const started = performance.now();
    const entry = this.#inner.append(conversationId, type, payload);
    this.#listener.appended(conversationId, type, (performance.now() - started) / 1000);
    return entry;
  }

  setStatus(id: string, status: ConversationStatus): void {
    this.#inner.setStatus(id, status);
    this.#listener.statusSet(id, status);
  }

  createConversation(input: NewConversation): Conversation {
    return this.#inner.createConversation(input);
  }

  getConversation(id: string, principal: string): Conversation | null {
    return this.#inner.getConversation(id, principal);
  }

  listConversations(principal: string, opts?: ListOptions): ConversationPage {
    return this.#inner.listConversations(principal, opts);
  }

  recentConversationIds(principal: string, prefix: string, limit: number): ConversationIds {
    return this.#inner.recentConversationIds(principal, prefix, limit);
  }

  entries(conversationId: string, principal: string, opts?: EntriesOptions): Entry[] | null {
    return this.#inner.entries(conversationId, principal, opts);
  }

  lastEntry(conversationId: string): Entry | null {
    return this.#inner.lastEntry(conversationId);
  }

  close(): void {
    this.#inner.close();
  }
}
