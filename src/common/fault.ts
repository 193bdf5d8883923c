import type { Logger } from '@nestjs/common';
import { isDatabaseUnavailable, unavailableKind } from '../database/database-errors';
import { DomainError, ErrorCode } from './domain-error';

/** Seconds a client is told to wait before retrying while a dependency is down. */
export const RETRY_AFTER_SECONDS = 5;

/** The answer to a request that failed because PostgreSQL cannot be reached right now. */
export function databaseUnavailable(): DomainError {
  return new DomainError(
    ErrorCode.UNAVAILABLE,
    `the knowledge base's database is not reachable right now; retry in ${RETRY_AFTER_SECONDS} seconds`,
    { retry_after_seconds: RETRY_AFTER_SECONDS },
  );
}

/**
 * `error` as the DomainError a client should see when it is an outage of a dependency
 * (PostgreSQL down, restarting, refusing connections); `undefined` for anything else.
 */
export function faultOf(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error.code === ErrorCode.UNAVAILABLE ? error : undefined;
  return isDatabaseUnavailable(error) ? databaseUnavailable() : undefined;
}

const FAULT_LOG_INTERVAL_MS = 10_000;
const lastLogged = new Map<string, { at: number; suppressed: number }>();

/**
 * Logs an outage once per kind (`where` and the failure's code) per 10 s, with how many
 * were left out since: a database down under load writes a line every few seconds, not a
 * stack per request.
 */
export function logFault(logger: Logger, where: string, error: unknown): void {
  const kind = `${where}:${unavailableKind(error)}`;
  const now = Date.now();
  const last = lastLogged.get(kind);
  if (last && now - last.at < FAULT_LOG_INTERVAL_MS) {
    last.suppressed++;
    return;
  }
  lastLogged.set(kind, { at: now, suppressed: 0 });
  const more = last?.suppressed ? ` (${last.suppressed} more since the last line)` : '';
  logger.warn(`${where}: PostgreSQL unavailable (${unavailableKind(error)})${more}`);
}

// IPv4 and bracketed IPv6 addresses, host:port pairs, URLs and absolute file paths.
const REVEALING = [
  /\bhttps?:\/\/[^\s'"]+/gi,
  /\[[0-9a-f:.]+\](?::\d+)?/gi,
  /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g,
  /\b(?:[a-z0-9-]+\.)*[a-z0-9-]+:\d{2,5}\b/gi,
  /(?:\/[\w.@-]+){2,}/g,
];

/**
 * An upstream failure's message as a client may read it: what happened, without the
 * internal addresses, ports, URLs or file paths it may name (they stay in the server log).
 */
export function safeMessage(message: string): string {
  return REVEALING.reduce((text, pattern) => text.replace(pattern, '<internal>'), message)
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 500);
}
