import { readFileSync } from 'node:fs';
import { closestField, knownFields } from './columns.js';
import { readUtf8Text } from './encoding.js';
import { CliError } from './errors.js';
import type { Feed } from './feed.js';

/**
 * `--map FILE`: a feed's own words for our values, e.g. `{"fuelType": {"Stoom": "other", "BZ":
 * "petrol"}}`, so an in-house code is mapped without editing the feed. Keys match a cell
 * ignoring case and outer spaces; cells that match no key are sent as they are (the service
 * refuses what it does not know, so nothing is guessed).
 */
export type ValueMap = Map<string, Map<string, string>>;

export function readValueMap(file: string): ValueMap {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readUtf8Text(readFileSync(file)));
  } catch (error) {
    throw new CliError(`--map ${file}: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError(
      `--map ${file}: expected a JSON object of fields, e.g. {"fuelType": {"Stoom": "other"}}`,
    );
  }
  const known = knownFields();
  const map: ValueMap = new Map();
  for (const [field, values] of Object.entries(parsed)) {
    if (!known.includes(field)) {
      const guess = closestField(field);
      throw new CliError(
        `--map ${file}: "${field}" is not a listing field${guess ? `; did you mean "${guess}"?` : ''}`,
      );
    }
    if (values === null || typeof values !== 'object' || Array.isArray(values)) {
      throw new CliError(`--map ${file}: "${field}" must map feed values to values, e.g. {"Stoom": "other"}`);
    }
    const entries = new Map<string, string>();
    for (const [from, to] of Object.entries(values)) {
      if (typeof to !== 'string') throw new CliError(`--map ${file}: ${field}."${from}" must be a string`);
      entries.set(from.trim().toLowerCase(), to);
    }
    map.set(field, entries);
  }
  return map;
}

/** Applies the map to every row in place; returns how many cells it changed. */
export function applyValueMap(feed: Feed, map: ValueMap): number {
  let changed = 0;
  for (const { listing } of feed.rows) {
    if (!listing) continue;
    const record = listing as Record<string, unknown>;
    for (const [field, values] of map) {
      const cell = record[field];
      const mapped = typeof cell === 'string' ? values.get(cell.trim().toLowerCase()) : undefined;
      if (mapped !== undefined) {
        record[field] = mapped;
        changed++;
      }
    }
  }
  return changed;
}
