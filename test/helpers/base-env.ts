/**
 * What a child process started like an operator would start it (only the variables a test names)
 * still takes from the test's run: PATH, and the runner's own Node.js options for every process of
 * a run (scripts/test.mjs, test/helpers/wasm-baseline.ts), not whatever else NODE_OPTIONS holds
 * (a developer's --inspect would print where an operator's process prints nothing).
 */
export function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    ...(process.env.FORECOURT_TEST_NODE_OPTIONS
      ? { NODE_OPTIONS: process.env.FORECOURT_TEST_NODE_OPTIONS }
      : {}),
  };
}
