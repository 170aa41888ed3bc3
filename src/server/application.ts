// The running server as an OTP application: the supervision tree, and the sessions opened on it.
//
//   root (one_for_one)
//   ├── schedulers (one_for_one)   one child per scheduler worker thread (permanent)
//   ├── tools                      the piscina tool pool ("dirty schedulers")
//   ├── sessions (dynamic)         one supervisor per session (temporary), each with one child:
//   │   └── session-N (one_for_one, its own restart intensity)
//   │       └── connection         the connection actor (transient), on a scheduler thread
//   └── tasks (dynamic)            one supervisor per harness task (temporary), each with one child:
//       └── task-N (one_for_one, its own restart intensity)
//           └── task               the task actor (transient), on a scheduler thread (task-supervision.ts)
//
// The tree is built in application-tree.ts; on a PostgreSQL store, this node's part in the cluster
// (node lease, held sessions and their checkpoints, orphans, the locator) is src/cluster/cluster-membership.ts.

import { randomBytes, randomUUID } from 'node:crypto';
import { type ChildHandle, type ChildSpec, type ExitReason, describeExit, isAbnormal, Supervisor } from '../supervisor/index.ts';
import { Scheduler } from '../actors/scheduler.ts';
import { DEFAULT_THREAD_LIMITS } from '../actors/scheduler-thread.ts';
import type { Principal } from '../mcp/state.ts';
import { Session } from '../connection/session.ts';
import { transcriptConversation, transcriptUri } from '../mcp/resources.ts';
import { type ClusterForwarding, ClusterMembership, type HeldSession } from '../cluster/cluster-membership.ts';
import type { OrphanStore } from '../cluster/orphan-requests.ts';
import type { ClusterSessions } from '../cluster/session-locator.ts';
import type { Ownership } from '../store/ownership.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../store/async-store.ts';
import { openExistingStore, openStore } from '../store/location.ts';
import type { SqliteConversationStore, SqliteStoreOptions } from '../store/sqlite-store.ts';
import { applicationBehaviours } from './behaviours.ts';
import { schedulerEntry } from './thread-entries.ts';
import { ToolPool } from '../tools/tool-pool.ts';
import { knownBashIsolation, sandboxReport } from '../tools/bash-isolation.ts';
import { guardUnsandboxedBash } from '../tools/sandbox/unsandboxed-guard.ts';
import { knownBounds } from '../tools/sandbox/bounds-probe.ts';
import type { ToolExecutor } from '../tools/contract.ts';
import { readStoredTask } from '../task/task-status.ts';
import type { TaskTakeover } from '../task/task-takeover.ts';
import { RetentionSweep } from '../task/task-retention.ts';
import { DetachedTasks } from '../task/detached-tasks.ts';
import { DEFAULT_TASK_BUDGET_LIMITS, PrincipalBudgets } from '../task/principal-budget.ts';
import type { SessionEventFeed } from '../store/session-event-feed.ts';
import { eventPrincipal } from '../store/session-events.ts';
import { judgeOrphans, startNodeTakeover } from './node-takeover.ts';
import { type NodeHealth, nodeHealth, type NodeStatus, StoreWatch } from './node-health.ts';
import type * as MetricsModule from '../observer/metrics.ts';
import { ServerObserver } from '../observer/server-observer.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { SESSION_SHUTDOWN_MS, STORE_CLOSE_GRACE_MS, TASK_LEASE_MS } from '../limits.ts';
import type { HostedSession, OpenOptions, SessionHost, SessionSlot } from '../transports/session-host.ts';
import { isRefusal } from '../transports/session-host.ts';
import { type Refusal } from '../transports/session-quota.ts';
import { type RegisteredSession, SessionRegistry } from './session-registry.ts';
import { type ApplicationOptions, DEFAULT_SESSION_LIMITS, SessionConfigs, SessionRefusedError } from './application-options.ts';
import { ApplicationTree } from './application-tree.ts';
import { TaskSupervision } from './task-supervision.ts';
import { ConversationWatches } from './conversation-watches.ts';
import { SessionEffects, type SessionServices } from './session-effects.ts';
import { SessionOutlet } from './session-outlet.ts';
import { poolPrincipal, sharesSessions, TAKEN_OVER } from './principal-keys.ts';
import { PrincipalRequests } from '../connection/principal-requests.ts';

