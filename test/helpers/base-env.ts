/**
 * What a child process started like an operator would start it (only the variables a test names)
 * still takes from the test's own environment: PATH, and NODE_OPTIONS, which carries the test
 * runner's settings for every process of a run (scripts/test.mjs, test/helpers/wasm-baseline.ts).
 */
export function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
  };
}
