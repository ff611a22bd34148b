#!/usr/bin/env node
// The `forecourt` command: the compiled service (dist/, built by `npm ci` through the `prepare`
// script, or by `npm run build`). Development runs the TypeScript sources with `npm run dev`.
try {
  await import('../dist/cli/bin.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli/bin.js')) {
    throw error;
  }
  process.stderr.write('forecourt: the service is not built yet; run `npm run build` (npm ci does it)\n');
  process.exitCode = 1;
}