export { type ApplicationOptions, DEFAULT_SESSION_LIMITS, SessionRefusedError } from './application-options.ts';

export class Application implements SessionHost {
  readonly scheduler: Scheduler;
  readonly tools: ToolPool;
  /** The tree, sessions, tasks and metrics as /observer and /metrics show them. */
  readonly observer: ServerObserver;
  readonly #options: ApplicationOptions;
  readonly #clock: Clock;
  /** Wall-clock start, for the observer (shown to people). */
  readonly #started = Date.now();
  /** The same moment on the clock, for the uptime. */
  readonly #startedAt: number;
  /** The supervision tree (application-tree.ts). */
  readonly #tree: ApplicationTree;
  /** The one registry of open sessions, every transport's. */
  readonly registry: SessionRegistry;
  /** What each principal's harness tasks spend on this node (tasks at once, turns and model calls per minute). */
  readonly budgets: PrincipalBudgets;
  /** Each principal's requests in flight on this node, across its sessions (MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL). */
  readonly requests: PrincipalRequests;
  #nextSession = 1;
  #store: AsyncConversationStore | null = null;
  /** Where harness tasks run: each under its own supervisor, waited for at stop (task-supervision.ts). */
  readonly #tasks: TaskSupervision;
  /** Who hears about which transcript and task status, and how changes reach them (conversation-watches.ts). */
  readonly #watches: ConversationWatches;
  #takeover: TaskTakeover | null = null;
  /** Deletes expired Tasks-extension tasks (`--task-ttl` only). */
  #retention: RetentionSweep | null = null;
  /** This node's owner key on a PostgreSQL store (what its sessions' rows name as their home). */
  #ownership: Ownership | null = null;
  /** This node in the cluster: its node lease, the sessions it holds, the locator; once the HTTP server listens (`joinCluster`). */
  #cluster: ClusterMembership | null = null;
  /** Stopping: sessions that close from now on keep their rows, for other nodes to take over. */
  #handingOff = false;
  /** The session event log and this node's LISTEN connection, on a PostgreSQL store (issue 14). */
  #feed: SessionEventFeed | null = null;
  /** The PostgreSQL store as requests that died with their node are answered from it (null on SQLite: no event log). */
  #orphanStore: OrphanStore | null = null;
  /** The shared store's last probe: while it cannot be reached, new sessions are refused. Null on SQLite. */
  #storeWatch: StoreWatch | null = null;

  readonly #stateKey: Uint8Array | undefined;

