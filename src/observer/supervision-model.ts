// The supervision tree as the observer shows it, kept from the events every supervisor already reports
// (so the supervisors need no accessor): each child's state, restart count and last exit reason. A child
// whose id names a supervisor (`sessions`, `session-3`) has that supervisor's children under it.

import { describeExit, type SupervisorEvent } from '../supervisor/index.ts';

/** Ended children kept in the tree (with their last exit reason) before the oldest is dropped. */
export const MAX_ENDED_NODES = 64;
/** Children shown under one supervisor; past this the rest are counted, not listed. */
export const MAX_CHILDREN_SHOWN = 200;

export type NodeState = 'running' | 'restarting' | 'stopped' | 'failed';

export interface TreeNode {
  readonly id: string;
  readonly state: NodeState;
  readonly restarts: number;
  readonly lastExit: string | null;
  readonly children: TreeNode[];
  /** Children past MAX_CHILDREN_SHOWN. */
  readonly more: number;
}

interface Child {
  state: NodeState;
  restarts: number;
  lastExit: string | null;
  order: number;
}

/**
 * One supervisor's children by id. A session's supervisor has one child: kept without a Map of its own
 * (a Map and its table cost ~0.18 KB, per session), which is made with a second child.
 */
class Children {
  #soleId: string | null = null;
  #sole: Child | null = null;
  #many: Map<string, Child> | null = null;

  get(id: string): Child | undefined {
    return this.#many !== null ? this.#many.get(id) : this.#soleId === id ? (this.#sole as Child) : undefined;
  }

  set(id: string, child: Child): void {
    if (this.#many === null && (this.#soleId === null || this.#soleId === id)) {
      this.#soleId = id;
      this.#sole = child;
      return;
    }
    if (this.#many === null) {
      this.#many = new Map([[this.#soleId as string, this.#sole as Child]]);
      this.#soleId = null;
      this.#sole = null;
    }
    this.#many.set(id, child);
  }

  delete(id: string): void {
    if (this.#many !== null) this.#many.delete(id);
    else if (this.#soleId === id) [this.#soleId, this.#sole] = [null, null];
  }

  entries(): [string, Child][] {
    return this.#many !== null ? [...this.#many] : this.#soleId === null ? [] : [[this.#soleId, this.#sole as Child]];
  }

  keys(): string[] {
    return this.entries().map(([id]) => id);
  }
}

export class SupervisionModel {
  /** Children by supervisor name, then child id. */
  readonly #tree = new Map<string, Children>();
  readonly #ended: [string, string][] = [];
  readonly #root: string;
  #order = 0;

  constructor(root = 'root') {
    this.#root = root;
  }

  observe(event: SupervisorEvent): void {
    if (event.type === 'supervisor-exited') return;
    const children = this.#childrenOf(event.supervisor);
    let child = children.get(event.id);
    if (!child) {
      child = { state: 'running', restarts: 0, lastExit: null, order: this.#order++ };
      children.set(event.id, child);
    }
    switch (event.type) {
      case 'child-started':
        child.state = 'running';
        return;
      case 'child-exited':
        child.lastExit = describeExit(event.reason);
        child.state = event.willRestart ? 'restarting' : 'stopped';
        if (!event.willRestart) this.#end(event.supervisor, event.id);
        return;
      case 'child-restarted':
        child.restarts++;
        child.lastExit = describeExit(event.reason);
        child.state = 'running';
        return;
      case 'child-start-failed':
        child.state = 'failed';
        child.lastExit = `start failed: ${String((event.cause as Error | undefined)?.message ?? event.cause)}`;
        return;
      case 'child-stopped':
        child.state = 'stopped';
        child.lastExit = describeExit(event.reason);
        this.#end(event.supervisor, event.id);
        return;
      case 'intensity-exceeded':
        child.state = 'failed';
        child.lastExit = `restart intensity exceeded (${event.restarts} restarts in ${event.periodMs} ms): ${describeExit(event.reason)}`;
        this.#end(event.supervisor, event.id);
        return;
    }
  }

  /** The tree from the root (read-only copy). */
  snapshot(): TreeNode {
    return { id: this.#root, state: 'running', restarts: 0, lastExit: null, ...this.#childrenSnapshot(this.#root, new Set()) };
  }

  /** Restart count of one child (by its supervisor's name and its id). */
  restartsOf(supervisor: string, id: string): number {
    return this.#tree.get(supervisor)?.get(id)?.restarts ?? 0;
  }

  #childrenSnapshot(supervisor: string, seen: Set<string>): { children: TreeNode[]; more: number } {
    const children = this.#tree.get(supervisor);
    if (!children || seen.has(supervisor)) return { children: [], more: 0 };
    seen.add(supervisor);
    const entries = children.entries().sort((a, b) => a[1].order - b[1].order);
    const shown = entries.slice(0, MAX_CHILDREN_SHOWN).map(([id, c]): TreeNode => ({ id, state: c.state, restarts: c.restarts, lastExit: c.lastExit, ...this.#childrenSnapshot(id, seen) }));
    return { children: shown, more: Math.max(0, entries.length - MAX_CHILDREN_SHOWN) };
  }

  #childrenOf(supervisor: string): Children {
    let children = this.#tree.get(supervisor);
    if (!children) {
      children = new Children();
      this.#tree.set(supervisor, children);
    }
    return children;
  }

  /** An ended child stays visible (its exit reason is the point) until MAX_ENDED_NODES newer ones have ended. */
  #end(supervisor: string, id: string): void {
    this.#ended.push([supervisor, id]);
    while (this.#ended.length > MAX_ENDED_NODES) {
      const [sup, old] = this.#ended.shift() as [string, string];
      const child = this.#tree.get(sup)?.get(old);
      // Restarted since (a permanent child that was stopped and started again): keep it.
      if (!child || child.state === 'running' || child.state === 'restarting') continue;
      this.#tree.get(sup)?.delete(old);
      this.#forget(old);
    }
  }

  /** Drops a supervisor's subtree once its node is gone. */
  #forget(supervisor: string): void {
    const children = this.#tree.get(supervisor);
    if (!children) return;
    this.#tree.delete(supervisor);
    for (const id of children.keys()) this.#forget(id);
  }
}
