// Every figure the documentation (README.md and the pages of docs/) states about a limit, a default or a
// timeout is the value the code uses: each row below finds the figure wherever the documentation states
// it (a phrase with one capture, checked at every place it occurs, on every page) and compares it with
// the named constant, written as the pages write it. So a figure may move between pages and stays
// checked. And every constant of the one limits module (src/limits.ts) is either stated (a row here) or
// listed as internal, with why.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as limits from '../../src/limits.ts';
import { MAX_NODE_ID_LENGTH } from '../../src/store/node-ownership.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A page of the documentation: its path from the repository root and its text. */
interface Page {
  readonly file: string;
  readonly text: string;
}

/** README.md and every page of docs/: where the figures are stated. */
const pages: readonly Page[] = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
  .map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }));

/** How the pages write a figure. */
const seconds = (ms: number) => String(ms / 1000);
const kib = (bytes: number) => String(bytes / 1024);
const mib = (bytes: number) => String(bytes / 1024 / 1024);
const grouped = (n: number) => n.toLocaleString('en-US');
const WORDS = new Map([[2, 'two'], [3, 'three']]);
const word = (n: number) => WORDS.get(n) ?? String(n);
const intensity = (level: keyof typeof limits.DEFAULT_TREE_INTENSITIES) => {
  const { maxRestarts, periodMs } = limits.DEFAULT_TREE_INTENSITIES[level];
  return `${maxRestarts} / ${periodMs / 1000}`;
};

interface Figure {
  /** Where the documentation states it: the one capture group is the figure. */
  readonly phrase: RegExp;
  /** The constant it comes from (for src/limits.ts, its export name). */
  readonly name: string;
  /** The constant's value as the pages write it. */
  readonly figure: string;
}

