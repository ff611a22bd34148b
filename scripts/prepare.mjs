// `npm ci` / `npm install` run this (the `prepare` script): build dist/ when the build tools are
// installed. A production install (`npm ci --omit=dev`) has no TypeScript; it is expected to ship
// the dist/ folders a build step made (docs/operations.md), so it skips the build with a note.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

try {
  createRequire(import.meta.url).resolve('typescript');
} catch {
  process.stderr.write('forecourt: TypeScript is not installed (production install); not rebuilding dist/\n');
  process.exit(0);
}
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
