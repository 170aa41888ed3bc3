// The `bash` tool: runs a command in the workspace in an OS sandbox where all its descendants can be killed
// (bubblewrap, else a PID namespace, else its own process group: see bash-isolation.ts), with an allow-list
// of environment variables; keeps only a bounded tail of its output in memory (the full output spills to a
// size-capped temp file).

import type { ChildProcess, ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { lstat, readdir, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { type Clock, systemClock } from '../time/clock.ts';
import { type BashIsolation, bashIsolation, commandLine, findExecutable, type SandboxArgs, STOPPER_SCRIPT, SYSTEM_BIN_DIRS } from './bash-isolation.ts';
import { freezeCommandShell } from './sandbox/freeze-shell.ts';
import { bwrapArgv } from './sandbox/bwrap-argv.ts';
import { leaseEgress } from './sandbox/egress-seam.ts';
import { resolveMounts } from './sandbox/mounts.ts';
import { allowedEnvironment, sandboxPolicy } from './sandbox/policy.ts';
import { keepSpare, type Launch, launchCommand, launchedCgroup } from './sandbox/spare.ts';
import { launchBounds } from './sandbox/bounds-probe.ts';
import { boundsNotices } from './sandbox/bounds.ts';
import { settleCommandCgroup } from './sandbox/command-cgroup.ts';
import { ToolError, type ToolBody } from './contract.ts';
import { errnoCode } from './fs-errors.ts';
import { formatSize, truncateTail } from './truncate.ts';
import { BASH_DEFAULT_TIMEOUT_SECONDS, BASH_MAX_TIMEOUT_SECONDS, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, KILL_GRACE_MS, MAX_FULL_OUTPUT_FILES, MAX_FULL_OUTPUT_FILE_BYTES, MAX_FULL_OUTPUT_TOTAL_BYTES, TAIL_KEEP_BYTES } from '../limits.ts';

export interface BashArgs {
  command: string;
  /** Seconds; BASH_DEFAULT_TIMEOUT_SECONDS when absent, 0 for none. */
  timeout?: number;
}

/** Once the shell has exited, how long its output pipes may stay open (held by an escaped process). */
export const STDIO_DRAIN_MS = 200;
/** Minimum interval between progress reports. */
export const PROGRESS_INTERVAL_MS = 250;
/** Prefix of the temp files that hold the full output of a truncated command. */
export const FULL_OUTPUT_PREFIX = 'super-pi-bash-';

type StopReason = 'timeout' | 'abort';

interface RunEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  stoppedBy: StopReason | null;
}

export const bashTool: ToolBody<BashArgs> = async (args, ctx) => {
  if (typeof args.command !== 'string' || args.command.trim() === '') throw new ToolError('command must be a non-empty string');
  const timeoutSeconds = args.timeout ?? BASH_DEFAULT_TIMEOUT_SECONDS;
  if (typeof timeoutSeconds !== 'number' || !Number.isFinite(timeoutSeconds) || timeoutSeconds < 0 || timeoutSeconds > BASH_MAX_TIMEOUT_SECONDS) {
    throw new ToolError(`timeout must be a number of seconds from 0 (no timeout) to ${BASH_MAX_TIMEOUT_SECONDS}`);
  }
  if (ctx.signal.aborted) return { text: 'Command aborted', isError: true, structured: commandResult({ code: null, signal: null, stoppedBy: 'abort' }, { content: '', notice: null, fullOutputPath: null }) };

  const shell = await shellPath();
  const isolation = await bashIsolation();
  const { launch, release } = await prepareLaunch(isolation, shell, ctx.workspace);
  const output = new CommandOutput();
  const clock = ctx.clock ?? systemClock;
  const progress = new ProgressReporter(output, ctx.onProgress, clock);
  let end: RunEnd;
  const child = launchCommand(launch);
  let bounded: string[] = [];
  try {
    end = await run(child, args.command, {
      timeoutMs: timeoutSeconds === 0 ? null : timeoutSeconds * 1000,
      signal: ctx.signal,
      clock,
      output,
      onOutput: () => progress.poke(),
    });
  } catch (err) {
    await output.finish();
    throw new ToolError(`could not run ${shell}: ${(err as Error).message}`, { cause: err });
  } finally {
    progress.stop();
    if (isolation.kind === 'bubblewrap') keepSpare(launch);
    // The sandbox has ended (its PID namespace with it): its egress door may serve the next command.
    release();
    // Its cgroup's counters say whether it met its bounds; then whatever is left in it is killed and it goes.
    const cgroup = launchedCgroup(child);
    const reached = await settleCommandCgroup(cgroup);
    if (reached !== null && cgroup !== undefined) bounded = boundsNotices(reached, cgroup.limits);
  }

  const tail = await output.finish();
  const cut = tail.notice === null ? tail.content : `${tail.content}\n\n[${tail.notice}]`;
  const text = bounded.length === 0 ? cut : withStatus(cut, bounded.join('\n'));
  // A failed command's result carries its structured copy too: the exit code is the fact the model needs most.
  const structured = commandResult(end, tail, bounded);
  if (end.stoppedBy === 'abort') return { text: withStatus(text, 'Command aborted'), isError: true, structured };
  if (end.stoppedBy === 'timeout') return { text: withStatus(text, `Command timed out after ${timeoutSeconds} seconds`), isError: true, structured };
  if (end.code === null) return { text: withStatus(text, `Command killed by signal ${end.signal ?? 'unknown'}`), isError: true, structured };
  if (end.code !== 0) return { text: withStatus(text, `Command exited with code ${end.code}`), isError: true, structured };
  return { text: text === '' ? '(no output)' : text, structured };
};

/** The output's tail as the model sees it: the kept text, the notice that says where the rest is, the spill file. */
interface OutputTail {
  content: string;
  notice: string | null;
  fullOutputPath: string | null;
}

/** The structuredContent of a command (matches bashDefinition.outputSchema). */
function commandResult(end: RunEnd, tail: OutputTail, bounded: readonly string[] = []): Record<string, unknown> {
  return {
    exitCode: end.stoppedBy === null ? end.code : null,
    signal: end.stoppedBy === null ? end.signal : null,
    timedOut: end.stoppedBy === 'timeout',
    aborted: end.stoppedBy === 'abort',
    output: tail.content,
    truncated: tail.notice !== null,
    ...(tail.fullOutputPath === null ? {} : { fullOutputPath: tail.fullOutputPath }),
    notices: [...(tail.notice === null ? [] : [tail.notice]), ...bounded],
  };
}

function withStatus(text: string, status: string): string {
  if (text === '') return status;
  return `${text.endsWith('\n') ? text.slice(0, -1) : text}\n\n${status}`;
}

/**
 * The command line and environment under `isolation`: under bubblewrap the policy in force is looked up
 * on disk now (a credential directory made since the last command is hidden too), and the command gets
 * TMPDIR=/tmp, its private one. Where `--bash-network allow=` asks for the egress proxy and none is
 * running, the command gets no network at all (bwrapArgv unshares it): closed, not open. `release` gives
 * back the command's door to the proxy once it has ended.
 */
async function prepareLaunch(isolation: BashIsolation, shell: string, workspace: string): Promise<{ launch: Launch; release: () => void }> {
  const policy = sandboxPolicy();
  const env = allowedEnvironment(policy.env);
  const sh = await systemShell();
  // Bounded: a cgroup of its own per launch, entered before the sandbox is built, or rlimits inside it.
  const { cgroup, rlimits } = await launchBounds(sh);
  const bounds = cgroup === undefined ? {} : { cgroup };
  if (isolation.kind !== 'bubblewrap') return { launch: { ...commandLine(isolation, sh, shell, undefined, rlimits), env, cwd: workspace, ...bounds }, release: () => undefined };
  const mounts = resolveMounts(policy, workspace);
  const lease = policy.network.kind === 'allow' ? await leaseEgress(policy.network.hosts) : undefined;
  const egress = lease?.seam;
  const sandbox: SandboxArgs = {
    bwrapArgv: bwrapArgv({ bwrap: isolation.bwrap, root: isolation.root, workspace, mounts, network: policy.network, ...(egress === undefined ? {} : { egress }) }),
    ...(egress === undefined ? {} : { bridgeArgv: egress.bridgeArgv }),
  };
  const launch = { ...commandLine(isolation, sh, shell, sandbox, rlimits), env: { ...env, TMPDIR: '/tmp', ...(egress?.env ?? {}) }, cwd: workspace, ...bounds };
  return { launch, release: () => lease?.release() };
}

interface RunOptions {
  timeoutMs: number | null;
  signal: AbortSignal;
  /** Times the timeout, the kill grace and the pipe drain. */
  clock: Clock;
  output: CommandOutput;
  onOutput: () => void;
}

/**
 * Runs the launch in a new process group (and a sandbox or PID namespace when the launch says so) and
 * resolves when it has exited and its output is in. A stop (timeout, abort) is a line on the stopper's
 * fd 3 (see STOPPER_SCRIPT: the shell frozen, everything else SIGTERMed), then SIGKILL to the group after
 * KILL_GRACE_MS, which in a namespace kills all of it. Whatever is still in the group when the launch exits
 * is killed; in a namespace the kernel has already killed everything else in it.
 * The spawn happens on the calling thread, which matters: the namespace's kill-on-parent-death signal
 * fires when that thread ends, so `bash` must run on a thread that lives as long as the call (the main one).
 */
function run(spawned: ChildProcess, command: string, opts: RunOptions): Promise<RunEnd> {
  return new Promise((resolve, reject) => {
    const child = spawned as ChildProcessByStdio<null, Readable, Readable>;
    const control = spawned.stdio[3] as Writable;
    const commandPipe = spawned.stdio[4] as Writable;
    // The stopper may be gone (the command ended, or killed it): the SIGKILL after the grace still comes.
    control.on('error', () => undefined);
    // Likewise: a stopper that died before reading its command ends the run through 'exit'.
    commandPipe.on('error', () => undefined);
    commandPipe.end(command);
    const { clock } = opts;
    const timers: unknown[] = [];
    let stoppedBy: StopReason | null = null;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let settled = false;

    const killGroup = (sig: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch (err) {
        // ESRCH: the group is already empty. Anything else (EPERM from a setuid member): at least hit the shell.
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH' && exited === null) child.kill(sig);
      }
    };
    const stop = (reason: StopReason): void => {
      if (stoppedBy !== null || exited !== null) return;
      stoppedBy = reason;
      control.write('stop\n');
      // The listener that reads the line is the command's to kill: the shell is frozen from here too.
      if (child.pid !== undefined) freezeCommandShell(child.pid, STOPPER_SCRIPT);
      timers.push(clock.setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS));
    };
    const onAbort = (): void => stop('abort');
    const settle = (done: () => void): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clock.clearTimeout(t);
      opts.signal.removeEventListener('abort', onAbort);
      done();
    };
    const finish = (): void => {
      if (exited !== null) settle(() => resolve({ ...(exited as NonNullable<typeof exited>), stoppedBy }));
    };

    const resume = (): void => {
      child.stdout.resume();
      child.stderr.resume();
    };
    const onData = (chunk: Buffer): void => {
      if (settled) return;
      if (!opts.output.append(chunk)) {
        // The spill file is behind: stop reading (the pipe fills, the command blocks) until it drains.
        child.stdout.pause();
        child.stderr.pause();
        opts.output.onceDrained(resume);
      }
      opts.onOutput();
    };
    // This runs on the main thread: a throw here would end the node, so the call fails with it instead.
    const guardedData = (chunk: Buffer): void => {
      try {
        onData(chunk);
      } catch (err) {
        killGroup('SIGKILL');
        settle(() => reject(err));
      }
    };
    child.stdout.on('data', guardedData);
    child.stderr.on('data', guardedData);

    if (opts.timeoutMs !== null) timers.push(clock.setTimeout(() => stop('timeout'), opts.timeoutMs));
    opts.signal.addEventListener('abort', onAbort, { once: true });
    if (opts.signal.aborted) stop('abort');

    child.once('error', (err) => {
      killGroup('SIGKILL');
      settle(() => reject(err));
    });
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      control.destroy();
      killGroup('SIGKILL');
      // A process that left the group (setsid) may hold the pipes open; do not wait on it forever.
      timers.push(clock.setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, STDIO_DRAIN_MS));
    });
    child.once('close', finish);
  });
}

