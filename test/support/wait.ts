/**
 * Polls `check` every 25 ms until it gives a value other than `undefined` or `false`, and
 * resolves with it; rejects naming `what` after `timeoutMs`. For states reached in the
 * background (embedding, leases), never as a timing assertion.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
