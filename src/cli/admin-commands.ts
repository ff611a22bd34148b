export async function runAdminCommand(
  _g: string,
  _a: string[],
  _e: Record<string, string | undefined>,
): Promise<number> {
  return 1;
}
