// A store for the orphan look-outs (src/cluster/orphan-requests.ts) in memory: the session event log,
// a session row's owner, whether the node registry finds that owner fresh, and which requests running
// tasks answer. Not a *.test.ts file.

import type { OrphanStore } from '../../src/cluster/orphan-requests.ts';
import type { ClusterNode } from '../../src/store/cluster-nodes.ts';
import { STANDALONE_STREAM } from '../../src/store/session-events.ts';
import type { SessionCheckpoint } from '../../src/store/task-lease.ts';
import { MemoryLog } from '../transports/memory-event-log.ts';

/** The log in memory, plus a session row's owner, the node registry's freshness, and the requests running tasks answer. */
export class Cluster extends MemoryLog implements OrphanStore {
  owner: string | null = 'node-a#1';
  homeFresh = true;
  readonly answered = new Set<string>();
  lookups = 0;

  async unendedRequestStreams(sessionId: string, principal: string): Promise<string[]> {
    const s = this.sessions.get(sessionId);
    if (!s || s.principal !== principal) return [];
    const streams = [...new Set(s.events.map((e) => e.stream))].filter((n) => n !== STANDALONE_STREAM);
    return streams.filter((n) => !s.events.some((e) => e.stream === n && e.ends));
  }

  async taskAnswers(sessionId: string, principal: string, request: string | number): Promise<boolean> {
    return this.answered.has(`${sessionId} ${principal} ${JSON.stringify(request)}`);
  }

  async loadCheckpoint(sessionId: string): Promise<SessionCheckpoint | null> {
    this.lookups++;
    return this.owner === null ? null : { sessionId, owner: this.owner, epoch: 1, bytes: new Uint8Array(1), updatedAt: 0 };
  }

  async nodeOf(owner: string): Promise<ClusterNode | null> {
    return { owner, node: 'node-a', advertiseUrl: 'http://127.0.0.1:1', fresh: this.homeFresh, remainingMs: this.homeFresh ? 1000 : 0 };
  }

  endings(sessionId: string): { stream: string; data: string }[] {
    return (this.sessions.get(sessionId)?.events ?? []).filter((e) => e.ends).map((e) => ({ stream: e.stream, data: e.data }));
  }
}

