import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** A listing the service did not take, as the report shows it. */
export interface Failure {
  row: number;
  /** 0-based position in the feed (absent for listings that were not in it). */
  position?: number;
  reference?: string;
  code: string;
  message: string;
  /** Failing fields with the reason (and the value sent, when it was a plain value). */
  issues?: { path: string; message: string; value?: string }[];
}

export interface Counts {
  created: number;
  updated: number;
  unchanged: number;
  superseded: number;
  failed: number;
}

/**
 * What a run has done so far, written beside the feed after every batch the service answered
 * (`<feed>.import-state.json`), so that running the same command again after an interruption
 * resumes at the first batch that was not answered instead of sending everything again.
 */
export interface ImportState {
  version: 1;
  /** SHA-256 of the feed file: a changed feed starts over. */
  feedSha256: string;
  /** The service and the partner (a hash of the secret, never the secret): another target starts over. */
  url: string;
  partner: string;
  batchSize: number;
  /** Feed rows handled (sent and answered), from the start. */
  done: number;
  counts: Counts;
  /**
   * In memory only: on disk the failures are appended to `<state>.failures.jsonl` batch by batch,
   * so that a feed with thousands of failures does not rewrite them all after every batch.
   */
  failures: Failure[];
  updatedAt: string;
}

const failuresFile = (file: string) => `${file.replace(/\.json$/, '')}.failures.jsonl`;

export const emptyCounts = (): Counts => ({ created: 0, updated: 0, unchanged: 0, superseded: 0, failed: 0 });

export const partnerKey = (secret: string) => createHash('sha256').update(secret).digest('hex').slice(0, 16);

/** The saved state, if it belongs to this feed, service, partner and batch size; else undefined. */
export function loadState(
  file: string,
  expected: Pick<ImportState, 'feedSha256' | 'url' | 'partner' | 'batchSize'>,
): ImportState | undefined {
  let state: ImportState;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as ImportState;
  } catch {
    return undefined;
  }
  const same =
    state.version === 1 &&
    state.feedSha256 === expected.feedSha256 &&
    state.url === expected.url &&
    state.partner === expected.partner &&
    state.batchSize === expected.batchSize &&
    Number.isInteger(state.done);
  if (!same) return undefined;
  // Failures of a batch are appended before the state that counts it is written: lines past `done`
  // belong to a batch that will be sent again, and are dropped (as are repeats).
  const byPosition = new Map<number, Failure>();
  let lines: string[] = [];
  try {
    lines = readFileSync(failuresFile(file), 'utf8').split('\n');
  } catch {}
  for (const line of lines) {
    if (!line.trim()) continue;
    try {
      const failure = JSON.parse(line) as Failure;
      if (failure.position !== undefined && failure.position < state.done)
        byPosition.set(failure.position, failure);
    } catch {
      // A line cut short by a crash mid-append: its batch is sent again.
    }
  }
  return { ...state, failures: [...byPosition.values()] };
}

/**
 * Appends the batch's failures, then replaces the state: written to a temporary file and renamed
 * over the old one, so a crash mid-write leaves the previous state, never half a file.
 */
export function saveState(file: string, state: ImportState, added: readonly Failure[]): void {
  if (added.length) appendFileSync(failuresFile(file), added.map((f) => `${JSON.stringify(f)}\n`).join(''));
  const { failures: _inMemory, ...onDisk } = state;
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify({ ...onDisk, updatedAt: new Date().toISOString() })}\n`);
  renameSync(temporary, file);
}

export function clearState(file: string): void {
  rmSync(file, { force: true });
  rmSync(failuresFile(file), { force: true });
}
