import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

/** One value per second of the soak run. */
export interface Series {
  t: number[];
  rssMb: number[];
  heapMb: (number | null)[];
  p99: (number | null)[];
  done: number[];
}

const W = 1000;
const PANEL = 230;
const LEFT = 70;
const RIGHT = 70;

/**
 * Draws the run as an SVG (memory above; p99 latency and answered requests a second below) and
 * renders it to PNG with the Chromium the browser test already needs. Returns false without one.
 */
export async function renderPlot(series: Series, title: string, file: string): Promise<boolean> {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) return false;
  const svg = plotSvg(series, title);
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: W, height: 2 * PANEL + 140 } });
    await page.setContent(`<!doctype html><body style="margin:0;background:#fff">${svg}</body>`);
    mkdirSync(path.dirname(file), { recursive: true });
    await page.locator('svg').screenshot({ path: file });
  } finally {
    await browser.close();
  }
  return true;
}

function plotSvg(s: Series, title: string): string {
  const tMax = Math.max(1, s.t.at(-1) ?? 1);
  const x = (t: number) => LEFT + (t / tMax) * (W - LEFT - RIGHT);
  const mem = [...s.rssMb, ...s.heapMb.filter((v): v is number => v !== null)];
  const memMax = niceCeil(Math.max(1, ...mem));
  const latMax = niceCeil(Math.max(1, ...s.p99.filter((v): v is number => v !== null)));
  const rateMax = niceCeil(Math.max(1, ...s.done));
  const top1 = 50;
  const top2 = top1 + PANEL + 50;
  const y = (top: number, max: number) => (v: number) => top + PANEL - (v / max) * PANEL;

  const line = (values: (number | null)[], yOf: (v: number) => number, color: string, width = 2) => {
    const points = values
      .map((v, i) => (v === null ? null : `${x(s.t[i]!).toFixed(1)},${yOf(v).toFixed(1)}`))
      .filter(Boolean);
    return `<polyline fill="none" stroke="${color}" stroke-width="${width}" points="${points.join(' ')}"/>`;
  };
  const axis = (top: number, max: number, unit: string, side: 'left' | 'right', color: string) =>
    [0, 0.25, 0.5, 0.75, 1]
      .map((f) => {
        const yy = top + PANEL - f * PANEL;
        const label = `${Math.round(max * f)}${f === 1 ? ` ${unit}` : ''}`;
        const grid =
          side === 'left'
            ? `<line x1="${LEFT}" x2="${W - RIGHT}" y1="${yy}" y2="${yy}" stroke="#e5e5e5"/>`
            : '';
        const tx = side === 'left' ? LEFT - 8 : W - RIGHT + 8;
        return `${grid}<text x="${tx}" y="${yy + 4}" font-size="12" fill="${color}" text-anchor="${side === 'left' ? 'end' : 'start'}">${label}</text>`;
      })
      .join('');
  const timeTicks = (top: number) =>
    Array.from({ length: 6 }, (_, i) => (tMax * i) / 5)
      .map((t) => {
        const label = tMax >= 120 ? `${Math.round(t / 60)} min` : `${Math.round(t)} s`;
        return `<text x="${x(t)}" y="${top + PANEL + 18}" font-size="12" fill="#444" text-anchor="middle">${label}</text>`;
      })
      .join('');
  const legend = (top: number, items: [string, string][]) =>
    items
      .map(
        ([label, color], i) =>
          `<rect x="${LEFT + 10 + i * 230}" y="${top - 22}" width="14" height="4" fill="${color}"/>` +
          `<text x="${LEFT + 30 + i * 230}" y="${top - 16}" font-size="13" fill="#222">${label}</text>`,
      )
      .join('');

  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${2 * PANEL + 140}" font-family="sans-serif">
  <text x="${W / 2}" y="22" font-size="15" text-anchor="middle" fill="#111">${escapeXml(title)}</text>
  ${axis(top1, memMax, 'MB', 'left', '#444')}
  ${legend(top1 + 8, [
    ['resident memory (RSS)', '#1f77b4'],
    ['JavaScript heap used', '#2ca02c'],
  ])}
  ${line(s.rssMb, y(top1, memMax), '#1f77b4')}
  ${line(s.heapMb, y(top1, memMax), '#2ca02c')}
  ${timeTicks(top1)}
  ${axis(top2, latMax, 'ms', 'left', '#d62728')}
  ${axis(top2, rateMax, 'req/s', 'right', '#7f7f7f')}
  ${legend(top2 + 8, [
    ['p99 latency, each second', '#d62728'],
    ['answered requests a second', '#7f7f7f'],
  ])}
  ${line(s.done, y(top2, rateMax), '#7f7f7f', 1)}
  ${line(s.p99, y(top2, latMax), '#d62728', 1.5)}
  ${timeTicks(top2)}
</svg>`;
}

function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
}
