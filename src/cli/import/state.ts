import { createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** A listing the service did not take, as the report shows it. */
export interface Failure {
  row: number;
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
  /** Feed rows handled (sent and answered, or refused before sending), from the start. */
  done: number;
  counts: Counts;
  failures: Failure[];
  updatedAt: string;
}

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
    Number.isInteger(state.done) &&
    Array.isArray(state.failures);
  return same ? state : undefined;
}

/**
 * Written to a temporary file and renamed over the old one: a crash mid-write leaves the previous
 * state, never half a file (rename is atomic within a directory).
 */
export function saveState(file: string, state: ImportState): void {
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify({ ...state, updatedAt: new Date().toISOString() })}\n`);
  renameSync(temporary, file);
}

export function clearState(file: string): void {
  rmSync(file, { force: true });
}
