import type {
  Enumeration,
  EnumerationContext,
  KnownItem,
} from '../../src/sources/connectors/connector';
import {
  WebConnector,
  type WebConnectorOptions,
} from '../../src/sources/connectors/web/web-connector';
import type { WebSourceDeclaration } from '../../src/sources/source-declaration';

/**
 * A web source over a loopback site: loopback opened the way an operator opens a private
 * range (INGEST_ALLOWED_PRIVATE_CIDRS), http allowed, and quick pacing and retries so that
 * tests run in milliseconds; each can be overridden.
 */
export function aWebConnector(
  url: string,
  declaration: Partial<WebSourceDeclaration> = {},
  options: Partial<WebConnectorOptions> = {},
): WebConnector {
  return new WebConnector(
    { id: 'docs', kind: 'web', mount: 'docs', url, ...declaration },
    {
      allowHttp: true,
      allowedPrivateCidrs: ['127.0.0.0/8'],
      requestTimeoutMs: 5000,
      minIntervalMs: 0,
      backoffMs: 10,
      maxRetryAfterMs: 5000,
      ...options,
    },
  );
}

/** What a run knows: nothing by default. */
export function aContext(overrides: Partial<EnumerationContext> = {}): EnumerationContext {
  return {
    known: new Map(),
    cursor: null,
    signal: new AbortController().signal,
    maxBodyBytes: 1024 * 1024,
    ...overrides,
  };
}

/** What the reconciliation would remember of a run: each item's version, uri and validators. */
export function knownAfter(enumeration: Enumeration): Map<string, KnownItem> {
  return new Map(
    enumeration.items.map((item) => [
      item.key,
      { version: item.version, uri: item.uri, validators: item.validators },
    ]),
  );
}

/** Item keys, sorted. */
export function keysOf(enumeration: Enumeration): string[] {
  return enumeration.items.map((item) => item.key).sort();
}
