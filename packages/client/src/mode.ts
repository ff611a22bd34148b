/**
 * Which data a secret works on (the service's docs/test-mode.md): a test secret (`fc_test_…`)
 * reads and writes only its partner's test data. The commands say so when they start, so nobody
 * mistakes a test run for a live one, or the reverse.
 */
export const isTestSecret = (secret: string): boolean => secret.startsWith('fc_test_');

/** `test` for a test secret (`fc_test_…`), `live` for any other: what `client.mode` says. */
export type Mode = 'test' | 'live';

/** The mode of a secret, from its prefix: no request needed. */
export const modeOf = (secret: string): Mode => (isTestSecret(secret) ? 'test' : 'live');

/** The line a command prints before it starts, in test mode; undefined with a live secret. */
export function testModeNotice(secret: string): string | undefined {
  return isTestSecret(secret)
    ? 'test mode: this secret works on your test data only (fc_test_…); nothing live is read or changed'
    : undefined;
}