/** Figures of src/limits.ts. */
const FIGURES: readonly Figure[] = [
  // Flags and environment
  { phrase: /\| `--task-lease SECONDS` \| `SUPERPI_TASK_LEASE` \| `(\d+)`/, name: 'TASK_LEASE_MS', figure: seconds(limits.TASK_LEASE_MS) },
  { phrase: /\| `--page-size N` \| \| `(\d+)`/, name: 'DEFAULT_PAGE_SIZE', figure: String(limits.DEFAULT_PAGE_SIZE) },
  { phrase: /\| `--tool-timeout SECONDS` \| \| `(\d+)`/, name: 'DEFAULT_TOOL_TIMEOUT_SECONDS', figure: String(limits.DEFAULT_TOOL_TIMEOUT_SECONDS) },
  { phrase: /\| `--session-idle SECONDS` \| \| `(\d+)`/, name: 'DEFAULT_SESSION_IDLE_SECONDS', figure: String(limits.DEFAULT_SESSION_IDLE_SECONDS) },
  { phrase: /\| `--host HOST` \| \| `([^`]+)`/, name: 'DEFAULT_HOST', figure: limits.DEFAULT_HOST },
  { phrase: /\| `--port N` \| `SUPERPI_PORT` \| `(\d+)`/, name: 'DEFAULT_PORT', figure: String(limits.DEFAULT_PORT) },
  { phrase: /\| `--log-level LEVEL` \| `SUPERPI_LOG_LEVEL` \| `(\w+)`/, name: 'DEFAULT_LOG_LEVEL', figure: limits.DEFAULT_LOG_LEVEL },
  { phrase: /one per core, at least (\d+)/, name: 'MIN_DEFAULT_THREADS', figure: String(limits.MIN_DEFAULT_THREADS) },
  { phrase: /one per\s+core, at least (\w+) \(`MIN_DEFAULT_THREADS`/, name: 'MIN_DEFAULT_THREADS', figure: word(limits.MIN_DEFAULT_THREADS) },
  { phrase: /reads over (\d+) MiB/, name: 'LARGE_READ_BYTES', figure: mib(limits.LARGE_READ_BYTES) },
  { phrase: /at most (\d+) per session, `TOOL_POOL_MAX_WAITING_PER_SESSION`/, name: 'TOOL_POOL_MAX_WAITING_PER_SESSION', figure: String(limits.TOOL_POOL_MAX_WAITING_PER_SESSION) },
  { phrase: /`root=(\d+\/\d+)`/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('root').replace(' / ', '/') },
  { phrase: /`schedulers=(\d+\/\d+)`/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('schedulers').replace(' / ', '/') },
  { phrase: /`session=(\d+\/\d+)`/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('session').replace(' / ', '/') },
  { phrase: /`task=(\d+\/\d+)`/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('task').replace(' / ', '/') },
  // Limits
  { phrase: /\| `MAX_TOOL_CALLS_PER_TURN` \| (\d+) tool calls one model turn/, name: 'MAX_TOOL_CALLS_PER_TURN', figure: String(limits.MAX_TOOL_CALLS_PER_TURN) },
  { phrase: /\| `SAMPLED_TURN_REREAD_FACTOR` \| (\d+) times the length/, name: 'SAMPLED_TURN_REREAD_FACTOR', figure: String(limits.SAMPLED_TURN_REREAD_FACTOR) },
  { phrase: /\| `MAX_JSON_DEPTH` \| (\d+) levels/, name: 'MAX_JSON_DEPTH', figure: String(limits.MAX_JSON_DEPTH) },
  { phrase: /\| `DEPTH_SCAN_MIN_CHARS` \| ([\d,]+) characters/, name: 'DEPTH_SCAN_MIN_CHARS', figure: grouped(limits.DEPTH_SCAN_MIN_CHARS) },
  { phrase: /\| `MAX_BATCH_LENGTH` \| ([\d,]+) elements/, name: 'MAX_BATCH_LENGTH', figure: grouped(limits.MAX_BATCH_LENGTH) },
  { phrase: /\| `MAX_META_CACHE_ENTRIES` \| (\d+) `_meta` texts/, name: 'MAX_META_CACHE_ENTRIES', figure: String(limits.MAX_META_CACHE_ENTRIES) },
  { phrase: /\| `MAX_META_CACHE_TEXT_LENGTH` \| (\d+) characters/, name: 'MAX_META_CACHE_TEXT_LENGTH', figure: String(limits.MAX_META_CACHE_TEXT_LENGTH) },
  { phrase: /(\d+) elements \(`BATCH_SLICE_LENGTH`\)/, name: 'BATCH_SLICE_LENGTH', figure: String(limits.BATCH_SLICE_LENGTH) },
  { phrase: /\| `MAX_CLIENT_CAPABILITIES_BYTES` \| (\d+) KiB/, name: 'MAX_CLIENT_CAPABILITIES_BYTES', figure: kib(limits.MAX_CLIENT_CAPABILITIES_BYTES) },
  { phrase: /\| `MAX_CLIENT_INFO_STRING_LENGTH` \| (\d+) characters/, name: 'MAX_CLIENT_INFO_STRING_LENGTH', figure: String(limits.MAX_CLIENT_INFO_STRING_LENGTH) },
  { phrase: /\| `MAX_REQUEST_ID_LENGTH` \| (\d+) characters/, name: 'MAX_REQUEST_ID_LENGTH', figure: String(limits.MAX_REQUEST_ID_LENGTH) },
  { phrase: /\| `MAX_REQUESTS_IN_FLIGHT` \| (\d+) per session/, name: 'MAX_REQUESTS_IN_FLIGHT', figure: String(limits.MAX_REQUESTS_IN_FLIGHT) },
  { phrase: /\| `MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL` \| (\d+) per principal/, name: 'MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL', figure: String(limits.MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL) },
  { phrase: /\| `--max-requests-in-flight-per-principal N` \| `SUPERPI_MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL` \| `(\d+)`/, name: 'MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL', figure: String(limits.MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL) },
  { phrase: /\| `MAX_LISTEN_URIS` \| (\d+) per `subscriptions\/listen`/, name: 'MAX_LISTEN_URIS', figure: String(limits.MAX_LISTEN_URIS) },
  { phrase: /\| `MAX_LISTEN_TASK_IDS` \| (\d+) task ids per `subscriptions\/listen`/, name: 'MAX_LISTEN_TASK_IDS', figure: String(limits.MAX_LISTEN_TASK_IDS) },
  { phrase: /\| `SQLITE_CHANGE_POLL_MS` \| (\d+) ms between/, name: 'SQLITE_CHANGE_POLL_MS', figure: String(limits.SQLITE_CHANGE_POLL_MS) },
  { phrase: /\| `SQLITE_CHANGE_POLL_IDS` \| (\d+) watched conversations/, name: 'SQLITE_CHANGE_POLL_IDS', figure: String(limits.SQLITE_CHANGE_POLL_IDS) },
  { phrase: /\| `MAX_TASK_ID_LENGTH` \| (\d+) characters/, name: 'MAX_TASK_ID_LENGTH', figure: String(limits.MAX_TASK_ID_LENGTH) },
  { phrase: /\| `TASK_POLL_INTERVAL_MS` \| (\d+) s/, name: 'TASK_POLL_INTERVAL_MS', figure: seconds(limits.TASK_POLL_INTERVAL_MS) },
  { phrase: /\| `TASK_INPUT_WAIT_MS` \| (\d+) minutes/, name: 'TASK_INPUT_WAIT_MS', figure: String(limits.TASK_INPUT_WAIT_MS / 60_000) },
  { phrase: /\| `MAX_INPUT_RESPONSES` \| (\d+) answers/, name: 'MAX_INPUT_RESPONSES', figure: String(limits.MAX_INPUT_RESPONSES) },
  { phrase: /\| `MAX_PARKED_QUESTIONS` \| (\d+) questions/, name: 'MAX_PARKED_QUESTIONS', figure: String(limits.MAX_PARKED_QUESTIONS) },
  { phrase: /\| `MAX_PARKED_TASKS_PER_PRINCIPAL` \| (\d+) Tasks-extension tasks/, name: 'MAX_PARKED_TASKS_PER_PRINCIPAL', figure: String(limits.MAX_PARKED_TASKS_PER_PRINCIPAL) },
  { phrase: /\| `TASK_RESULT_TAIL_ENTRIES` \| ([\d,]+) entries/, name: 'TASK_RESULT_TAIL_ENTRIES', figure: grouped(limits.TASK_RESULT_TAIL_ENTRIES) },
  { phrase: /`TASK_RESULT_TAIL_PAGE` \((\d+)\) at a time/, name: 'TASK_RESULT_TAIL_PAGE', figure: String(limits.TASK_RESULT_TAIL_PAGE) },
  { phrase: /\| `TRANSCRIPT_READ_MAX_BYTES` \| (\d+) MiB/, name: 'TRANSCRIPT_READ_MAX_BYTES', figure: mib(limits.TRANSCRIPT_READ_MAX_BYTES) },
  { phrase: /\| `TRANSCRIPT_READ_MAX_ENTRIES` \| ([\d,]+) entries/, name: 'TRANSCRIPT_READ_MAX_ENTRIES', figure: grouped(limits.TRANSCRIPT_READ_MAX_ENTRIES) },
  { phrase: /at most ([\d,]+) entries and \d+ MiB of JSON lines\s+\(`TRANSCRIPT_READ_MAX_ENTRIES`/, name: 'TRANSCRIPT_READ_MAX_ENTRIES', figure: grouped(limits.TRANSCRIPT_READ_MAX_ENTRIES) },
  { phrase: /at most [\d,]+ entries and (\d+) MiB of JSON lines\s+\(`TRANSCRIPT_READ_MAX_ENTRIES`, `TRANSCRIPT_READ_MAX_BYTES`/, name: 'TRANSCRIPT_READ_MAX_BYTES', figure: mib(limits.TRANSCRIPT_READ_MAX_BYTES) },
  { phrase: /\| `TASK_RESULT_TAIL_BYTES` \| (\d+) MiB/, name: 'TASK_RESULT_TAIL_BYTES', figure: mib(limits.TASK_RESULT_TAIL_BYTES) },
  { phrase: /\| `TASK_HISTORY_MAX_BYTES` \| (\d+) MiB/, name: 'TASK_HISTORY_MAX_BYTES', figure: mib(limits.TASK_HISTORY_MAX_BYTES) },
  { phrase: /\| `UNDO_PAGE_BYTES` \| (\d+) MiB/, name: 'UNDO_PAGE_BYTES', figure: mib(limits.UNDO_PAGE_BYTES) },
  { phrase: /\| `TASK_STATUS_RETRY_MS` \| (\d+) s between/, name: 'TASK_STATUS_RETRY_MS', figure: seconds(limits.TASK_STATUS_RETRY_MS) },
  { phrase: /\| `TASK_STATUS_RETRIES` \| (\d+) attempts/, name: 'TASK_STATUS_RETRIES', figure: String(limits.TASK_STATUS_RETRIES) },
  { phrase: /\| `UNDO_MAX_SNAPSHOTS` \| ([\d,]+) `file_snapshot` entries/, name: 'UNDO_MAX_SNAPSHOTS', figure: grouped(limits.UNDO_MAX_SNAPSHOTS) },
  { phrase: /\| `TASK_ROUND_HISTORY_CACHE_ENTRIES` \| (\d+) conversations/, name: 'TASK_ROUND_HISTORY_CACHE_ENTRIES', figure: String(limits.TASK_ROUND_HISTORY_CACHE_ENTRIES) },
  { phrase: /\| `TASK_ROUND_HISTORY_CACHE_BYTES` \| (\d+) MiB/, name: 'TASK_ROUND_HISTORY_CACHE_BYTES', figure: mib(limits.TASK_ROUND_HISTORY_CACHE_BYTES) },
  { phrase: /\| `TASK_SWEEP_BATCH` \| (\d+) expired tasks/, name: 'TASK_SWEEP_BATCH', figure: String(limits.TASK_SWEEP_BATCH) },
  { phrase: /\| `CONSUMED_STATE_SWEEP_BATCH` \| (\d+) spent/, name: 'CONSUMED_STATE_SWEEP_BATCH', figure: String(limits.CONSUMED_STATE_SWEEP_BATCH) },
  { phrase: /`CONSUMED_STATE_SWEEP_BATCH` \((\d+)\)/, name: 'CONSUMED_STATE_SWEEP_BATCH', figure: String(limits.CONSUMED_STATE_SWEEP_BATCH) },
  { phrase: /\| `ORPHAN_TASK_PATIENCE_MS` \| (\d+) minutes/, name: 'ORPHAN_TASK_PATIENCE_MS', figure: String(limits.ORPHAN_TASK_PATIENCE_MS / 60_000) },
  { phrase: /`ORPHAN_TASK_PATIENCE_MS`\s+\((\d+) minutes\)/, name: 'ORPHAN_TASK_PATIENCE_MS', figure: String(limits.ORPHAN_TASK_PATIENCE_MS / 60_000) },
  { phrase: /\| `CONSUMED_STATE_GRACE_MS` \| (\d+) minutes/, name: 'CONSUMED_STATE_GRACE_MS', figure: String(limits.CONSUMED_STATE_GRACE_MS / 60_000) },
  { phrase: /`CONSUMED_STATE_GRACE_MS`\s+\((\d+) minutes\)/, name: 'CONSUMED_STATE_GRACE_MS', figure: String(limits.CONSUMED_STATE_GRACE_MS / 60_000) },
  { phrase: /\| `MAX_STATE_DIGEST_LENGTH` \| (\d+) characters/, name: 'MAX_STATE_DIGEST_LENGTH', figure: String(limits.MAX_STATE_DIGEST_LENGTH) },
  { phrase: /`MAX_STATE_DIGEST_LENGTH` \((\d+)\)/, name: 'MAX_STATE_DIGEST_LENGTH', figure: String(limits.MAX_STATE_DIGEST_LENGTH) },
  { phrase: /`STATE_NONCE_BYTES` = (\d+)/, name: 'STATE_NONCE_BYTES', figure: String(limits.STATE_NONCE_BYTES) },
  { phrase: /`STATE_NONCE_BYTES` \((\d+)\) random bytes/, name: 'STATE_NONCE_BYTES', figure: String(limits.STATE_NONCE_BYTES) },
  { phrase: /\| `TASK_SWEEP_BATCHES_PER_PASS` \| (\d+) writes/, name: 'TASK_SWEEP_BATCHES_PER_PASS', figure: String(limits.TASK_SWEEP_BATCHES_PER_PASS) },
  { phrase: /`TASK_SWEEP_INTERVAL_MS` \((\d+) s\)/, name: 'TASK_SWEEP_INTERVAL_MS', figure: seconds(limits.TASK_SWEEP_INTERVAL_MS) },
  { phrase: /`TASK_SWEEP_MIN_INTERVAL_MS` \((\d+) s\)/, name: 'TASK_SWEEP_MIN_INTERVAL_MS', figure: seconds(limits.TASK_SWEEP_MIN_INTERVAL_MS) },
  { phrase: /`MAX_TASK_TTL_MS`, (\d+) days/, name: 'MAX_TASK_TTL_MS', figure: String(limits.MAX_TASK_TTL_MS / 86_400_000) },
  { phrase: /\| `TASK_PARKED_INPUT_CACHE_ENTRIES` \| (\d+) parked places/, name: 'TASK_PARKED_INPUT_CACHE_ENTRIES', figure: String(limits.TASK_PARKED_INPUT_CACHE_ENTRIES) },
  { phrase: /`TASK_PARKED_INPUT_CACHE_ENTRIES` \((\d+)\) places/, name: 'TASK_PARKED_INPUT_CACHE_ENTRIES', figure: String(limits.TASK_PARKED_INPUT_CACHE_ENTRIES) },
  { phrase: /\| `TASK_PARKED_INPUT_CACHE_BYTES` \| (\d+) MiB/, name: 'TASK_PARKED_INPUT_CACHE_BYTES', figure: mib(limits.TASK_PARKED_INPUT_CACHE_BYTES) },
  { phrase: /`TASK_PARKED_INPUT_CACHE_BYTES` \((\d+) MiB\)/, name: 'TASK_PARKED_INPUT_CACHE_BYTES', figure: mib(limits.TASK_PARKED_INPUT_CACHE_BYTES) },
  { phrase: /\| `MAX_LISTED_CONVERSATIONS` \| (\d+) conversations per/, name: 'MAX_LISTED_CONVERSATIONS', figure: String(limits.MAX_LISTED_CONVERSATIONS) },
  { phrase: /`MAX_LISTED_CONVERSATIONS`, (\d+)\)/, name: 'MAX_LISTED_CONVERSATIONS', figure: String(limits.MAX_LISTED_CONVERSATIONS) },
  { phrase: /\| `MAX_LIST_CURSOR_LENGTH` \| ([\d,]+) characters, the longest cursor/, name: 'MAX_LIST_CURSOR_LENGTH', figure: grouped(limits.MAX_LIST_CURSOR_LENGTH) },
  { phrase: /\| `MAX_SESSION_CONVERSATIONS` \| ([\d,]+) conversations/, name: 'MAX_SESSION_CONVERSATIONS', figure: grouped(limits.MAX_SESSION_CONVERSATIONS) },
  { phrase: /\| `MAX_SESSION_SUBSCRIPTIONS` \| (\d+) resources/, name: 'MAX_SESSION_SUBSCRIPTIONS', figure: String(limits.MAX_SESSION_SUBSCRIPTIONS) },
  { phrase: /\| `MAX_SUBSCRIPTION_URI_LENGTH` \| (\d+) characters/, name: 'MAX_SUBSCRIPTION_URI_LENGTH', figure: String(limits.MAX_SUBSCRIPTION_URI_LENGTH) },
  { phrase: /\| `DEFAULT_MAILBOX_LIMIT` \| ([\d,]+) messages/, name: 'DEFAULT_MAILBOX_LIMIT', figure: grouped(limits.DEFAULT_MAILBOX_LIMIT) },
  { phrase: /mailbox\s+\(([\d,]+) messages, `DEFAULT_MAILBOX_LIMIT`/, name: 'DEFAULT_MAILBOX_LIMIT', figure: grouped(limits.DEFAULT_MAILBOX_LIMIT) },
  { phrase: /\| `MAX_BUFFERED_MESSAGES` \| ([\d,]+) messages/, name: 'MAX_BUFFERED_MESSAGES', figure: grouped(limits.MAX_BUFFERED_MESSAGES) },
  { phrase: /\| `MAX_COMPLETION_VALUES` \| (\d+) values/, name: 'MAX_COMPLETION_VALUES', figure: String(limits.MAX_COMPLETION_VALUES) },
  { phrase: /\| `MAX_TURNS_LIMIT` \| (\d+) turns/, name: 'MAX_TURNS_LIMIT', figure: String(limits.MAX_TURNS_LIMIT) },
  { phrase: /\| `BASH_MAX_TIMEOUT_SECONDS` \| ([\d,]+) s/, name: 'BASH_MAX_TIMEOUT_SECONDS', figure: grouped(limits.BASH_MAX_TIMEOUT_SECONDS) },
  { phrase: /\| `TOOL_THREAD_MEMORY_MB` \| (\d+) MB/, name: 'TOOL_THREAD_MEMORY_MB', figure: String(limits.TOOL_THREAD_MEMORY_MB) },
  { phrase: /\| `ABORT_GRACE_MS` \| (\d+) s/, name: 'ABORT_GRACE_MS', figure: seconds(limits.ABORT_GRACE_MS) },
  { phrase: /\| `SPAWN_WAIT_MS` \| (\d+) s/, name: 'SPAWN_WAIT_MS', figure: seconds(limits.SPAWN_WAIT_MS) },
  { phrase: /\| `TOOL_ERROR_MAX_CHARS` \| (\d+) KiB characters/, name: 'TOOL_ERROR_MAX_CHARS', figure: kib(limits.TOOL_ERROR_MAX_CHARS) },
  { phrase: /\| `ARGUMENT_EXCERPT_CHARS` \| (\d+) characters/, name: 'ARGUMENT_EXCERPT_CHARS', figure: String(limits.ARGUMENT_EXCERPT_CHARS) },
  { phrase: /\| `GLOB_MAX_CHARS` \| (\d+) characters/, name: 'GLOB_MAX_CHARS', figure: String(limits.GLOB_MAX_CHARS) },
  { phrase: /\| `GLOB_MAX_SOURCE_CHARS` \| (\d+) KiB characters/, name: 'GLOB_MAX_SOURCE_CHARS', figure: kib(limits.GLOB_MAX_SOURCE_CHARS) },
  { phrase: /\| `IGNORE_MAX_LINES` \| ([\d,]+) lines/, name: 'IGNORE_MAX_LINES', figure: grouped(limits.IGNORE_MAX_LINES) },
  { phrase: /\| `IGNORE_MAX_GLOB_RULES` \| (\d+) `.gitignore` rules/, name: 'IGNORE_MAX_GLOB_RULES', figure: String(limits.IGNORE_MAX_GLOB_RULES) },
  { phrase: /\| `EDIT_MAX_EDITS` \| (\d+) replacements/, name: 'EDIT_MAX_EDITS', figure: String(limits.EDIT_MAX_EDITS) },
  { phrase: /at most (\d+), `EDIT_MAX_EDITS`/, name: 'EDIT_MAX_EDITS', figure: String(limits.EDIT_MAX_EDITS) },
  { phrase: /\| `EDIT_MAX_TEXT_BYTES` \| (\d+) MiB/, name: 'EDIT_MAX_TEXT_BYTES', figure: mib(limits.EDIT_MAX_TEXT_BYTES) },
  { phrase: /\| `EDIT_INLINE_MAX_BYTES` \| (\d+) KiB/, name: 'EDIT_INLINE_MAX_BYTES', figure: kib(limits.EDIT_INLINE_MAX_BYTES) },
  { phrase: /\| `EDIT_INLINE_MAX_TEXT_CHARS` \| (\d+) KiB characters/, name: 'EDIT_INLINE_MAX_TEXT_CHARS', figure: kib(limits.EDIT_INLINE_MAX_TEXT_CHARS) },
  { phrase: /\| `IMAGE_MAX_EDGE_PX` \| (\d+) px/, name: 'IMAGE_MAX_EDGE_PX', figure: String(limits.IMAGE_MAX_EDGE_PX) },
  { phrase: /\| `IMAGE_MAX_BYTES` \| (\d+) MiB/, name: 'IMAGE_MAX_BYTES', figure: mib(limits.IMAGE_MAX_BYTES) },
  { phrase: /\| `IMAGE_MAX_FILE_BYTES` \| (\d+) MiB/, name: 'IMAGE_MAX_FILE_BYTES', figure: mib(limits.IMAGE_MAX_FILE_BYTES) },
  { phrase: /\| `IMAGE_MAX_INPUT_PIXELS` \| ([\d,]+) pixels/, name: 'IMAGE_MAX_INPUT_PIXELS', figure: grouped(limits.IMAGE_MAX_INPUT_PIXELS) },
  { phrase: /\| `IMAGE_MAX_CONCURRENT_DECODES` \| (\d+) image decodes/, name: 'IMAGE_MAX_CONCURRENT_DECODES', figure: String(limits.IMAGE_MAX_CONCURRENT_DECODES) },
  { phrase: /\| `IMAGE_MAX_WAITING_DECODES` \| (\d+) image reads/, name: 'IMAGE_MAX_WAITING_DECODES', figure: String(limits.IMAGE_MAX_WAITING_DECODES) },
  { phrase: /at most (\d+) px on the longer side and \d+ MiB/, name: 'IMAGE_MAX_EDGE_PX', figure: String(limits.IMAGE_MAX_EDGE_PX) },
  { phrase: /at most \d+ px on the longer side and (\d+) MiB/, name: 'IMAGE_MAX_BYTES', figure: mib(limits.IMAGE_MAX_BYTES) },
  // Tools
  { phrase: /truncation rules \((\d+) lines/, name: 'DEFAULT_MAX_LINES', figure: String(limits.DEFAULT_MAX_LINES) },
  { phrase: /truncation rules \(\d+ lines or (\d+) KB/, name: 'DEFAULT_MAX_BYTES', figure: kib(limits.DEFAULT_MAX_BYTES) },
  { phrase: /`timeout` \(seconds, default (\d+)/, name: 'BASH_DEFAULT_TIMEOUT_SECONDS', figure: String(limits.BASH_DEFAULT_TIMEOUT_SECONDS) },
  { phrase: /keeps a (\d+) KB tail/, name: 'TAIL_KEEP_BYTES', figure: kib(limits.TAIL_KEEP_BYTES) },
  { phrase: /`MAX_FULL_OUTPUT_FILE_BYTES`, (\d+) MiB each/, name: 'MAX_FULL_OUTPUT_FILE_BYTES', figure: mib(limits.MAX_FULL_OUTPUT_FILE_BYTES) },
  { phrase: /the newest (\d+) are kept/, name: 'MAX_FULL_OUTPUT_FILES', figure: String(limits.MAX_FULL_OUTPUT_FILES) },
  { phrase: /`MAX_FULL_OUTPUT_TOTAL_BYTES`, (\d+) MiB, in all/, name: 'MAX_FULL_OUTPUT_TOTAL_BYTES', figure: mib(limits.MAX_FULL_OUTPUT_TOTAL_BYTES) },
  { phrase: /\| `grep` \|[^|]*`limit` \(default (\d+)\)/, name: 'GREP_DEFAULT_LIMIT', figure: String(limits.GREP_DEFAULT_LIMIT) },
  { phrase: /skips binary files and files over (\d+) MB/, name: 'GREP_MAX_FILE_BYTES', figure: mib(limits.GREP_MAX_FILE_BYTES) },
  { phrase: /\| `find` \|[^|]*`limit` \(default (\d+)\)/, name: 'FIND_DEFAULT_LIMIT', figure: String(limits.FIND_DEFAULT_LIMIT) },
  { phrase: /\| `ls` \|[^|]*`limit` \(default (\d+)\)/, name: 'DEFAULT_LS_LIMIT', figure: String(limits.DEFAULT_LS_LIMIT) },
  { phrase: /`max_turns` \(default (\d+)\)/, name: 'DEFAULT_MAX_TURNS', figure: String(limits.DEFAULT_MAX_TURNS) },
  { phrase: /at most ([\d,]+) entries per call \(`MAX_WALK_ENTRIES`\)/, name: 'MAX_WALK_ENTRIES', figure: grouped(limits.MAX_WALK_ENTRIES) },
  { phrase: /at most (\d+) MiB\s+\(`MAX_CONFINED_FILE_BYTES`\)/, name: 'MAX_CONFINED_FILE_BYTES', figure: mib(limits.MAX_CONFINED_FILE_BYTES) },
  { phrase: /an undo snapshot (\d+) MiB \(`MAX_SNAPSHOT_BYTES`\)/, name: 'MAX_SNAPSHOT_BYTES', figure: mib(limits.MAX_SNAPSHOT_BYTES) },
  { phrase: /(\d+) KiB \(`README_EXCERPT_BYTES`\)/, name: 'README_EXCERPT_BYTES', figure: kib(limits.README_EXCERPT_BYTES) },
  // Prompts, resources, completion
  { phrase: /within (\d+) s \(`GIT_STATUS_DEADLINE_MS`\)/, name: 'GIT_STATUS_DEADLINE_MS', figure: seconds(limits.GIT_STATUS_DEADLINE_MS) },
  { phrase: /at most (\d+) lines \(`GIT_STATUS_LINES`\)/, name: 'GIT_STATUS_LINES', figure: String(limits.GIT_STATUS_LINES) },
  { phrase: /with a (\d+) MB heap\s+\(`GIT_STATUS_THREAD_MEMORY_MB`\)/, name: 'GIT_STATUS_THREAD_MEMORY_MB', figure: String(limits.GIT_STATUS_THREAD_MEMORY_MB) },
  { phrase: /at most (\d+) MiB declared and inflated \(`GIT_OBJECT_MAX_BYTES`/, name: 'GIT_OBJECT_MAX_BYTES', figure: mib(limits.GIT_OBJECT_MAX_BYTES) },
  { phrase: /packs\s+of at most (\d+) MiB \(`GIT_PACK_MAX_BYTES`\)/, name: 'GIT_PACK_MAX_BYTES', figure: mib(limits.GIT_PACK_MAX_BYTES) },
  { phrase: /delta chains at most (\d+) deep \(`GIT_DELTA_MAX_DEPTH`\)/, name: 'GIT_DELTA_MAX_DEPTH', figure: String(limits.GIT_DELTA_MAX_DEPTH) },
  { phrase: /at most (\d+) MiB inflated by one status \(`GIT_STATUS_MAX_INFLATED_BYTES`\)/, name: 'GIT_STATUS_MAX_INFLATED_BYTES', figure: mib(limits.GIT_STATUS_MAX_INFLATED_BYTES) },
  // Harness tasks
  { phrase: /a wall time of\s+(\d+) minutes/, name: 'DEFAULT_TASK_WALL_MS', figure: String(limits.DEFAULT_TASK_WALL_MS / 60_000) },
  { phrase: /the actor `transient`, (\d+ restarts in \d+) s/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('task').replace(' / ', ' restarts in ') },
  { phrase: /\| `--max-tasks-per-principal N` \| \| `(\d+)`/, name: 'DEFAULT_MAX_TASKS_PER_PRINCIPAL', figure: String(limits.DEFAULT_MAX_TASKS_PER_PRINCIPAL) },
  { phrase: /\| `--turns-per-minute N` \| \| `(\d+)`/, name: 'DEFAULT_TURNS_PER_MINUTE', figure: String(limits.DEFAULT_TURNS_PER_MINUTE) },
  { phrase: /\| `--model-calls-per-minute N` \| \| `(\d+)`/, name: 'DEFAULT_MODEL_CALLS_PER_MINUTE', figure: String(limits.DEFAULT_MODEL_CALLS_PER_MINUTE) },
  { phrase: /\| `DEFAULT_MAX_TASKS_PER_PRINCIPAL` \| (\d+) harness tasks/, name: 'DEFAULT_MAX_TASKS_PER_PRINCIPAL', figure: String(limits.DEFAULT_MAX_TASKS_PER_PRINCIPAL) },
  { phrase: /\| `DEFAULT_TURNS_PER_MINUTE` \| (\d+) model turns/, name: 'DEFAULT_TURNS_PER_MINUTE', figure: String(limits.DEFAULT_TURNS_PER_MINUTE) },
  { phrase: /\| `DEFAULT_MODEL_CALLS_PER_MINUTE` \| (\d+) requests/, name: 'DEFAULT_MODEL_CALLS_PER_MINUTE', figure: String(limits.DEFAULT_MODEL_CALLS_PER_MINUTE) },
  { phrase: /at most (\d+) tasks at once \(`--max-tasks-per-principal`\)/, name: 'DEFAULT_MAX_TASKS_PER_PRINCIPAL', figure: String(limits.DEFAULT_MAX_TASKS_PER_PRINCIPAL) },
  { phrase: /(\d+) model turns\s+\(`--turns-per-minute`\)/, name: 'DEFAULT_TURNS_PER_MINUTE', figure: String(limits.DEFAULT_TURNS_PER_MINUTE) },
  { phrase: /(\d+) model requests, retries included \(`--model-calls-per-minute`\)/, name: 'DEFAULT_MODEL_CALLS_PER_MINUTE', figure: String(limits.DEFAULT_MODEL_CALLS_PER_MINUTE) },
  { phrase: /has a task budget \((\d+) tasks at\s+once/, name: 'DEFAULT_MAX_TASKS_PER_PRINCIPAL', figure: String(limits.DEFAULT_MAX_TASKS_PER_PRINCIPAL) },
  { phrase: /(\d+) model turns and \d+ model requests a minute/, name: 'DEFAULT_TURNS_PER_MINUTE', figure: String(limits.DEFAULT_TURNS_PER_MINUTE) },
  { phrase: /\d+ model turns and (\d+) model requests a minute/, name: 'DEFAULT_MODEL_CALLS_PER_MINUTE', figure: String(limits.DEFAULT_MODEL_CALLS_PER_MINUTE) },
  { phrase: /in any\s+sliding (minute)/, name: 'TASK_BUDGET_WINDOW_MS', figure: limits.TASK_BUDGET_WINDOW_MS === 60_000 ? 'minute' : `${limits.TASK_BUDGET_WINDOW_MS} ms` },
  // Streamable HTTP and stdio
  { phrase: /up to (\d+) s,\s+`DRAIN_GRACE_MS`/, name: 'DRAIN_GRACE_MS', figure: seconds(limits.DRAIN_GRACE_MS) },
  // Observer
  { phrase: /snapshot stream (\w+) a second \(`OBSERVER_UPDATE_MS`\)/, name: 'OBSERVER_UPDATE_MS', figure: limits.OBSERVER_UPDATE_MS === 500 ? 'twice' : `${1000 / limits.OBSERVER_UPDATE_MS} times` },
  { phrase: /at most (\d+) at once, `MAX_OBSERVER_STREAMS`/, name: 'MAX_OBSERVER_STREAMS', figure: String(limits.MAX_OBSERVER_STREAMS) },
  { phrase: /(\d+) of them per viewer,\s+`MAX_OBSERVER_STREAMS_PER_VIEWER`/, name: 'MAX_OBSERVER_STREAMS_PER_VIEWER', figure: String(limits.MAX_OBSERVER_STREAMS_PER_VIEWER) },
  { phrase: /\| `MAX_OBSERVER_STREAMS_PER_VIEWER` \| (\d+) observer event streams/, name: 'MAX_OBSERVER_STREAMS_PER_VIEWER', figure: String(limits.MAX_OBSERVER_STREAMS_PER_VIEWER) },
  { phrase: /of the (\d+) of the whole server \(`MAX_OBSERVER_STREAMS`\)/, name: 'MAX_OBSERVER_STREAMS', figure: String(limits.MAX_OBSERVER_STREAMS) },
  { phrase: /a `Retry-After` of (\d+) s \(`OBSERVER_STREAM_RETRY_AFTER_SECONDS`\)/, name: 'OBSERVER_STREAM_RETRY_AFTER_SECONDS', figure: String(limits.OBSERVER_STREAM_RETRY_AFTER_SECONDS) },
  { phrase: /caught up for (\d+) s,\s+`OBSERVER_STREAM_LAG_MS`/, name: 'OBSERVER_STREAM_LAG_MS', figure: seconds(limits.OBSERVER_STREAM_LAG_MS) },
  { phrase: /\| `OBSERVER_STREAM_LAG_MS` \| (\d+) s/, name: 'OBSERVER_STREAM_LAG_MS', figure: seconds(limits.OBSERVER_STREAM_LAG_MS) },
  { phrase: /has (\d+) MiB unread \(`MAX_OBSERVER_BACKLOG_BYTES`\)/, name: 'MAX_OBSERVER_BACKLOG_BYTES', figure: mib(limits.MAX_OBSERVER_BACKLOG_BYTES) },
  { phrase: /(\d+) MiB of payload \(`OBSERVER_TRANSCRIPT_PAGE_BYTES`/, name: 'OBSERVER_TRANSCRIPT_PAGE_BYTES', figure: String(limits.OBSERVER_TRANSCRIPT_PAGE_BYTES / 2 ** 20) },
  { phrase: /over the last\s+(\w+) minutes/, name: 'CHART_SECONDS', figure: word(limits.CHART_SECONDS / 60) },
  // Architecture
  { phrase: /a budget of (\d+) messages per turn/, name: 'REDUCTIONS_PER_TURN', figure: String(limits.REDUCTIONS_PER_TURN) },
  { phrase: /with a timeout \((\d+) s default/, name: 'DEFAULT_CALL_TIMEOUT_MS', figure: seconds(limits.DEFAULT_CALL_TIMEOUT_MS) },
  { phrase: /pinged every (\d+) ms/, name: 'HEARTBEAT_INTERVAL_MS', figure: String(limits.HEARTBEAT_INTERVAL_MS) },
  { phrase: /one silent for ([\d.]+) s \(a hang\)/, name: 'HEARTBEAT_TIMEOUT_MS', figure: seconds(limits.HEARTBEAT_TIMEOUT_MS) },
  { phrase: /stays unanswered for ([\d.]+) s/, name: 'HEARTBEAT_TIMEOUT_MS', figure: seconds(limits.HEARTBEAT_TIMEOUT_MS) },
  { phrase: /each has a (\d+) MB heap/, name: 'SCHEDULER_THREAD_MEMORY_MB', figure: String(limits.SCHEDULER_THREAD_MEMORY_MB) },
  { phrase: /root \(one_for_one, (\d+) restarts \/ \d+ s\)/, name: 'DEFAULT_TREE_INTENSITIES', figure: String(limits.DEFAULT_TREE_INTENSITIES.root.maxRestarts) },
  { phrase: /root \(one_for_one, \d+ restarts \/ (\d+) s\)/, name: 'DEFAULT_TREE_INTENSITIES', figure: seconds(limits.DEFAULT_TREE_INTENSITIES.root.periodMs) },
  { phrase: /schedulers \(one_for_one, (\d+ \/ \d+) s\)/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('schedulers') },
  { phrase: /session-K \(one_for_one, (\d+ \/ \d+) s\)/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('session') },
  { phrase: /task-K \(one_for_one, (\d+ \/ \d+) s\)/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('task') },
  // Crash semantics: the restart intensities table
  { phrase: /\| `session` \(one per session\) \| (\d+ restarts \/ \d+) s/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('session').replace(' / ', ' restarts / ') },
  { phrase: /\| `task` \(one per `harness_task`\) \| (\d+ \/ \d+) s/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('task') },
  { phrase: /\| `schedulers` \| (\d+ \/ \d+) s/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('schedulers') },
  { phrase: /\| `root` \| (\d+ \/ \d+) s/, name: 'DEFAULT_TREE_INTENSITIES', figure: intensity('root') },
  // Transports
  { phrase: /\| `--allowed-hosts LIST` \| \| `([^`]+)`/, name: 'DEFAULT_ALLOWED_HOSTS', figure: limits.DEFAULT_ALLOWED_HOSTS.join(',') },
  { phrase: /four turns of its event loop over (\d+) ms/, name: 'GIVE_UP_QUIET_MS', figure: String(limits.GIVE_UP_QUIET_MS) },
  { phrase: /\| `--max-message-bytes N` \| \| `(\d+)`/, name: 'DEFAULT_MAX_MESSAGE_BYTES', figure: String(limits.DEFAULT_MAX_MESSAGE_BYTES) },
  { phrase: /\| `--max-message-bytes N` \| \| `\d+` \((\d+) MiB\)/, name: 'DEFAULT_MAX_MESSAGE_BYTES', figure: mib(limits.DEFAULT_MAX_MESSAGE_BYTES) },
  { phrase: /\| `--max-input-backlog-bytes N` \| \| `(\d+)`/, name: 'MAX_INPUT_BACKLOG_BYTES', figure: String(limits.MAX_INPUT_BACKLOG_BYTES) },
  { phrase: /\| `--max-input-backlog-bytes N` \| \| `\d+` \((\d+) MiB\)/, name: 'MAX_INPUT_BACKLOG_BYTES', figure: mib(limits.MAX_INPUT_BACKLOG_BYTES) },
  { phrase: /\| `--max-output-backlog-bytes N` \| \| `(\d+)`/, name: 'MAX_OUTPUT_BACKLOG_BYTES', figure: String(limits.MAX_OUTPUT_BACKLOG_BYTES) },
  { phrase: /\| `--max-output-backlog-bytes N` \| \| `\d+` \((\d+) MiB\)/, name: 'MAX_OUTPUT_BACKLOG_BYTES', figure: mib(limits.MAX_OUTPUT_BACKLOG_BYTES) },
  { phrase: /\| `--max-message-bytes` \| (\d+) MiB/, name: 'DEFAULT_MAX_MESSAGE_BYTES', figure: mib(limits.DEFAULT_MAX_MESSAGE_BYTES) },
  { phrase: /\| `--max-sessions N` \| \| `(\d+)`/, name: 'DEFAULT_MAX_SESSIONS', figure: String(limits.DEFAULT_MAX_SESSIONS) },
  { phrase: /\| `--max-sessions-per-principal N` \| \| `(\d+)`/, name: 'DEFAULT_MAX_SESSIONS_PER_PRINCIPAL', figure: String(limits.DEFAULT_MAX_SESSIONS_PER_PRINCIPAL) },
  { phrase: /\| `--max-anonymous-sessions N` \| \| `(\d+)`/, name: 'DEFAULT_MAX_ANONYMOUS_SESSIONS', figure: String(limits.DEFAULT_MAX_ANONYMOUS_SESSIONS) },
  { phrase: /\| `HTTP_KEEP_ALIVE_MS` \| (\d+) s/, name: 'HTTP_KEEP_ALIVE_MS', figure: seconds(limits.HTTP_KEEP_ALIVE_MS) },
  { phrase: /\| `MAX_GET_STREAMS_PER_SESSION` \| (\d+) standalone/, name: 'MAX_GET_STREAMS_PER_SESSION', figure: String(limits.MAX_GET_STREAMS_PER_SESSION) },
  { phrase: /a session\s+keeps at most (\d+) \(`MAX_GET_STREAMS_PER_SESSION`\)/, name: 'MAX_GET_STREAMS_PER_SESSION', figure: String(limits.MAX_GET_STREAMS_PER_SESSION) },
  { phrase: /\| `LOG_QUEUE_MAX_BYTES` \| (\d+) MiB/, name: 'LOG_QUEUE_MAX_BYTES', figure: mib(limits.LOG_QUEUE_MAX_BYTES) },
  { phrase: /at most `LOG_QUEUE_MAX_BYTES`\s+\((\d+) MiB\)/, name: 'LOG_QUEUE_MAX_BYTES', figure: mib(limits.LOG_QUEUE_MAX_BYTES) },
  { phrase: /at\s+most\s+`THREAD_OUTPUT_PIECE_CHARS`\s+\((\d+) KiB\)/, name: 'THREAD_OUTPUT_PIECE_CHARS', figure: kib(limits.THREAD_OUTPUT_PIECE_CHARS) },
  { phrase: /at most ([\d,]+) connections, [\d,]+ per client address/, name: 'MAX_CONNECTIONS', figure: grouped(limits.MAX_CONNECTIONS) },
  { phrase: /at most [\d,]+ connections, ([\d,]+) per client address/, name: 'MAX_CONNECTIONS_PER_ADDRESS', figure: grouped(limits.MAX_CONNECTIONS_PER_ADDRESS) },
  { phrase: /`--max-connections-per-address`\s+\(([\d,]+) by default/, name: 'MAX_CONNECTIONS_PER_ADDRESS', figure: grouped(limits.MAX_CONNECTIONS_PER_ADDRESS) },
  { phrase: /its connections then count against\s+`--max-connections`\s+\(([\d,]+)\) only/, name: 'MAX_CONNECTIONS', figure: grouped(limits.MAX_CONNECTIONS) },
  { phrase: /\| `MAX_CONNECTIONS` \| ([\d,]+) open TCP/, name: 'MAX_CONNECTIONS', figure: grouped(limits.MAX_CONNECTIONS) },
  { phrase: /\| `--max-connections N` \| \| `(\d+)`/, name: 'MAX_CONNECTIONS', figure: String(limits.MAX_CONNECTIONS) },
  { phrase: /\| `MAX_CONNECTIONS_PER_ADDRESS` \| ([\d,]+) open connections/, name: 'MAX_CONNECTIONS_PER_ADDRESS', figure: grouped(limits.MAX_CONNECTIONS_PER_ADDRESS) },
  { phrase: /\| `--max-connections-per-address N` \| \| `(\d+)`/, name: 'MAX_CONNECTIONS_PER_ADDRESS', figure: String(limits.MAX_CONNECTIONS_PER_ADDRESS) },
  { phrase: /with a `Retry-After` of (\d+) s and closed, before/, name: 'CONNECTION_REFUSED_RETRY_AFTER_SECONDS', figure: String(limits.CONNECTION_REFUSED_RETRY_AFTER_SECONDS) },
  { phrase: /`REFUSED_CONNECTION_LINGER_MS` \((\d+) s\)/, name: 'REFUSED_CONNECTION_LINGER_MS', figure: seconds(limits.REFUSED_CONNECTION_LINGER_MS) },
  { phrase: /`CONNECTION_REFUSAL_LOG_MS` \((\d+) s\)/, name: 'CONNECTION_REFUSAL_LOG_MS', figure: seconds(limits.CONNECTION_REFUSAL_LOG_MS) },
  { phrase: /\| `HTTP_SEND_TIMEOUT_MS` \| (\d+) s/, name: 'HTTP_SEND_TIMEOUT_MS', figure: seconds(limits.HTTP_SEND_TIMEOUT_MS) },
  { phrase: /\| `--send-timeout SECONDS` \| \| `(\d+)`/, name: 'HTTP_SEND_TIMEOUT_MS', figure: seconds(limits.HTTP_SEND_TIMEOUT_MS) },
  { phrase: /after (\d+) s without an answer \(`SSE_OPEN_AFTER_MS`/, name: 'SSE_OPEN_AFTER_MS', figure: seconds(limits.SSE_OPEN_AFTER_MS) },
  { phrase: /the last (\d+) are kept, `SSE_REPLAY_EVENTS`/, name: 'SSE_REPLAY_EVENTS', figure: String(limits.SSE_REPLAY_EVENTS) },
  { phrase: /`: keep-alive` comment every (\d+) s/, name: 'SSE_KEEPALIVE_MS', figure: seconds(limits.SSE_KEEPALIVE_MS) },
  { phrase: /\| `STATELESS_SESSION_IDLE_MS` \| (\d+) s/, name: 'STATELESS_SESSION_IDLE_MS', figure: seconds(limits.STATELESS_SESSION_IDLE_MS) },
  { phrase: /\| `SSE_KEEPALIVE_MS` \| (\d+) s/, name: 'SSE_KEEPALIVE_MS', figure: seconds(limits.SSE_KEEPALIVE_MS) },
  { phrase: /\| `--sse-keepalive SECONDS` \| \| `(\d+)`/, name: 'SSE_KEEPALIVE_MS', figure: seconds(limits.SSE_KEEPALIVE_MS) },
  { phrase: /a\s+ping every (\d+) s \(a socket that missed a pong/, name: 'WS_PING_INTERVAL_MS', figure: seconds(limits.WS_PING_INTERVAL_MS) },
  { phrase: /requests already sent get (\d+) s, `EOF_DRAIN_MS`/, name: 'EOF_DRAIN_MS', figure: seconds(limits.EOF_DRAIN_MS) },
  { phrase: /read nothing; at most (\d+) s\)/, name: 'GIVE_UP_LINGER_MAX_MS', figure: seconds(limits.GIVE_UP_LINGER_MAX_MS) },
  { phrase: /`MAX_OUTPUT_BACKLOG_BYTES`, (\d+) MiB/, name: 'MAX_OUTPUT_BACKLOG_BYTES', figure: mib(limits.MAX_OUTPUT_BACKLOG_BYTES) },
  { phrase: /\| `MAX_INPUT_BACKLOG_BYTES` \| (\d+) MiB/, name: 'MAX_INPUT_BACKLOG_BYTES', figure: mib(limits.MAX_INPUT_BACKLOG_BYTES) },
  { phrase: /\| `MAX_INPUT_CHARS_PER_PRINCIPAL` \| (\d+) MiB/, name: 'MAX_INPUT_CHARS_PER_PRINCIPAL', figure: mib(limits.MAX_INPUT_CHARS_PER_PRINCIPAL) },
  { phrase: /`MAX_INPUT_BACKLOG_BYTES` \((\d+) MiB\)/, name: 'MAX_INPUT_BACKLOG_BYTES', figure: mib(limits.MAX_INPUT_BACKLOG_BYTES) },
  { phrase: /\| `WS_OUTPUT_PAUSE_BYTES` \| (\d+) MiB/, name: 'WS_OUTPUT_PAUSE_BYTES', figure: mib(limits.WS_OUTPUT_PAUSE_BYTES) },
  { phrase: /`WS_OUTPUT_PAUSE_BYTES` \((\d+) MiB\)/, name: 'WS_OUTPUT_PAUSE_BYTES', figure: mib(limits.WS_OUTPUT_PAUSE_BYTES) },
  { phrase: /\| `MAX_OUTPUT_BACKLOG_BYTES` \(WebSocket\) \| (\d+) MiB/, name: 'MAX_OUTPUT_BACKLOG_BYTES', figure: mib(limits.MAX_OUTPUT_BACKLOG_BYTES) },
  { phrase: /\| `MAX_NODE_OUTPUT_BACKLOG_BYTES` \| (\d+) MiB/, name: 'MAX_NODE_OUTPUT_BACKLOG_BYTES', figure: mib(limits.MAX_NODE_OUTPUT_BACKLOG_BYTES) },
  { phrase: /\| `--max-node-output-backlog-bytes N` \| `SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES` \| `(\d+)`/, name: 'MAX_NODE_OUTPUT_BACKLOG_BYTES', figure: String(limits.MAX_NODE_OUTPUT_BACKLOG_BYTES) },
  { phrase: /\| `--max-node-output-backlog-bytes N` \| `SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES` \| `\d+` \((\d+) MiB\)/, name: 'MAX_NODE_OUTPUT_BACKLOG_BYTES', figure: mib(limits.MAX_NODE_OUTPUT_BACKLOG_BYTES) },
  { phrase: /\| `MAX_NODE_REQUEST_BODY_BYTES` \| (\d+) MiB/, name: 'MAX_NODE_REQUEST_BODY_BYTES', figure: mib(limits.MAX_NODE_REQUEST_BODY_BYTES) },
  { phrase: /\| `--max-node-request-body-bytes N` \| `SUPERPI_MAX_NODE_REQUEST_BODY_BYTES` \| `(\d+)`/, name: 'MAX_NODE_REQUEST_BODY_BYTES', figure: String(limits.MAX_NODE_REQUEST_BODY_BYTES) },
  { phrase: /\| `--max-node-request-body-bytes N` \| `SUPERPI_MAX_NODE_REQUEST_BODY_BYTES` \| `\d+` \((\d+) MiB\)/, name: 'MAX_NODE_REQUEST_BODY_BYTES', figure: mib(limits.MAX_NODE_REQUEST_BODY_BYTES) },
  { phrase: /\| `SESSION_EVENTS_MAX_BYTES` \| (\d+) MiB/, name: 'SESSION_EVENTS_MAX_BYTES', figure: mib(limits.SESSION_EVENTS_MAX_BYTES) },
  { phrase: /\| `SESSION_EVENT_MAX_BYTES` \| (\d+) MiB/, name: 'SESSION_EVENT_MAX_BYTES', figure: mib(limits.SESSION_EVENT_MAX_BYTES) },
  { phrase: /\| `MAX_RESUMED_STREAMS_PER_SESSION` \| (\d+) streams/, name: 'MAX_RESUMED_STREAMS_PER_SESSION', figure: String(limits.MAX_RESUMED_STREAMS_PER_SESSION) },
  { phrase: /\| `MAX_RESUMED_STREAMS_PER_PRINCIPAL` \| (\d+) resumed/, name: 'MAX_RESUMED_STREAMS_PER_PRINCIPAL', figure: String(limits.MAX_RESUMED_STREAMS_PER_PRINCIPAL) },
  // The cluster (README "Running a cluster").
  { phrase: /keeps the last (\d+) events\s+of each session/, name: 'SESSION_EVENTS_KEPT', figure: String(limits.SESSION_EVENTS_KEPT) },
  { phrase: /for at most (\d+) minutes\s+\(`SESSION_EVENTS_MAX_AGE_MS`/, name: 'SESSION_EVENTS_MAX_AGE_MS', figure: String(limits.SESSION_EVENTS_MAX_AGE_MS / 60_000) },
  { phrase: /probes its store every (\d+) s\s+\(`STORE_PROBE_INTERVAL_MS`\)/, name: 'STORE_PROBE_INTERVAL_MS', figure: seconds(limits.STORE_PROBE_INTERVAL_MS) },
  { phrase: /`Retry-After: (\d+)`/, name: 'STORE_PROBE_INTERVAL_MS', figure: seconds(limits.STORE_PROBE_INTERVAL_MS) },
  { phrase: /one query bounded by (\d+) s\s+\(`HEALTH_STORE_TIMEOUT_MS`\)/, name: 'HEALTH_STORE_TIMEOUT_MS', figure: seconds(limits.HEALTH_STORE_TIMEOUT_MS) },
  { phrase: /`FORWARD_CONNECT_TIMEOUT_MS` \((\d+) s/, name: 'FORWARD_CONNECT_TIMEOUT_MS', figure: seconds(limits.FORWARD_CONNECT_TIMEOUT_MS) },
  { phrase: /\| `POSTGRES_QUERY_TIMEOUT_MS` \| (\d+) s one statement/, name: 'POSTGRES_QUERY_TIMEOUT_MS', figure: seconds(limits.POSTGRES_QUERY_TIMEOUT_MS) },
  { phrase: /\| `LISTEN_HEARTBEAT_MS` \| (\d+) s between two checks/, name: 'LISTEN_HEARTBEAT_MS', figure: seconds(limits.LISTEN_HEARTBEAT_MS) },
  { phrase: /\| `MAX_FORWARD_SOCKETS_PER_NODE` \| ([\d,]+) connections/, name: 'MAX_FORWARD_SOCKETS_PER_NODE', figure: grouped(limits.MAX_FORWARD_SOCKETS_PER_NODE) },
  { phrase: /`MAX_FORWARD_SOCKETS_PER_NODE` \(([\d,]+)\)/, name: 'MAX_FORWARD_SOCKETS_PER_NODE', figure: grouped(limits.MAX_FORWARD_SOCKETS_PER_NODE) },
  { phrase: /\| `MAX_FORWARD_STREAMS_PER_NODE` \| ([\d,]+) forwarded GET streams/, name: 'MAX_FORWARD_STREAMS_PER_NODE', figure: grouped(limits.MAX_FORWARD_STREAMS_PER_NODE) },
  { phrase: /`MAX_FORWARD_STREAMS_PER_NODE`\s+\(([\d,]+)\)/, name: 'MAX_FORWARD_STREAMS_PER_NODE', figure: grouped(limits.MAX_FORWARD_STREAMS_PER_NODE) },
  { phrase: /\| `MAX_PEER_NODES` \| ([\d,]+) live nodes/, name: 'MAX_PEER_NODES', figure: grouped(limits.MAX_PEER_NODES) },
  { phrase: /\| `MAX_PEER_ADDRESSES` \| ([\d,]+) peer addresses/, name: 'MAX_PEER_ADDRESSES', figure: grouped(limits.MAX_PEER_ADDRESSES) },
  { phrase: /`HOME_RETRY_MS` \((\d+) ms\)/, name: 'HOME_RETRY_MS', figure: String(limits.HOME_RETRY_MS) },
  { phrase: /it looks every (\d+) s,\s+`ORPHAN_CHECK_MS`/, name: 'ORPHAN_CHECK_MS', figure: seconds(limits.ORPHAN_CHECK_MS) },
  { phrase: /`MAX_LOCATE_ATTEMPTS` \((\d+) takeovers/, name: 'MAX_LOCATE_ATTEMPTS', figure: String(limits.MAX_LOCATE_ATTEMPTS) },
  // bash isolation: spare sandboxes
  { phrase: /of at most (\d+) MiB\s+\(`BASH_TMP_MAX_BYTES`\)/, name: 'BASH_TMP_MAX_BYTES', figure: mib(limits.BASH_TMP_MAX_BYTES) },
  { phrase: /of at most (\d+) MiB \(`BASH_SHM_MAX_BYTES`\)/, name: 'BASH_SHM_MAX_BYTES', figure: mib(limits.BASH_SHM_MAX_BYTES) },
  { phrase: /at most (\d+) spare sandboxes/, name: 'MAX_SPARE_SANDBOXES', figure: String(limits.MAX_SPARE_SANDBOXES) },
  { phrase: /used within (\d+) s of being built/, name: 'SPARE_SANDBOX_MAX_AGE_MS', figure: seconds(limits.SPARE_SANDBOX_MAX_AGE_MS) },
  // Protocol: 2026-07-28 cache hints
  { phrase: /`CATALOG_CACHE_TTL_MS` \(([\d,]+) ms\)/, name: 'CATALOG_CACHE_TTL_MS', figure: grouped(limits.CATALOG_CACHE_TTL_MS) },
  { phrase: /`RESOURCE_CACHE_TTL_MS` \(([\d,]+) ms\)/, name: 'RESOURCE_CACHE_TTL_MS', figure: grouped(limits.RESOURCE_CACHE_TTL_MS) },
  // OAuth resource server (docs/limits.md rows)
  { phrase: /\| `OAUTH_CLOCK_SKEW_SECONDS` \| (\d+) s/, name: 'OAUTH_CLOCK_SKEW_SECONDS', figure: String(limits.OAUTH_CLOCK_SKEW_SECONDS) },
  { phrase: /\| `OAUTH_JWKS_REFETCH_INTERVAL_MS` \| (\d+) s/, name: 'OAUTH_JWKS_REFETCH_INTERVAL_MS', figure: seconds(limits.OAUTH_JWKS_REFETCH_INTERVAL_MS) },
  { phrase: /\| `OAUTH_JWKS_MAX_AGE_MS` \| (\d+) s/, name: 'OAUTH_JWKS_MAX_AGE_MS', figure: seconds(limits.OAUTH_JWKS_MAX_AGE_MS) },
  { phrase: /\| `OAUTH_FETCH_TIMEOUT_MS` \| (\d+) s/, name: 'OAUTH_FETCH_TIMEOUT_MS', figure: seconds(limits.OAUTH_FETCH_TIMEOUT_MS) },
  { phrase: /\| `OAUTH_MAX_DOCUMENT_BYTES` \| (\d+) KiB/, name: 'OAUTH_MAX_DOCUMENT_BYTES', figure: kib(limits.OAUTH_MAX_DOCUMENT_BYTES) },
  { phrase: /\| `OAUTH_MAX_TOKEN_BYTES` \| (\d+) KiB/, name: 'OAUTH_MAX_TOKEN_BYTES', figure: kib(limits.OAUTH_MAX_TOKEN_BYTES) },
  { phrase: /\| `OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS` \| (\d+) s/, name: 'OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS', figure: String(limits.OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS) },
  { phrase: /\| `OAUTH_VERIFIED_TOKEN_CACHE_ENTRIES` \| ([\d,]+) verified/, name: 'OAUTH_VERIFIED_TOKEN_CACHE_ENTRIES', figure: grouped(limits.OAUTH_VERIFIED_TOKEN_CACHE_ENTRIES) },
  { phrase: /\| `OAUTH_INTROSPECTION_CACHE_ENTRIES` \| ([\d,]+) introspected/, name: 'OAUTH_INTROSPECTION_CACHE_ENTRIES', figure: grouped(limits.OAUTH_INTROSPECTION_CACHE_ENTRIES) },
  { phrase: /\| `OAUTH_INTROSPECTION_CACHE_MAX_SECONDS` \| (\d+) s/, name: 'OAUTH_INTROSPECTION_CACHE_MAX_SECONDS', figure: String(limits.OAUTH_INTROSPECTION_CACHE_MAX_SECONDS) },
  { phrase: /\| `OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS` \| (\d+) s/, name: 'OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS', figure: String(limits.OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS) },
  { phrase: /\| `OAUTH_INTROSPECTION_INACTIVE_CACHE_ENTRIES` \| ([\d,]+) refused/, name: 'OAUTH_INTROSPECTION_INACTIVE_CACHE_ENTRIES', figure: grouped(limits.OAUTH_INTROSPECTION_INACTIVE_CACHE_ENTRIES) },
  { phrase: /\| `OAUTH_INTROSPECTION_MAX_IN_FLIGHT` \| (\d+) introspection/, name: 'OAUTH_INTROSPECTION_MAX_IN_FLIGHT', figure: String(limits.OAUTH_INTROSPECTION_MAX_IN_FLIGHT) },
];

/** Figures whose constants live beside their code (the store's node-id bound): checked all the same. */
const ELSEWHERE: readonly Figure[] = [
  { phrase: /\(at most (\d+) characters, no control characters\)/, name: 'MAX_NODE_ID_LENGTH', figure: String(MAX_NODE_ID_LENGTH) },
];

/** Figures of the `bash` egress proxy (stated on the allow-mode page, docs/bash-network.md). */
const BASH_NETWORK: readonly Figure[] = [
  { phrase: /`127\.0\.0\.1:(\d+)` \(`EGRESS_PROXY_PORT`\)/, name: 'EGRESS_PROXY_PORT', figure: String(limits.EGRESS_PROXY_PORT) },
  { phrase: /may take (\d+) KiB \(`EGRESS_MAX_HEADER_BYTES`/, name: 'EGRESS_MAX_HEADER_BYTES', figure: kib(limits.EGRESS_MAX_HEADER_BYTES) },
  { phrase: /within (\d+) s of the connection \(`EGRESS_HEADERS_TIMEOUT_MS`/, name: 'EGRESS_HEADERS_TIMEOUT_MS', figure: seconds(limits.EGRESS_HEADERS_TIMEOUT_MS) },
  { phrase: /serves (\d+)\s+connections at once \(`EGRESS_MAX_CONNECTIONS`/, name: 'EGRESS_MAX_CONNECTIONS', figure: String(limits.EGRESS_MAX_CONNECTIONS) },
  { phrase: /holds at most (\d+) of those connections \(`EGRESS_MAX_CONNECTIONS_PER_COMMAND`/, name: 'EGRESS_MAX_CONNECTIONS_PER_COMMAND', figure: String(limits.EGRESS_MAX_CONNECTIONS_PER_COMMAND) },
  { phrase: /\| `BASH_MAX_PROCESSES` \| (\d+) processes/, name: 'BASH_MAX_PROCESSES', figure: String(limits.BASH_MAX_PROCESSES) },
  { phrase: /\| `--bash-max-processes N` \| `SUPERPI_BASH_MAX_PROCESSES` \| `(\d+)`/, name: 'BASH_MAX_PROCESSES', figure: String(limits.BASH_MAX_PROCESSES) },
  { phrase: /\| `BASH_MAX_MEMORY_BYTES` \| (\d+) GiB/, name: 'BASH_MAX_MEMORY_BYTES', figure: String(limits.BASH_MAX_MEMORY_BYTES / 1024 ** 3) },
  { phrase: /\| `--bash-max-memory BYTES` \| `SUPERPI_BASH_MAX_MEMORY_BYTES` \| `(\d+)`/, name: 'BASH_MAX_MEMORY_BYTES', figure: String(limits.BASH_MAX_MEMORY_BYTES) },
  { phrase: /`BASH_MEMORY_HOST_DIVISOR` \((\d+)\)/, name: 'BASH_MEMORY_HOST_DIVISOR', figure: String(limits.BASH_MEMORY_HOST_DIVISOR) },
  { phrase: /\| `EGRESS_MAX_CONNECTIONS_PER_COMMAND` \| (\d+) connections/, name: 'EGRESS_MAX_CONNECTIONS_PER_COMMAND', figure: String(limits.EGRESS_MAX_CONNECTIONS_PER_COMMAND) },
  { phrase: /of the (\d+) of the proxy \(`EGRESS_MAX_CONNECTIONS`\)/, name: 'EGRESS_MAX_CONNECTIONS', figure: String(limits.EGRESS_MAX_CONNECTIONS) },
  { phrase: /may take (\d+) s \(`EGRESS_CONNECT_TIMEOUT_MS`/, name: 'EGRESS_CONNECT_TIMEOUT_MS', figure: seconds(limits.EGRESS_CONNECT_TIMEOUT_MS) },
  { phrase: /for (\d+) s is closed \(`EGRESS_IDLE_TIMEOUT_MS`\)/, name: 'EGRESS_IDLE_TIMEOUT_MS', figure: seconds(limits.EGRESS_IDLE_TIMEOUT_MS) },
  { phrase: /resolve at\s+most (\d+) names at once \(`EGRESS_MAX_CONCURRENT_LOOKUPS`/, name: 'EGRESS_MAX_CONCURRENT_LOOKUPS', figure: String(limits.EGRESS_MAX_CONCURRENT_LOOKUPS) },
];

/** Figures of the client's roots (docs/hosts.md, "Which directory a session works in"). */
const ROOTS: readonly Figure[] = [
  { phrase: /at\s+most (\d+) are considered \(`MAX_ROOTS_CONSIDERED`\)/, name: 'MAX_ROOTS_CONSIDERED', figure: String(limits.MAX_ROOTS_CONSIDERED) },
  { phrase: /each URI at most (\d+) characters \(`MAX_ROOT_URI_LENGTH`\)/, name: 'MAX_ROOT_URI_LENGTH', figure: String(limits.MAX_ROOT_URI_LENGTH) },
  { phrase: /at most (\d+) s \(`ROOTS_WAIT_MS`\)/, name: 'ROOTS_WAIT_MS', figure: seconds(limits.ROOTS_WAIT_MS) },
];

/** Constants of src/limits.ts the documentation does not state, and why it need not. */
const INTERNAL = new Map<string, string>([
  ['ABANDONED_IDS_KEPT', 'ids of POSTs whose client went away, remembered so their late answers are dropped: bookkeeping, not a caller-visible limit'],
  ['DEFAULT_CLOSE_GRACE_MS', 'how long the HTTP server waits for requests in flight when it is closed from the library API; the command uses DRAIN_GRACE_MS'],
  ['DEFAULT_SESSION_IDLE_MS', 'the transport\'s own idle default, equal to DEFAULT_SESSION_IDLE_SECONDS (the flag\'s, which the README states)'],
  ['GIVE_UP_QUIET_TICKS', 'turns of the event loop that read nothing, counted as quiet input after a give-up; the README says "four turns" in words'],
  ['STDIO_REPLIES_PER_WRITE', 'how many stdio replies one write gathers while the session handles more: a batching figure for throughput (docs/architecture.md, step 6), bounding nothing a caller sends'],
  ['THREAD_MESSAGES_PER_POST', 'how many messages for one scheduler thread the main thread gathers into one post in a turn: a batching figure for CPU per call (docs/architecture.md, the HTTP path), bounding nothing a caller sends'],
  ['OUTPUT_FLUSH_MS', 'how long the last stdio replies may take to leave once the session has closed: shutdown plumbing'],
  ['REAPER_MAX_INTERVAL_MS', 'the longest gap between two passes of the idle reaper; the idle timeout itself is the stated figure'],
  ['WS_EARLY_FRAMES', 'WebSocket frames buffered while a session opens: bounded by the per-message limit, never met by a real client'],
  ['LEASE_RENEWALS_PER_TERM', 'heartbeats per lease term; the README says "every third of the term" in words'],
  ['MAX_EXPIRED_TASKS', 'rows one takeover pass reads; the rest wait for the next pass: a query bound, not a caller-visible limit'],
  ['MAX_CHECKPOINT_BYTES', 'the largest session checkpoint the store keeps; a session\'s state stays far below it (capabilities are capped at 64 KiB)'],
  ['HOME_CACHE_ENTRIES', 'a bound on a cache of where sessions\' homes are: past it the oldest is read from the store again, which changes speed, never an answer'],
  ['SESSION_SHUTDOWN_MS', 'how long the tree waits for a stopping connection actor: shutdown plumbing, not a caller-visible limit'],
  ['STORE_CLOSE_GRACE_MS', 'how long a stopping server waits for tasks to record their end: covered by "stop" in general terms'],
  ['TASK_CLOSE_GRACE_MS', 'how long closing a session waits for its tasks to record their end: shutdown plumbing'],
  ['STDIO_EXIT_GRACE_MS', 'how long a stuck handle may keep a finished stdio process alive: a safety net, never met normally'],
  ['LAYOUT_LIMIT', 'entries of the workspace resource\'s layout; more are summarised as a count, which the resource shows'],
  ['README_EXCERPT_LINES', 'lines of the README excerpt in the workspace resource; README_EXCERPT_BYTES bounds the read'],
  ['PATH_COMPLETION_LIMIT', 'completion values of a path; the MCP cap MAX_COMPLETION_VALUES is the one stated'],
  ['MAX_SYMLINK_HOPS', 'a path with more hops is refused with a message that says so, as the kernel refuses one (ELOOP)'],
  ['GREP_MAX_LINE_LENGTH', 'a long matched line is cut, which the result itself says'],
  ['KILL_GRACE_MS', 'SIGTERM to SIGKILL of a stopped command: how it is stopped, not how long it may run'],
  ['MAX_RESULT_CHARS', 'a tool result sent back to the model in a task; the tools already truncate well below it'],
  ['DEFAULT_REQUEST_TIMEOUT_MS', 'one attempt at a model endpoint; the model call\'s error says so when it passes'],
  ['DEFAULT_MAX_RETRIES', 'retries of a model endpoint; the model call\'s error says how many were made'],
  ['MAX_RESPONSE_BYTES', 'largest model response read: far above any real turn'],
  ['SESSION_EVENTS_PAGE', 'rows one read of the session event log takes while a resumed stream catches up: a query bound'],
  ['SESSION_EVENTS_SWEEP_MS', 'how often a node deletes session events past their age: the age itself is the caller-visible figure'],
  ['SESSION_EVENT_HEADS_KEPT_MS', 'when a long-idle session\'s event counter row is deleted: far past any session\'s idle limit, never met by a live session'],
  ['LISTEN_RETRY_MAX_MS', 'the longest back-off of the LISTEN connection\'s reconnects: plumbing; waiters re-read the log on reconnection'],
  ['MAX_METHOD_LENGTH', 'no real client comes near it; the -32600 it gets says the limit by name (stated in the README once its limits table is edited)'],
  ['MAX_LOGGED_STRING_LENGTH', 'bounds what one log record repeats of a caller\'s text: the operator\'s log, not the protocol; the cut line says how much was left out'],
  ['MAX_LOGGED_FIELDS_LENGTH', 'bounds the fields of one log record: the operator\'s log, not the protocol; the cut line says how much was left out'],
  ['UNCAUGHT_EXIT_GRACE_MS', 'how long work in flight is answered after an uncaught failure (a bug) before the exit: never met normally'],
  // Issue 24 (multi-round-trip): stated in docs/multi-round-trip.md; README.md is the docs helper's to rewrite (move to rows once it states them).
  ['MAX_REQUEST_STATE_LENGTH', 'the longest requestState a 2026-07-28 retry may carry; stated in docs/multi-round-trip.md'],
  ['MIN_STATE_KEY_BYTES', 'the shortest SUPERPI_STATE_KEY accepted; stated in docs/multi-round-trip.md and in the start-up error'],
  ['REQUEST_STATE_TTL_MS', 'how long a sealed requestState stays valid; stated in docs/multi-round-trip.md'],
]);

/**
 * For each row, what is wrong: the phrase is on no page, or one of its figures (on any page) disagrees
 * with the constant. A bare string is one page, named "the text".
 */
function mismatches(docs: string | readonly Page[], figures: readonly Figure[]): string[] {
  const where: readonly Page[] = typeof docs === 'string' ? [{ file: 'the text', text: docs }] : docs;
  const wrong: string[] = [];
  for (const f of figures) {
    let seen = 0;
    for (const page of where) {
      const found = [...page.text.matchAll(new RegExp(f.phrase.source, 'g'))].map((m) => m[1]);
      seen += found.length;
      for (const figure of found) if (figure !== f.figure) wrong.push(`${f.name}: ${page.file} says "${figure}" where ${f.phrase} is, the code ${f.figure}`);
    }
    if (seen === 0) wrong.push(`${f.name}: no page of the documentation says ${f.phrase}`);
  }
  return wrong;
}

test('the documentation is read: README.md and the pages of docs/, among them the configuration and limits pages', () => {
  const files = pages.map((p) => p.file);
  for (const f of ['README.md', 'docs/configuration.md', 'docs/limits.md', 'docs/bash-network.md']) assert.ok(files.includes(f), `${f} is read`);
  assert.ok(pages.every((p) => p.text.length > 0), 'every page has text');
});

test('every figure the documentation states for a constant of src/limits.ts is its value', () => {
  assert.ok(FIGURES.length > 50, 'the table is read');
  assert.equal(mismatches(pages, FIGURES), []);
});

test('every figure the documentation states for the client\'s roots is its value', () => {
  assert.equal(mismatches(pages, ROOTS), []);
});

test('every figure the documentation states for a transport or store constant is its value', () => {
  assert.equal(mismatches(pages, ELSEWHERE), []);
});

test('every figure the documentation states for an egress constant is its value', () => {
  assert.equal(mismatches(pages, BASH_NETWORK), []);
});

test('the check fails on a README figure that disagrees with the code, or on a figure no longer stated', () => {
  const rows: Figure[] = [{ phrase: /pinged every (\d+) ms/, name: 'HEARTBEAT_INTERVAL_MS', figure: '250' }];
  assert.equal(mismatches('each is pinged every 250 ms and', rows), []);
  assert.equal(mismatches('each is pinged every 250 ms, and every 300 ms', rows.map((r) => ({ ...r, phrase: /every (\d+) ms/ }))), [
    'HEARTBEAT_INTERVAL_MS: the text says "300" where /every (\\d+) ms/ is, the code 250',
  ]);
  assert.equal(mismatches('each is pinged now and then', rows), ['HEARTBEAT_INTERVAL_MS: no page of the documentation says /pinged every (\\d+) ms/']);
  const two = [{ file: 'docs/a.md', text: 'each is pinged every 250 ms' }, { file: 'docs/b.md', text: 'a thread is pinged every 300 ms' }];
  assert.equal(mismatches(two, rows), ['HEARTBEAT_INTERVAL_MS: docs/b.md says "300" where /pinged every (\\d+) ms/ is, the code 250'], 'a page that disagrees is named, whichever page agrees');
  assert.equal(mismatches(two.slice(0, 1), rows), [], 'a figure stated on one page of several is found');
});

test('every constant of src/limits.ts is stated in the documentation (a row above) or listed as internal, with why', () => {
  const names = Object.keys(limits);
  assert.ok(names.length > 50, 'the module is read');
  const stated = new Set([...FIGURES, ...BASH_NETWORK, ...ROOTS].map((f) => f.name));
  assert.equal(names.filter((n) => !stated.has(n) && !INTERNAL.has(n)), [], 'neither stated nor internal');
  assert.equal([...INTERNAL.keys()].filter((n) => !names.includes(n)), [], 'internal, but no longer in src/limits.ts');
  assert.equal([...INTERNAL.keys()].filter((n) => stated.has(n)), [], 'both stated and internal');
  assert.equal([...stated].filter((n) => !names.includes(n)), [], 'a row names a constant src/limits.ts does not have');
});

test.run();
