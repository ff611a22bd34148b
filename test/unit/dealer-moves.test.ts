import assert from 'node:assert/strict';
import { test } from 'node:test';
import { moveImpact, type PartnerAccess, type TreeNode } from '../../src/domain/dealer-moves.js';
import { ProblemError } from '../../src/domain/errors.js';

// Which partners gain or lose a dealer profile when it moves: the console shows it before the move.

//   north ── gent ── gent-a
//   south ── brugge
const tree: TreeNode[] = [
  { id: 'north', parentId: null, locationCode: 'NORTH' },
  { id: 'gent', parentId: 'north', locationCode: 'GENT' },
  { id: 'gent-a', parentId: 'gent', locationCode: 'GENT-A' },
  { id: 'south', parentId: null, locationCode: 'SOUTH' },
  { id: 'brugge', parentId: 'south', locationCode: 'BRUGGE' },
];
const restricted = (id: string, ...roots: string[]): PartnerAccess => ({
  id,
  name: id,
  accessScope: 'restricted',
  rootProfileIds: roots,
});
const partners = [
  restricted('sees-north', 'north'),
  restricted('sees-south', 'south'),
  restricted('sees-gent', 'gent'),
  restricted('sees-gent-a', 'gent-a'),
  restricted('sees-both', 'north', 'south'),
  { id: 'everyone', name: 'everyone', accessScope: 'global', rootProfileIds: [] } as PartnerAccess,
];

test('a move under another group: its partners gain the branch, the old group’s lose it', () => {
  const impact = moveImpact(tree, partners, 'gent', 'south');
  assert.deepEqual(impact.dealer, { id: 'gent', locationCode: 'GENT' });
  assert.deepEqual(impact.newParent, { id: 'south', locationCode: 'SOUTH' });
  assert.equal(impact.profilesMoved, 2, 'the profile and the one under it');
  assert.deepEqual(
    impact.gains.map((p) => p.id),
    ['sees-south'],
  );
  // Not the partner rooted at the profile itself, nor one rooted inside it, nor a global one, nor
  // one that sees both groups.
  assert.deepEqual(
    impact.loses.map((p) => p.id),
    ['sees-north'],
  );
});

test('a move to the top level loses the old ancestors’ partners and gains no one', () => {
  const impact = moveImpact(tree, partners, 'brugge', null);
  assert.equal(impact.newParent, null);
  assert.deepEqual(impact.gains, []);
  assert.deepEqual(
    impact.loses.map((p) => p.id),
    ['sees-south', 'sees-both'],
  );
});

test('a move within what a partner sees changes nothing for it', () => {
  const impact = moveImpact(tree, partners, 'gent-a', 'north');
  assert.deepEqual(impact.gains, []);
  assert.deepEqual(
    impact.loses.map((p) => p.id),
    ['sees-gent'],
  );
});

test('a parent inside the branch, or the profile itself, is refused as the move would be', () => {
  for (const [parent, message] of [
    ['gent-a', /its own ancestor/],
    ['gent', /its own parent/],
  ] as const) {
    assert.throws(
      () => moveImpact(tree, partners, 'gent', parent),
      (error: unknown) =>
        error instanceof ProblemError && error.status === 422 && message.test(error.message),
    );
  }
  assert.throws(
    () => moveImpact(tree, partners, 'nope', null),
    (error: unknown) => error instanceof ProblemError && error.status === 404,
  );
});

test('a group of 150,000 locations moves with every profile counted (no argument list that long)', () => {
  // Before: each child copied its siblings' list and the walk spread them as arguments, which
  // threw a RangeError (a 500) past about 125,000 children.
  const wide: TreeNode[] = [...tree];
  for (let i = 0; i < 150_000; i++) wide.push({ id: `loc-${i}`, parentId: 'gent', locationCode: `L${i}` });
  const impact = moveImpact(wide, partners, 'gent', 'south');
  assert.equal(impact.profilesMoved, 150_002);
});
