/**
 * "Did you mean …?" for names a client got wrong: unknown body fields and query parameters.
 * A suggestion is offered only when it is close enough to be a plausible typo, so an unrelated
 * name gets a plain "unknown" rather than a misleading guess.
 */

/**
 * Optimal string alignment distance (Levenshtein plus the swap of two neighbours), compared
 * case-insensitively, with `_` and `-` ignored: `milage`→`mileage` is 1, `stauts`→`status` is 1,
 * `dealer_profile_id`→`dealerProfileId` is 0.
 */
export function nameDistance(a: string, b: string): number {
  const x = normalise(a);
  const y = normalise(b);
  // Three rows are all the recurrence reads (this one, the one before, and the one before that
  // for a swap): no matrix allocated per comparison.
  let before = new Int32Array(y.length + 1);
  let previous = Int32Array.from({ length: y.length + 1 }, (_, j) => j);
  let current = new Int32Array(y.length + 1);
  for (let i = 1; i <= x.length; i++) {
    current[0] = i;
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        best = Math.min(best, before[j - 2]! + 1);
      }
      current[j] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[y.length]!;
}

const MAX_NAME = 64;

const normalise = (name: string) => name.toLowerCase().replace(/[_-]/g, '');

/**
 * The known name closest to `input`, or undefined when none is plausibly meant: at most a third of
 * the longer name may differ (at least one edit is always allowed), so `colour` finds `color` and
 * `xyz` finds nothing. Ties go to the earlier candidate, so list canonical names before aliases.
 */
export function closestName(input: string, candidates: Iterable<string>): string | undefined {
  // No known name is longer than this; a longer input is no typo of one, and comparing it would
  // cost time in proportion to its length for every candidate.
  if (input.length > MAX_NAME) return undefined;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const inputLength = normalise(input).length;
  for (const candidate of candidates) {
    const allowed = Math.max(1, Math.floor(Math.max(input.length, candidate.length) / 3));
    // The distance is at least the difference in length: a name far longer or shorter is no
    // typo of this one, and is not compared (an attacker's long names cost nothing).
    if (Math.abs(inputLength - normalise(candidate).length) > allowed) continue;
    const distance = nameDistance(input, candidate);
    if (distance <= allowed && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** The sentence an issue carries: "is not a known field; did you mean `mileage`?". */
export function unknownNameMessage(kind: 'field' | 'parameter', input: string, candidates: Iterable<string>) {
  const guess = closestName(input, candidates);
  return guess ? `is not a known ${kind}; did you mean \`${guess}\`?` : `is not a known ${kind}`;
}
