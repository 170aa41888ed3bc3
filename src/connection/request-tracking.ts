// What a session notes of each line before it goes to the actor: the requests it carries (ids, and what
// a retry needs), its cancellations, and the refusal of a request that reuses an id in flight.

import { cancelledRequest, messageText, progressTokenOf, type ReadFrame } from '../mcp/frame.ts';
import { ErrorCode, idKey, reusedIdMessage } from '../mcp/jsonrpc.ts';
import { type Outgoing, refusal } from '../mcp/outgoing.ts';
import { type BatchPart, isSafeToRetry, type TrackedRequest } from './crash-recovery.ts';
import type { RequestAccount } from './principal-requests.ts';

/** What goes on to the core of a line, with the keys of its requests. */
export interface TrackedLine {
  readonly line: string;
  readonly keys: string[];
  readonly read: ReadFrame | null;
  readonly batch?: BatchPart[];
}

/**
 * Notes the requests of a line (ids, and what a retry needs) and its cancellations; parse errors are the
 * actor's to answer. A request reusing the id of one in flight (or of another in the same batch) is
 * refused here and left out of what goes to the core: the request in flight keeps its id, its entry here
 * and its answer. A request past its principal's count on this node (`account`) is refused -32011 and left
 * out the same way: nothing of it runs. Null when nothing of the line is left for the core.
 */
export function trackLine(text: string, read: ReadFrame | null, inFlight: Map<string, TrackedRequest>, sink: { send(out: Outgoing): void }, settleWork: (key: string) => void, account: RequestAccount | null = null): TrackedLine | null {
  if (read === null) return { line: text, keys: [], read };
  const keys: string[] = [];
  const batch: BatchPart[] = [];
  /** Indices of the messages that go on to the core. */
  const kept: number[] = [];
  read.messages.forEach((m, i) => {
    // What the core answers with this id: a request, or a message it refuses as invalid but whose id it read.
    const id = m.kind === 'request' || (m.kind === 'invalid' && m.id !== null) ? m.id : null;
    if (id === null) {
      const target = cancelledRequest(m);
      if (target !== undefined) {
        inFlight.delete(idKey(target));
        settleWork(idKey(target));
      }
      if (read.batch) batch.push({ key: null, value: read.values[i] });
      kept.push(i);
      return;
    }
    const key = idKey(id);
    if (inFlight.has(key) || keys.includes(key)) {
      sink.send(refusal(id, ErrorCode.InvalidRequest, reusedIdMessage(id)));
      return;
    }
    // A ping holds nothing and the core answers it whatever is in flight (a liveness check is never busy).
    if (account !== null && !(m.kind === 'request' && m.method === 'ping') && !account.acquire()) {
      sink.send(refusal(id, ErrorCode.ServerBusy, principalBusyMessage(account.limit)));
      return;
    }
    keys.push(key);
    if (read.batch) batch.push({ key, value: read.values[i] });
    kept.push(i);
    const progressToken = m.kind === 'request' ? progressTokenOf(m) : undefined;
    inFlight.set(key, {
      id, line: read.batch ? messageText(read.values[i]) : text, retryable: m.kind !== 'request' || isSafeToRetry(m.method, m.params),
      begun: false, crashes: 0, ...(progressToken === undefined ? {} : { progressToken }),
      ...(m.kind === 'request' && m.method === 'subscriptions/listen' ? { stream: true as const } : {}),
    });
  });
  const parts = read.batch ? { batch } : {};
  if (kept.length === read.messages.length) return { line: text, keys, read, ...parts };
  if (kept.length === 0) return null;
  // Rare (a batch reusing ids): the line the core gets is what is left of it, written anew.
  const values = kept.map((i) => read.values[i]);
  const rest: ReadFrame = { batch: true, messages: kept.map((i) => read.messages[i] as ReadFrame['messages'][number]), values };
  return { line: `[${values.map(messageText).join(',')}]`, keys, read: rest, ...parts };
}

/** Why a request past its principal's count was refused: names the limit, as the per-session refusal does. */
export function principalBusyMessage(limit: number): string {
  return `Server busy: this principal already has MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL (${limit}) requests in flight on this node, across its sessions; wait for some to finish`;
}