  private constructor(options: ApplicationOptions, metrics: typeof MetricsModule | null) {
    this.#options = options;
    // A single node may seal with a key of its own: its states need only open on itself (cli/state-key.ts).
    // Its scheduler threads share one; with none (a stdio server) the one thread makes its own at the
    // first seal (connection/request-sealer.ts), so such a start does not load node:crypto.
    this.#stateKey = options.stateKey ?? (options.threads > 0 ? randomBytes(32) : undefined);
    this.#clock = options.clock ?? systemClock;
    this.#startedAt = this.#clock.now();
    this.registry = new SessionRegistry(options.sessionLimits ?? DEFAULT_SESSION_LIMITS, this.#clock);
    this.#configs = new SessionConfigs(options);
    this.scheduler = new Scheduler({
      clock: this.#clock,
      threads: options.threads,
      limits: DEFAULT_THREAD_LIMITS,
      // For actors on the main thread (threads 0); a worker registers the same map from its entry point.
      behaviours: applicationBehaviours,
      log: (message, data) => options.logger.log('warning', message, data),
      // Found on the first worker start only: it reads the source tree, which `--threads 0` never needs.
      entry: () => schedulerEntry(),
      onInlineCalls: (series) => this.observer.inlineCalls(series),
    });
    this.budgets = new PrincipalBudgets(options.taskBudget ?? DEFAULT_TASK_BUDGET_LIMITS, this.#clock);
    this.requests = new PrincipalRequests(options.maxRequestsInFlightPerPrincipal);
    this.tools = new ToolPool({ maxThreads: options.toolThreads, principalShare: options.toolShare });
    this.observer = new ServerObserver({ metrics, threads: () => this.scheduler.threads(), flushInlineCalls: () => this.scheduler.flushInlineCalls(), started: this.#started });
    this.#services = this.#sessionServices();
    this.#tree = new ApplicationTree({ options, clock: this.#clock, scheduler: this.scheduler, tools: this.tools, observer: this.observer, registry: this.registry });
    this.#watches = new ConversationWatches(async (taskId, principal) => {
      const store = this.#existingConversationStore();
      return store === null ? null : readStoredTask(store, principal, taskId);
    }, options.logger, this.#clock);
    this.#tasks = new TaskSupervision({ tree: this.#tree, observer: this.observer, clock: this.#clock, settled: (conversation) => this.#watches.statusHere(conversation) });
  }

  /**
   * Starts the tree. A PostgreSQL store is opened first (migrations run now, under their lock), so a
   * server that cannot reach its database fails to start, saying why, instead of failing its first task;
   * the SQLite store is opened on first use, as before.
   */
  static async start(options: ApplicationOptions): Promise<Application> {
    // prom-client is loaded only when metrics are on: a stdio start never pays for it.
    const metrics = (options.metrics ?? true) ? await import('../observer/metrics.ts') : null;
    const app = new Application(options, metrics);
    const location = options.store ?? { kind: 'sqlite' };
    if (location.kind === 'postgres') {
      const { openSharedStore } = await import('../cluster/shared-store.ts');
      const shared = await openSharedStore(location.url, options, (conversation) => app.#watches.entryElsewhere(conversation), (conversation) => app.#watches.statusElsewhere(conversation), () => app.#watches.missedElsewhere());
      app.#ownership = shared.ownership;
      app.#store = app.observer.observeStore(shared.store);
      app.#orphanStore = shared.store;
      app.#feed = shared.feed;
      options.logger.log('info', 'conversation store: PostgreSQL', { database: location.label, ...(options.nodeId === undefined ? {} : { node: options.nodeId }) });
    }
    try {
      await app.#tree.boot();
      app.#startRetention();
      // Tasks whose node (or, on SQLite, process) died are taken over here.
      app.#startTakeover();
      // Several nodes share this store: a node that loses it stops taking sessions whose work it could not record.
      if (location.kind === 'postgres') {
        app.#storeWatch = new StoreWatch({ probe: () => app.#probeStore(), clock: app.#clock, logger: options.logger });
        app.#storeWatch.start();
      }
    } catch (err) {
      await app.#feed?.close();
      await app.#store?.close();
      throw err;
    }
    return app;
  }

  /** The session event log SSE streams keep their events in (PostgreSQL store), or null (SQLite: in memory). */
  get sessionEvents(): SessionEventFeed | null {
    return this.#feed;
  }

  /** A remote principal's executor refuses `bash` while no sandbox can be built (unless the operator opted in). */
  #bashGuard(execute: ToolExecutor, principal: Principal): ToolExecutor {
    return guardUnsandboxedBash(execute, principal.kind !== 'local', this.#options.unsafeBashWithoutSandbox ?? false);
  }

  get sessionCount(): number {
    return this.registry.size;
  }

  /** How much this node watches for its sessions (tests check that ended streams and dead actors leave nothing). */
  get watching(): { tasks: number; taskSessions: number; transcripts: number } {
    return this.#watches.counts();
  }

  health() {
    return {
      status: this.#tree.root ? 'ok' : 'stopped',
      uptimeMs: this.#clock.now() - this.#startedAt,
      sessions: this.registry.size,
      workers: this.scheduler.threads().map((t) => ({ index: t.index, ready: t.isReady, actors: t.actors.size, heapUsed: t.heapUsed })),
      toolThreads: this.tools.threads,
      restarts: this.#tree.restarts,
      bashIsolation: knownBashIsolation()?.kind ?? 'not probed yet',
      bashSandbox: ((isolation) => (isolation === null ? { kind: 'not probed yet' } : sandboxReport(isolation)))(knownBashIsolation()),
      bashBounds: knownBounds(),
      // The backend and node, never the database's URL (it may hold the password).
      store: { backend: this.#options.store?.kind ?? 'sqlite', ...(this.#options.nodeId === undefined ? {} : { node: this.#options.nodeId }) },
    };
  }

  /**
   * This node in a cluster: id, store backend and whether it answers now (bounded), running tasks and
   * sessions it holds, and whether it accepts new sessions. On a shared store this probe counts as the last one.
   */
  async nodeHealth(): Promise<NodeStatus & { readonly sessions: number }> {
    const status = this.#storeWatch ? await this.#storeWatch.probe() : { ...(await this.#probeStore()), acceptingSessions: true };
    // The sessions whose home this node is: in a cluster, the HTTP sessions it holds in the shared store
    // (a request for one on another node is forwarded here); on one node, every open session.
    return { ...status, sessions: this.#cluster !== null ? this.#cluster.heldCount : this.registry.size };
  }

  async #probeStore(): Promise<NodeHealth> {
    const backend = this.#options.store?.kind ?? 'sqlite';
    const node = this.#options.nodeId ?? (backend === 'postgres' ? (await import('../store/postgres-store.ts')).defaultNodeId() : null);
    return nodeHealth({ node, backend, store: this.#store });
  }

  get clock(): Clock {
    return this.registry.clock;
  }

  /**
   * On a PostgreSQL store: registers this node in the node registry, reachable at `advertiseUrl` (its
   * lease renewed from now on), and from then on HTTP sessions are held in the store (claimed, their
   * checkpoints saved) and a request for a session held elsewhere is forwarded or taken over. On SQLite
   * (one node) nothing changes: resolves to null.
   */
  async joinCluster(advertiseUrl: string, forwarding: ClusterForwarding = {}): Promise<ClusterSessions | null> {
    const store = this.#store;
    const ownership = this.#ownership;
    if (store === null || ownership === null || this.#cluster !== null) return this.#cluster?.locator ?? null;
    const { defaultNodeId } = await import('../store/postgres-store.ts');
    this.#cluster = await ClusterMembership.join({
      store, ownership, orphanStore: this.#orphanStore, nodeId: this.#options.nodeId ?? defaultNodeId(),
      leaseMs: this.#options.taskLeaseMs ?? TASK_LEASE_MS, clock: this.#clock, logger: this.#options.logger,
      closeMoved: (id) => this.#closeMoved(id), handingOff: () => this.#handingOff,
    }, advertiseUrl, forwarding);
    return this.#cluster.locator;
  }

  /** The cluster's view of sessions (null until `joinCluster`, and on SQLite). */
  get cluster(): ClusterSessions | null {
    return this.#cluster?.locator ?? null;
  }

  /** A clean stop begins: sessions closed from now on keep their stored rows, so other nodes take them over. */
  handOff(): void {
    this.#handingOff = true;
  }

  /** Another node holds the session now: its requests in flight are answered `session-moved`, and its local copy closes. */
  async #closeMoved(id: string): Promise<void> {
    const entry = this.registry.get(id);
    entry?.session.answerInFlight('the session moved to another node', { reason: 'session-moved' });
    await this.registry.remove(id);
  }

  /**
   * A request failed (opening or finding a session touches the shared store): probe the store now, so
   * the first request that meets a lost database gets the 503 the next probe would have given, not a 500.
   */
  async storeLoss(): Promise<Refusal | null> {
    const watch = this.#storeWatch;
    if (watch === null) return null;
    await watch.probe();
    return watch.refusal();
  }

  /** A quota slot for a new HTTP or WebSocket session, or why not: the quota, or a shared store this node cannot reach. */
  reserve(principal: Principal): SessionSlot | Refusal {
    return this.#storeWatch?.refusal() ?? this.registry.reserve(principal);
  }

  /**
   * Opens a session: a per-session supervisor under `sessions`, whose child is the connection actor, and
   * its entry in the registry.
   */
  async open(options: OpenOptions): Promise<RegisteredSession> {
    const sessions = this.#tree.sessions;
    if (!sessions) throw new Error('the application is not running');
    const reserved = options.slot ?? this.registry.reserve(options.principal);
    if (isRefusal(reserved)) throw new SessionRefusedError(reserved);
    const id = `session-${this.#nextSession++}`;
    const config = this.#configs.of(options.principal);
    // On a cluster an HTTP session is held in the store: claimed now (before its initialize is answered, so
    // any node finds it) or taken over; not WebSocket, stdio or stateless ones (no other node is asked).
    // The registry's id (a Streamable HTTP session's Mcp-Session-Id), known now so its tasks can keep it.
    let registryId = options.transport === 'stdio' ? id : randomUUID();
    let held: HeldSession | null = null;
    if (this.#cluster !== null && options.transport === 'http' && options.stateless !== true) {
      held = await this.#cluster.hold(options, registryId, config, () => {
        // A slot taken here is given back (one the transport reserved, the transport gives back).
        if (options.slot === undefined) reserved.release();
      });
      registryId = held.registryId;
    }
    const resumed = held?.resumed ?? null;
    const stored = held?.saver ?? null;
    // The session's facts (its owner key made on first use); a node that takes one of this session's tasks over answers its request in the session's event log.
    const facts = new SessionEffects(this.#services, id, options.principal,
      this.#feed !== null && options.transport === 'http' ? { session: registryId, principal: eventPrincipal(options.principal) } : undefined);
    const session = new Session(new SessionOutlet(id, options.send, this.observer, {
      stateKey: this.#stateKey, scheduler: this.scheduler, effects: facts, config, logger: this.#options.logger, checkpoint: resumed?.checkpoint,
      onCheckpoint: stored === null ? undefined : (checkpoint: ArrayBuffer) => stored.save(new Uint8Array(checkpoint)),
      crashProbability: this.#options.chaos.crashActorProbability, requests: this.requests.account(poolPrincipal(options.principal)),
    }));
    facts.session = session;
    // By its handle, never `registryId`: an Mcp-Session-Id is a credential no observer is shown.
    this.observer.sessionOpened(id, { transport: options.transport, principal: options.principal, harness: this.#options.harness, session });
    // A session taken over keeps its subscriptions: this node watches those transcripts for it now.
    for (const uri of resumed?.subscriptions ?? []) {
      const conversation = transcriptConversation(uri);
      if (conversation !== null) this.#watches.watchTranscript(conversation, id, (c) => session.deliver({ kind: 'resourceUpdated', uri: transcriptUri(c) }));
    }
    // The teardown and the exit's watch are the application's, one for every session; only a session
    // held in a cluster's store has one of its own (its saver).
    const entry = this.registry.add({
      principal: options.principal, transport: options.transport, session, slot: reserved,
      ...(options.busy ? { busy: options.busy } : {}), ...(options.onEnded ? { onEnded: options.onEnded } : {}),
      ...(options.onGiveUp ? { onGiveUp: options.onGiveUp } : {}),
      teardown: stored === null ? this.#teardown : (e) => { this.#cluster?.forget(registryId, stored); return this.#teardown(e); },
      exited: this.#sessionEnded, watching: this.#watching,
    }, registryId);
    if (stored !== null) this.#cluster?.held(entry.id, stored);
    let handle: ChildHandle;
    try {
      handle = await sessions.startChild(id, () => Supervisor.start(
        { strategy: 'one_for_one', ...this.#tree.intensity('session'), name: id },
        [connectionSpec(session)],
        this.#tree.supervisorOptions(),
      ));
    } catch (err) {
      await this.registry.remove(entry.id);
      throw err;
    }
    // The entry watches its supervisor: no promise, reaction or closure of its own.
    if (handle.watchExit) handle.watchExit(entry);
    else void handle.exited.then((reason) => entry.onExit(reason));
    return entry;
  }

  readonly #watching = (entry: RegisteredSession): boolean => this.#watches.watching(entry.session.id);

  /** What ending a session takes besides leaving the registry: its watches, its actor and supervisor, then the transport's part. */
  readonly #teardown = async (entry: RegisteredSession): Promise<void> => {
    const { session } = entry;
    const id = session.id;
    this.#watches.forget(id);
    this.observer.sessionClosed(id);
    try {
      await Promise.all([session.close(), this.#tree.sessions?.terminateChild(id).catch((err: unknown) => {
        this.#options.logger.log('debug', 'session supervisor already gone', { session: id, error: (err as Error).message });
      })]);
    } finally {
      entry.ended();
    }
  };

  shareable = (principal: Principal): boolean => sharesSessions(principal, this.#options.allowAnonymousTasks ?? false);

  find(id: string, principal: Principal): HostedSession | undefined {
    return this.registry.find(id, principal);
  }

  sessions(): Iterable<HostedSession> {
    return this.registry.values();
  }

  /** Ends a session: it leaves the registry, its work in flight is aborted, its supervisor and actor stop. Idempotent. */
  close(id: string): Promise<void> {
    return this.registry.remove(id);
  }

  drain(ms: number): Promise<void> {
    return this.registry.drain(ms);
  }

  /** With `--task-ttl`, sweeps expired Tasks-extension tasks out of the store (the existing one: a sweep never creates a database). */
  #startRetention(): void {
    const ttlMs = this.#options.taskTtlMs;
    if (ttlMs === undefined) return;
    this.#retention = new RetentionSweep({ store: () => this.#existingConversationStore(), ttlMs, logger: this.#options.logger, clock: this.#clock });
    this.#retention.start();
  }

  /**
   * Continues here tasks whose runner stopped (node-takeover.ts): on PostgreSQL another node's, once its
   * lease lapsed; on SQLite another process's on this file (the store, once it exists: a pass creates none).
   */
  #startTakeover(): void {
    this.#takeover = startNodeTakeover({
      options: this.#options, scheduler: this.scheduler, budgets: this.budgets, tasks: this.#tasks, watches: this.#watches, feed: () => this.#feed,
      store: () => (this.#options.store?.kind === 'postgres' ? this.#store : this.#existingConversationStore()),
      executor: (principal) => this.#bashGuard(this.observer.instrument(this.tools.executorFor({ principal: poolPrincipal(principal), session: TAKEN_OVER })), principal),
    });
  }

  readonly #configs: SessionConfigs;
  /** What every session's effects are built from, on first use (session-effects.ts). */
  readonly #services: SessionServices;

  #sessionServices(): SessionServices {
    const o = this.#options;
    return { workspace: o.workspace, logger: o.logger, toolTimeoutMs: o.toolTimeoutMs, clock: this.#clock, detached: new DetachedTasks(),
      executor: (s) => this.#bashGuard(this.observer.instrument(this.tools.executorFor({ principal: poolPrincipal(s.principal), session: s.id })), s.principal),
      taskContext: (s) => ({ store: () => this.#conversationStore(), existingStore: () => this.#existingConversationStore(), principal: s.ownerKey, local: s.principal.kind === 'local',
        forbidWrites: s.principal.kind === 'anonymous' && !(o.allowAnonymousWrites ?? false), sessionId: s.id, env: process.env,
        // Keyed as the tool pool's share is: every anonymous session spends the one anonymous budget.
        openAllowance: () => this.budgets.open(poolPrincipal(s.principal)), supervise: (run) => this.#tasks.supervise(run, s.id, s.principal, s.ownerKey),
        ...(o.taskLeaseMs === undefined ? {} : { taskLeaseMs: o.taskLeaseMs }), ...(o.taskTtlMs === undefined ? {} : { taskTtlMs: o.taskTtlMs }),
        transcriptChanged: (conversation) => this.#watches.entryHere(conversation),
        watchTranscript: (conversation, stream) => this.#watches.watchTranscript(conversation, s.id, (c) => s.session?.deliver({ kind: 'resourceUpdated', uri: transcriptUri(c) }), stream),
        unwatchTranscript: (conversation, stream) => this.#watches.unwatchTranscript(conversation, s.id, stream),
        watchTask: (taskId) => this.#watches.watchTask(taskId, s.id, s.ownerKey, (task) => s.session?.deliver({ kind: 'taskStatus', task })),
        unwatchTask: (taskId) => this.#watches.unwatchTask(taskId, s.id),
        taskStatusChanged: (taskId) => this.#watches.statusHere(taskId),
        ...(s.answerTo === undefined ? {} : { answerTo: s.answerTo }) }) };
  }

  /** The conversation store, opened on first use (so a server that runs no task never creates one). */
  #conversationStore(): AsyncConversationStore {
    this.#store ??= this.#sqlite(openStore(this.#sqliteOptions()));
    return this.#store;
  }

