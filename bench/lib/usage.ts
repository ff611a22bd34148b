import { readFileSync } from 'node:fs';

/**
 * What a process costs, read from /proc (Linux): CPU time used (user + system) and resident
 * memory. CPU time, unlike a profile's wall-clock samples, does not count the moments the process
 * waited for a core that PostgreSQL or the load generator held.
 */
const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux the benchmarks run on

export function cpuMs(pid: number): number | undefined {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * The CPU time of a process's main thread alone (its thread id is its pid): the thread that
 * serves requests, where a Node.js process's work holds everyone else up. Without V8's background
 * threads (optimising compilers for JavaScript and WebAssembly, the garbage collector's helpers),
 * which cpuMs counts too.
 */
export function mainThreadCpuMs(pid: number): number | undefined {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(file: string): number | undefined {
  try {
    // Fields after the command name (which may hold spaces) start at ") ": utime is the 12th, stime the 13th.
    const stat = readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

export function rssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Math.round((Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024) * 10) / 10;
  } catch {
    return undefined;
  }
}

/** Runs `work` and says how much CPU the process spent meanwhile, and its memory at the end. */
export async function measuredOn<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; cpuMs: number | undefined; rssMb: number | undefined }> {
  const before = cpuMs(pid);
  const result = await work();
  const after = cpuMs(pid);
  return {
    result,
    cpuMs: before !== undefined && after !== undefined ? after - before : undefined,
    rssMb: rssMb(pid),
  };
}
