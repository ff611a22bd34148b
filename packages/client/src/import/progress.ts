import type { Counts } from './state.js';

export interface Progress {
  /** `done` of `total` rows handled so far. */
  update(done: number, counts: Counts): void;
  /** A line of its own (a wait, a warning) without breaking the bar. */
  note(text: string): void;
  finish(): void;
}

const WIDTH = 24;

/**
 * A progress bar on stderr (stdout stays for the summary). On a terminal it redraws one line; in
 * a log file (CI, cron) it writes a line at every tenth of the way instead of thousands of frames.
 */
export function progressBar(
  total: number,
  options: { dryRun?: boolean } = {},
  stream: NodeJS.WriteStream = process.stderr,
): Progress {
  // A dry run writes nothing: its bar must not say "created".
  const [created, updated] = options.dryRun ? ['would create', 'would update'] : ['created', 'updated'];
  const started = Date.now();
  const tty = stream.isTTY === true;
  let lastTenth = -1;
  let drawn = false;

  function line(done: number, counts: Counts): string {
    const share = total === 0 ? 1 : done / total;
    const filled = Math.round(share * WIDTH);
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const eta = rate > 0 && done < total ? ` · ${formatSeconds((total - done) / rate)} left` : '';
    return (
      `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${Math.floor(share * 100)}% ` +
      `${done.toLocaleString('en')}/${total.toLocaleString('en')} · ${counts.created} ${created} · ` +
      `${counts.updated} ${updated} · ${counts.unchanged} unchanged · ${counts.failed} failed · ` +
      `${Math.round(rate)}/s${eta}`
    );
  }

  return {
    update(done, counts) {
      if (tty) {
        stream.write(`\r\x1b[2K${line(done, counts)}`);
        drawn = true;
        return;
      }
      const tenth = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        stream.write(`${line(done, counts)}\n`);
      }
    },
    note(text) {
      stream.write(tty && drawn ? `\r\x1b[2K${text}\n` : `${text}\n`);
      drawn = false;
    },
    finish() {
      if (tty && drawn) stream.write('\n');
    },
  };
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}