/**
 * The command's output: byte and line totals, a rolling tail of at most about TAIL_KEEP_BYTES, and, once
 * the output passes the truncation limits, the full output in a temp file.
 */
class CommandOutput {
  #chunks: Buffer[] = [];
  #held = 0;
  #totalBytes = 0;
  #newlines = 0;
  /** Bytes since the last newline. */
  #openLineBytes = 0;
  /** Length of the last complete line. */
  #lastLineBytes = 0;
  #file: WriteStream | null = null;
  #filePath: string | null = null;
  /** Bytes given to the spill file; it stops at MAX_FULL_OUTPUT_FILE_BYTES. */
  #fileBytes = 0;
  #fileError: Error | null = null;
  /** Why older full-output files could not be deleted, if something stopped that. */
  #cleanupError: Error | null = null;

  get totalBytes(): number { return this.#totalBytes; }
  get totalLines(): number { return this.#newlines + (this.#openLineBytes > 0 ? 1 : 0); }

  /** False when the spill file asks the writer to wait (see onceDrained). */
  append(chunk: Buffer): boolean {
    this.#totalBytes += chunk.length;
    let from = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
      this.#newlines++;
      this.#lastLineBytes = this.#openLineBytes + (nl - from);
      this.#openLineBytes = 0;
      from = nl + 1;
    }
    this.#openLineBytes += chunk.length - from;
    this.#chunks.push(chunk);
    this.#held += chunk.length;

    let flowing = true;
    if (this.#file !== null) {
      if (this.#fileError === null) flowing = this.#writeCapped(chunk);
    } else if (this.#totalBytes > DEFAULT_MAX_BYTES || this.totalLines > DEFAULT_MAX_LINES) {
      // Spill before anything is dropped from memory, so the file starts at the first byte.
      flowing = this.#spill();
    }
    while (this.#chunks.length > 1 && this.#held - (this.#chunks[0] as Buffer).length >= TAIL_KEEP_BYTES) {
      this.#held -= (this.#chunks.shift() as Buffer).length;
    }
    return flowing;
  }

  onceDrained(resume: () => void): void {
    const file = this.#file;
    if (file === null || this.#fileError !== null) {
      resume();
      return;
    }
    const done = (): void => {
      file.off('drain', done);
      file.off('error', done);
      resume();
    };
    file.once('drain', done);
    file.once('error', done);
  }

  /** Closes the spill file and returns the tail as the model sees it, with its notice when cut ('' for no output). */
  async finish(): Promise<OutputTail> {
    if (this.#file !== null && !this.#file.closed) {
      this.#file.end();
      try {
        await finished(this.#file);
      } catch (err) {
        this.#fileError ??= err as Error;
      }
    }
    if (this.#filePath !== null) {
      // A new full-output file is written: the oldest beyond MAX_FULL_OUTPUT_FILES make room for it.
      this.#cleanupError ??= await pruneFullOutputs(path.dirname(this.#filePath), this.#filePath);
    }
    const tail = Buffer.concat(this.#chunks).toString('utf8');
    const truncation = truncateTail(tail);
    if (!truncation.truncated) return { content: tail, notice: null, fullOutputPath: null };
    let where = this.#fileError !== null
      ? `Full output could not be saved: ${this.#fileError.message}`
      : this.#fileBytes < this.#totalBytes
        ? `Full output (only its first ${formatSize(this.#fileBytes)} of ${formatSize(this.#totalBytes)}: the file is capped at ${formatSize(MAX_FULL_OUTPUT_FILE_BYTES)}): ${this.#filePath}`
        : `Full output: ${this.#filePath}`;
    if (this.#cleanupError !== null) where += `. Older full-output files could not be deleted: ${this.#cleanupError.message}`;
    const total = this.totalLines;
    const finalLine = this.#openLineBytes > 0 ? this.#openLineBytes : this.#lastLineBytes;
    let notice: string;
    if (truncation.outputLines === 1 && finalLine > truncation.outputBytes) {
      notice = `Showing last ${formatSize(truncation.outputBytes)} of line ${total} (line is ${formatSize(finalLine)}). ${where}`;
    } else {
      const first = total - truncation.outputLines + 1;
      const limit = truncation.truncatedBy === 'bytes' ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : '';
      notice = `Showing lines ${first}-${total} of ${total}${limit}. ${where}`;
    }
    return { content: truncation.content, notice, fullOutputPath: this.#fileError === null ? this.#filePath : null };
  }

  #spill(): boolean {
    this.#filePath = path.join(os.tmpdir(), `${FULL_OUTPUT_PREFIX}${randomBytes(8).toString('hex')}.log`);
    const file = createWriteStream(this.#filePath, { flags: 'wx', mode: 0o600 });
    file.on('error', (err) => {
      this.#fileError ??= err;
    });
    this.#file = file;
    let flowing = true;
    for (const chunk of this.#chunks) flowing = this.#writeCapped(chunk);
    return flowing;
  }

  /** Writes what still fits under MAX_FULL_OUTPUT_FILE_BYTES; true (keep reading) once nothing more fits. */
  #writeCapped(chunk: Buffer): boolean {
    const room = MAX_FULL_OUTPUT_FILE_BYTES - this.#fileBytes;
    if (room <= 0 || this.#file === null) return true;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#fileBytes += part.length;
    return this.#file.write(part);
  }
}

/**
 * Deletes this user's oldest full-output files in `dir` beyond MAX_FULL_OUTPUT_FILES, or beyond
 * MAX_FULL_OUTPUT_TOTAL_BYTES in all; `newest`, just written, always stays. Resolves to the system error
 * that stopped it, if one did, for the notice: a failed cleanup
 * must not cost the caller the command's output.
 */
async function pruneFullOutputs(dir: string, newest: string): Promise<Error | null> {
  const uid = process.getuid?.();
  try {
    const newestBytes = (await lstat(newest).catch(alreadyGone))?.size ?? 0;
    const older: { file: string; mtimeMs: number; size: number }[] = [];
    for (const name of await readdir(dir)) {
      const file = path.join(dir, name);
      if (!name.startsWith(FULL_OUTPUT_PREFIX) || !name.endsWith('.log') || file === newest) continue;
      const info = await lstat(file).catch(alreadyGone);
      // Only this user's regular files: in a shared temp directory, other users' files are theirs to keep.
      if (info === null || !info.isFile() || (uid !== undefined && info.uid !== uid)) continue;
      older.push({ file, mtimeMs: info.mtimeMs, size: info.size });
    }
    older.sort((a, b) => b.mtimeMs - a.mtimeMs);
    // The newest files are kept as long as both limits hold; from the first that breaks one, all older go.
    let kept = 1;
    let keptBytes = newestBytes;
    let full = false;
    for (const { file, size } of older) {
      full ||= kept >= MAX_FULL_OUTPUT_FILES || keptBytes + size > MAX_FULL_OUTPUT_TOTAL_BYTES;
      if (full) {
        await unlink(file).catch(alreadyGone);
      } else {
        kept++;
        keptBytes += size;
      }
    }
    return null;
  } catch (err) {
    // A failed system call (EACCES, EROFS, …) goes into the notice instead; anything else is a bug and is thrown.
    if (err instanceof Error && errnoCode(err) !== undefined) return err;
    throw err;
  }
}

/** ENOENT: a concurrent call (or the system's temp cleaner) deleted the file first, which is the outcome wanted. */
function alreadyGone(err: unknown): null {
  if (errnoCode(err) === 'ENOENT') return null;
  throw err;
}

/** Reports bytes of output so far, at most every PROGRESS_INTERVAL_MS, and only when there is news. */
class ProgressReporter {
  #timer: unknown;
  /** When the last report went out; none yet, so the first is not held back. */
  #lastAt = Number.NEGATIVE_INFINITY;
  #lastBytes = 0;
  #stopped = false;

  constructor(
    private readonly output: CommandOutput,
    private readonly onProgress: ((p: { progress: number; message?: string }) => void) | undefined,
    private readonly clock: Clock,
  ) {}

  poke(): void {
    if (this.onProgress === undefined || this.#timer !== undefined || this.#stopped) return;
    const wait = PROGRESS_INTERVAL_MS - (this.clock.now() - this.#lastAt);
    if (wait <= 0) this.#report();
    else this.#timer = this.clock.setTimeout(() => this.#report(), wait);
  }

  stop(): void {
    this.#stopped = true;
    this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #report(): void {
    this.#timer = undefined;
    const bytes = this.output.totalBytes;
    if (this.#stopped || bytes === this.#lastBytes) return;
    this.#lastAt = this.clock.now();
    this.#lastBytes = bytes;
    this.onProgress?.({ progress: bytes, message: `${formatSize(bytes)} of output, ${this.output.totalLines} lines` });
  }
}

let shLookup: Promise<string> | undefined;

/** The POSIX shell that runs STOPPER_SCRIPT: from the fixed system directories, never PATH. */
function systemShell(): Promise<string> {
  shLookup ??= findExecutable('sh', SYSTEM_BIN_DIRS).then((sh) => sh ?? '/bin/sh');
  return shLookup;
}

let shellLookup: Promise<string> | undefined;

/** bash from PATH (or /bin, /usr/bin), else /bin/sh; looked up once. */
function shellPath(): Promise<string> {
  shellLookup ??= findShell();
  return shellLookup;
}

async function findShell(): Promise<string> {
  return (await findExecutable('bash', [...(process.env.PATH ?? '').split(path.delimiter), '/bin', '/usr/bin'])) ?? '/bin/sh';
}