  /** The SQLite store as this node uses it; other processes on its file are heard through its connection. */
  #sqlite(store: SqliteConversationStore): AsyncConversationStore {
    this.#watches.attachSqlite(store);
    return this.observer.observeStore(new SyncStoreAdapter(store));
  }

  /** A task whose process died is left for this process's takeover when it can continue it, for another process when one may (orphanPatienceMs), else marked interrupted. */
  #sqliteOptions(): SqliteStoreOptions {
    const { taskLeaseMs, orphanPatienceMs } = this.#options;
    return { judgeOrphan: judgeOrphans(this.#options), ...(taskLeaseMs === undefined ? {} : { leaseMs: taskLeaseMs }), ...(orphanPatienceMs === undefined ? {} : { orphanPatienceMs }) };
  }

  /** The conversation store if its database exists: reading a transcript never creates one. */
  #existingConversationStore(): AsyncConversationStore | null {
    if (this.#store) return this.#store;
    const existing = openExistingStore(this.#sqliteOptions());
    if (existing) this.#store = this.#sqlite(existing);
    return this.#store;
  }

  async stop(): Promise<void> {
    this.#handingOff = true;
    this.#storeWatch?.stop();
    await this.#takeover?.stop();
    await this.#retention?.stop();
    this.#tree.stopChaos();
    const savers = this.#cluster?.savers() ?? [];
    await Promise.all([...this.registry.values()].map((s) => this.registry.remove(s.id)));
    await this.#tree.stop();
    // A task stopped with the tree records that it was interrupted; the store must still be open for it.
    await this.#tasks.settle(STORE_CLOSE_GRACE_MS);
    // Out of the node registry before the store closes: the other nodes take this node's sessions over at once.
    await this.#cluster?.stop(savers);
    const feed = this.#feed;
    this.#feed = null;
    await feed?.close();
    this.#watches.close();
    const store = this.#store;
    this.#store = null;
    await store?.close();
  }

  readonly #sessionEnded = (entry: RegisteredSession, reason: ExitReason): void => {
    const wasOpen = this.registry.get(entry.id) === entry;
    if (isAbnormal(reason)) {
      const message = `session ${entry.session.id} was given up: ${describeExit(reason)}`;
      this.#options.logger.log('error', message);
      // Before anything else: every request in flight, and every later one, is answered with why.
      entry.session.giveUp(message);
      if (wasOpen) entry.givenUp(message);
    }
    void this.registry.remove(entry.id);
  };
}

/** A session's one child, its connection actor; a function of its own, so the start's closure holds the session alone. */
function connectionSpec(session: Session): ChildSpec {
  return { id: 'connection', start: () => session.start(), restart: 'transient', shutdown: SESSION_SHUTDOWN_MS };
}

